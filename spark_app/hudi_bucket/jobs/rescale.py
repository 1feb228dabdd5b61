"""Rewrite partitions into their new bucket layout (the data half of an overwrite rescale).

When every partition's new bucket count is a multiple or a divisor of its old one and its layout is a
clean bucket layout, each new bucket draws from known old buckets: new bucket ``b`` takes rows only from
old buckets congruent to ``b`` modulo ``min(old, new)``. Reading each such group of old files as one task
and writing from there needs no shuffle. Otherwise rows are hash-partitioned by (partition, bucket).

A group is one read of its files, told to make one task of them (``ONE_TASK_PER_READ``), and the reads
are a union: a union of ``coalesce(1)`` reads would not do, as Spark 4 runs single-partition union
children as one task. Identical reads share their generated code (no codegen id in class names). Files
written with different schemas are read by several scans (``table_files``), so a rewrite among them
shuffles.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from typing import TypeVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)

from hudi_bucket.core.buckets import bucket_id_from_file_id
from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.filegroups import BaseFile, FileGroup
from hudi_bucket.core.metafields import RECORD_KEY
from hudi_bucket.errors import HudiBucketError
from hudi_bucket.jobs.bucket_files import Grouping, write_bucket_files
from hudi_bucket.jobs.bucketing import key_taken_whole
from hudi_bucket.jobs.context import TableContext
from hudi_bucket.jobs.duplicates import RESOLVED, keep_winning_copies, ordering_of, refuse_custom_merge
from hudi_bucket.jobs.session import scoped_conf
from hudi_bucket.jobs.table_files import table_files
from hudi_bucket.storage.base import PARALLEL_REQUESTS

# A read of some files becomes one task when nothing splits a file (maxPartitionBytes), files cost
# nothing extra to pack together (openCostInBytes) and Spark is not asked for parallelism (minPartitionNum).
ONE_TASK_PER_READ = {
    "spark.sql.files.maxPartitionBytes": str(1 << 50),
    "spark.sql.files.openCostInBytes": "0",
    "spark.sql.files.minPartitionNum": "1",
    "spark.sql.codegen.useIdInClassName": "false",
}


@dataclass(frozen=True)
class PartitionRewrite:
    partition: str
    new_buckets: int
    groups: tuple[FileGroup, ...]  # the live file groups it replaces
    old_buckets: int | None = None  # set when the old layout is a clean bucket layout
    resolve_duplicates: bool = False  # a key may be in two of its file groups: keep one copy (a repair)

    @property
    def base_files(self) -> tuple[BaseFile, ...]:
        return tuple(g.latest_base_file for g in self.groups if g.latest_base_file)

    def task_groups(self) -> tuple[tuple[BaseFile, ...], ...]:
        """Old base files that must share a task for the shuffle-free rewrite."""
        assert self.old_buckets is not None
        modulus = min(self.old_buckets, self.new_buckets)
        by_residue: dict[int, list[BaseFile]] = defaultdict(list)
        for g in self.groups:
            if g.latest_base_file:
                by_residue[bucket_id_from_file_id(g.file_id) % modulus].append(g.latest_base_file)
        return tuple(tuple(files) for _, files in sorted(by_residue.items()))


T = TypeVar("T")


def read_in_groups(read: Callable[[Sequence[T]], DataFrame], groups: Sequence[Sequence[T]]) -> DataFrame:
    """The rows of every group of files, each group one task when run under ``ONE_TASK_PER_READ`` (when
    ``read`` makes one scan of a group).

    The reads are made in parallel: each costs the driver a file status per file, which on an object
    store is a request (one group after another took 1 s of a 4 s apply on S3, for 29 groups)."""
    with ThreadPoolExecutor(
        max(1, min(PARALLEL_REQUESTS, len(groups))), thread_name_prefix="hbo-read"
    ) as pool:
        return reduce(DataFrame.union, pool.map(read, groups))


class RowCountMismatchError(HudiBucketError):
    """The rewrite wrote a different number of rows than it read: it will not be committed."""

    hint = "nothing was committed; report this as a bug with the job log"


def rewrite_partitions(
    ctx: TableContext, rewrites: Sequence[PartitionRewrite], *, instant: str, shuffle_free: bool
) -> tuple[tuple[WriteStat, ...], bool, int]:
    """Write every row of the rewritten partitions into new bucket file groups for ``instant``. Returns
    the files written, whether the rewrite went without a shuffle (asked, and the files allow it), and
    how many keys held by two file groups were resolved to one copy (``duplicates``)."""
    files = [f for r in rewrites for f in r.base_files]
    if not files:
        return (), shuffle_free, 0
    spark, key_style = ctx.spark, ctx.key_style
    table = table_files(ctx, files)
    everything = table.read(files)
    resolving = [r.partition for r in rewrites if r.resolve_duplicates]
    if resolving:
        everything = keep_winning_copies(everything, resolving, ordering_of(ctx.table.config))
    # One pass over the key column: the row count to check the write against, whether the JVM can
    # compute every bucket id, and how many keys lost a copy.
    expected, keys_split, resolved = everything.select(
        F.count(F.lit(1)),
        F.count_if(~key_taken_whole(F.col(RECORD_KEY), key_style)),
        F.count_if(F.col(RESOLVED)) if resolving else F.lit(0),
    ).first()
    refuse_custom_merge(ctx.table.config, resolved)
    shuffle_free = shuffle_free and table.one_scan and not resolving
    if shuffle_free:
        rows = read_in_groups(table.read, [group for r in rewrites for group in r.task_groups()])
        grouping, read_conf = Grouping.PRESERVE, ONE_TASK_PER_READ
    else:
        rows, grouping, read_conf = everything, Grouping.SHUFFLE, {}
    with scoped_conf(spark, read_conf):
        stats = write_bucket_files(
            ctx,
            rows,
            instant=instant,
            buckets={r.partition: r.new_buckets for r in rewrites},
            data_columns=tuple(table.columns.fieldNames()),
            grouping=grouping,
            every_key_whole=keys_split == 0,
        )
    written = sum(s.num_writes for s in stats)
    if written != expected:
        raise RowCountMismatchError(f"read {expected} rows but wrote {written}")
    return stats, shuffle_free, resolved

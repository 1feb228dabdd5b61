"""Rewrite partitions into their new bucket layout (the data half of an overwrite rescale).

When every partition's new bucket count is a multiple or a divisor of its old one and its layout is a
clean bucket layout, each new bucket draws from known old buckets: new bucket ``b`` takes rows only from
old buckets congruent to ``b`` modulo ``min(old, new)``. Reading each such group of old files as one task
and writing from there needs no shuffle, where no such task writes more than two new buckets (a merge, a
doubling): on a cluster the task holding most buckets is the rewrite's wall time, so a larger split
(4 -> 32) is shuffled instead, as is any other rewrite: each new file's rows to a task of its own
(``bucket_files``), read a task per file at least (tests/bench/bench_cluster_projection.py).

A group is one read of its files, told to make one task of them (``ONE_TASK_PER_READ``), and the reads
are a union: a union of ``coalesce(1)`` reads would not do, as Spark 4 runs single-partition union
children as one task. Identical reads share their generated code (no codegen id in class names). A
split, where each group is one file, needs no union: one scan makes a task of each file
(``ONE_TASK_PER_FILE``), and plans in a fraction of a union's time. Files written with different
schemas are read by several scans (``table_files``), so a rewrite among them shuffles.

What the write must hold is counted: from the Parquet footers, read by the driver while Spark plans and
writes, when every partition is plain base files and the key is one field (the JVM then buckets every
key it can take whole, and a key it cannot fails the write, which is redone in Python); else, before the
write, by one pass over the key column.

A partition holding file slices that are not plain base files (bootstrap skeletons, MERGE_ON_READ log
files) is read by Hudi's own reader instead (``hudi_reads``), one read of the whole partition: a task per
file slice when shuffled; one task under ``ONE_TASK_PER_READ`` when its new buckets (two at most) need no
shuffle.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial, reduce
from typing import TypeVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)
from pyspark.sql.types import StructType

from hudi_bucket.bucketing.bucket_ids import is_split_key_failure, key_taken_whole
from hudi_bucket.checks.duplicates import RESOLVED, keep_winning_copies, ordering_of, refuse_custom_merge
from hudi_bucket.core.buckets import bucket_id_from_file_id
from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.completeness import check_complete
from hudi_bucket.core.filegroups import BaseFile, FileGroup, all_plain
from hudi_bucket.core.metafields import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_bucket.hudi.rollback import remove_instant_files
from hudi_bucket.reading.hudi_reads import hudi_read_failures, read_partitions
from hudi_bucket.reading.table_files import TableFiles, table_files
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.parquet_footers import file_rows, file_schema, hadoop_conf
from hudi_bucket.spark.session import scoped_conf
from hudi_bucket.spark.spark_paths import spark_root
from hudi_bucket.storage.base import PARALLEL_REQUESTS
from hudi_bucket.writing.bucket_files import Grouping, write_bucket_files

# A read of some files becomes one task when nothing splits a file (maxPartitionBytes), files cost
# nothing extra to pack together (openCostInBytes) and Spark is not asked for parallelism (minPartitionNum).
ONE_TASK_PER_READ = {
    "spark.sql.files.maxPartitionBytes": str(1 << 50),
    "spark.sql.files.openCostInBytes": "0",
    "spark.sql.files.minPartitionNum": "1",
    "spark.sql.codegen.useIdInClassName": "false",
}
# One scan of many files becomes one task per file when nothing splits a file and each file costs as
# much as a task holds (openCostInBytes): a split's groups are single files, read so without a union.
ONE_TASK_PER_FILE = {
    "spark.sql.files.maxPartitionBytes": str(1 << 50),
    "spark.sql.files.openCostInBytes": str(1 << 50),
    "spark.sql.files.minPartitionNum": "1",
}
# A read feeding a shuffle: a task per file at least (a MERGE_ON_READ or bootstrapped file slice, which
# Hudi's reader reads whole, is one), large files still split at maxPartitionBytes: never files packed
# into one task, which on a cluster would read a partition's file groups one after another.
A_TASK_PER_FILE_AT_LEAST = {"spark.sql.files.openCostInBytes": str(1 << 50)}


MAX_BUCKETS_PER_TASK = 2  # new buckets a task of the shuffle-free write may write (``_spreads``)


@dataclass(frozen=True)
class PartitionRewrite:
    partition: str
    new_buckets: int
    groups: tuple[FileGroup, ...]  # the live file groups it replaces
    old_buckets: int | None = None  # set when the old layout is a clean bucket layout
    resolve_duplicates: bool = False  # keep one copy of a key found more than once (a repair, a conversion)

    @property
    def read_by_hudi(self) -> bool:
        """Whether Hudi's file group reader reads this partition (see reading.hudi_reads)."""
        return not all_plain(self.groups)

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


def read_records(
    ctx: TableContext, groups: Mapping[str, Sequence[FileGroup]], *, file_names: bool = True
) -> tuple[TableFiles, DataFrame | None]:
    """Every live record of these partitions (their live file groups), in the meta columns and the
    table's columns (``TableFiles.columns``): partitions of plain base files by one scan of them, the
    others by Hudi's reader (``hudi_reads``). None when they hold no file to read. Without
    ``file_names`` the plain base files' rows name no file (``TableFiles.read``)."""
    files = [f for gs in groups.values() if all_plain(gs) for g in gs if (f := g.latest_base_file)]
    by_hudi = [p for p, gs in groups.items() if gs and not all_plain(gs)]
    table = table_files(ctx, files)
    reads = [table.read(files, file_names=file_names)] if files else []
    return table, _with_hudi_reads(ctx, reads, by_hudi, table.columns)


def rewrite_partitions(
    ctx: TableContext,
    rewrites: Sequence[PartitionRewrite],
    *,
    instant: str,
    shuffle_free: bool,
    table_schema: str | None,
    every_copy: bool = False,
) -> tuple[tuple[WriteStat, ...], bool, int]:
    """Write every row of the rewritten partitions into new bucket file groups for ``instant``. Returns
    the files written, whether the rewrite went without a shuffle (asked, and the files allow it), and
    how many keys of partitions that resolve duplicates kept one copy (held by two file groups; with
    ``every_copy``, held more than once at all: see ``duplicates``). Before returning, the files
    written must hold every column of ``table_schema`` (Avro JSON, the latest commit's; None: the columns
    read) and, per partition, every record read (``core.completeness``): else nothing is to be committed."""
    resolving = [r.partition for r in rewrites if r.resolve_duplicates]
    by_hudi = [r.partition for r in rewrites if r.read_by_hudi and r.groups]
    # Plain base files, one key field: their footers count the rows (read while Spark plans and writes:
    # the counts are checked after the write), and the JVM buckets the keys (a key it cannot take whole,
    # a value holding the key separators, fails the write: redone below).
    by_footers = not by_hudi and not resolving and len(ctx.table.config.record_key_fields) == 1
    # The rows' old file names matter only to choose between copies of a key: the write names new files.
    file_names = bool(resolving)
    table, everything = read_records(ctx, {r.partition: r.groups for r in rewrites}, file_names=file_names)
    if everything is None:
        return (), shuffle_free, 0
    footer_rows = _start_footer_counts(ctx, rewrites) if by_footers else None
    spark = ctx.spark
    if resolving:
        ordering = ordering_of(ctx.table.config)
        everything = keep_winning_copies(everything, resolving, ordering, every_copy=every_copy)
    counted: dict[str, int] = {}
    resolved, every_key_whole = 0, True
    if footer_rows is None:
        with scoped_conf(spark, A_TASK_PER_FILE_AT_LEAST):
            counted, keys_split, resolved = _count_read(ctx, everything, by_hudi, resolving)
        every_key_whole = keys_split == 0
    refuse_custom_merge(ctx.table.config, resolved)
    shuffle_free = shuffle_free and table.one_scan and not resolving and all(map(_spreads, rewrites))
    rows: DataFrame | None
    if shuffle_free:
        # A partition Hudi reads is one read, so one task: its new buckets are whole in it.
        plain = [r for r in rewrites if not r.read_by_hudi]
        task_groups = [group for r in plain for group in r.task_groups()]
        if not by_hudi and all(len(group) == 1 for group in task_groups):
            # A split: the one scan of every file, made above, is a task per file (planning one scan
            # beats a union of one scan per file: 6 s of 2 million rows' 46).
            rows, read_conf = everything, ONE_TASK_PER_FILE
        else:
            read = partial(table.read, file_names=file_names)
            reads = [read_in_groups(read, task_groups)] if task_groups else []
            rows, read_conf = _with_hudi_reads(ctx, reads, by_hudi, table.columns), ONE_TASK_PER_READ
        grouping = Grouping.PRESERVE
    else:
        rows, grouping, read_conf = everything, Grouping.SHUFFLE, A_TASK_PER_FILE_AT_LEAST
    assert rows is not None  # the same partitions as ``everything``

    def write(every_key_whole: bool) -> tuple[WriteStat, ...]:
        with scoped_conf(spark, read_conf):
            return write_bucket_files(
                ctx,
                rows,
                instant=instant,
                buckets={r.partition: r.new_buckets for r in rewrites},
                data_columns=tuple(table.columns.fieldNames()),
                grouping=grouping,
                every_key_whole=every_key_whole,
                like=next((f.path for r in rewrites for f in r.base_files), None),
            )

    try:
        stats = write(every_key_whole)
    except Exception as failure:
        if not (every_key_whole and is_split_key_failure(failure)):
            raise
        remove_instant_files(ctx.storage, instant, tuple(r.partition for r in rewrites))
        stats = write(every_key_whole=False)
    schema = [f["name"] for f in json.loads(table_schema)["fields"]] if table_schema else table.columns.names
    _check_complete(ctx, stats, footer_rows() if footer_rows else counted, schema)
    return stats, shuffle_free, resolved


def _spreads(rewrite: PartitionRewrite) -> bool:
    """Whether the shuffle-free write spreads this partition over tasks of two new buckets at most: a
    task per group of old files writes every new bucket they feed (a split's factor: 4 -> 32 is eight
    each, from one old file; one for a merge), and a partition Hudi's reader reads is one task for all of
    its new buckets. On a cluster the task holding most buckets is the rewrite's wall time: the others are
    shuffled, each new file to a task of its own (tests/bench/bench_cluster_projection.py measures both)."""
    if rewrite.read_by_hudi or rewrite.old_buckets is None:
        return rewrite.new_buckets <= MAX_BUCKETS_PER_TASK
    return rewrite.new_buckets <= MAX_BUCKETS_PER_TASK * rewrite.old_buckets


def _count_read(
    ctx: TableContext, everything: DataFrame, by_hudi: Sequence[str], resolving: Sequence[str]
) -> tuple[dict[str, int], int, int]:
    """One pass over the key column of ``everything``: the rows of each partition (to check the write
    against), how many keys the JVM cannot take whole, and how many keys lost a copy."""
    with hudi_read_failures(ctx, by_hudi):
        counted = (
            everything.groupBy(PARTITION_PATH)
            .agg(
                F.count(F.lit(1)),
                F.count_if(~key_taken_whole(F.col(RECORD_KEY), ctx.key_style)),
                F.count_if(F.col(RESOLVED)) if resolving else F.lit(0),
            )
            .collect()
        )
    read_rows = {row[0]: row[1] for row in counted}
    return read_rows, sum(row[2] for row in counted), sum(row[3] for row in counted)


def _start_footer_counts(
    ctx: TableContext, rewrites: Sequence[PartitionRewrite]
) -> Callable[[], dict[str, int]]:
    """Starts reading the rows of each partition's plain base files from their Parquet footers: by the
    driver, in parallel (one request each on an object store), as the job's Hadoop configuration reads
    them. Returns what waits for the counts."""
    root, conf = spark_root(ctx.storage), hadoop_conf(ctx.spark)
    files = [(r.partition, f) for r in rewrites for f in r.base_files]
    pool = ThreadPoolExecutor(max(1, min(PARALLEL_REQUESTS, len(files))), thread_name_prefix="hbo-footer")
    rows = [
        (partition, pool.submit(file_rows, ctx.spark, f"{root}/{f.path}", conf)) for partition, f in files
    ]
    pool.shutdown(wait=False)  # the reads submitted still run

    def counts() -> dict[str, int]:
        by_partition: dict[str, int] = defaultdict(int)
        for partition, count in rows:
            by_partition[partition] += count.result()
        return {p: n for p, n in by_partition.items() if n}

    return counts


def _with_hudi_reads(
    ctx: TableContext, reads: list[DataFrame], by_hudi: Sequence[str], columns: StructType
) -> DataFrame | None:
    """``reads`` (of plain base files) and the partitions Hudi's reader reads, as one frame (None: none)."""
    frames = reads + ([read_partitions(ctx, by_hudi, columns)] if by_hudi else [])
    return reduce(DataFrame.union, frames) if frames else None


def _check_complete(
    ctx: TableContext, stats: Sequence[WriteStat], read_rows: dict[str, int], schema: Sequence[str]
) -> None:
    """The files written hold the table's ``schema`` (one footer read: every file of the write has the
    frame's schema) and each partition's records read (the counts the writing tasks read back)."""
    written_rows: dict[str, int] = defaultdict(int)
    for stat in stats:
        written_rows[stat.partition_path] += stat.num_writes
    root = spark_root(ctx.storage)
    written = (
        file_schema(ctx.spark, f"{root}/{stats[0].path}").fieldNames() if stats else [*META_COLUMNS, *schema]
    )
    check_complete(
        schema_columns=[*META_COLUMNS, *schema],
        written_columns=written,
        read_rows=read_rows,
        written_rows=written_rows,
    )

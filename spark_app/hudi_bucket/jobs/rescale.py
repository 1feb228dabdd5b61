"""Rewrite partitions into their new bucket layout (the data half of an overwrite rescale).

When every partition's new bucket count is a multiple or a divisor of its old one and its layout is a
clean bucket layout, each new bucket draws from known old buckets: new bucket ``b`` takes rows only from
old buckets congruent to ``b`` modulo ``min(old, new)``. Reading each such group of old files as one task
and writing from there needs no shuffle. Otherwise rows are hash-partitioned by (partition, bucket).

A group is one read of its files, told to make one task of them (``ONE_TASK_PER_READ``), and the reads
are a union: a union of ``coalesce(1)`` reads would not do, as Spark 4 runs single-partition union
children as one task. Identical reads share their generated code (no codegen id in class names).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)

from hudi_bucket.core.buckets import bucket_id_from_file_id
from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.metafields import META_COLUMNS, RECORD_KEY
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.errors import HudiBucketError
from hudi_bucket.jobs.bucket_files import Grouping, write_bucket_files
from hudi_bucket.jobs.bucketing import key_taken_whole
from hudi_bucket.jobs.session import scoped_conf
from hudi_bucket.jobs.spark_paths import table_file_uris
from hudi_bucket.storage.base import Storage

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

    @property
    def base_files(self) -> tuple[str, ...]:
        return tuple(g.latest_base_file.path for g in self.groups if g.latest_base_file)

    def task_groups(self) -> tuple[tuple[str, ...], ...]:
        """Old base files that must share a task for the shuffle-free rewrite."""
        assert self.old_buckets is not None
        modulus = min(self.old_buckets, self.new_buckets)
        by_residue: dict[int, list[str]] = defaultdict(list)
        for g in self.groups:
            if g.latest_base_file:
                by_residue[bucket_id_from_file_id(g.file_id) % modulus].append(g.latest_base_file.path)
        return tuple(tuple(files) for _, files in sorted(by_residue.items()))


def read_in_groups(spark: Any, schema: Any, groups: Sequence[Sequence[str]]) -> DataFrame:
    """The rows of every group of files, each group one task when run under ``ONE_TASK_PER_READ``."""
    return reduce(DataFrame.union, (spark.read.schema(schema).parquet(*group) for group in groups))


class RowCountMismatchError(HudiBucketError):
    """The rewrite wrote a different number of rows than it read: it will not be committed."""

    hint = "nothing was committed; report this as a bug with the job log"


def rewrite_partitions(
    spark: Any,
    storage: Storage,
    rewrites: Sequence[PartitionRewrite],
    *,
    instant: str,
    hash_fields: tuple[str, ...],
    key_style: KeyStyle,
    shuffle_free: bool,
) -> tuple[WriteStat, ...]:
    """Write every row of the rewritten partitions into new bucket file groups for ``instant``."""
    files = [f for r in rewrites for f in r.base_files]
    if not files:
        return ()
    everything = spark.read.option("mergeSchema", "true").parquet(*table_file_uris(storage, files))
    data_columns = tuple(c for c in everything.columns if c not in META_COLUMNS)
    # One pass over the key column: the row count to check the write against, and whether the JVM
    # can compute every bucket id.
    expected, keys_split = everything.select(
        F.count(F.lit(1)), F.count_if(~key_taken_whole(F.col(RECORD_KEY), key_style))
    ).first()
    if shuffle_free:
        # The merged schema is given to every group: inferring it per group is one Spark job each.
        groups = [table_file_uris(storage, group) for r in rewrites for group in r.task_groups()]
        rows = read_in_groups(spark, everything.schema, groups)
        grouping, read_conf = Grouping.PRESERVE, ONE_TASK_PER_READ
    else:
        rows, grouping, read_conf = everything, Grouping.SHUFFLE, {}
    with scoped_conf(spark, read_conf):
        stats = write_bucket_files(
            spark,
            storage,
            rows,
            instant=instant,
            buckets={r.partition: r.new_buckets for r in rewrites},
            hash_fields=hash_fields,
            key_style=key_style,
            data_columns=data_columns,
            grouping=grouping,
            every_key_whole=keys_split == 0,
        )
    written = sum(s.num_writes for s in stats)
    if written != expected:
        raise RowCountMismatchError(f"read {expected} rows but wrote {written}")
    return stats

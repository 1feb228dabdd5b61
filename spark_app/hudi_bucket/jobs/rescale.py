"""Rewrite partitions into their new bucket layout (the data half of an overwrite rescale).

When every partition's new bucket count is a multiple or a divisor of its old one and its layout is a
clean bucket layout, each new bucket draws from known old buckets: new bucket ``b`` takes rows only from
old buckets congruent to ``b`` modulo ``min(old, new)``. Reading each such group of old files as one task
and writing from there needs no shuffle. Otherwise rows are hash-partitioned by (partition, bucket).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from hudi_bucket.core.buckets import bucket_id_from_file_id
from hudi_bucket.core.commits import WriteStat
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.metafields import META_COLUMNS
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.errors import HudiBucketError
from hudi_bucket.jobs.bucket_files import Grouping, write_bucket_files
from hudi_bucket.storage.base import Storage


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
    uri = storage.uri.rstrip("/")

    everything = spark.read.option("mergeSchema", "true").parquet(*(f"{uri}/{p}" for p in files))
    data_columns = tuple(c for c in everything.columns if c not in META_COLUMNS)
    if shuffle_free:
        # The merged schema is given to every group: inferring it per group is one Spark job each.
        schema = everything.schema

        def read_group(paths: Sequence[str]) -> Any:
            return spark.read.schema(schema).parquet(*(f"{uri}/{p}" for p in paths)).coalesce(1)

        tasks = [read_group(group) for r in rewrites for group in r.task_groups()]
        rows = reduce(lambda a, b: a.union(b), tasks)
        grouping = Grouping.PRESERVE
    else:
        rows, grouping = everything, Grouping.SHUFFLE
    expected = everything.count()  # Parquet footers only
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
    )
    written = sum(s.num_writes for s in stats)
    if written != expected:
        raise RowCountMismatchError(f"read {expected} rows but wrote {written}")
    return stats

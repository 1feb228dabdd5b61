"""One copy of each key in a rewritten partition, the one Hudi's merge would keep.

A bucket index keeps each key in the one file group of its bucket. A broken layout may hold a key in two
file groups (a copy in the wrong bucket, or two file groups of one bucket): a repair keeps the copies of
one file group per key and drops the others; copies of a key inside one file group are the writer's own
(an insert may keep duplicates) and stay as they are. A table converted to a bucket index (written by
Hudi's ``insert``, which keeps duplicates, say) becomes a primary-keyed table: every copy of a key but
one goes, unless the user asks to keep them all. The winner is the copy with the greatest ordering value
under the table's EVENT_TIME_ORDERING merge mode (a null is less than any value), else, and on a tie,
the copy committed last (``_hoodie_commit_time``); then the greater file name and sequence number, so
that the choice is the same on every run. A table that merges with its own code (merge mode CUSTOM: a
payload class or merger of its own) cannot be resolved here, and the rewrite is refused when it would
have to.
"""

from __future__ import annotations

from collections.abc import Collection

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)

from hudi_bucket.core.metafields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hudi_bucket.core.properties import TableConfig
from hudi_bucket.errors import CustomMergeError
from hudi_bucket.hudi.table_creation import CUSTOM, EVENT_TIME_ORDERING, merge_mode

RESOLVED = "__hbo_resolved"  # true on the winning copy of a key that was in more than one file group


def refuse_custom_merge(config: TableConfig, resolved: int) -> None:
    """Refuse a repair that must choose between copies of keys when the table merges with custom code."""
    if resolved and merge_mode(config) == CUSTOM:
        raise CustomMergeError(
            f"{resolved} key(s) are held by two file groups, and the table merges records with custom "
            "code (hoodie.record.merge.mode CUSTOM), whose choice a repair cannot make"
        )


def ordering_of(config: TableConfig) -> tuple[str, ...]:
    """The fields that decide between two copies of a key (none: the commit time alone decides)."""
    return config.ordering_fields if merge_mode(config) == EVENT_TIME_ORDERING else ()


def keep_winning_copies(
    rows: DataFrame, partitions: Collection[str], ordering: tuple[str, ...], *, every_copy: bool = False
) -> DataFrame:
    """``rows`` (as ``TableFiles.read`` gives them) without the losing copies of keys held by two file
    groups of ``partitions`` (with ``every_copy``: held more than once at all), and a ``RESOLVED``
    column that counts each such key once."""
    partition, key = F.col(PARTITION_PATH), F.col(RECORD_KEY)
    group = F.substring_index(F.col(FILE_NAME), "_", 1)  # a file id holds no '_'
    copies = Window.partitionBy(partition, key)
    best_first = copies.orderBy(
        *(F.col(field).desc_nulls_last() for field in ordering),
        F.col(COMMIT_TIME).desc_nulls_last(),
        F.col(FILE_NAME).desc(),
        F.col(COMMIT_SEQNO).desc_nulls_last(),
    )
    in_scope: Column = partition.isin(list(partitions)) & key.isNotNull()
    if every_copy:
        held_twice, first = F.count(F.lit(1)).over(copies) > 1, F.row_number().over(best_first) == 1
        annotated = rows.select("*", held_twice.alias("__hbo_twice"), first.alias("__hbo_first"))
        kept = annotated.filter(~in_scope | F.col("__hbo_first"))
    else:
        held_twice = F.min(group).over(copies) != F.max(group).over(copies)
        annotated = rows.select(
            "*",
            group.alias("__hbo_group"),
            F.first(group).over(best_first).alias("__hbo_winner"),
            (F.row_number().over(best_first) == 1).alias("__hbo_first"),
            held_twice.alias("__hbo_twice"),
        )
        kept = annotated.filter(~in_scope | (F.col("__hbo_group") == F.col("__hbo_winner")))
    resolved = in_scope & F.col("__hbo_twice") & F.col("__hbo_first")
    return kept.select(*rows.columns, resolved.alias(RESOLVED))


def count_duplicate_keys(rows: DataFrame) -> dict[str, int]:
    """Per partition, the keys ``rows`` hold more than once (partitions without any are left out)."""
    keys = rows.groupBy(PARTITION_PATH, RECORD_KEY).count().where("count > 1")
    return {r[0]: r[1] for r in keys.groupBy(PARTITION_PATH).count().collect()}

"""Hudi bucket ids as Spark columns.

The bucket of a row is computed from its ``_hoodie_record_key``. In general Python workers compute it
(``python_bucket_ids``). When the caller expects every key to be taken
whole (``key_taken_whole``), the JVM computes the same bucket from Java's own ``String.hashCode``: no
Python worker starts, which a task-per-bucket rewrite would otherwise pay once per task. A key it cannot
take whole fails the Spark job (``is_split_key_failure`` tells that failure), so a wrong expectation
costs a retry, never a misplaced record. The bucket count is a column because it differs per partition
under the partition-level bucket index; ``num_buckets_column`` builds it from a partition column.

Python workers import ``hudi_bucket``: the job image has it, and locally ``session.build_session`` starts
them with the driver's interpreter.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import reduce
from itertools import chain
from operator import and_

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)

from hudi_bucket.core.buckets import check_num_buckets
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.spark.session import STRING_HASH_FUNCTION

ColumnOrName = Column | str
_JAVA_INT_MAX = 0x7FFFFFFF
_NULL_KEY_MESSAGE = "a record key is null; Hudi never writes a record without a key"
_SPLIT_KEY_MESSAGE = "hudi-bucket: a record key holds several fields; bucket it with every_key_whole=False"


def bucket_id_column(
    record_key_col: ColumnOrName,
    num_buckets_col: ColumnOrName | int,
    hash_fields: Collection[str],
    key_style: KeyStyle = KeyStyle.HUDI_1X,
    *,
    every_key_whole: bool = False,
) -> Column:
    """Each row's bucket id (int) under its own bucket count, as ``buckets.record_key_bucket_id`` gives it.

    ``hash_fields`` names the index-key fields (empty: every field of the key). A null record key or bucket
    count fails the Spark job, as Hudi cannot bucket a record without a key: filter or replace nulls first.
    ``every_key_whole``: the JVM computes the ids, and a row where ``key_taken_whole`` does not hold fails
    the job (see ``is_split_key_failure``).
    """
    if isinstance(num_buckets_col, int):
        check_num_buckets(num_buckets_col)
        num_buckets_col = F.lit(num_buckets_col)
    if every_key_whole:
        return _whole_key_bucket_id(_column(record_key_col), _column(num_buckets_col), key_style)
    from hudi_bucket.bucketing.python_bucket_ids import python_bucket_id  # imports pandas

    return python_bucket_id(_column(record_key_col), _column(num_buckets_col), hash_fields, key_style)


def key_taken_whole(record_key_col: ColumnOrName, key_style: KeyStyle) -> Column:
    """Whether ``key_style`` takes the key as its one index-key value (``recordkeys.is_single_value_key``);
    false for a null key."""
    key = _column(record_key_col)
    holds_every_marker = reduce(and_, (key.contains(marker) for marker in key_style.pair_markers))
    return key.isNotNull() & ~holds_every_marker


def is_split_key_failure(error: BaseException) -> bool:
    """Whether a Spark action failed because ``bucket_id_column(every_key_whole=True)`` met a key that is
    not taken whole."""
    return _SPLIT_KEY_MESSAGE in str(error)


def _whole_key_bucket_id(record_key: Column, num_buckets: Column, key_style: KeyStyle) -> Column:
    """Hudi hashes the one-value list ``[key]``: ``31 + key.hashCode()`` in Java int arithmetic, masked
    to 31 bits. Computed in bigint, whose low 32 bits wrap exactly as Java's int does."""
    list_hash = (_java_string_hash(record_key) + F.lit(31)).bitwiseAND(F.lit(_JAVA_INT_MAX))
    bucket = (list_hash % num_buckets).cast("int")
    return (
        F.when(record_key.isNull(), F.raise_error(F.lit(_NULL_KEY_MESSAGE)))
        .when(~key_taken_whole(record_key, key_style), F.raise_error(F.lit(_SPLIT_KEY_MESSAGE)))
        .otherwise(bucket)
    )


def _java_string_hash(key: Column) -> Column:
    """Java's ``String.hashCode`` of each key, in bigint: by our JVM function where the session has it
    (``session.configure`` registers it), which Spark compiles into the stage's code; else by Spark's
    ``reflect``, which is interpreted, splits the stage's code in two and returns a string to parse."""
    if SparkSession.active().catalog.functionExists(STRING_HASH_FUNCTION):
        return F.call_function(STRING_HASH_FUNCTION, key).cast("bigint")
    return F.call_function("reflect", F.lit("java.util.Objects"), F.lit("hashCode"), key).cast("bigint")


def num_buckets_column(
    partition_col: ColumnOrName, buckets_by_partition: Mapping[str, int], default: int
) -> Column:
    """The bucket count of each row's partition path: a literal map lookup, ``default`` for any other path.

    Counts are checked here, on the driver, so a bad count fails before any task runs.
    """
    for count in (*buckets_by_partition.values(), default):
        check_num_buckets(count)
    if not buckets_by_partition:
        return F.lit(default)
    lookup = F.create_map(
        *chain.from_iterable(
            (F.lit(path), F.lit(count)) for path, count in sorted(buckets_by_partition.items())
        )
    )
    return F.coalesce(F.try_element_at(lookup, _column(partition_col)), F.lit(default))


def placement_stats(
    keyed: DataFrame, hash_fields: Collection[str], key_style: KeyStyle = KeyStyle.HUDI_1X
) -> list[Row]:
    """Where the records of ``keyed`` (``group_index``, ``key``, ``bucket``, ``num_buckets``: a record
    key, and the bucket and bucket count of the file group it sits in) belong. Per group: ``rows``, rows
    without a key (``missing``), rows of other buckets (``misplaced``) and the smallest misplaced
    (key, bucket) as ``example``. Only these small rows reach the driver."""
    key, computed = F.col("key"), F.col("computed")
    # A null key gets a stand-in bucket, never used: a Python UDF runs on every row, whatever wraps it.
    bucketed = keyed.withColumn(
        "computed", bucket_id_column(F.coalesce(key, F.lit("")), "num_buckets", hash_fields, key_style)
    )
    misplaced = key.isNotNull() & (computed != F.col("bucket"))
    return (
        bucketed.groupBy("group_index")
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.count_if(key.isNull()).alias("missing"),
            F.count_if(misplaced).alias("misplaced"),
            F.min(F.when(misplaced, F.struct(key, computed))).alias("example"),
        )
        .collect()
    )


def _column(col: ColumnOrName) -> Column:
    return F.col(col) if isinstance(col, str) else col

"""Hudi bucket ids as Spark columns.

The bucket of a row is computed from its ``_hoodie_record_key`` by ``core.bucket_batch``, inside a scalar
Arrow UDF: only the key and bucket-count columns cross into the Python workers, as Arrow batches, and each
batch is bucketed with array arithmetic. The bucket count is a column because it differs per partition
under the partition-level bucket index; ``num_buckets_column`` builds it from a partition column.

Python workers import ``hudi_bucket``: the job image has it, and locally ``session.build_session`` starts
them with the driver's interpreter.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import chain

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)
from pyspark.sql.types import IntegerType

from hudi_bucket.core.bucket_batch import bucket_ids_for_record_keys
from hudi_bucket.core.buckets import check_num_buckets
from hudi_bucket.core.recordkeys import KeyStyle

ColumnOrName = Column | str


def bucket_id_column(
    record_key_col: ColumnOrName,
    num_buckets_col: ColumnOrName | int,
    hash_fields: Collection[str],
    key_style: KeyStyle = KeyStyle.HUDI_1X,
) -> Column:
    """Each row's bucket id (int) under its own bucket count, as ``buckets.record_key_bucket_id`` gives it.

    ``hash_fields`` names the index-key fields (empty: every field of the key). A null record key or bucket
    count fails the Spark job, as Hudi cannot bucket a record without a key: filter or replace nulls first.
    """
    if isinstance(num_buckets_col, int):
        check_num_buckets(num_buckets_col)
        num_buckets_col = F.lit(num_buckets_col)
    fields = tuple(hash_fields)

    @F.arrow_udf(IntegerType())
    def hudi_bucket_id(record_keys: pa.Array, num_buckets: pa.Array) -> pa.Array:
        return pa.array(bucket_ids_for_record_keys(record_keys, fields, num_buckets, key_style), pa.int32())

    return hudi_bucket_id(_column(record_key_col), _column(num_buckets_col))


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


def _column(col: ColumnOrName) -> Column:
    return F.col(col) if isinstance(col, str) else col

"""Bucket ids computed by Python workers: ``bucket_batch`` inside a scalar pandas UDF. Only the key and
bucket-count columns cross into the workers, as Arrow batches, and each batch is bucketed with array
arithmetic (Spark 3.5 hands them over as pandas Series, which go back to Arrow without a per-row loop).

A module of its own so that pandas is imported where this runs only: the JVM's bucketing of whole keys
(``bucket_ids``) needs none, and pandas costs a job's driver a quarter of a second to import.
"""

from __future__ import annotations

from collections.abc import Collection

import pandas as pd
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql.pandas.functions import pandas_udf
from pyspark.sql.types import IntegerType

from hudi_bucket.bucketing.bucket_batch import bucket_ids_for_record_keys
from hudi_bucket.core.recordkeys import KeyStyle


def python_bucket_id(
    record_key: Column, num_buckets: Column, hash_fields: Collection[str], key_style: KeyStyle
) -> Column:
    """Each row's bucket id (int), as ``buckets.record_key_bucket_id`` gives it."""
    fields = tuple(hash_fields)

    # PySpark types pandas_udf by pandas' own types, which pandas (untyped here) does not give
    @pandas_udf(IntegerType())  # type: ignore[call-overload, untyped-decorator]
    def hudi_bucket_id(record_keys: pd.Series, num_buckets: pd.Series) -> pd.Series:
        keys = pa.Array.from_pandas(record_keys, type=pa.string())
        ids = bucket_ids_for_record_keys(keys, fields, num_buckets.to_numpy(), key_style)
        return pd.Series(ids, dtype="int32")

    bucket_id: Column = hudi_bucket_id(record_key, num_buckets)
    return bucket_id

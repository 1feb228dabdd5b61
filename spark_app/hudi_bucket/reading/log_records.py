"""The records of MERGE_ON_READ log files, read through Apache Hudi's own datasource (its bundle on the
session, see spark.session), for ``verify`` to check that each one hashes to its file group's bucket.

Hudi's snapshot read merges each latest file slice's base file with its log files. A record that comes
out of a log file carries its file group's id alone in ``_hoodie_file_name`` (Hudi's log writer stores it
so), a record of a base file the base file's name (``<fileId>_<writeToken>_<instant>.parquet``): the
rows whose ``_hoodie_file_name`` has no ``_`` are the log files' records, and it names their file group.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)

from hudi_bucket.bucketing.bucket_ids import placement_stats
from hudi_bucket.core.metafields import FILE_NAME, PARTITION_PATH, RECORD_KEY
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.hudi.table import HudiTable
from hudi_bucket.reading.hudi_reads import hudi_reader_available
from hudi_bucket.spark.spark_paths import spark_root
from hudi_bucket.storage.base import Storage

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession


def readable(spark: SparkSession, table: HudiTable) -> bool:
    """Whether log records can be checked here: Hudi's datasource is on the classpath, and the table
    stores meta fields (with virtual keys a record does not say which file group it is in)."""
    return table.config.populate_meta_fields and hudi_reader_available(spark)


def log_record_stats(
    spark: SparkSession,
    storage: Storage,
    groups: Sequence[tuple[str, str, int, int]],
    hash_fields: Collection[str],
    key_style: KeyStyle,
) -> list[Row]:
    """One snapshot read of the partitions of ``groups`` (partition, file id, bucket, bucket count): the
    ``bucketing.placement_stats`` of each group's log records, ``group_index`` its index in ``groups``."""
    partitions = sorted({partition for partition, *_ in groups})
    snapshot = spark.read.format("hudi").load(spark_root(storage))
    from_logs = snapshot.where(F.col(PARTITION_PATH).isin(partitions) & ~F.col(FILE_NAME).contains("_"))
    files = spark.createDataFrame(
        [
            (partition, file_id, index, bucket, n)
            for index, (partition, file_id, bucket, n) in enumerate(groups)
        ],
        f"{PARTITION_PATH} string, {FILE_NAME} string, group_index int, bucket int, num_buckets int",
    )
    keyed = from_logs.select(PARTITION_PATH, FILE_NAME, F.col(RECORD_KEY).alias("key")).join(
        F.broadcast(files), [PARTITION_PATH, FILE_NAME]
    )
    return placement_stats(keyed, hash_fields, key_style)

"""Partitions read by Apache Hudi's own reader: those holding file slices a scan of base files cannot
read whole.

A bootstrapped slice (a skeleton base file beside its source file) and a MERGE_ON_READ slice with log
files hold their records across files that only Hudi's file group reader puts together as Hudi means
them: skeleton row i beside row i of the source file its bootstrap index names, partition values from
the path where the source files lack them; log records merged into the base file's by the table's merge
mode, deletes applied. Hudi's bundle is on the job's session (the job image carries it, see
spark.session). Such a partition is read whole, one read of its folder (Hudi reads just that partition),
into the meta columns and the table columns ``TableFiles`` reads plain base files into. A record out of a
log file names its file group alone in ``_hoodie_file_name``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import reduce
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)
from pyspark.sql.types import StructType

from hudi_bucket.core.completeness import BOOTSTRAP_SCHEMA_HINT
from hudi_bucket.core.filegroups import partition_file_path
from hudi_bucket.core.metafields import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_bucket.errors import HudiReaderMissingError, HudiReadError
from hudi_bucket.reading.source import record_key_column
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import on_classpath
from hudi_bucket.spark.spark_paths import spark_root

HUDI_DATASOURCE = "org.apache.hudi.DefaultSource"


def hudi_reader_available(spark: Any) -> bool:
    return on_classpath(spark, HUDI_DATASOURCE)


def require_hudi_reader(spark: Any, partitions: Sequence[str], why: str) -> None:
    """Refuse, before anything is written, when ``partitions`` need Hudi's reader and it is missing."""
    if partitions and not hudi_reader_available(spark):
        named = ", ".join(repr(p) for p in partitions[:5]) + (" ..." if len(partitions) > 5 else "")
        raise HudiReaderMissingError(
            f"{len(partitions)} partition(s) to rewrite ({named}) hold {why}, which only Apache Hudi's "
            "reader reads whole, and its bundle is not on this job's classpath"
        )


@contextmanager
def hudi_read_failures(ctx: TableContext, partitions: Sequence[str]) -> Iterator[None]:
    """Spark actions that read ``partitions`` through Hudi's reader: a failure of theirs becomes a
    HudiReadError saying which partitions, Hudi's own words, and the likely cause where one is known."""
    try:
        yield
    except (Py4JJavaError, PySparkException) as exc:
        if not partitions:
            raise
        words = str(exc).strip().splitlines()
        named = ", ".join(repr(p) for p in partitions[:5]) + (" ..." if len(partitions) > 5 else "")
        raise HudiReadError(
            f"Apache Hudi's reader failed on partition(s) {named}: {words[0] if words else type(exc).__name__}",
            hint=HudiReadError.hint
            + (f"; {BOOTSTRAP_SCHEMA_HINT}" if ctx.table.config.bootstrap_base_path else ""),
        ) from exc


def read_partitions(ctx: TableContext, partitions: Sequence[str], columns: StructType) -> DataFrame:
    """Every live record of ``partitions`` as Hudi reads it: Hudi's meta columns (the record key and
    partition path always set), then ``columns`` in their types. One read per partition."""
    return reduce(DataFrame.union, (_read_partition(ctx, p, columns) for p in partitions))


def _read_partition(ctx: TableContext, partition: str, columns: StructType) -> DataFrame:
    folder = f"{spark_root(ctx.storage)}/{partition_file_path(partition, '')}".rstrip("/")
    scan = ctx.spark.read.format("hudi").load(folder)
    present = set(scan.columns)
    meta = {m: F.col(m) if m in present else F.lit(None).cast("string") for m in META_COLUMNS}
    if not ctx.table.config.populate_meta_fields:  # virtual keys: Hudi's reader gives no meta columns
        meta[RECORD_KEY] = record_key_column(ctx.table.config)
        meta[PARTITION_PATH] = F.lit(partition)
    data = [
        (F.col(c.name).cast(c.dataType) if c.name in present else F.lit(None).cast(c.dataType)).alias(c.name)
        for c in columns.fields
    ]
    selected: DataFrame = scan.select(*(v.alias(m) for m, v in meta.items()), *data)
    return selected

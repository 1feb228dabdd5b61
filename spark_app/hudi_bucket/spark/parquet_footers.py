"""Parquet footers read by the driver, through the session's Hadoop configuration: a file's rows, and its
schema as Spark's reader reports it. ``spark.read.parquet(file).schema`` would run a Spark job to read
one footer (Spark infers schemas in tasks, even of one file): most of a second in a fresh process, where
the driver reads it in milliseconds.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql.types import StructType

from hudi_bucket.core.file_format import (
    BLOOM_FILTER_FOOTER,
    BLOOM_TYPE_FOOTER,
    MAX_KEY_FOOTER,
    MIN_KEY_FOOTER,
    SampleFile,
)

_PARQUET = "org.apache.spark.sql.execution.datasources.parquet"


def hadoop_conf(spark: Any) -> Any:
    """The Hadoop configuration the session's reads use; one serves many footer reads."""
    return spark._jsparkSession.sessionState().newHadoopConf()


def footer(spark: Any, uri: str, conf: Any = None) -> Any:
    """The footer (a ParquetMetadata) of the Parquet file at ``uri``, a path Hadoop reads as it is."""
    jvm = spark.sparkContext._jvm
    conf = conf or hadoop_conf(spark)
    path = jvm.org.apache.hadoop.fs.Path(uri)
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(
        jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(path, conf)
    )
    try:
        return reader.getFooter()
    finally:
        reader.close()


def file_rows(spark: Any, uri: str, conf: Any = None) -> int:
    return sum(int(block.getRowCount()) for block in footer(spark, uri, conf).getBlocks())


def sample_file(spark: Any, uri: str) -> SampleFile:
    """How the Parquet file at ``uri`` was written, as ``core.file_format`` reads it. The bloom filter's
    value (a few hundred kilobytes) stays in the JVM: only that it is there matters."""
    metadata = footer(spark, uri)
    blocks = metadata.getBlocks()
    codec = str(blocks[0].getColumns()[0].getCodec().name()) if blocks.size() else None
    entries = metadata.getFileMetaData().getKeyValueMetaData()
    kept = {
        key: "" if key == BLOOM_FILTER_FOOTER else str(entries.get(key))
        for key in (BLOOM_FILTER_FOOTER, BLOOM_TYPE_FOOTER, MIN_KEY_FOOTER, MAX_KEY_FOOTER)
        if entries.containsKey(key)
    }
    return SampleFile(codec, kept)


def file_schema(spark: Any, uri: str) -> StructType:
    """The Spark schema of the file at ``uri``, as ``spark.read.parquet`` infers it: the schema Spark wrote
    into the footer when it wrote the file, else the Parquet schema converted under the session's
    settings; every field nullable, as a file source reads it."""
    jvm = spark.sparkContext._jvm
    parquet = getattr(jvm, _PARQUET)
    converter = parquet.ParquetToSparkSchemaConverter(spark._jsparkSession.sessionState().conf())
    held = jvm.org.apache.parquet.hadoop.Footer(jvm.org.apache.hadoop.fs.Path(uri), footer(spark, uri))
    schema = parquet.ParquetFileFormat.readSchemaFromFooter(held, converter)
    return StructType.fromJson(_nullable(json.loads(schema.json())))


def _nullable(data_type: Any) -> Any:
    """A data type's JSON with every field, array element and map value nullable."""
    if not isinstance(data_type, dict):
        return data_type
    kind = data_type.get("type")
    if kind == "struct":
        fields = [{**f, "nullable": True, "type": _nullable(f["type"])} for f in data_type["fields"]]
        return {**data_type, "fields": fields}
    if kind == "array":
        return {**data_type, "containsNull": True, "elementType": _nullable(data_type["elementType"])}
    if kind == "map":
        return {
            **data_type,
            "valueContainsNull": True,
            "keyType": _nullable(data_type["keyType"]),
            "valueType": _nullable(data_type["valueType"]),
        }
    return data_type

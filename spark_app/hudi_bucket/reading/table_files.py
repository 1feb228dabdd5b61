"""A table's base files read as Hudi reads them: each file against the table schema, keyed as the table
keys its records.

Files of one table may disagree on a column's type (schema evolution: int -> long, float -> double, an
added column), which Spark's ``mergeSchema`` refuses. Hudi reads each file with the schema of the commit
that wrote it and converts its records to the table schema, the one the newest write recorded. So here:
files are grouped by the writer schema their commit recorded (``extraMetadata.schema``), each group is
read with the Parquet schema of one of its files (one footer read per group) and its columns are cast to
the table's; a column a group lacks is null. The target keeps a file's own Spark type wherever it means
the table's Avro type (a byte column stays byte: Avro has only ``int``).

A table without meta fields (``hoodie.populate.meta.fields=false``, "virtual keys") stores neither record
key nor partition path (Hudi writes those columns null): the key is built from the record-key fields as
its key generator builds it, and the partition path is the file's folder.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark's own convention)
from pyspark.sql.types import DataType, StructField, StructType

from hudi_bucket.core.filegroups import BaseFile
from hudi_bucket.core.metafields import FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_bucket.hudi.table import commit_schemas, latest_table_schema
from hudi_bucket.reading.source import record_key_column
from hudi_bucket.spark.avro_schema import avro_name, from_avro_schema, to_avro_schema
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.parquet_footers import file_schema
from hudi_bucket.spark.spark_paths import spark_root, table_file_uris


@dataclass(frozen=True)
class TableFiles:
    """Base files of one table, ready to be read with one schema: ``columns`` (data columns, in the
    table's order and types)."""

    ctx: TableContext
    schema_of: Mapping[str, str]  # file path -> the writer schema (Avro JSON) it was written with
    physical: Mapping[str, StructType]  # writer schema -> the Spark schema its files hold
    columns: StructType

    @property
    def one_scan(self) -> bool:
        """Whether any set of these files is read by one scan (they share one writer schema)."""
        return len(self.physical) <= 1

    def read(self, files: Iterable[BaseFile], *, file_names: bool = True) -> DataFrame:
        """The rows of ``files``: Hudi's meta columns (record key and partition path always set, the file
        name naming the file read, or null without ``file_names``), then ``columns``. One scan per writer
        schema among them.

        A read that needs no file name should say so: once asked for, the file name takes Spark's whole
        file metadata (every field, and each row's index) into the scan, even where a later projection
        drops it (2 to 3% of a scan's time, measured on 10 million rows)."""
        by_schema: dict[str, list[BaseFile]] = defaultdict(list)
        for f in files:
            # A skeleton holds the meta columns only: read alone, its records' data would read as nulls.
            assert not f.is_bootstrap_skeleton, f"{f.path} is a bootstrap skeleton: Hudi's reader reads it"
            by_schema[self.schema_of[f.path]].append(f)
        reads = [
            self._read_group(self.physical[s], group, file_names) for s, group in sorted(by_schema.items())
        ]
        return reduce(DataFrame.union, reads)

    def _read_group(self, physical: StructType, files: Sequence[BaseFile], file_names: bool) -> DataFrame:
        spark, storage = self.ctx.spark, self.ctx.storage
        scan = spark.read.schema(physical).parquet(*table_file_uris(storage, [f.path for f in files]))
        present = set(physical.fieldNames())
        meta = {m: F.col(m) if m in present else F.lit(None).cast("string") for m in META_COLUMNS}
        meta[FILE_NAME] = F.col("_metadata.file_name") if file_names else F.lit(None).cast("string")
        if not self.ctx.table.config.populate_meta_fields:
            folders = {f.file_name: f.partition for f in files}
            lookup = F.create_map(*(F.lit(x) for pair in folders.items() for x in pair))
            meta[RECORD_KEY] = record_key_column(self.ctx.table.config)
            meta[PARTITION_PATH] = F.element_at(lookup, F.col("_metadata.file_name"))
        conversions = self._conversions(physical)
        data = [
            (F.col(c.name).cast(c.dataType) if c.name in conversions else F.col(c.name))
            if c.name in present
            else F.lit(None).cast(c.dataType)
            for c in self.columns.fields
        ]
        names = self.columns.fieldNames()
        selected: DataFrame = scan.select(
            *(v.alias(m) for m, v in meta.items()), *(d.alias(n) for d, n in zip(data, names, strict=True))
        )
        return selected

    def _conversions(self, physical: StructType) -> set[str]:
        """Columns of ``columns`` that ``physical`` lacks or holds in another type."""
        held = {f.name: f.dataType for f in physical.fields}
        return {c.name for c in self.columns.fields if held.get(c.name) != c.dataType}


def table_files(ctx: TableContext, files: Sequence[BaseFile]) -> TableFiles:
    """Plan the reading of ``files`` (latest base files of live file groups)."""
    table_schema = latest_table_schema(ctx.storage, ctx.table)
    recorded = commit_schemas(ctx.storage, ctx.table)
    schema_of = {f.path: recorded.get(f.instant, table_schema or "") for f in files}
    newest_first = sorted(
        {s: max(f.instant for f in files if schema_of[f.path] == s) for s in set(schema_of.values())}.items(),
        key=lambda item: item[1],
        reverse=True,
    )
    physical = {}
    for schema, _ in newest_first:
        sample = next(f for f in files if schema_of[f.path] == schema)
        physical[schema] = file_schema(ctx.spark, f"{spark_root(ctx.storage)}/{sample.path}")
    columns = _table_columns(
        [physical[s] for s, _ in newest_first],
        json.loads(table_schema) if table_schema else None,
        ctx.table.name,
    )
    return TableFiles(ctx, schema_of, physical, columns)


def _table_columns(
    newest_first: Sequence[StructType], table_schema: dict[str, Any] | None, table_name: str
) -> StructType:
    """The data columns every file is read into: the table schema's, each in the Spark type of the newest
    files that hold it when that type is the table's Avro type, else in the table's own type."""
    held: dict[str, DataType] = {}
    for physical in reversed(newest_first):
        held.update({f.name: f.dataType for f in physical.fields if f.name not in META_COLUMNS})
    if table_schema is None:
        return StructType([StructField(n, t, True) for n, t in held.items()])
    wanted = from_avro_schema(table_schema)
    fields = []
    for field in wanted.fields:
        own = held.get(field.name)
        if own is None or _avro_type(own, table_name) != _avro_type(field.dataType, table_name):
            own = field.dataType
        fields.append(StructField(field.name, own, True))
    return StructType(fields)


def _avro_type(data_type: DataType, table_name: str) -> str:
    """The Avro type Hudi records for a column of ``data_type``, as text (names aside)."""
    schema = to_avro_schema(StructType([StructField("c", data_type, False)]), table_name, for_commit=False)
    field_type = schema["fields"][0]["type"]
    return json.dumps(field_type, sort_keys=True).replace(avro_name(table_name), "")

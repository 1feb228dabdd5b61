"""The dataset a `write` takes: read, checked against the table's columns, and given Hudi's record key
and partition path as Hudi's key generators build them (one record per key where Hudi combines
duplicates first)."""

from __future__ import annotations

import json
import operator
from functools import reduce
from typing import Any

from hudi_bucket.core.metafields import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_bucket.core.partition_paths import ESCAPED, NEEDS_URL_ENCODING, escape_path_name
from hudi_bucket.core.properties import TableConfig
from hudi_bucket.core.recordkeys import EMPTY_PLACEHOLDER, NULL_PLACEHOLDER
from hudi_bucket.errors import SourceSchemaError, TableMismatchError, UnsupportedTableError
from hudi_bucket.hudi.table import latest_table_schema
from hudi_bucket.hudi.table_creation import CUSTOM, merge_mode
from hudi_bucket.spark.avro_schema import to_avro_schema
from hudi_bucket.spark.context import TableContext

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Hudi's path for a null or empty partition value
KEY_COLUMNS = [PARTITION_PATH, RECORD_KEY]


def read_source(spark: Any, source: str, source_format: str) -> Any:
    """The dataset at ``source`` (parquet, csv with a header, or json), as a DataFrame."""
    reader = spark.read.format(source_format)
    if source_format == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(source)


def table_columns(ctx: TableContext, stored: Any, rows: Any) -> tuple[str, ...]:
    """The table's data columns, in its order. The dataset must have the same columns of the same types
    (nullability aside), as its live base files are read (``stored``, a StructType: see ``table_files``);
    in a table without any yet, as its recorded Avro schema has them (where Spark's byte, short and int
    are all Avro ``int``)."""
    if stored is not None:
        table = {f.name: f.dataType.simpleString() for f in stored.fields}
        incoming = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    else:
        recorded = latest_table_schema(ctx.storage, ctx.table)
        if recorded is None:
            return tuple(rows.columns)
        table = _avro_types(json.loads(recorded))
        incoming = _avro_types(to_avro_schema(rows.schema, ctx.table.name, for_commit=False))
    if table.keys() != incoming.keys():
        raise SourceSchemaError(
            f"the dataset's columns differ from the table's: missing {sorted(table.keys() - incoming.keys())}, "
            f"extra {sorted(incoming.keys() - table.keys())}"
        )
    differing = [f"{c} is {incoming[c]}, not {t}" for c, t in table.items() if incoming[c] != t]
    if differing:
        raise SourceSchemaError(
            f"the dataset's column types differ from the table's: {'; '.join(differing)}",
            hint="cast those columns to the table's types; type changes are not supported here",
        )
    return tuple(table)


def _avro_types(schema: dict[str, Any]) -> dict[str, str]:
    """Each data field's Avro type, nullability taken out, as text."""
    types = {f["name"]: _without_nulls(f["type"]) for f in schema["fields"] if f["name"] not in META_COLUMNS}
    return {name: t if isinstance(t, str) else json.dumps(t, sort_keys=True) for name, t in types.items()}


def _without_nulls(avro: Any) -> Any:
    """An Avro type without its ``null`` union branches and field defaults, at every depth."""
    if isinstance(avro, list):
        kept = [_without_nulls(t) for t in avro if t != "null"]
        return kept[0] if len(kept) == 1 else kept
    if isinstance(avro, dict):
        return {
            k: [_without_nulls(f) for f in v] if k == "fields" else _without_nulls(v)
            for k, v in avro.items()
            if k != "default"
        }
    return avro


def keyed_records(rows: Any, config: TableConfig, ordering_field: str, upsert: bool) -> Any:
    """The dataset with Hudi's record key and partition path, one record per key where Hudi combines
    duplicates first (the greatest ordering value wins)."""
    if ordering_field and (ordering_field,) != config.ordering_fields:
        raise TableMismatchError(
            f"--ordering-field {ordering_field}: the table orders records by "
            f"{list(config.ordering_fields) or 'commit time only'}",
            hint="leave --ordering-field out, or pass the table's own",
        )
    if upsert and merge_mode(config) == CUSTOM:
        raise UnsupportedTableError(
            "the table merges records with a custom payload class or merger, which we cannot run",
            hint="upsert with Hudi's own writer, or insert",
        )
    _refuse_keyless(rows, config.record_key_fields)
    keyed = rows.withColumn(RECORD_KEY, record_key_column(config)).withColumn(
        PARTITION_PATH, partition_path_column(config)
    )
    _refuse_raw_colons(keyed, config)
    if upsert or ordering_field:
        keyed = _deduplicate(keyed, config.ordering_fields)
    return keyed


def _refuse_keyless(rows: Any, keys: tuple[str, ...]) -> None:
    """Hudi's key generators refuse a record whose key fields are all null or empty."""
    from pyspark.sql import functions as F  # noqa: N812

    blank = reduce(operator.and_, (F.coalesce(F.col(k).cast("string"), F.lit("")) == "" for k in keys))
    if rows.filter(blank).limit(1).count():
        raise SourceSchemaError(
            f"the dataset has records whose record key ({', '.join(keys)}) is null or empty",
            hint="drop or fix those records: Hudi writes no record without a key",
        )


def _text(field: str) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    return F.col(field).cast("string")


def record_key_column(config: TableConfig) -> Any:
    """Hudi's record key of each row, as the table's key generator builds it from the record-key fields."""
    from pyspark.sql import functions as F  # noqa: N812

    keys = config.record_key_fields
    if len(keys) == 1 and config.key_generator_type != "COMPLEX":
        return _text(keys[0])
    return F.concat_ws(
        ",",
        *(
            F.concat(
                F.lit(f"{k}:"),
                F.when(_text(k).isNull(), NULL_PLACEHOLDER)
                .when(_text(k) == "", EMPTY_PLACEHOLDER)
                .otherwise(_text(k)),
            )
            for k in keys
        ),
    )


def partition_path_column(config: TableConfig) -> Any:
    """Hudi's partition path of each row, as a simple or complex key generator builds it (values
    escaped as Hive escapes path names when the table URL-encodes them)."""
    from pyspark.sql import functions as F  # noqa: N812

    encode = _escaped if config.url_encode_partitioning else (lambda value: value)
    segments = [
        F.concat(
            F.lit(f"{p}=" if config.hive_style_partitioning else ""),
            F.when(_text(p).isNull() | (_text(p) == ""), DEFAULT_PARTITION).otherwise(encode(_text(p))),
        )
        for p in config.partition_fields
    ]
    return F.concat_ws("/", *segments) if segments else F.lit("")


def _escaped(value: Any) -> Any:
    """``escape_path_name`` as a Spark expression: ``%`` first, so no escape is escaped again."""
    from pyspark.sql import functions as F  # noqa: N812

    for char in sorted(ESCAPED, key=lambda c: c != "%"):
        value = F.replace(value, F.lit(char), F.lit(escape_path_name(char)))
    return value


def _refuse_raw_colons(keyed: Any, config: TableConfig) -> None:
    """A table that does not URL-encode its partition paths cannot hold a value with a colon: Apache
    Hudi would fail to read that partition (see core.partition_paths)."""
    from pyspark.sql import functions as F  # noqa: N812

    if config.url_encode_partitioning or not config.partition_fields:
        return
    colon = reduce(
        operator.or_,
        (
            F.coalesce(F.instr(_text(f), NEEDS_URL_ENCODING) > 0, F.lit(False))
            for f in config.partition_fields
        ),
    )
    found = [r[0] for r in keyed.filter(colon).select(PARTITION_PATH).distinct().limit(3).collect()]
    if found:
        raise SourceSchemaError(
            f"partition value(s) with a colon, which Apache Hudi cannot read in a partition path: {found}",
            hint="create the table with --url-encode-partitions (Hudi's hoodie.datasource.write.partitionpath.urlencode)",
        )


def _deduplicate(rows: Any, ordering_fields: tuple[str, ...]) -> Any:
    """One record per key: the one with the greatest ordering values (any one without ordering fields)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    if not ordering_fields:
        return rows.dropDuplicates(KEY_COLUMNS)
    window = Window.partitionBy(*KEY_COLUMNS).orderBy(*(F.col(f).desc_nulls_last() for f in ordering_fields))
    return (
        rows.withColumn("__hbo_rank", F.row_number().over(window)).filter("__hbo_rank = 1").drop("__hbo_rank")
    )

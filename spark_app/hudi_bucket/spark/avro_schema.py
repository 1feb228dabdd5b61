"""A Spark schema as the Avro schema Hudi records for a table.

Hudi keeps the writer schema (data columns only, no ``_hoodie_*`` meta columns) in two forms, checked on
the fixtures and Hudi's ``AvroConversionUtils``:

- ``hoodie.table.create.schema`` in ``hoodie.properties``: Spark's ``SchemaConverters.toAvroType`` as is,
  a nullable type written ``[type, "null"]`` and no defaults;
- ``extraMetadata.schema`` of every commit: the same after ``getAvroSchemaWithDefaults``, every nullable
  union reordered to ``["null", type]`` and every nullable field given ``"default": null``.

Names follow Spark's converter: the top record is ``<table>_record`` in ``hoodie.<table>`` (the table name
sanitized as Hudi does); a nested record takes its field's name, in the namespace of its parent record's
full name; a decimal is a ``fixed`` named ``fixed`` in ``<parent record full name>.<field>``. Arrays and
maps pass their field's name and namespace on to their elements. Keys are laid out as Avro's
``Schema.toString`` writes them, so ``to_avro_json`` is the very string Hudi writes.

A Spark schema cannot tell every Avro type apart: a table written from Avro with an ``enum``, a
non-decimal ``fixed`` or ``timestamp-millis`` reads into Spark as string, binary or timestamp, and comes
back as ``string``, ``bytes`` or ``timestamp-micros``, just as Hudi's own Spark writer records it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    VarcharType,
)

from hudi_bucket.core.metafields import META_COLUMNS, OPERATION
from hudi_bucket.errors import UnsupportedTableError

# Never part of the recorded schema. ``_hoodie_is_deleted`` is not one of them: users write it.
_NOT_IN_SCHEMA = frozenset({*META_COLUMNS, OPERATION})

_PRIMITIVES: tuple[tuple[type[DataType], str], ...] = (
    (BooleanType, "boolean"),
    (ByteType, "int"),
    (ShortType, "int"),
    (IntegerType, "int"),
    (LongType, "long"),
    (FloatType, "float"),
    (DoubleType, "double"),
    (StringType, "string"),
    (CharType, "string"),
    (VarcharType, "string"),
    (BinaryType, "bytes"),
    (NullType, "null"),
)
_LOGICAL: tuple[tuple[type[DataType], dict[str, str]], ...] = (
    (DateType, {"type": "int", "logicalType": "date"}),
    (TimestampType, {"type": "long", "logicalType": "timestamp-micros"}),
    (TimestampNTZType, {"type": "long", "logicalType": "local-timestamp-micros"}),
)
_INVALID_FIRST_CHAR = re.compile(r"[^A-Za-z_]")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_]")


def to_avro_schema(struct_type: StructType, table_name: str, *, for_commit: bool) -> dict[str, Any]:
    """The table schema as Hudi records it: commit form (``extraMetadata.schema``) when ``for_commit``,
    else the ``hoodie.table.create.schema`` form. Meta columns are dropped."""
    name = avro_name(table_name)
    data = StructType([f for f in struct_type.fields if f.name not in _NOT_IN_SCHEMA])
    schema: dict[str, Any] = _to_avro(data, False, f"{name}_record", f"hoodie.{name}", for_commit)
    return schema


def to_avro_json(struct_type: StructType, table_name: str, *, for_commit: bool) -> str:
    """``to_avro_schema`` as the compact JSON Hudi writes (Avro's ``Schema.toString``)."""
    schema = to_avro_schema(struct_type, table_name, for_commit=for_commit)
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def avro_name(table_name: str) -> str:
    """The table name made a valid Avro name as Hudi does: an invalid first character, then every other
    invalid character, becomes ``__``."""
    if table_name[:1] and _INVALID_FIRST_CHAR.match(table_name[:1]):
        table_name = _INVALID_FIRST_CHAR.sub("__", table_name, count=1)
    return _INVALID_CHARS.sub("__", table_name)


def _to_avro(data_type: DataType, nullable: bool, name: str, namespace: str, for_commit: bool) -> Any:
    schema = _non_null(data_type, name, namespace, for_commit)
    if not nullable or isinstance(data_type, NullType):
        return schema
    return ["null", schema] if for_commit else [schema, "null"]


def _non_null(data_type: DataType, name: str, namespace: str, for_commit: bool) -> Any:
    for spark_type, avro in _PRIMITIVES:
        if isinstance(data_type, spark_type):
            return avro
    for spark_type, logical in _LOGICAL:
        if isinstance(data_type, spark_type):
            return dict(logical)
    if isinstance(data_type, DecimalType):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": _min_bytes_for_precision(data_type.precision),
            "logicalType": "decimal",
            "precision": data_type.precision,
            "scale": data_type.scale,
        }
    if isinstance(data_type, ArrayType):
        items = _to_avro(data_type.elementType, data_type.containsNull, name, namespace, for_commit)
        return {"type": "array", "items": items}
    if isinstance(data_type, MapType) and isinstance(data_type.keyType, StringType):
        values = _to_avro(data_type.valueType, data_type.valueContainsNull, name, namespace, for_commit)
        return {"type": "map", "values": values}
    if isinstance(data_type, StructType):
        return _record(data_type, name, namespace, for_commit)
    raise UnsupportedTableError(
        f"column {name}: Spark type {data_type.simpleString()} has no Avro form in Hudi",
        hint="Hudi tables hold primitives, decimals, dates, timestamps, arrays, string-keyed maps and structs",
    )


def _record(struct_type: StructType, name: str, namespace: str, for_commit: bool) -> dict[str, Any]:
    child_namespace = f"{namespace}.{name}"
    fields = []
    for field in struct_type.fields:
        field_type = _to_avro(field.dataType, field.nullable, field.name, child_namespace, for_commit)
        entry: dict[str, Any] = {"name": field.name, "type": field_type}
        if for_commit and isinstance(field_type, list):
            entry["default"] = None  # a null-first union: Hudi lets readers fill a missing column with null
        fields.append(entry)
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}


def _min_bytes_for_precision(precision: int) -> int:
    """The fewest bytes whose two's complement holds every unscaled value of ``precision`` digits."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


_FROM_PRIMITIVE: dict[str, DataType] = {
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "string": StringType(),
    "bytes": BinaryType(),
    "enum": StringType(),
    "fixed": BinaryType(),
    "null": NullType(),
}
_FROM_LOGICAL: dict[str, DataType] = {
    "date": DateType(),
    "timestamp-micros": TimestampType(),
    "timestamp-millis": TimestampType(),
    "local-timestamp-micros": TimestampNTZType(),
    "local-timestamp-millis": TimestampNTZType(),
}


def from_avro_schema(schema: dict[str, Any]) -> StructType:
    """The Spark schema a Hudi reader gives a recorded table schema (a record), as Spark's Avro converter
    reads it: every Avro union with null is a nullable column."""
    struct = _from_avro(schema)
    if not isinstance(struct, StructType):
        raise UnsupportedTableError(f"the table schema is not an Avro record: {json.dumps(schema)[:200]}")
    return struct


def _from_avro(avro: Any) -> DataType:
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise UnsupportedTableError(
                f"an Avro union of {branches} has no Spark type a Hudi table column could hold",
                hint="Hudi tables hold nullable single types",
            )
        return _from_avro(branches[0])
    if isinstance(avro, str):
        return _primitive(avro)
    logical = avro.get("logicalType")
    if logical == "decimal":
        return DecimalType(avro["precision"], avro.get("scale", 0))
    if logical in _FROM_LOGICAL:
        return _FROM_LOGICAL[logical]
    kind = avro["type"]
    if kind == "record":
        return StructType(
            [StructField(f["name"], _from_avro(f["type"]), _nullable(f["type"])) for f in avro["fields"]]
        )
    if kind == "array":
        return ArrayType(_from_avro(avro["items"]), _nullable(avro["items"]))
    if kind == "map":
        return MapType(StringType(), _from_avro(avro["values"]), _nullable(avro["values"]))
    return _primitive(kind) if isinstance(kind, str) else _from_avro(kind)


def _primitive(name: str) -> DataType:
    if name not in _FROM_PRIMITIVE:
        raise UnsupportedTableError(f"Avro type {name!r} has no Spark type here")
    return _FROM_PRIMITIVE[name]


def _nullable(avro: Any) -> bool:
    return isinstance(avro, list) and "null" in avro

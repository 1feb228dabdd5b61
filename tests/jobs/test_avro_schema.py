"""Spark schemas become exactly the Avro schemas Hudi records, in both the create and the commit form."""

from __future__ import annotations

import json

import fastavro
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hudi_bucket.errors import UnsupportedTableError
from hudi_bucket.hudi.fs_view import load_file_groups
from hudi_bucket.hudi.table import latest_table_schema, load_table
from hudi_bucket.spark.avro_schema import avro_name, to_avro_json, to_avro_schema
from hudi_bucket.storage import LocalStorage
from lib.paths import ALL_TABLES
from lib.written_tables import EMPTY, EMPTY_SCHEMA, WITH_DATA

EMPTY_TABLES = ("cow_v6_empty", "cow_v8_empty")
TABLES_WITH_DATA = [name for name in ALL_TABLES if name not in EMPTY_TABLES]

# Every type a Hudi table can hold, nested the ways Hudi names differently.
RICH = StructType(
    [
        StructField("_hoodie_commit_time", StringType()),
        StructField("_hoodie_record_key", StringType()),
        StructField("id", LongType(), nullable=False),
        StructField("flag", BooleanType()),
        StructField("tiny", ByteType()),
        StructField("small", ShortType()),
        StructField("num", IntegerType()),
        StructField("ratio", FloatType()),
        StructField("score", DoubleType()),
        StructField("price", DecimalType(38, 10)),
        StructField("day", DateType()),
        StructField("at", TimestampType()),
        StructField("local_at", TimestampNTZType()),
        StructField("blob", BinaryType()),
        StructField("tags", ArrayType(StringType(), containsNull=False)),
        StructField("matrix", ArrayType(ArrayType(DecimalType(5, 2)))),
        StructField("attrs", MapType(StringType(), StructType([StructField("v", IntegerType())]))),
        StructField(
            "nested",
            StructType(
                [
                    StructField("amount", DecimalType(9, 2), nullable=False),
                    StructField("inner", StructType([StructField("deep", StringType())])),
                ]
            ),
        ),
        StructField("_hoodie_is_deleted", BooleanType()),
    ]
)


def live_base_files(storage: LocalStorage) -> list[str]:
    groups = load_file_groups(storage, load_table(storage))
    return [
        f"{storage.uri}/{g.latest_base_file.path}" for gs in groups.values() for g in gs if g.latest_base_file
    ]


@pytest.mark.spark
@pytest.mark.parametrize("name", TABLES_WITH_DATA)
def test_the_schema_spark_reads_is_the_one_hudi_recorded(spark, fixture_table, name: str) -> None:
    storage = LocalStorage(fixture_table(name))
    table = load_table(storage)
    struct = spark.read.parquet(*live_base_files(storage)).schema
    assert struct.fieldNames()[0] == "_hoodie_commit_time"  # meta columns are there to be dropped

    create_json = to_avro_json(struct, table.name, for_commit=False)
    commit_json = to_avro_json(struct, table.name, for_commit=True)

    assert json.loads(create_json) == json.loads(table.config.create_schema or "")
    assert json.loads(commit_json) == json.loads(latest_table_schema(storage, table) or "")
    # Byte for byte, too: key order and compact separators are those of Avro's Schema.toString.
    assert create_json == table.config.create_schema
    assert commit_json == latest_table_schema(storage, table)


@pytest.mark.parametrize("name", WITH_DATA)
def test_the_schema_spark_reads_is_the_one_hudi_records_in_the_tables_it_writes(
    spark, written_table, name: str
) -> None:
    storage = LocalStorage(written_table(name))
    table = load_table(storage)
    struct = spark.read.parquet(*live_base_files(storage)).schema

    assert to_avro_json(struct, table.name, for_commit=True) == latest_table_schema(storage, table)
    if table.config.create_schema is not None:  # Hudi's SQL records it; its Spark writer may not
        assert to_avro_json(struct, table.name, for_commit=False) == table.config.create_schema


@pytest.mark.parametrize("name", EMPTY)
def test_the_create_schema_hudi_records_for_an_empty_table_it_creates(
    spark, written_table, name: str
) -> None:
    storage = LocalStorage(written_table(name))
    table = load_table(storage)
    assert live_base_files(storage) == []
    struct = spark.createDataFrame([], EMPTY_SCHEMA).schema
    # Hudi 1.2's SQL records its create schema in the shape of a commit's (null first, with defaults), where
    # earlier releases recorded the shape ours has (test_an_empty_tables_create_schema).
    assert to_avro_json(struct, table.name, for_commit=True) == table.config.create_schema


@pytest.mark.parametrize("name", EMPTY_TABLES)
def test_an_empty_tables_create_schema(fixture_table, name: str) -> None:
    storage = LocalStorage(fixture_table(name))
    table = load_table(storage)
    assert live_base_files(storage) == []  # no data to read: the Spark schema is the one it was made from
    struct = StructType(
        [
            StructField("id", IntegerType()),
            StructField("name", StringType()),
            StructField("isActive", BooleanType()),
        ]
    )
    assert to_avro_json(struct, table.name, for_commit=False) == table.config.create_schema


def test_meta_columns_are_dropped_but_the_soft_delete_column_is_data() -> None:
    fields = [f["name"] for f in to_avro_schema(RICH, "t", for_commit=True)["fields"]]
    assert fields[0] == "id"
    assert "_hoodie_commit_time" not in fields
    assert fields[-1] == "_hoodie_is_deleted"


def test_nullability_shapes_unions_and_defaults() -> None:
    create = {f["name"]: f for f in to_avro_schema(RICH, "t", for_commit=False)["fields"]}
    commit = {f["name"]: f for f in to_avro_schema(RICH, "t", for_commit=True)["fields"]}
    assert create["id"] == commit["id"] == {"name": "id", "type": "long"}
    assert create["flag"] == {"name": "flag", "type": ["boolean", "null"]}
    assert commit["flag"] == {"name": "flag", "type": ["null", "boolean"], "default": None}
    # An array of non-null items has plain items; union items carry no default (they are no field).
    assert commit["tags"]["type"] == ["null", {"type": "array", "items": "string"}]
    assert commit["matrix"]["type"][1]["items"][0] == "null"


def test_logical_types() -> None:
    commit = {f["name"]: f["type"][1] for f in to_avro_schema(RICH, "t", for_commit=True)["fields"][1:]}
    assert commit["tiny"] == commit["small"] == commit["num"] == "int"
    assert commit["day"] == {"type": "int", "logicalType": "date"}
    assert commit["at"] == {"type": "long", "logicalType": "timestamp-micros"}
    assert commit["local_at"] == {"type": "long", "logicalType": "local-timestamp-micros"}
    assert commit["blob"] == "bytes"


def test_nested_records_and_decimals_are_named_by_their_path() -> None:
    schema = to_avro_schema(RICH, "t", for_commit=False)
    assert (schema["name"], schema["namespace"]) == ("t_record", "hoodie.t")
    fields = {f["name"]: f["type"][0] for f in schema["fields"][1:]}
    assert fields["price"]["name"] == "fixed"
    assert fields["price"]["namespace"] == "hoodie.t.t_record.price"
    assert fields["price"]["size"] == 16
    # Array and map elements keep their field's name and namespace, at any depth.
    assert fields["matrix"]["items"][0]["items"][0]["namespace"] == "hoodie.t.t_record.matrix"
    assert fields["attrs"]["values"][0]["name"] == "attrs"
    assert fields["attrs"]["values"][0]["namespace"] == "hoodie.t.t_record"
    nested = fields["nested"]
    assert (nested["name"], nested["namespace"]) == ("nested", "hoodie.t.t_record")
    amount, inner = nested["fields"]
    assert amount["type"]["namespace"] == "hoodie.t.t_record.nested.amount"
    assert inner["type"][0]["namespace"] == "hoodie.t.t_record.nested"


@pytest.mark.parametrize(
    ("precision", "size"), [(1, 1), (2, 1), (3, 2), (9, 4), (10, 5), (15, 7), (18, 8), (19, 9), (38, 16)]
)
def test_decimal_fixed_size_is_the_fewest_bytes_for_the_precision(precision: int, size: int) -> None:
    struct = StructType([StructField("d", DecimalType(precision, 0), nullable=False)])
    assert to_avro_schema(struct, "t", for_commit=True)["fields"][0]["type"]["size"] == size


@pytest.mark.parametrize(
    ("table_name", "avro"),
    [("trips", "trips"), ("my-table.v2", "my__table__v2"), ("2024_sales", "__024_sales"), ("ü", "__")],
)
def test_table_names_are_sanitized_as_hudi_does(table_name: str, avro: str) -> None:
    assert avro_name(table_name) == avro
    schema = to_avro_schema(StructType([StructField("a", StringType())]), table_name, for_commit=False)
    assert (schema["name"], schema["namespace"]) == (f"{avro}_record", f"hoodie.{avro}")


@pytest.mark.parametrize("for_commit", [False, True])
def test_every_form_is_a_valid_avro_schema(for_commit: bool) -> None:
    fastavro.parse_schema(to_avro_schema(RICH, "t", for_commit=for_commit))


@pytest.mark.spark
@pytest.mark.parametrize("for_commit", [False, True])
def test_avro_itself_writes_our_json_unchanged(jvm, for_commit: bool) -> None:
    ours = to_avro_json(RICH, "t", for_commit=for_commit)
    assert jvm.org.apache.avro.Schema.Parser().parse(ours).toString() == ours


@pytest.mark.parametrize(
    "unsupported",
    [MapType(IntegerType(), StringType()), DayTimeIntervalType()],
)
def test_types_hudi_cannot_hold_are_refused(unsupported: object) -> None:
    struct = StructType([StructField("bad", unsupported)])  # type: ignore[arg-type]
    with pytest.raises(UnsupportedTableError, match="column bad"):
        to_avro_schema(struct, "t", for_commit=True)

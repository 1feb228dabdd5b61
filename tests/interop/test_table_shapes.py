"""Every table Hudi wrote that `apply --convert` must lay out in buckets: the copy-on-write fixture
tables, and shapes written here by Apache Hudi: virtual keys (no meta fields, simple and complex keys),
a timestamp key generator, each also MERGE_ON_READ with updates in log files, and base files that
disagree on a column's type (an evolved schema). After
the rescale Hudi and hudi-rs read the rows they read before and `verify` passes; on the shapes, Hudi then
upserts with the writer options our report prints, leaving one record per key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.contract.requests import ApplyOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.spark.context import TableContext
from lib.bucket_tables import verified
from lib.hudi_spark import data_rows, hudi_read, hudi_rs_rows, hudi_write
from lib.paths import ALL_TABLES

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, day string, ts long"
BEFORE_ADOPTION = {"hoodie.metadata.enable": "false"}  # a live metadata table is refused (tested elsewhere)
VIRTUAL_KEYS = {
    "hoodie.populate.meta.fields": "false",
    "hoodie.datasource.write.hive_style_partitioning": "true",
}
DAY_1 = 1_763_000_000_000  # 2025-11-13 in epoch milliseconds


def _rows(spark: Any, ids: range, tag: str, schema: str = SCHEMA) -> Any:
    return spark.createDataFrame([(i, f"{tag}{i}", f"d{i % 3}", i) for i in ids], schema)


Written = tuple[dict[str, str], Any]
"""The options Hudi wrote a table with, and the rows of its last write."""


def virtual_keys(
    spark: Any, path: Path, version: int, key: str, generator: str, table: Mapping[str, str] = {}
) -> Written:
    options = {
        **BEFORE_ADOPTION,
        **table,
        **VIRTUAL_KEYS,
        "hoodie.datasource.write.recordkey.field": key,
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.keygenerator.type": generator,
        "hoodie.write.table.version": str(version),
    }
    hudi_write(spark, path, _rows(spark, range(30), "a"), options)
    last = _rows(spark, range(20, 40), "a")  # same keys: updates, and inserts
    hudi_write(spark, path, last, options)
    return options, last


def timestamp_keys(spark: Any, path: Path, table: Mapping[str, str] = {}) -> Written:
    options = {
        **BEFORE_ADOPTION,
        **table,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "ts_millis",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
        "hoodie.keygen.timebased.timezone": "UTC",
        "hoodie.write.table.version": "9",
    }
    schema = "id int, name string, ts_millis long, ts long"
    rows = [(i, f"a{i}", DAY_1 + (i % 3) * 86_400_000, i) for i in range(30)]
    hudi_write(spark, path, spark.createDataFrame(rows, schema), options)
    last = spark.createDataFrame(rows[20:], schema)
    hudi_write(spark, path, last, options)
    return options, last


def evolved_schema(spark: Any, path: Path) -> Written:
    """Partition d0 keeps files of the first schema (qty int, price float, no note); the second write
    widens both and adds a column in d1 and d2."""
    options = {
        **BEFORE_ADOPTION,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.write.table.version": "9",
    }
    first = [(i, f"d{i % 3}", i, i, 1.5) for i in range(30)]
    hudi_write(
        spark,
        path,
        spark.createDataFrame(first, "id int, day string, ts long, qty int, price float"),
        options,
    )
    second = [(i, f"d{1 + i % 2}", 100 + i, 2**40 + i, 2.25, "n") for i in range(25, 40)]
    schema = "id int, day string, ts long, qty long, price double, note string"
    last = spark.createDataFrame(second, schema)
    hudi_write(spark, path, last, options)
    return options, last


# The second write's updates stay in log files (a small base file would take them otherwise).
MERGE_ON_READ = {
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.compact.inline": "false",
}
SHAPES = {
    "virtual-keys-simple-v6": lambda spark, path: virtual_keys(spark, path, 6, "id", "SIMPLE"),
    "virtual-keys-complex-v8": lambda spark, path: virtual_keys(spark, path, 8, "id,name", "COMPLEX"),
    "timestamp-keygen-v9": timestamp_keys,
    "evolved-schema-v9": evolved_schema,
    "mor-virtual-keys-simple-v6": lambda spark, path: virtual_keys(
        spark, path, 6, "id", "SIMPLE", MERGE_ON_READ
    ),
    "mor-virtual-keys-complex-v8": lambda spark, path: virtual_keys(
        spark, path, 8, "id,name", "COMPLEX", MERGE_ON_READ
    ),
    "mor-timestamp-keygen-v9": lambda spark, path: timestamp_keys(spark, path, MERGE_ON_READ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_hudi_written_shapes_convert_and_read_back_alike(spark: Any, tmp_path: Path, shape: str) -> None:
    root = tmp_path / shape
    options, last = SHAPES[shape](spark, root)
    logs = [p for p in root.rglob(".*.log.*") if not p.name.endswith(".crc")]
    assert bool(logs) == shape.startswith("mor-")  # MERGE_ON_READ: updates in log files
    before, before_rs = data_rows(hudi_read(spark, root)), hudi_rs_rows(root)

    ctx = TableContext.open(spark, str(root))
    result = apply(ctx, ApplyOptions(BucketRules.parse("d1|2025-11-14,3", 2), convert=True))

    assert result.instant is not None
    assert data_rows(hudi_read(spark, root)) == before
    assert hudi_rs_rows(root) == before_rs  # hudi-rs types a timestamp-keygen partition column as stored
    assert verified(ctx)

    # Hudi upserts the last batch again with the writer options our report prints: every key must reach
    # the file group that holds it, or it would be there twice.
    hudi_write(spark, root, last, {**options, **result.writer_options})
    assert len(data_rows(hudi_read(spark, root))) == len(before)


COW_FIXTURES = [name for name in ALL_TABLES if name.startswith("cow_")]


@pytest.mark.parametrize("name", COW_FIXTURES)
def test_every_fixture_table_converts_and_reads_back_alike(spark: Any, fixture_table: Any, name: str) -> None:
    root = fixture_table(name)
    before, before_rs = data_rows(hudi_read(spark, root)), hudi_rs_rows(root)
    ctx = TableContext.open(spark, str(root))
    apply(ctx, ApplyOptions(BucketRules.parse("1|eu,3", 2), convert=True, disable_metadata_table=True))
    assert data_rows(hudi_read(spark, root)) == before
    assert hudi_rs_rows(root) == before_rs

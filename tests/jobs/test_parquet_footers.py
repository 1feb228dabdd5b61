"""A Parquet file's schema and rows as the driver reads them from its footer are what Spark's reader
reports: the same schema ``spark.read.parquet`` infers, the same count, for files Spark and Hudi wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.spark.parquet_footers import file_rows, file_schema

pytestmark = pytest.mark.spark

ROWS = """
SELECT
  CAST(id AS BYTE) AS b, CAST(id AS SHORT) AS s, CAST(id AS INT) AS i, id AS l,
  CAST(id AS FLOAT) AS f, CAST(id AS DOUBLE) AS d, CAST(id AS DECIMAL(9, 2)) AS small_decimal,
  CAST(id AS DECIMAL(30, 4)) AS big_decimal, CAST(id AS STRING) AS text, id % 2 = 0 AS flag,
  CAST(CAST(id AS STRING) AS BINARY) AS bytes, DATE'2025-11-11' AS day,
  TIMESTAMP'2025-11-11 10:00:00' AS at, TIMESTAMP_NTZ'2025-11-11 10:00:00' AS local_at,
  ARRAY(id, NULL) AS numbers, MAP(CAST(id AS STRING), ARRAY(id)) AS lookup,
  NAMED_STRUCT('x', id, 'inner', NAMED_STRUCT('y', CAST(id AS STRING))) AS nested
FROM RANGE(5)
"""


def only_file(folder: Path) -> str:
    [file] = folder.glob("*.parquet")
    return f"file:{file}"


@pytest.mark.parametrize("legacy", [False, True], ids=["standard", "legacy-layout"])
def test_a_spark_written_file_reads_back_as_spark_reads_it(spark: Any, tmp_path: Path, legacy: bool) -> None:
    spark.conf.set("spark.sql.parquet.writeLegacyFormat", str(legacy).lower())
    try:
        spark.sql(ROWS).coalesce(1).write.parquet(str(tmp_path / "out"))
    finally:
        spark.conf.unset("spark.sql.parquet.writeLegacyFormat")
    uri = only_file(tmp_path / "out")
    assert file_schema(spark, uri) == spark.read.parquet(uri).schema
    assert file_rows(spark, uri) == 5


def test_a_file_without_spark_s_schema_converts_as_spark_converts_it(spark: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "key": ["a", "b", None],
            "amount": pa.array([1, 2, 3], pa.int16()),
            "tags": [["x"], [], None],
            "point": [{"x": 1.0}, None, {"x": 2.0}],
        }
    )
    pq.write_table(table, tmp_path / "arrow.parquet", row_group_size=2)
    uri = f"file:{tmp_path / 'arrow.parquet'}"
    assert file_schema(spark, uri) == spark.read.parquet(uri).schema
    assert file_rows(spark, uri) == 3

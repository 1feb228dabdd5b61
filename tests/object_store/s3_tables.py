"""Reading and running things against tables on the test S3 server: the CLI in-process, and the rows
as hudi-rs and Apache Hudi read them."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runs import run
from hudi_rs import snapshot
from object_store.server import S3Server

from hudi_bucket.core.metafields import META_COLUMNS


def ok(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """The report of a run that must succeed."""
    result = run(capsys, *argv)
    assert result.code == 0, result.err
    return result.report


def put_parquet(s3: S3Server, key: str, rows: list[dict[str, Any]]) -> str:
    """A Parquet dataset of ``rows`` at ``key``; returns its ``s3a://`` URI."""
    pq.write_table(
        pa.Table.from_pylist(rows), f"{s3.bucket}/{key}/part-0.parquet", filesystem=s3.filesystem()
    )
    return s3.uri(key)


def _data_rows(columns: list[str], rows: list[dict[str, Any]]) -> list[tuple]:
    data = sorted(c for c in columns if c not in META_COLUMNS)
    return sorted((tuple(r[c] for c in data) for r in rows), key=repr)


def hudi_rs_rows(s3: S3Server, uri: str) -> list[tuple]:
    """The rows hudi-rs reads straight from S3, data columns sorted by name, in a stable order."""
    rows = snapshot(uri, s3.storage_options())
    return _data_rows(rows.column_names, rows.to_pylist())


def hudi_spark_rows(spark: Any, uri: str) -> list[tuple]:
    """The rows Apache Hudi's Spark datasource reads through S3A, laid out as ``hudi_rs_rows``."""
    frame = spark.read.format("hudi").load(uri)
    return _data_rows(frame.columns, [r.asDict() for r in frame.collect()])


def expected_rows(rows: list[dict[str, Any]]) -> list[tuple]:
    return _data_rows(list(rows[0]), rows)

"""Every job command on an ``s3a://`` table, on a real S3 server: the table's whole life, from creation
to rollback, with its rows read back by hudi-rs and by Apache Hudi after each change."""

from __future__ import annotations

from typing import Any

import pytest
from object_store.s3_tables import expected_rows, hudi_rs_rows, hudi_spark_rows, ok, put_parquet
from object_store.server import S3Server

from lib.cli_runs import run

DAYS = ["2025-11-10", "2025-11-11", "2025-11-12"]
WRITE = ["--record-key", "id", "--partition-field", "day", "--ordering-field", "ts"]


def orders(ids: range, ts: int) -> list[dict[str, Any]]:
    return [{"id": i, "day": DAYS[i % 3], "amount": float(i * ts), "ts": ts} for i in ids]


def rules(busy: int) -> list[str]:
    return ["--expressions", f"day=2025-11-11,{busy}", "--default", "2"]


def assert_readers_see(spark: Any, s3: S3Server, table: str, rows: list[dict[str, Any]]) -> None:
    expected = expected_rows(rows)
    assert hudi_rs_rows(s3, table) == expected
    assert hudi_spark_rows(spark, table) == expected


def test_every_command_works_on_an_s3a_table(
    spark: Any, s3: S3Server, s3_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = s3.uri(f"{s3_prefix}/orders")
    first = orders(range(60), ts=1)

    created = ok(
        capsys, "write", "--table", table, "--source", put_parquet(s3, f"{s3_prefix}/in-1", first),
        *WRITE, "--create", "--hive-style", *rules(4),
    )  # fmt: skip
    assert (created["result"]["created"], created["result"]["rowsWritten"]) == (True, 60)
    assert_readers_see(spark, s3, table, first)

    update = orders(range(40, 80), ts=2)
    ok(capsys, "write", "--table", table, "--source", put_parquet(s3, f"{s3_prefix}/in-2", update), *WRITE)
    current = {r["id"]: r for r in first} | {r["id"]: r for r in update}
    assert_readers_see(spark, s3, table, list(current.values()))

    shown = ok(capsys, "show", "--table", table, "--format", "json")
    assert shown["outcome"] == "Succeeded"

    planned = ok(capsys, "plan", "--table", table, *rules(8))
    plan_id = planned["result"]["plan"]["id"]

    doubled = ok(capsys, "apply", "--table", table, *rules(8), "--approved-plan", plan_id)
    assert doubled["outcome"] == "Succeeded"
    assert doubled["result"]["shuffleFree"] is True  # 4 -> 8: each bucket splits in two
    assert_readers_see(spark, s3, table, list(current.values()))
    assert ok(capsys, "verify", "--table", table)["result"]["ok"] is True

    reshuffled = ok(capsys, "apply", "--table", table, *rules(3), "--full-shuffle")
    assert reshuffled["result"]["shuffleFree"] is False
    instant = reshuffled["result"]["instant"]
    assert_readers_see(spark, s3, table, list(current.values()))
    assert ok(capsys, "verify", "--table", table)["result"]["ok"] is True

    rolled_back = run(capsys, "rollback", "--table", table, "--instant", instant)
    assert rolled_back.code == 0, rolled_back.err
    assert_readers_see(spark, s3, table, list(current.values()))
    assert ok(capsys, "verify", "--table", table)["result"]["ok"] is True
    assert ok(capsys, "plan", "--table", table, *rules(8))["result"]["plan"]["noop"] is True  # 8 again

"""A table Hudi's ``insert`` wrote may hold one key twice in a partition (two file groups). Converting it
to a bucket index makes it primary-keyed: `plan` counts those keys and says so, `apply` keeps the copy
Hudi's merge keeps (the greater ordering value) and reports how many it resolved, or with
`--keep-duplicates` carries every copy over, as asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lib.cli_runs import run
from lib.hudi_spark import hudi_read, hudi_write

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, day string, ts long"
OPTIONS = {
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "day",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.metadata.enable": "false",
    "hoodie.parquet.small.file.limit": "0",  # each insert writes new file groups
}


@pytest.fixture
def inserted_twice(spark: Any, tmp_path: Path) -> Path:
    """Ids 0..59 over two days; then ids 50..69 inserted again with a greater ``ts``: ids 50..59 are held
    twice, by two file groups of their partition."""
    root = tmp_path / "inserted"
    first = [(i, f"first{i}", f"2025-11-1{i % 2}", 1) for i in range(60)]
    again = [(i, f"again{i}", f"2025-11-1{i % 2}", 2) for i in range(50, 70)]
    hudi_write(spark, root, spark.createDataFrame(first, SCHEMA), OPTIONS, operation="insert")
    hudi_write(spark, root, spark.createDataFrame(again, SCHEMA), OPTIONS, operation="insert")
    assert hudi_read(spark, root).count() == 80
    return root


def names_by_id(spark: Any, root: Path) -> list[tuple[int, str]]:
    return sorted((r.id, r.name) for r in hudi_read(spark, root).select("id", "name").collect())


def test_a_conversion_keeps_the_copy_hudis_merge_keeps_and_the_plan_counts_them(
    spark: Any, capsys: pytest.CaptureFixture[str], inserted_twice: Path
) -> None:
    rules = ("--table", str(inserted_twice), "--expressions", "11-10,4", "--default", "2", "--convert")
    planned = run(capsys, "plan", *rules)
    assert planned.code == 0, planned.out
    assert planned.report["result"]["plan"]["duplicateKeys"] == 10
    assert "10 key(s) found more than once (one copy kept)" in planned.report["message"]
    counted = {c["partition"]: c["duplicateKeys"] for c in planned.report["result"]["plan"]["changes"]}
    assert counted == {"day=2025-11-10": 5, "day=2025-11-11": 5}

    applied = run(capsys, "apply", *rules)
    assert applied.code == 0, applied.out
    assert applied.report["result"]["duplicatesResolved"] == 10
    assert "10 key(s) found more than once kept one copy" in applied.report["message"]
    expected = [(i, f"again{i}" if i >= 50 else f"first{i}") for i in range(70)]
    assert names_by_id(spark, inserted_twice) == expected


def test_keep_duplicates_carries_every_copy_over(
    spark: Any, capsys: pytest.CaptureFixture[str], inserted_twice: Path
) -> None:
    before = names_by_id(spark, inserted_twice)
    rules = ("--table", str(inserted_twice), "--expressions", "11-10,4", "--default", "2", "--convert")
    planned = run(capsys, "plan", *rules, "--keep-duplicates")
    assert (
        "10 key(s) found more than once (every copy kept, as --keep-duplicates asks)"
        in planned.report["message"]
    )

    applied = run(capsys, "apply", *rules, "--keep-duplicates")
    assert applied.code == 0, applied.out
    assert applied.report["result"]["duplicatesResolved"] == 0
    assert names_by_id(spark, inserted_twice) == before

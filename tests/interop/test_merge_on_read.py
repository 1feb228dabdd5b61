"""MERGE_ON_READ tables written by Apache Hudi, with log files: `show` lists each bucket's base file and
log files as Hudi's file slices hold them (hudi-rs the judge)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_runs import run
from hudi_rs import latest_file_slices

from hudi_tables import MERGE_ON_READ, write_hudi_bucket_table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def mor_template(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Hudi's MERGE_ON_READ bucket table (version 9): written, given rules, upserted into log files."""
    root = tmp_path_factory.mktemp("mor") / "orders_mor"
    write_hudi_bucket_table(spark, root, 9, MERGE_ON_READ)
    return root


@pytest.fixture
def mor_table(mor_template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "orders_mor"
    shutil.copytree(mor_template, root)
    return root


def test_show_lists_each_buckets_latest_base_file_and_log_files(
    capsys: pytest.CaptureFixture[str], mor_table: Path
) -> None:
    shown = run(capsys, "show", "--table", str(mor_table), "--format=json")

    partitions = shown.report["result"]["partitions"]
    slices = [(p["partition"], s) for p in partitions for s in p["fileSlices"]]
    listed = {
        (partition, s["fileId"]): (
            s["baseFile"]["name"] if s["baseFile"] else "",
            [f["name"] for f in s["logFiles"]],
        )
        for partition, s in slices
    }
    assert listed == latest_file_slices(mor_table)
    assert sum(len(logs) for _, logs in listed.values()) >= 4, "the upsert wrote log files"
    for partition, s in slices:
        assert s["bucket"] == int(s["fileId"][:8])
        assert s["baseFile"]["rows"] > 0
        for f in [s["baseFile"], *s["logFiles"]]:
            assert f["size"] == (mor_table / partition / f["name"]).stat().st_size

    text = run(capsys, "show", "--table", str(mor_table))
    assert (text.code, text.err) == (0, "")
    for _, s in slices:
        assert f"{s['bucket']}  {s['baseFile']['name']}" in text.out
        assert all(f"+ {f['name']}" in text.out for f in s["logFiles"])

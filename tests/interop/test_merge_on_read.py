"""MERGE_ON_READ tables written by Apache Hudi, with log files: `show` lists each bucket's base file and
log files as Hudi's file slices hold them (hudi-rs the judge), and `verify` reads the log files' records
through Hudi (its bundle on the session) and finds those a writer put in another bucket's file group;
without the bundle it says it did not read them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.verify import verify, verify_table
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, ApplyOptions, RescaleOptions
from hudi_bucket.core.buckets import record_key_bucket_id
from hudi_bucket.core.planning import ChangeReason
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.planning import plan
from hudi_bucket.spark.context import TableContext
from lib.bucket_tables import live_groups
from lib.cli_runs import run
from lib.hudi_rs import latest_file_slices
from lib.hudi_spark import bucket_options, data_rows, hudi_read, hudi_write
from lib.hudi_tables import MERGE_ON_READ, HudiBucketTables, day_of, one_record_per_key, records

pytestmark = pytest.mark.spark


@pytest.fixture
def mor_table(hudi_tables: HudiBucketTables, tmp_path: Path) -> Path:
    """Hudi's MERGE_ON_READ bucket table (version 9): written, given rules, upserted into log files."""
    root = tmp_path / "orders_mor"
    hudi_tables.copy(root, 9, MERGE_ON_READ)
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


def test_verify_reads_the_log_records_of_a_clean_table(spark: Any, mor_table: Path) -> None:
    result = verify(TableContext.open(spark, str(mor_table)))

    assert result.ok
    assert result.unread_log_files == 0
    bases = [
        g.latest_base_file.path for gs in live_groups(mor_table).values() for g in gs if g.latest_base_file
    ]
    base_rows = spark.read.parquet(*(str(mor_table / path) for path in bases)).count()
    assert result.checked_rows > base_rows  # the upsert's records, read from the log files


UPSERTED = range(20, 60)


def misplaced_by_a_writer(spark: Any, root: Path) -> Path:
    """Hudi writes a plain bucket table of 2 buckets, then a writer set to 3 buckets upserts it: keys of
    its buckets 0 and 1 go to the log files of those file groups, whatever their bucket under 2."""
    options = bucket_options(
        record_key="id",
        partition_field="day",
        ordering_field="ts",
        table_version=9,
        buckets=2,
        **MERGE_ON_READ,
    )
    hudi_write(spark, root, records(spark, range(40), 1), options)
    hudi_write(spark, root, records(spark, UPSERTED, 2), {**options, "hoodie.bucket.index.num.buckets": "3"})
    return root


def test_verify_finds_log_records_a_writer_put_in_another_buckets_file_group(
    spark: Any, tmp_path: Path
) -> None:
    root = misplaced_by_a_writer(spark, tmp_path / "orders_mor_3")
    upserted = UPSERTED
    ctx = TableContext.open(spark, str(root))

    result = verify_table(
        spark,
        ctx.storage,
        ctx.table,
        rules_for_partition=lambda _: 2,
        hash_fields=(),
        key_style=ctx.key_style,
    )

    in_logs = [v for v in result.violations if "log records" in v.detail]
    caught = {(v.partition, int(v.file_id[:8])): v.count for v in in_logs}
    expected: dict[tuple[str, int], int] = {}
    for key in map(str, upserted):
        under_3, under_2 = record_key_bucket_id(key, (), 3), record_key_bucket_id(key, (), 2)
        if under_3 < 2 and under_3 != under_2:
            where = (f"day={day_of(int(key))}", under_3)
            expected[where] = expected.get(where, 0) + 1
    assert expected, "the writer misplaced some records into log files"
    assert caught == expected
    assert {v.kind.value for v in in_logs} == {"misplaced-records"}
    assert result.unread_log_files == 0


def test_without_hudis_bundle_verify_says_it_did_not_read_the_log_files(mor_table: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k != HUDI_BUNDLE_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "hudi_bucket", "verify", "--table", str(mor_table)],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    unread = report["result"]["unreadLogFiles"]
    assert unread == len([f for f in mor_table.glob("day=*/.*.log.*") if not f.name.endswith(".crc")])
    assert f"the records of {unread} log file(s) were not read" in report["message"]


def test_log_records_in_another_buckets_file_group_are_repaired_by_native_and_the_table_stays_merge_on_read(
    spark: Any, tmp_path: Path
) -> None:
    root = misplaced_by_a_writer(spark, tmp_path / "orders_mor_3")
    # Hudi reads both copies of a misplaced key (the base file's and the log's); the repair keeps the
    # one Hudi's merge keeps, the later ts. Columns sorted: day, id, name, ts.
    latest: dict[Any, tuple] = {}
    for row in data_rows(hudi_read(spark, root)):
        if row[1] not in latest or row[3] > latest[row[1]][3]:
            latest[row[1]] = row
    expected = sorted(latest.values(), key=repr)
    ctx = TableContext.open(spark, str(root))
    rules = BucketRules.parse("^none$,2", 2)
    checked, _ = plan(ctx, RescaleOptions(rules, check_records=True, current_buckets=2))
    assert {c.reason for c in checked.changes} == {ChangeReason.REPAIR}

    result = apply(
        ctx.reload(),
        ApplyOptions(rules, check_records=True, current_buckets=2, approved_plan=checked.plan_id),
    )

    assert result.instant is not None
    assert result.partitions_repaired == len(checked.changes)
    assert verify(ctx.reload()).ok
    assert ctx.reload().table.is_merge_on_read
    assert one_record_per_key(spark, root) == expected

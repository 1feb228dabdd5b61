"""The `hudi-bucket-job` contract: exit 0 with a JSON report when done, 1 with one stderr line saying what
is wrong and what to do (and nothing in the table changed), 2 for bad usage; `--report` always writes
the report."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, JVM_FAILURE_HINT, main
from hudi_bucket.commands.write import write
from hudi_bucket.contract.reports import JobReport, Outcome, PlanResult
from hudi_bucket.contract.requests import JobKind, WriteOptions
from hudi_bucket.spark import metadata_writer
from lib.cli_runs import run
from lib.hudi_rs import REWRITTEN, records

pytestmark = pytest.mark.spark

MakeTable = Callable[[str], Path]
V8 = "cow_v8"  # Hudi wrote it (written_tables): partitions 10, 20, 30; not bucket-indexed, no metadata table
RULES = ["--expressions", "^10$,4", "--default", "2"]


@pytest.fixture(autouse=True)
def quiet_spark(spark: Any) -> Iterator[None]:
    """``main`` builds its session through getOrCreate, so it gets the shared one (and sets its log
    level to WARN): put the test suite's level back afterwards."""
    yield
    spark.sparkContext.setLogLevel("ERROR")


def listing(root: Path) -> dict[str, str | None]:
    """Every folder and file below ``root`` with a digest of its bytes: equal listings, unchanged table."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize(
    "argv",
    [["show", "--format=json"], ["plan", *RULES, "--convert"]],
    ids=["show", "plan"],
)
def test_show_and_plan_print_a_succeeded_report(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable, argv: list[str]
) -> None:
    root = written_table(V8)
    before = listing(root)

    result = run(capsys, argv[0], "--table", str(root), *argv[1:])

    assert (result.code, result.err) == (EXIT_OK, "")
    assert result.report["command"] == argv[0]
    assert result.report["outcome"] == "Succeeded"
    assert result.report["result"]
    assert listing(root) == before  # neither writes


def test_show_prints_each_partitions_sizes_and_what_sizing_would_propose(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable
) -> None:
    root = written_table(V8)

    shown = run(capsys, "show", "--table", str(root), "--format=json", "--target-file-size=1Ki")
    text = run(capsys, "show", "--table", str(root), "--target-file-size=1Ki", "--max-buckets=3")

    partitions = shown.report["result"]["partitions"]
    assert [p["partition"] for p in partitions] == ["10", "20", "30"]
    for p in partitions:
        assert 0 < p["smallestFile"] <= p["bytesPerBucket"] <= p["largestFile"] <= p["liveBytes"]
    sizing = shown.report["result"]["sizing"]
    # Not bucket-indexed: every partition gets its ideal count, ceil(bytes / 1 KiB), and a rule for it.
    assert [c["newBuckets"] for c in sizing["choices"]] == [-(-p["liveBytes"] // 1024) for p in partitions]
    assert {r["buckets"] for r in sizing["rules"]} == {c["newBuckets"] for c in sizing["choices"]}
    assert (text.code, text.err) == (EXIT_OK, "")
    lines = text.out.splitlines()
    assert lines[3].split() == [
        "partition",
        "buckets",
        "groups",
        "rows",
        "bytes",
        "per",
        "bucket",
        "smallest",
        "largest",
        "sizing",
    ]
    assert [line.split()[-1] for line in lines[4:7]] == ["3", "3", "3"]  # "-> 3": max buckets
    assert "sizing to 1.0 KiB per file (tolerance 2x, 1..3 buckets): 3 of 3 partition(s)" in text.out
    assert "rule ^(?:10|20|30)$,3" in text.out


def test_show_reports_the_config_in_force_and_its_history_as_hudis_file_names_them(
    capsys: pytest.CaptureFixture[str], converted: tuple[Path, str]
) -> None:
    root, instant = converted

    result = run(capsys, "show", "--table", str(root), "--format=json").report["result"]

    config = result["config"]
    assert list(config) == ["expressions", "default_bucket_number", "rule", "version", "instant"]
    assert config["instant"] == instant
    assert result["configHistory"][-1] == {**config, "archived": False, "pending": False}


def test_a_sized_plan_reports_its_rules_and_what_sizing_did(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable
) -> None:
    root = written_table(V8)

    result = run(capsys, "plan", "--table", str(root), *RULES, "--convert", "--target-file-size=100Ki")

    assert (result.code, result.err) == (EXIT_OK, "")
    planned = PlanResult.from_dict(result.report["result"])
    assert planned.sizing_summary is not None
    # Partition 10 is the explicit rule's; 20 and 30 (two files of about 430 KiB each, most of it Hudi's
    # bloom filter) get ceil(bytes / 100 KiB).
    assert (planned.sizing_summary.sized_partitions, planned.sizing_summary.rules) == (2, 1)
    assert planned.plan.desired.render() == "^10$,4;^(?:20|30)$,9"
    assert {c.partition: c.new_buckets for c in planned.plan.changes} == {"10": 4, "20": 9, "30": 9}


def test_sizing_alone_needs_no_explicit_rules_but_a_plan_without_either_is_refused(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable
) -> None:
    root = written_table(V8)
    no_rules = ["--expressions=", "--default=2", "--convert"]

    sized = run(capsys, "plan", "--table", str(root), *no_rules, "--target-file-size=100Ki")
    unsized = run(capsys, "plan", "--table", str(root), *no_rules)

    assert (sized.code, sized.err) == (EXIT_OK, "")
    assert PlanResult.from_dict(sized.report["result"]).plan.desired.render() == "^(?:10|20|30)$,9"
    assert unsized.code == EXIT_FAILED
    assert "no rules" in unsized.err


def test_report_option_writes_the_report_of_a_success(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable, tmp_path: Path
) -> None:
    root, report = written_table(V8), tmp_path / "out" / "report.json"
    report.parent.mkdir()

    result = run(capsys, "plan", "--table", str(root), *RULES, "--convert", "--report", str(report))

    assert result.code == EXIT_OK
    written = JobReport.from_json(report.read_bytes())  # what the operator reads
    assert (written.command, written.outcome, written.error) == (JobKind.PLAN, Outcome.SUCCEEDED, None)
    assert written.plan_result().preflight["ok"] is True


def test_report_option_writes_the_report_of_a_failure(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable, tmp_path: Path
) -> None:
    root, report = written_table(V8), tmp_path / "report.json"

    result = run(capsys, "apply", "--table", str(root), *RULES, "--report", str(report))

    assert (result.code, result.out) == (EXIT_FAILED, "")
    written = JobReport.from_json(report.read_bytes())
    assert (written.command, written.outcome) == (JobKind.APPLY, Outcome.FAILED)
    assert written.error is not None
    assert written.error.type == "NotBucketIndexedError"
    assert "not bucket-indexed" in written.error.message
    assert "--convert" in written.error.hint


def test_a_failure_in_sparks_jvm_exits_1_with_one_line_naming_its_cause_and_writes_the_report(
    spark: Any, capsys: pytest.CaptureFixture[str], written_table: MakeTable, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A Java exception that no layer made one of ours (a storage request failing past the client's
    retries, a Spark task's failure) fails the job as ours do. The line names the cause, not the Spark
    job that wrapped it."""
    root, report = written_table(V8), tmp_path / "report.json"
    not_parquet = str(root / ".hoodie" / "hoodie.properties")

    def failing(ctx: Any, sizing: Any) -> Any:
        return spark.read.parquet(not_parquet).collect()  # a task reads the footer, and fails

    monkeypatch.setattr("hudi_bucket.commands.show.show", failing)
    result = run(capsys, "show", "--table", str(root), "--report", str(report))

    assert (result.code, result.out) == (EXIT_FAILED, "")
    said = result.err.strip()
    assert "\n" not in said
    assert said.startswith("hudi-bucket-job show: java.lang.RuntimeException: ")
    assert f"{not_parquet} is not a Parquet file" in said
    written = JobReport.from_json(report.read_bytes())
    assert written.outcome is Outcome.FAILED
    assert written.error is not None
    assert written.error.type == "RuntimeException"
    assert written.error.hint == JVM_FAILURE_HINT


def test_an_apply_refusing_a_plan_it_was_not_approved_for_reports_the_plan_it_found(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable, tmp_path: Path
) -> None:
    root, report = written_table(V8), tmp_path / "report.json"
    before = listing(root)
    stale = "sha256:" + "0" * 64

    result = run(capsys, "apply", "--table", str(root), *RULES, "--convert", "--approved-plan", stale,
                 "--report", str(report))  # fmt: skip

    assert result.code == EXIT_FAILED
    assert listing(root) == before
    written = JobReport.from_json(report.read_bytes())
    assert written.error is not None
    assert written.error.type == "PlanNotApprovedError"
    found = written.plan_result()  # what the operator puts up for approval instead
    assert found.plan.id != stale
    assert f"the plan is {found.plan.id}" in written.error.message
    assert [c.partition for c in found.plan.changes] == ["10", "20", "30"]


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["show"],
        ["apply", "--expressions", "x,4", "--default", "2"],
        ["apply", "--table", "t", "--default", "2"],
        ["plan", "--table", "t", "--expressions", "x,4", "--default", "two"],
        ["show", "--table", "t", "--no-such-option"],
        ["resize", "--table", "t"],
    ],
    ids=[
        "no-command",
        "missing-table",
        "apply-missing-table",
        "missing-expressions",
        "non-integer-default",
        "unknown-option",
        "unknown-command",
    ],
)
def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == EXIT_USAGE
    assert "usage:" in capsys.readouterr().err


def add_foreign_pending_commit(root: Path) -> None:
    """A commit another writer started and has not finished (empty requested and inflight files)."""
    timeline = root / ".hoodie" / "timeline"
    (timeline / "20990101000000000.commit.requested").write_bytes(b"")
    (timeline / "20990101000000000.inflight").write_bytes(b"")


@dataclass(frozen=True)
class BadInput:
    table: str | None  # a table of written_tables, or None for an empty folder
    args: tuple[str, ...]
    says: tuple[str, ...]  # the problem, and what to do about it
    prepare: Callable[[Path], None] | None = None
    commands: tuple[str, ...] = ("plan", "apply")  # which refuse it


CONVERT = ("--default", "2", "--convert")
BAD_INPUTS = {
    "invalid-regex": BadInput(
        V8, ("--expressions", "([,4", *CONVERT), ("'(['", "does not compile", "regex,N")
    ),
    "comma-in-pattern": BadInput(V8, ("--expressions", "a,b,4", *CONVERT), ("'a,b,4'", "pattern,buckets")),
    "zero-buckets-in-a-rule": BadInput(
        V8, ("--expressions", "^10$,0", *CONVERT), ("bucket count 0", "1..100000")
    ),
    "zero-default-buckets": BadInput(
        V8,
        ("--expressions", "^10$,4", "--default", "0", "--convert"),
        ("default bucket number 0", "1..100000"),
    ),
    "absurd-buckets-in-a-rule": BadInput(
        V8, ("--expressions", f"^10$,{10**9}", *CONVERT), ("bucket count 1000000000", "1..100000")
    ),
    "absurd-default-buckets": BadInput(
        V8,
        ("--expressions", "^10$,4", "--default", str(10**9), "--convert"),
        ("default bucket number 1000000000", "1..100000"),
    ),
    "not-a-hudi-table": BadInput(
        None, ("--expressions", "^10$,4", *CONVERT), ("is not a Hudi table", "point --table")
    ),
    "foreign-pending-instant": BadInput(
        V8,
        ("--expressions", "^10$,4", *CONVERT),
        ("20990101000000000", "not started by this tool", "roll them back"),
        add_foreign_pending_commit,
        ("apply",),  # a plan notes it: see test_a_plan_notes_a_writers_pending_commit_that_apply_refuses
    ),
    "not-bucket-indexed-without-convert": BadInput(
        V8, ("--expressions", "^10$,4", "--default", "2"), ("not bucket-indexed", "--convert")
    ),
}


@pytest.mark.parametrize(
    ("command", "case"),
    [
        pytest.param(command, case, id=f"{name}-{command}")
        for name, case in BAD_INPUTS.items()
        for command in case.commands
    ],
)
def test_bad_input_exits_1_with_one_line_saying_what_to_do_and_changes_nothing(
    capsys: pytest.CaptureFixture[str],
    written_table: MakeTable,
    tmp_path: Path,
    command: str,
    case: BadInput,
) -> None:
    if case.table is None:
        root = tmp_path / "not-a-table"
        (root / "data").mkdir(parents=True)
        (root / "data" / "part-0.parquet").write_bytes(b"PAR1")
    else:
        root = written_table(case.table)
    if case.prepare:
        case.prepare(root)
    before = listing(root)

    result = run(capsys, command, "--table", str(root), *case.args)

    assert (result.code, result.out) == (EXIT_FAILED, "")
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"hudi-bucket-job {command}: ")
    for words in case.says:
        assert words in result.err
    assert listing(root) == before


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_a_live_metadata_table_without_hudis_metadata_writer_exits_1_saying_what_to_do(
    capsys: pytest.CaptureFixture[str],
    written_table: MakeTable,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """Where Hudi's bundle is loaded the Native engine keeps the metadata table (test_metadata_table_kept)."""
    root = written_table("cow_v9_meta")
    before = listing(root)
    monkeypatch.setattr(metadata_writer, "available", lambda spark: False)

    result = run(capsys, command, "--table", str(root), "--expressions", "part=10,4", *CONVERT)

    assert (result.code, result.out) == (EXIT_FAILED, "")
    assert result.err.count("\n") == 1, result.err
    for words in ("metadata table is live", "Hudi's Spark bundle", "--disable-metadata-table"):
        assert words in result.err
    assert listing(root) == before


def test_a_plan_notes_a_writers_pending_commit_that_apply_refuses(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable
) -> None:
    """Planned while the writers run (one always has a commit pending), applied once they are stopped."""
    root = written_table(V8)
    add_foreign_pending_commit(root)
    before = listing(root)

    planned = run(capsys, "plan", "--table", str(root), *RULES, "--convert")

    assert planned.code == EXIT_OK, planned.err
    notes = planned.report["result"]["preflight"]["notes"]
    assert any("20990101000000000" in n and "the apply refuses them" in n for n in notes), notes
    assert PlanResult.from_dict(planned.report["result"]).plan.changes
    assert listing(root) == before

    applied = run(capsys, "apply", "--table", str(root), *RULES, "--convert")

    assert applied.code == EXIT_FAILED
    assert "1 pending instant(s) not started by this tool: 20990101000000000" in applied.err
    assert listing(root) == before


@pytest.fixture
def converted(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable, tmp_path: Path
) -> tuple[Path, str]:
    """The v8 table laid out in buckets by a converting apply; returns the root and the apply's instant."""
    root, report = written_table(V8), tmp_path / "convert.json"
    result = run(capsys, "apply", "--table", str(root), *RULES, "--convert", "--report", str(report))
    assert result.code == EXIT_OK, result.err
    return root, json.loads(report.read_text())["result"]["instant"]


def test_apply_on_a_converged_table_exits_0_with_no_change(
    capsys: pytest.CaptureFixture[str], converted: tuple[Path, str]
) -> None:
    root, _ = converted
    before = listing(root)

    result = run(capsys, "apply", "--table", str(root), *RULES)

    assert (result.code, result.err) == (EXIT_OK, "")
    assert result.report["outcome"] == "NoChange"
    assert result.report["result"]["instant"] is None
    assert listing(root) == before


def test_verify_exits_0_on_a_bucket_layout_and_1_once_a_bucket_has_two_file_groups(
    capsys: pytest.CaptureFixture[str], converted: tuple[Path, str], tmp_path: Path
) -> None:
    root, instant = converted
    ok = run(capsys, "verify", "--table", str(root))
    assert ok.code == EXIT_OK, ok.err
    assert ok.report["result"]["ok"] is True
    # The file groups the conversion wrote are the live ones, a base file each.
    sizes = sorted(f.stat().st_size for f in root.glob(f"*/*_{instant}.parquet"))
    assert ok.report["result"]["fileGroupSizes"] == {
        "count": len(sizes),
        "largestBytes": sizes[-1],
        "medianBytes": sizes[(len(sizes) - 1) // 2],
    }
    rows_before = records(root, drop=REWRITTEN)

    # What a failed writer leaves: a second file group for bucket 0 of partition 10, under a committed
    # instant. Hudi and hudi-rs both see it as live (readers get its records twice) and Hudi's bucket
    # index refuses to write to the partition ("multiple files ... same bucket id").
    bucket_file = next((root / "10").glob(f"*_{instant}.parquet"))
    file_id, rest = bucket_file.name.split("_", 1)
    twin = f"{file_id[:9]}dead{file_id[13:]}"
    (root / "10" / f"{twin}_{rest}").write_bytes(bucket_file.read_bytes())
    assert len(records(root, drop=REWRITTEN)) > len(rows_before)
    before, report = listing(root), tmp_path / "verify.json"

    broken = run(capsys, "verify", "--table", str(root), "--report", str(report))

    assert (broken.code, broken.out) == (EXIT_FAILED, "")
    assert broken.err.count("\n") == 1
    assert "bucket layout violation" in broken.err
    assert "apply the rules again" in broken.err
    doc = json.loads(report.read_text())
    assert (doc["outcome"], doc["error"]["type"]) == ("Failed", "LayoutViolationError")
    assert listing(root) == before


def plain_bucket_table(spark: Any, root: Path, buckets: int) -> Path:
    """A table our write made with a plain bucket index of ``buckets`` (recorded, no hashing_config):
    30 rows in partitions 10 and 11."""
    data = spark.createDataFrame(
        [(f"O-{i}", str(10 + i % 2), float(i)) for i in range(30)], "id string, part string, v double"
    )
    options = WriteOptions(
        source="", record_key=("id",), partition_fields=("part",), create=True, default_buckets=buckets
    )
    write(spark, str(root), options, rows=data)
    return root


def test_verify_checks_a_plain_bucket_table_against_the_count_it_records(
    capsys: pytest.CaptureFixture[str], spark: Any, written_table: MakeTable, tmp_path: Path
) -> None:
    """No hashing_config yet (no rules ever applied): the plain bucket index's one count is the truth."""
    root = plain_bucket_table(spark, tmp_path / "plain", 3)

    ok = run(capsys, "verify", "--table", str(root))

    assert ok.code == EXIT_OK, ok.err
    assert ok.report["result"]["ok"] is True
    checked = ok.report["result"]
    assert (checked["checkedPartitions"], checked["checkedFileGroups"], checked["checkedRows"]) == (2, 6, 30)

    unknown = run(capsys, "verify", "--table", str(written_table(V8)))  # neither a config nor a count
    assert unknown.code == EXIT_FAILED
    assert "records no bucket count" in unknown.err


def test_a_plain_bucket_table_is_planned_from_the_count_it_records(
    capsys: pytest.CaptureFixture[str], spark: Any, tmp_path: Path
) -> None:
    """No hashing_config yet: a new default is a rescale from the count the table records, never a config
    declared over buckets laid out for another count; a --current-buckets that disagrees is refused."""
    root = plain_bucket_table(spark, tmp_path / "plain", 1)
    before = listing(root)

    planned = run(capsys, "plan", "--table", str(root), "--expressions", "^$,1", "--default", "2")

    assert planned.code == EXIT_OK, planned.err
    changes = planned.report["result"]["plan"]["changes"]
    assert [(c["partition"], c["oldBuckets"], c["newBuckets"]) for c in changes] == [
        ("10", 1, 2),
        ("11", 1, 2),
    ]
    wrong = run(capsys, "plan", "--table", str(root), "--expressions", "^$,1", "--default", "2",
                "--current-buckets", "3")  # fmt: skip
    assert wrong.code == EXIT_FAILED
    assert "--current-buckets is 3, but" in wrong.err
    assert "records 1 bucket(s)" in wrong.err
    assert listing(root) == before


def test_rollback_of_a_completed_rescale_exits_0_and_restores_the_rows(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable, tmp_path: Path
) -> None:
    root, report = written_table(V8), tmp_path / "apply.json"
    rows_before = records(root, drop=REWRITTEN)
    files_before = sorted(p.name for p in root.rglob("*.parquet"))
    applied = run(capsys, "apply", "--table", str(root), *RULES, "--convert", "--report", str(report))
    assert applied.code == EXIT_OK, applied.err
    instant = json.loads(report.read_text())["result"]["instant"]

    result = run(capsys, "rollback", "--table", str(root), "--instant", instant)

    assert (result.code, result.err) == (EXIT_OK, "")
    assert result.report["outcome"] == "Succeeded"
    assert instant in result.report["message"]
    assert records(root, drop=REWRITTEN) == rows_before
    assert sorted(p.name for p in root.rglob("*.parquet")) == files_before


def test_rollback_of_a_live_jobs_instant_exits_1_and_touches_nothing(
    capsys: pytest.CaptureFixture[str], written_table: MakeTable
) -> None:
    root = written_table(V8)
    timeline = root / ".hoodie" / "timeline"
    instant = "20990101000000000"
    (timeline / f"{instant}.commit.requested").write_bytes(b"")
    (root / ".hoodie" / ".heartbeat").mkdir()
    (root / ".hoodie" / ".heartbeat" / instant).write_bytes(b"")  # its job beat just now
    before = listing(root)

    result = run(capsys, "rollback", "--table", str(root), "--instant", instant)

    assert result.code == EXIT_FAILED
    assert f"another hudi-bucket-job is writing this table: instant {instant}" in result.err
    assert listing(root) == before

"""A job's report, read by the operator: the JSON the models declare, each command's result typed and
the table's buckets beside it.

tests/contract/reports/ holds reports as this release's jobs write them (version 3: the results of
version 2, its hand-written ``to_dict``'s, with the table's buckets moved out of a plan's and an apply's
result): this release reads each, and writes each back byte for byte. A report of another version, and
what cannot be read, is a ReportError naming the field's path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.contract.reports import JobReport, Outcome, SizingSummary
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.file_sizes import FileGroupSizes
from hudi_bucket.core.planning import ChangeReason
from hudi_bucket.errors import ReportError

WRITTEN = Path(__file__).parent / "reports"
REPORTS = sorted(path.name for path in WRITTEN.glob("*.json"))


def written(name: str) -> bytes:
    return (WRITTEN / name).read_bytes()


def result_of(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(written(name))["result"]
    return result


def report_of(name: str, result: dict[str, Any] | None = None) -> JobReport:
    """The report written as ``name``, with ``result`` instead of its own when given."""
    report = JobReport.from_json(written(name))
    return report if result is None else replace(report, result=result)


@pytest.mark.parametrize("name", REPORTS)
def test_a_report_is_read_and_written_back_byte_for_byte(name: str) -> None:
    assert JobReport.from_json(written(name)).to_json() == written(name)


@pytest.mark.parametrize("name", ["plan.json", "apply-refused.json"])
def test_a_plan_result_reads_back_as_it_was_written(name: str) -> None:
    planned = report_of(name).plan_result()
    assert json.dumps(planned.to_dict()) == json.dumps(result_of(name))


@pytest.mark.parametrize("name", ["apply.json", "apply-no-change.json"])
def test_an_apply_result_reads_back_as_it_was_written(name: str) -> None:
    applied = report_of(name).apply_result()
    assert json.dumps(applied.to_dict()) == json.dumps(result_of(name))


def test_the_table_buckets_are_the_reports_not_the_results() -> None:
    doc = json.loads(written("plan.json"))
    table = report_of("plan.json").table_buckets
    assert table is not None
    assert table.to_dict() == doc["tableBuckets"]
    assert not {"config", "partitions"} & set(doc["result"])


def test_what_the_operator_reads_of_each_report() -> None:
    planned = report_of("plan.json").plan_result()
    assert [c.reason for c in planned.plan.changes] == [
        ChangeReason.REPAIR,
        ChangeReason.CONVERT,
        ChangeReason.RESCALE,
    ]
    assert planned.plan.changes[1].old_buckets is None
    assert planned.sizing_summary == SizingSummary(sized_partitions=5, resized=2, shuffle_free=1, rules=1)
    table = report_of("plan.json").table_buckets
    assert table is not None
    assert table.partitions is not None
    assert [(item.partition, item.buckets) for item in table.partitions.items] == [
        ("region=emea", 8),
        ("region=amer", 4),
    ]

    applied = report_of("apply.json").apply_result()
    assert (applied.instant, applied.seconds, applied.partitions_repaired, applied.duplicates_resolved) == (
        "20261121094500321",
        312.5,
        1,
        3,
    )
    assert report_of("apply-no-change.json").apply_result().plan.noop

    refused = report_of("apply-refused.json")
    assert refused.error is not None
    assert refused.error.type == "PlanNotApprovedError"
    assert refused.table_buckets is None  # it refused before looking at the table's buckets

    verified = report_of("verify.json")
    check = verified.layout_check()
    assert check is not None
    assert (check.violations, check.partitions) == (1, ("region=emea",))
    assert check.file_group_sizes == FileGroupSizes(
        count=12, largest_bytes=384 * 2**20, median_bytes=128 * 2**20
    )


def test_a_layout_check_without_file_group_sizes_reads_as_unmeasured() -> None:
    result = {k: v for k, v in result_of("verify.json").items() if k != "fileGroupSizes"}
    check = report_of("verify.json", result).layout_check()
    assert check is not None
    assert check.file_group_sizes == FileGroupSizes()
    assert check.file_group_sizes.skew is None


def test_a_report_without_an_error_or_the_table_buckets_has_no_key_for_them() -> None:
    report = JobReport(JobKind.SHOW, "/t", Outcome.SUCCEEDED, "m", "t0", "t1", {"partitions": []})
    assert report.to_dict() == {
        "version": 3,
        "command": "show",
        "table": "/t",
        "outcome": "Succeeded",
        "message": "m",
        "started": "t0",
        "finished": "t1",
        "result": {"partitions": []},
    }


def test_the_seconds_an_apply_took_are_written_to_the_millisecond() -> None:
    applied = report_of("apply.json").apply_result()
    assert replace(applied, seconds=1.23456).to_dict()["seconds"] == 1.235


@pytest.mark.parametrize("version", [2, 4])
def test_a_report_of_another_version_is_refused(version: int) -> None:
    doc = json.loads(written("plan.json"))
    refusal = f"the report has version {version}; this release reads version 3"
    with pytest.raises(ReportError, match=refusal):
        JobReport.from_json(json.dumps({**doc, "version": version}))


def damaged(name: str, *path: str | int, value: object) -> bytes:
    """The report written as ``name``, with ``value`` at ``path``."""
    doc: Any = json.loads(written(name))
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return json.dumps(doc).encode()


def plan_of(text: bytes) -> object:
    return JobReport.from_json(text).plan_result()


def apply_of(text: bytes) -> object:
    return JobReport.from_json(text).apply_result()


@pytest.mark.parametrize(
    ("read", "report", "refusal"),
    [
        (
            plan_of,
            damaged("plan.json", "result", "plan", "changes", 1, "newBuckets", value="many"),
            "the plan cannot be read: result.plan.changes[1].newBuckets: Input should be a valid integer",
        ),
        (
            plan_of,
            damaged("plan.json", "result", "plan", "changes", 1, "reason", value="shrink"),
            "result.plan.changes[1].reason: Input should be 'rescale', 'convert' or 'repair'",
        ),
        (
            plan_of,
            damaged("plan.json", "result", "plan", "changes", 0, "newBuckets", value=8),
            "result.plan: the plan report claims id sha256:",
        ),
        (
            plan_of,
            damaged("plan.json", "result", "plan", "desired", value="^a$,8"),
            "result.plan.desired: must be a config as Hudi stores it",
        ),
        (
            plan_of,
            damaged("plan.json", "result", "sizing", "rules", value=None),
            "the plan's sizing cannot be read",
        ),
        (
            apply_of,
            damaged("apply.json", "result", "writerOptions", value=None),
            "the apply's result cannot be read: result.writerOptions: Input should be a valid dictionary",
        ),
        (
            plan_of,
            damaged("plan.json", "tableBuckets", "partitions", "items", 0, "buckets", value=None),
            "the report cannot be read: tableBuckets.partitions.items[0].buckets: ",
        ),
    ],
)
def test_what_cannot_be_read_is_a_report_error_naming_the_field(
    read: Callable[[bytes], object], report: bytes, refusal: str
) -> None:
    with pytest.raises(ReportError) as refused:
        read(report)
    assert refusal in str(refused.value)
    assert str(refused.value).endswith(f"({ReportError.hint})")


def test_a_report_that_is_no_report_is_refused_naming_its_fields() -> None:
    with pytest.raises(ReportError, match="the report cannot be read: command: Input should be 'show',"):
        JobReport.from_json(b'{"version": 3, "command": "rescale"}')
    with pytest.raises(ReportError, match="the report cannot be read: JSONDecodeError"):
        JobReport.from_json(b"{")


def test_a_layout_check_that_cannot_be_read_is_a_report_error_naming_the_field() -> None:
    damaged_check = damaged("verify.json", "result", "violationsByKind", value=["bucket-out-of-range"])
    with pytest.raises(ReportError, match=r"the layout check cannot be read: result\.violationsByKind: "):
        JobReport.from_json(damaged_check).layout_check()

"""A job's report, read by the operator: the JSON the models declare is the JSON reports always had.

tests/contract/reports/ holds reports as the release before the typed reports wrote them (its
hand-written ``to_dict``): this release reads each, and writes each back byte for byte, so that an
operator and a job one release apart still read each other's reports. What cannot be read is a
ReportError naming the field's path.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.contract.reports import (
    ApplyResult,
    JobReport,
    LayoutCheck,
    Outcome,
    PlanResult,
    ReportError,
    SizingSummary,
    TableBuckets,
)
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.planning import ChangeReason

WRITTEN = Path(__file__).parent / "reports"
REPORTS = sorted(path.name for path in WRITTEN.glob("*.json"))


def written(name: str) -> bytes:
    return (WRITTEN / name).read_bytes()


def result_of(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(written(name))["result"]
    return result


@pytest.mark.parametrize("name", REPORTS)
def test_a_report_of_the_previous_release_is_read_and_written_back_byte_for_byte(name: str) -> None:
    assert JobReport.from_json(written(name)).to_json() == written(name)


@pytest.mark.parametrize("name", ["plan.json", "apply-refused.json"])
def test_a_plan_result_reads_back_as_it_was_written(name: str) -> None:
    result = result_of(name)
    planned, table = PlanResult.from_dict(result), TableBuckets.from_dict(result)
    assert json.dumps({**planned.to_dict(), **table.to_dict()}) == json.dumps(result)


@pytest.mark.parametrize("name", ["apply.json", "apply-no-change.json"])
def test_an_apply_result_reads_back_as_it_was_written(name: str) -> None:
    result = result_of(name)
    applied, table = ApplyResult.from_dict(result), TableBuckets.from_dict(result)
    assert json.dumps({**applied.to_dict(), **table.to_dict()}) == json.dumps(result)


def test_what_the_operator_reads_of_each_report() -> None:
    planned = PlanResult.from_dict(result_of("plan.json"))
    assert [c.reason for c in planned.plan.changes] == [
        ChangeReason.REPAIR,
        ChangeReason.CONVERT,
        ChangeReason.RESCALE,
    ]
    assert planned.plan.changes[1].old_buckets is None
    assert planned.sizing_summary == SizingSummary(sized_partitions=5, resized=2, shuffle_free=1, rules=1)
    table = TableBuckets.from_dict(result_of("plan.json"))
    assert table.partitions is not None
    assert [(item.partition, item.buckets) for item in table.partitions.items] == [
        ("region=emea", 8),
        ("region=amer", 4),
    ]

    applied = ApplyResult.from_dict(result_of("apply.json"))
    assert (applied.instant, applied.seconds, applied.partitions_repaired, applied.duplicates_resolved) == (
        "20261121094500321",
        312.5,
        1,
        3,
    )
    assert ApplyResult.from_dict(result_of("apply-no-change.json")).plan.noop

    refused = JobReport.from_json(written("apply-refused.json"))
    assert refused.error is not None
    assert refused.error.type == "PlanNotApprovedError"
    assert TableBuckets.from_dict(refused.result) == TableBuckets()

    verified = JobReport.from_json(written("verify.json"))
    check = LayoutCheck.of(verified)
    assert check is not None
    assert (check.violations, check.partitions) == (1, ("region=emea",))


def test_a_report_without_an_error_has_no_error_key() -> None:
    report = JobReport(JobKind.SHOW, "/t", Outcome.SUCCEEDED, "m", "t0", "t1", {"partitions": []})
    assert report.to_dict() == {
        "version": 2,
        "command": "show",
        "table": "/t",
        "outcome": "Succeeded",
        "message": "m",
        "started": "t0",
        "finished": "t1",
        "result": {"partitions": []},
    }


def test_the_seconds_an_apply_took_are_written_to_the_millisecond() -> None:
    applied = ApplyResult.from_dict(result_of("apply.json"))
    assert replace(applied, seconds=1.23456).to_dict()["seconds"] == 1.235


def test_a_report_of_another_version_is_refused() -> None:
    doc = json.loads(written("plan.json"))
    with pytest.raises(ReportError, match="the report has version 3; this release reads version 2"):
        JobReport.from_json(json.dumps({**doc, "version": 3}))


def damaged(name: str, *path: str | int, value: object) -> dict[str, Any]:
    doc: Any = result_of(name)
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("read", "result", "refusal"),
    [
        (
            PlanResult.from_dict,
            damaged("plan.json", "plan", "changes", 1, "newBuckets", value="many"),
            "the plan cannot be read: result.plan.changes[1].newBuckets: Input should be a valid integer",
        ),
        (
            PlanResult.from_dict,
            damaged("plan.json", "plan", "changes", 1, "reason", value="shrink"),
            "result.plan.changes[1].reason: Input should be 'rescale', 'convert' or 'repair'",
        ),
        (
            PlanResult.from_dict,
            damaged("plan.json", "plan", "changes", 0, "newBuckets", value=8),
            "result.plan: the plan report claims id sha256:",
        ),
        (
            PlanResult.from_dict,
            damaged("plan.json", "plan", "desired", value="^a$,8"),
            "result.plan.desired: must be a config as Hudi stores it",
        ),
        (
            PlanResult.from_dict,
            damaged("plan.json", "sizing", "rules", value=None),
            "the plan's sizing cannot be read",
        ),
        (
            ApplyResult.from_dict,
            damaged("apply.json", "writerOptions", value=None),
            "the apply's result cannot be read: result.writerOptions: Input should be a valid dictionary",
        ),
        (
            TableBuckets.from_dict,
            damaged("plan.json", "partitions", "items", 0, "buckets", value=None),
            "the table's bucket counts cannot be read: result.partitions.items[0].buckets: ",
        ),
    ],
)
def test_what_cannot_be_read_is_a_report_error_naming_the_field(
    read: Any, result: dict[str, Any], refusal: str
) -> None:
    with pytest.raises(ReportError) as refused:
        read(result)
    assert refusal in str(refused.value)
    assert str(refused.value).endswith(f"({ReportError.hint})")


def test_a_report_that_is_no_report_is_refused_naming_its_fields() -> None:
    with pytest.raises(ReportError, match="the report cannot be read: command: Input should be 'show',"):
        JobReport.from_json(b'{"version": 2, "command": "rescale"}')
    with pytest.raises(ReportError, match="the report cannot be read: JSONDecodeError"):
        JobReport.from_json(b"{")


def test_a_layout_check_that_cannot_be_read_is_a_report_error_naming_the_field() -> None:
    verified = JobReport.from_json(written("verify.json"))
    damaged_check = replace(verified, result={**verified.result, "violationsByKind": ["bucket-out-of-range"]})
    with pytest.raises(ReportError, match=r"the layout check cannot be read: result\.violationsByKind: "):
        LayoutCheck.of(damaged_check)

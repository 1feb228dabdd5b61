"""Drift: with spec.verify a Ready table's layout is checked on its schedule; what the check finds is
status.layout and the LayoutHealthy condition; a violation turns into a plan that repairs it (approved
as any plan), and a repair is checked again at once. `decide` alone, as in test_decide."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest

from hudi_bucket.contract.reports import (
    ApplyResult,
    JobError,
    JobReport,
    Outcome,
    PlanResult,
    TableBuckets,
)
from hudi_bucket.contract.requests import ApplyRequest, JobKind, PlanRequest, VerifyRequest
from hudi_bucket.core.planning import ChangeReason, PartitionChange, Plan
from hudi_bucket.core.rules import BucketRules
from hudi_bucket_operator.decide import decisions
from hudi_bucket_operator.decide.decisions import SEQUENCE, Decision, JobPhase, ObservedJob
from hudi_bucket_operator.decide.reconcile import decide
from hudi_bucket_operator.decide.rounds import VERIFY_ROUND
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import PAUSED, RETRY, VERIFY
from hudi_bucket_operator.resource.conditions import LAYOUT_HEALTHY, READY, condition
from hudi_bucket_operator.resource.table_status import Condition, LastJob, TableStatus
from lib.hbt_resources import ANYWHERE, SPEC

# Every pass sees admins who let tables be anywhere (the operator's default lets them be nowhere).
Observed = partial(decisions.Observed, policy=Policy(JobDefaults(allowed_table_uris=ANYWHERE)))

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
STAMP = "2026-11-23T12:00:00Z"
RULES = BucketRules.parse("11-11,16", 4)
REPAIR = PartitionChange("day=2026-11-10", 4, 4, 5, 100, 10, ChangeReason.REPAIR)
REPAIR_PLAN, NOOP = Plan(RULES, RULES, (REPAIR,), "20261123100000000"), Plan(RULES, RULES, ())
EVERY_6H = {**SPEC, "verify": {"schedule": "6h"}}
NIGHTLY = {**SPEC, "verify": {"schedule": "0 3 * * *"}}
ROUND = f"{VERIFY_ROUND}{int(NOW.timestamp())}"


def ready(layout: dict[str, Any] | None = None, token: str = "") -> TableStatus:
    """The status of a table whose last job was recorded and left it Ready, as the API server holds it."""
    status: dict[str, Any] = {
        "observedGeneration": 1,
        "conditions": [{"type": READY, "status": "True", "reason": "Converged", "lastTransitionTime": STAMP}],
        "lastJob": {"name": "orders-plan-1", "kind": "plan", "generation": 1, "retryToken": token,
                    "phase": "Completed", "recorded": True},
    }  # fmt: skip
    if layout is not None:
        status["layout"] = layout
    return TableStatus.of(status)


def verified(violations: int = 0, finished: str = STAMP, **measured: int) -> JobReport:
    """A verify job's report: passed, or failed on ``violations`` (its result is the check either way),
    with the file groups' sizes ``measured`` (none: an older job's report, without them)."""
    partitions = ["day=2026-11-10"] if violations else []
    result: dict[str, Any] = {
        "ok": not violations,
        "violationCount": violations,
        "violationsByKind": {"misplaced-records": violations} if violations else {},
        "violations": [],
        "partitionCount": len(partitions),
        "partitions": partitions,
    }
    if measured:
        result["fileGroupSizes"] = measured
    outcome, error = (Outcome.FAILED, JobError("LayoutViolationError", "x")) if violations else (
        Outcome.SUCCEEDED, None)  # fmt: skip
    return JobReport(JobKind.VERIFY, "s3a://x", outcome, "verify", "t0", finished, result, error)


def planned(plan: Plan) -> JobReport:
    result = PlanResult(plan.reported(), {}).to_dict()
    return JobReport(
        JobKind.PLAN, "s3a://x", Outcome.SUCCEEDED, "plan", "t0", "t1", result, table_buckets=TableBuckets()
    )


def repaired(duplicates: int = 1) -> JobReport:
    result = ApplyResult(
        REPAIR_PLAN.reported(), "20261123110000000", 1, 100, 10, 1.5, False, (), {}, duplicates
    )
    return JobReport(
        JobKind.APPLY, "s3a://x", Outcome.SUCCEEDED, "committed", "t0", "t1", result.to_dict(),
        table_buckets=TableBuckets(),
    )  # fmt: skip


def job(kind: JobKind, report: JobReport | None, token: str = ROUND, phase: JobPhase = JobPhase.COMPLETED,
        generation: int = 1) -> ObservedJob:  # fmt: skip
    sequence = SEQUENCE[kind]
    return ObservedJob(
        f"orders-{kind.value}-{generation}{token}", kind, generation, token, phase,
        f"2026-11-23T11:0{sequence + 1}:00Z", sequence, "", report,
    )  # fmt: skip


def after(spec: dict[str, Any], status: TableStatus, *jobs: ObservedJob, **more: Any) -> Decision:
    """The decision once ``jobs`` ran in the round the status's last job names."""
    last = jobs[-1] if jobs else None
    if last is not None:
        round_job = LastJob(name="x", generation=last.generation, retry_token=last.retry_token)
        status = status.model_copy(update={"last_job": round_job})
    return decide(Observed(spec, more.get("generation", 1), more.get("annotations", {}), status, jobs), NOW)


def requested(decision: Decision) -> Any:
    assert decision.submit is not None
    return decision.submit.request


# --- when a check runs ----------------------------------------------------------------------------------


def test_a_ready_table_never_checked_is_checked_in_a_round_of_its_own() -> None:
    decision = after(EVERY_6H, ready())
    assert isinstance(requested(decision), VerifyRequest)
    assert decision.submit is not None
    assert (decision.submit.retry_token, decision.submit.sequence) == (ROUND, SEQUENCE[JobKind.VERIFY])
    assert decision.status.phase == "Verifying"
    assert [reason for _, reason, _ in decision.events] == ["Verifying"]
    # Routine work: the table stays Ready while it is checked, so health checks do not flap.
    assert decision.status.conditions == ready().conditions
    checking = after(EVERY_6H, ready(), job(JobKind.VERIFY, None, phase=JobPhase.RUNNING))
    assert (checking.status.phase, checking.status.conditions) == ("Verifying", ready().conditions)


@pytest.mark.parametrize(
    ("spec", "checked", "due"),
    [
        (EVERY_6H, NOW - timedelta(hours=5, minutes=59), False),
        (EVERY_6H, NOW - timedelta(hours=6), True),
        (NIGHTLY, datetime(2026, 11, 23, 3, 0, 5, tzinfo=UTC), False),  # today's 03:00 ran
        (NIGHTLY, datetime(2026, 11, 22, 23, 0, tzinfo=UTC), True),  # today's 03:00 is past, unchecked
    ],
)
def test_a_check_is_due_on_the_schedule_counted_from_the_last(
    spec: dict[str, Any], checked: datetime, due: bool
) -> None:
    layout = {"checkedAt": checked.isoformat().replace("+00:00", "Z"), "violations": 0}
    decision = after(spec, ready(layout))
    assert isinstance(decision.submit.request if decision.submit else None, VerifyRequest) is due


def test_no_check_runs_without_a_schedule_while_paused_or_unless_ready() -> None:
    assert after(SPEC, ready()).submit is None
    assert after(EVERY_6H, ready(), annotations={PAUSED: "true"}).submit is None
    awaiting = ready().model_copy(
        update={"conditions": [Condition(type=READY, status="False", reason="AwaitingApproval")]}
    )
    assert after(EVERY_6H, awaiting).submit is None


def test_a_check_runs_under_the_retry_annotation_too() -> None:
    decision = after(EVERY_6H, ready(token="7"), annotations={RETRY: "7"})
    assert decision.submit is not None
    assert decision.submit.retry_token == f"7{ROUND}"


@pytest.mark.parametrize(
    ("asked", "due"),
    [
        ("2026-11-23T11:30:00Z", True),  # after the last check
        ("2026-11-23T10:30:00Z", False),  # checked since
        ("soon", False),  # no time: set by hand, read as nothing
        ("2026-11-23T11:30:00", False),  # no zone: no moment either
    ],
)
def test_a_check_asked_for_by_annotation_runs_once_whatever_the_schedule(asked: str, due: bool) -> None:
    layout = {"checkedAt": "2026-11-23T11:00:00Z", "violations": 0}
    decision = after(SPEC, ready(layout), annotations={VERIFY: asked})  # SPEC has no spec.verify
    assert isinstance(decision.submit.request if decision.submit else None, VerifyRequest) is due
    if due:
        assert f"as asked at {asked}" in decision.events[0].message
    never_checked = after(SPEC, ready(), annotations={VERIFY: "2026-11-23T11:30:00Z"})
    assert never_checked.submit is not None


# --- what a check finds ---------------------------------------------------------------------------------


def test_a_healthy_layout_is_recorded_and_the_table_planned_again() -> None:
    decision = after(EVERY_6H, ready(), job(JobKind.VERIFY, verified()))

    assert decision.status.to_api()["layout"] == {
        "checkedAt": STAMP, "violations": 0, "byKind": {}, "partitions": 0, "items": []
    }  # fmt: skip
    healthy = condition(decision.status, LAYOUT_HEALTHY)
    assert healthy is not None
    assert (healthy.status, healthy.reason) == ("True", "LayoutVerified")
    plan = requested(decision)
    assert isinstance(plan, PlanRequest)
    assert not plan.rescale.check_records
    assert decision.submit is not None
    assert (decision.submit.retry_token, decision.submit.sequence) == (ROUND, SEQUENCE[JobKind.PLAN])
    assert decision.events == ()
    ready_condition = condition(decision.status, READY)
    assert ready_condition is not None
    assert (decision.status.phase, ready_condition.status) == ("Planning", "True")


def test_the_file_groups_sizes_the_check_measured_are_recorded_with_it() -> None:
    report = verified(count=8, largestBytes=300, medianBytes=100)
    layout = after(EVERY_6H, ready(), job(JobKind.VERIFY, report)).status.layout
    assert layout is not None
    assert (layout.file_groups, layout.largest_file_group_bytes, layout.median_file_group_bytes) == (
        8,
        300,
        100,
    )
    assert layout.skew == 3.0
    empty = verified(count=0, largestBytes=0, medianBytes=0)  # a table without a file group yet
    assert after(EVERY_6H, ready(), job(JobKind.VERIFY, empty)).status.to_api()["layout"].keys() == {
        "checkedAt", "violations", "byKind", "partitions", "items"
    }  # fmt: skip


def test_a_violation_is_a_warning_and_a_plan_that_reads_every_record() -> None:
    decision = after(EVERY_6H, ready(), job(JobKind.VERIFY, verified(violations=2)))

    assert decision.status.to_api()["layout"]["violations"] == 2
    assert decision.status.to_api()["layout"]["items"] == ["day=2026-11-10"]
    unhealthy = condition(decision.status, LAYOUT_HEALTHY)
    assert unhealthy is not None
    assert (unhealthy.status, unhealthy.reason) == ("False", "LayoutViolation")
    assert "2 misplaced-records" in (unhealthy.message or "")
    assert [(kind, reason) for kind, reason, _ in decision.events] == [("Warning", "LayoutViolation")]
    plan = requested(decision)
    assert isinstance(plan, PlanRequest)
    assert plan.rescale.check_records
    not_ready = condition(decision.status, READY)
    assert not_ready is not None
    assert not_ready.status == "False"  # what the check found changes the table's state


def test_a_check_that_ends_while_the_table_is_paused_plans_only_once_it_is_resumed() -> None:
    check = job(JobKind.VERIFY, verified(violations=2))
    paused = after(EVERY_6H, ready(), check, annotations={PAUSED: "true"})
    assert (paused.submit, paused.recorded, paused.status.phase) == (None, None, "Paused")

    resumed = after(EVERY_6H, paused.status, check)
    assert resumed.recorded == check.name
    assert resumed.status.to_api()["layout"]["violations"] == 2
    assert requested(resumed).rescale.check_records  # the repair's plan, now


def test_a_verify_job_that_failed_before_checking_stalls() -> None:
    failed = JobReport(JobKind.VERIFY, "s3a://x", Outcome.FAILED, "no table", "t0", "t1", {},
                       JobError("NotAHudiTableError", "no table"))  # fmt: skip
    decision = after(EVERY_6H, ready(), job(JobKind.VERIFY, failed, phase=JobPhase.FAILED))
    assert decision.status.phase == "Stalled"
    assert decision.submit is None


BROKEN = {"checkedAt": STAMP, "violations": 2, "partitions": 1, "items": ["day=2026-11-10"]}


def test_the_repair_plan_waits_for_approval_as_any_plan_and_its_apply_reads_every_record() -> None:
    status = ready(BROKEN)
    checked, plan_done = job(JobKind.VERIFY, verified(2)), job(JobKind.PLAN, planned(REPAIR_PLAN))

    waiting = after(EVERY_6H, status, checked, plan_done)
    assert waiting.status.phase == "AwaitingApproval"
    assert "1 of them to repair their layout" in (condition(waiting.status, READY).message or "")
    assert waiting.status.to_api()["plan"]["repairs"] == 1

    approved = {**EVERY_6H, "apply": {"policy": "Manual", "approvedPlan": REPAIR_PLAN.plan_id}}
    # The approval is a new generation, whose apply plans again itself, reading every record as the
    # broken layout asks (and refusing any plan but the approved one).
    applying = after(approved, waiting.status, checked, plan_done, generation=2)
    apply = requested(applying)
    assert isinstance(apply, ApplyRequest)
    assert (apply.rescale.approved_plan, apply.rescale.check_records) == (REPAIR_PLAN.plan_id, True)


def test_a_repair_is_an_event_in_history_and_the_layout_is_checked_again_at_once() -> None:
    jobs = (job(JobKind.VERIFY, verified(2)), job(JobKind.PLAN, planned(REPAIR_PLAN)),
            job(JobKind.APPLY, repaired(duplicates=1)))  # fmt: skip
    applied = after(EVERY_6H, ready(BROKEN), *jobs)

    assert applied.status.phase == "Ready"
    assert [reason for _, reason, _ in applied.events] == ["Applied", "Repaired"]
    assert "1 partition(s) repaired" in applied.events[1][2]
    assert (applied.status.to_api()["history"][0]["repairs"], applied.status.to_api()["history"][0]["duplicatesResolved"]) == (
        1, 1,
    )  # fmt: skip
    assert applied.status.to_api()["layout"]["recheck"] is True

    # Checked again at once, though the schedule's 6 hours have not passed.
    recheck = decide(Observed(EVERY_6H, 1, {}, applied.status, jobs), NOW)
    assert isinstance(requested(recheck), VerifyRequest)

    mended = after(EVERY_6H, recheck.status, job(JobKind.VERIFY, verified()))
    assert condition(mended.status, LAYOUT_HEALTHY).status == "True"
    assert mended.status.layout.recheck is None

    unmended = after(EVERY_6H, recheck.status, job(JobKind.VERIFY, verified(2)))
    assert unmended.status.phase == "Stalled"
    assert condition(unmended.status, READY).reason == "RepairIncomplete"
    assert unmended.submit is None


def test_the_layout_check_is_read_from_the_report_the_job_writes() -> None:
    check = verified(2).layout_check()
    assert check is not None
    assert (check.ok, check.violations, check.partition_count) == (False, 2, 1)
    assert planned(NOOP).layout_check() is None

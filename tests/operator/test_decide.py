"""`decide`, the operator's whole policy, as a table: what it does next for each situation it can meet.

Each row is (situation, what was observed, what must follow). The end-to-end tests on a real API server
show the same decisions carried out; this table shows every branch, fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from hbt_resources import SPEC
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.report import JobReport, Outcome
from hudi_bucket_operator.conditions import condition
from hudi_bucket_operator.reconcile import (
    HISTORY_LIMIT,
    JobPhase,
    Observed,
    ObservedJob,
    decide,
)
from hudi_bucket_operator.spec import PAUSED, RETRY

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
PLAN_ID, OTHER_PLAN_ID = "sha256:" + "1" * 64, "sha256:" + "0" * 64
PLAN = {
    "id": PLAN_ID,
    "noop": False,
    "partitions": 1,
    "rows": 1000,
    "changes": [{"partition": "day=2026-11-11", "old_buckets": 4, "new_buckets": 16, "bytes": 10}],
}
CONFIG = {"instant": "20261123110000000", "expressions": "11-11,16", "default": 4}


def report(command: str, outcome: Outcome = Outcome.SUCCEEDED, **result: Any) -> JobReport:
    error = {"type": "PreflightError", "message": "MERGE_ON_READ", "hint": "compact it"}
    return JobReport(
        command, "s3a://x", outcome, f"{command}: {outcome.value}", "t0", "t1", result,
        error if outcome is Outcome.FAILED else None,
    )  # fmt: skip


def job(
    kind: JobKind,
    phase: JobPhase,
    result: JobReport | None = None,
    generation: int = 1,
    token: str = "",
    error: str = "",
) -> ObservedJob:
    sequence = 0 if kind is JobKind.PLAN else 1
    name = f"orders-{kind.value}-{generation}{token}"
    return ObservedJob(
        name, kind, generation, token, phase, f"2026-11-23T11:0{sequence}:00Z", sequence, error, result
    )


PLAN_DONE = job(JobKind.PLAN, JobPhase.COMPLETED, report("plan", plan=PLAN))


def recorded(observed_job: ObservedJob) -> dict[str, Any]:
    """The status after the operator recorded this job's result."""
    return {
        "lastJob": {
            "name": observed_job.name,
            "kind": observed_job.kind.value,
            "generation": observed_job.generation,
            "retryToken": observed_job.retry_token,
            "phase": observed_job.phase.value,
            "recorded": True,
        }
    }


@dataclass(frozen=True)
class Case:
    jobs: tuple[ObservedJob, ...] = ()
    spec: dict[str, Any] = field(default_factory=lambda: SPEC)
    generation: int = 1
    annotations: dict[str, str] = field(default_factory=dict)
    status: dict[str, Any] = field(default_factory=dict)
    # What must follow:
    phase: str | None = None  # None: the status is left as it was
    submit: str = ""  # "plan", "apply" or nothing
    records: str = ""  # the job whose result this decision records
    says: str = ""  # in the Ready condition's message
    event: str = ""  # the reason of the one event posted


MANUAL_APPROVED = {**SPEC, "apply": {"policy": "Manual", "approvedPlan": PLAN_ID}}
AUTOMATIC = {**SPEC, "apply": {"policy": "Automatic"}}
CASES = {
    "a new table is planned": Case(phase="Planning", submit="plan", event="Planning"),
    "a paused new table starts nothing": Case(annotations={PAUSED: "true"}, phase="Paused"),
    "an invalid spec stalls, starts nothing": Case(
        spec={"table": {"uri": "s3a://x"}, "buckets": {"default": 0}}, phase="Stalled", says="default"
    ),
    "a plan in flight is waited for": Case(
        jobs=(job(JobKind.PLAN, JobPhase.RUNNING),), phase="Planning", says="running"
    ),
    "any job in flight is waited for, even an older generation's": Case(
        jobs=(job(JobKind.APPLY, JobPhase.PENDING, generation=1),), generation=2, phase="Applying"
    ),
    "a plan waits for approval under the Manual policy": Case(
        jobs=(PLAN_DONE,), phase="AwaitingApproval", records=PLAN_DONE.name, says=f"approvedPlan to {PLAN_ID}",
        event="AwaitingApproval",
    ),
    "an approved plan is applied": Case(
        jobs=(PLAN_DONE,), spec=MANUAL_APPROVED, phase="Applying", submit="apply", records=PLAN_DONE.name,
        event="Applying",
    ),
    "another plan's approval does not apply this one": Case(
        jobs=(PLAN_DONE,), spec={**SPEC, "apply": {"policy": "Manual", "approvedPlan": OTHER_PLAN_ID}},
        phase="AwaitingApproval", records=PLAN_DONE.name, event="AwaitingApproval",
    ),
    "the Automatic policy applies every plan": Case(
        jobs=(PLAN_DONE,), spec=AUTOMATIC, phase="Applying", submit="apply", records=PLAN_DONE.name,
        event="Applying",
    ),
    "an approved plan waits while paused, unrecorded": Case(
        jobs=(PLAN_DONE,), spec=AUTOMATIC, annotations={PAUSED: "true"}, phase="Paused"
    ),
    "a plan that changes nothing is Ready": Case(
        jobs=(job(JobKind.PLAN, JobPhase.COMPLETED, report("plan", plan={**PLAN, "noop": True})),),
        phase="Ready", records="orders-plan-1", says="already matches", event="Converged",
    ),
    "a failed plan stalls with the job's own words": Case(
        jobs=(job(JobKind.PLAN, JobPhase.FAILED, report("plan", Outcome.FAILED)),),
        phase="Stalled", records="orders-plan-1", says="MERGE_ON_READ (compact it)", event="JobFailed",
    ),
    "a job that failed without a report stalls with the Spark Operator's message": Case(
        jobs=(job(JobKind.PLAN, JobPhase.FAILED, error="driver pod OOMKilled"),),
        phase="Stalled", records="orders-plan-1", says="OOMKilled", event="JobFailed",
    ),
    "a completed apply is Ready and goes into history": Case(
        jobs=(PLAN_DONE, job(JobKind.APPLY, JobPhase.COMPLETED, report("apply", plan=PLAN, config=CONFIG,
                                                                         instant=CONFIG["instant"]))),
        status=recorded(PLAN_DONE), phase="Ready", records="orders-apply-1", says="apply: Succeeded",
        event="Applied",
    ),
    "an apply that found nothing to do is Ready": Case(
        jobs=(PLAN_DONE, job(JobKind.APPLY, JobPhase.COMPLETED, report("apply", Outcome.NO_CHANGE))),
        status=recorded(PLAN_DONE), phase="Ready", records="orders-apply-1", says="apply: NoChange",
    ),
    "a recorded job is never evaluated again": Case(
        jobs=(PLAN_DONE,), status=recorded(PLAN_DONE)
    ),
    "a finished generation whose jobs are gone stays as it is": Case(status=recorded(PLAN_DONE)),
    "a stalled table retries on a new retry token": Case(
        jobs=(job(JobKind.PLAN, JobPhase.FAILED, report("plan", Outcome.FAILED)),),
        status=recorded(job(JobKind.PLAN, JobPhase.FAILED)), annotations={RETRY: "2"},
        phase="Planning", submit="plan", event="Planning",
    ),
    "a new generation is planned again": Case(
        jobs=(PLAN_DONE,), status=recorded(PLAN_DONE), generation=2, phase="Planning", submit="plan",
        event="Planning",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    observed = Observed(case.spec, case.generation, case.annotations, case.status, case.jobs)
    decision = decide(observed, NOW)

    assert decision.status["observedGeneration"] == case.generation
    if case.phase is None:
        assert decision.status == {**case.status, "observedGeneration": case.generation}
    else:
        assert decision.status["phase"] == case.phase
    assert (decision.submit.kind.value if decision.submit else "") == case.submit
    assert (decision.recorded or "") == case.records
    if case.records:
        assert decision.status["lastJob"] == {
            **decision.status["lastJob"],
            "name": case.records,
            "recorded": True,
        }
    if case.says:
        ready = condition(decision.status, "Ready")
        assert ready is not None
        assert case.says in ready["message"]
    assert [reason for _, reason, _ in decision.events] == ([case.event] if case.event else [])


def test_an_apply_carries_the_plan_it_was_approved_for_and_the_generation_and_token() -> None:
    observed = Observed(MANUAL_APPROVED, 3, {RETRY: "7"}, {}, (job(JobKind.PLAN, JobPhase.COMPLETED,
                        report("plan", plan=PLAN), generation=3, token="7"),))  # fmt: skip
    submit = decide(observed, NOW).submit
    assert submit is not None
    assert (submit.kind, submit.generation, submit.retry_token, submit.approved_plan) == (
        JobKind.APPLY, 3, "7", PLAN_ID,
    )  # fmt: skip


def test_history_keeps_the_newest_entries_first_and_is_bounded() -> None:
    old = [{"job": f"old-{i}"} for i in range(HISTORY_LIMIT)]
    applied = job(JobKind.APPLY, JobPhase.COMPLETED, report("apply", plan=PLAN, instant="9", rowsWritten=5))
    observed = Observed(SPEC, 1, {}, {**recorded(PLAN_DONE), "history": old}, (PLAN_DONE, applied))
    history = decide(observed, NOW).status["history"]
    assert len(history) == HISTORY_LIMIT
    assert history[0] | {"job": applied.name, "instant": "9", "rows": 5, "partitions": 1} == history[0]
    assert history[1] == old[0]


def test_a_condition_keeps_its_transition_time_while_its_status_holds() -> None:
    first = decide(Observed(SPEC, 1, {}, {}, (job(JobKind.PLAN, JobPhase.PENDING),)), NOW).status
    later = datetime(2026, 11, 23, 12, 5, tzinfo=UTC)
    second = decide(Observed(SPEC, 1, {}, first, (job(JobKind.PLAN, JobPhase.RUNNING),)), later).status
    before, after = condition(first, "Reconciling"), condition(second, "Reconciling")
    assert before is not None
    assert after is not None
    assert after["lastTransitionTime"] == before["lastTransitionTime"]

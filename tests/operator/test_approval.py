"""Approving a plan starts its apply at once: the apply plans again itself and refuses any plan but the
approved one, so the approval's generation runs no second planning job. Anything else that changed plans
again; an apply that finds the table changed since reports the plan it found, which awaits approval."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

from hudi_bucket.contract.reports import ApplyResult, JobError, JobReport, Outcome, PlanResult, TableBuckets
from hudi_bucket.contract.requests import ApplyRequest, JobKind, PlanRequest
from hudi_bucket.core.planning import ChangeReason, PartitionChange, Plan
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import PlanNotApprovedError
from hudi_bucket_operator.decide import decisions
from hudi_bucket_operator.decide.decisions import Decision, JobPhase, ObservedJob
from hudi_bucket_operator.decide.reconcile import decide
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import APPROVE, DECIDED_BY, DENY, REASON, RETRY
from hudi_bucket_operator.resource.table_status import TableStatus
from lib.hbt_resources import ANYWHERE, SPEC

# Every pass sees admins who let tables be anywhere (the operator's default lets them be nowhere).
Observed = partial(decisions.Observed, policy=Policy(JobDefaults(allowed_table_uris=ANYWHERE)))

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
RULES = BucketRules.parse("11-11,16", 4)
PLAN = Plan(RULES, None, (PartitionChange("day=2026-11-11", 4, 16, 4, 1000, 10, ChangeReason.RESCALE),), "1")
# Another writer rescaled the partition since: the same rules, another change.
CHANGED = Plan(
    RULES, None, (PartitionChange("day=2026-11-11", 2, 16, 4, 1000, 10, ChangeReason.RESCALE),), "2"
)


def approving(plan: Plan, **apply: Any) -> dict[str, Any]:
    return {**SPEC, "apply": {"policy": "Manual", "approvedPlan": plan.plan_id, **apply}}


def plan_job(generation: int = 1, token: str = "") -> ObservedJob:
    result = PlanResult(PLAN.reported(), {}).to_dict()
    report = JobReport(
        JobKind.PLAN,
        "s3a://x",
        Outcome.SUCCEEDED,
        "planned",
        "t0",
        "t1",
        result,
        table_buckets=TableBuckets(),
    )
    return ObservedJob(
        f"plan-{generation}", JobKind.PLAN, generation, token, JobPhase.COMPLETED, "t1", 0, "", report
    )


def awaiting_approval(token: str = "") -> TableStatus:
    """The status once the first plan was recorded: AwaitingApproval."""
    observed = Observed(SPEC, 1, {RETRY: token} if token else {}, TableStatus(), (plan_job(token=token),))
    decision = decide(observed, NOW)
    assert decision.status.phase == "AwaitingApproval"
    return decision.status


def next_pass(spec: dict[str, Any], status: TableStatus, *jobs: ObservedJob, token: str = "") -> Decision:
    return decide(Observed(spec, 2, {RETRY: token} if token else {}, status, jobs), NOW)


def test_an_approval_alone_starts_the_apply_of_the_plan_awaiting_it_without_planning_again() -> None:
    decision = next_pass(approving(PLAN), awaiting_approval())

    assert decision.submit is not None
    assert isinstance(decision.submit.request, ApplyRequest)
    assert (decision.submit.approved_plan, decision.submit.generation) == (PLAN.plan_id, 2)
    assert decision.status.phase == "Applying"
    assert [reason for _, reason, _ in decision.events] == ["Applying"]


def test_a_plan_awaiting_approval_records_what_it_was_planned_from() -> None:
    status = awaiting_approval()
    assert status.plan is not None
    assert len(status.plan.basis or "") == 16
    assert (
        awaiting_approval().plan or status.plan
    ).basis == status.plan.basis  # the same spec, the same basis


def test_an_approval_with_other_changes_plans_again() -> None:
    changed = {**approving(PLAN), "buckets": {**SPEC["buckets"], "default": 8}}
    decision = next_pass(changed, awaiting_approval())
    assert decision.submit is not None
    assert isinstance(decision.submit.request, PlanRequest)


def test_a_retry_with_the_approval_plans_again() -> None:
    decision = next_pass(approving(PLAN), awaiting_approval(), token="2")
    assert decision.submit is not None
    assert isinstance(decision.submit.request, PlanRequest)


def test_approving_another_id_plans_again() -> None:
    decision = next_pass(approving(CHANGED), awaiting_approval())
    assert decision.submit is not None
    assert isinstance(decision.submit.request, PlanRequest)


def test_an_apply_that_found_the_table_changed_puts_the_plan_it_found_up_for_approval() -> None:
    started = next_pass(approving(PLAN), awaiting_approval())
    found = PlanResult(CHANGED.reported(), {}).to_dict()
    error = JobError(PlanNotApprovedError.__name__, "the plan is another", PlanNotApprovedError.hint)
    report = JobReport(JobKind.APPLY, "s3a://x", Outcome.FAILED, "refused", "t1", "t2", found, error)
    refused = ObservedJob("apply-2", JobKind.APPLY, 2, "", JobPhase.FAILED, "t2", 1, "", report)

    decision = next_pass(approving(PLAN), started.status, refused)

    assert decision.submit is None
    assert decision.status.phase == "AwaitingApproval"
    assert decision.status.to_api()["plan"]["id"] == CHANGED.plan_id
    assert f"approvedPlan to {CHANGED.plan_id}" in decision.status.conditions[0].message
    assert decision.recorded == "apply-2"

    # Approving the plan it found applies that one, again without a planning job.
    assert decision.status.last_job is not None
    last_job = decision.status.last_job.model_copy(update={"recorded": True})
    recorded = decision.status.model_copy(update={"last_job": last_job})
    again = decide(Observed(approving(CHANGED), 3, {}, recorded, (refused,)), NOW)
    assert again.submit is not None
    assert (again.submit.kind, again.submit.approved_plan) == (JobKind.APPLY, CHANGED.plan_id)


# --- approved or denied in the cluster, by annotation (kubectl hbt approve|deny) ---------------------------

BY_ALICE = {DECIDED_BY: "alice", REASON: "reviewed in CHG-1234"}


def recorded(status: TableStatus) -> TableStatus:
    """The status once the controller recorded its last job's result."""
    assert status.last_job is not None
    return status.model_copy(update={"last_job": status.last_job.model_copy(update={"recorded": True})})


def annotated(status: TableStatus, annotations: dict[str, str], *jobs: ObservedJob) -> Decision:
    """A pass of the same generation: an annotation changes no spec."""
    return decide(Observed(SPEC, 1, annotations, status, jobs), NOW)


def test_a_plan_approved_by_annotation_is_applied_in_its_generation_saying_by_whom_and_why() -> None:
    waiting = recorded(awaiting_approval())
    assert annotated(waiting, {}, plan_job()).submit is None  # nothing without a decision

    decision = annotated(waiting, {APPROVE: PLAN.plan_id, **BY_ALICE}, plan_job())

    assert decision.submit is not None
    assert (decision.submit.kind, decision.submit.approved_plan) == (JobKind.APPLY, PLAN.plan_id)
    assert decision.submit.generation == 1
    assert decision.status.phase == "Applying"
    [(_, reason, message)] = decision.events
    assert reason == "Applying"
    assert message.endswith("approved by alice: reviewed in CHG-1234")


def test_an_approval_of_another_plan_approves_nothing() -> None:
    waiting = recorded(awaiting_approval())
    assert annotated(waiting, {APPROVE: CHANGED.plan_id, **BY_ALICE}, plan_job()).submit is None


def test_the_apply_of_a_plan_approved_by_annotation_records_who_approved_it_and_why() -> None:
    annotations = {APPROVE: PLAN.plan_id, **BY_ALICE}
    started = annotated(recorded(awaiting_approval()), annotations, plan_job())
    result = ApplyResult(PLAN.reported(), "20261123120000000", 4, 10, 1000, 1.5, True, (), {}).to_dict()
    report = JobReport(JobKind.APPLY, "s3a://x", Outcome.SUCCEEDED, "applied", "t1", "t2", result)
    applied = ObservedJob("apply-1", JobKind.APPLY, 1, "", JobPhase.COMPLETED, "t2", 1, "", report)

    decision = annotated(started.status, annotations, plan_job(), applied)

    assert decision.status.phase == "Ready"
    entry = (decision.status.history or [])[0]
    assert (entry.plan_id, entry.outcome, entry.decided_by, entry.reason) == (
        PLAN.plan_id, "Succeeded", "alice", "reviewed in CHG-1234",
    )  # fmt: skip


def test_a_denied_plan_is_not_applied_and_stalls_the_table_saying_who_and_why_once() -> None:
    denied = {DENY: PLAN.plan_id, DECIDED_BY: "bob", REASON: "wait for the quarter end"}
    decision = annotated(recorded(awaiting_approval()), denied, plan_job())

    assert decision.submit is None
    assert decision.status.phase == "Stalled"
    stalled = decision.status.conditions[0]
    assert stalled.reason == "PlanDenied"
    assert f"plan {PLAN.plan_id} denied by bob: wait for the quarter end" in (stalled.message or "")
    [entry] = decision.status.history or []
    assert (entry.plan_id, entry.outcome, entry.decided_by, entry.reason) == (
        PLAN.plan_id, "Denied", "bob", "wait for the quarter end",
    )  # fmt: skip
    assert [reason for _, reason, _ in decision.events] == ["PlanDenied"]

    again = annotated(decision.status, denied, plan_job())
    assert again.submit is None
    assert len(again.status.history or []) == 1  # recorded once

    # A deny stands until the plan is approved after all.
    approved = annotated(decision.status, {APPROVE: PLAN.plan_id, **BY_ALICE}, plan_job())
    assert approved.submit is not None
    assert approved.submit.approved_plan == PLAN.plan_id


def test_a_deny_wins_over_an_approval_of_the_same_plan_in_the_spec() -> None:
    observed = Observed(approving(PLAN), 1, {DENY: PLAN.plan_id}, TableStatus(), (plan_job(),))
    decision = decide(observed, NOW)
    assert decision.submit is None
    assert decision.status.phase == "Stalled"
    assert decision.recorded == "plan-1"

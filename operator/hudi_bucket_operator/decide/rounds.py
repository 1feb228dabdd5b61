"""The rounds of jobs: a generation's chain under its retry token, the one report ``decide`` will read, and
the scheduled rounds of a settled table (a layout check when spec.verify says, a re-measurement when
replanEvery says), each under a retry token of its own. Pure."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta

from hudi_bucket.contract.reports import JobReport
from hudi_bucket.contract.requests import ApplyRequest, JobKind, PlanRequest, VerifyRequest
from hudi_bucket.errors import PlanNotApprovedError
from hudi_bucket_operator.decide import approval
from hudi_bucket_operator.decide.decisions import (
    SEQUENCE,
    Decision,
    Observed,
    ObservedJob,
    SubmitJob,
    layout_broken,
)
from hudi_bucket_operator.resource import conditions
from hudi_bucket_operator.resource.api import RETRY, VERIFY
from hudi_bucket_operator.resource.conditions import Reason, normal
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.resource.table_status import LastJob, LayoutFound, TableStatus

SIZING_ROUND = "@sizing-"  # in a retry token: the start (Unix seconds) of a scheduled re-measurement
VERIFY_ROUND = "@verify-"  # in a retry token: the start (Unix seconds) of a layout check
ROUNDS = (SIZING_ROUND, VERIFY_ROUND)


def report_needed(observed: Observed) -> ObservedJob | None:
    """The one job whose report ``decide`` will read: the latest of this generation's chain, once it
    has finished and until its result is recorded. Reports are fetched for it alone, not on every pass."""
    chain = current_chain(observed)
    if not chain or any(not j.phase.terminal for j in observed.jobs):
        return None
    latest, last = chain[-1], observed.status.last_job or LastJob()
    return None if last.name == latest.name and last.recorded else latest


def retry_token(observed: Observed) -> str:
    """The retry token this generation's jobs carry: the retry annotation's, followed by the round of
    a scheduled re-measurement when one started since (see ``_replan``). It changes only when a new
    plan is submitted, so a job in flight across a round's start is still recorded."""
    last = (observed.status.last_job or LastJob()).retry_token or ""
    return last if of_a_round(observed, last) else observed.annotations.get(RETRY, "")


def of_a_round(observed: Observed, token: str) -> bool:
    """Whether ``token`` is a scheduled round's (a layout check, a re-measurement) under the retry annotation."""
    base = observed.annotations.get(RETRY, "")
    return token.startswith(tuple(base + r for r in ROUNDS))


def plan_request(spec: TableSpec, status: TableStatus) -> PlanRequest | ApplyRequest | VerifyRequest:
    return spec.job_request(JobKind.PLAN, check_records=layout_broken(status))


def plan_basis(spec: TableSpec, status: TableStatus) -> str:
    """What a plan was made from, in a few characters: its job's request (the table, the rules or the
    sizing, the engine, what it checks). Another generation with the same basis would plan the same."""
    argv = plan_request(spec, status).to_argv()
    return hashlib.sha256(json.dumps(argv).encode()).hexdigest()[:16]


def approved_as_planned(
    spec: TableSpec, annotations: Mapping[str, str], status: TableStatus, token: str
) -> bool:
    """Whether a new generation only approved the plan awaiting approval (or made the policy Automatic):
    then its apply starts at once. A retry (a new token) or any change to what was planned plans again."""
    plan, last = status.plan, status.last_job or LastJob()
    return (
        status.phase == Reason.AWAITING_APPROVAL
        and plan is not None
        and bool(plan.id)
        and approval.approved(spec, annotations, plan.id)
        and plan.basis == plan_basis(spec, status)
        and (last.retry_token or "") == token
    )


def planned_anew(report: JobReport) -> bool:
    """Whether an apply refused because the table changed since its plan was approved, and reported the
    plan it found instead (which then awaits approval, as a plan job's would)."""
    return (
        report.error is not None
        and report.error.type == PlanNotApprovedError.__name__
        and "plan" in report.result
    )


def scheduled(
    observed: Observed, status: TableStatus, spec: TableSpec, paused: bool, now: datetime
) -> Decision:
    """A settled table: a layout check or a re-measurement when one is due, else nothing."""
    return (
        _verify_round(observed, status, spec, paused, now)
        or _replan(observed, status, spec, paused, now)
        or Decision(status, spec=spec)
    )


def _verify_round(
    observed: Observed, status: TableStatus, spec: TableSpec, paused: bool, now: datetime
) -> Decision | None:
    """A layout check of a Ready table, when spec.verify's schedule says (counted from the last check;
    a table never checked is checked now), or at once after a repair; None when none is due. Like a
    re-measurement, it starts a new round of jobs under a new retry token."""
    layout = status.layout or LayoutFound()
    if paused or not conditions.is_ready(status):
        return None
    asked = _moment(observed.annotations.get(VERIFY, ""))
    if layout.recheck:
        message = "checking the layout again after its repair"
    elif asked is not None and (not layout.checked_at or asked > datetime.fromisoformat(layout.checked_at)):
        message = f"checking the layout, as asked at {observed.annotations[VERIFY]} (the {VERIFY} annotation)"
    elif spec.verify_schedule is None:
        return None
    else:
        checked = layout.checked_at
        if checked and now < spec.verify_schedule.next_after(datetime.fromisoformat(checked)):
            return None
        message = f"checking the layout (spec.verify.schedule {spec.verify_schedule.text!r})"
    token = observed.annotations.get(RETRY, "") + VERIFY_ROUND + str(int(now.timestamp()))
    submit = SubmitJob(spec.job_request(JobKind.VERIFY), observed.generation, token, SEQUENCE[JobKind.VERIFY])
    return Decision(
        conditions.scheduled(status, Reason.VERIFYING),
        submit=submit,
        requeue=True,
        events=(normal(Reason.VERIFYING, message),),
        spec=spec,
    )


def _moment(text: str) -> datetime | None:
    """An annotation's time (RFC 3339), or None when it holds none: a value set by hand may be anything."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _replan(
    observed: Observed, status: TableStatus, spec: TableSpec, paused: bool, now: datetime
) -> Decision | None:
    """A new plan for a sized table that is Ready and whose last measurement is ``replanEvery`` old, so
    its counts follow its data as it grows; None when none is due. It starts a new round of jobs under
    a new retry token (the annotation's and the round's start), as a retry would."""
    measured_at = status.plan.sizing.measured if status.plan and status.plan.sizing else None
    if spec.replan_every is None or paused or not conditions.is_ready(status) or not measured_at:
        return None
    measured = datetime.fromisoformat(measured_at)
    if now < measured + timedelta(seconds=spec.replan_every):
        return None
    token = observed.annotations.get(RETRY, "") + SIZING_ROUND + str(int(now.timestamp()))
    message = f"measuring again: the last sizing, at {measured_at}, is older than replanEvery"
    return Decision(
        conditions.scheduled(status, Reason.PLANNING),
        submit=SubmitJob(plan_request(spec, status), observed.generation, token, 0),
        requeue=True,
        events=(normal(Reason.PLANNING, message),),
        spec=spec,
    )


def scheduled_work(observed: Observed, job: ObservedJob) -> bool:
    """Whether ``job`` is scheduled work (a layout check, a re-measurement, the plan after either) on a
    table still Ready: what it finds has not changed anything yet."""
    return conditions.is_ready(observed.status) and of_a_round(observed, job.retry_token)


def recorded_up_to(last: LastJob, latest: ObservedJob) -> bool:
    """Whether the job the status last recorded is ``latest``, or comes after it in its chain (a job
    deleted before the ones it followed: an apply cancelled at its deadline)."""
    if last.name == latest.name:
        return True
    same_chain = last.generation == latest.generation and (last.retry_token or "") == latest.retry_token
    return same_chain and last.kind is not None and SEQUENCE[JobKind(last.kind)] > latest.sequence


def current_chain(observed: Observed) -> list[ObservedJob]:
    """This generation's jobs (for the current retry token), in the order they ran."""
    token = retry_token(observed)
    return sorted(
        (j for j in observed.jobs if j.generation == observed.generation and j.retry_token == token),
        key=lambda j: (j.sequence, j.created),
    )

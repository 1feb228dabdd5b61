"""What to do next for one HudiBucketTable: a pure function of what was observed.

``decide`` sees the spec, generation and annotations, the status written last time, and the jobs found
(SparkApplications or local processes, with their reports). Jobs are the memory of work in flight;
the status is the memory of work done, since finished jobs are deleted after their TTL. After an
operator restart the same inputs give the same decision, so tracking resumes where it was.

Flow per generation: plan job -> (policy or approval) -> apply job -> Ready. A failed job leaves the
resource Stalled until the spec or the retry annotation changes.

With spec.verify, a Ready table's layout is checked when its schedule says (a round of jobs: verify ->
plan -> ...). The check becomes status.layout and the LayoutHealthy condition. While the layout is known
to be broken, plan and apply read every record (``check_records``), so the plan repairs the partitions
concerned and is approved like any other; after a repair the layout is checked again at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from hudi_bucket.contract.reports import (
    ApplyResult,
    JobReport,
    LayoutCheck,
    Outcome,
    PlanResult,
    ReportError,
    TableBuckets,
)
from hudi_bucket.contract.requests import ApplyRequest, JobKind, PlanRequest, VerifyRequest
from hudi_bucket.core.planning import Plan
from hudi_bucket_operator import conditions, maintenance
from hudi_bucket_operator.job_policy import JobDefaults, job_settings
from hudi_bucket_operator.spec import (
    APPLY_NOW,
    PAUSED,
    RETRY,
    ApplyPolicy,
    InvalidSpecError,
    TableSpec,
    parse_spec,
)
from hudi_bucket_operator.writers import ObservedWriter, Writer, WriterAction

HISTORY_LIMIT = 10
SIZING_ROUND = "@sizing-"  # in a retry token: the start (Unix seconds) of a scheduled re-measurement
VERIFY_ROUND = "@verify-"  # in a retry token: the start (Unix seconds) of a layout check
ROUNDS = (SIZING_ROUND, VERIFY_ROUND)
PLAN_ITEMS = 20  # changes status.plan lists, the largest first (the CRD allows 100)
LAYOUT_ITEMS = 20  # partitions status.layout names (the CRD allows 100)
# A job's place in its round: a check first, then the plan, then its apply.
SEQUENCE = {JobKind.VERIFY: -1, JobKind.PLAN: 0, JobKind.APPLY: 1}


class JobPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"

    @property
    def terminal(self) -> bool:
        return self in (JobPhase.COMPLETED, JobPhase.FAILED)


@dataclass(frozen=True)
class ObservedJob:
    name: str
    kind: JobKind
    generation: int
    retry_token: str
    phase: JobPhase
    created: str  # ISO timestamp: orders jobs of one generation
    sequence: int = 0  # position in its generation's chain: plan 0, apply 1
    error: str = ""  # the job system's own message (SparkApplication errorMessage)
    report: JobReport | None = None


@dataclass(frozen=True)
class Observed:
    spec: Mapping[str, Any]
    generation: int
    annotations: Mapping[str, str]
    status: Mapping[str, Any]
    jobs: Sequence[ObservedJob] = ()
    job_defaults: JobDefaults | None = None  # the operator's bounds on jobs (None: local processes)
    # The table's writers as the API shows them, by "Kind/name", when ``writers_needed`` named any
    # (None: not looked at, as in the local mode).
    writers: Mapping[str, ObservedWriter] | None = None


@dataclass(frozen=True)
class SubmitJob:
    """A job to start: what it does (its request, without a report destination) and what it is for."""

    request: PlanRequest | ApplyRequest | VerifyRequest
    generation: int
    retry_token: str
    sequence: int

    @property
    def kind(self) -> JobKind:
        return self.request.kind

    @property
    def approved_plan(self) -> str:
        return self.request.rescale.approved_plan if isinstance(self.request, ApplyRequest) else ""


@dataclass(frozen=True)
class Decision:
    status: dict[str, Any]
    submit: SubmitJob | None = None
    recorded: str | None = None  # a job whose result this decision records (its report can go)
    events: tuple[tuple[str, str, str], ...] = ()  # (type, reason, message)
    requeue: bool = False  # look again soon: a job is in flight
    spec: TableSpec | None = field(default=None, compare=False)
    # What to do to the table's writers, once this status (which records their prior state) is written.
    writer_actions: tuple[WriterAction, ...] = ()
    poll_seconds: float | None = None  # look again this soon: writers are moving (no watch tells us)


def decide(observed: Observed, now: datetime) -> Decision:
    decision = _decide(observed, now)
    if decision.submit is None or decision.spec is None or observed.job_defaults is None:
        return decision
    try:  # a job the operator would not run is refused here, once, not on every submit
        job_settings(decision.spec.spark, observed.job_defaults)
    except InvalidSpecError as err:
        reason = type(err).__name__.removesuffix("Error")
        return _stalled(observed, decision.status, now, reason, str(err), decision)
    return decision


def _decide(observed: Observed, now: datetime) -> Decision:
    status = dict(observed.status)
    status["observedGeneration"] = observed.generation
    token = _token(observed)
    paused = observed.annotations.get(PAUSED, "").lower() == "true"
    try:
        spec = parse_spec(observed.spec)
    except InvalidSpecError as err:
        if maintenance.holding(status.get("writers")):  # writers paused: resume them first
            return _maintain(observed, status, None, now, invalid=str(err))
        return _stalled(observed, status, now, "InvalidSpec", str(err))

    chain = _chain(observed)
    in_flight = [j for j in observed.jobs if not j.phase.terminal]
    if in_flight and maintenance.holding(status.get("writers")):
        # The apply runs with the writers paused; they are resumed once it ends.
        status = conditions.progressing(
            _with_last_job(status, in_flight[-1]), now, "Applying",
            f"job {in_flight[-1].name} is {in_flight[-1].phase.value.lower()} (the writers are paused)",
        )  # fmt: skip
        return Decision(status, requeue=True, spec=spec)
    if in_flight:
        job = in_flight[-1]
        reason = {JobKind.VERIFY: "Verifying", JobKind.PLAN: "Planning"}.get(job.kind, "Applying")
        if job.phase is JobPhase.PENDING and (status.get("lastJob") or {}).get("name") == job.name:
            # Still as submitted: the pass that submitted it said what it is for, and a write saying
            # "pending" instead would be a second status write per job for nothing new.
            return Decision(status, requeue=True, spec=spec)
        status = _with_last_job(status, job)
        if _scheduled_work(observed, job):
            return Decision(conditions.scheduled(status, reason), requeue=True, spec=spec)
        return Decision(
            conditions.progressing(status, now, reason, f"job {job.name} is {job.phase.value.lower()}"),
            requeue=True,
            spec=spec,
        )

    if maintenance.active(status.get("writers")):
        return _maintain(observed, status, spec, now)
    latest = chain[-1] if chain else None
    last = status.get("lastJob") or {}
    if latest is not None and last.get("name") == latest.name and last.get("recorded"):
        # Its result is in the status already; its report may be gone.
        return _scheduled(observed, status, spec, paused, now)
    if latest is None:
        done = last.get("generation") == observed.generation and last.get("retryToken", "") == token
        if done and last.get("recorded"):
            # This generation's jobs finished and were cleaned up.
            return _scheduled(observed, status, spec, paused, now)
        if paused:
            return Decision(conditions.paused(status, now), spec=spec)
        submit = SubmitJob(_plan_request(spec, status), observed.generation, token, 0)
        # A new table's first plan is routine and its status says so: no Event, which at a GitOps sync
        # of many tables would be a quarter of the operator's writes. A change or a retry gets one.
        first = not last
        return Decision(
            conditions.progressing(status, now, "Planning", "planning which partitions change"),
            submit=submit,
            requeue=True,
            events=() if first else (("Normal", "Planning", f"generation {observed.generation}: planning"),),
            spec=spec,
        )
    return _recorded(_after_job(_with_last_job(status, latest), spec, latest, paused, now, observed))


def report_needed(observed: Observed) -> ObservedJob | None:
    """The one job whose report ``decide`` will read: the latest of this generation's chain, once it
    has finished and until its result is recorded. Reports are fetched for it alone, not on every pass."""
    chain = _chain(observed)
    if not chain or any(not j.phase.terminal for j in observed.jobs):
        return None
    latest, last = chain[-1], observed.status.get("lastJob") or {}
    return None if last.get("name") == latest.name and last.get("recorded") else latest


def _token(observed: Observed) -> str:
    """The retry token this generation's jobs carry: the retry annotation's, followed by the round of
    a scheduled re-measurement when one started since (see ``_replan``). It changes only when a new
    plan is submitted, so a job in flight across a round's start is still recorded."""
    last = str((observed.status.get("lastJob") or {}).get("retryToken", ""))
    return last if _of_a_round(observed, last) else observed.annotations.get(RETRY, "")


def _of_a_round(observed: Observed, token: str) -> bool:
    """Whether ``token`` is a scheduled round's (a layout check, a re-measurement) under the retry annotation."""
    base = observed.annotations.get(RETRY, "")
    return token.startswith(tuple(base + r for r in ROUNDS))


def _plan_request(spec: TableSpec, status: Mapping[str, Any]) -> PlanRequest | ApplyRequest | VerifyRequest:
    return spec.job_request(JobKind.PLAN, check_records=_layout_broken(status))


def _layout_broken(status: Mapping[str, Any]) -> bool:
    """Whether the last layout check found violations: plans and applies then check every record."""
    return bool((status.get("layout") or {}).get("violations"))


def _scheduled(
    observed: Observed, status: dict[str, Any], spec: TableSpec, paused: bool, now: datetime
) -> Decision:
    """A settled table: a layout check or a re-measurement when one is due, else nothing."""
    return (
        _verify_round(observed, status, spec, paused, now)
        or _replan(observed, status, spec, paused, now)
        or Decision(status, spec=spec)
    )


def _verify_round(
    observed: Observed, status: dict[str, Any], spec: TableSpec, paused: bool, now: datetime
) -> Decision | None:
    """A layout check of a Ready table, when spec.verify's schedule says (counted from the last check;
    a table never checked is checked now), or at once after a repair; None when none is due. Like a
    re-measurement, it starts a new round of jobs under a new retry token."""
    layout = status.get("layout") or {}
    if paused or not conditions.is_ready(status):
        return None
    if layout.get("recheck"):
        message = "checking the layout again after its repair"
    elif spec.verify is None:
        return None
    else:
        checked = layout.get("checkedAt")
        if checked and now < spec.verify.next_after(datetime.fromisoformat(checked)):
            return None
        message = f"checking the layout (spec.verify.schedule {spec.verify.text!r})"
    token = observed.annotations.get(RETRY, "") + VERIFY_ROUND + str(int(now.timestamp()))
    submit = SubmitJob(spec.job_request(JobKind.VERIFY), observed.generation, token, SEQUENCE[JobKind.VERIFY])
    return Decision(
        conditions.scheduled(status, "Verifying"),
        submit=submit,
        requeue=True,
        events=(("Normal", "Verifying", message),),
        spec=spec,
    )


def _replan(
    observed: Observed, status: dict[str, Any], spec: TableSpec, paused: bool, now: datetime
) -> Decision | None:
    """A new plan for a sized table that is Ready and whose last measurement is ``replanEvery`` old, so
    its counts follow its data as it grows; None when none is due. It starts a new round of jobs under
    a new retry token (the annotation's and the round's start), as a retry would."""
    sizing = (status.get("plan") or {}).get("sizing") or {}
    if spec.replan_every is None or paused or not conditions.is_ready(status) or not sizing.get("measured"):
        return None
    measured = datetime.fromisoformat(sizing["measured"])
    if now < measured + timedelta(seconds=spec.replan_every):
        return None
    token = observed.annotations.get(RETRY, "") + SIZING_ROUND + str(int(now.timestamp()))
    message = f"measuring again: the last sizing, at {sizing['measured']}, is older than replanEvery"
    return Decision(
        conditions.scheduled(status, "Planning"),
        submit=SubmitJob(_plan_request(spec, status), observed.generation, token, 0),
        requeue=True,
        events=(("Normal", "Planning", message),),
        spec=spec,
    )


def _scheduled_work(observed: Observed, job: ObservedJob) -> bool:
    """Whether ``job`` is scheduled work (a layout check, a re-measurement, the plan after either) on a
    table still Ready: what it finds has not changed anything yet."""
    return conditions.is_ready(observed.status) and _of_a_round(observed, job.retry_token)


def _chain(observed: Observed) -> list[ObservedJob]:
    """This generation's jobs (for the current retry token), in the order they ran."""
    token = _token(observed)
    return sorted(
        (j for j in observed.jobs if j.generation == observed.generation and j.retry_token == token),
        key=lambda j: (j.sequence, j.created),
    )


def _recorded(decision: Decision) -> Decision:
    """Mark in the status that the job's result is recorded, so it is never evaluated again."""
    if decision.recorded is None:
        return decision
    status = {**decision.status, "lastJob": {**decision.status["lastJob"], "recorded": True}}
    return replace(decision, status=status)


def _after_job(
    status: dict[str, Any],
    spec: TableSpec,
    job: ObservedJob,
    paused: bool,
    now: datetime,
    observed: Observed | None = None,
) -> Decision:
    report = job.report
    try:
        check = None if report is None else LayoutCheck.of(report)
    except ReportError as err:
        return _unusable(status, spec, job, err, now)
    if check is not None:  # a verify job that checked: passed, or failed on violations
        return _after_verify(status, spec, job, check, now)
    if job.phase is JobPhase.FAILED or report is None or report.outcome is Outcome.FAILED:
        message = _failure_message(job)
        stalled = conditions.stalled(status, now, "JobFailed", message)
        return Decision(stalled, recorded=job.name, events=(("Warning", "JobFailed", message),), spec=spec)
    try:
        if job.kind is JobKind.PLAN:
            return _after_plan(status, spec, job, report, paused, now, observed)
        return _after_apply(status, spec, job, report, now)
    except ReportError as err:
        return _unusable(status, spec, job, err, now)


def _unusable(
    status: dict[str, Any], spec: TableSpec, job: ObservedJob, err: ReportError, now: datetime
) -> Decision:
    message = f"{job.kind} job {job.name} finished, but its report cannot be used: {err}"
    stalled = conditions.stalled(status, now, "InvalidReport", message)
    return Decision(stalled, recorded=job.name, events=(("Warning", "InvalidReport", message),), spec=spec)


def _after_verify(
    status: dict[str, Any], spec: TableSpec, job: ObservedJob, check: LayoutCheck, now: datetime
) -> Decision:
    """Record the check, then plan (with every record read while the layout is broken): a repair, or
    whatever changed since the last plan. A layout still broken right after its repair stalls."""
    rechecked = bool((status.get("layout") or {}).get("recheck"))
    status["layout"] = check.to_status(LAYOUT_ITEMS)
    if check.ok:
        message = f"no bucket layout violation found at {check.checked_at}"
        status = conditions.layout_health(status, now, True, "LayoutVerified", message)
        events: tuple[tuple[str, str, str], ...] = ()
    else:
        named = ", ".join(check.partitions[:3]) + (" ..." if check.partition_count > 3 else "")
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(check.by_kind.items()))
        message = (
            f"{check.violations} bucket layout violation(s) ({kinds}) in {check.partition_count} "
            f"partition(s): {named}"
        )
        status = conditions.layout_health(status, now, False, "LayoutViolation", message)
        if rechecked:
            stalled = f"the repair did not mend the layout: {message}"
            return Decision(
                conditions.stalled(status, now, "RepairIncomplete", stalled),
                recorded=job.name,
                events=(("Warning", "LayoutViolation", stalled),),
                spec=spec,
            )
        events = (("Warning", "LayoutViolation", f"{message}; planning a repair"),)
    submit = SubmitJob(_plan_request(spec, status), job.generation, job.retry_token, SEQUENCE[JobKind.PLAN])
    planning = "planning a repair" if not check.ok else "planning again after the layout check"
    return Decision(
        conditions.scheduled(status, "Planning")
        if check.ok and conditions.is_ready(status)
        else conditions.progressing(status, now, "Planning", planning),
        submit=submit,
        recorded=job.name,
        requeue=True,
        events=events,
        spec=spec,
    )


def _after_plan(
    status: dict[str, Any],
    spec: TableSpec,
    job: ObservedJob,
    report: JobReport,
    paused: bool,
    now: datetime,
    observed: Observed | None = None,
) -> Decision:
    planned = PlanResult.from_dict(report.result)
    plan = planned.plan
    _record_table(status, plan, TableBuckets.from_dict(report.result))
    if planned.sizing_summary is not None:
        # When it measured: a table with spec.buckets.sizing.replanEvery is planned again from then.
        status["plan"]["sizing"] = {**planned.sizing_summary.to_dict(), "measured": report.finished}
    if plan.is_noop:
        message = "the table already matches the rules"
        ready = conditions.ready(status, now, "Converged", message)
        return Decision(ready, recorded=job.name, events=(("Normal", "Converged", message),), spec=spec)
    approved = spec.policy is ApplyPolicy.AUTOMATIC or spec.approved_plan == plan.plan_id
    totals = plan.totals()
    described = f"plan {plan.plan_id} rewrites {totals['partitions']} partition(s), {totals['rows']} row(s)"
    if totals["repairs"]:
        described += f" ({totals['repairs']} of them to repair their layout)"
    if totals["duplicateKeys"]:
        kept = "every copy kept" if spec.keep_duplicates else "one copy of each kept"
        described += f"; {totals['duplicateKeys']} key(s) found more than once ({kept})"
    if not approved:
        message = f"{described}: set spec.apply.approvedPlan to {plan.plan_id} to apply it"
        awaiting = conditions.awaiting(status, now, message)
        return Decision(
            awaiting, recorded=job.name, events=(("Normal", "AwaitingApproval", message),), spec=spec
        )
    if paused:
        # Not recorded: once the annotation goes, this plan is looked at again and applied.
        return Decision(conditions.paused(status, now), spec=spec)
    if plan.changes and (spec.window is not None or spec.writers.workloads) and observed is not None:
        # Partitions are rewritten: in the window only, with the writers paused (config alone needs neither).
        last = (status.get("writers") or {}).get("last")
        status["writers"] = maintenance.begin(
            plan.plan_id, job.generation, job.retry_token, _layout_broken(status), last
        )
        decision = _maintain(replace(observed, status=status), status, spec, now)
        events = (("Normal", "AwaitingWindow", decision.status["conditions"][0]["message"]),)
        if decision.status.get("phase") != maintenance.Step.AWAITING_WINDOW:
            events = (("Normal", "Approved", described),)
        return replace(decision, recorded=job.name, events=events + decision.events)
    request = spec.job_request(
        JobKind.APPLY, approved_plan=plan.plan_id, check_records=_layout_broken(status)
    )
    submit = SubmitJob(request, job.generation, job.retry_token, SEQUENCE[JobKind.APPLY])
    return Decision(
        conditions.progressing(status, now, "Applying", described),
        submit=submit,
        recorded=job.name,
        requeue=True,
        events=(("Normal", "Applying", described),),
        spec=spec,
    )


def _after_apply(
    status: dict[str, Any], spec: TableSpec, job: ObservedJob, report: JobReport, now: datetime
) -> Decision:
    result = ApplyResult.from_dict(report.result)
    _record_table(status, result.plan, TableBuckets.from_dict(report.result))
    if report.outcome is Outcome.NO_CHANGE:
        ready = conditions.ready(status, now, "Converged", report.message)
        return Decision(ready, recorded=job.name, spec=spec)
    entry = {
        "job": job.name,
        "instant": result.instant,
        "planId": result.plan.plan_id,
        "partitions": len(result.plan.changes),
        "rows": result.rows_written,
        "seconds": result.seconds,
        "outcome": report.outcome.value,
        "finished": report.finished,
    }
    events = [("Normal", "Applied", report.message)]
    if result.partitions_repaired:
        entry["repairs"] = result.partitions_repaired
        entry["duplicatesResolved"] = result.duplicates_resolved
        if status.get("layout"):  # checked again at once: LayoutHealthy says what the check finds
            status["layout"] = {**status["layout"], "recheck": True}
        events.append(
            (
                "Normal",
                "Repaired",
                f"{result.partitions_repaired} partition(s) repaired in {result.instant}, "
                f"{result.duplicates_resolved} key(s) held by two file groups resolved",
            )
        )
    status["history"] = [entry, *(status.get("history") or [])][:HISTORY_LIMIT]
    ready = conditions.ready(status, now, "Applied", report.message)
    return Decision(ready, recorded=job.name, events=tuple(events), spec=spec)


def _record_table(status: dict[str, Any], plan: Plan, table: TableBuckets) -> None:
    """The plan (bounded), and the config in force and partitions' bucket counts as the job last saw them.
    What sizing did is the plan job's to say: the apply of the same plan keeps it."""
    previous = status.get("plan") or {}
    status["plan"] = plan.summary(PLAN_ITEMS)
    if previous.get("id") == plan.plan_id and "sizing" in previous:
        status["plan"]["sizing"] = previous["sizing"]
    facts = table.to_dict()
    for key in ("config", "partitions"):
        if facts[key] is not None:
            status[key] = facts[key]


def _stalled(
    observed: Observed,
    status: dict[str, Any],
    now: datetime,
    reason: str,
    message: str,
    instead_of: Decision | None = None,
) -> Decision:
    """Stalled until someone changes something; the Warning event is posted once, not on every pass."""
    held = conditions.condition(dict(observed.status), conditions.STALLED) or {}
    told = (held.get("status"), held.get("reason"), held.get("message")) == ("True", reason, message)
    return Decision(
        conditions.stalled(status, now, reason, message),
        recorded=instead_of.recorded if instead_of else None,
        events=() if told else (("Warning", reason, message),),
        spec=instead_of.spec if instead_of else None,
    )


def _failure_message(job: ObservedJob) -> str:
    failed = f"{job.kind} job {job.name} failed"
    if job.report is not None and job.report.error:
        error = job.report.error
        return f"{failed}: {error.message}" + (f" ({error.hint})" if error.hint else "")
    if job.report is not None and job.report.outcome is Outcome.FAILED:
        return f"{failed}: {job.report.message}"
    return f"{failed}: {job.error or 'no report (see the driver log)'}"


def _with_last_job(status: dict[str, Any], job: ObservedJob) -> dict[str, Any]:
    return {
        **status,
        "lastJob": {
            "name": job.name,
            "kind": job.kind.value,
            "generation": job.generation,
            "retryToken": job.retry_token,
            "phase": job.phase.value,
        },
    }


# --- the writers and the window around an apply (see maintenance.py) -------------------------------------


def writers_needed(observed: Observed) -> list[Writer]:
    """The writers a pass must look at: while the steps around an apply run, and when a finished job's
    result is about to be recorded (a plan approved then pauses them). None otherwise: a poll of the
    API per writer, bounded by these moments, instead of a watch on every workload."""
    state = observed.status.get("writers")
    try:
        spec = parse_spec(observed.spec).writers
    except InvalidSpecError:
        spec = None
    if maintenance.active(state):
        return maintenance.to_observe(spec, state)
    if spec is not None and spec.workloads and report_needed(observed) is not None:
        return list(spec.workloads)
    return []


def _maintain(
    observed: Observed, status: dict[str, Any], spec: TableSpec | None, now: datetime, invalid: str = ""
) -> Decision:
    """One pass of the steps around an apply: its result recorded when it ended, then the next step."""
    state = dict(status["writers"])
    recorded_job, events = None, ()
    apply_job = _apply_of(observed, state)
    if apply_job is not None and spec is not None:
        done = _recorded(_after_job(_with_last_job(status, apply_job), spec, apply_job, False, now))
        status, recorded_job, events = done.status, done.recorded, done.events
        held = conditions.condition(status, conditions.STALLED) or {}
        ready = conditions.condition(status, conditions.READY) or {}
        outcome = (
            maintenance.Outcome(True, ready.get("reason", "Applied"), ready.get("message", ""))
            if conditions.is_ready(status)
            else maintenance.Outcome(False, held.get("reason", "JobFailed"), held.get("message", ""))
        )
        step = maintenance.resume(state, observed.writers, now, outcome)
    else:
        step = maintenance.advance(
            state,
            writers=None if spec is None else spec.writers,
            window=None if spec is None else spec.window,
            seen=observed.writers,
            generation=observed.generation,
            paused=observed.annotations.get(PAUSED, "").lower() == "true",
            apply_now=observed.annotations.get(APPLY_NOW, ""),
            now=now,
        )
        if invalid and step.outcome is not None:
            step = replace(step, outcome=maintenance.Outcome(False, "InvalidSpec", invalid))
    status = {**status, "writers": step.state} if step.state else _without(status, "writers")
    events = (*events, *step.events)
    actions = step.actions
    if step.carry_on:
        after = decide(replace(observed, status=status), now)
        return replace(after, events=events + after.events, recorded=after.recorded or recorded_job)
    if step.outcome is not None or step.stall is not None:
        end = step.outcome or step.stall
        assert end is not None
        if end.ready:
            _note_downtime(status, state)
            status = conditions.ready(status, now, end.reason, end.message)
        else:
            status = conditions.stalled(status, now, end.reason, end.message)
            told = (conditions.condition(dict(observed.status), conditions.STALLED) or {}).get("message")
            if told != end.message and not any(r == end.reason for _, r, _ in events):
                events = (*events, ("Warning", end.reason, end.message))
        return Decision(status, recorded=recorded_job, events=events, spec=spec, writer_actions=actions)
    submit = None
    if step.submit_apply and spec is not None:
        request = spec.job_request(
            JobKind.APPLY, approved_plan=state["planId"], check_records=bool(state.get("checkRecords"))
        )
        submit = SubmitJob(request, state["generation"], state["retryToken"], SEQUENCE[JobKind.APPLY])
    if step.phase == "Paused":
        status = conditions.paused(status, now)
    elif step.phase == maintenance.Step.AWAITING_WINDOW:
        status = conditions.awaiting(status, now, step.message, reason=maintenance.Step.AWAITING_WINDOW.value)
    else:
        status = conditions.progressing(status, now, step.phase or "Applying", step.message)
    moving = submit is not None or step.phase not in ("Paused", maintenance.Step.AWAITING_WINDOW)
    poll = maintenance.POLL_SECONDS if moving else _until_window(step.state, now)
    return Decision(
        status,
        submit=submit,
        recorded=recorded_job,
        events=events,
        requeue=moving,
        spec=spec,
        writer_actions=actions,
        poll_seconds=poll,
    )


def _apply_of(observed: Observed, state: Mapping[str, Any]) -> ObservedJob | None:
    """The finished apply job of these steps whose result is not recorded yet, if any."""
    if state.get("step") not in (maintenance.Step.PAUSING, maintenance.Step.APPLYING):
        return None
    found = [
        j
        for j in observed.jobs
        if j.kind is JobKind.APPLY
        and j.generation == state["generation"]
        and j.retry_token == state["retryToken"]
        and j.phase.terminal
    ]
    if not found:
        return None
    job = max(found, key=lambda j: j.created)
    last = observed.status.get("lastJob") or {}
    return None if last.get("name") == job.name and last.get("recorded") else job


def _note_downtime(status: dict[str, Any], state: Mapping[str, Any]) -> None:
    """The writers' downtime beside the apply it made way for, in history."""
    last = (status.get("writers") or {}).get("last")
    history = status.get("history") or []
    if last and history and history[0].get("planId") == state.get("planId"):
        status["history"] = [{**history[0], "writersDowntimeSeconds": last["downtimeSeconds"]}, *history[1:]]


def _until_window(state: Mapping[str, Any], now: datetime) -> float | None:
    start = state.get("nextWindow")
    return None if not start else max(1.0, (datetime.fromisoformat(start) - now).total_seconds())


def _without(status: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k != key}

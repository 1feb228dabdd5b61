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

What a pass sees and decides is declared in decisions.py; the rounds of jobs in rounds.py; the writers and
the window around an apply in apply_window.py. This module records each finished job's result.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from hudi_bucket.contract.reports import JobReport, LayoutCheck, Outcome, TableBuckets
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.planning import ReportedPlan
from hudi_bucket.errors import ReportError
from hudi_bucket_operator.decide import apply_window, approval, maintenance, redaction, rounds
from hudi_bucket_operator.decide.decisions import (
    SEQUENCE,
    Decision,
    JobPhase,
    Observed,
    ObservedJob,
    SubmitJob,
    layout_broken,
    recorded,
    with_last_job,
)
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.policy.job_policy import admit
from hudi_bucket_operator.resource import conditions, writers_state
from hudi_bucket_operator.resource.conditions import Event, Reason, normal, stamp, warning
from hudi_bucket_operator.resource.spec import TableSpec, parse_spec
from hudi_bucket_operator.resource.table_status import (
    BucketConfig,
    HistoryEntry,
    LastJob,
    LayoutFound,
    PartitionBucketCount,
    PartitionCounts,
    PlanSummary,
    SizingDone,
    TableStatus,
)

HISTORY_LIMIT = 10
DENIED = "Denied"  # a history entry's outcome: the plan was denied, not applied
PLAN_ITEMS = 20  # changes status.plan lists, the largest first (the CRD allows 100)
LAYOUT_ITEMS = 20  # partitions status.layout names (the CRD allows 100)


def decide(observed: Observed, now: datetime) -> Decision:
    """The decision for one pass (see the module's docstring)."""
    return _decide(observed, now)


def failed(observed: Observed, now: datetime, err: Exception) -> Decision:
    """A pass that raised (a bug, a spec no check foresaw): the table stalls saying so, once, and the
    writers the operator paused are resumed first, as on any other way out of a pause."""
    message = conditions.bounded(f"the operator failed on this table ({type(err).__name__}): {err}")
    status = observed.status.model_copy(update={"observed_generation": observed.generation})
    if not maintenance.holding(status.writers):
        return _stalled(observed, status, now, Reason.RECONCILE_ERROR, message)
    outcome = writers_state.Outcome.stalled(Reason.RECONCILE_ERROR, message)
    step = maintenance.resume(status.writers, observed.writers, now, outcome)
    status = status.model_copy(update={"writers": step.state})
    if step.outcome is None:  # not all back yet: the next pass goes on resuming them
        resuming = conditions.progressing(status, now, Reason.RESUMING_WRITERS, step.message)
        return Decision(
            resuming,
            events=step.events,
            writer_actions=step.actions,
            requeue=True,
            poll_seconds=maintenance.POLL_SECONDS,
        )
    stalled = _stalled(observed, status, now, Reason.RECONCILE_ERROR, message)
    return replace(stalled, events=step.events + stalled.events)


def _decide(observed: Observed, now: datetime) -> Decision:
    status = observed.status.model_copy(update={"observed_generation": observed.generation})
    token = rounds.retry_token(observed)
    paused = observed.paused
    state = status.writers
    in_flight = [j for j in observed.jobs if not j.phase.terminal and not _cancelled(status, j)]
    if in_flight and maintenance.holding(state) and not maintenance.winding_down(state, now):
        # The apply runs with the writers paused, whatever the spec says now; they are resumed once it
        # ends, or at the apply deadline.
        status = conditions.progressing(
            with_last_job(status, in_flight[-1]), now, Reason.APPLYING,
            f"job {in_flight[-1].name} is {in_flight[-1].phase.value.lower()} (the writers are paused)",
        )  # fmt: skip
        return Decision(status, requeue=True, poll_seconds=maintenance.until_deadline(state, now))
    try:
        spec = parse_spec(observed.spec)
        admit(spec, observed.namespace, observed.policy)  # nothing is asked of anyone before this
    except InvalidSpecError as err:
        # Invalid, or asking for what the admins do not allow: stalled, with any paused writer resumed.
        reason = err.reason()
        if maintenance.holding(state):
            refused = writers_state.Outcome.stalled(reason, str(err))
            return _maintain(observed, status, None, now, refused=refused)
        return _stalled(observed, status, now, reason, str(err))
    if maintenance.holding(state):  # resuming, or an apply past its deadline: the steps say what next
        return _maintain(observed, status, spec, now)

    chain = rounds.current_chain(observed)
    last = status.last_job or LastJob()
    if in_flight:
        job = in_flight[-1]
        by_kind = {JobKind.VERIFY: Reason.VERIFYING, JobKind.PLAN: Reason.PLANNING}
        reason = by_kind.get(job.kind, Reason.APPLYING)
        if job.phase is JobPhase.PENDING and last.name == job.name:
            # Still as submitted: the pass that submitted it said what it is for, and a write saying
            # "pending" instead would be a second status write per job for nothing new.
            return Decision(status, requeue=True, spec=spec)
        status = with_last_job(status, job)
        if rounds.scheduled_work(observed, job):
            return Decision(conditions.scheduled(status, reason), requeue=True, spec=spec)
        return Decision(
            conditions.progressing(status, now, reason, f"job {job.name} is {job.phase.value.lower()}"),
            requeue=True,
            spec=spec,
        )

    if maintenance.active(status.writers):
        return _maintain(observed, status, spec, now)
    latest = chain[-1] if chain else None
    if latest is not None and last.recorded and rounds.recorded_up_to(last, latest):
        # Its result is in the status already (its report may be gone), or a later job's of its chain
        # is (an apply cancelled at its deadline, deleted before the plan it applied).
        return _decided(observed, status, spec, token, now) or rounds.scheduled(
            observed, status, spec, paused, now
        )
    if latest is None:
        done = last.generation == observed.generation and (last.retry_token or "") == token
        if done and last.recorded:
            # This generation's jobs finished and were cleaned up.
            return _decided(observed, status, spec, token, now) or rounds.scheduled(
                observed, status, spec, paused, now
            )
        if paused:
            return Decision(conditions.paused(status, now), spec=spec)
        if status.plan is not None and rounds.approved_as_planned(spec, observed.annotations, status, token):
            # Only the approval changed: its apply plans again itself and refuses a plan that is not the
            # one approved, so a second planning job would only repeat the first (a listing, a count).
            plan = status.plan
            return _approved(
                status, spec, plan.id or "", bool(plan.partitions), _described(plan),
                observed.generation, token, now, observed,
            )  # fmt: skip
        submit = SubmitJob(rounds.plan_request(spec, status), observed.generation, token, 0)
        # A new table's first plan is routine and its status says so: no Event, which at a GitOps sync
        # of many tables would be a quarter of the operator's writes. A change or a retry gets one.
        first = last == LastJob()
        event = normal(Reason.PLANNING, f"generation {observed.generation}: planning")
        return Decision(
            conditions.progressing(status, now, Reason.PLANNING, "planning which partitions change"),
            submit=submit,
            requeue=True,
            events=() if first else (event,),
            spec=spec,
        )
    return recorded(_after_job(with_last_job(status, latest), spec, latest, paused, now, observed))


def _decided(
    observed: Observed, status: TableStatus, spec: TableSpec, token: str, now: datetime
) -> Decision | None:
    """The plan awaiting approval, approved or denied in the cluster since (by annotation: the spec and so
    the generation are as they were): its apply, or the table stalled saying who denied it and why."""
    plan = status.plan
    decided = approval.verdict(observed.annotations, plan.id if plan is not None else None)
    stalled = conditions.condition(status, conditions.STALLED)
    denied = stalled is not None and stalled.status == "True" and stalled.reason == Reason.PLAN_DENIED
    waiting = status.phase == Reason.AWAITING_APPROVAL or denied  # a denied plan may be approved later
    if plan is None or not plan.id or decided is None or not waiting or (denied and not decided.approved):
        return None
    if not decided.approved:
        return _denied(status, spec, decided, now)
    if observed.paused:
        return Decision(conditions.paused(status, now), spec=spec)
    described = f"{_described(plan, spec.buckets.keep_duplicates)}, {decided.said()}"
    return _approved(
        status, spec, plan.id, bool(plan.partitions), described, observed.generation, token, now, observed
    )


def _denied(status: TableStatus, spec: TableSpec, decided: approval.Verdict, now: datetime) -> Decision:
    """A plan denied: not applied, and recorded in the history; the table stalls until its spec changes
    (or the retry annotation does, to plan again) or the plan is approved."""
    plan = status.plan or PlanSummary()
    message = (
        f"plan {plan.id} {decided.said()}; change the spec to plan again, or approve it (kubectl hbt approve)"
    )
    entry = HistoryEntry(
        plan_id=plan.id,
        partitions=plan.partitions,
        outcome=DENIED,
        finished=stamp(now),
        decided_by=decided.by or None,
        reason=decided.reason or None,
    )
    status = status.model_copy(update={"history": [entry, *(status.history or [])][:HISTORY_LIMIT]})
    stalled = conditions.stalled(status, now, Reason.PLAN_DENIED, message)
    return Decision(stalled, events=(warning(Reason.PLAN_DENIED, message),), spec=spec)


def _after_job(
    status: TableStatus,
    spec: TableSpec,
    job: ObservedJob,
    paused: bool,
    now: datetime,
    observed: Observed | None = None,
) -> Decision:
    report = job.report
    try:
        check = None if report is None else report.layout_check()
    except ReportError as err:
        return _unusable(status, spec, job, err, now)
    if check is not None and paused:  # recorded once resumed: the plan that follows a check is a job
        return Decision(conditions.paused(status, now), spec=spec)
    if check is not None:  # a verify job that checked: passed, or failed on violations
        return _after_verify(status, spec, job, check, now)
    if job.kind is JobKind.APPLY and report is not None and rounds.planned_anew(report):
        # The table changed since its plan was approved: the apply's own plan is the one to approve now.
        return _after_plan(status, spec, job, report, paused, now, observed)
    if job.phase is JobPhase.FAILED or report is None or report.outcome is Outcome.FAILED:
        message = _failure_message(job, spec)
        stalled = conditions.stalled(status, now, Reason.JOB_FAILED, message)
        events = (warning(Reason.JOB_FAILED, message),)
        return Decision(stalled, recorded=job.name, events=events, spec=spec)
    try:
        if job.kind is JobKind.PLAN:
            return _after_plan(status, spec, job, report, paused, now, observed)
        return _after_apply(status, spec, job, report, now, observed)
    except ReportError as err:
        return _unusable(status, spec, job, err, now)


def _unusable(
    status: TableStatus, spec: TableSpec, job: ObservedJob, err: ReportError, now: datetime
) -> Decision:
    message = f"{job.kind} job {job.name} finished, but its report cannot be used: {_words(str(err), spec)}"
    stalled = conditions.stalled(status, now, Reason.INVALID_REPORT, message)
    events = (warning(Reason.INVALID_REPORT, message),)
    return Decision(stalled, recorded=job.name, events=events, spec=spec)


def _after_verify(
    status: TableStatus, spec: TableSpec, job: ObservedJob, check: LayoutCheck, now: datetime
) -> Decision:
    """Record the check, then plan (with every record read while the layout is broken): a repair, or
    whatever changed since the last plan. A layout still broken right after its repair stalls."""
    rechecked = status.layout is not None and bool(status.layout.recheck)
    sizes = check.file_group_sizes
    found = LayoutFound(
        checked_at=check.checked_at,
        violations=check.violations,
        by_kind=dict(check.by_kind),
        partitions=check.partition_count,
        items=list(check.partitions[:LAYOUT_ITEMS]),
        # Unknown when the job measured no file group.
        file_groups=sizes.count or None,
        largest_file_group_bytes=sizes.largest_bytes if sizes.count else None,
        median_file_group_bytes=sizes.median_bytes if sizes.count else None,
    )
    status = status.model_copy(update={"layout": found})
    if check.ok:
        message = f"no bucket layout violation found at {check.checked_at}"
        status = conditions.layout_health(status, now, True, Reason.LAYOUT_VERIFIED, message)
        events: tuple[Event, ...] = ()
    else:
        named = ", ".join(check.partitions[:3]) + (" ..." if check.partition_count > 3 else "")
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(check.by_kind.items()))
        message = (
            f"{check.violations} bucket layout violation(s) ({kinds}) in {check.partition_count} "
            f"partition(s): {named}"
        )
        status = conditions.layout_health(status, now, False, Reason.LAYOUT_VIOLATION, message)
        if rechecked:
            stalled = f"the repair did not mend the layout: {message}"
            return Decision(
                conditions.stalled(status, now, Reason.REPAIR_INCOMPLETE, stalled),
                recorded=job.name,
                events=(warning(Reason.LAYOUT_VIOLATION, stalled),),
                spec=spec,
            )
        events = (warning(Reason.LAYOUT_VIOLATION, f"{message}; planning a repair"),)
    submit = SubmitJob(
        rounds.plan_request(spec, status), job.generation, job.retry_token, SEQUENCE[JobKind.PLAN]
    )
    planning = "planning a repair" if not check.ok else "planning again after the layout check"
    return Decision(
        conditions.scheduled(status, Reason.PLANNING)
        if check.ok and conditions.is_ready(status)
        else conditions.progressing(status, now, Reason.PLANNING, planning),
        submit=submit,
        recorded=job.name,
        requeue=True,
        events=events,
        spec=spec,
    )


def _after_plan(
    status: TableStatus,
    spec: TableSpec,
    job: ObservedJob,
    report: JobReport,
    paused: bool,
    now: datetime,
    observed: Observed | None = None,
) -> Decision:
    planned = report.plan_result()
    plan = planned.plan
    summary = _summary(status, plan, report.finished)
    if planned.sizing_summary is not None:
        # When it measured: a table with spec.buckets.sizing.replanEvery is planned again from then.
        sized = planned.sizing_summary
        measured = SizingDone(
            sized_partitions=sized.sized_partitions,
            resized=sized.resized,
            shuffle_free=sized.shuffle_free,
            rules=sized.rules,
            measured=report.finished,
        )
        summary = summary.model_copy(update={"sizing": measured})
    status = _record_table(status, summary, report.table_buckets)
    if plan.noop:
        message = "the table already matches the rules"
        ready = conditions.ready(status, now, Reason.CONVERGED, message)
        return Decision(ready, recorded=job.name, events=(normal(Reason.CONVERGED, message),), spec=spec)
    annotations = observed.annotations if observed is not None else {}
    decided = approval.verdict(annotations, plan.id)
    if decided is not None and not decided.approved:
        return replace(
            _denied(status.model_copy(update={"plan": summary}), spec, decided, now), recorded=job.name
        )
    approved = approval.approved(spec, annotations, plan.id)
    described = _described(summary, spec.buckets.keep_duplicates)
    if not approved:
        # What it was planned from: approving it alone then starts its apply without planning again.
        summary = summary.model_copy(update={"basis": rounds.plan_basis(spec, status)})
        status = status.model_copy(update={"plan": summary})
        message = (
            f"{described}: set spec.apply.approvedPlan to {plan.id} (or run kubectl hbt approve) to apply it"
        )
        awaiting = conditions.awaiting(status, now, message)
        return Decision(
            awaiting, recorded=job.name, events=(normal(Reason.AWAITING_APPROVAL, message),), spec=spec
        )
    if paused:
        # Not recorded: once the annotation goes, this plan is looked at again and applied.
        return Decision(conditions.paused(status, now), spec=spec)
    decision = _approved(
        status,
        spec,
        plan.id,
        plan.partitions > 0,
        described,
        job.generation,
        job.retry_token,
        now,
        observed,
    )
    return replace(decision, recorded=job.name)


def _described(plan: PlanSummary, keep_duplicates: bool = False) -> str:
    """A plan in one line, from its summary in the status."""
    described = f"plan {plan.id} rewrites {plan.partitions} partition(s), {plan.rows} row(s)"
    if plan.repairs:
        described += f" ({plan.repairs} of them to repair their layout)"
    if plan.duplicate_keys:
        kept = "every copy kept" if keep_duplicates else "one copy of each kept"
        described += f"; {plan.duplicate_keys} key(s) found more than once ({kept})"
    return described


def _approved(
    status: TableStatus,
    spec: TableSpec,
    plan_id: str,
    rewrites: bool,
    described: str,
    generation: int,
    token: str,
    now: datetime,
    observed: Observed | None,
) -> Decision:
    """An approved plan's apply: at once, or in the window with the writers paused when it rewrites
    partitions (a config change alone needs neither)."""
    if rewrites and (spec.window is not None or spec.writers.workloads) and observed is not None:
        last = status.writers.last if status.writers else None
        begun = maintenance.begin(plan_id, generation, token, layout_broken(status), last)
        status = status.model_copy(update={"writers": begun})
        decision = _maintain(replace(observed, status=status), status, spec, now)
        said = conditions.condition(decision.status, conditions.READY)
        events = (normal(Reason.AWAITING_WINDOW, (said.message if said else None) or ""),)
        if decision.status.phase != Reason.AWAITING_WINDOW:
            events = (normal(Reason.APPROVED, described),)
        return replace(decision, events=events + decision.events)
    request = spec.job_request(JobKind.APPLY, approved_plan=plan_id, check_records=layout_broken(status))
    return Decision(
        conditions.progressing(status, now, Reason.APPLYING, described),
        submit=SubmitJob(request, generation, token, SEQUENCE[JobKind.APPLY]),
        requeue=True,
        events=(normal(Reason.APPLYING, described),),
        spec=spec,
    )


def _after_apply(
    status: TableStatus,
    spec: TableSpec,
    job: ObservedJob,
    report: JobReport,
    now: datetime,
    observed: Observed | None = None,
) -> Decision:
    result = report.apply_result()
    status = _record_table(status, _summary(status, result.plan, report.finished), report.table_buckets)
    if report.outcome is Outcome.NO_CHANGE:
        ready = conditions.ready(status, now, Reason.CONVERGED, report.message)
        return Decision(ready, recorded=job.name, spec=spec)
    entry = HistoryEntry(
        job=job.name,
        instant=result.instant,
        plan_id=result.plan.id,
        partitions=result.plan.partitions,
        rows=result.rows_written,
        seconds=result.seconds,
        outcome=report.outcome.value,
        finished=report.finished,
    )
    decided = approval.verdict(observed.annotations if observed else {}, result.plan.id)
    if decided is not None:  # approved in the cluster: by whom and why
        entry = entry.model_copy(update={"decided_by": decided.by or None, "reason": decided.reason or None})
    events = [normal(Reason.APPLIED, report.message)]
    if result.partitions_repaired:
        update = {"repairs": result.partitions_repaired, "duplicates_resolved": result.duplicates_resolved}
        entry = entry.model_copy(update=update)
        if status.layout is not None:  # checked again at once: LayoutHealthy says what the check finds
            status = status.model_copy(update={"layout": status.layout.model_copy(update={"recheck": True})})
        events.append(
            normal(
                Reason.REPAIRED,
                f"{result.partitions_repaired} partition(s) repaired in {result.instant}, "
                f"{result.duplicates_resolved} key(s) held by two file groups resolved",
            )
        )
    status = status.model_copy(update={"history": [entry, *(status.history or [])][:HISTORY_LIMIT]})
    ready = conditions.ready(status, now, Reason.APPLIED, report.message)
    return Decision(ready, recorded=job.name, events=tuple(events), spec=spec)


def _summary(status: TableStatus, plan: ReportedPlan, made: str) -> PlanSummary:
    """The plan, bounded, made at ``made`` unless the status holds the same plan already (planned again
    to the same id, or being applied): then since when it has existed, and what sizing did (the plan job's
    to say) are kept."""
    summary = PlanSummary.of(plan, PLAN_ITEMS).model_copy(update={"planned_at": made})
    previous = status.plan
    if previous is not None and previous.id == plan.id:
        kept = {"planned_at": previous.planned_at or made, "sizing": previous.sizing or summary.sizing}
        summary = summary.model_copy(update=kept)
    return summary


def _record_table(status: TableStatus, summary: PlanSummary, table: TableBuckets | None) -> TableStatus:
    """The plan's summary, and the config in force and partitions' bucket counts as the job last saw them
    (None: the job did not look, as an apply refused for its plan)."""
    update: dict[str, Any] = {"plan": summary}
    config = None if table is None else table.config
    if config is not None:
        update["config"] = BucketConfig(
            instant=config.instant, expressions=config.expressions, default=config.default
        )
    counts = None if table is None else table.partitions
    if counts is not None:
        update["partitions"] = PartitionCounts(
            count=counts.count,
            by_buckets=dict(counts.by_buckets),
            items=[PartitionBucketCount(partition=i.partition, buckets=i.buckets) for i in counts.items],
            omitted=counts.omitted,
        )
    return status.model_copy(update=update)


def _stalled(
    observed: Observed,
    status: TableStatus,
    now: datetime,
    reason: str,
    message: str,
    instead_of: Decision | None = None,
) -> Decision:
    """Stalled until someone changes something; the Warning event is posted once, not on every pass."""
    message = conditions.bounded(message)  # as the condition holds it, to know it was told
    held = conditions.condition(observed.status, conditions.STALLED)
    told = held is not None and (held.status, held.reason, held.message) == ("True", reason, message)
    return Decision(
        conditions.stalled(status, now, reason, message),
        recorded=instead_of.recorded if instead_of else None,
        events=() if told else (warning(reason, message),),
        spec=instead_of.spec if instead_of else None,
    )


def _failure_message(job: ObservedJob, spec: TableSpec) -> str:
    """Why the job failed, in its own words redacted: the table's author reads this (redaction.py)."""
    failed = f"{job.kind} job {job.name} failed: "
    if job.report is not None and job.report.error:
        error = job.report.error
        words = error.message + (f" ({error.hint})" if error.hint else "")
    elif job.report is not None and job.report.outcome is Outcome.FAILED:
        words = job.report.message
    else:
        words = job.error or "no report (see the driver log)"
    return failed + _words(words, spec)


def _words(text: str, spec: TableSpec) -> str:
    """A job's words as its table's author may read them (redaction.py)."""
    return redaction.job_words(text, (*spec.spark.spark_conf.values(), *spec.spark.hadoop_conf.values()))


def _maintain(
    observed: Observed,
    status: TableStatus,
    spec: TableSpec | None,
    now: datetime,
    refused: writers_state.Outcome | None = None,
) -> Decision:
    """One pass of the steps around an apply (apply_window.py), with this module's way of recording an
    apply's result and ``decide`` for the step that carries on at once. ``refused``: why the spec cannot
    go on (invalid, or not allowed), the outcome once the writers are back."""
    return apply_window.maintain(
        observed,
        status,
        spec,
        now,
        record_apply=lambda status, spec, job, now: _after_job(status, spec, job, False, now),
        decide=decide,
        refused=refused,
    )


def _cancelled(status: TableStatus, job: ObservedJob) -> bool:
    """Whether ``job`` is one whose result is recorded though it still runs: an apply cancelled at its
    deadline, on its way out."""
    last = status.last_job or LastJob()
    return bool(last.recorded) and last.name == job.name

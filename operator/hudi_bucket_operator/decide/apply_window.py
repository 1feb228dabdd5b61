"""The writers and the window around an apply, as ``decide`` drives them: which writers a pass must look at,
and one pass of maintenance.py's steps (the apply's result recorded when it ended, then the next step).
``decide`` passes itself in, and the way it records an apply's result, so this module needs neither."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator.decide import maintenance
from hudi_bucket_operator.decide.decisions import (
    SEQUENCE,
    Decision,
    Observed,
    ObservedJob,
    SubmitJob,
    recorded,
    with_last_job,
)
from hudi_bucket_operator.decide.rounds import approved_as_planned, planned_anew, report_needed, retry_token
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource import conditions, writers_state
from hudi_bucket_operator.resource.api import APPLY_NOW
from hudi_bucket_operator.resource.conditions import Event, EventType, Reason, warning
from hudi_bucket_operator.resource.spec import TableSpec, parse_spec
from hudi_bucket_operator.resource.table_status import Condition, LastJob, TableStatus
from hudi_bucket_operator.resource.writers import Writer, WritersSpec
from hudi_bucket_operator.resource.writers_state import ApplySteps, Outcome, WritersState

# The result of a finished apply (with the status that names it as the last job) and ``decide`` itself.
RecordApply = Callable[[TableStatus, TableSpec, ObservedJob, datetime], Decision]
Decide = Callable[[Observed, datetime], Decision]


def writers_needed(observed: Observed) -> list[Writer]:
    """The writers a pass must look at: while the steps around an apply run, and when a plan may be
    approved on it (a finished job's result about to be recorded, or the approval of the plan awaiting
    it): that pass starts the steps, and records each writer's state first. None otherwise: a poll of
    the API per writer, bounded by these moments, instead of a watch on every workload."""
    state = observed.status.writers
    try:
        spec: TableSpec | None = parse_spec(observed.spec)
    except InvalidSpecError:
        spec = None
    policy = observed.policy.writers
    # Writers the admins do not let it pause are never read (the spec stalls, saying so).
    writers = None if spec is None or policy.problems(spec.writer_refs) else policy.resolve(spec.writer_refs)
    if maintenance.active(state):
        return maintenance.to_observe(writers, state)
    if spec is None or writers is None or not writers.workloads:
        return []
    approving = approved_as_planned(spec, observed.annotations, observed.status, retry_token(observed))
    return list(writers.workloads) if approving or report_needed(observed) is not None else []


def maintain(
    observed: Observed,
    status: TableStatus,
    spec: TableSpec | None,
    now: datetime,
    *,
    record_apply: RecordApply,
    decide: Decide,
    refused: Outcome | None = None,
) -> Decision:
    """One pass of the steps around an apply: its result recorded when it ended, then the next step.
    ``refused`` (with no ``spec``): why the spec cannot go on, the outcome once the writers are back."""
    state = status.writers
    assert isinstance(state, ApplySteps), "maintain runs only while the steps do"
    status, recorded_job, cancel, events, step = _next_step(observed, status, state, spec, now, record_apply)
    if refused is not None and step.outcome is not None and cancel is None:
        step = replace(step, outcome=refused)
    status = status.model_copy(update={"writers": step.state})
    events = (*events, *step.events)
    actions = step.actions
    if step.carry_on:
        after = decide(replace(observed, status=status), now)
        return replace(after, events=events + after.events, recorded=after.recorded or recorded_job)
    if step.outcome is not None or step.stall is not None:
        end = step.outcome or step.stall
        assert end is not None
        if end.ready:
            status = conditions.ready(_note_downtime(status, state), now, end.reason, end.message)
        else:
            status = conditions.stalled(status, now, end.reason, end.message)
            held = conditions.condition(observed.status, conditions.STALLED)
            told = held.message if held else None
            if told != conditions.bounded(end.message) and not any(r == end.reason for _, r, _ in events):
                events = (*events, warning(end.reason, end.message))
        return Decision(
            status, recorded=recorded_job, events=events, spec=spec, writer_actions=actions, cancel=cancel
        )
    submit = None
    if step.submit_apply and spec is not None:
        request = spec.job_request(
            JobKind.APPLY, approved_plan=state.plan_id, check_records=state.check_records
        )
        submit = SubmitJob(request, state.generation, state.retry_token, SEQUENCE[JobKind.APPLY])
    if step.phase == Reason.PAUSED:
        status = conditions.paused(status, now)
    elif step.phase == Reason.AWAITING_WINDOW:
        status = conditions.awaiting(status, now, step.message, reason=Reason.AWAITING_WINDOW)
    else:
        status = conditions.progressing(status, now, step.phase or Reason.APPLYING, step.message)
    moving = submit is not None or step.phase not in (Reason.PAUSED, Reason.AWAITING_WINDOW)
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
        cancel=cancel,
    )


def writers_of(observed: Observed, spec: TableSpec) -> WritersSpec:
    """The spec's writers as the operator pauses them: each kind as the admins declared it."""
    return observed.policy.writers.resolve(spec.writer_refs)


Step = tuple[TableStatus, str | None, str | None, tuple[Event, ...], maintenance.Advance]


def _next_step(
    observed: Observed,
    status: TableStatus,
    state: ApplySteps,
    spec: TableSpec | None,
    now: datetime,
    record_apply: RecordApply,
) -> Step:
    """The step this pass takes: the status (with the apply's result when it ended), the job recorded
    and the job to cancel, events, and what the steps say next."""
    apply_job = _apply_of(observed, state)
    running = _running_apply(observed, state)
    if apply_job is None and running is not None and maintenance.overdue(state, now):
        # The apply has held the writers paused as long as the admins allow: stop it, resume them.
        message = (
            f"apply job {running.name} did not finish by the apply deadline ({state.apply_deadline}, "
            "the Helm value writers.applyDeadline after the writers were paused): it was cancelled and "
            "the writers resumed"
        )
        cancelled = recorded(Decision(with_last_job(status, running), recorded=running.name))
        outcome = Outcome.stalled(Reason.APPLY_DEADLINE_EXCEEDED, message)
        step = maintenance.resume(state, observed.writers, now, outcome)
        return cancelled.status, running.name, running.name, (), step
    if apply_job is not None and apply_job.report is not None and planned_anew(apply_job.report):
        # The table changed since the plan was approved: nothing was applied. The writers are resumed
        # first; then the job is recorded as any apply outside a window is, and the plan it found goes
        # on as a new plan does (approval, then its window).
        return status, None, None, (), maintenance.resume(state, observed.writers, now, None)
    if apply_job is not None and spec is not None:
        done = recorded(record_apply(with_last_job(status, apply_job), spec, apply_job, now))
        held = conditions.condition(done.status, conditions.STALLED)
        ready = conditions.condition(done.status, conditions.READY)
        outcome = (
            _outcome(True, ready, Reason.APPLIED)
            if conditions.is_ready(done.status)
            else _outcome(False, held, Reason.JOB_FAILED)
        )
        step = maintenance.resume(state, observed.writers, now, outcome)
        # A failure is told once, when its outcome lands with the writers back (``maintain``).
        events = tuple(
            e for e in done.events if not (e.type is EventType.WARNING and e.reason == outcome.reason)
        )
        return done.status, done.recorded, None, events, step
    step = maintenance.advance(
        state,
        writers=None if spec is None else writers_of(observed, spec),
        window=None if spec is None else spec.window,
        seen=observed.writers,
        generation=observed.generation,
        paused=observed.paused,
        apply_now=observed.annotations.get(APPLY_NOW, ""),
        now=now,
        table=observed.name,
        apply_deadline=observed.policy.writers.apply_deadline,
    )
    return status, None, None, (), step


def _running_apply(observed: Observed, state: ApplySteps) -> ObservedJob | None:
    """The apply job of these steps still in flight, if any."""
    running = [
        j
        for j in observed.jobs
        if j.kind is JobKind.APPLY
        and j.generation == state.generation
        and j.retry_token == state.retry_token
        and not j.phase.terminal
    ]
    return max(running, key=lambda j: j.created) if running else None


def _apply_of(observed: Observed, state: ApplySteps) -> ObservedJob | None:
    """The finished apply job of these steps whose result is not recorded yet, if any."""
    if state.step not in (writers_state.Step.PAUSING, writers_state.Step.APPLYING):
        return None
    found = [
        j
        for j in observed.jobs
        if j.kind is JobKind.APPLY
        and j.generation == state.generation
        and j.retry_token == state.retry_token
        and j.phase.terminal
    ]
    if not found:
        return None
    job = max(found, key=lambda j: j.created)
    last = observed.status.last_job or LastJob()
    return None if last.name == job.name and last.recorded else job


def _note_downtime(status: TableStatus, state: ApplySteps) -> TableStatus:
    """The writers' downtime beside the apply it made way for, in history."""
    last = status.writers.last if status.writers else None
    history = status.history or []
    if last and history and history[0].plan_id == state.plan_id:
        noted = history[0].model_copy(update={"writers_downtime_seconds": last.downtime_seconds})
        return status.model_copy(update={"history": [noted, *history[1:]]})
    return status


def _until_window(state: WritersState | None, now: datetime) -> float | None:
    start = state.next_window if isinstance(state, ApplySteps) else None
    return None if not start else max(1.0, (datetime.fromisoformat(start) - now).total_seconds())


def _outcome(ready: bool, said: Condition | None, reason: str) -> Outcome:
    """How the apply ended, as the condition that says it does (``reason`` when there is none)."""
    if said is None:
        return Outcome(ready=ready, reason=reason, message="")
    return Outcome(ready=ready, reason=said.reason or reason, message=said.message or "")

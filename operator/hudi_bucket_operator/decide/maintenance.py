"""The steps around an apply that rewrites partitions: wait for the window, pause the table's writers,
wait until they are quiet, apply, resume them as they were (pure: no I/O, no clock of its own).

``status.writers`` is the memory of these steps, written before anything is done to a writer: each
writer's state before the pause is recorded first, so an operator restarted at any point resumes them
exactly as they were. Every way out of a pause (the apply done or failed, a timeout, a writer gone, a
new generation, the paused annotation, an invalid spec) goes through ``Resuming``, which ends only once
every writer is back as it was. A writer is paused only while its owner consents
(``ObservedWriter.consents``), and an apply holds the writers paused at most the admins' apply deadline:
past it, its job is cancelled and they are resumed.

    AwaitingWindow -> Pausing -> Applying -> Resuming -> (cleared; the outcome goes to the conditions)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TypeGuard

from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource.conditions import Event, Reason, normal, stamp
from hudi_bucket_operator.resource.writers import (
    WRITER_OF,
    ObservedWriter,
    Window,
    Writer,
    WriterAction,
    WritersSpec,
    WriterVerb,
)
from hudi_bucket_operator.resource.writers_state import (
    HOLDING,
    ApplySteps,
    LastPause,
    Outcome,
    PausedWriter,
    Prior,
    Step,
    WritersState,
)

POLL_SECONDS = 2.0  # how soon a table whose writers are moving is looked at again


@dataclass(frozen=True)
class Advance:
    """One pass's step: the new ``status.writers``, what to do to writers, and what to tell people."""

    state: WritersState | None
    actions: tuple[WriterAction, ...] = ()
    phase: str = ""  # "" once the steps are over
    message: str = ""
    submit_apply: bool = False
    outcome: Outcome | None = None  # set when the steps end with the writers resumed
    carry_on: bool = False  # the steps ended without an outcome: decide as if they never began
    events: tuple[Event, ...] = ()
    stall: Outcome | None = None  # the steps ended before any writer was paused, stalled


def active(state: WritersState | None) -> TypeGuard[ApplySteps]:
    return isinstance(state, ApplySteps)


def holding(state: WritersState | None) -> TypeGuard[ApplySteps]:
    """Whether writers may be paused by the operator right now (so they must be resumed)."""
    return isinstance(state, ApplySteps) and state.step in HOLDING


def begin(
    plan_id: str, generation: int, token: str, check_records: bool, last: LastPause | None
) -> ApplySteps:
    """The first step of an approved plan that rewrites partitions."""
    return ApplySteps(
        step=Step.AWAITING_WINDOW,
        plan_id=plan_id,
        generation=generation,
        retry_token=token,
        check_records=check_records,
        last=last,
    )


def to_observe(spec: WritersSpec | None, state: ApplySteps) -> list[Writer]:
    """The writers whose state a pass needs: the spec's, and those the status holds paused."""
    writers = {w.key: w for w in (spec.workloads if spec else ())}
    for item in state.paused:
        writers.setdefault(item.key, item.writer())
    return list(writers.values())


def advance(
    state: ApplySteps,
    *,
    writers: WritersSpec | None,
    window: Window | None,
    seen: Mapping[str, ObservedWriter] | None,
    generation: int,
    paused: bool,
    apply_now: str,
    now: datetime,
    table: str = "",
    apply_deadline: int = 6 * 3600,
) -> Advance:
    """The next step, given the state recorded, what the writers look like and the spec (None: invalid).
    An apply job of these steps, in flight or finished, is the caller's to look at first. ``table``: the
    name its writers' consent names; ``apply_deadline``: how long an apply may hold them paused."""
    if state.step is Step.RESUMING:
        return _resume(state, seen, now)
    if state.step is Step.AWAITING_WINDOW:
        return _await(state, writers, window, seen, generation, paused, apply_now, now, table)
    # Pausing, or Applying with no apply job left to look at.
    if writers is None:
        return resume(state, seen, now, Outcome.stalled(InvalidSpecError.reason(), "the spec became invalid"))
    if generation != state.generation:
        return resume(state, seen, now, None)
    if paused:
        return resume(state, seen, now, None, again=True)
    if state.step is Step.APPLYING:
        message = "the apply job is gone and its result was never read"
        return resume(state, seen, now, Outcome.stalled(Reason.APPLY_JOB_LOST, message))
    return _pause(state, writers, seen, now, table, apply_deadline)


def _await(
    state: ApplySteps,
    writers: WritersSpec | None,
    window: Window | None,
    seen: Mapping[str, ObservedWriter] | None,
    generation: int,
    paused: bool,
    apply_now: str,
    now: datetime,
    table: str,
) -> Advance:
    if writers is None or generation != state.generation:
        return Advance(_cleared(state), carry_on=True)
    if paused:
        return Advance(state, phase=Reason.PAUSED)
    overridden = apply_now == state.plan_id
    if window is not None and window.start_of(now) is None and not overridden:
        next_window = stamp(window.next_start(now))
        message = f"plan {state.plan_id} waits for its window ({window.text}, UTC): next at {next_window}"
        waiting = state.model_copy(update={"next_window": next_window})
        return Advance(waiting, phase=Reason.AWAITING_WINDOW, message=message)
    if not writers.workloads:
        return Advance(_cleared(state), submit_apply=True)
    if seen is None:
        message = "spec.writers needs the operator in a cluster: the local mode cannot pause workloads"
        return Advance(_cleared(state), stall=Outcome.stalled(Reason.WRITERS_UNAVAILABLE, message))
    missing = [w.key for w in writers.workloads if not seen[w.key].found]
    if missing:
        message = f"writer(s) not found in the table's namespace: {', '.join(missing)}; nothing was paused"
        return Advance(_cleared(state), stall=Outcome.stalled(Reason.WRITER_NOT_FOUND, message))
    if refusing := [w.key for w in writers.workloads if not seen[w.key].consents]:
        return Advance(_cleared(state), stall=_not_consented(refusing, table, "nothing was paused"))
    # Recorded before anything is paused: this status is written first, the pauses come next pass.
    pausing = state.model_copy(
        update={
            "next_window": None,
            "items": tuple(PausedWriter.of(w, seen[w.key]) for w in writers.workloads),
            "step": Step.PAUSING,
            "paused_at": stamp(now),
            "deadline": stamp(now + timedelta(seconds=writers.quiesce_timeout)),
        }
    )
    names = ", ".join(w.key for w in writers.workloads)
    why = "the window is open" if not overridden else "the apply-now annotation names this plan"
    message = f"pausing the table's writers ({names}) to apply plan {state.plan_id}: {why}"
    return Advance(
        pausing,
        phase=Reason.PAUSING_WRITERS,
        message=message,
        events=(normal(Reason.PAUSING_WRITERS, message),),
    )


def _not_consented(keys: list[str], table: str, what: str) -> Outcome:
    message = (
        f"writer(s) {', '.join(keys)} do not let this table pause them: {what}. Their owner consents by "
        f"labelling or annotating each {WRITER_OF}={table}; then change the hudi.bucketops.io/retry "
        "annotation to try again"
    )
    return Outcome.stalled(Reason.WRITER_NOT_CONSENTED, message)


def _pause(
    state: ApplySteps,
    writers: WritersSpec,
    seen: Mapping[str, ObservedWriter] | None,
    now: datetime,
    table: str,
    apply_deadline: int,
) -> Advance:
    by_key = {w.key: w for w in writers.workloads}
    items = state.paused
    if seen is None or any(i.key not in by_key for i in items):
        return resume(state, seen, now, None)  # the spec names other writers now: start over
    missing = [i.key for i in items if not seen[i.key].found]
    if missing:
        message = f"writer(s) gone while pausing: {', '.join(missing)}"
        return resume(state, seen, now, Outcome.stalled(Reason.WRITER_NOT_FOUND, message))
    if refusing := [i.key for i in items if not seen[i.key].consents]:
        return resume(state, seen, now, _not_consented(refusing, table, "their consent went while pausing"))
    actions, loud = [], []
    for item in items:
        writer, found = by_key[item.key], seen[item.key]
        if not _paused(writer, found):
            paused = 0 if writer.suspend is None else writer.suspend.suspended
            actions.append(_action(WriterVerb.PAUSE, writer, paused))
        if not _quiet(writer, found):
            loud.append(writer.key + (f" ({found.pods} pod(s))" if writer.scaled else ""))
    if not loud:
        applying = state.model_copy(
            update={"step": Step.APPLYING, "apply_deadline": stamp(now + timedelta(seconds=apply_deadline))}
        )
        names = ", ".join(i.key for i in items)
        message = f"writers paused ({names}): applying plan {state.plan_id}"
        return Advance(
            applying, phase=Reason.APPLYING, message=message, submit_apply=True,
            events=(normal(Reason.WRITERS_PAUSED, message),),
        )  # fmt: skip
    deadline = state.deadline or ""  # the Pausing step always has one (ApplySteps says so)
    if now >= datetime.fromisoformat(deadline):
        message = f"writers not quiet by the quiesce timeout ({deadline}): {', '.join(loud)}"
        return resume(state, seen, now, Outcome.stalled(Reason.QUIESCE_TIMEOUT, message))
    message = f"waiting for the writers to stop: {', '.join(loud)}"
    return Advance(state, tuple(actions), phase=Reason.PAUSING_WRITERS, message=message)


def overdue(state: WritersState | None, now: datetime) -> bool:
    """Whether an apply has held the writers paused past the admins' apply deadline."""
    seconds = until_deadline(state, now)
    return seconds is not None and seconds <= 0


def until_deadline(state: WritersState | None, now: datetime) -> float | None:
    """Seconds until the apply deadline of the writers' pause (None: no apply holds them)."""
    if not isinstance(state, ApplySteps) or state.step is not Step.APPLYING or not state.apply_deadline:
        return None
    return (datetime.fromisoformat(state.apply_deadline) - now).total_seconds()


def winding_down(state: WritersState | None, now: datetime) -> bool:
    """Whether the writers are being resumed, or are due to be (an apply past its deadline), whatever
    jobs still run."""
    return (isinstance(state, ApplySteps) and state.step is Step.RESUMING) or overdue(state, now)


def resume(
    state: ApplySteps,
    seen: Mapping[str, ObservedWriter] | None,
    now: datetime,
    outcome: Outcome | None,
    *,
    again: bool = False,
) -> Advance:
    """Resume every writer recorded, then end with ``outcome`` (None: carry on as if nothing began;
    ``again``: wait for the window again, the same plan)."""
    update: dict[str, object] = {"step": Step.RESUMING}
    if outcome is not None:
        update["outcome"] = outcome
    if again:
        update["again"] = True
    return _resume(state.model_copy(update=update), seen, now)


def _resume(state: ApplySteps, seen: Mapping[str, ObservedWriter] | None, now: datetime) -> Advance:
    actions, waiting = [], []
    for item in state.paused:
        found = (seen or {}).get(item.key)
        if found is None or not found.found:
            continue  # unobservable (local mode) or deleted: nothing left to resume
        if Prior.of(found) != item.prior:
            actions.append(_action(WriterVerb.RESUME, item.writer(), item.prior.setting))
            waiting.append(item.key)
    if seen is None and state.paused:
        waiting = [i.key for i in state.paused]
    if waiting:
        message = f"resuming the table's writers: {', '.join(waiting)}"
        return Advance(state, tuple(actions), phase=Reason.RESUMING_WRITERS, message=message)
    events: list[Event] = []
    last = state.last
    if state.paused_at:
        seconds = round((now - datetime.fromisoformat(state.paused_at)).total_seconds(), 1)
        names = tuple(i.key for i in state.paused)
        described = ", ".join(i.described() for i in state.paused)
        last = LastPause(
            paused_at=state.paused_at, resumed_at=stamp(now), downtime_seconds=seconds, writers=names
        )
        events.append(normal(Reason.WRITERS_RESUMED, f"resumed {described} after {seconds:g} s paused"))
    if state.again:
        fresh = begin(state.plan_id, state.generation, state.retry_token, state.check_records, last)
        return Advance(
            fresh, phase=Reason.AWAITING_WINDOW, events=tuple(events), message="paused by annotation"
        )
    done = WritersState(last=last) if last else None
    return Advance(done, outcome=state.outcome, carry_on=state.outcome is None, events=tuple(events))


def _paused(writer: Writer, found: ObservedWriter) -> bool:
    if writer.scaled:
        return found.replicas == 0
    return found.value == writer.suspend.suspended  # type: ignore[union-attr]


def _quiet(writer: Writer, found: ObservedWriter) -> bool:
    if writer.scaled:
        return found.replicas == 0 and found.pods == 0
    return found.stopped


def _action(verb: WriterVerb, writer: Writer, value: int | str | None) -> WriterAction:
    """``value``: the replicas of a scaled writer, else its suspend field's value."""
    action = WriterAction(verb, writer.api_version, writer.kind, writer.plural, writer.name)
    if writer.suspend is None:
        return replace(action, replicas=int(value or 0))
    return replace(action, path=writer.suspend.path, value=None if value is None else str(value))


def _cleared(state: ApplySteps) -> WritersState | None:
    """What is left of ``status.writers`` once the steps are over: the last pause, if any."""
    return WritersState(last=state.last) if state.last else None

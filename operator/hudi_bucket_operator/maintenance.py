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
from enum import StrEnum
from typing import Any

from hudi_bucket_operator.conditions import Event, Reason, normal
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.writers import (
    WRITER_OF,
    ObservedWriter,
    SuspendField,
    Window,
    Writer,
    WriterAction,
    WritersSpec,
    WriterVerb,
)

POLL_SECONDS = 2.0  # how soon a table whose writers are moving is looked at again


class Step(StrEnum):
    AWAITING_WINDOW = "AwaitingWindow"
    PAUSING = "Pausing"
    APPLYING = "Applying"
    RESUMING = "Resuming"


@dataclass(frozen=True)
class Outcome:
    """What the conditions say once the writers are back: Ready or Stalled, with the reason."""

    ready: bool
    reason: str
    message: str

    def to_status(self) -> dict[str, Any]:
        return {"ready": self.ready, "reason": self.reason, "message": self.message}

    @classmethod
    def from_status(cls, raw: Mapping[str, Any]) -> Outcome:
        return cls(bool(raw["ready"]), str(raw["reason"]), str(raw["message"]))


@dataclass(frozen=True)
class Advance:
    """One pass's step: the new ``status.writers``, what to do to writers, and what to tell people."""

    state: dict[str, Any]
    actions: tuple[WriterAction, ...] = ()
    phase: str = ""  # "" once the steps are over
    message: str = ""
    submit_apply: bool = False
    outcome: Outcome | None = None  # set when the steps end with the writers resumed
    carry_on: bool = False  # the steps ended without an outcome: decide as if they never began
    events: tuple[Event, ...] = ()
    stall: Outcome | None = None  # the steps ended before any writer was paused, stalled


def active(state: Mapping[str, Any] | None) -> bool:
    return bool(state and state.get("step"))


def holding(state: Mapping[str, Any] | None) -> bool:
    """Whether writers may be paused by the operator right now (so they must be resumed)."""
    return bool(state and state.get("step") in (Step.PAUSING, Step.APPLYING, Step.RESUMING))


def begin(
    plan_id: str, generation: int, token: str, check_records: bool, last: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The first step of an approved plan that rewrites partitions."""
    state: dict[str, Any] = {
        "step": Step.AWAITING_WINDOW.value,
        "planId": plan_id,
        "generation": generation,
        "retryToken": token,
        "checkRecords": check_records,
    }
    return {**state, "last": last} if last else state


def to_observe(spec: WritersSpec | None, state: Mapping[str, Any] | None) -> list[Writer]:
    """The writers whose state a pass needs: the spec's, and those the status holds paused."""
    writers = {w.key: w for w in (spec.workloads if spec else ())}
    for item in (state or {}).get("items") or []:
        writer = recorded_writer(item)
        writers.setdefault(writer.key, writer)
    return list(writers.values())


def recorded_writer(item: Mapping[str, Any]) -> Writer:
    """A writer as status recorded it: enough to read and resume it, whatever the spec says now."""
    path = item.get("path")
    suspend = SuspendField(path, "", path, ()) if path else None
    return Writer(item["apiVersion"], item["kind"], item["name"], item["plural"], suspend)


def advance(
    state: Mapping[str, Any],
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
    state = dict(state)
    step = Step(state["step"])
    if step is Step.RESUMING:
        return _resume(state, seen, now)
    if step is Step.AWAITING_WINDOW:
        return _await(state, writers, window, seen, generation, paused, apply_now, now, table)
    # Pausing, or Applying with no apply job left to look at.
    if writers is None:
        return resume(state, seen, now, Outcome(False, InvalidSpecError.reason(), "the spec became invalid"))
    if generation != state["generation"]:
        return resume(state, seen, now, None)
    if paused:
        return resume(state, seen, now, None, again=True)
    if step is Step.APPLYING:
        message = "the apply job is gone and its result was never read"
        return resume(state, seen, now, Outcome(False, Reason.APPLY_JOB_LOST, message))
    return _pause(state, writers, seen, now, table, apply_deadline)


def _await(
    state: dict[str, Any],
    writers: WritersSpec | None,
    window: Window | None,
    seen: Mapping[str, ObservedWriter] | None,
    generation: int,
    paused: bool,
    apply_now: str,
    now: datetime,
    table: str,
) -> Advance:
    if writers is None or generation != state["generation"]:
        return Advance(_cleared(state), carry_on=True)
    if paused:
        return Advance(state, phase=Reason.PAUSED)
    overridden = apply_now == state["planId"]
    if window is not None and window.start_of(now) is None and not overridden:
        state["nextWindow"] = _stamp(window.next_start(now))
        message = (
            f"plan {state['planId']} waits for its window ({window.text}, UTC): next at {state['nextWindow']}"
        )
        return Advance(state, phase=Reason.AWAITING_WINDOW, message=message)
    state.pop("nextWindow", None)
    if not writers.workloads:
        return Advance(_cleared(state), submit_apply=True)
    if seen is None:
        message = "spec.writers needs the operator in a cluster: the local mode cannot pause workloads"
        return Advance(_cleared(state), stall=Outcome(False, Reason.WRITERS_UNAVAILABLE, message))
    missing = [w.key for w in writers.workloads if not seen[w.key].found]
    if missing:
        message = f"writer(s) not found in the table's namespace: {', '.join(missing)}; nothing was paused"
        return Advance(_cleared(state), stall=Outcome(False, Reason.WRITER_NOT_FOUND, message))
    if refusing := [w.key for w in writers.workloads if not seen[w.key].consents]:
        return Advance(_cleared(state), stall=_not_consented(refusing, table, "nothing was paused"))
    # Recorded before anything is paused: this status is written first, the pauses come next pass.
    state["items"] = [{**w.to_status(), "prior": seen[w.key].state()} for w in writers.workloads]
    state.update(step=Step.PAUSING.value, pausedAt=_stamp(now))
    state["deadline"] = _stamp(now + timedelta(seconds=writers.quiesce_timeout))
    names = ", ".join(w.key for w in writers.workloads)
    why = "the window is open" if not overridden else "the apply-now annotation names this plan"
    message = f"pausing the table's writers ({names}) to apply plan {state['planId']}: {why}"
    return Advance(
        state,
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
    return Outcome(False, Reason.WRITER_NOT_CONSENTED, message)


def _pause(
    state: dict[str, Any],
    writers: WritersSpec,
    seen: Mapping[str, ObservedWriter] | None,
    now: datetime,
    table: str,
    apply_deadline: int,
) -> Advance:
    by_key = {w.key: w for w in writers.workloads}
    items = state.get("items") or []
    if seen is None or any(item_key(i) not in by_key for i in items):
        return resume(state, seen, now, None)  # the spec names other writers now: start over
    missing = [item_key(i) for i in items if not seen[item_key(i)].found]
    if missing:
        message = f"writer(s) gone while pausing: {', '.join(missing)}"
        return resume(state, seen, now, Outcome(False, Reason.WRITER_NOT_FOUND, message))
    if refusing := [item_key(i) for i in items if not seen[item_key(i)].consents]:
        return resume(state, seen, now, _not_consented(refusing, table, "their consent went while pausing"))
    actions, loud = [], []
    for item in items:
        writer, found = by_key[item_key(item)], seen[item_key(item)]
        if not _paused(writer, found):
            paused = 0 if writer.suspend is None else writer.suspend.suspended
            actions.append(_action(WriterVerb.PAUSE, writer, paused))
        if not _quiet(writer, found):
            loud.append(writer.key + (f" ({found.pods} pod(s))" if writer.scaled else ""))
    if not loud:
        state["step"] = Step.APPLYING.value
        state["applyDeadline"] = _stamp(now + timedelta(seconds=apply_deadline))
        names = ", ".join(item_key(i) for i in items)
        message = f"writers paused ({names}): applying plan {state['planId']}"
        return Advance(
            state, phase=Reason.APPLYING, message=message, submit_apply=True,
            events=(normal(Reason.WRITERS_PAUSED, message),),
        )  # fmt: skip
    if now >= datetime.fromisoformat(state["deadline"]):
        message = f"writers not quiet by the quiesce timeout ({state['deadline']}): {', '.join(loud)}"
        return resume(state, seen, now, Outcome(False, Reason.QUIESCE_TIMEOUT, message))
    message = f"waiting for the writers to stop: {', '.join(loud)}"
    return Advance(state, tuple(actions), phase=Reason.PAUSING_WRITERS, message=message)


def overdue(state: Mapping[str, Any] | None, now: datetime) -> bool:
    """Whether an apply has held the writers paused past the admins' apply deadline."""
    seconds = until_deadline(state, now)
    return seconds is not None and seconds <= 0


def until_deadline(state: Mapping[str, Any] | None, now: datetime) -> float | None:
    """Seconds until the apply deadline of the writers' pause (None: no apply holds them)."""
    deadline = (state or {}).get("applyDeadline")
    if not state or state.get("step") != Step.APPLYING or not deadline:
        return None
    return (datetime.fromisoformat(str(deadline)) - now).total_seconds()


def winding_down(state: Mapping[str, Any] | None, now: datetime) -> bool:
    """Whether the writers are being resumed, or are due to be (an apply past its deadline), whatever
    jobs still run."""
    return bool(state and state.get("step") == Step.RESUMING) or overdue(state, now)


def resume(
    state: Mapping[str, Any],
    seen: Mapping[str, ObservedWriter] | None,
    now: datetime,
    outcome: Outcome | None,
    *,
    again: bool = False,
) -> Advance:
    """Resume every writer recorded, then end with ``outcome`` (None: carry on as if nothing began;
    ``again``: wait for the window again, the same plan)."""
    state = {**state, "step": Step.RESUMING.value}
    if outcome is not None:
        state["outcome"] = outcome.to_status()
    if again:
        state["again"] = True
    return _resume(state, seen, now)


def _resume(state: dict[str, Any], seen: Mapping[str, ObservedWriter] | None, now: datetime) -> Advance:
    actions, waiting = [], []
    for item in state.get("items") or []:
        key, prior = item_key(item), item["prior"]
        found = (seen or {}).get(key)
        if found is None or not found.found:
            continue  # unobservable (local mode) or deleted: nothing left to resume
        if found.state() != prior:
            writer = recorded_writer(item)
            actions.append(_action(WriterVerb.RESUME, writer, prior.get("replicas", prior.get("value"))))
            waiting.append(key)
    if seen is None and state.get("items"):
        waiting = [item_key(i) for i in state["items"]]
    if waiting:
        message = f"resuming the table's writers: {', '.join(waiting)}"
        return Advance(state, tuple(actions), phase=Reason.RESUMING_WRITERS, message=message)
    paused_at = state.get("pausedAt")
    events: list[Event] = []
    last = state.get("last")
    if paused_at:
        seconds = round((now - datetime.fromisoformat(paused_at)).total_seconds(), 1)
        names = [item_key(i) for i in state.get("items") or []]
        described = ", ".join(_described(i) for i in state.get("items") or [])
        last = {"pausedAt": paused_at, "resumedAt": _stamp(now), "downtimeSeconds": seconds, "writers": names}
        events.append(normal(Reason.WRITERS_RESUMED, f"resumed {described} after {seconds:g} s paused"))
    outcome = Outcome.from_status(state["outcome"]) if state.get("outcome") else None
    if state.get("again"):
        fresh = begin(state["planId"], state["generation"], state["retryToken"], state["checkRecords"], last)
        return Advance(
            fresh, phase=Reason.AWAITING_WINDOW, events=tuple(events), message="paused by annotation"
        )
    cleared = {"last": last} if last else {}
    return Advance(cleared, outcome=outcome, carry_on=outcome is None, events=tuple(events))


def item_key(item: Mapping[str, Any]) -> str:
    return f"{item['kind']}/{item['name']}"


def _described(item: Mapping[str, Any]) -> str:
    prior = item["prior"]
    if "replicas" in prior:
        return f"{item_key(item)} ({prior['replicas']} replica(s))"
    return f"{item_key(item)} ({item['path']}: {prior['value']})"


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


def _cleared(state: Mapping[str, Any]) -> dict[str, Any]:
    return {"last": state["last"]} if state.get("last") else {}


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")

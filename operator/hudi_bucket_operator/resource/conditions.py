"""Status conditions in the shape kstatus reads (so Flux and Argo CD health checks work unchanged).

Three conditions, always all present: ``Ready`` (the table matches the spec), ``Reconciling`` (work is in
flight), ``Stalled`` (stuck until someone changes something). ``phase`` is a one-word summary for people.
``LayoutHealthy`` joins them once a layout check (spec.verify) ran: whether every record is in its bucket
and every bucket in one file group. A condition keeps its lastTransitionTime while its status holds.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Final, NamedTuple

from hudi_bucket_operator.resource.table_status import Condition, TableStatus

READY, RECONCILING, STALLED = "Ready", "Reconciling", "Stalled"  # Ready and Stalled are phases too
LAYOUT_HEALTHY = "LayoutHealthy"
MAX_MESSAGE = 4096  # characters of a condition's message (the CRD allows 32768; an Event shows 1024)


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


class Event(NamedTuple):
    """A Kubernetes Event to post about the table: its type, a ``Reason`` and what happened."""

    type: EventType
    reason: str
    message: str


def normal(reason: str, message: str) -> Event:
    return Event(EventType.NORMAL, reason, message)


def warning(reason: str, message: str) -> Event:
    return Event(EventType.WARNING, reason, message)


class Reason:
    """Every reason the operator gives a condition or an event, declared once. A phase is the reason of
    the work in flight or of the wait, else Ready or Stalled. A spec refused stalls with a reason of its
    own: its error's name (``InvalidSpecError.reason``). docs/troubleshooting.md says what each means
    and what to do; tests/install/test_troubleshooting.py fails when one is missing there."""

    # Work in flight: Reconciling is True.
    PLANNING: Final = "Planning"
    VERIFYING: Final = "Verifying"
    APPLYING: Final = "Applying"
    PAUSING_WRITERS: Final = "PausingWriters"
    RESUMING_WRITERS: Final = "ResumingWriters"
    # Waiting for people or the clock: neither in progress nor stuck.
    AWAITING_APPROVAL: Final = "AwaitingApproval"
    AWAITING_WINDOW: Final = "AwaitingWindow"
    PAUSED: Final = "Paused"
    # Ready is True.
    CONVERGED: Final = "Converged"
    APPLIED: Final = "Applied"
    # Stalled is True (besides a refused spec's reason).
    JOB_FAILED: Final = "JobFailed"
    INVALID_REPORT: Final = "InvalidReport"
    REPAIR_INCOMPLETE: Final = "RepairIncomplete"
    RECONCILE_ERROR: Final = "ReconcileError"
    WRITERS_UNAVAILABLE: Final = "WritersUnavailable"
    WRITER_NOT_FOUND: Final = "WriterNotFound"
    WRITER_NOT_CONSENTED: Final = "WriterNotConsented"
    QUIESCE_TIMEOUT: Final = "QuiesceTimeout"
    APPLY_JOB_LOST: Final = "ApplyJobLost"
    APPLY_DEADLINE_EXCEEDED: Final = "ApplyDeadlineExceeded"
    # Reconciling and Stalled while they are False.
    IDLE: Final = "Idle"
    NONE: Final = "None"
    # LayoutHealthy; a violation is a Warning event too.
    LAYOUT_VERIFIED: Final = "LayoutVerified"
    LAYOUT_VIOLATION: Final = "LayoutViolation"
    # Events only.
    PLAN_DENIED: Final = "PlanDenied"  # Stalled too
    APPROVED: Final = "Approved"
    REPAIRED: Final = "Repaired"
    WRITERS_PAUSED: Final = "WritersPaused"
    WRITERS_RESUMED: Final = "WritersResumed"


def bounded(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters, saying how many more there were."""
    if len(message) <= limit:
        return message
    more = f" ... ({len(message) - limit} more characters)"
    return message[: limit - len(more)] + more


def stamp(moment: datetime) -> str:
    """A moment as the status records one: RFC 3339 in UTC, to the second (2026-11-24T01:00:00Z)."""
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _set(
    status: TableStatus, now: datetime, kind: str, value: bool, reason: str, message: str
) -> TableStatus:
    wanted = "True" if value else "False"
    existing = {c.type: c for c in status.conditions or []}
    old = existing.get(kind)
    existing[kind] = Condition(
        type=kind,
        status=wanted,
        reason=reason,
        message=bounded(message),
        observed_generation=status.observed_generation,
        last_transition_time=old.last_transition_time if old and old.status == wanted else stamp(now),
    )
    ordered = [existing[k] for k in (READY, RECONCILING, STALLED, LAYOUT_HEALTHY) if k in existing]
    return status.model_copy(update={"conditions": ordered})


def _apply(
    status: TableStatus,
    now: datetime,
    phase: str,
    *,
    ready: bool,
    reconciling: bool,
    stalled: bool,
    reason: str,
    message: str,
) -> TableStatus:
    status = status.model_copy(update={"phase": phase})
    status = _set(status, now, READY, ready, reason, message)
    status = _set(
        status,
        now,
        RECONCILING,
        reconciling,
        reason if reconciling else Reason.IDLE,
        message if reconciling else "",
    )
    return _set(status, now, STALLED, stalled, reason if stalled else Reason.NONE, message if stalled else "")


def progressing(status: TableStatus, now: datetime, reason: str, message: str) -> TableStatus:
    return _apply(
        status, now, reason, ready=False, reconciling=True, stalled=False, reason=reason, message=message
    )


def scheduled(status: TableStatus, phase: str) -> TableStatus:
    """Scheduled work on a Ready table (a layout check, a re-measurement) is running: the phase says
    which, and the conditions stay as they are, so health checks do not flap on routine work. What the
    work finds (a violation, a new plan) changes them."""
    return status.model_copy(update={"phase": phase})


def ready(status: TableStatus, now: datetime, reason: str, message: str) -> TableStatus:
    return _apply(
        status, now, READY, ready=True, reconciling=False, stalled=False, reason=reason, message=message
    )


def awaiting(
    status: TableStatus, now: datetime, message: str, reason: str = Reason.AWAITING_APPROVAL
) -> TableStatus:
    """Waiting for people (an approval) or for the clock (a maintenance window): neither in progress
    nor stuck."""
    return _apply(
        status, now, reason, ready=False, reconciling=False, stalled=False, reason=reason, message=message
    )


def stalled(status: TableStatus, now: datetime, reason: str, message: str) -> TableStatus:
    return _apply(
        status, now, STALLED, ready=False, reconciling=False, stalled=True, reason=reason, message=message
    )


def paused(status: TableStatus, now: datetime) -> TableStatus:
    message = "paused by annotation: no new job starts until it is removed"
    return _apply(
        status,
        now,
        Reason.PAUSED,
        ready=False,
        reconciling=False,
        stalled=False,
        reason=Reason.PAUSED,
        message=message,
    )


def layout_health(
    status: TableStatus, now: datetime, healthy: bool, reason: str, message: str
) -> TableStatus:
    """What the last layout check found; the other conditions are left as they are."""
    return _set(status, now, LAYOUT_HEALTHY, healthy, reason, message)


def condition(status: TableStatus, kind: str) -> Condition | None:
    return next((c for c in status.conditions or [] if c.type == kind), None)


def is_ready(status: TableStatus) -> bool:
    found = condition(status, READY)
    return found is not None and found.status == "True"


def awaiting_approval_since(status: TableStatus) -> str | None:
    """When the plan awaiting approval was first made (None: no plan awaits approval). A status written
    before plans recorded it says when planning last ended (Reconciling turned False)."""
    if status.phase != Reason.AWAITING_APPROVAL:
        return None
    if status.plan is not None and status.plan.planned_at:
        return status.plan.planned_at
    found = condition(status, RECONCILING)
    return None if found is None else found.last_transition_time

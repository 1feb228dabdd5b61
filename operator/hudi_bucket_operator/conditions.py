"""Status conditions in the shape kstatus reads (so Flux and Argo CD health checks work unchanged).

Three conditions, always all present: ``Ready`` (the table matches the spec), ``Reconciling`` (work is in
flight), ``Stalled`` (stuck until someone changes something). ``phase`` is a one-word summary for people.
``LayoutHealthy`` joins them once a layout check (spec.verify) ran: whether every record is in its bucket
and every bucket in one file group. A condition keeps its lastTransitionTime while its status holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

READY, RECONCILING, STALLED = "Ready", "Reconciling", "Stalled"
LAYOUT_HEALTHY = "LayoutHealthy"


def _set(status: dict[str, Any], now: datetime, kind: str, value: bool, reason: str, message: str) -> None:
    stamp = now.isoformat(timespec="seconds").replace("+00:00", "Z")
    wanted = "True" if value else "False"
    existing = {c["type"]: c for c in status.get("conditions") or []}
    old = existing.get(kind)
    existing[kind] = {
        "type": kind,
        "status": wanted,
        "reason": reason,
        "message": message,
        "observedGeneration": status.get("observedGeneration"),
        "lastTransitionTime": old["lastTransitionTime"] if old and old.get("status") == wanted else stamp,
    }
    status["conditions"] = [
        existing[k] for k in (READY, RECONCILING, STALLED, LAYOUT_HEALTHY) if k in existing
    ]


def _apply(
    status: dict[str, Any],
    now: datetime,
    phase: str,
    *,
    ready: bool,
    reconciling: bool,
    stalled: bool,
    reason: str,
    message: str,
) -> dict[str, Any]:
    status = dict(status)
    status["phase"] = phase
    _set(status, now, READY, ready, reason, message)
    _set(
        status,
        now,
        RECONCILING,
        reconciling,
        reason if reconciling else "Idle",
        message if reconciling else "",
    )
    _set(status, now, STALLED, stalled, reason if stalled else "None", message if stalled else "")
    return status


def progressing(status: dict[str, Any], now: datetime, reason: str, message: str) -> dict[str, Any]:
    return _apply(
        status, now, reason, ready=False, reconciling=True, stalled=False, reason=reason, message=message
    )


def scheduled(status: dict[str, Any], phase: str) -> dict[str, Any]:
    """Scheduled work on a Ready table (a layout check, a re-measurement) is running: the phase says
    which, and the conditions stay as they are, so health checks do not flap on routine work. What the
    work finds (a violation, a new plan) changes them."""
    return {**status, "phase": phase}


def ready(status: dict[str, Any], now: datetime, reason: str, message: str) -> dict[str, Any]:
    return _apply(
        status, now, "Ready", ready=True, reconciling=False, stalled=False, reason=reason, message=message
    )


def awaiting(
    status: dict[str, Any], now: datetime, message: str, reason: str = "AwaitingApproval"
) -> dict[str, Any]:
    """Waiting for people (an approval) or for the clock (a maintenance window): neither in progress
    nor stuck."""
    return _apply(
        status, now, reason, ready=False, reconciling=False, stalled=False, reason=reason, message=message
    )


def stalled(status: dict[str, Any], now: datetime, reason: str, message: str) -> dict[str, Any]:
    return _apply(
        status, now, "Stalled", ready=False, reconciling=False, stalled=True, reason=reason, message=message
    )


def paused(status: dict[str, Any], now: datetime) -> dict[str, Any]:
    message = "paused by annotation: no new job starts until it is removed"
    return _apply(
        status, now, "Paused", ready=False, reconciling=False, stalled=False, reason="Paused", message=message
    )


def layout_health(
    status: dict[str, Any], now: datetime, healthy: bool, reason: str, message: str
) -> dict[str, Any]:
    """What the last layout check found; the other conditions are left as they are."""
    status = dict(status)
    _set(status, now, LAYOUT_HEALTHY, healthy, reason, message)
    return status


def condition(status: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def is_ready(status: Mapping[str, Any]) -> bool:
    return (condition(status, READY) or {}).get("status") == "True"

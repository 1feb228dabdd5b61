"""Prometheus metrics: reconciles, jobs by kind and outcome, rescale durations and rows rewritten, layout
violations found and partitions repaired; and per table (labelled by namespace and name, one series
each, the phase as one series labelled with it) what its status says: its phase and readiness, since
when a plan awaits approval, its last layout check, its writers' pause and its last rescale. A series
is there only where the status says something of it (a fleet of 10,000 tables scrapes each one 10,000
times), and the admins may leave whole per-table families out. ``table_values`` reads those from a
status (pure); ``record_table`` sets them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from datetime import datetime
from typing import Generic, NamedTuple, TypeVar

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from hudi_bucket.release import VERSION
from hudi_bucket_operator.resource import conditions
from hudi_bucket_operator.resource.conditions import Reason
from hudi_bucket_operator.resource.schedule import Schedule
from hudi_bucket_operator.resource.table_status import HistoryEntry, LastJob, TableStatus
from hudi_bucket_operator.resource.writers_state import HOLDING, ApplySteps, Step

RECONCILES = Counter(
    "hbo_reconciles_total", "Reconcile passes, by the phase they left the table in", ["phase"]
)
JOBS_SUBMITTED = Counter("hbo_jobs_submitted_total", "Jobs started", ["kind"])
JOBS_FINISHED = Counter("hbo_jobs_finished_total", "Jobs whose result was recorded", ["kind", "outcome"])
RESCALE_SECONDS = Histogram(
    "hbo_rescale_duration_seconds",
    "Wall time of successful apply jobs",
    buckets=(10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600),
)
ROWS_REWRITTEN = Counter("hbo_rows_rewritten_total", "Rows rewritten by apply jobs")
LAYOUT_VIOLATIONS = Counter(
    "hbo_layout_violations_found_total", "Bucket layout violations found by verify jobs (spec.verify)"
)
LEADER = Gauge("hbo_leader", "1 while this replica holds the leader Lease and reconciles, else 0")
BUILD_INFO = Gauge("hbo_build_info", "1, labelled with the operator's release", ["version"])
BUILD_INFO.labels(version=VERSION).set(1)
PARTITIONS_REPAIRED = Counter(
    "hbo_partitions_repaired_total", "Partitions apply jobs rewrote to repair their bucket layout"
)

# Per table: set by the leader after each pass, removed when the table is deleted or unmanaged.
TABLE = ["namespace", "name"]
PHASES = (
    Reason.VERIFYING, Reason.PLANNING, Reason.AWAITING_APPROVAL, Reason.AWAITING_WINDOW,
    Reason.PAUSING_WRITERS, Reason.APPLYING, Reason.RESUMING_WRITERS, conditions.READY, conditions.STALLED,
    Reason.PAUSED,
)  # fmt: skip
T = TypeVar("T")
TABLE_PHASE = Gauge(
    "hbo_table_phase",
    "1, labelled with the table's phase (status.phase): one series a table",
    [*TABLE, "phase"],
)


class PerTable(NamedTuple, Generic[T]):
    """One value a table for each gauge below: the gauges themselves, or what they show."""

    ready: T
    plan_waiting_since: T
    last_verify: T
    layout_violations: T
    verify_due: T
    skew: T
    largest_file_group: T
    median_file_group: T
    writers_paused: T
    writers_paused_since: T
    writers_resume_deadline: T
    writers_last_downtime: T
    last_rescale_seconds: T
    last_rescale_rows: T
    last_rescale_finished: T


TABLE_GAUGES = PerTable(
    ready=Gauge("hbo_table_ready", "1 while the table's Ready condition is True, else 0", TABLE),
    plan_waiting_since=Gauge(
        "hbo_table_plan_awaiting_approval_since_timestamp_seconds",
        "When the table's plan began awaiting approval (only while it does)",
        TABLE,
    ),
    last_verify=Gauge(
        "hbo_table_last_verify_timestamp_seconds",
        "When the table's layout was last checked (spec.verify)",
        TABLE,
    ),
    layout_violations=Gauge(
        "hbo_table_layout_violations", "Bucket layout violations the table's last layout check found", TABLE
    ),
    verify_due=Gauge(
        "hbo_table_verify_due_timestamp_seconds",
        "When the table's next layout check is due (spec.verify.schedule after the last check)",
        TABLE,
    ),
    skew=Gauge(
        "hbo_table_file_group_skew_ratio",
        "The table's largest file group against the median one, by bytes (1 is even), at its last layout check",
        TABLE,
    ),
    largest_file_group=Gauge(
        "hbo_table_file_group_largest_bytes",
        "The table's largest file group (its latest file slice) at its last layout check",
        TABLE,
    ),
    median_file_group=Gauge(
        "hbo_table_file_group_median_bytes",
        "The table's median file group (its latest file slice) at its last layout check",
        TABLE,
    ),
    writers_paused=Gauge(
        "hbo_table_writers_paused", "1 while the operator holds the table's writers paused (else none)", TABLE
    ),
    writers_paused_since=Gauge(
        "hbo_table_writers_paused_since_timestamp_seconds",
        "When the table's writers were paused (while they are)",
        TABLE,
    ),
    writers_resume_deadline=Gauge(
        "hbo_table_writers_resume_deadline_timestamp_seconds",
        "When the paused writers are resumed at the latest: the quiesce timeout while pausing, the admins' "
        "apply deadline while applying",
        TABLE,
    ),
    writers_last_downtime=Gauge(
        "hbo_table_writers_last_downtime_seconds", "How long the table's last pause held its writers", TABLE
    ),
    last_rescale_seconds=Gauge(
        "hbo_table_last_rescale_duration_seconds",
        "Wall time of the table's last apply (status.history)",
        TABLE,
    ),
    last_rescale_rows=Gauge("hbo_table_last_rescale_rows", "Rows the table's last apply rewrote", TABLE),
    last_rescale_finished=Gauge(
        "hbo_table_last_rescale_timestamp_seconds", "When the table's last apply finished", TABLE
    ),
)

METRICS = (
    RECONCILES, JOBS_SUBMITTED, JOBS_FINISHED, RESCALE_SECONDS, ROWS_REWRITTEN, LAYOUT_VIOLATIONS,
    PARTITIONS_REPAIRED, LEADER, BUILD_INFO, TABLE_PHASE, *TABLE_GAUGES,
)  # fmt: skip


def reference() -> str:
    """The metrics as a Markdown table (docs/metrics.md ends with it; a test keeps the two equal)."""
    rows = ["| metric | type | labels | what it counts |", "|---|---|---|---|"]
    for metric in METRICS:
        (family,) = metric.describe()
        shown = f"{family.name}_total" if family.type == "counter" else family.name
        labels = ", ".join(f"`{label}`" for label in metric._labelnames)  # no public accessor
        rows.append(f"| `{shown}` | {family.type} | {labels} | {family.documentation} |")
    return "\n".join(rows) + "\n"


def record_job(status: TableStatus) -> None:
    """Count the job the status just recorded (its last job), with what it did."""
    job = status.last_job or LastJob()
    outcome = "Failed" if status.phase == "Stalled" else "Succeeded"
    JOBS_FINISHED.labels(kind=job.kind or "", outcome=outcome).inc()
    latest = (status.history or [HistoryEntry()])[0]
    if job.kind == "apply" and latest.job == job.name and outcome == "Succeeded":
        if latest.seconds is not None:
            RESCALE_SECONDS.observe(latest.seconds)
        ROWS_REWRITTEN.inc(latest.rows or 0)
        PARTITIONS_REPAIRED.inc(latest.repairs or 0)
    if job.kind == "verify":
        LAYOUT_VIOLATIONS.inc((status.layout.violations or 0) if status.layout else 0)


def table_values(status: TableStatus, verify: Schedule | None) -> PerTable[float | None]:
    """What each per-table gauge shows for a table with ``status`` and spec.verify's schedule ``verify``:
    None where the status says nothing of it (no series then, rather than a 0 that an alert on a
    timestamp would read as 1970)."""
    layout = status.layout
    checked = layout.checked_at if layout else None
    writers = status.writers
    steps = writers if isinstance(writers, ApplySteps) and writers.step in HOLDING else None
    paused_at = steps.paused_at if steps else None
    deadline = None
    if steps and paused_at:
        deadline = steps.apply_deadline if steps.step is Step.APPLYING else steps.deadline
    last_pause = writers.last if writers else None
    latest = status.history[0] if status.history else None
    return PerTable(
        ready=float(conditions.is_ready(status)),
        plan_waiting_since=_seconds(conditions.awaiting_approval_since(status)),
        last_verify=_seconds(checked),
        layout_violations=layout.violations if layout else None,
        verify_due=verify.next_after(datetime.fromisoformat(checked)).timestamp()
        if verify and checked
        else None,
        skew=layout.skew if layout else None,
        largest_file_group=layout.largest_file_group_bytes if layout else None,
        median_file_group=layout.median_file_group_bytes if layout else None,
        writers_paused=1.0 if paused_at is not None else None,
        writers_paused_since=_seconds(paused_at),
        writers_resume_deadline=_seconds(deadline),
        writers_last_downtime=last_pause.downtime_seconds if last_pause else None,
        last_rescale_seconds=latest.seconds if latest else None,
        last_rescale_rows=latest.rows if latest else None,
        last_rescale_finished=_seconds(latest.finished) if latest else None,
    )


def _seconds(stamp: str | None) -> float | None:
    return datetime.fromisoformat(stamp).timestamp() if stamp else None


# The per-table families the admins chose not to export (HBO_OMIT_TABLE_METRICS).
_OMITTED: set[str] = set()


def table_families() -> tuple[str, ...]:
    """The names of the per-table families, as /metrics shows them."""
    return tuple(gauge._name for gauge in (TABLE_PHASE, *TABLE_GAUGES))  # no public accessor


def record_table(namespace: str, name: str, status: TableStatus, verify: Schedule | None) -> None:
    """Set the table's gauges to what its status says: one phase series, the phase's, and a gauge only
    where the status says something of it."""
    for phase in PHASES:
        if phase == status.phase and TABLE_PHASE._name not in _OMITTED:
            TABLE_PHASE.labels(namespace, name, phase).set(1)
        else:
            _remove(TABLE_PHASE, namespace, name, phase)
    for gauge, value in zip(TABLE_GAUGES, table_values(status, verify), strict=True):
        if value is None or gauge._name in _OMITTED:
            _remove(gauge, namespace, name)
        else:
            gauge.labels(namespace, name).set(value)


def _remove(gauge: Gauge, *labels: str) -> None:
    with contextlib.suppress(KeyError):  # never set, or removed already
        gauge.remove(*labels)


def forget_table(namespace: str, name: str) -> None:
    """Remove the table's series: it was deleted, or is no longer the operator's to manage."""
    for gauge in (TABLE_PHASE, *TABLE_GAUGES):
        gauge.remove_by_labels({"namespace": namespace, "name": name})


def serve(port: int, omit: Collection[str] = ()) -> None:
    """Expose /metrics on ``port`` (0 disables it), without the per-table families ``omit`` names."""
    _OMITTED.clear()
    _OMITTED.update(omit)
    if port:
        start_http_server(port)

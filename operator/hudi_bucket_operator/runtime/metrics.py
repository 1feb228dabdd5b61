"""Prometheus metrics: reconciles, jobs by kind and outcome, rescale durations and rows rewritten, layout
violations found and partitions repaired."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from hudi_bucket_operator.resource.table_status import HistoryEntry, LastJob, TableStatus

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
PARTITIONS_REPAIRED = Counter(
    "hbo_partitions_repaired_total", "Partitions apply jobs rewrote to repair their bucket layout"
)


METRICS = (
    RECONCILES, JOBS_SUBMITTED, JOBS_FINISHED, RESCALE_SECONDS, ROWS_REWRITTEN, LAYOUT_VIOLATIONS,
    PARTITIONS_REPAIRED, LEADER,
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


def serve(port: int) -> None:
    """Expose /metrics on ``port`` (0 disables it)."""
    if port:
        start_http_server(port)

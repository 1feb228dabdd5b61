"""Metrics count what the operator records: jobs by kind and outcome, rescale durations and rows, layout
violations found and partitions repaired; per table, the gauges show what its status says."""

from __future__ import annotations

from datetime import datetime

from prometheus_client import REGISTRY
from prometheus_client.metrics import MetricWrapperBase

from hudi_bucket_operator.resource.schedule import Schedule
from hudi_bucket_operator.resource.table_status import LastJob, LayoutFound, PlanSummary, TableStatus
from hudi_bucket_operator.runtime import metrics
from lib.paths import REPO


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_recorded_apply_counts_its_outcome_duration_and_rows() -> None:
    before = (
        sample("hbo_jobs_finished_total", kind="apply", outcome="Succeeded"),
        sample("hbo_rescale_duration_seconds_count"),
        sample("hbo_rows_rewritten_total"),
    )
    status = TableStatus(
        phase="Ready",
        last_job=LastJob(name="orders-apply-1", kind="apply"),
        history=[{"job": "orders-apply-1", "seconds": 12.5, "rows": 1000}],
    )
    metrics.record_job(status)
    assert sample("hbo_jobs_finished_total", kind="apply", outcome="Succeeded") == before[0] + 1
    assert sample("hbo_rescale_duration_seconds_count") == before[1] + 1
    assert sample("hbo_rows_rewritten_total") == before[2] + 1000


def test_a_failed_plan_counts_as_failed_and_rewrites_nothing() -> None:
    failed = sample("hbo_jobs_finished_total", kind="plan", outcome="Failed")
    rows = sample("hbo_rows_rewritten_total")
    metrics.record_job(TableStatus(phase="Stalled", last_job=LastJob(name="orders-plan-1", kind="plan")))
    assert sample("hbo_jobs_finished_total", kind="plan", outcome="Failed") == failed + 1
    assert sample("hbo_rows_rewritten_total") == rows


def test_a_layout_check_counts_the_violations_it_found_and_a_repair_the_partitions_it_mended() -> None:
    found, repaired = sample("hbo_layout_violations_found_total"), sample("hbo_partitions_repaired_total")
    metrics.record_job(
        TableStatus(
            phase="Planning",
            last_job=LastJob(name="orders-verify-1", kind="verify"),
            layout=LayoutFound(violations=3),
        )
    )
    assert sample("hbo_layout_violations_found_total") == found + 3
    status = TableStatus(
        phase="Ready",
        last_job=LastJob(name="orders-apply-2", kind="apply"),
        history=[{"job": "orders-apply-2", "seconds": 1.0, "rows": 10, "repairs": 2}],
    )
    metrics.record_job(status)
    assert sample("hbo_partitions_repaired_total") == repaired + 2


def test_every_metric_is_documented_as_the_module_declares_it() -> None:
    declared = {v for v in vars(metrics).values() if isinstance(v, MetricWrapperBase)} | set(
        metrics.TABLE_GAUGES
    )
    assert declared == set(metrics.METRICS)
    assert (REPO / "docs" / "metrics.md").read_text().endswith("\n" + metrics.reference())


def stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def condition(kind: str, status: str, since: str) -> dict[str, str]:
    return {"type": kind, "status": status, "lastTransitionTime": since}


# A Ready table: checked daily, its last apply and the pause of its writers for it recorded.
READY = TableStatus.of(
    {
        "phase": "Ready",
        "conditions": [
            condition("Ready", "True", "2026-11-20T10:00:00Z"),
            condition("Reconciling", "False", "2026-11-20T10:00:00Z"),
        ],
        "layout": {
            "checkedAt": "2026-11-21T06:00:00Z",
            "violations": 0,
            "fileGroups": 12,
            "largestFileGroupBytes": 300,
            "medianFileGroupBytes": 120,
        },
        "writers": {
            "last": {
                "pausedAt": "2026-11-20T09:00:00Z",
                "resumedAt": "2026-11-20T09:10:00Z",
                "downtimeSeconds": 600.0,
                "writers": ["Deployment/ingest"],
            }
        },
        "history": [
            {"job": "orders-apply-2", "seconds": 540.5, "rows": 1000, "finished": "2026-11-20T09:09:00Z"},
            {"job": "orders-apply-1", "seconds": 1.0, "rows": 1, "finished": "2026-11-01T00:00:00Z"},
        ],
    }
)


def test_a_ready_tables_gauges_show_its_last_check_its_skew_when_the_next_is_due_and_its_last_apply() -> None:
    values = metrics.table_values(READY, Schedule.parse("24h"))
    assert values == metrics.PerTable(
        ready=1.0,
        plan_waiting_since=None,
        last_verify=stamp("2026-11-21T06:00:00Z"),
        layout_violations=0,
        verify_due=stamp("2026-11-22T06:00:00Z"),
        skew=2.5,
        largest_file_group=300,
        median_file_group=120,
        writers_paused=None,
        writers_paused_since=None,
        writers_resume_deadline=None,
        writers_last_downtime=600.0,
        last_rescale_seconds=540.5,
        last_rescale_rows=1000,
        last_rescale_finished=stamp("2026-11-20T09:09:00Z"),
    )
    assert metrics.table_values(READY, None).verify_due is None  # no spec.verify: never due


def test_a_plan_awaits_approval_since_planning_ended_and_a_new_table_shows_only_its_phase() -> None:
    awaiting = TableStatus.of(
        {
            "phase": "AwaitingApproval",
            "conditions": [
                condition("Ready", "False", "2026-11-21T08:00:00Z"),
                condition("Reconciling", "False", "2026-11-21T08:05:00Z"),
            ],
        }
    )
    # A status from before plans recorded when they were made: since planning last ended.
    assert metrics.table_values(awaiting, None).plan_waiting_since == stamp("2026-11-21T08:05:00Z")
    made = awaiting.model_copy(update={"plan": PlanSummary(id="sha256:1", planned_at="2026-11-20T07:00:00Z")})
    assert metrics.table_values(made, None).plan_waiting_since == stamp("2026-11-20T07:00:00Z")
    assert metrics.table_values(READY, None).plan_waiting_since is None
    new = metrics.table_values(TableStatus(), Schedule.parse("24h"))
    assert new == metrics.PerTable(
        0.0, None, None, None, None, None, None, None, None, None, None, None, None, None, None
    )  # its readiness only (and its phase)


STEPS = {"planId": "sha256:1", "generation": 3, "retryToken": "", "checkRecords": False}


def test_paused_writers_show_since_when_and_until_when_the_quiesce_timeout_then_the_apply_deadline() -> None:
    pausing = {
        **STEPS,
        "step": "Pausing",
        "pausedAt": "2026-11-21T01:00:00Z",
        "deadline": "2026-11-21T01:05:00Z",
        "items": [],
    }
    values = metrics.table_values(TableStatus.of({"phase": "PausingWriters", "writers": pausing}), None)
    assert (values.writers_paused, values.writers_paused_since, values.writers_resume_deadline) == (
        1.0,
        stamp("2026-11-21T01:00:00Z"),
        stamp("2026-11-21T01:05:00Z"),
    )
    applying = {**pausing, "step": "Applying", "applyDeadline": "2026-11-21T07:00:00Z"}
    values = metrics.table_values(TableStatus.of({"phase": "Applying", "writers": applying}), None)
    assert values.writers_resume_deadline == stamp("2026-11-21T07:00:00Z")
    waiting = {**STEPS, "step": "AwaitingWindow"}  # nothing paused yet
    values = metrics.table_values(TableStatus.of({"phase": "AwaitingWindow", "writers": waiting}), None)
    assert (values.writers_paused, values.writers_paused_since, values.writers_resume_deadline) == (
        None,
        None,
        None,
    )


def test_a_tables_series_are_set_from_its_status_and_removed_when_it_goes() -> None:
    table = {"namespace": "lake", "name": "events"}
    metrics.record_table("lake", "events", READY, None)
    assert REGISTRY.get_sample_value("hbo_table_phase", {**table, "phase": "Ready"}) == 1
    assert REGISTRY.get_sample_value("hbo_table_phase", {**table, "phase": "Stalled"}) is None  # one series
    assert REGISTRY.get_sample_value("hbo_table_last_rescale_rows", table) == 1000
    # What the status no longer says has no series (not a 0).
    metrics.record_table("lake", "events", TableStatus(phase="Stalled"), None)
    assert REGISTRY.get_sample_value("hbo_table_phase", {**table, "phase": "Stalled"}) == 1
    assert REGISTRY.get_sample_value("hbo_table_phase", {**table, "phase": "Ready"}) is None
    assert REGISTRY.get_sample_value("hbo_table_last_rescale_rows", table) is None
    metrics.forget_table("lake", "events")
    assert REGISTRY.get_sample_value("hbo_table_phase", {**table, "phase": "Stalled"}) is None
    assert REGISTRY.get_sample_value("hbo_table_ready", table) is None


def test_the_admins_may_leave_per_table_families_out() -> None:
    table = {"namespace": "lake", "name": "quiet"}
    metrics.serve(0, omit=("hbo_table_last_rescale_rows", "hbo_table_phase"))
    try:
        metrics.record_table("lake", "quiet", READY, None)
        assert REGISTRY.get_sample_value("hbo_table_last_rescale_rows", table) is None
        assert REGISTRY.get_sample_value("hbo_table_phase", {**table, "phase": "Ready"}) is None
        assert REGISTRY.get_sample_value("hbo_table_ready", table) == 1
    finally:
        metrics.serve(0)
        metrics.forget_table("lake", "quiet")
    assert "hbo_table_last_rescale_rows" in metrics.table_families()

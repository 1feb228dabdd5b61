"""Metrics count what the operator records: jobs by kind and outcome, rescale durations and rows, layout
violations found and partitions repaired."""

from __future__ import annotations

from prometheus_client import REGISTRY
from prometheus_client.metrics import MetricWrapperBase

from hudi_bucket_operator.resource.table_status import LastJob, LayoutFound, TableStatus
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
    declared = {v for v in vars(metrics).values() if isinstance(v, MetricWrapperBase)}
    assert declared == set(metrics.METRICS)
    assert (REPO / "docs" / "metrics.md").read_text().endswith("\n" + metrics.reference())

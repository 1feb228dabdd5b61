"""The status's models (table_status.py), from which the CRD's status schema is generated: a status as the
operator writes it reads back into the models and out again unchanged, the CRD admits it, and a plan's
summary is bounded as the CRD bounds it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hudi_bucket.core.planning import ChangeReason, PartitionChange, Plan
from hudi_bucket.core.rules import BucketRules
from hudi_bucket_operator.resource.table_status import MAX_ITEMS, PlanSummary, TableStatus
from lib.hbt_admission import ADMISSION

# A status with every field the CRD declares, as the operator writes it.
WRITTEN: dict[str, Any] = {
    "observedGeneration": 3,
    "phase": "Ready",
    "conditions": [
        {"type": "Ready", "status": "True", "reason": "Applied", "message": "applied",
         "observedGeneration": 3, "lastTransitionTime": "2026-11-24T01:00:00Z"},
        {"type": "Reconciling", "status": "False", "reason": "Idle", "message": "",
         "observedGeneration": 3, "lastTransitionTime": "2026-11-24T01:00:00Z"},
    ],
    "config": {"instant": "20261124010000000", "expressions": "day=.*,8", "default": 4},
    "partitions": {"count": 2, "byBuckets": {"8": 1, "4": 1},
                   "items": [{"partition": "day=1", "buckets": 8}, {"partition": "day=2", "buckets": 4}],
                   "omitted": 0},
    "plan": {
        "id": "sha256:" + "3f9a" * 16, "basis": "0123456789abcdef", "noop": False, "configChanges": True,
        "rules": {"expressions": "day=.*,8", "default": 4},
        "sizing": {"sizedPartitions": 2, "resized": 1, "shuffleFree": 1, "rules": 1,
                   "measured": "2026-11-24T00:00:00Z"},
        "partitions": 2, "repairs": 0, "rows": 10, "bytes": 1000, "duplicateKeys": 0,
        "items": [
            {"partition": "day=1", "oldBuckets": 4, "newBuckets": 8, "fileGroups": 4, "rows": 5, "bytes": 500,
             "reason": "rescale", "shuffleFree": True, "duplicateKeys": 0},
            # A partition with no bucket layout yet: null, as the CRD allows (nullable), is kept.
            {"partition": "day=2", "oldBuckets": None, "newBuckets": 4, "fileGroups": 1, "rows": 5,
             "bytes": 500, "reason": "convert", "shuffleFree": False, "duplicateKeys": 0},
        ],
        "omitted": 0,
    },
    "layout": {"checkedAt": "2026-11-24T00:00:00Z", "violations": 1, "byKind": {"misplaced": 1},
               "partitions": 1, "items": ["day=1"], "recheck": True},
    "lastJob": {"name": "orders-apply-1", "kind": "apply", "generation": 3, "retryToken": "",
                "phase": "Completed", "recorded": True},
    # Free-form in the CRD: the shapes the operator always wrote there (test_writers_state.py has each step's).
    "writers": {
        "step": "Applying", "planId": "sha256:" + "3f9a" * 16, "generation": 3, "retryToken": "",
        "checkRecords": False, "pausedAt": "2026-11-24T00:50:00Z", "deadline": "2026-11-24T01:05:00Z",
        "applyDeadline": "2026-11-24T06:50:00Z",
        "items": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "ingest", "plural": "deployments",
                   "prior": {"replicas": 2}}],
    },
    "history": [
        {"job": "orders-apply-1", "instant": "20261124010000000", "planId": "sha256:" + "3f9a" * 16,
         "partitions": 2, "rows": 10, "seconds": 12.5, "outcome": "Succeeded", "finished": "2026-11-24T01:00:00Z",
         "repairs": 1, "duplicatesResolved": 3, "writersDowntimeSeconds": 30.0},
    ],
}  # fmt: skip


def test_a_written_status_reads_back_unchanged() -> None:
    assert TableStatus.of(WRITTEN).to_api() == WRITTEN


def test_the_crd_admits_a_status_the_models_write() -> None:
    table = {
        "apiVersion": "hudi.bucketops.io/v1alpha1",
        "kind": "HudiBucketTable",
        "metadata": {"name": "orders"},
        "spec": {
            "table": {"uri": "/t"},
            "buckets": {"default": 4, "rules": [{"pattern": "x", "buckets": 2}]},
        },
        "status": TableStatus.of(WRITTEN).to_api(),
    }
    assert ADMISSION.errors(table) == []


def test_a_table_never_reconciled_has_an_empty_status() -> None:
    assert TableStatus.of(None) == TableStatus.of({}) == TableStatus()
    assert TableStatus().to_api() == {}


# --- a plan, bounded for the status ----------------------------------------------------------------------


def _plan(sizes: list[int], *, repaired: int = 0) -> Plan:
    """A plan rewriting one partition of each size (the first ``repaired`` of them to mend their layout)."""
    changes = tuple(
        PartitionChange(
            f"dt={i:02d}",
            2,
            4,
            2,
            size * 10,
            size,
            ChangeReason.REPAIR if i < repaired else ChangeReason.RESCALE,
        )
        for i, size in enumerate(sizes)
    )
    return Plan(BucketRules.parse("x,1", 4), BucketRules.parse("x,1", 2), changes, "20261124000000000")


def test_a_plan_summary_is_bounded_and_lists_the_largest_changes_first() -> None:
    plan = _plan(list(range(60)), repaired=3)
    summary = PlanSummary.of(plan.reported(), MAX_ITEMS // 2)
    assert len(summary.items or []) == 50
    assert summary.omitted == 10
    assert [item.bytes for item in summary.items or []] == list(range(59, 9, -1))
    assert (summary.partitions, summary.bytes, summary.repairs) == (60, sum(range(60)), 3)
    assert summary.id == plan.plan_id
    json.dumps(TableStatus(plan=summary).to_api())


def test_a_plan_summary_lists_at_most_max_items_and_may_list_none() -> None:
    plan = _plan([1, 1, 1])
    assert PlanSummary.of(plan.reported(), 2).omitted == 1
    assert (PlanSummary.of(plan.reported(), 0).items, PlanSummary.of(plan.reported(), 0).omitted) == ([], 3)
    for out_of_bounds in (-1, MAX_ITEMS + 1):  # the CRD lists at most MAX_ITEMS
        with pytest.raises(ValueError, match="max_items"):
            PlanSummary.of(plan.reported(), out_of_bounds)


def test_a_partition_not_laid_out_yet_keeps_its_null_old_bucket_count() -> None:
    convert = PartitionChange("dt=01", None, 4, 1, 10, 100, ChangeReason.CONVERT)
    plan = Plan(BucketRules.parse("x,1", 4), None, (convert,), "20261124000000000")
    written = TableStatus(plan=PlanSummary.of(plan.reported(), 20)).to_api()
    assert written["plan"]["items"][0]["oldBuckets"] is None
    assert TableStatus.of(written).to_api() == written

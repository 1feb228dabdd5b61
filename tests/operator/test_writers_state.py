"""status.writers as its models read and write it (writers_state.py): the JSON the operator always stored
there, at each step, reads back and out again unchanged (a table an older operator paused the writers of
is resumed by this one), and what the models refuse to read."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from hudi_bucket_operator.decide import maintenance
from hudi_bucket_operator.resource.table_status import TableStatus
from hudi_bucket_operator.resource.writers_state import (
    ApplySteps,
    Outcome,
    PausedWriter,
    Prior,
    Step,
    WritersState,
)

PLAN = "sha256:" + "3f9a" * 16
BEGUN = {"planId": PLAN, "generation": 3, "retryToken": "r1", "checkRecords": False}
LAST = {
    "pausedAt": "2026-11-23T01:00:00Z", "resumedAt": "2026-11-23T01:20:00Z", "downtimeSeconds": 1200.0,
    "writers": ["Deployment/ingest", "FlinkDeployment/orders-cdc"],
}  # fmt: skip
SCALED = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ingest", "plural": "deployments",
          "prior": {"replicas": 3}}  # fmt: skip
SUSPENDED = {"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment", "name": "orders-cdc",
             "plural": "flinkdeployments", "path": "spec.job.state", "prior": {"value": "running"}}  # fmt: skip
# A suspend field that was unset: its prior is null, and said so.
UNSET = {**SUSPENDED, "name": "audit-cdc", "prior": {"value": None}}
PAUSING = {
    "step": "Pausing", **BEGUN, "items": [SCALED, SUSPENDED, UNSET], "pausedAt": "2026-11-24T01:00:00Z",
    "deadline": "2026-11-24T01:15:00Z",
}  # fmt: skip

# status.writers as the operator wrote it at each step, before these models.
STORED: dict[str, dict[str, Any]] = {
    "awaiting-window": {"step": "AwaitingWindow", **BEGUN, "last": LAST, "nextWindow": "2026-11-24T01:00:00Z"},
    "pausing": PAUSING,
    "applying": {**PAUSING, "step": "Applying", "applyDeadline": "2026-11-24T07:02:00Z"},
    "resuming": {**PAUSING, "step": "Resuming",
                 "outcome": {"ready": False, "reason": "QuiesceTimeout", "message": "writers not quiet"}},
    "resuming-to-wait-again": {**PAUSING, "step": "Resuming", "again": True},
    "between-applies": {"last": LAST},
}  # fmt: skip


@pytest.mark.parametrize("stored", STORED.values(), ids=STORED.keys())
def test_what_the_operator_stored_reads_back_and_out_unchanged(stored: dict[str, Any]) -> None:
    assert TableStatus.of({"writers": stored}).to_api() == {"writers": stored}


def test_a_step_recorded_reads_as_the_steps_and_none_as_what_is_left_between_applies() -> None:
    steps = TableStatus.of({"writers": STORED["applying"]}).writers
    assert isinstance(steps, ApplySteps)
    assert maintenance.holding(steps)
    assert (steps.step, steps.plan_id, steps.apply_deadline) == (Step.APPLYING, PLAN, "2026-11-24T07:02:00Z")
    assert [(w.key, w.prior.setting) for w in steps.paused] == [
        ("Deployment/ingest", 3), ("FlinkDeployment/orders-cdc", "running"), ("FlinkDeployment/audit-cdc", None),
    ]  # fmt: skip
    idle = TableStatus.of({"writers": STORED["between-applies"]}).writers
    assert type(idle) is WritersState
    assert not maintenance.active(idle)
    assert idle.last is not None
    assert idle.last.downtime_seconds == 1200


def test_a_state_built_by_name_is_written_as_stored() -> None:
    steps = maintenance.begin(PLAN, 3, "r1", False, None).model_copy(
        update={"step": Step.RESUMING, "outcome": Outcome.stalled("QuiesceTimeout", "writers not quiet")}
    )
    assert TableStatus(writers=steps).to_api()["writers"] == {
        "step": "Resuming", **BEGUN,
        "outcome": {"ready": False, "reason": "QuiesceTimeout", "message": "writers not quiet"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("stored", "refused"),
    [
        ({"step": "Applying", "generation": 3, "retryToken": "", "checkRecords": False}, "planId"),
        ({"step": "Quiescing", **BEGUN}, "step"),
        ({"step": "Pausing", **BEGUN, "items": [SCALED]}, "quiesce deadline"),
        ({**PAUSING, "items": [{**SCALED, "prior": {"value": "running"}}]}, "paused by scale"),
        ({**PAUSING, "items": [{**SUSPENDED, "prior": {"replicas": 1}}]}, "paused by scale"),
        ({**PAUSING, "items": [{**SCALED, "prior": {"replicas": 3, "value": "x"}}]}, "not both"),
        ({**PAUSING, "items": [{**SCALED, "plural": None}]}, "plural"),
    ],
    ids=["no-plan", "unknown-step", "pausing-without-deadline", "scaled-with-a-value",
         "suspended-with-replicas", "both-priors", "no-plural"],
)  # fmt: skip
def test_steps_that_could_not_be_taken_again_are_refused_not_forgotten(
    stored: dict[str, Any], refused: str
) -> None:
    """A step recorded but unreadable fails the pass, saying why, rather than reading as no step at all
    (which would leave the writers it paused paused)."""
    with pytest.raises(ValidationError, match=refused):
        TableStatus.of({"writers": stored})


def test_a_prior_is_what_the_writer_was_set_to() -> None:
    assert Prior(replicas=0).setting == 0
    assert Prior(value=None).setting is None
    assert (
        PausedWriter.model_validate(UNSET).described() == "FlinkDeployment/audit-cdc (spec.job.state: None)"
    )
    assert PausedWriter.model_validate(SCALED).described() == "Deployment/ingest (3 replica(s))"

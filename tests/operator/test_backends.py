"""What a SparkApplication's status says of our job: the phase the reconcile decision reads."""

from __future__ import annotations

from typing import Any

import pytest

from hudi_bucket_operator.decide.decisions import JobPhase
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import KIND
from hudi_bucket_operator.runtime.backends import observed_job


def application(state: str | None, kind: str = "plan", owner: str = KIND) -> dict[str, Any]:
    status = {} if state is None else {"applicationState": {"state": state, "errorMessage": "why"}}
    return {
        "metadata": {
            "name": "orders-plan-1",
            "labels": {naming.JOB_KIND_LABEL: kind, naming.GENERATION_LABEL: "3"},
            "ownerReferences": [{"kind": owner, "uid": "u-1"}],
        },
        "status": status,
    }


@pytest.mark.parametrize(
    ("state", "phase"),
    [
        (None, JobPhase.PENDING),  # not picked up yet
        ("SUBMITTED", JobPhase.PENDING),
        ("PENDING_RERUN", JobPhase.PENDING),
        ("RUNNING", JobPhase.RUNNING),
        ("COMPLETED", JobPhase.COMPLETED),
        ("FAILED", JobPhase.FAILED),
        ("SUBMISSION_FAILED", JobPhase.FAILED),  # never submitted again under restartPolicy Never
    ],
)
def test_the_spark_operators_states_map_to_job_phases(state: str | None, phase: JobPhase) -> None:
    observed = observed_job(application(state))
    assert observed is not None
    owner, job = observed
    assert (owner, job.phase, job.generation) == ("u-1", phase, 3)


def test_a_submission_that_failed_carries_the_spark_operators_error() -> None:
    observed = observed_job(application("SUBMISSION_FAILED"))
    assert observed is not None
    assert observed[1].error == "why"


@pytest.mark.parametrize(
    "app",
    [application("COMPLETED", kind="write"), application("COMPLETED", owner="Deployment")],
    ids=["a-kind-the-operator-never-runs", "owned-by-something-else"],
)
def test_an_application_not_of_ours_is_no_job(app: dict[str, Any]) -> None:
    assert observed_job(app) is None

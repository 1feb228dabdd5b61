"""One pass for one table as the handlers and the local mode run it: whatever the decision raises, the
table stalls saying so and the writers the operator paused are resumed; what the API raises is retried."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hudi_bucket_operator.decide.decisions import Observed, SubmitJob
from hudi_bucket_operator.errors import KubeError
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.resource.writers import ObservedWriter, Writer
from hudi_bucket_operator.runtime import controller
from hudi_bucket_operator.runtime.backends import TableRef

pytestmark = pytest.mark.asyncio

NOW = datetime(2026, 11, 24, 1, 30, tzinfo=UTC)
# A status whose steps paused a Deployment of 3 replicas for an apply.
PAUSED = {
    "writers": {
        "step": "Applying",
        "planId": "sha256:" + "0" * 64,
        "generation": 1,
        "retryToken": "",
        "checkRecords": False,
        "pausedAt": "2026-11-24T01:20:00Z",
        "items": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ingest", "plural": "deployments",
             "prior": {"replicas": 3}},
        ],
    }
}  # fmt: skip
BODY = {
    "metadata": {"name": "orders", "namespace": "lake", "uid": "u-1", "generation": 1},
    "spec": {"table": {"uri": "s3a://lake/orders"}, "buckets": {"default": 4, "rules": [{"pattern": "x", "buckets": 8}]}},
}  # fmt: skip


class Backend:
    policy = Policy()

    async def report(self, table: TableRef, name: str) -> None:
        return None

    async def submit(self, table: TableRef, spec: TableSpec, job: SubmitJob) -> str:
        raise AssertionError("no job for a table whose pass failed")

    async def forget(self, table: TableRef, name: str) -> None:
        pass

    async def cancel(self, table: TableRef, name: str) -> None:
        pass


def broken(error: BaseException) -> Any:
    def decide(observed: Observed, now: datetime) -> Any:
        raise error

    return decide


async def test_a_pass_that_raises_resumes_the_paused_writers_and_stalls_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(controller, "decide", broken(RecursionError("maximum recursion depth exceeded")))
    replicas = 0
    read: list[list[str]] = []

    async def writers(wanted: list[Writer]) -> dict[str, ObservedWriter]:
        read.append([w.key for w in wanted])
        return {"Deployment/ingest": ObservedWriter(replicas=replicas, pods=replicas)}

    body: dict[str, Any] = {**BODY, "status": PAUSED}
    first = await controller.reconcile_once(Backend(), body, [], NOW, writers=writers)
    assert read == [["Deployment/ingest"]]  # the writers the status holds paused, read to resume them
    assert [(a.kind, a.name, a.replicas) for a in first.writer_actions] == [("Deployment", "ingest", 3)]
    replicas = 3  # the handler performs the actions after writing the status
    second = await controller.reconcile_once(Backend(), {**BODY, "status": first.status.to_api()}, [], NOW,
                                             writers=writers)  # fmt: skip
    assert second.status.phase == "Stalled"
    held = next(c for c in second.status.conditions or [] if c.type == "Stalled")
    assert (held.status, held.reason) == ("True", "ReconcileError")
    assert "RecursionError" in (held.message or "")
    assert list(second.status.to_api()["writers"]) == ["last"]  # the steps are over
    assert [r for _, r, _ in second.events] == ["WritersResumed", "ReconcileError"]


async def test_a_pass_that_raises_with_no_writer_paused_only_stalls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(controller, "decide", broken(ValueError("x" * 100_000)))
    decision = await controller.reconcile_once(Backend(), {**BODY, "status": {}}, [], NOW)
    assert (decision.status.phase, decision.submit, decision.writer_actions) == ("Stalled", None, ())
    assert len(decision.status.to_api()["conditions"][0]["message"]) <= 4096


async def test_what_the_api_raises_is_retried_not_blamed_on_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(controller, "decide", broken(KubeError(503, "etcd hiccup")))
    with pytest.raises(KubeError):
        await controller.reconcile_once(Backend(), {**BODY, "status": {}}, [], NOW)

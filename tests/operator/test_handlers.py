"""The Kopf handlers' own logic, called directly: status is written inside the table's lock, only when it
changed, and from the newest status this process knows, whatever snapshot Kopf hands in."""

from __future__ import annotations

import asyncio
import collections
from dataclasses import replace
from typing import Any

import kopf
import pytest

from hbt_resources import SPEC
from hudi_bucket_operator import handlers
from hudi_bucket_operator.backends import TableRef, job_name_for
from hudi_bucket_operator.reconcile import JobPhase, ObservedJob, SubmitJob
from hudi_bucket_operator.spec import UNMANAGED, TableSpec

pytestmark = pytest.mark.asyncio

BODY: dict[str, Any] = {
    "metadata": {"name": "orders", "namespace": "lake", "uid": "u-1", "generation": 1},
    "spec": SPEC,
    "status": {},
}


class MemoryBackend:
    """Jobs kept in a dict: submitted jobs stay Pending until a test moves them on."""

    def __init__(self) -> None:
        self.jobs: dict[str, ObservedJob] = {}

    async def observe(self, table: TableRef) -> list[ObservedJob]:
        return list(self.jobs.values())

    async def submit(self, table: TableRef, spec: TableSpec, job: SubmitJob) -> str:
        name = job_name_for(table, job)
        self.jobs[name] = ObservedJob(
            name, job.kind, job.generation, job.retry_token, JobPhase.PENDING, "2026-11-21T00:00:00Z"
        )
        return name

    async def forget(self, table: TableRef, name: str) -> None:
        self.jobs.pop(name, None)

    def move_all(self, phase: JobPhase) -> None:
        self.jobs = {name: replace(job, phase=phase) for name, job in self.jobs.items()}


class RecordingKube:
    """Records every status write; ``delay`` holds each write, so concurrent passes could interleave."""

    def __init__(self, delay: float = 0.0) -> None:
        self.writes: list[dict[str, Any]] = []
        self.delay = delay

    async def patch_status(self, resource: Any, namespace: str, name: str, status: dict) -> None:
        assert (resource, namespace, name) == (handlers.TABLES, "lake", "orders")
        await asyncio.sleep(self.delay)
        self.writes.append(status)


@pytest.fixture
def memo(monkeypatch: pytest.MonkeyPatch) -> kopf.Memo:
    monkeypatch.setattr(handlers.kopf, "event", lambda *args, **kwargs: None)
    memo = kopf.Memo()
    memo.locks = collections.defaultdict(asyncio.Lock)
    memo.statuses = {}
    memo.tables = {}
    memo.backend = MemoryBackend()
    memo.kube = RecordingKube()
    return memo


MODIFIED = {"type": "MODIFIED"}
APP = {"metadata": {"ownerReferences": [{"kind": "HudiBucketTable", "name": "orders", "uid": "u-1"}]}}


async def test_a_pass_that_changes_nothing_writes_nothing(memo: kopf.Memo) -> None:
    await handlers.changed(event=MODIFIED, body=BODY, memo=memo)  # submits the plan job
    await handlers.job_changed(body=APP, memo=memo)  # sees it pending
    assert [w["lastJob"]["phase"] for w in memo.kube.writes] == ["Pending", "Pending"]

    # Kopf may keep handing in the snapshot from before our writes; the job has not moved.
    await handlers.changed(event=MODIFIED, body=BODY, memo=memo)
    await handlers.job_changed(body=APP, memo=memo)

    assert len(memo.kube.writes) == 2


async def test_concurrent_passes_write_in_the_order_they_decided(memo: kopf.Memo) -> None:
    memo.kube = RecordingKube(delay=0.05)
    await handlers.changed(event=MODIFIED, body=BODY, memo=memo)
    await handlers.job_changed(body=APP, memo=memo)
    memo.backend.move_all(JobPhase.RUNNING)

    # A job's event and the table's event on the same stale snapshot, at once.
    await asyncio.gather(
        handlers.job_changed(body=APP, memo=memo),
        handlers.changed(event=MODIFIED, body=BODY, memo=memo),
    )

    phases = [w["lastJob"]["phase"] for w in memo.kube.writes]
    assert phases == ["Pending", "Pending", "Running"]
    assert memo.statuses["u-1"] == memo.kube.writes[-1]


async def test_a_job_of_an_unknown_table_or_another_owner_kind_reconciles_nothing(memo: kopf.Memo) -> None:
    await handlers.job_changed(body=APP, memo=memo)  # the table was never seen
    other = {"metadata": {"ownerReferences": [{"kind": "ConfigMap", "uid": "u-1"}]}}
    memo.tables["u-1"] = BODY
    await handlers.job_changed(body=other, memo=memo)
    assert memo.kube.writes == []
    assert memo.backend.jobs == {}


async def test_a_deleted_table_is_forgotten(memo: kopf.Memo) -> None:
    await handlers.changed(event=MODIFIED, body=BODY, memo=memo)
    assert "u-1" in memo.statuses

    await handlers.changed(event={"type": "DELETED"}, body=BODY, memo=memo)

    assert "u-1" not in memo.statuses
    assert "u-1" not in memo.locks
    assert "u-1" not in memo.tables


async def test_a_table_marked_unmanaged_is_forgotten_and_left_alone(memo: kopf.Memo) -> None:
    await handlers.changed(event=MODIFIED, body=BODY, memo=memo)
    unmanaged = {**BODY, "metadata": {**BODY["metadata"], "annotations": {UNMANAGED: "true"}}}
    await handlers.changed(event=MODIFIED, body=unmanaged, memo=memo)
    assert "u-1" not in memo.tables
    assert len(memo.kube.writes) == 1  # only the first pass wrote


async def test_the_resync_reconciles_every_known_table(
    memo: kopf.Memo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handlers, "CONFIG", replace(handlers.CONFIG, resync_seconds=0.01))
    memo.tables["u-1"] = BODY
    resync = asyncio.create_task(handlers._resync(memo))
    try:
        for _ in range(200):
            if memo.backend.jobs:
                break
            await asyncio.sleep(0.01)
    finally:
        resync.cancel()
    assert len(memo.backend.jobs) == 1

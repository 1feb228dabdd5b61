"""The Kopf handlers' own logic, called directly: events queue tables, the work queue reconciles them,
status is written only when it changed, a job just created counts as there before its watch event."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import kopf
import pytest
import pytest_asyncio
from prometheus_client import REGISTRY

from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator.decide.decisions import JobPhase, ObservedJob, SubmitJob
from hudi_bucket_operator.errors import KubeConflictError, KubeError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import UNMANAGED
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.runtime import handlers, leadership
from hudi_bucket_operator.runtime.backends import TableRef, job_name_for
from hudi_bucket_operator.runtime.handlers import Memory
from hudi_bucket_operator.runtime.settings import OperatorConfig
from hudi_bucket_operator.runtime.workqueue import WorkQueue
from lib.hbt_resources import ANYWHERE, SPEC

pytestmark = pytest.mark.asyncio

UID = "u-1"
BODY: dict[str, Any] = {
    "metadata": {"name": "orders", "namespace": "lake", "uid": UID, "generation": 1},
    "spec": SPEC,
    "status": {},
}
MODIFIED = {"type": "MODIFIED"}


class MemoryBackend:
    """Submitted jobs go into ``created`` (the cluster); the index shows them once a test says so."""

    policy = Policy(JobDefaults(allowed_table_uris=ANYWHERE))

    def __init__(self) -> None:
        self.created: dict[str, ObservedJob] = {}
        self.submits = 0
        self.fail_next_submit = False

    async def report(self, table: TableRef, name: str) -> None:
        return None

    async def submit(self, table: TableRef, spec: TableSpec, job: SubmitJob) -> str:
        self.submits += 1
        if self.fail_next_submit:
            self.fail_next_submit = False
            raise KubeError(503, "etcd hiccup")
        name = job_name_for(table, job)
        self.created[name] = ObservedJob(
            name, job.kind, job.generation, job.retry_token, JobPhase.PENDING, "2026-11-21T00:00:00Z"
        )
        return name

    async def forget(self, table: TableRef, name: str) -> None:
        pass

    async def cancel(self, table: TableRef, name: str) -> None:
        pass


class RecordingKube:
    """The API server's side of the one table, as far as the handlers go: it holds the table at a
    resourceVersion, serves it, and takes a status write only onto that version (else a 409), recording
    each write it takes."""

    def __init__(self) -> None:
        self.writes: list[dict[str, Any]] = []
        self.reads = 0
        self.table = copy.deepcopy({**BODY, "metadata": {**BODY["metadata"], "resourceVersion": "1"}})

    @property
    def version(self) -> str:
        return str(self.table["metadata"]["resourceVersion"])

    def write(self, status: dict[str, Any]) -> str:
        """The table's status as someone wrote it: a new version."""
        self.table["status"] = status
        self.table["metadata"]["resourceVersion"] = str(int(self.version) + 1)
        return self.version

    async def get(self, resource: Any, namespace: str, name: str, subresource: str = "") -> dict[str, Any]:
        assert (resource, namespace, name) == (handlers.TABLES, "lake", "orders")
        self.reads += 1
        return copy.deepcopy(self.table)

    async def patch_status(
        self, resource: Any, namespace: str, name: str, status: dict[str, Any], resource_version: str
    ) -> str:
        assert (resource, namespace, name) == (handlers.TABLES, "lake", "orders")
        if resource_version != self.version:
            raise KubeConflictError(
                409, "the object has been modified; please apply your changes to the latest version"
            )
        self.writes.append(status)
        return self.write(status)


@pytest_asyncio.fixture
async def memo(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Memory]:
    """What the startup handler keeps in Kopf's memo, with an API and a backend that record; a lone
    operator (test_a_standby_reconciles_nothing_until_it_leads has an election)."""
    monkeypatch.setattr(handlers.kopf, "event", lambda *args, **kwargs: None)
    memo = Memory(OperatorConfig.from_env(), RecordingKube(), MemoryBackend(), election=None)
    memo.jobs = {}  # what Kopf's index is to the handlers: uid -> the jobs
    memo.queue = WorkQueue(lambda uid: handlers._reconcile(uid, memo), workers=2, base_delay=0.01)
    memo.queue.start()
    yield memo
    await memo.queue.stop()


def index_shows_created_jobs(memo: Memory, phase: JobPhase = JobPhase.PENDING) -> None:
    memo.jobs = {UID: [replace(job, phase=phase) for job in memo.backend.created.values()]}


async def settled(memo: Memory) -> None:
    for _ in range(500):
        if not len(memo.queue):
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the queue did not drain")


def app_of(job: ObservedJob) -> dict[str, Any]:
    """The SparkApplication of a job, as the watch shows it."""
    return {
        "metadata": {
            "name": job.name,
            "labels": {naming.JOB_KIND_LABEL: job.kind.value, naming.GENERATION_LABEL: str(job.generation)},
            "ownerReferences": [{"kind": "HudiBucketTable", "name": "orders", "uid": UID}],
        }
    }


async def table_event(memo: Memory, body: dict[str, Any] = BODY, kind: str = "MODIFIED") -> None:
    """The watch shows ``body``, at the version the API server holds unless it names its own."""
    meta = {"resourceVersion": memo.kube.version, **body["metadata"]}
    await handlers.changed(
        event={"type": kind},
        body={**body, "metadata": meta},
        memo=kopf.Memo(memory=memo),
        job_index=memo.jobs,
    )


async def test_a_burst_of_events_submits_one_job_and_writes_one_status(memo: Memory) -> None:
    for _ in range(20):
        await table_event(memo)
    await settled(memo)
    assert memo.backend.submits == 1  # the job just created counts, though the index does not show it yet
    assert [w["lastJob"]["phase"] for w in memo.kube.writes] == ["Pending"]


async def test_a_standby_reconciles_nothing_until_it_leads(memo: Memory) -> None:
    memo.election = leadership.Election(memo.kube, "ops", "hudi-bucket-operator", "b_2")  # not campaigning
    await table_event(memo)
    await asyncio.sleep(0.2)
    assert (memo.backend.submits, memo.kube.writes) == (0, [])  # it watches, and waits
    memo.election.leading.set()  # it took the Lease: the table queued meanwhile is reconciled
    await settled(memo)
    assert memo.backend.submits == 1
    assert [w["lastJob"]["phase"] for w in memo.kube.writes] == ["Pending"]


async def test_a_jobs_event_reconciles_its_table_and_only_a_change_is_written(memo: Memory) -> None:
    await table_event(memo)
    await settled(memo)
    index_shows_created_jobs(memo, JobPhase.RUNNING)
    (job,) = memo.backend.created.values()
    await handlers.job_changed(body=app_of(job), memo=kopf.Memo(memory=memo), job_index=memo.jobs)
    await handlers.job_changed(body=app_of(job), memo=kopf.Memo(memory=memo), job_index=memo.jobs)
    await settled(memo)
    assert [w["lastJob"]["phase"] for w in memo.kube.writes] == ["Pending", "Running"]
    assert memo.expected[UID] == {}  # the index has it now
    assert memo.statuses[UID] == memo.kube.writes[-1]


async def test_a_job_of_a_table_never_seen_reconciles_nothing(memo: Memory) -> None:
    job = ObservedJob("orders-plan-x", JobKind.PLAN, 1, "", JobPhase.PENDING, "")
    await handlers.job_changed(body=app_of(job), memo=kopf.Memo(memory=memo), job_index=memo.jobs)
    await settled(memo)
    assert memo.kube.writes == []


async def test_a_failed_api_call_is_retried_not_blamed_on_the_table(memo: Memory) -> None:
    memo.backend.fail_next_submit = True
    await table_event(memo)
    for _ in range(500):
        if memo.backend.created:
            break
        await asyncio.sleep(0.005)
    assert memo.backend.submits == 2
    assert all(w["phase"] != "Stalled" for w in memo.kube.writes)


def phase_series(phase: str) -> float | None:
    return REGISTRY.get_sample_value(
        "hbo_table_phase", {"namespace": "lake", "name": "orders", "phase": phase}
    )


async def test_a_deleted_table_is_forgotten_and_so_are_its_series(memo: Memory) -> None:
    await table_event(memo)
    await settled(memo)
    assert phase_series(memo.kube.writes[-1]["phase"]) == 1
    await table_event(memo, kind="DELETED")
    assert (UID in memo.statuses, UID in memo.tables, UID in memo.expected) == (False, False, False)
    assert phase_series(memo.kube.writes[-1]["phase"]) is None


async def test_a_table_marked_unmanaged_is_forgotten_and_left_alone(memo: Memory) -> None:
    await table_event(memo)
    await settled(memo)
    unmanaged = {**BODY, "metadata": {**BODY["metadata"], "annotations": {UNMANAGED: "true"}}}
    await table_event(memo, unmanaged)
    await settled(memo)
    assert UID not in memo.tables
    assert len(memo.kube.writes) == 1  # only the first pass wrote
    assert phase_series(memo.kube.writes[-1]["phase"]) is None


async def test_the_resync_queues_every_known_table(memo: Memory) -> None:
    watching = memo.config.watching.model_copy(update={"resync_seconds": 0.01})
    memo.config = memo.config.model_copy(update={"watching": watching})
    memo.tables[UID] = BODY
    resync = asyncio.create_task(handlers._resync(memo))
    try:
        for _ in range(200):
            if memo.backend.created:
                break
            await asyncio.sleep(0.01)
    finally:
        resync.cancel()
    assert len(memo.backend.created) == 1


async def test_the_echo_of_our_own_status_write_queues_no_pass_but_a_change_does(memo: Memory) -> None:
    await table_event(memo)
    await settled(memo)
    echo = {**BODY, "status": memo.statuses[UID]}
    await table_event(memo, echo)
    assert len(memo.queue) == 0
    await table_event(memo, {**echo, "metadata": {**BODY["metadata"], "annotations": {"a": "b"}}})
    assert len(memo.queue) == 1


async def test_a_status_is_written_only_onto_the_table_the_pass_decided_on(memo: Memory) -> None:
    """Another replica wrote since the watch showed the table (an upgrade's old leader, say): the write
    is refused, the table is read as the API server holds it, and decided on again."""
    await table_event(memo)
    await settled(memo)
    (ours,) = memo.kube.writes
    theirs = {**ours, "phase": "Stalled", "observedGeneration": 1}
    memo.kube.write(theirs)  # the watch has not shown it yet
    reads = memo.kube.reads
    index_shows_created_jobs(memo, JobPhase.RUNNING)  # a pass that would write: the job runs
    memo.queue.add(UID)
    await settled(memo)
    assert memo.kube.reads > reads  # read again, after its write was refused
    assert memo.statuses[UID] == memo.kube.table["status"]  # what it knows is what the API server holds
    assert memo.versions[UID] == memo.kube.version


async def test_a_replica_that_begins_to_lead_reads_each_table_before_deciding(memo: Memory) -> None:
    """The watch may not show yet what the last leader wrote: the first pass of each table in a term
    decides on the table the API server holds, and writes nothing a stale view would have."""
    memo.election = leadership.Election(memo.kube, "ops", "hudi-bucket-operator", "b_2")  # not campaigning
    old_leader = Memory(OperatorConfig.from_env(), memo.kube, memo.backend, election=None)
    old_leader.jobs = {}
    await handlers.changed(
        event={"type": "MODIFIED"}, body=memo.kube.table, memo=kopf.Memo(memory=old_leader), job_index={}
    )
    await handlers._reconcile(UID, old_leader)  # it submitted the plan job and wrote so
    assert (memo.backend.submits, len(memo.kube.writes)) == (1, 1)
    reads = memo.kube.reads
    stale = {**BODY, "metadata": {**BODY["metadata"], "resourceVersion": "1"}}  # before that write
    await table_event(memo, stale)
    index_shows_created_jobs(memo)  # Kopf fills the job index before any handler runs
    handlers._won(memo)
    memo.election.leading.set()
    await settled(memo)
    assert memo.backend.submits == 1  # no second job
    assert memo.statuses[UID]["lastJob"] == memo.kube.writes[0]["lastJob"]
    assert memo.kube.reads == reads + 1

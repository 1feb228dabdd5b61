"""Kopf handlers: thin. They keep what the watches show, and queue the tables that need a look.

The shape of a controller-runtime controller: Kopf watches the HudiBucketTables (kept in ``Memory.tables``)
and our SparkApplications (kept in the ``job_index``, small ObservedJob values by owning table: Kopf fills
every index before any handler runs, so after a restart no table is judged before its jobs are known).
An event of either only adds the table's uid to a de-duplicating work queue; a bounded pool of workers
reconciles: the pure ``decide`` on what the watches show, one report read when a finished job's result
is recorded, the one action, and a status PATCH only when the status changed. A slow resync re-queues
every table from memory, with no API call unless something is to be done.
A replica acts only on what the API server holds: each status PATCH applies only onto the version of
the table the pass decided on (``Memory.versions``), and a table's first pass after this replica began to
lead reads it from the API server rather than the watch, which may not show yet what the last leader
wrote. A write onto a table changed since is refused, and the pass is made again on the table as it is:
writers are paused or resumed only once their state is written, so never on a view gone stale.
Every replica watches and keeps its memory warm; only the holder of the leader Lease reconciles (see
leadership.py): the workers of the others wait for it, and a standby that takes the Lease finds every
table queued already.
No handler needs a finalizer: a table carries one only while the operator may hold its writers paused
(WRITERS_FINALIZER), so deleting a table (or its namespace) waits for the operator only to resume them.
The finalizer earlier releases put on every table (for their poll timer) is removed by Kopf at the
table's next event: ``settings.persistence.finalizer`` still names it.
Deleting a HudiBucketTable never touches table data; its children go by owner reference.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass, field
from typing import Any, cast

import kopf

from hudi_bucket_operator.decide import maintenance
from hudi_bucket_operator.decide.decisions import JobPhase, ObservedJob
from hudi_bucket_operator.errors import KubeConflictError, KubeError, KubeNotFoundError
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import (
    API_VERSION,
    GROUP,
    KIND,
    PLURAL,
    UNMANAGED,
    VERSION,
    WRITERS_FINALIZER,
)
from hudi_bucket_operator.runtime import kube, leadership, metrics, workloads
from hudi_bucket_operator.runtime.backends import JobBackend, LocalBackend, SparkOperatorBackend, observed_job
from hudi_bucket_operator.runtime.controller import reconcile_once, table_ref
from hudi_bucket_operator.runtime.settings import LeaderElection, OperatorConfig
from hudi_bucket_operator.runtime.workqueue import WorkQueue

LEGACY_FINALIZER = f"{GROUP}/timers"  # what earlier builds (a poll timer per table) put on every table
TABLES = kube.Resource(GROUP, VERSION, PLURAL)
JOBS = kube.SPARK_APPLICATIONS
OURS = {naming.MANAGED_BY: naming.OPERATOR}
JobIndex = kopf.Index[str, ObservedJob]  # a table's uid -> its jobs
Table = dict[str, Any]  # what a pass reads of a table: metadata (some of it), spec and status (_plain)


@dataclass
class Memory:
    """What the operator keeps between events. One object in Kopf's memo (``memo.memory``): a handler
    gets a shallow copy of the memo, so what it sets here every handler sees."""

    config: OperatorConfig
    kube: kube.KubeClient
    backend: JobBackend
    election: leadership.Election | None
    tables: dict[str, Table] = field(default_factory=dict)  # uid -> the table as last seen
    statuses: dict[str, dict[str, Any]] = field(default_factory=dict)  # uid -> the status written last
    # uid -> the resourceVersion the next status write must find: our last write's, or the API server's
    # when read (absent: read the table first; a watch event showing our status moves it on)
    versions: dict[str, str] = field(default_factory=dict)
    jobs: JobIndex | None = None  # Kopf's index of our SparkApplications, as last handed to a handler
    # uid -> {name: job} submitted, but not in the index yet (its watch event is due)
    expected: dict[str, dict[str, ObservedJob]] = field(default_factory=dict)
    queue: WorkQueue[str] = field(init=False)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)  # the resync, the campaign for the Lease

    def __post_init__(self) -> None:
        # Its workers start with the first event (see `_queue`), inside the context Kopf gives handlers:
        # kopf.event needs that context, which tasks started here would not have.
        self.queue = WorkQueue(
            lambda uid: _reconcile(uid, self), workers=self.config.watching.workers, expected=(KubeError,)
        )


def memory(memo: kopf.Memo) -> Memory:
    kept: Memory = memo.memory
    return kept


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    # The CLI hands its settings in the memo; `kopf run` of this module reads them from the environment.
    config: OperatorConfig = memo.get("config") or OperatorConfig.from_env()
    # Kopf's own words are posted as Events only when something fails: "handler succeeded" on every
    # event would be an API write per table event. Our decisions are posted by `_reconcile` itself.
    settings.posting.level = logging.WARNING
    settings.persistence.finalizer = LEGACY_FINALIZER  # so Kopf removes it
    settings.persistence.diffbase_storage = _NoDiffBase()
    # With namespaces named, there is nothing to discover: do not list namespaces or watch CRDs.
    settings.scanning.disabled = bool(config.watching.namespaces)
    client = kube.KubeClient(config.watching.workers)  # logged in by `login`, run after the startup handlers
    election = _election(config.leader_election, client) if config.leader_election.enabled else None
    kept = memo.memory = Memory(config, client, _backend(config, client), election)
    kept.tasks.append(asyncio.create_task(_resync(kept)))
    if election is not None:
        kept.tasks.append(asyncio.create_task(election.run(won=lambda: _won(kept), lost=_lost)))
    else:
        _won(kept)
    metrics.serve(config.metrics.port, config.metrics.omit_table_metrics)


@kopf.on.login()
async def login(memo: kopf.Memo, **_: Any) -> kopf.ConnectionInfo:
    """One identity for Kopf and for our client: the pod's service account, else the kubeconfig.

    Kopf calls this again when the API answers 401 (a rotated token), so both are made anew each time.
    """
    kept = memory(memo)
    configuration = await kube.load_configuration(kept.config.kube.server)
    await kept.kube.log_in(configuration)
    return await kube.connection_info(configuration)


def _backend(config: OperatorConfig, client: kube.KubeClient) -> JobBackend:
    if config.backend.kind == "local":
        return LocalBackend(config.backend.local_state_dir, policy=config.policy)
    return SparkOperatorBackend(client, config.policy)


def _election(chosen: LeaderElection, client: kube.KubeClient) -> leadership.Election:
    namespace = chosen.lease_namespace or kube.own_namespace()
    me = leadership.identity(os.environ.get("HOSTNAME") or socket.gethostname())
    timing = leadership.Timing(chosen.lease_seconds)
    return leadership.Election(client, namespace, chosen.lease_name or naming.OPERATOR, me, timing)


def _won(memo: Memory) -> None:
    # What the watch shows may not be what the last leader wrote: each table is read again first.
    memo.versions.clear()
    metrics.LEADER.set(1)


def _lost() -> None:
    """Stop now, as controller-runtime's managers do: a pass still running could write after another
    replica has taken over. The container restarts, and stands by."""
    logging.getLogger(__name__).critical("lost the leader Lease: exiting")
    os._exit(1)


@kopf.on.cleanup()
async def cleanup(memo: kopf.Memo, **_: Any) -> None:
    kept = memory(memo)
    for task in kept.tasks:
        task.cancel()
    await kept.queue.stop()
    if kept.election is not None:  # no pass runs any more: the next replica may take over now
        await kept.election.release()
    await kept.kube.close()


@kopf.index(JOBS.group, JOBS.version, JOBS.plural, labels=OURS)
async def job_index(body: kopf.Body, **_: Any) -> dict[str, ObservedJob]:
    """Each of our SparkApplications as its owning table's uid -> the job (no body is kept)."""
    found = observed_job(body)
    return {} if found is None else {found[0]: found[1]}


# Kopf passes an index to a handler by its name, through the keywords its WatchingFn protocol leaves
# open, which the protocol cannot say: hence the two ignores.
@kopf.on.event(GROUP, VERSION, PLURAL)  # type: ignore[arg-type]
async def changed(
    event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, job_index: JobIndex, **_: Any
) -> None:
    kept = memory(memo)
    kept.jobs = job_index
    meta = body.get("metadata", {})
    uid = meta.get("uid", "")
    unmanaged = meta.get("annotations", {}).get(UNMANAGED, "").lower() == "true"
    if event.get("type") == "DELETED" or unmanaged:  # forget it: not even the resync looks at it
        metrics.forget_table(meta.get("namespace", ""), meta.get("name", ""))
        kept.tables.pop(uid, None)
        kept.statuses.pop(uid, None)
        kept.versions.pop(uid, None)
        kept.expected.pop(uid, None)
        kept.queue.forget(uid)
        return
    table = _plain(body)
    if uid in kept.versions and table["status"] == kept.statuses.get(uid):
        # The table with the status we know, at this version or later: the next pass may build on it.
        kept.versions[uid] = meta.get("resourceVersion", "")
    if not _echo_of_our_write(kept, uid, table):
        _queue(kept).add(uid)
    if table["status"] == kept.statuses.get(uid):
        table["status"] = kept.statuses[uid]  # one copy of a status in memory, not two
    kept.tables[uid] = table


@kopf.on.event(JOBS.group, JOBS.version, JOBS.plural, labels=OURS)  # type: ignore[arg-type]
async def job_changed(body: kopf.Body, memo: kopf.Memo, job_index: JobIndex, **_: Any) -> None:
    """A job moved (submitted, running, finished, deleted): look at the table that owns it."""
    kept = memory(memo)
    kept.jobs = job_index
    found = observed_job(body)
    if found is not None and found[0] in kept.tables:
        _queue(kept).add(found[0])


def _queue(memo: Memory) -> WorkQueue[str]:
    if not memo.queue.started:
        memo.queue.start()
    return memo.queue


async def _resync(memo: Memory) -> None:
    while True:
        await asyncio.sleep(memo.config.watching.resync_seconds)
        for uid in list(memo.tables):
            memo.queue.add(uid)


async def _reconcile(uid: str, memo: Memory) -> None:
    """One pass for one table (the work queue never runs two for the same table at once)."""
    if memo.election is not None:
        await memo.election.leading.wait()
    table = memo.tables.get(uid)
    if table is not None and uid not in memo.versions:
        table = await _read(memo, uid, table)
    if table is None:  # deleted since it was queued
        return
    meta = table["metadata"]
    version = memo.versions[uid]  # what the table is at as this pass sees it: its write applies onto it
    # The watch may still show a status older than the one we wrote last: while this process lives, its
    # own last status is the truth (after a restart, the stored one is).
    written = memo.statuses.get(uid, table["status"])
    body = {**table, "status": written}
    namespace = meta["namespace"]

    async def writers(wanted: list[Any]) -> Any:
        return await workloads.observe(memo.kube, namespace, meta["name"], wanted)

    decision = await reconcile_once(memo.backend, body, await _jobs(memo, body), writers=writers)
    status = decision.status.to_api()
    if status != written:
        try:
            memo.versions[uid] = await memo.kube.patch_status(
                TABLES, namespace, meta["name"], status, version
            )
        except KubeNotFoundError:  # deleted meanwhile: nothing left to report on
            return
        except KubeConflictError as err:  # decided on a table since changed: decide again on it as it is
            logging.getLogger(__name__).info("%s; looking again", err)
            memo.versions.pop(uid, None)
            memo.queue.add_after(uid, 0.0)
            return
    memo.statuses[uid] = status
    if uid in memo.tables:  # not deleted meanwhile, its series removed
        verify = decision.spec.verify_schedule if decision.spec is not None else None
        metrics.record_table(namespace, meta["name"], decision.status, verify)
    if not await _hold_while_writers_paused(memo, table, maintenance.holding(decision.status.writers)):
        memo.queue.add_after(uid, 1.0)  # once the watch shows the table as it is now
        return
    # Only now, with their prior state recorded in the status: a crash from here on resumes them.
    await workloads.perform(memo.kube, namespace, decision.writer_actions)
    if decision.poll_seconds is not None:  # no watch on the writers: look again soon
        delay = min(decision.poll_seconds, memo.config.watching.resync_seconds)
        memo.queue.add_after(uid, delay)
    if decision.submit is not None:
        job = decision.submit
        name = status["lastJob"]["name"]
        memo.expected.setdefault(uid, {})[name] = ObservedJob(
            name, job.kind, job.generation, job.retry_token, JobPhase.PENDING, "", job.sequence
        )
    for kind, reason, message in decision.events:
        kopf.event(_reference(table), type=kind, reason=reason, message=message)


async def _read(memo: Memory, uid: str, table: Table) -> Table | None:
    """The table as the API server holds it now (None if it is gone, or another table has its name), kept
    as what the watch shows and what the next status write must find."""
    meta = table["metadata"]
    try:
        body = await memo.kube.get(TABLES, meta["namespace"], meta["name"])
    except KubeNotFoundError:
        return None
    if body.get("metadata", {}).get("uid") != uid or uid not in memo.tables:  # another, or deleted meanwhile
        return None
    fresh = _plain(cast(kopf.Body, body))
    memo.tables[uid] = fresh
    memo.statuses[uid] = fresh["status"]
    memo.versions[uid] = str(body["metadata"]["resourceVersion"])
    return fresh


async def _hold_while_writers_paused(memo: Memory, table: Table, holding: bool) -> bool:
    """The table carries WRITERS_FINALIZER exactly while the operator may hold its writers paused, put
    on before the first is paused: deleting the table then waits until they are resumed (a table being
    deleted starts nothing new and resumes them, see Observed.paused). At any other time a table is
    deleted at once, never waiting for the operator. False when its finalizers changed since the watch
    showed them (a watch event not here yet): nothing is done, and the pass is to be made again."""
    meta = table["metadata"]
    before = list(meta.get("finalizers") or [])
    if (WRITERS_FINALIZER in before) == holding:
        return True
    after = [*before, WRITERS_FINALIZER] if holding else [f for f in before if f != WRITERS_FINALIZER]
    try:
        version = await memo.kube.set_finalizers(TABLES, meta["namespace"], meta["name"], before, after)
    except KubeNotFoundError:  # deleted meanwhile: it holds nothing any more
        return True
    except KubeConflictError as err:
        logging.getLogger(__name__).info("%s; looking again", err)
        return False
    meta["finalizers"] = after  # as its watch event will show
    if meta["uid"] in memo.versions:  # the next status write builds on this one
        memo.versions[meta["uid"]] = version
    return True


async def _jobs(memo: Memory, body: Table) -> list[ObservedJob]:
    if isinstance(memo.backend, LocalBackend):  # local processes: no watch, the backend knows them
        return await memo.backend.observe(table_ref(body))
    uid = body["metadata"]["uid"]
    indexed = list(memo.jobs.get(uid, ())) if memo.jobs is not None else []
    # A job we just created is in the index once its watch event has come; until then, it is expected.
    expected = memo.expected.get(uid, {})
    for job in indexed:
        expected.pop(job.name, None)
    return indexed + list(expected.values())


def _reference(table: dict[str, Any]) -> kopf.Body:
    """What Kopf needs to post an event about a table (a body's fields, read as a body)."""
    return cast(kopf.Body, {"apiVersion": API_VERSION, "kind": KIND, "metadata": table["metadata"]})


def _echo_of_our_write(memo: Memory, uid: str, table: Table) -> bool:
    """Whether this event only shows the status we wrote last: nothing to decide again (a pass would
    find the same inputs). Spec, annotations and labels as seen before, status as we wrote it."""
    seen = memo.tables.get(uid)
    if seen is None or table["status"] != memo.statuses.get(uid):
        return False
    before, now = seen["metadata"], table["metadata"]
    return seen["spec"] == table["spec"] and all(
        before.get(key) == now.get(key)
        for key in ("generation", "annotations", "labels", "deletionTimestamp")
    )


class _NoDiffBase(kopf.DiffBaseStorage):
    """No handler here compares a table with its last-handled state (no on.create or on.update), yet
    Kopf builds that state, a deep copy of the body, on every event: at a thousand tables, a tenth of
    the operator's CPU. An empty essence is all that is needed, and nothing is stored."""

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> kopf.BodyEssence:
        return kopf.BodyEssence()

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        pass


# What a pass reads of a table's metadata. The rest (managedFields above all) is most of a body's size,
# and a thousand tables are kept in memory.
_KEPT_METADATA = (
    "name", "namespace", "uid", "generation", "labels", "annotations", "finalizers", "deletionTimestamp",
)  # fmt: skip
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"  # a copy of the spec


def _plain(body: kopf.Body) -> dict[str, Any]:
    meta = body.get("metadata", {})
    kept = {key: meta[key] for key in _KEPT_METADATA if key in meta}
    if _LAST_APPLIED in kept.get("annotations", {}):
        kept["annotations"] = {k: v for k, v in kept["annotations"].items() if k != _LAST_APPLIED}
    return {
        "metadata": kept,
        "spec": dict(body.get("spec", {})),
        "status": dict(body.get("status", {})),
    }

"""Kopf handlers: thin. They fetch, call the controller, and hand back status and events.

Reconciling is level-based and driven by events, as a controller-runtime controller is: a change to a
HudiBucketTable, or to one of its SparkApplications, reconciles that table at once; a slow resync goes
over every table now and then (jobs that report no events, such as local processes, and anything
missed). All passes of one table run under one lock, so they never act twice, and the status is written
inside that lock, only when it changed.
No handler needs a finalizer, so deleting a table (or its namespace) never waits for the operator. The
finalizer earlier releases put on every table (for their poll timer) is removed by Kopf at the table's
next event: ``settings.persistence.finalizer`` still names it.
Deleting a HudiBucketTable never touches table data; its children go by owner reference.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

import kopf

from hudi_bucket_operator import kube, metrics, naming
from hudi_bucket_operator.backends import LocalBackend, SparkOperatorBackend
from hudi_bucket_operator.controller import reconcile_once
from hudi_bucket_operator.settings import OperatorConfig
from hudi_bucket_operator.spec import API_VERSION, GROUP, KIND, PLURAL, UNMANAGED, VERSION

CONFIG = OperatorConfig.from_env()
LEGACY_FINALIZER = f"{GROUP}/timers"  # what releases before 0.2 put on every table
TABLES = kube.Resource(GROUP, VERSION, PLURAL)
JOBS = kube.SPARK_APPLICATIONS


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    # Kopf's own words are posted as Events only when something fails: "handler succeeded" on every
    # pass would be an API write per table event. Our decisions are posted by `_reconcile` itself.
    settings.posting.level = logging.WARNING
    settings.persistence.finalizer = LEGACY_FINALIZER  # so Kopf removes it
    # With namespaces named, there is nothing to discover: do not list namespaces or watch CRDs.
    settings.scanning.disabled = bool(CONFIG.namespaces)
    memo.locks = collections.defaultdict(asyncio.Lock)
    memo.tables = {}  # uid -> the table as last seen (metadata, spec, status)
    memo.statuses = {}  # uid -> the status this process wrote last
    memo.kube = kube.KubeClient()  # logged in by `login`, which Kopf runs after the startup handlers
    memo.backend = _backend(memo.kube)
    metrics.serve(CONFIG.metrics_port)
    memo.resync = asyncio.create_task(_resync(memo))


@kopf.on.login()
async def login(memo: kopf.Memo, **_: Any) -> kopf.ConnectionInfo:
    """One identity for Kopf and for our client: the pod's service account, else the kubeconfig.

    Kopf calls this again when the API answers 401 (a rotated token), so both are made anew each time.
    """
    configuration = await kube.load_configuration(CONFIG.kube_server)
    await memo.kube.log_in(configuration)
    return await kube.connection_info(configuration)


def _backend(client: kube.KubeClient) -> Any:
    if CONFIG.backend == "local":
        return LocalBackend(CONFIG.local_state_dir)
    return SparkOperatorBackend(client, CONFIG.job_defaults)


@kopf.on.cleanup()
async def cleanup(memo: kopf.Memo, **_: Any) -> None:
    memo.resync.cancel()
    await memo.kube.close()


@kopf.on.event(GROUP, VERSION, PLURAL)
async def changed(event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    uid = body.get("metadata", {}).get("uid", "")
    unmanaged = body.get("metadata", {}).get("annotations", {}).get(UNMANAGED, "").lower() == "true"
    if event.get("type") == "DELETED" or unmanaged:  # forget it: not even the resync looks at it
        memo.tables.pop(uid, None)
        memo.statuses.pop(uid, None)
        memo.locks.pop(uid, None)
        return
    memo.tables[uid] = _plain(body)
    await _reconcile(memo.tables[uid], memo)


@kopf.on.event(JOBS.group, JOBS.version, JOBS.plural, labels={naming.MANAGED_BY: naming.OPERATOR})
async def job_changed(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    """A job moved (submitted, running, finished, deleted): reconcile the table that owns it."""
    for owner in body.get("metadata", {}).get("ownerReferences") or []:
        table = memo.tables.get(owner.get("uid"))
        if owner.get("kind") == KIND and table is not None:
            await _reconcile(table, memo)


async def _resync(memo: kopf.Memo) -> None:
    while True:
        await asyncio.sleep(CONFIG.resync_seconds)
        for uid in list(memo.tables):
            table = memo.tables.get(uid)
            if table is not None:  # not deleted meanwhile
                await _reconcile(table, memo)


async def _reconcile(table: dict[str, Any], memo: kopf.Memo) -> None:
    meta = table["metadata"]
    uid = meta.get("uid", "")
    async with memo.locks[uid]:
        plain = {**table}
        # Each handler gets a snapshot of the body, possibly older than the status we wrote last: while
        # this process lives, its own last status is the truth (after a restart, the stored one is).
        written = memo.statuses.get(uid, plain["status"])
        plain["status"] = written
        decision = await reconcile_once(memo.backend, plain)
        if decision.status != written:
            try:
                await memo.kube.patch_status(TABLES, meta["namespace"], meta["name"], decision.status)
            except kube.KubeNotFoundError:  # deleted meanwhile: nothing left to report on
                return
        memo.statuses[uid] = decision.status
    for kind, reason, message in decision.events:
        kopf.event(_reference(table), type=kind, reason=reason, message=message)


def _reference(table: dict[str, Any]) -> dict[str, Any]:
    """What Kopf needs to post an event about a table."""
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": table["metadata"]}


def _plain(body: kopf.Body) -> dict[str, Any]:
    return {
        "metadata": dict(body.get("metadata", {})),
        "spec": dict(body.get("spec", {})),
        "status": dict(body.get("status", {})),
    }

"""Kopf handlers: thin. They fetch, call the controller, and hand back status and events.

Reconciling is level-based: a timer per HudiBucketTable polls its jobs, and every change to the resource
reconciles at once. Both run the same pass under one lock per table, so they never act twice, and the
status is written inside that lock, only when it changed: a write Kopf made after the handler returned
could land after a newer one and put an older status back.
Deleting a HudiBucketTable never touches table data; its children go by owner reference. Kopf keeps a
finalizer on each table while its timer runs (FINALIZER), removed as the resource is deleted: delete
tables before uninstalling the operator.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

import kopf

from hudi_bucket_operator import metrics
from hudi_bucket_operator.backends import LocalBackend, SparkOperatorBackend
from hudi_bucket_operator.controller import reconcile_once
from hudi_bucket_operator.kube import KubeClient, KubeNotFoundError, Resource
from hudi_bucket_operator.settings import OperatorConfig
from hudi_bucket_operator.spec import GROUP, PLURAL, UNMANAGED, VERSION

CONFIG = OperatorConfig.from_env()
FINALIZER = f"{GROUP}/timers"
TABLES = Resource(GROUP, VERSION, PLURAL)


def managed(annotations: kopf.Annotations, **_: Any) -> bool:
    return annotations.get(UNMANAGED, "").lower() != "true"


@kopf.on.startup()
async def startup(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    settings.posting.level = logging.INFO
    settings.persistence.finalizer = FINALIZER
    # With namespaces named, there is nothing to discover: do not list namespaces or watch CRDs.
    settings.scanning.disabled = bool(CONFIG.namespaces)
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=GROUP)
    memo.locks = collections.defaultdict(asyncio.Lock)
    memo.statuses = {}
    metrics.serve(CONFIG.metrics_port)


@kopf.on.login()
def login(memo: kopf.Memo, logger: kopf.Logger, **_: Any) -> kopf.ConnectionInfo | None:
    """One identity for Kopf and for our client: the service account in a pod, else the kubeconfig."""
    if CONFIG.kube_server:
        info = kopf.ConnectionInfo(server=CONFIG.kube_server)
    else:
        info = kopf.login_with_service_account(logger=logger) or kopf.login_with_kubeconfig(logger=logger)
    if info is not None:
        memo.kube = KubeClient(info)
        memo.backend = _backend(memo.kube)
    return info


def _backend(client: KubeClient) -> Any:
    if CONFIG.backend == "local":
        return LocalBackend(CONFIG.local_state_dir)
    return SparkOperatorBackend(client, CONFIG.job_defaults)


@kopf.on.cleanup()
async def cleanup(memo: kopf.Memo, **_: Any) -> None:
    client = getattr(memo, "kube", None)
    if client is not None:
        await client.close()


@kopf.timer(GROUP, VERSION, PLURAL, interval=CONFIG.poll_seconds, when=managed)
async def poll(body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    await _reconcile(body, memo)


@kopf.on.event(GROUP, VERSION, PLURAL, when=managed)
async def changed(event: kopf.RawEvent, body: kopf.Body, memo: kopf.Memo, **_: Any) -> None:
    if event.get("type") == "DELETED":
        uid = body.get("metadata", {}).get("uid", "")
        memo.statuses.pop(uid, None)
        memo.locks.pop(uid, None)
        return
    await _reconcile(body, memo)


async def _reconcile(body: kopf.Body, memo: kopf.Memo) -> None:
    meta = body.get("metadata", {})
    uid = meta.get("uid", "")
    async with memo.locks[uid]:
        plain = _plain(body)
        # Each handler gets a snapshot of the body, possibly older than the status we wrote last: while
        # this process lives, its own last status is the truth (after a restart, the stored one is).
        written = memo.statuses.get(uid, plain["status"])
        plain["status"] = written
        decision = await reconcile_once(memo.backend, plain)
        if decision.status != written:
            try:
                await memo.kube.patch(
                    TABLES, meta["namespace"], meta["name"], {"status": decision.status}, "status"
                )
            except KubeNotFoundError:  # deleted meanwhile: nothing left to report on
                return
        memo.statuses[uid] = decision.status
    for kind, reason, message in decision.events:
        kopf.event(body, type=kind, reason=reason, message=message)


def _plain(body: kopf.Body) -> dict[str, Any]:
    return {
        "metadata": dict(body.get("metadata", {})),
        "spec": dict(body.get("spec", {})),
        "status": dict(body.get("status", {})),
    }

"""The table's writers through the API: read as ``decide`` needs them, paused and resumed as it says.

Each writer is read whole first, for its owner's consent (``writers.consents``). A Deployment or
StatefulSet is then read through its ``scale`` subresource (its replicas, and the selector that finds its
pods, counted terminating ones included: a pod still stopping is a writer still writing) and scaled
through it; any other kind by the field the admins' ``suspend`` names, with a JSON merge patch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from hudi_bucket_operator.errors import KubeNotFoundError
from hudi_bucket_operator.resource.writers import (
    ObservedWriter,
    Writer,
    WriterAction,
    consents,
    merge_patch_for,
    observe_custom,
)
from hudi_bucket_operator.runtime import kube

_SCALED = {"Deployment": kube.DEPLOYMENTS, "StatefulSet": kube.STATEFUL_SETS}


def _resource(api_version: str, kind: str, plural: str) -> kube.Resource:
    if kind in _SCALED:
        return _SCALED[kind]
    group, _, version = api_version.rpartition("/")
    return kube.Resource(group, version, plural)


async def observe(
    client: kube.KubeClient, namespace: str, table: str, writers: Sequence[Writer]
) -> dict[str, ObservedWriter]:
    """Each writer of ``table`` by ``Kind/name`` (``found=False`` for one that does not exist)."""
    seen = await asyncio.gather(*(_one(client, namespace, table, w) for w in writers))
    return {w.key: found for w, found in zip(writers, seen, strict=True)}


async def _one(client: kube.KubeClient, namespace: str, table: str, writer: Writer) -> ObservedWriter:
    resource = _resource(writer.api_version, writer.kind, writer.plural)
    try:
        whole = await client.get(resource, namespace, writer.name)
        if not writer.scaled:
            return observe_custom(writer, whole, table)
        scale = await client.get(resource, namespace, writer.name, "scale")
        selector = (scale.get("status") or {}).get("selector") or ""
        pods = await client.count_pods(namespace, selector) if selector else 0
        return ObservedWriter(
            consents=consents(whole.get("metadata") or {}, table),
            replicas=int((scale.get("spec") or {}).get("replicas") or 0),
            pods=pods,
        )
    except KubeNotFoundError:
        return ObservedWriter(found=False)


async def perform(client: kube.KubeClient, namespace: str, actions: Sequence[WriterAction]) -> None:
    """Pause or resume each writer, as ``decide`` said (after its status, recording them, is written)."""
    for action in actions:
        resource = _resource(action.api_version, action.kind, action.plural)
        if action.scaled:
            patch = {"spec": {"replicas": action.replicas}}
            await client.merge_patch(resource, namespace, action.name, patch, "scale")
        else:
            await client.merge_patch(
                resource, namespace, action.name, merge_patch_for(action.path, action.value)
            )

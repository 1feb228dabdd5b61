"""The local mode: reconcile HudiBucketTable manifests against local table paths with local Spark.

The same controller as in a cluster, with the local job backend and a state folder standing in for the
API server: each table's last status, spec and generation live there, so running again after editing
the manifest (say, approving a plan) carries on from where the last run stopped. A spec is judged by the
same policy as in a cluster, the admins' settings read from the environment (``HBO_*``, docs/settings.md):
what a cluster would refuse is refused here, before any job.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import KIND
from hudi_bucket_operator.resource.spec.fields import DNS_SUBDOMAIN, DNS_SUBDOMAIN_MAX
from hudi_bucket_operator.runtime.backends import LocalBackend
from hudi_bucket_operator.runtime.controller import reconcile_once, table_ref
from hudi_bucket_operator.runtime.settings import OperatorConfig

Echo = Callable[[str], None]

# A table's state lives in <state dir>/<namespace>/<name>/: names as Kubernetes takes them (a custom
# resource's name a DNS-1123 subdomain, a namespace a DNS-1123 label) are single path segments, never
# '..' or an absolute path, so that a manifest cannot make the local mode write outside its state dir.
_NAME = re.compile(DNS_SUBDOMAIN)
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_NAMESPACE_MAX = 63
_NAME_SAID = (
    f"a DNS-1123 subdomain, as Kubernetes requires of a custom resource's name: at most {DNS_SUBDOMAIN_MAX} "
    "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
)
_NAMESPACE_SAID = (
    f"a DNS-1123 label, as Kubernetes requires of a namespace: at most {_NAMESPACE_MAX} lower-case "
    "letters, digits and '-', starting and ending with a letter or digit"
)


def load_manifests(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every HudiBucketTable document in the given YAML files (other kinds are skipped), each with a name
    and namespace Kubernetes would take."""
    manifests = []
    for path in paths:
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and document.get("kind") == KIND:
                identity(document, source=str(path))
                manifests.append(document)
    if not manifests:
        raise InvalidSpecError("no HudiBucketTable found in the given manifests")
    return manifests


def identity(manifest: dict[str, Any], source: str = "") -> tuple[str, str]:
    """The manifest's namespace ("default" when it names none) and name; InvalidSpecError, naming the
    manifest, unless both are names Kubernetes would take."""
    meta = manifest.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name, namespace = meta.get("name"), meta.get("namespace") or "default"
    where = f"{KIND} {name!r}" + (f" in {source}" if source else "")
    if not _is_name(name, _NAME, DNS_SUBDOMAIN_MAX):
        raise InvalidSpecError(f"{where}: metadata.name must be {_NAME_SAID}")
    if not _is_name(namespace, _NAMESPACE, _NAMESPACE_MAX):
        raise InvalidSpecError(f"{where}: metadata.namespace {namespace!r} must be {_NAMESPACE_SAID}")
    return namespace, name


def _is_name(text: object, pattern: re.Pattern[str], max_length: int) -> TypeGuard[str]:
    return isinstance(text, str) and len(text) <= max_length and pattern.fullmatch(text) is not None


class StateStore:
    """Per-table state for the local mode: what an API server would remember."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _file(self, namespace: str, name: str) -> Path:
        return self.folder / namespace / name / "state.yaml"

    def body_for(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """The manifest as the API server would serve it: uid, generation (bumped when the spec
        changed since the last run) and the status remembered from then."""
        namespace, name = identity(manifest)
        meta = manifest["metadata"]
        path = self._file(namespace, name)
        previous = yaml.safe_load(path.read_text()) if path.exists() else {}
        generation = previous.get("generation", 0)
        if previous.get("spec") != manifest.get("spec"):
            generation += 1
        uid = hashlib.sha256(f"local/{namespace}/{name}".encode()).hexdigest()[:32]
        metadata = {**meta, "name": name, "namespace": namespace, "uid": uid, "generation": generation}
        return {**manifest, "metadata": metadata, "status": previous.get("status") or {}}

    def save(self, body: dict[str, Any]) -> None:
        meta = body["metadata"]
        path = self._file(meta["namespace"], meta["name"])
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {"generation": meta["generation"], "spec": body.get("spec"), "status": body.get("status")}
        path.write_text(yaml.safe_dump(state, sort_keys=False))


async def apply_locally(
    manifests: list[dict[str, Any]], state_dir: Path, echo: Echo, policy: Policy | None = None
) -> list[dict[str, Any]]:
    """Reconcile each manifest until it settles (Ready, AwaitingApproval, Stalled or Paused), by
    ``policy`` (default: the one the environment's settings give, as the operator's in a cluster)."""
    for manifest in manifests:  # every one, before anything is written for the first
        identity(manifest)
    store = StateStore(state_dir)
    policy = OperatorConfig.from_env().policy if policy is None else policy
    backend = LocalBackend(state_dir / "jobs", echo=echo, policy=policy)
    results = []
    for manifest in manifests:
        body = store.body_for(manifest)
        echo(
            f"{body['metadata']['namespace']}/{body['metadata']['name']}: generation {body['metadata']['generation']}"
        )
        while True:
            decision = await reconcile_once(backend, body, await backend.observe(table_ref(body)))
            body = {**body, "status": decision.status.to_api()}
            store.save(body)
            for kind, reason, message in decision.events:
                echo(f"  {kind} {reason}: {message}")
            if not decision.requeue:
                break
            await backend.wait()
        results.append(body)
    return results

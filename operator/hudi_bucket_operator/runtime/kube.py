"""The operator's Kubernetes API client: the official `kubernetes` package (its asyncio flavour), wrapped.

Kopf watches the tables and posts events with its own client; everything else we call goes through
`KubeClient`. Both log in from one source, `load_configuration`: the pod's service account in a
cluster, else the kubeconfig (``$KUBECONFIG`` or ``~/.kube/config``). This module is the only one that
imports `kubernetes` (import-linter keeps it so). Errors are grouped by HTTP class; a 409 on create is
what adoption looks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kopf
from kubernetes.aio import client, config

from hudi_bucket_operator.errors import KubeConflictError, KubeError, KubeLoginError, KubeNotFoundError

SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


@dataclass(frozen=True)
class Resource:
    """A resource's coordinates in the API (group "" is the core group)."""

    group: str
    version: str
    plural: str

    def path(self, namespace: str, name: str = "", subresource: str = "") -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return "/".join(p for p in (root, "namespaces", namespace, self.plural, name, subresource) if p)


SPARK_APPLICATIONS = Resource("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
CONFIG_MAPS = Resource("", "v1", "configmaps")
# A table's writers (spec.writers): scaled through the scale subresource, their pods counted.
DEPLOYMENTS = Resource("apps", "v1", "deployments")
STATEFUL_SETS = Resource("apps", "v1", "statefulsets")
PODS = Resource("", "v1", "pods")
# Leader election (leadership.py): one Lease in the operator's own namespace.
LEASES = Resource("coordination.k8s.io", "v1", "leases")


def in_a_pod() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.isfile(SERVICE_ACCOUNT_TOKEN)


def own_namespace() -> str:
    """The namespace this process belongs to: its pod's, else the kubeconfig's current context's, else
    default (where leader election keeps its Lease unless told otherwise)."""
    in_pod = Path(SERVICE_ACCOUNT_TOKEN).with_name("namespace")
    if in_a_pod() and in_pod.is_file():
        return in_pod.read_text().strip()
    try:
        _, current = config.list_kube_config_contexts()
    except (config.ConfigException, OSError):
        return "default"
    return str((current or {}).get("context", {}).get("namespace") or "default")


async def load_configuration(server: str = "") -> client.Configuration:
    """A fresh client configuration: ``server`` as given (no credentials), else the pod's service account,
    else the kubeconfig. Loaded anew on each login, so a rotated token is read again."""
    configuration = client.Configuration()
    if server:
        configuration.host = server
        return configuration
    try:
        if in_a_pod():
            config.load_incluster_config(client_configuration=configuration)
        else:
            await config.load_kube_config(client_configuration=configuration, persist_config=False)
    except config.ConfigException as err:
        raise KubeLoginError(f"cannot log in to Kubernetes: {err}") from None
    return configuration


async def connection_info(configuration: client.Configuration) -> kopf.ConnectionInfo:
    """The same identity, in the terms Kopf's own client takes."""
    header = await configuration.get_api_key_with_prefix("BearerToken") or ""
    scheme, _, token = header.partition(" ") if " " in header else ("", "", header)
    return kopf.ConnectionInfo(
        server=configuration.host,
        ca_path=configuration.ssl_ca_cert,
        insecure=not configuration.verify_ssl,
        username=configuration.username or None,
        password=configuration.password or None,
        scheme=scheme or None,
        token=token or None,
        certificate_path=configuration.cert_file,
        private_key_path=configuration.key_file,
    )


class KubeClient:
    """The few calls the operator makes: create a SparkApplication, read and delete a report's
    ConfigMap, patch a table's status; read, scale or patch a table's writers and count their pods.

    Calls go through the package's ApiClient (its login, connection pool and errors) by path, not through
    its generated API classes: CoreV1Api's module alone holds 26 MiB of the operator's memory, for two
    calls on ConfigMaps. The answers to writes are not decoded: nothing reads them.
    """

    def __init__(self, connections: int = 8) -> None:
        self._connections = connections  # as many as calls can be in flight: one per worker
        self._api: client.ApiClient | None = None
        self._retired: list[client.ApiClient] = []
        self.logged_in = asyncio.Event()  # set at the first login: calls may be made from then on

    async def log_in(self, configuration: client.Configuration) -> None:
        """Use this identity from now on. The previous one's calls may still be in flight: it is closed at
        the next login, minutes later at the earliest."""
        while self._retired:
            await self._retired.pop().close()
        if self._api is not None:
            self._retired.append(self._api)
        configuration.connection_pool_maxsize = self._connections
        # Proxies and .netrc are Kopf's business to ignore too (its default); trusting the environment
        # would also read ~/.netrc on every request.
        configuration.client_session_kwargs = {"trust_env": False}
        self._api = client.ApiClient(configuration)
        self.logged_in.set()

    async def close(self) -> None:
        for api in (*self._retired, *([self._api] if self._api else [])):
            await api.close()
        self._api, self._retired = None, []

    async def create(self, resource: Resource, body: dict[str, Any]) -> None:
        namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
        with _errors(f"create {resource.plural} {namespace}/{name}"):
            await self._call("POST", resource.path(namespace), body)

    async def replace(self, resource: Resource, body: dict[str, Any]) -> None:
        """An object written whole (PUT): its metadata.resourceVersion makes a concurrent change a 409."""
        namespace, name = body["metadata"]["namespace"], body["metadata"]["name"]
        with _errors(f"update {resource.plural} {namespace}/{name}"):
            await self._call("PUT", resource.path(namespace, name), body)

    async def config_map_data(self, namespace: str, name: str) -> dict[str, str]:
        with _errors(f"get configmaps {namespace}/{name}"):
            found = await self._call("GET", CONFIG_MAPS.path(namespace, name), answer=True)
        return dict(found.get("data") or {})

    async def delete_config_map(self, namespace: str, name: str) -> None:
        await self.delete(CONFIG_MAPS, namespace, name)

    async def delete(self, resource: Resource, namespace: str, name: str) -> None:
        """Delete an object (gone already is as good)."""
        with contextlib.suppress(KubeNotFoundError), _errors(f"delete {resource.plural} {namespace}/{name}"):
            await self._call("DELETE", resource.path(namespace, name))

    async def patch_status(
        self, resource: Resource, namespace: str, name: str, status: dict[str, Any], resource_version: str
    ) -> str:
        """The status subresource replaced by ``status``, onto the object at ``resource_version`` only:
        KubeConflictError if it changed since (the API server's 409, as for any write that names the
        version it read). A JSON patch, since a merge patch would keep every key ``status`` no longer has
        (a finished step's state under status.writers, say). Returns the version the write made."""
        patch = [
            {"op": "replace", "path": "/metadata/resourceVersion", "value": resource_version},
            {"op": "add", "path": "/status", "value": status},
        ]
        with _errors(f"patch {resource.plural}/status {namespace}/{name}"):
            written = await self._call(
                "PATCH", resource.path(namespace, name, "status"), patch, _JSON_PATCH, answer=True
            )
        return str(written["metadata"]["resourceVersion"])

    async def get(
        self, resource: Resource, namespace: str, name: str, subresource: str = ""
    ) -> dict[str, Any]:
        """One object (or its subresource, such as ``scale``)."""
        with _errors(f"get {resource.plural} {namespace}/{name}"):
            return dict(await self._call("GET", resource.path(namespace, name, subresource), answer=True))

    async def merge_patch(
        self, resource: Resource, namespace: str, name: str, patch: dict[str, Any], subresource: str = ""
    ) -> None:
        """A JSON merge patch of an object (or its subresource, such as ``scale``)."""
        with _errors(f"patch {resource.plural} {namespace}/{name}"):
            await self._call("PATCH", resource.path(namespace, name, subresource), patch, _MERGE_PATCH)

    async def set_finalizers(
        self, resource: Resource, namespace: str, name: str, before: list[str], after: list[str]
    ) -> str:
        """An object's finalizers changed from ``before`` (as last seen) to ``after``; KubeConflictError
        if they changed since (the JSON patch's test fails: the API server's 422). Returns the version
        the write made."""
        path = "/metadata/finalizers"
        patch = [{"op": "test", "path": path, "value": before}] if before else []
        patch.append({"op": "add", "path": path, "value": after})
        try:
            with _errors(f"patch {resource.plural} {namespace}/{name}"):
                written = await self._call(
                    "PATCH", resource.path(namespace, name), patch, _JSON_PATCH, answer=True
                )
        except KubeError as err:
            if err.status == 422 and before:
                raise KubeConflictError(
                    err.status, f"{name}'s finalizers changed since read: {err}"
                ) from None
            raise
        return str(written["metadata"]["resourceVersion"])

    async def count_pods(self, namespace: str, selector: str) -> int:
        """The pods a label selector finds, terminating ones included."""
        with _errors(f"list pods {namespace} {selector}"):
            found = await self._call(
                "GET", PODS.path(namespace), answer=True, query=[("labelSelector", selector)]
            )
        return len(found.get("items") or [])

    async def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "",
        answer: bool = False,
        query: list[tuple[str, str]] | None = None,
    ) -> Any:
        """One request; the decoded answer if ``answer``. Raises the client's ApiException on an error."""
        assert self._api is not None, "log_in first"
        headers = {"Accept": "application/json", **({"Content-Type": content_type} if content_type else {})}
        request = await self._api.param_serialize(
            method, path, query_params=query, header_params=headers, body=body, auth_settings=["BearerToken"]
        )
        response = await self._api.call_api(*request)
        await response.read()
        if answer or not 200 <= response.status <= 299:
            # Decoded as a plain object, an error's too: it raises with the API's own message.
            return self._api.response_deserialize(response, {"default": "object"}).data
        return None


_MERGE_PATCH = "application/merge-patch+json"
_JSON_PATCH = "application/json-patch+json"


@contextlib.contextmanager
def _errors(call: str) -> Iterator[None]:
    """Turns the client's ApiException into our KubeError classes, with the API's own message."""
    try:
        yield
    except client.ApiException as error:
        status = int(error.status or 0)
        cls = {404: KubeNotFoundError, 409: KubeConflictError}.get(status, KubeError)
        raise cls(status, f"{call}: {_message(error)}") from None


def _message(error: client.ApiException) -> str:
    try:
        return str(json.loads(error.body or "{}").get("message") or error.reason)
    except ValueError:
        return str(error.body or error.reason)

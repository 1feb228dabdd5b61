"""The operator's Kubernetes API client: the official `kubernetes` package (its asyncio flavour), wrapped.

Kopf watches the tables and posts events with its own client; everything else we call goes through
`KubeClient`. Both log in from one source, `load_configuration`: the pod's service account in a
cluster, else the kubeconfig (``$KUBECONFIG`` or ``~/.kube/config``). This module is the only one that
imports `kubernetes` (import-linter keeps it so). Errors are grouped by HTTP class; a 409 on create is
what adoption looks for.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import kopf
from kubernetes.aio import client, config

# Imported now, at start-up: the client imports each API module on first use, and CoreV1Api's is large
# enough to stall the event loop for a second or more in the middle of the first reconciles.
from kubernetes.aio.client.api.core_v1_api import CoreV1Api
from kubernetes.aio.client.api.custom_objects_api import CustomObjectsApi

from hudi_bucket.errors import HudiBucketError

SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


class KubeError(HudiBucketError):
    """A Kubernetes API call failed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Kubernetes API {status}: {message}")
        self.status = status


class KubeConflictError(KubeError):
    """409: the object exists (create) or changed underneath us."""


class KubeNotFoundError(KubeError):
    """404."""


class KubeLoginError(HudiBucketError):
    """Neither a pod's service account nor a kubeconfig was found."""

    hint = "run in a pod with a service account, or set KUBECONFIG (or HBO_KUBE_SERVER for an open server)"


@dataclass(frozen=True)
class Resource:
    """A custom resource's coordinates in the API."""

    group: str
    version: str
    plural: str


SPARK_APPLICATIONS = Resource("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
CONFIG_MAPS = Resource("", "v1", "configmaps")


def in_a_pod() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.isfile(SERVICE_ACCOUNT_TOKEN)


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
    """The few calls the operator makes: children (SparkApplications, report ConfigMaps) and status."""

    def __init__(self, connections: int = 8) -> None:
        self._connections = connections  # as many as calls can be in flight: one per worker
        self._api: client.ApiClient | None = None
        self._retired: list[client.ApiClient] = []

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
        self._custom = CustomObjectsApi(self._api)
        self._core = CoreV1Api(self._api)

    async def close(self) -> None:
        for api in (*self._retired, *([self._api] if self._api else [])):
            await api.close()
        self._api, self._retired = None, []

    async def create(self, resource: Resource, body: dict[str, Any]) -> None:
        namespace = body["metadata"]["namespace"]
        with _errors(f"create {resource.plural} {namespace}/{body['metadata']['name']}"):
            await self._custom.create_namespaced_custom_object(
                resource.group, resource.version, namespace, resource.plural, body
            )

    async def list(self, resource: Resource, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items())
        with _errors(f"list {resource.plural} in {namespace}"):
            found = await self._custom.list_namespaced_custom_object(
                resource.group, resource.version, namespace, resource.plural, label_selector=selector
            )
        return list(found.get("items") or [])

    async def config_map_data(self, namespace: str, name: str) -> dict[str, str]:
        with _errors(f"get configmaps {namespace}/{name}"):
            found = await self._core.read_namespaced_config_map(name, namespace)
        return dict(found.data or {})

    async def delete_config_map(self, namespace: str, name: str) -> None:
        with contextlib.suppress(KubeNotFoundError), _errors(f"delete configmaps {namespace}/{name}"):
            await self._core.delete_namespaced_config_map(name, namespace)

    async def patch_status(
        self, resource: Resource, namespace: str, name: str, status: dict[str, Any]
    ) -> None:
        """A merge patch of the status subresource."""
        with _errors(f"patch {resource.plural}/status {namespace}/{name}"):
            await self._custom.patch_namespaced_custom_object_status(
                resource.group, resource.version, namespace, resource.plural, name, {"status": status}
            )


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

"""The operator's only Kubernetes API client (Kopf itself patches our status and posts events).

A small async client over aiohttp for the few calls we make on children: create, get, list by label,
merge-patch, delete. It is built from the ConnectionInfo Kopf logged in with, so both share one
identity. Errors are grouped by HTTP class; a 409 on create is what adoption looks for.
"""

from __future__ import annotations

import base64
import contextlib
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp
import kopf

from hudi_bucket.errors import HudiBucketError


class KubeError(HudiBucketError):
    """A Kubernetes API call failed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Kubernetes API {status}: {message}")
        self.status = status


class KubeConflictError(KubeError):
    """409: the object exists (create) or changed underneath us."""


class KubeNotFoundError(KubeError):
    """404."""


@dataclass(frozen=True)
class Resource:
    """Where a kind lives in the API: ``/api/v1`` for the core group, ``/apis/<group>/<version>`` else."""

    group: str
    version: str
    plural: str

    def path(self, namespace: str, name: str = "", subresource: str = "") -> str:
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        path = f"{base}/namespaces/{quote(namespace)}/{self.plural}"
        if name:
            path += f"/{quote(name)}"
        if subresource:
            path += f"/{subresource}"
        return path


SPARK_APPLICATIONS = Resource("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
CONFIG_MAPS = Resource("", "v1", "configmaps")


class KubeClient:
    def __init__(self, info: kopf.ConnectionInfo) -> None:
        self._info = info
        self._session: aiohttp.ClientSession | None = None

    def _ssl(self) -> ssl.SSLContext | bool:
        if self._info.insecure:
            return False
        context = ssl.create_default_context()
        if self._info.ca_path:
            context.load_verify_locations(cafile=str(self._info.ca_path))
        elif self._info.ca_data:
            context.load_verify_locations(cadata=_text(self._info.ca_data))
        if self._info.certificate_path or self._info.certificate_data:
            cert, key = (
                _file(self._info.certificate_path, self._info.certificate_data),
                _file(self._info.private_key_path, self._info.private_key_data),
            )
            context.load_cert_chain(cert, key)
        return context

    async def _ensure(self) -> aiohttp.ClientSession:
        if self._session is None:
            headers = {"Accept": "application/json", **self._info.as_http_headers()}
            connector = None
            if self._info.server.startswith("https"):
                connector = aiohttp.TCPConnector(ssl=self._ssl())
            self._session = aiohttp.ClientSession(
                base_url=self._info.server, headers=headers, connector=connector
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        session = await self._ensure()
        async with session.request(method, path, **kwargs) as response:
            if response.status >= 400:
                text = await response.text()
                try:
                    message = (await response.json(content_type=None)).get("message", text)
                except ValueError:
                    message = text
                error = {404: KubeNotFoundError, 409: KubeConflictError}.get(response.status, KubeError)
                raise error(response.status, f"{method} {path}: {message}")
            return await response.json(content_type=None) or {}

    async def create(self, resource: Resource, body: dict[str, Any]) -> dict[str, Any]:
        return await self._call("POST", resource.path(body["metadata"]["namespace"]), json=body)

    async def get(self, resource: Resource, namespace: str, name: str) -> dict[str, Any]:
        return await self._call("GET", resource.path(namespace, name))

    async def list(self, resource: Resource, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items())
        result = await self._call("GET", resource.path(namespace), params={"labelSelector": selector})
        # Filter again: a selector the server ignores must not hand us another table's children.
        return [
            item
            for item in result.get("items") or []
            if all((item.get("metadata", {}).get("labels") or {}).get(k) == v for k, v in labels.items())
        ]

    async def patch(
        self, resource: Resource, namespace: str, name: str, body: dict[str, Any], subresource: str = ""
    ) -> dict[str, Any]:
        headers = {"Content-Type": "application/merge-patch+json"}
        path = resource.path(namespace, name, subresource)
        return await self._call("PATCH", path, json=body, headers=headers)

    async def delete(self, resource: Resource, namespace: str, name: str) -> None:
        with contextlib.suppress(KubeNotFoundError):
            await self._call("DELETE", resource.path(namespace, name))


def _text(data: str | bytes) -> str:
    if isinstance(data, bytes):
        data = data.decode()
    try:
        return base64.b64decode(data, validate=True).decode()
    except ValueError:
        return data


def _file(path: Any, data: str | bytes | None) -> str:
    if path:
        return str(path)
    handle = tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False)  # noqa: SIM115 - kept for ssl
    handle.write(_text(data or b""))
    handle.close()
    return handle.name

"""Write a job report into a ConfigMap (``--report configmap://<namespace>/<name>``).

A SparkApplication's driver cannot hand a file to the operator, but it can reach the Kubernetes API with
its service account. The job image has no Kubernetes client, so this speaks plain HTTP with urllib.

The operator creates the ConfigMap (owned by the table) before it submits the job, so the job only
merge-patches ``data["report.json"]``; if the ConfigMap is missing it is created. Transient failures
(5xx, 429, connection errors) are retried a few times; anything else is a StorageError that says why.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import time
import urllib.error
import urllib.request
from http.client import HTTPException
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

from hudi_bucket.errors import StorageError

SCHEME = "configmap"
REPORT_KEY = "report.json"
SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
MAX_REPORT_BYTES = 1_000_000  # a ConfigMap holds at most 1 MiB, metadata included
ATTEMPTS = 4
BACKOFF_SECONDS = 0.5  # doubled after each failed attempt
TIMEOUT_SECONDS = 30

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


class _TransientError(Exception):
    """A failure worth another attempt."""


def parse_uri(uri: str) -> tuple[str, str]:
    """``configmap://<namespace>/<name>`` as (namespace, name), or StorageError."""
    parsed = urlparse(uri)
    namespace, name = parsed.netloc, parsed.path.strip("/")
    if (
        parsed.scheme != SCHEME
        or not _DNS_LABEL.fullmatch(namespace)
        or len(namespace) > 63
        or not _DNS_SUBDOMAIN.fullmatch(name)
        or len(name) > 253
        or parsed.query
        or parsed.fragment
    ):
        raise StorageError(
            f"{uri!r} is not a ConfigMap report URI", hint="write it as configmap://<namespace>/<name>"
        )
    return namespace, name


def write_configmap_report(
    uri: str,
    report_json: bytes,
    *,
    api_server: str | None = None,
    token: str | None = None,
    ca_file: str | None = None,
    attempts: int = ATTEMPTS,
    backoff: float = BACKOFF_SECONDS,
) -> None:
    """Store ``report_json`` as ``data["report.json"]`` of the ConfigMap ``uri`` names.

    Without ``api_server``, ``token`` and ``ca_file`` the pod's service account is used (the in-cluster
    API address, its token and CA bundle).
    """
    namespace, name = parse_uri(uri)
    if len(report_json) > MAX_REPORT_BYTES:
        raise StorageError(
            f"{uri}: the report is {len(report_json)} bytes, more than a ConfigMap holds ({MAX_REPORT_BYTES})",
            hint="this is a bug: reports are meant to be bounded; please report it",
        )
    text = report_json.decode("utf-8")
    client = _Client(api_server or _in_cluster_server(), _token(token), _ssl_context(ca_file))
    collection = f"/api/v1/namespaces/{quote(namespace)}/configmaps"
    patch = {"data": {REPORT_KEY: text}}
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {REPORT_KEY: text},
    }
    delay = backoff
    for attempt in range(1, attempts + 1):
        try:
            status, reply = client.send("PATCH", f"{collection}/{quote(name)}", patch)
            if status == 404:  # not pre-created (or deleted since): create it
                status, reply = client.send("POST", collection, body)
                if status == 409:  # created meanwhile by someone else: patch it next time round
                    raise _TransientError(f"{name} was created concurrently")
            if 200 <= status < 300:
                return
            raise StorageError(
                f"cannot write the report to {uri}: the Kubernetes API answered {status} {_reason(reply)}",
                hint=_hint(status, namespace),
            )
        except _TransientError as err:
            if attempt == attempts:
                raise StorageError(
                    f"cannot write the report to {uri} after {attempts} attempts: {err}",
                    hint="check that the Kubernetes API is reachable from the driver pod",
                ) from None
            time.sleep(delay)
            delay *= 2


class _Client:
    """Just enough of the Kubernetes API for one object: JSON in, (status, JSON) out."""

    def __init__(self, server: str, token: str | None, context: ssl.SSLContext | None) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.context = context

    def send(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(
            self.server + path, data=json.dumps(body).encode(), headers=headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS, context=self.context) as response:
                return response.status, _json(response.read())
        except urllib.error.HTTPError as err:
            reply = _json(err.read())
            if err.code >= 500 or err.code == 429:
                raise _TransientError(f"{method} {path}: {err.code} {_reason(reply)}") from None
            return err.code, reply
        except (urllib.error.URLError, HTTPException, OSError) as err:  # refused, reset, timed out
            reason = getattr(err, "reason", err)
            if isinstance(reason, ssl.SSLError):  # another attempt would fail the same way
                raise StorageError(
                    f"{method} {self.server}{path}: TLS failed: {reason}",
                    hint="check the API server's address and the CA bundle (the service account's ca.crt)",
                ) from None
            raise _TransientError(f"{method} {self.server}{path}: {reason}") from None


def _json(data: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(data or b"{}")
    except ValueError:
        return {"message": data[:200].decode("utf-8", "replace")}
    return doc if isinstance(doc, dict) else {}


def _reason(reply: dict[str, Any]) -> str:
    """The API's own words (a Status object's reason and message)."""
    return ": ".join(str(reply[k]) for k in ("reason", "message") if reply.get(k)) or "(no message)"


def _hint(status: int, namespace: str) -> str:
    if status in (401, 403):
        return (
            f"give the job's service account get, patch and create on configmaps in namespace {namespace} "
            "(the Helm chart's job Role does)"
        )
    return "the ConfigMap was not written; the operator will see the job without a report"


def _in_cluster_server() -> str:
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise StorageError(
            "configmap:// reports need the Kubernetes API, and KUBERNETES_SERVICE_HOST/PORT are not set",
            hint="run the job in a pod, or pass --report a path or storage URI instead",
        )
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def _token(token: str | None) -> str | None:
    if token is not None:
        return token
    path = SERVICE_ACCOUNT / "token"
    # Read on every call: projected service account tokens are rotated while the pod runs.
    return path.read_text().strip() if path.is_file() else None


def _ssl_context(ca_file: str | None) -> ssl.SSLContext:
    default_ca = SERVICE_ACCOUNT / "ca.crt"
    if ca_file is None and default_ca.is_file():
        ca_file = str(default_ca)
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as err:
        raise StorageError(f"cannot load the CA bundle {ca_file}: {err}") from None

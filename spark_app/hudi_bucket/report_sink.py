"""Write a job report into the ConfigMap a ``--report configmap://<namespace>/<name>`` names (see
``contract.reports.ConfigMapReport``), through the official `kubernetes` client (the only module of the
job that uses it).

The job creates the ConfigMap, owned by the object the URI names (the table); when it exists already (the
job ran before) its report key is merge-patched. Transient failures (5xx, 429, connection errors) are
retried a few times; anything else is a StorageError that says why.
"""

from __future__ import annotations

import json
import ssl
import time
from typing import Any

import urllib3
from kubernetes import client, config

from hudi_bucket.contract.reports import ConfigMapReport
from hudi_bucket.errors import StorageError

MAX_REPORT_BYTES = 1_000_000  # a ConfigMap holds at most 1 MiB, metadata included
ATTEMPTS = 4
BACKOFF_SECONDS = 0.5  # doubled after each failed attempt
TIMEOUT_SECONDS = 30
MERGE_PATCH = "application/merge-patch+json"


class _TransientError(Exception):
    """A failure worth another attempt."""


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

    Without ``api_server`` the pod's service account is used (the in-cluster API address, its token and
    CA bundle, the token read again when it rotates).
    """
    target = ConfigMapReport.parse(uri)
    namespace = target.namespace
    if len(report_json) > MAX_REPORT_BYTES:
        raise StorageError(
            f"{uri}: the report is {len(report_json)} bytes, more than a ConfigMap holds ({MAX_REPORT_BYTES})",
            hint="this is a bug: reports are meant to be bounded; please report it",
        )
    text = report_json.decode("utf-8")
    with client.ApiClient(_configuration(api_server, token, ca_file)) as api_client:
        api = client.CoreV1Api(api_client)
        delay = backoff
        for attempt in range(1, attempts + 1):
            try:
                _write(api, target, text)
                return
            except _TransientError as err:
                if attempt == attempts:
                    raise StorageError(
                        f"cannot write the report to {uri} after {attempts} attempts: {err}",
                        hint="check that the Kubernetes API is reachable from the driver pod",
                    ) from None
                time.sleep(delay)
                delay *= 2
            except client.ApiException as err:
                raise StorageError(
                    f"cannot write the report to {uri}: the Kubernetes API answered {err.status} "
                    f"{_reason(err)}",
                    hint=_hint(int(err.status or 0), namespace),
                ) from None


def _write(api: client.CoreV1Api, target: ConfigMapReport, text: str) -> None:
    """One attempt: create the ConfigMap, or patch it if it exists."""
    metadata: dict[str, Any] = {"name": target.name, "namespace": target.namespace}
    if target.owner is not None:
        metadata["ownerReferences"] = [target.owner.reference()]
    try:
        try:
            body: Any = {  # the manifest as it is: the client sends a dict as given
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata,
                "data": {ConfigMapReport.KEY: text},
            }
            api.create_namespaced_config_map(target.namespace, body, _request_timeout=TIMEOUT_SECONDS)
        except client.ApiException as err:
            if err.status != 409:
                raise
            api.patch_namespaced_config_map(
                target.name,
                target.namespace,
                {"data": {ConfigMapReport.KEY: text}},
                _content_type=MERGE_PATCH,
                _request_timeout=TIMEOUT_SECONDS,
            )
    except client.ApiException as err:
        status = int(err.status or 0)
        if status >= 500 or status in (404, 429):  # 404: deleted between create and patch; create again
            raise _TransientError(f"{status} {_reason(err)}") from None
        raise
    except urllib3.exceptions.SSLError as err:  # another attempt would fail the same way
        raise StorageError(
            f"TLS to the Kubernetes API failed: {err}",
            hint="check the API server's address and the CA bundle (the service account's ca.crt)",
        ) from None
    except (urllib3.exceptions.HTTPError, OSError) as err:  # refused, reset, timed out
        raise _TransientError(str(err)) from None


def _configuration(api_server: str | None, token: str | None, ca_file: str | None) -> client.Configuration:
    configuration = client.Configuration()
    if api_server is None:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except config.ConfigException as err:
            raise StorageError(
                f"configmap:// reports need the Kubernetes API and a service account: {err}",
                hint="run the job in a pod, or pass --report a path or storage URI instead",
            ) from None
        return configuration
    configuration.host = api_server
    if token:
        configuration.api_key = {"BearerToken": token}
        configuration.api_key_prefix = {"BearerToken": "Bearer"}
    if ca_file:
        try:
            ssl.create_default_context(cafile=ca_file)
        except (OSError, ssl.SSLError) as err:
            raise StorageError(f"cannot load the CA bundle {ca_file}: {err}") from None
        configuration.ssl_ca_cert = ca_file
    return configuration


def _reason(err: client.ApiException) -> str:
    """The API's own words (a Status object's reason and message)."""
    try:
        reply: dict[str, Any] = json.loads(err.body or "{}")
    except ValueError:
        reply = {"message": str(err.body)[:200]}
    words = [str(reply[k]) for k in ("reason", "message") if isinstance(reply, dict) and reply.get(k)]
    return ": ".join(words) or str(err.reason or "(no message)")


def _hint(status: int, namespace: str) -> str:
    if status in (401, 403):
        return (
            f"give the job's service account get, patch and create on configmaps in namespace {namespace} "
            "(the Helm chart's job Role does)"
        )
    return "the ConfigMap was not written; the operator will see the job without a report"

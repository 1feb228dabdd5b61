"""The job writes its report into a ConfigMap: the client's retries and errors, against kmock's emulator.

The server runs in the test's event loop, so the blocking client runs in a thread. The in-pod path (the
service account's token and CA) runs for real in the end-to-end tests (tests/e2e).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import kmock as kmock_lib
import pytest

from hudi_bucket import report_sink
from hudi_bucket.contract.reports import ConfigMapReport, JobReport, Outcome, ReportOwner
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.errors import StorageError

NAMESPACE, NAME = "lake", "orders-plan-0123456789"
OWNER = ReportOwner("hudi.bucketops.io/v1alpha1", "HudiBucketTable", "orders", "uid-1")
URI = ConfigMapReport(NAMESPACE, NAME, OWNER).uri
KEY = ("v1/configmaps", NAMESPACE, NAME)
REPORT = JobReport(
    JobKind.PLAN, "s3a://lake/orders", Outcome.SUCCEEDED, "ok", "t0", "t1", {"plan": {"id": "p"}}
)


@pytest.fixture
def api(kmock: kmock_lib.KubernetesEmulator) -> kmock_lib.KubernetesEmulator:
    kmock.resources["v1/configmaps"] = {"kind": "ConfigMap", "namespaced": True}
    return kmock


async def write(server: kmock_lib.KubernetesEmulator, uri: str = URI, **options: Any) -> None:
    await asyncio.to_thread(
        report_sink.write_configmap_report,
        uri,
        REPORT.to_json(),
        api_server=str(server.url),
        token="job-token",
        backoff=0.01,
        **options,
    )


def stored_report(server: kmock_lib.KubernetesEmulator) -> dict[str, Any]:
    return json.loads(server.objects[KEY]["data"][ConfigMapReport.KEY])


def precreate(server: kmock_lib.KubernetesEmulator) -> None:
    server.objects[KEY] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"keep": "me"}},
        "data": {"other": "kept"},
    }


@pytest.mark.asyncio
async def test_creates_the_configmap_owned_by_the_table(api: kmock_lib.KubernetesEmulator) -> None:
    await write(api)
    assert stored_report(api) == REPORT.to_dict()
    assert api.objects[KEY]["metadata"] == {
        "name": NAME,
        "namespace": NAMESPACE,
        "ownerReferences": [
            {"apiVersion": OWNER.api_version, "kind": OWNER.kind, "name": OWNER.name, "uid": OWNER.uid}
        ],
    }
    [request] = list(api)
    assert request.method == "POST"
    assert request.headers["Authorization"] == "Bearer job-token"


@pytest.mark.asyncio
async def test_patches_the_configmap_a_run_before_created(api: kmock_lib.KubernetesEmulator) -> None:
    precreate(api)
    api["post"] << 409 << {"kind": "Status", "reason": "AlreadyExists", "message": "exists"}
    await write(api)
    assert stored_report(api) == REPORT.to_dict()
    stored = api.objects[KEY]
    assert stored["data"]["other"] == "kept"
    assert stored["metadata"]["labels"] == {"keep": "me"}
    [request] = list(api["patch"])
    assert request.headers["Content-Type"] == "application/merge-patch+json"
    assert request.data == {"data": {ConfigMapReport.KEY: REPORT.to_json().decode()}}


@pytest.mark.asyncio
async def test_a_server_error_is_retried(api: kmock_lib.KubernetesEmulator) -> None:
    api["post"][:1] << 500 << {"kind": "Status", "reason": "InternalError", "message": "etcd hiccup"}
    await write(api)
    assert stored_report(api) == REPORT.to_dict()
    assert len(api["post"]) == 2


@pytest.mark.asyncio
async def test_an_unreachable_server_is_retried_then_reported() -> None:
    with pytest.raises(StorageError, match="after 2 attempts") as caught:
        await asyncio.to_thread(
            report_sink.write_configmap_report,
            URI,
            b"{}",
            api_server="http://127.0.0.1:9",  # discard port: nothing listens
            token="",
            attempts=2,
            backoff=0.01,
        )
    assert URI in str(caught.value)


@pytest.mark.asyncio
async def test_forbidden_fails_at_once_with_a_clear_error(api: kmock_lib.KubernetesEmulator) -> None:
    (
        api["post"]
        << 403
        << {
            "kind": "Status",
            "reason": "Forbidden",
            "message": 'configmaps "x" is forbidden: User "system:serviceaccount:lake:jobs" cannot create',
        }
    )
    with pytest.raises(StorageError) as caught:
        await write(api)
    message = str(caught.value)
    assert "403" in message
    assert "Forbidden" in message
    assert "cannot create" in message
    assert URI in message
    assert "configmaps in namespace lake" in caught.value.hint
    assert len(api["post"]) == 1  # not retried


def test_outside_a_pod_it_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(StorageError, match="need the Kubernetes API and a service account") as caught:
        report_sink.write_configmap_report(URI, b"{}")
    assert "run the job in a pod" in caught.value.hint


def test_an_oversized_report_is_refused_before_sending() -> None:
    with pytest.raises(StorageError, match="more than a ConfigMap holds"):
        report_sink.write_configmap_report(
            URI, b"x" * (report_sink.MAX_REPORT_BYTES + 1), api_server="http://127.0.0.1:9"
        )


def test_the_uri_names_the_configmap_and_its_owner() -> None:
    assert ConfigMapReport.parse(URI) == ConfigMapReport(NAMESPACE, NAME, OWNER)
    assert ConfigMapReport.parse(f"configmap://{NAMESPACE}/{NAME}") == ConfigMapReport(NAMESPACE, NAME)


@pytest.mark.parametrize(
    "uri",
    [
        "configmap://Lake/x",  # not a DNS label
        f"configmap://{NAMESPACE}/{NAME}?kind=HudiBucketTable",  # an owner in part
        f"{URI}&extra=1",
        URI.replace("uid=uid-1", "uid="),
        f"{URI}#fragment",
    ],
)
def test_a_uri_of_another_shape_is_refused(uri: str) -> None:
    with pytest.raises(StorageError, match="not a ConfigMap report URI"):
        ConfigMapReport.parse(uri)

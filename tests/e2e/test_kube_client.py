"""The operator's own Kubernetes client (kube.KubeClient) against the real API server: each call it
makes, and the API's own words when a call fails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from kubernetes.aio import client as aio_client
from kubernetes.aio import config as aio_config

from control_plane import ControlPlane
from hudi_bucket_operator.errors import KubeConflictError, KubeError, KubeNotFoundError
from hudi_bucket_operator.resource.api import GROUP, PLURAL, VERSION
from hudi_bucket_operator.runtime import kube
from lib.paths import REPO


def test_the_operators_client_creates_reads_deletes_and_says_what_the_api_said(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    control_plane.kubectl("create", "serviceaccount", "operator", "-n", namespace)
    control_plane.kubectl(
        "create", "role", "configmaps", "-n", namespace, "--verb=get,create,delete", "--resource=configmaps"
    )
    control_plane.kubectl(
        "create", "rolebinding", "operator", "-n", namespace, "--role=configmaps",
        f"--serviceaccount={namespace}:operator",
    )  # fmt: skip
    control_plane.wait_until_allowed(
        f"system:serviceaccount:{namespace}:operator", "create", "configmaps", namespace
    )
    kubeconfig = control_plane.kubeconfig_for_token(
        control_plane.token_for(namespace, "operator"), tmp_path / "operator.kubeconfig"
    )
    report = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "report", "namespace": namespace},
        "data": {"report.json": "{}"},
    }

    async def calls() -> None:
        configuration = aio_client.Configuration()
        await aio_config.load_kube_config(str(kubeconfig), client_configuration=configuration)
        api = kube.KubeClient()
        await api.log_in(configuration)
        try:
            await api.create(kube.CONFIG_MAPS, report)
            assert await api.config_map_data(namespace, "report") == {"report.json": "{}"}
            with pytest.raises(KubeConflictError, match='configmaps "report" already exists'):
                await api.create(kube.CONFIG_MAPS, report)
            await api.delete_config_map(namespace, "report")
            await api.delete_config_map(namespace, "report")  # gone already: nothing to do
            with pytest.raises(KubeNotFoundError, match='configmaps "report" not found'):
                await api.config_map_data(namespace, "report")
            with pytest.raises(KubeError, match=r"403.*cannot patch resource"):
                await api.patch_status(kube.SPARK_APPLICATIONS, namespace, "app", {"phase": "x"}, "1")
        finally:
            await api.close()

    asyncio.run(calls())


def test_a_status_write_applies_only_onto_the_version_read(
    control_plane: ControlPlane, namespace: str
) -> None:
    """What the operator's passes rely on (handlers.Memory.versions): a status or finalizers write onto
    the version of the table it read, refused with a conflict once anything changed it since."""
    control_plane.kubectl("apply", "--server-side", "-f", str(REPO / "crds"))
    control_plane.kubectl(
        "wait", "--for=condition=Established", "--timeout=30s", f"crd/{PLURAL}.{GROUP}"
    )  # fmt: skip
    tables = kube.Resource(GROUP, VERSION, PLURAL)
    table = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "HudiBucketTable",
        "metadata": {"name": "orders", "namespace": namespace},
        "spec": {"table": {"uri": "s3a://lake/orders"}, "buckets": {"default": 2, "rules": [{"pattern": "x", "buckets": 4}]}},
    }  # fmt: skip

    async def calls() -> None:
        configuration = aio_client.Configuration()
        await aio_config.load_kube_config(
            str(control_plane.kubeconfig_path), client_configuration=configuration
        )
        api = kube.KubeClient()
        await api.log_in(configuration)
        try:
            await api.create(tables, table)
            read = (await api.get(tables, namespace, "orders"))["metadata"]["resourceVersion"]
            written = await api.patch_status(tables, namespace, "orders", {"phase": "Planning"}, read)
            assert written != read
            with pytest.raises(KubeConflictError, match="the object has been modified"):
                await api.patch_status(tables, namespace, "orders", {"phase": "Stalled"}, read)
            after = await api.set_finalizers(tables, namespace, "orders", [], ["x/y"])
            assert after != written
            with pytest.raises(KubeConflictError):
                await api.patch_status(tables, namespace, "orders", {"phase": "Stalled"}, written)
            stored = await api.get(tables, namespace, "orders")
            assert (stored["status"], stored["metadata"]["resourceVersion"]) == ({"phase": "Planning"}, after)
            await api.set_finalizers(tables, namespace, "orders", ["x/y"], [])
        finally:
            await api.close()

    asyncio.run(calls())

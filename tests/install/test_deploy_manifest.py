"""The kubectl install path: crds/ then deploy/hudi-bucket-operator.yaml, both with server-side apply.

The single-file manifest is the chart rendered with its default values, kept up to date by a test."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from lib import helm_chart
from lib.helm_chart import DEPLOY_MANIFEST, NAMESPACE
from lib.paths import REPO

pytestmark = pytest.mark.usefixtures("helm_available")

CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}


def manifest_objects() -> list[dict]:
    return [doc for doc in yaml.safe_load_all(DEPLOY_MANIFEST.read_text()) if doc]


def test_deploy_manifest_is_the_chart_rendered_with_default_values() -> None:
    assert DEPLOY_MANIFEST.read_text() == helm_chart.deploy_manifest_text(), (
        "deploy/hudi-bucket-operator.yaml is out of date: run .venv/bin/python tests/install/render_deploy.py"
    )


def test_deploy_manifest_creates_its_namespace_first_and_puts_everything_in_it() -> None:
    objs = manifest_objects()
    assert objs[0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": {"app.kubernetes.io/name": "hudi-bucket-operator"}},
    }
    for obj in objs:
        if obj["kind"] not in CLUSTER_SCOPED:
            assert obj["metadata"]["namespace"] == NAMESPACE, obj["metadata"]
    assert {obj["kind"] for obj in objs} >= {"Deployment", "ServiceAccount", "ClusterRole", "Service"}


def test_deploy_manifest_leaves_the_crd_to_crds() -> None:
    assert [o for o in manifest_objects() if o["kind"] == "CustomResourceDefinition"] == []
    crds = [
        doc for path in sorted((REPO / "crds").glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())
    ]
    assert [crd["kind"] for crd in crds] == ["CustomResourceDefinition"]


@pytest.mark.parametrize("kubernetes", helm_chart.KUBERNETES_VERSIONS)
def test_everything_kubectl_applies_meets_the_kubernetes_schema(kubernetes: str) -> None:
    crds = [
        doc for path in sorted((REPO / "crds").glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())
    ]
    for obj in crds + manifest_objects():
        kubernetes_validate.validate(obj, kubernetes, strict=True)

"""The control_plane fixture is a real, working Kubernetes: the things the e2e tests rely on, each proven."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client import ApiException

from control_plane import ControlPlane
from lib.paths import REPO

CRDS = REPO / "crds"


def eventually(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f} s: {what}")
        time.sleep(0.2)


def refused(call: Callable[[], object]) -> ApiException:
    """What the API answered ``call`` with, failing the test if it was let through."""
    with pytest.raises(ApiException) as answer:
        call()
    return answer.value


def gone(read: Callable[[], object]) -> bool:
    """Whether ``read`` finds nothing (404); any other refusal is an error of the test."""
    try:
        read()
    except ApiException as error:
        if error.status == 404:
            return True
        raise
    return False


def meta(name: str) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name)


def config_map(name: str, **metadata: object) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, **metadata), data={"k": "v"})


def test_it_is_kubernetes_of_the_pinned_version(control_plane: ControlPlane) -> None:
    # /readyz said "ok" before the fixture handed the control plane over: start() waits for it.
    admin = control_plane.api_client()
    assert client.VersionApi(admin).get_code().git_version == "v1.36.3"
    # The ServiceAccount machinery is up: the CA every namespace gets from the controller manager.
    published = client.CoreV1Api(admin).read_namespaced_config_map("kube-root-ca.crt", "default")
    assert published.data == {"ca.crt": control_plane.ca_file.read_text()}


def test_deleting_an_owner_garbage_collects_its_dependent(
    control_plane: ControlPlane, namespace: str
) -> None:
    core = client.CoreV1Api(control_plane.api_client())
    owner = core.create_namespaced_config_map(namespace, config_map("owner"))
    reference = client.V1OwnerReference(
        api_version="v1", kind="ConfigMap", name="owner", uid=owner.metadata.uid
    )
    core.create_namespaced_config_map(namespace, config_map("child", owner_references=[reference]))

    core.delete_namespaced_config_map("owner", namespace)
    eventually(
        lambda: gone(lambda: core.read_namespaced_config_map("child", namespace)),
        30,
        "the child is garbage-collected",
    )


def test_a_namespace_with_objects_in_it_is_deleted(control_plane: ControlPlane) -> None:
    core = client.CoreV1Api(control_plane.api_client())
    name = "e2e-doomed"
    core.create_namespace(client.V1Namespace(metadata=meta(name)))
    core.create_namespaced_config_map(name, config_map("c"))
    core.create_namespaced_secret(name, client.V1Secret(metadata=meta("s"), string_data={"k": "v"}))
    core.create_namespaced_service_account(name, client.V1ServiceAccount(metadata=meta("sa")))

    core.delete_namespace(name)
    eventually(lambda: gone(lambda: core.read_namespace(name)), 30, f"namespace {name} is gone")


def test_a_service_account_token_is_that_identity_and_rbac_is_enforced(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    admin = control_plane.api_client()
    client.CoreV1Api(admin).create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=meta("reader"))
    )
    rbac = client.RbacAuthorizationV1Api(admin)
    rule = client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get", "list"])
    rbac.create_namespaced_role(namespace, client.V1Role(metadata=meta("read-config"), rules=[rule]))
    rbac.create_namespaced_role_binding(
        namespace,
        client.V1RoleBinding(
            metadata=meta("reader-reads-config"),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="read-config"),
            subjects=[client.RbacV1Subject(kind="ServiceAccount", name="reader", namespace=namespace)],
        ),
    )
    # Ours, not kube-root-ca.crt, which a controller publishes into a new namespace when it gets to it.
    client.CoreV1Api(admin).create_namespaced_config_map(namespace, config_map("readable"))
    control_plane.wait_until_allowed(
        f"system:serviceaccount:{namespace}:reader", "list", "configmaps", namespace
    )

    token = control_plane.token_for(namespace, "reader", expiration_seconds=600)
    with control_plane.api_client_for_token(token) as as_reader:
        review = client.AuthenticationV1Api(as_reader).create_self_subject_review(
            client.V1SelfSubjectReview()
        )
        assert review.status.user_info.username == f"system:serviceaccount:{namespace}:reader"
        reader = client.CoreV1Api(as_reader)
        listed = reader.list_namespaced_config_map(namespace)
        assert "readable" in {item.metadata.name for item in listed.items}
        assert refused(lambda: reader.list_namespaced_secret(namespace)).status == 403
        assert (
            refused(lambda: reader.create_namespaced_config_map(namespace, config_map("nope"))).status == 403
        )
        # A Role, not a ClusterRole: nothing in another namespace.
        assert refused(lambda: reader.list_namespaced_config_map("default")).status == 403

    # The same identity through a kubeconfig, as a process run "as" the ServiceAccount would use it.
    kubeconfig = control_plane.kubeconfig_for_token(token, tmp_path / "reader.kubeconfig")
    listed_by_kubectl = control_plane.kubectl(
        "get", "configmaps", "-n", namespace, "-o", "name", kubeconfig=kubeconfig
    )
    assert "configmap/readable" in listed_by_kubectl.stdout.split()
    denied = control_plane.kubectl("get", "secrets", "-n", namespace, kubeconfig=kubeconfig, check=False)
    assert denied.returncode != 0
    assert "forbidden" in denied.stderr


def hudi_bucket_table(namespace: str, name: str, uri: str, **buckets: object) -> str:
    return json.dumps({
        "apiVersion": "hudi.bucketops.io/v1alpha1",
        "kind": "HudiBucketTable",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "table": {"uri": uri},
            "buckets": {"default": 4, "rules": [{"pattern": "day=.*-11-11", "buckets": 32}], **buckets},
        },
    })  # fmt: skip


def test_our_crd_applies_and_its_cel_rules_are_enforced(control_plane: ControlPlane, namespace: str) -> None:
    control_plane.kubectl("apply", "--server-side", "-f", str(CRDS))
    control_plane.kubectl(
        "wait", "--for=condition=Established", "--timeout=30s", "crd/hudibuckettables.hudi.bucketops.io"
    )

    def apply(manifest: str) -> tuple[int, str]:
        result = control_plane.kubectl("apply", "--server-side", "-f", "-", input=manifest, check=False)
        return result.returncode, result.stderr

    code, stderr = apply(hudi_bucket_table(namespace, "fine", "s3a://lake/orders", currentBuckets=4))
    assert code == 0, stderr

    # A rule only CEL expresses: a table being converted has no current bucket count. (The object must
    # be valid by the schema otherwise: the apiserver skips CEL rules on an object with schema errors.)
    code, stderr = apply(hudi_bucket_table(namespace, "both", "s3a://lake/x", convert=True, currentBuckets=4))
    assert code != 0
    assert "spec.buckets.convert and spec.buckets.currentBuckets cannot both be set" in stderr

    # A transition rule (it compares with the stored object): the table's URI cannot change.
    code, stderr = apply(hudi_bucket_table(namespace, "fine", "s3a://lake/elsewhere", currentBuckets=4))
    assert code != 0
    assert "spec.table.uri is immutable" in stderr

    # Sizing: a target file size as a Kubernetes quantity or bytes; CEL explains a wrong one and bounds
    # that cross.
    for name, target in (("sized", "512Mi"), ("sized-bytes", 536870912)):
        sizing = {"targetFileSize": target, "maxBuckets": 256, "partitions": "^day=", "tolerance": 1.5}
        sizing["replanEvery"] = "24h"
        code, stderr = apply(hudi_bucket_table(namespace, name, f"s3a://lake/{name}", sizing=sizing))
        assert code == 0, stderr
    for target in ("512MB", 0):
        sizing = {"targetFileSize": target}
        code, stderr = apply(hudi_bucket_table(namespace, "badly-sized", "s3a://lake/b", sizing=sizing))
        assert code != 0
        assert "targetFileSize must be a size in bytes or a Kubernetes quantity" in stderr
    # Sizing proposes rules of its own: a sized table needs none of its own, any other table one.
    table = json.loads(
        hudi_bucket_table(namespace, "sized-alone", "s3a://lake/s", sizing={"targetFileSize": "1Gi"})
    )
    del table["spec"]["buckets"]["rules"]
    code, stderr = apply(json.dumps(table))
    assert code == 0, stderr
    del table["spec"]["buckets"]["sizing"]
    table["metadata"]["name"] = "ruleless"
    code, stderr = apply(json.dumps(table))
    assert code != 0
    assert "spec.buckets.rules has no rules" in stderr
    sizing = {"targetFileSize": "1Gi", "replanEvery": "0h"}
    code, stderr = apply(hudi_bucket_table(namespace, "badly-sized", "s3a://lake/b", sizing=sizing))
    assert code != 0
    assert "spec.buckets.sizing.replanEvery must be a duration" in stderr
    sizing = {"targetFileSize": "1Gi", "minBuckets": 64, "maxBuckets": 8}
    code, stderr = apply(hudi_bucket_table(namespace, "badly-sized", "s3a://lake/b", sizing=sizing))
    assert code != 0
    assert "spec.buckets.sizing.minBuckets must not be above maxBuckets" in stderr
    code, stderr = apply(
        hudi_bucket_table(
            namespace, "badly-sized", "s3a://lake/b", sizing={"targetFileSize": 1, "tolerance": 1}
        )
    )
    assert code != 0
    assert "tolerance" in stderr

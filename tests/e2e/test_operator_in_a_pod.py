"""The chart installed by a real helm, its operator in a pod on the real node, in a namespace enforcing
Pod Security ``restricted``: the operator finds the API server the in-cluster way (the `kubernetes`
Service's ClusterIP, served by kube-proxy, and its ServiceAccount's token), becomes Ready, its metrics
answer through its Service, and it reconciles a table as far as it can without a Spark Operator."""

from __future__ import annotations

import ipaddress
import time

import pytest
from kubernetes import client

from control_plane import ControlPlane
from control_plane.cluster import KUBERNETES_SERVICE_IP
from harness import Cluster, until
from node import Node
from node.containerd import POD_SUBNET
from node.pod_security import restricted_namespace
from paths import SHARED_FOUND, SHARED_MISSING

RELEASE = "hbo-in-a-pod"
TABLE = {  # the operator plans before it reads anything: the table need not exist
    "table": {"uri": "s3a://lake/warehouse/orders"},
    "buckets": {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
}


def ready(pod: client.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def test_the_charts_operator_in_a_pod_reaches_the_api_server_is_ready_serves_metrics_and_plans_a_table(
    control_plane: ControlPlane, node: Node, our_images: dict[str, str], namespace: str
) -> None:
    if not SHARED_FOUND:  # the operator indexes SparkApplications: their CRD must be there
        pytest.skip(SHARED_MISSING)
    restricted_namespace(control_plane, namespace)
    cluster = Cluster(control_plane)
    cluster.install_crds()
    repository, tag = node.load_image(our_images["operator"], "hudi-bucket-operator").rsplit(":", 1)
    values = {
        "image": {"repository": repository, "tag": tag, "pullPolicy": "Never"},
        "watch": {"namespaces": [namespace]},  # nothing of the other tests' namespaces
        "tolerations": [node.toleration],
    }
    installed = time.monotonic()
    cluster.install_chart(RELEASE, namespace, values)
    try:
        selector = f"app.kubernetes.io/instance={RELEASE}"

        def ready_pod() -> client.V1Pod | None:
            pods = cluster.core.list_namespaced_pod(namespace, label_selector=selector).items
            return next((pod for pod in pods if ready(pod)), None)

        pod = until(
            ready_pod, 120, lambda: f"a Ready pod: {cluster.core.list_namespaced_pod(namespace).items}"
        )
        seconds_to_ready = time.monotonic() - installed
        assert pod.spec.node_name == node.name
        assert pod.status.container_statuses[0].restart_count == 0  # its liveness probe never failed
        assert ipaddress.ip_address(pod.status.pod_ip) in ipaddress.ip_network(POD_SUBNET)

        # It was told the API server is the `kubernetes` Service (by the kubelet, as in any cluster) ...
        environment = node.container_environment(pod.status.container_statuses[0].container_id)
        assert environment["KUBERNETES_SERVICE_HOST"] == KUBERNETES_SERVICE_IP
        assert environment["KUBERNETES_SERVICE_PORT"] == "443"  # not the API server's own port
        # ... and the API server answered its ServiceAccount's requests, coming from the pod's address.
        user = f"system:serviceaccount:{namespace}:{pod.spec.service_account_name}"

        def tables_listed_from_the_pod() -> bool:
            return any(
                e.user == user and e.resource == "hudibuckettables" and e.verb in ("list", "watch")
                and e.code == 200 and e.source_ips == (pod.status.pod_ip,)
                for e in control_plane.audit_events()
            )  # fmt: skip

        until(
            tables_listed_from_the_pod,
            30,
            lambda: f"the pod's requests in the audit log; its log:\n{operator_log(node, namespace, pod)}",
        )

        # /metrics through its Service: the API server's service proxy, to the Ready pod behind it.
        service = f"{RELEASE}-hudi-bucket-operator-metrics:metrics"
        metrics = cluster.core.connect_get_namespaced_service_proxy_with_path(service, namespace, "metrics")
        assert "# TYPE hbo_reconciles_total counter" in metrics, metrics[:2000]

        # It reconciles a table: the first pass starts a plan job (a SparkApplication, which no Spark
        # Operator runs here) and says so in the table's status, both written with its token.
        cluster.create_table(namespace, "orders", TABLE)
        until(
            lambda: cluster.job_kinds(namespace, "orders") == ["plan"],
            60,
            lambda: f"the plan job; the operator's log:\n{operator_log(node, namespace, pod)}",
        )
        status = until(lambda: (s := cluster.status(namespace, "orders")).get("observedGeneration") and s, 30)
        assert ("Reconciling", "Planning") in {(c["type"], c["reason"]) for c in status["conditions"]}
        assert any(
            e.user == user and e.verb == "create" and e.resource == "sparkapplications" and e.code == 201
            and e.source_ips == (pod.status.pod_ip,)
            for e in control_plane.audit_events()
        )  # fmt: skip
        assert "Traceback" not in operator_log(node, namespace, pod)
        print(
            f"\nnode started in {node.start_seconds:.1f} s; operator pod Ready {seconds_to_ready:.1f} s after"
            " helm install"
        )
    finally:
        cluster.helm("uninstall", RELEASE, "--namespace", namespace, "--wait", "--timeout", "60s")


def operator_log(node: Node, namespace: str, pod: client.V1Pod) -> str:
    return node.container_log(namespace, pod.metadata.name, "operator")

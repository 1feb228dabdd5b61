"""Pods of our images on a real node (kubelet, containerd, runc), admitted by Pod Security ``restricted``:
what the chart and our SparkApplications must ask for, shown to start and run here."""

from __future__ import annotations

import time

from kubernetes import client

from control_plane import ControlPlane
from control_plane.cluster import KUBERNETES_SERVICE_IP
from node import Node
from node.pod_security import restricted_container, restricted_namespace
from registry.release import PushedRelease


def pulled_by_digest(node: Node, released: PushedRelease, name: str) -> str:
    """The release's image as pods name it, pulled by the node from the registry by its digest (as the
    cluster scenario's pods pull it: the same name, so one pull serves both)."""
    node.trust_registry(released.images[name].split("/", 1)[0])
    return released.images[name]


def run_to_completion(
    control_plane: ControlPlane, namespace: str, pod: client.V1Pod, timeout: float = 120
) -> tuple[client.V1Pod, float]:
    """Creates the pod and waits for it to end; returns it and the seconds from creation to its end."""
    core = client.CoreV1Api(control_plane.api_client())
    created = time.monotonic()
    core.create_namespaced_pod(namespace, pod)
    deadline = created + timeout
    while True:
        current = core.read_namespaced_pod(pod.metadata.name, namespace)
        if current.status.phase in ("Succeeded", "Failed"):
            return current, time.monotonic() - created
        if time.monotonic() > deadline:
            raise AssertionError(f"pod still {current.status.phase} after {timeout} s: {current.status}")
        time.sleep(0.2)


def test_a_job_image_pod_runs_to_success_as_non_root_in_a_restricted_namespace(
    control_plane: ControlPlane, node: Node, released: PushedRelease, namespace: str
) -> None:
    restricted_namespace(control_plane, namespace)
    image = pulled_by_digest(node, released, "job")
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="job-help"),
        spec=client.V1PodSpec(
            node_name=node.name,
            restart_policy="Never",
            automount_service_account_token=False,
            # Through the image's entrypoint (tini, then any command as given), as Spark's pods start.
            containers=[
                restricted_container(
                    "job",
                    image,
                    ["sh", "-c", "id -u; getent hosts kubernetes.default.svc; hudi-bucket-job --help"],
                )
            ],
        ),
    )

    ended, seconds = run_to_completion(control_plane, namespace, pod)

    log = node.container_log(namespace, "job-help", "job")
    assert ended.status.phase == "Succeeded", (ended.status, log)
    uid, resolved, usage = log.split("\n", 2)
    assert uid == "185"  # the image's own user, as Spark's images have it
    # The cluster's DNS, with the search path that completes a Service's short name, as in any cluster.
    assert resolved.split() == [KUBERNETES_SERVICE_IP, "kubernetes.default.svc.cluster.local"]
    assert "usage: hudi-bucket-job" in usage
    print(
        f"\nnode started in {node.start_seconds:.1f} s, pod created to Succeeded in {seconds:.1f} s (its image"
        f" pulled by digest if the node had not pulled it yet), node RSS {node.rss_bytes() / 2**20:.0f} MiB"
    )


def test_an_operator_image_pod_placed_by_the_scheduler_starts_its_entry_point_in_a_restricted_namespace(
    control_plane: ControlPlane, node: Node, released: PushedRelease, namespace: str
) -> None:
    restricted_namespace(control_plane, namespace)
    image = pulled_by_digest(node, released, "operator")
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="operator-help"),
        spec=client.V1PodSpec(
            restart_policy="Never",  # no node named: kube-scheduler places it, as the chart's Deployment
            tolerations=[client.V1Toleration(**node.toleration)],  # the node takes only the pods it runs
            automount_service_account_token=False,
            # Appended to the image's entrypoint: `hudi-bucket-operator run --help`.
            containers=[restricted_container("operator", image, ["--help"])],
        ),
    )

    ended, seconds = run_to_completion(control_plane, namespace, pod)

    log = node.container_log(namespace, "operator-help", "operator")
    assert ended.status.phase == "Succeeded", (ended.status, log)
    assert ended.spec.node_name == node.name
    assert "--log-format" in log
    print(f"\noperator pod: created to Succeeded in {seconds:.1f} s")

"""The whole path in pods on the real node, in a namespace enforcing Pod Security ``restricted``.

The chart, installed by a real helm, runs our operator image in its pod: it finds the API server the
in-cluster way (the ``kubernetes`` Service's ClusterIP, served by kube-proxy, and its ServiceAccount's
token), becomes Ready, and its metrics answer through its Service. Each job is a SparkApplication that
spark-submit turns into a driver pod, whose driver starts its executor pods, all of our job image. The
table is on an S3-compatible server the pods reach at the node's address, its credentials only in a
Secret. A user's ingestion Deployment writes the table all along with Apache Hudi's own Spark writer,
in a pod of the job image (tests/e2e/ingest_app.py). The real Kubeflow Spark Operator, installed by its
own chart, submits each job from its pod on the node. A Manual plan is approved; in its window the
operator scales the writer to 0, applies the plan once its pod is gone, and scales it back; the new pod
(a new JVM, which loads the new bucket counts) writes on. Then Apache Hudi, hudi-rs and our verify read
the table back: every key once, every acknowledged upsert there, each record in its bucket."""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import real_spark_operator
from kubernetes import client
from object_store.server import S3Server, ensure_binary
from pyarrow import fs as pafs

from control_plane import ControlPlane
from control_plane.cluster import KUBERNETES_SERVICE_IP
from harness import Cluster, open_window, until, write_orders_table
from hudi_bucket import cli
from ingestion import IngestionPod, writer_options
from lib.hudi_rs import records
from lib.paths import SHARED_FOUND, SHARED_MISSING
from node import Node
from node.containerd import POD_SUBNET
from node.node import NODE_IP
from node.pod_security import restricted_namespace
from registry.release import PushedRelease
from spark_submit import DRIVER_CONTAINER, container

pytestmark = pytest.mark.spark  # the table is written, and read back, with the session's Spark

RELEASE = "hbo-jobs-in-pods"
WRITER = "orders-writer"
JOBS_ACCOUNT = "hudi-bucket-jobs"  # the chart's default
COLUMNS = ("order_id", "day", "amount")
ROWS = 60


def test_a_manual_rescale_of_an_s3_table_runs_in_pods_of_our_job_image_while_its_writer_pod_is_paused(
    control_plane: ControlPlane,
    node: Node,
    our_images: dict[str, str],
    released: PushedRelease,
    namespace: str,
    spark: Any,
    tmp_path: Path,
) -> None:
    if not SHARED_FOUND:  # the Spark Operator's release
        pytest.skip(SHARED_MISSING)
    problem = real_spark_operator.build_problem()
    if problem:
        pytest.skip(problem)
    restricted_namespace(control_plane, namespace)
    store = S3Server(ensure_binary(), host=NODE_IP, bucket="pods-lake")  # where pods reach the machine
    store.start()
    spark_operator = real_spark_operator.SparkOperatorInPods(
        control_plane, node, our_images["job"], [namespace], tmp_path / "spark-operator"
    )
    cluster = Cluster(control_plane)
    spark_pods = SparkPods(cluster.core, namespace)
    try:
        uri = s3_table(spark, store, tmp_path)
        before = records(uri, columns=COLUMNS, storage_options=store.storage_options())
        first_rows = [(r["order_id"], r["day"], r["amount"]) for r in before]
        secret = client.V1Secret(
            metadata=client.V1ObjectMeta(name="lake-s3"), string_data=store.credentials_env()
        )
        cluster.core.create_namespaced_secret(namespace, secret)
        began = time.monotonic()
        spark_operator.start()  # as a platform team would, before ours
        spark_operator_ready = time.monotonic() - began
        cluster.install_crds()
        installed = time.monotonic()
        job_image = install_chart(cluster, node, released, namespace)
        # The writer starts while the operator does (each a JVM or an interpreter starting).
        writer = IngestionPod(cluster, node, namespace, WRITER, store, uri)
        writer.create(job_image, node.toleration, writer_options(tmp_path / "orders"), "lake-s3", "orders")
        operator = the_operator_is_ready_in_its_pod(control_plane, cluster, node, namespace)
        ready = time.monotonic() - installed
        spark_pods.start()
        first_pod = writer.writing_pod(batches=1, timeout=300)
        started = time.monotonic()

        cluster.create_table(namespace, "orders", table_spec(uri, store))
        status = cluster.phase_is(namespace, "orders", "AwaitingApproval", timeout=300)
        planned = time.monotonic() - started
        assert status["observedGeneration"] == 1
        assert status["plan"]["items"][0]["partition"] == "day=2025-11-11"
        until(
            lambda: any(e.startswith("AwaitingApproval") for e in cluster.events(namespace, "orders")),
            30,
            "the AwaitingApproval event (Kopf posts events in the background)",
        )
        assert cluster.job_kinds(namespace, "orders") == ["plan"]  # nothing moves without approval
        plan_id = status["plan"]["id"]
        approve = {"spec": {"apply": {"policy": "Manual", "approvedPlan": plan_id}}}
        cluster.patch_table(namespace, "orders", approve)
        status = cluster.phase_is(namespace, "orders", "Ready", timeout=400)
        seconds = time.monotonic() - started
        # Paused for the apply, inside its window, then resumed as it was: a new pod, writing into the new
        # buckets (verify reads them there, below).
        assert list(status["writers"]) == ["last"]  # the steps are over: only their record is left
        assert status["writers"]["last"]["writers"] == [f"Deployment/{WRITER}"]
        assert status["history"][0]["writersDowntimeSeconds"] == status["writers"]["last"]["downtimeSeconds"]
        # Resumed once Ready is written (the status first records what it resumes); Kopf posts the event
        # in the background.
        until(
            lambda: any(e.startswith("WritersResumed") for e in cluster.events(namespace, "orders")),
            30,
            "the WritersResumed event",
        )
        events = cluster.events(namespace, "orders")
        assert any(e.startswith(f"WritersPaused: writers paused (Deployment/{WRITER})") for e in events), (
            events
        )
        assert writer.replicas() == 1
        second_pod = writer.writing_pod(batches=1, timeout=300, other_than=first_pod)
        writer.stop()
        batches = writer.batches()
        assert [b["pod"] for b in batches] == sorted(
            (b["pod"] for b in batches), key=[first_pod, second_pod].index
        )
        gap = min(b["at"] for b in batches if b["pod"] == second_pod) - max(
            b["at"] for b in batches if b["pod"] == first_pod
        )

        assert cluster.job_kinds(namespace, "orders") == [
            "plan",
            "apply",
        ]  # the approval plans no second time
        assert status["observedGeneration"] == 2
        assert status["history"][0]["planId"] == plan_id
        until(lambda: cluster.config_maps(namespace) == {}, 30, "the recorded reports to be deleted")
        assert {p["partition"]: p["buckets"] for p in status["partitions"]["items"]} == {
            "day=2025-11-10": 2,
            "day=2025-11-11": 6,
        }
        # Each job: a driver pod and its executor pods, all of our job image, admitted and run to the end.
        apps = cluster.jobs(namespace, "orders")
        logs = [
            node.container_log(namespace, app["status"]["driverInfo"]["podName"], DRIVER_CONTAINER)
            for app in apps
        ]
        assert [app["status"]["applicationState"]["state"] for app in apps] == ["COMPLETED", "COMPLETED"], (
            [app["status"] for app in apps], [log[-3000:] for log in logs], spark_operator.log()[-3000:],
        )  # fmt: skip
        executors = [set(app["status"].get("executorState") or {}) for app in apps]
        for app, names in zip(apps, executors, strict=True):
            assert names, app["status"]  # at least one executor
            assert {spark_pods.seen[name] for name in names} == {("executor", job_image)}, spark_pods.seen
            assert spark_pods.seen[app["status"]["driverInfo"]["podName"]] == ("driver", job_image)
        # The executors were created by the driver, as the jobs' ServiceAccount (the chart's Role).
        driver_account = f"system:serviceaccount:{namespace}:{JOBS_ACCOUNT}"
        executors_created = {
            e.name
            for e in control_plane.audit_events()
            if e.user == driver_account and e.verb == "create" and e.resource == "pods" and e.code == 201
        }
        assert executors_created >= set().union(*executors)
        # The jobs listed with the native S3 client, its credentials resolved by S3A from the Secret's
        # variables: no hand-over to S3A in the drivers' logs.
        assert not [line for log in logs for line in log.splitlines() if "S3A lists" in line]

        # Read back: Apache Hudi through S3A, hudi-rs straight from S3, and our verify.
        acknowledged = writer.acknowledged(first_rows)
        hudi_rows = [tuple(row) for row in spark.read.format("hudi").load(uri).select(*COLUMNS).collect()]
        assert len(hudi_rows) == len({row[0] for row in hudi_rows})  # each key once
        assert {row[0]: row for row in hudi_rows} == acknowledged  # every acknowledged upsert
        rs_rows = records(uri, columns=COLUMNS, storage_options=store.storage_options())
        assert sorted(tuple(r.values()) for r in rs_rows) == sorted(acknowledged.values())
        assert cli.main(["verify", "--table", uri]) == 0
        # The credentials stayed in the Secret, which the jobs only name.
        jobs = cluster.jobs(namespace, "orders")
        manifests = json.dumps([cluster.table(namespace, "orders"), *jobs])
        assert store.credentials_env()["AWS_SECRET_ACCESS_KEY"] not in manifests
        assert all(
            container(job, pod)["envFrom"] == [{"secretRef": {"name": "lake-s3"}}]
            for job in jobs
            for pod in ("driver", "executor")
        )
        log = operator_log(node, namespace, operator)
        assert "Traceback" not in log, log[log.index("Traceback") - 500 :][:4000]
        print(
            f"\nnode started in {node.start_seconds:.1f} s; Spark Operator Ready in {spark_operator_ready:.1f} s;"
            f" operator Ready {ready:.1f} s after helm install;"
            f" plan in pods {planned:.1f} s, plan + approval + apply {seconds:.1f} s;"
            f" jobs {[seconds_of(app) for app in apps]} s; writer paused"
            f" {status['writers']['last']['downtimeSeconds']} s (status), {gap:.1f} s between its pods' batches;"
            f" {len(batches)} batches"
        )
    finally:
        spark_pods.stop()
        spark_operator.stop()
        cluster.helm("uninstall", RELEASE, "--namespace", namespace, "--wait", "--timeout", "60s")
        store.stop()


class SparkPods:
    """The Spark pods of ``namespace`` as they come and go, by name: (role, image). The driver deletes its
    executors when it ends, so they are looked at while they run."""

    def __init__(self, core: client.CoreV1Api, namespace: str) -> None:
        self.core, self.namespace = core, namespace
        self.seen: dict[str, tuple[str, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="spark-pods", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=10)

    def _watch(self) -> None:
        while not self._stop.wait(0.3):
            for pod in self.core.list_namespaced_pod(self.namespace, label_selector="spark-role").items:
                self.seen[pod.metadata.name] = (
                    pod.metadata.labels["spark-role"],
                    pod.spec.containers[0].image,
                )


def seconds_of(app: dict[str, Any]) -> float:
    """From the controller's submission to the application's end, as its status says (whole seconds)."""
    status = app["status"]
    began, ended = (
        datetime.fromisoformat(status[k].replace("Z", "+00:00"))
        for k in ("lastSubmissionAttemptTime", "terminationTime")
    )
    return (ended - began).total_seconds()


def the_operator_is_ready_in_its_pod(
    control_plane: ControlPlane, cluster: Cluster, node: Node, namespace: str
) -> client.V1Pod:
    """The chart's operator pod, once Ready: on the node, never restarted (its liveness probe held), its
    requests reaching the API server from its own address with its ServiceAccount's token, its metrics
    served through its Service."""
    selector = f"app.kubernetes.io/instance={RELEASE}"

    def ready_pod() -> client.V1Pod | None:
        pods = cluster.core.list_namespaced_pod(namespace, label_selector=selector).items
        return next((pod for pod in pods if ready(pod)), None)

    pod = until(ready_pod, 120, lambda: f"a Ready pod: {cluster.core.list_namespaced_pod(namespace).items}")
    assert pod.spec.node_name == node.name
    assert pod.status.container_statuses[0].restart_count == 0
    assert ipaddress.ip_address(pod.status.pod_ip) in ipaddress.ip_network(POD_SUBNET)
    # Told the API server is the `kubernetes` Service (by the kubelet, as in any cluster) ...
    environment = node.container_environment(pod.status.container_statuses[0].container_id)
    assert environment["KUBERNETES_SERVICE_HOST"] == KUBERNETES_SERVICE_IP
    assert environment["KUBERNETES_SERVICE_PORT"] == "443"  # not the API server's own port
    # ... which answered its ServiceAccount's requests, coming from the pod's address.
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
        lambda: f"its requests in the audit log; its log:\n{operator_log(node, namespace, pod)}",
    )
    # /metrics through its Service: the API server's service proxy, to the Ready pod behind it.
    service = f"{RELEASE}-hudi-bucket-operator-metrics:metrics"
    metrics = cluster.core.connect_get_namespaced_service_proxy_with_path(service, namespace, "metrics")
    assert "# TYPE hbo_reconciles_total counter" in metrics, metrics[:2000]
    return pod


def ready(pod: client.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def operator_log(node: Node, namespace: str, pod: client.V1Pod) -> str:
    return node.container_log(namespace, pod.metadata.name, "operator")


def s3_table(spark: Any, store: S3Server, tmp_path: Path) -> str:
    """A bucketed Hudi table (2 buckets, two day partitions) uploaded to ``store``; the session's S3A
    pointed at that bucket."""
    local = tmp_path / "orders"
    write_orders_table(spark, local, ROWS)
    pafs.copy_files(str(local), f"{store.bucket}/orders", destination_filesystem=store.filesystem())
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in store.bucket_hadoop_conf().items():
        hadoop.set(key, value)
    return store.uri("orders")


def table_spec(uri: str, store: S3Server) -> dict[str, Any]:
    return {
        "table": {"uri": uri},
        "buckets": {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
        "apply": {"policy": "Manual", "window": open_window()},
        "writers": {"quiesceTimeout": "5m", "workloads": [{"kind": "Deployment", "name": WRITER}]},
        "spark": {"envFromSecrets": [{"name": "lake-s3"}], "hadoopConf": store.settings()},
    }


def install_chart(cluster: Cluster, node: Node, released: PushedRelease, namespace: str) -> str:
    """The release's chart from its OCI reference, its images pulled by digest from the registry (as a
    cluster installs a release it mirrored); returns the job image's name."""
    node.trust_registry(released.images["job"].split("/", 1)[0])
    values = {
        "image": {"repository": released.repository("operator")},  # the digest is the chart's own
        "watch": {"namespaces": [namespace]},
        "tolerations": [node.toleration],
        "writers": {"enabled": True},
        "jobs": {
            "image": {"repository": released.repository("job")},
            # Only the pods that tolerate the node's taint run there: the jobs' pods by these values.
            "driver": {"pod": {"tolerations": [node.toleration]}},
            "executor": {"pod": {"tolerations": [node.toleration]}},
            "allowedHadoopConf": ["fs.s3a.endpoint", "fs.s3a.connection.ssl.enabled"],
            "allowedSecrets": {namespace: ["lake-s3"]},
            "allowedTableUris": {namespace: ["s3a://"]},  # the S3 server's buckets
            # The node has 2 CPUs: the driver and its executor ask for less than a core each.
            "sparkConf": {
                "spark.kubernetes.driver.request.cores": "400m",
                "spark.kubernetes.executor.request.cores": "400m",
            },
        },
    }
    cluster.install_chart(RELEASE, namespace, values, chart=[released.chart, *released.helm_args()])
    return released.images["job"]

"""A rescale while ingestion runs, on the real control plane: the table's writer is a Deployment, paused
for the apply and resumed as it was.

Until real pods run, a stand-in kubelet runs the writer: while the Deployment has a pod that is not
terminating, it upserts into the table with Apache Hudi's own Spark writer (the test session's), one
batch a commit, acknowledging each committed batch in a file. It holds each pod with a finalizer until
its batch is done, as a container stopping on SIGTERM would: so "no pod left" means the writer stopped.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from control_plane import ControlPlane
from harness import Cluster, OperatorProcess, operator_in_pod, until
from hudi_bucket import cli
from hudi_spark import bucket_options, hudi_read, hudi_write
from spark_operator import SparkOperatorStandIn

pytestmark = pytest.mark.spark

NS, RELEASE, RELEASE_NS = "ingest", "hudi-bucket-operator-writers", "hbo-writers"  # fullname: the release
FINALIZER = "e2e.hudi.bucketops.io/writer-running"
OPTIONS = bucket_options(
    record_key="id", partition_field="day", ordering_field="ts", table_version=8, buckets=2
)
SCHEMA = "id string, day string, ts long, amount long"
DAYS = ("2025-11-10", "2025-11-11")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def values() -> dict[str, Any]:
    return {
        "watch": {"namespaces": [NS]},
        "resyncSeconds": 2,
        "metrics": {"port": free_port()},
        "health": {"port": free_port()},
        "jobs": {"image": {"tag": "e2e"}},
        "rbac": {"create": True, "writers": {"enabled": True}},
    }


@dataclass
class StandInWriter:
    """The Deployment's writer, run while it has a live pod (see the module's docstring)."""

    cluster: Cluster
    spark: Any
    uri: Path
    acks: Path
    batch: int = 0
    running: bool = False
    stopped_at: list[float] = field(default_factory=list)
    started_at: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="writer", daemon=True)

    def start(self) -> StandInWriter:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=120)

    def _loop(self) -> None:
        while not self._stop.is_set():
            pods = self.cluster.core.list_namespaced_pod(NS, label_selector="app=writer").items
            live = [p for p in pods if p.metadata.deletion_timestamp is None]
            for pod in live:
                if FINALIZER not in (pod.metadata.finalizers or []):
                    body = {"metadata": {"finalizers": [*(pod.metadata.finalizers or []), FINALIZER]}}
                    self.cluster.core.patch_namespaced_pod(pod.metadata.name, NS, body)
            if live:
                if not self.running:
                    self.running = True
                    self.started_at.append(time.monotonic())
                try:
                    self._write_batch()
                except Exception as err:  # a refused commit is not acknowledged: say so at the end
                    self.errors.append(f"batch {self.batch}: {err}"[:500])
                continue
            if self.running:
                self.running = False
                self.stopped_at.append(time.monotonic())
            for pod in pods:  # the batch is done: the pod may go
                if FINALIZER in (pod.metadata.finalizers or []):
                    kept = [f for f in pod.metadata.finalizers if f != FINALIZER]
                    self.cluster.core.patch_namespaced_pod(
                        pod.metadata.name, NS, {"metadata": {"finalizers": kept}}
                    )
            self._stop.wait(0.3)

    def _write_batch(self) -> None:
        self.batch += 1
        ids = sorted({(self.batch * 7 + k) % 60 for k in range(10)})  # updates and, early on, new keys
        rows = [(f"O-{i}", DAYS[i % 2], self.batch, self.batch * 100 + i) for i in ids]
        hudi_write(self.spark, self.uri, self.spark.createDataFrame(rows, SCHEMA), OPTIONS)
        with self.acks.open("a") as acks:
            acks.write(json.dumps({"batch": self.batch, "rows": rows}) + "\n")

    def acknowledged(self) -> dict[str, tuple[Any, ...]]:
        """Each key's last acknowledged upsert."""
        latest: dict[str, tuple[Any, ...]] = {}
        for line in self.acks.read_text().splitlines():
            for row in json.loads(line)["rows"]:
                latest[row[0]] = tuple(row)
        return latest


@dataclass
class World:
    cluster: Cluster
    spark_operator: SparkOperatorStandIn
    operator: OperatorProcess
    work: Path


@pytest.fixture(scope="module")
def world(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    work = tmp_path_factory.mktemp("e2e-writers")
    cluster = Cluster(control_plane)
    cluster.install_crds()
    cluster.kubectl("create", "namespace", NS)
    cluster.install_chart(RELEASE, RELEASE_NS, values())
    control_plane.wait_until_allowed(
        f"system:serviceaccount:{NS}:hudi-bucket-jobs", "create", "configmaps", NS
    )
    operator_user = f"system:serviceaccount:{RELEASE_NS}:{RELEASE}"
    control_plane.wait_until_allowed(operator_user, "list", "pods", NS)  # the writers' rules
    spark_operator = SparkOperatorStandIn(control_plane, work).start()
    try:
        world = World(cluster, spark_operator, operator_in_pod(cluster, RELEASE_NS, RELEASE, work), work)
        yield world
        world.operator.stop()
    finally:
        spark_operator.stop()


def writer_deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "writer"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "writer", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "writer", "image": "example.invalid/hudi-writer:1"}]},
            },
        },
    }


def test_a_rescale_under_a_steady_write_load_pauses_the_writer_and_resumes_it(
    world: World, spark: Any
) -> None:
    cluster, uri = world.cluster, world.work / "orders"
    first = [(f"O-{i}", DAYS[i % 2], 0, i) for i in range(40)]
    hudi_write(spark, uri, spark.createDataFrame(first, SCHEMA), OPTIONS)
    acks = world.work / "acks.jsonl"
    acks.write_text(json.dumps({"batch": 0, "rows": first}) + "\n")
    cluster.apps.create_namespaced_deployment(NS, writer_deployment(2))
    writer = StandInWriter(cluster, spark, uri, acks).start()
    try:
        until(lambda: writer.batch >= 2, 180, "the writer's first batches")
        spec = {
            "table": {"uri": str(uri)},
            "buckets": {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
            "apply": {"policy": "Automatic"},
            "writers": {"quiesceTimeout": "5m", "workloads": [{"kind": "Deployment", "name": "writer"}]},
        }
        cluster.create_table(NS, "orders", spec)
        status = cluster.phase_is(NS, "orders", "Ready", timeout=420)
        assert status["config"]["expressions"] == "11-11,6"
        last = status["writers"]["last"]
        assert last["writers"] == ["Deployment/writer"]
        history = status["history"][0]
        assert history["writersDowntimeSeconds"] == last["downtimeSeconds"]
        # Resumed as it was: 2 replicas, and writing again.
        assert cluster.apps.read_namespaced_deployment_scale("writer", NS).spec.replicas == 2
        resumed_at = writer.batch
        until(lambda: writer.batch >= resumed_at + 2, 180, "the writer writing again after the resume")
        until(
            lambda: any(e.startswith("WritersResumed") for e in cluster.events(NS, "orders")),
            30,
            "WritersResumed",
        )
    finally:
        cluster.apps.patch_namespaced_deployment_scale("writer", NS, {"spec": {"replicas": 0}})
        until(lambda: not writer.running, 120, "the writer to stop for the checks")
        writer.stop()

    events = cluster.events(NS, "orders")
    assert any(e.startswith("WritersPaused: writers paused (Deployment/writer)") for e in events), events
    assert len(writer.stopped_at) >= 2  # stopped by the operator's pause, then by the test
    assert writer.errors == []
    # No key twice (Hudi's read), every acknowledged upsert there, every record in its bucket.
    rows = hudi_read(spark, uri).select("id", "day", "ts", "amount").collect()
    keys = [r["id"] for r in rows]
    assert len(keys) == len(set(keys))
    assert {r["id"]: tuple(r) for r in rows} == writer.acknowledged()
    assert cli.main(["verify", "--table", str(uri)]) == 0
    print(
        f"writer paused {last['downtimeSeconds']} s (status), apply {history['seconds']} s (job's own time); "
        f"batches {writer.batch}"
    )

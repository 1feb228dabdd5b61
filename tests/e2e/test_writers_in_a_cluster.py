"""A rescale while ingestion runs, on the real control plane: each table's writer is a Deployment, paused
for the apply and resumed as it was.

Until real pods run, a stand-in kubelet runs each writer: while its Deployment has a live pod (not
terminating, held by the stand-in's finalizer), it upserts into the table with Apache Hudi's own Spark
writer (the test session's), one batch a commit, acknowledging each committed batch in a file. It lets a
pod go (removes its finalizer) only between batches, as a container stopping on SIGTERM would: so "no pod
left" means the writer stopped. Each batch updates keys and adds new ones, and Hudi's writer loads the
table's bucket counts afresh for each batch, as a writer restarted by the resume does.

The scenarios, one table and one writer each (a rescale under a steady write load, inside an open window,
is tests/e2e/test_jobs_in_pods.py's, with Apache Hudi's writer in a real pod):
- the apply failing mid-way: a writer nobody named in spec.writers commits while the apply runs, Hudi's
  eager cleaning rolls the apply back, and the writers are resumed; retried, the rescale goes through;
- a plan approved outside its window waits for it, the writer paused when it opens, and the operator
  SIGKILLed while the writer is paused (restarted, it finishes the apply and resumes the writer).
After each: no key twice (Hudi's read), every acknowledged upsert there, verify passes, and the writer
running again with its prior replicas. The writers' downtime and the apply's own time are printed.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from control_plane import ControlPlane
from harness import (
    Cluster,
    OperatorProcess,
    daily_window_opening,
    free_port,
    open_window,
    operator_in_pod,
    until,
)
from hudi_bucket import cli
from hudi_bucket_operator.resource.api import WRITERS_FINALIZER
from lib import prometheus
from lib.hudi_spark import bucket_options, hudi_read, hudi_write
from lib.prometheus import Prometheus
from spark_operator import SparkOperatorStandIn

pytestmark = pytest.mark.spark

NS, RELEASE, RELEASE_NS = "ingest", "hudi-bucket-operator-writers", "hbo-writers"  # fullname: the release
FINALIZER = "e2e.hudi.bucketops.io/writer-running"
OPTIONS = bucket_options(
    record_key="id", partition_field="day", ordering_field="ts", table_version=8, buckets=2
)
SCHEMA = "id string, day string, ts long, amount long"
DAYS = ("2025-11-10", "2025-11-11")
HOT = [{"pattern": "11-11", "buckets": 6}, {"pattern": "11-10", "buckets": 4}]  # both days rewritten
REPLICAS = 2
SLOW = 420  # seconds: a plan or an apply job, each its own JVM, on a loaded 2-core machine


METRICS_PORT = free_port()  # the operator's /metrics, which Prometheus scrapes through every scenario


def values() -> dict[str, Any]:
    return {
        "watch": {"namespaces": [NS]},
        "resyncSeconds": 2,
        "metrics": {"port": METRICS_PORT},
        "health": {"port": free_port()},
        "jobs": {"image": {"tag": "e2e"}, "allowedTableUris": {NS: ["/"]}},  # local folders' tables
        "writers": {"enabled": True},
    }


@dataclass
class StandInWriter:
    """A Deployment's writer, run while it has a live pod (see the module's docstring)."""

    cluster: Cluster
    spark: Any
    name: str
    uri: Path
    acks: Path
    batch: int = 0
    running: bool = False
    acked_at: list[float] = field(default_factory=list)  # monotonic: when each batch was acknowledged
    stopped_at: list[float] = field(default_factory=list)
    started_at: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # refused batches: the test fails on any
    api_errors: list[str] = field(default_factory=list)  # the API's answers, retried the next pass

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"writer-{self.name}", daemon=True)

    def start(self) -> StandInWriter:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=120)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                wrote = self._step()
            except client.ApiException as err:  # a conflict, a pod gone meanwhile: look again
                self.api_errors.append(f"{err.status} {err.reason}")
                wrote = False
            except Exception as err:  # the thread must not die unseen: the test reads errors
                self.errors.append(f"stand-in kubelet: {err!r}"[:500])
                wrote = False
            if not wrote:
                self._stop.wait(0.3)

    def _step(self) -> bool:
        """One pass: a batch while the Deployment has a live pod that the finalizer holds (True), else its
        pods let go (False)."""
        pods = self.cluster.core.list_namespaced_pod(NS, label_selector=f"app={self.name}").items
        held = []
        for pod in pods:
            if pod.metadata.deletion_timestamp is not None:
                continue
            if FINALIZER not in (pod.metadata.finalizers or []):
                # Refused once the pod is terminating: then it is not held, and no batch starts for it.
                self._patch(pod, [{"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER}]
                            if pod.metadata.finalizers else
                            [{"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]}])  # fmt: skip
            held.append(pod)
        if held:
            if not self.running:
                self.running = True
                self.started_at.append(time.monotonic())
            self._write_batch()
            return True
        if self.running:
            self.running = False
            self.stopped_at.append(time.monotonic())
        for pod in pods:  # no batch runs: the terminating pods may go
            finalizers = pod.metadata.finalizers or []
            if FINALIZER in finalizers:
                # A JSON patch that names the entry it removes (a strategic merge patch of the list
                # would merge it, removing nothing); refused if the list changed since it was read.
                index = finalizers.index(FINALIZER)
                self._patch(pod, [
                    {"op": "test", "path": f"/metadata/finalizers/{index}", "value": FINALIZER},
                    {"op": "remove", "path": f"/metadata/finalizers/{index}"},
                ])  # fmt: skip
        return False

    def _patch(self, pod: Any, operations: list[dict[str, Any]]) -> None:
        # A list body is sent as application/json-patch+json.
        self.cluster.core.patch_namespaced_pod(pod.metadata.name, NS, operations)

    def _write_batch(self) -> None:
        batch = self.batch + 1
        updated = sorted({(batch * 7 + k) % 40 for k in range(8)})
        rows = [(f"O-{i}", DAYS[i % 2], batch, batch * 100 + i) for i in updated]
        rows += [(f"N-{batch}-{k}", DAYS[k % 2], batch, batch * 100 + k) for k in range(2)]  # new keys
        try:
            hudi_write(self.spark, self.uri, self.spark.createDataFrame(rows, SCHEMA), OPTIONS)
        except Exception as err:  # a refused commit is not acknowledged: said at the end
            self.errors.append(f"batch {batch}: {err}"[:500])
            return
        self.batch = batch
        acknowledge(self.acks, rows)
        self.acked_at.append(time.monotonic())

    def paused_gap(self) -> float:
        """The writer's own view of its last pause: from the last batch acknowledged before it to the
        first acknowledged after it."""
        stopped = self.stopped_at[-1]
        before = max(t for t in self.acked_at if t <= stopped)
        return min(t for t in self.acked_at if t > stopped) - before


def acknowledge(acks: Path, rows: list[tuple[Any, ...]]) -> None:
    with acks.open("a") as out:
        out.write(json.dumps(rows) + "\n")


def acknowledged(acks: Path) -> dict[str, tuple[Any, ...]]:
    """Each key's last acknowledged upsert."""
    return {row[0]: tuple(row) for line in acks.read_text().splitlines() for row in json.loads(line)}


@dataclass
class World:
    cluster: Cluster
    spark_operator: SparkOperatorStandIn
    operator: OperatorProcess
    work: Path
    prometheus: Prometheus | None = None  # None: no Prometheus to be had on this machine


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
    control_plane.wait_until_allowed(operator_user, "patch", "deployments", NS, subresource="scale")
    spark_operator = SparkOperatorStandIn(control_plane, work).start()
    try:
        metrics = f"127.0.0.1:{METRICS_PORT}"
        with prometheus.scraping_if_found(metrics, work / "prometheus", free_port()) as scraper:
            operator = operator_in_pod(cluster, RELEASE_NS, RELEASE, work)
            world = World(cluster, spark_operator, operator, work, scraper)
            yield world
            world.operator.stop()
    finally:
        spark_operator.stop()


def writer_deployment(name: str, replicas: int, table: str) -> dict[str, Any]:
    """A Deployment whose owner lets ``table`` pause it (the consent label)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS, "labels": {"hudi.bucketops.io/writer-of": table}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "writer", "image": "example.invalid/hudi-writer:1"}]},
            },
        },
    }


def table_spec(uri: Path, writer: str, policy: str, window: dict[str, str]) -> dict[str, Any]:
    return {
        "table": {"uri": str(uri)},
        "buckets": {"default": 2, "currentBuckets": 2, "rules": HOT},
        "apply": {"policy": policy, "window": window},
        "writers": {"quiesceTimeout": "5m", "workloads": [{"kind": "Deployment", "name": writer}]},
    }


@dataclass
class Ingestion:
    """A table written first by a batch of 40 keys, then by its Deployment's stand-in writer."""

    world: World
    spark: Any
    name: str

    def __post_init__(self) -> None:
        self.uri = self.world.work / self.name
        self.acks = self.world.work / f"{self.name}-acks.jsonl"
        self.deployment = f"writer-{self.name}"
        first = [(f"O-{i}", DAYS[i % 2], 0, i) for i in range(40)]
        hudi_write(self.spark, self.uri, self.spark.createDataFrame(first, SCHEMA), OPTIONS)
        self.acks.write_text("")
        acknowledge(self.acks, first)
        cluster = self.world.cluster
        cluster.apps.create_namespaced_deployment(NS, writer_deployment(self.deployment, REPLICAS, self.name))
        self.writer = StandInWriter(cluster, self.spark, self.deployment, self.uri, self.acks).start()
        until(lambda: self.writer.batch >= 2, 300, lambda: f"{self.name}'s first batches ({self.writer})")

    def replicas(self) -> int:
        scale = self.world.cluster.apps.read_namespaced_deployment_scale(self.deployment, NS)
        return int(scale.spec.replicas or 0)  # 0 is left out of the answer

    def writes_again(self, batches: int = 2) -> None:
        """The writer resumed with its prior replicas, writing again."""
        assert self.replicas() == REPLICAS
        since = self.writer.batch
        until(lambda: self.writer.batch >= since + batches, 300, f"{self.name}'s writer writing again")

    def stop_and_check(self) -> None:
        """The writer stopped (the test's own scale to 0), then the table checked as the module says."""
        cluster = self.world.cluster
        cluster.apps.patch_namespaced_deployment_scale(self.deployment, NS, {"spec": {"replicas": 0}})
        until(lambda: not self.writer.running, 300, f"{self.name}'s writer to stop for the checks")
        self.writer.stop()
        assert self.writer.errors == []
        rows = hudi_read(self.spark, self.uri).select("id", "day", "ts", "amount").collect()
        keys = [r["id"] for r in rows]
        assert len(keys) == len(set(keys))
        assert {r["id"]: tuple(r) for r in rows} == acknowledged(self.acks)
        assert cli.main(["verify", "--table", str(self.uri)]) == 0

    def stop_quietly(self) -> None:
        """After a failure: the writer's thread ended, whatever the API says."""
        try:
            self.world.cluster.apps.patch_namespaced_deployment_scale(
                self.deployment, NS, {"spec": {"replicas": 0}}
            )
            until(lambda: not self.writer.running, 120, "the writer to stop")
        finally:
            self.writer.stop()


def table_exists(cluster: Cluster, table: str) -> bool:
    found = cluster.kubectl("get", "hudibuckettable", table, "-n", NS, "--ignore-not-found", "-o", "name")
    return bool(found.stdout.strip())


def writers_step(cluster: Cluster, table: str) -> str:
    """The step around an apply the table is at ("" when none is)."""
    return str((cluster.status(NS, table).get("writers") or {}).get("step", ""))


def job_seconds(world: World, table: str) -> list[str]:
    """Each of the table's jobs, with its run's wall time (a JVM started, the table read, the work)."""
    return [f"{r.name}: {r.seconds:.1f} s" for r in world.spark_operator.runs_in(NS)
            if r.name.startswith(f"{table}-") and r.seconds is not None]  # fmt: skip


def report(world: World, table: str, ingestion: Ingestion, status: dict[str, Any]) -> None:
    """The figures the scenario measured, in the test's output (pytest -s) and the work folder."""
    last = status["writers"]["last"]
    history = status["history"][0] if status.get("history") else {}
    line = (
        f"{table}: writer paused {last['downtimeSeconds']} s (status.writers.last), "
        f"{ingestion.writer.paused_gap():.1f} s between its batches; "
        f"apply {history.get('seconds', float('nan')):.1f} s (the job's own time); "
        f"jobs {', '.join(job_seconds(world, table))}; batches {ingestion.writer.batch}"
    )
    print("\n" + line)
    with (world.work / "downtime.txt").open("a") as out:
        out.write(line + "\n")


def test_an_apply_that_fails_mid_way_is_rolled_back_and_the_writers_resumed(world: World, spark: Any) -> None:
    cluster = world.cluster
    ingestion = Ingestion(world, spark, "broken")
    try:
        cluster.create_table(
            NS, "broken", table_spec(ingestion.uri, ingestion.deployment, "Automatic", open_window())
        )
        timeline = ingestion.uri / ".hoodie" / "timeline"
        # The apply is rewriting (its replacecommit inflight): it is stopped there, and a writer nobody
        # named in spec.writers commits meanwhile; Hudi's eager cleaning rolls the apply's instant back.
        inflight = until(
            lambda: list(timeline.glob("*.replacecommit.inflight")), 2 * SLOW, "the apply's instant"
        )
        run = until(lambda: next((r for r in world.spark_operator.runs_in(NS)
                                  if r.name.startswith("broken-") and r.pid and r.exit_code is None
                                  and r.arguments[:1] == ["apply"]), None), 30, "the apply's process")  # fmt: skip
        os.killpg(run.pid, signal.SIGSTOP)
        try:
            assert not ingestion.writer.running  # paused for the apply
            unlisted = [(f"U-{k}", DAYS[k % 2], 1000, k) for k in range(6)]
            hudi_write(spark, ingestion.uri, spark.createDataFrame(unlisted, SCHEMA), OPTIONS)
            acknowledge(ingestion.acks, unlisted)
        finally:
            os.killpg(run.pid, signal.SIGCONT)
        assert not inflight[0].exists()  # rolled back by Hudi's writer
        status = cluster.phase_is(NS, "broken", "Stalled", timeout=SLOW)
        stalled = next(c for c in status["conditions"] if c["type"] == "Stalled")
        assert stalled["reason"] == "JobFailed"
        assert "rolled back by another writer" in stalled["message"]
        assert (status.get("config") or {}).get("expressions") != "11-11,6;11-10,4"  # the old one in force
        ours = inflight[0].name.split(".")[0]
        assert not [f for f in ingestion.uri.rglob("*") if ours in f.name]  # no file of the apply left
        # The writer resumed with its prior replicas, and writing again.
        assert list(status["writers"]) == ["last"]  # the steps are over: only their record is left
        ingestion.writes_again()
        assert any(e.startswith("WritersResumed") for e in cluster.events(NS, "broken"))
        failed = status["writers"]["last"]["downtimeSeconds"]
        # Retried, the rescale goes through under the same load (and verify, below, has counts to check:
        # the apply that failed left the table with no hashing_config to verify against).
        cluster.patch_table(NS, "broken", {"metadata": {"annotations": {"hudi.bucketops.io/retry": "1"}}})
        status = cluster.phase_is(NS, "broken", "Ready", timeout=2 * SLOW)
        assert status["config"]["expressions"] == "11-11,6;11-10,4"
        assert list(status["writers"]) == ["last"]
        ingestion.writes_again()
        print(f"\nbroken: writer paused {failed} s (status.writers.last) for the apply that failed")
        report(world, "broken", ingestion, status)
    except BaseException:
        ingestion.stop_quietly()
        raise
    ingestion.stop_and_check()


def test_a_plan_approved_outside_its_window_waits_for_it_and_survives_an_operator_killed_while_paused(
    world: World, spark: Any
) -> None:
    cluster = world.cluster
    ingestion = Ingestion(world, spark, "night")
    try:
        closed, _ = daily_window_opening(datetime.now(UTC) + timedelta(hours=12))
        spec = table_spec(
            ingestion.uri, ingestion.deployment, "Manual", {"schedule": closed, "duration": "1h"}
        )
        cluster.create_table(NS, "night", spec)
        # Planned while the writer commits (its pending commits are noted, not refused).
        planned = cluster.phase_is(NS, "night", "AwaitingApproval", timeout=SLOW)["plan"]
        assert sorted((i["partition"], i["oldBuckets"], i["newBuckets"]) for i in planned["items"]) == [
            ("day=2025-11-10", 2, 4),
            ("day=2025-11-11", 2, 6),
        ]
        # Approved, with a window that opens at a whole minute at least half a minute away: an approval
        # alone plans nothing again (the writer's commits since leave the plan's id as it was), so the
        # plan is awaiting the window within seconds, and the test waits about a minute, not two.
        schedule, opens = daily_window_opening(datetime.now(UTC) + timedelta(seconds=30 + 59))
        approval = {"approvedPlan": planned["id"], "window": {"schedule": schedule, "duration": "30m"}}
        cluster.patch_table(NS, "night", {"spec": {"apply": approval}})
        waiting = cluster.phase_is(NS, "night", "AwaitingWindow", timeout=SLOW)
        assert waiting["plan"]["id"] == planned["id"]
        assert waiting["writers"]["nextWindow"] == opens
        assert ingestion.writer.stopped_at == []  # not paused before the window
        # In the window: paused, then the operator is killed while the writer is paused.
        until(lambda: writers_step(cluster, "night") == "Applying", SLOW,
              lambda: f"Applying: {cluster.status(NS, 'night')}")  # fmt: skip
        assert datetime.now(UTC) >= datetime.fromisoformat(opens)
        assert not ingestion.writer.running
        world.operator.kill()
        world.operator = operator_in_pod(cluster, RELEASE_NS, RELEASE, world.work)
        status = cluster.phase_is(NS, "night", "Ready", timeout=SLOW)
        assert status["config"]["expressions"] == "11-11,6;11-10,4"
        assert list(status["writers"]) == ["last"]
        history = status["history"][0]
        assert history["planId"] == planned["id"]
        assert history["writersDowntimeSeconds"] == status["writers"]["last"]["downtimeSeconds"]
        ingestion.writes_again()
        report(world, "night", ingestion, status)
        assert any(e.startswith("WritersResumed") for e in cluster.events(NS, "night"))
    except BaseException:
        ingestion.stop_quietly()
        raise
    ingestion.stop_and_check()


def test_a_table_deleted_while_its_writer_is_paused_resumes_it_before_it_goes(
    world: World, spark: Any
) -> None:
    """A table carries a finalizer only while the operator may hold its writers paused: deleted then, it
    starts nothing new, lets the apply in flight finish, resumes the writer as it was, and only then goes."""
    cluster = world.cluster
    ingestion = Ingestion(world, spark, "deleted")
    try:
        spec = table_spec(ingestion.uri, ingestion.deployment, "Manual", open_window())
        cluster.create_table(NS, "deleted", spec)
        assert cluster.table(NS, "deleted")["metadata"].get("finalizers") is None
        planned = cluster.phase_is(NS, "deleted", "AwaitingApproval", timeout=SLOW)["plan"]
        world.spark_operator.hold()  # the apply job is submitted, and runs once released
        cluster.patch_table(NS, "deleted", {"spec": {"apply": {"approvedPlan": planned["id"]}}})
        until(
            lambda: writers_step(cluster, "deleted") == "Applying",
            SLOW,
            "the writer paused, the apply in flight",
        )
        assert cluster.table(NS, "deleted")["metadata"]["finalizers"] == [WRITERS_FINALIZER]
        assert ingestion.replicas() == 0

        cluster.kubectl("delete", "hudibuckettable", "deleted", "-n", NS, "--wait=false")
        time.sleep(3)  # the table waits, its writer still paused: the apply is still in flight
        assert cluster.table(NS, "deleted")["metadata"]["deletionTimestamp"]
        assert ingestion.replicas() == 0
        world.spark_operator.release()
        until(lambda: not table_exists(cluster, "deleted"), SLOW, "the table to go")
        ingestion.writes_again()
    except BaseException:
        ingestion.stop_quietly()
        raise
    finally:
        world.spark_operator.release()
    ingestion.stop_and_check()


def test_prometheus_saw_the_writers_paused_and_resumed_in_time(world: World) -> None:
    """A real Prometheus scraped the operator through the scenarios above, with the chart's rules (each
    ``for`` at 0s): the writers' gauges showed each pause, the dashboard's writers panel had data, and the
    operator resumed every writer before its deadline, so that alert never fired."""
    scraper = prometheus.required(world.prometheus)
    paused = scraper.seen(f'hbo_table_writers_paused{{namespace="{NS}"}} == 1')
    assert {series["metric"]["name"] for series in paused}, "no pause seen"
    assert scraper.seen(f'hbo_table_writers_resume_deadline_timestamp_seconds{{namespace="{NS}"}}')
    assert scraper.seen(f'hbo_table_writers_last_downtime_seconds{{namespace="{NS}"}} > 0')
    panels = dict(prometheus.dashboard_queries())
    assert scraper.seen(panels["Writers paused for"])
    assert scraper.seen(panels["Writers paused"])
    assert not scraper.fired("HudiBucketTableWritersPausedPastDeadline")

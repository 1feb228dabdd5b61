"""An upgrade from the last release with tables mid-flight, and its rollback, in pods on the real node.

The last release (CHANGELOG.md's newest released version) is made from its commit as this one is: its
chart, its CRD, its two images built by its own images/build.sh, pushed to the registry on loopback. A
platform team installs it from there, with the values its docs asked for; tables are in every phase:
one awaiting approval, one applying (its apply job running in pods of the last release's job image, its
writer paused), one Ready, one Stalled. Then the upgrade, as docs/install.md and the changelog say: the
new CRD applied server-side, `helm upgrade` to this commit's release from the same registry, with the
value its **Upgrading** section asks for. The new operator finishes the apply the old one started (the
old job's report read, its writer resumed, no second apply), keeps the plan the old planner made and
applies it once approved. Then `helm rollback`: the last release's operator runs again over the statuses
the new one wrote, and nothing moves. Each table's phase is sampled all along, and printed by stage."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import real_spark_operator
from kubernetes import client
from object_store.server import S3Server, ensure_binary
from pyarrow import fs as pafs

from control_plane import ControlPlane
from harness import API_GROUP, API_VERSION, PLURAL, Cluster, open_window, until, write_orders_table
from lib.paths import SHARED_FOUND, SHARED_MISSING
from node import Node
from node.node import NODE_IP
from node.pod_security import restricted_container, restricted_namespace
from registry.release import PushedRelease

pytestmark = pytest.mark.spark  # the tables are written with the session's Spark

RELEASE = "hbo-upgrade"
WRITER = "moving-writer"
WRITER_OF = "hudi.bucketops.io/writer-of"
# What each table is for, and the phase it is in when the upgrade begins.
TABLES = {
    "waiting": "AwaitingApproval",  # planned by the last release, approved after the upgrade
    "moving": "Applying",  # approved before: its apply job runs through the upgrade, its writer paused
    "steady": "Ready",  # nothing to do
    "refused": "Stalled",  # a Secret the admins do not list
}

STEADY_RULES = "11-11,3"  # the steady table's, as written and as its spec says


def test_an_upgrade_from_the_last_release_finishes_what_it_started_and_a_rollback_moves_nothing(
    control_plane: ControlPlane,
    node: Node,
    our_images: dict[str, str],
    last_released: PushedRelease,
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
    assert last_released.version != released.version
    restricted_namespace(control_plane, namespace)
    store = S3Server(ensure_binary(), host=NODE_IP, bucket="upgrade-lake")
    store.start()
    spark_operator = real_spark_operator.SparkOperatorInPods(
        control_plane, node, our_images["job"], [namespace], tmp_path / "spark-operator"
    )
    cluster = Cluster(control_plane)
    phases = Phases(cluster, namespace)
    try:
        uris = s3_tables(spark, store, tmp_path)
        secret = client.V1Secret(
            metadata=client.V1ObjectMeta(name="lake-s3"), string_data=store.credentials_env()
        )
        cluster.core.create_namespaced_secret(namespace, secret)
        spark_operator.start()
        node.trust_registry(last_released.images["job"].split("/", 1)[0])

        # --- the last release, as its docs installed it ----------------------------------------------
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(last_released.crds))
        helm_release(cluster, "install", last_released, namespace, values(namespace, node, last_released))
        create_writer(cluster, namespace, node, last_released.images["operator"])
        phases.mark(f"{last_released.version} installed (and the S3 server, the Spark Operator)")
        for name, spec in table_specs(uris, store).items():
            cluster.create_table(namespace, name, spec)
        phases.start()
        waiting = cluster.phase_is(namespace, "waiting", "AwaitingApproval", timeout=300)
        moving = cluster.phase_is(namespace, "moving", "AwaitingApproval", timeout=300)
        cluster.phase_is(namespace, "steady", "Ready", timeout=300)
        refused = cluster.phase_is(namespace, "refused", "Stalled", timeout=60)
        cluster.patch_table(namespace, "moving", approval(moving["plan"]["id"]))
        # Upgraded once its apply job runs, its writer paused.
        until(lambda: cluster.job_kinds(namespace, "moving") == ["plan", "apply"], 120, "the apply job")
        until(lambda: writer_replicas(cluster, namespace) == 0, 60, "the writer paused")
        assert phases.now() == TABLES
        phases.mark(f"{last_released.version}, before the upgrade")

        # --- the upgrade, as docs/install.md says --------------------------------------------------------
        cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(released.crds))
        chosen = values(namespace, node, released)
        chosen["jobs"]["allowedTableUris"] = {namespace: ["s3a://"]}  # its changelog's "Upgrading"
        helm_release(cluster, "upgrade", released, namespace, chosen)
        phases.mark(f"upgraded to {released.version}: its operator Ready")
        # The plan the last release made is still the plan: approved now, it applies while the apply the
        # last release started ends.
        assert cluster.status(namespace, "waiting")["plan"]["id"] == waiting["plan"]["id"]
        cluster.patch_table(namespace, "waiting", approval(waiting["plan"]["id"]))
        moved = cluster.phase_is(namespace, "moving", "Ready", timeout=300)
        applied = cluster.phase_is(namespace, "waiting", "Ready", timeout=300)
        assert applied["history"][0]["planId"] == waiting["plan"]["id"]
        settled = dict.fromkeys(TABLES, "Ready") | {"refused": "Stalled"}
        assert phases.now() == settled
        phases.mark(f"{released.version}: the apply begun before ended, the old plan applied")
        # The apply the last release started ran once, its report recorded, its writer resumed.
        assert moved["history"][0]["planId"] == moving["plan"]["id"]
        assert {p["partition"]: p["buckets"] for p in moved["partitions"]["items"]} == {
            "day=2025-11-10": 2,
            "day=2025-11-11": 6,
        }
        assert moved["writers"]["last"]["writers"] == [f"Deployment/{WRITER}"]
        until(lambda: writer_replicas(cluster, namespace) == 1, 30, "the writer resumed")
        until(lambda: cluster.config_maps(namespace) == {}, 30, "the recorded reports to be deleted")
        assert cluster.status(namespace, "refused")["conditions"] == refused["conditions"]
        jobs = {name: cluster.job_kinds(namespace, name) for name in TABLES}
        assert jobs == {"waiting": ["plan", "apply"], "moving": ["plan", "apply"], "steady": ["plan"],
                        "refused": []}  # fmt: skip
        # Each apply ran in its release's job image: the report recorded after the upgrade was the last
        # release's job's.
        images = {name: cluster.jobs(namespace, name)[-1]["spec"]["image"] for name in ("moving", "waiting")}
        assert images == {"moving": last_released.images["job"], "waiting": released.images["job"]}
        assert_no_traceback(cluster, node, namespace)

        # --- helm rollback: the last release's operator over what the new one wrote -------------------
        cluster.helm("rollback", RELEASE, "1", "--namespace", namespace, "--wait", "--timeout", "180s")
        phases.mark(f"rolled back to {last_released.version}: its operator Ready")
        until(lambda: reconciled(cluster, namespace) >= len(TABLES), 120, "the tables reconciled again")
        time.sleep(3)  # what a pass would start has been started by now
        assert phases.now() == settled
        assert {name: cluster.job_kinds(namespace, name) for name in TABLES} == jobs
        assert writer_replicas(cluster, namespace) == 1
        assert_no_traceback(cluster, node, namespace)
        phases.mark(f"{last_released.version} again")
        unexpected = phases.unexpected()
        print("\n" + phases.table())
        assert unexpected == [], unexpected
    finally:
        phases.stop()
        spark_operator.stop()
        cluster.helm("uninstall", RELEASE, "--namespace", namespace, "--wait", "--timeout", "60s")
        # The session's other tests expect this commit's CRD.
        cluster.install_crds()
        store.stop()


def values(namespace: str, node: Node, release: PushedRelease) -> dict[str, Any]:
    """What the platform team chose, the same for both releases but for the images' repositories."""
    pod = {"pod": {"tolerations": [node.toleration]}, "memory": "1g"}
    chosen: dict[str, Any] = {
        "image": {"repository": release.repository("operator")},  # the digest is the chart's own
        "watch": {"namespaces": [namespace]},
        "tolerations": [node.toleration],
        "writers": {"enabled": True},
        "resyncSeconds": 10,
        "jobs": {
            "image": {"repository": release.repository("job")},
            "driver": pod,
            "executor": pod,
            "allowedHadoopConf": ["fs.s3a.endpoint", "fs.s3a.connection.ssl.enabled"],
            "allowedSecrets": {namespace: ["lake-s3"]},
            # Three jobs at once on a node of 2 CPUs: less than half a core each pod.
            "sparkConf": {
                "spark.kubernetes.driver.request.cores": "300m",
                "spark.kubernetes.executor.request.cores": "300m",
            },
        },
    }
    return chosen


def helm_release(
    cluster: Cluster, verb: str, release: PushedRelease, namespace: str, chosen: dict[str, Any]
) -> None:
    """``helm install|upgrade`` of the release's chart from its OCI reference, until its operator is
    Ready (the Deployment rolled out)."""
    values_file = cluster.control_plane.work_dir / f"values-{RELEASE}-{release.version}.json"
    values_file.write_text(json.dumps(chosen))
    cluster.helm(verb, RELEASE, release.chart, *release.helm_args(), "--namespace", namespace,
                 "--values", str(values_file), "--wait", "--timeout", "180s")  # fmt: skip


def table_specs(uris: dict[str, str], store: S3Server) -> dict[str, dict[str, Any]]:
    spark = {"envFromSecrets": [{"name": "lake-s3"}], "hadoopConf": store.settings()}
    rescale = {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 6}]}
    manual = {"policy": "Manual", "window": open_window()}
    return {
        "waiting": {"table": {"uri": uris["waiting"]}, "buckets": rescale, "apply": manual, "spark": spark},
        "moving": {
            "table": {"uri": uris["moving"]},
            "buckets": rescale,
            "apply": manual,
            "spark": spark,
            "writers": {"quiesceTimeout": "5m", "workloads": [{"kind": "Deployment", "name": WRITER}]},
        },
        "steady": {
            "table": {"uri": uris["steady"]},
            "buckets": {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 3}]},
            "apply": manual,
            "spark": spark,
        },
        "refused": {
            "table": {"uri": store.uri("refused")},
            "buckets": rescale,
            "apply": manual,
            "spark": {**spark, "envFromSecrets": [{"name": "db-admin"}]},
        },
    }


def approval(plan_id: str) -> dict[str, Any]:
    return {"spec": {"apply": {"policy": "Manual", "approvedPlan": plan_id}}}


def s3_tables(spark: Any, store: S3Server, tmp_path: Path) -> dict[str, str]:
    """The scenarios' orders table (2 buckets, two day partitions) on ``store``: a copy for each table to
    rescale, and one whose rules are already what its spec says."""
    for name, expressions in (("orders", ""), ("steady", STEADY_RULES)):
        write_orders_table(spark, tmp_path / name, expressions=expressions)
    copies = {"waiting": "orders", "moving": "orders", "steady": "steady"}
    for name, local in copies.items():
        pafs.copy_files(
            str(tmp_path / local), f"{store.bucket}/{name}", destination_filesystem=store.filesystem()
        )
    return {name: store.uri(name) for name in copies}


def create_writer(cluster: Cluster, namespace: str, node: Node, image: str) -> None:
    """A Deployment its owner labels a writer of ``moving``: one pod that only sleeps (what is checked is
    that it is paused and resumed, not what it writes: test_jobs_in_pods.py has a writing one)."""
    container = restricted_container("writer", image, ["infinity"])
    container.command = ["sleep"]
    labels = {"app": WRITER}
    deployment = client.V1Deployment(
        metadata=client.V1ObjectMeta(name=WRITER, labels={WRITER_OF: "moving"}),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=[container],
                    tolerations=[client.V1Toleration(**node.toleration)],
                    termination_grace_period_seconds=1,  # sleep ignores SIGTERM
                ),
            ),
        ),
    )
    cluster.apps.create_namespaced_deployment(namespace, deployment)


def assert_no_traceback(cluster: Cluster, node: Node, namespace: str) -> None:
    """Nothing the operator now running met was beyond it (it logs what it refuses in a line)."""
    selector = f"app.kubernetes.io/instance={RELEASE}"
    for pod in cluster.core.list_namespaced_pod(namespace, label_selector=selector).items:
        if pod.metadata.deletion_timestamp is None:
            log = node.container_log(namespace, pod.metadata.name, "operator")
            assert "Traceback" not in log, log[log.index("Traceback") - 500 :][:4000]


def writer_replicas(cluster: Cluster, namespace: str) -> int:
    # A Scale's spec leaves replicas out when 0.
    return int(cluster.apps.read_namespaced_deployment_scale(WRITER, namespace).spec.replicas or 0)


def reconciled(cluster: Cluster, namespace: str) -> float:
    """How many reconciles the Ready operator pod counted (its metrics, through its Service)."""
    service = f"{RELEASE}-hudi-bucket-operator-metrics:metrics"
    try:
        text = cluster.core.connect_get_namespaced_service_proxy_with_path(service, namespace, "metrics")
    except client.ApiException:
        return 0
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("hbo_reconciles_total{")
    )


class Phases:
    """Each table's phase, sampled twice a second from the API server all along; ``mark`` names the stage
    the samples since the last mark belong to."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.cluster, self.namespace = cluster, namespace
        self.stages: list[tuple[str, float, dict[str, list[str]]]] = []
        self._began = time.monotonic()
        self._seen: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="phases", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=10)

    def now(self) -> dict[str, str]:
        listed = self.cluster.custom.list_namespaced_custom_object(
            API_GROUP, API_VERSION, self.namespace, PLURAL
        )
        return {t["metadata"]["name"]: (t.get("status") or {}).get("phase", "") for t in listed["items"]}

    def mark(self, stage: str) -> None:
        with self._lock:
            for name, phase in self.now().items():
                self._note(name, phase)
            self.stages.append((stage, time.monotonic() - self._began, self._seen))
            self._seen = {}

    def unexpected(self) -> list[str]:
        """Phases no table should pass through: a refusal or a failure of a table that was fine."""
        return [
            f"{name} {phase} ({stage})"
            for stage, _, seen in self.stages
            for name, passed in seen.items()
            for phase in passed
            if phase in ("Stalled", "Failed") and name != "refused"
        ]

    def table(self) -> str:
        """Markdown: a row per stage (its end, in seconds from the test's start), a column per table,
        the phases it passed through in that stage."""
        names = list(TABLES)
        rows = [f"| stage | s | {' | '.join(names)} |", f"|---|---|{'---|' * len(names)}"]
        for stage, at, seen in self.stages:
            rows.append(f"| {stage} | {at:.0f} | {' | '.join(' → '.join(seen.get(n, [])) for n in names)} |")
        return "\n".join(rows)

    def _note(self, name: str, phase: str) -> None:
        passed = self._seen.setdefault(name, [])
        if phase and (not passed or passed[-1] != phase):
            passed.append(phase)

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            try:
                now = self.now()
            except client.ApiException:
                continue
            with self._lock:
                for name, phase in now.items():
                    self._note(name, phase)

"""The product as it runs in a cluster, on the real control plane: the chart installed by a real helm, the
operator as a real process with the chart's ServiceAccount, and the tables it manages."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import yaml
from kubernetes import client

import pods
from control_plane import ControlPlane
from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import WriteOptions
from lib import helm_chart
from lib.paths import REPO, SPARK_APPLICATION_CRD

API_GROUP, API_VERSION, PLURAL = "hudi.bucketops.io", "v1alpha1", "hudibuckettables"
SPARK_APPLICATIONS = ("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
OPERATOR_BIN = Path(sys.executable).parent / "hudi-bucket-operator"
T = TypeVar("T")


def until(
    check: Callable[[], T], timeout: float = 90, what: str | Callable[[], str] = "", every: float = 0.25
) -> T:
    """``check()`` once it is truthy; an AssertionError naming ``what`` after ``timeout`` seconds (a
    callable ``what`` is called then, so that it says how things stand at that moment)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g} s waiting for {said or check}")
        time.sleep(every)


class Cluster:
    """Admin access to the control plane through the official client, and helm with the same identity."""

    def __init__(self, control_plane: ControlPlane) -> None:
        self.control_plane = control_plane
        api = control_plane.api_client()
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)

    def kubectl(self, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
        return self.control_plane.kubectl(*args, **options)

    def helm(self, *args: str) -> str:
        return helm_chart.helm(*args, "--kubeconfig", str(self.control_plane.kubeconfig_path))

    def install_crds(self) -> None:
        self.kubectl("apply", "--server-side", "-f", str(SPARK_APPLICATION_CRD))
        # Forced: an upgrade test leaves the last release's CRD applied by helm, and puts this one back.
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(REPO / "crds"))

    def install_chart(
        self,
        release: str,
        namespace: str,
        values: Mapping[str, Any],
        upgrade: bool = False,
        chart: Sequence[str] = (str(helm_chart.CHART),),
    ) -> None:
        """``chart``: the chart's folder (this checkout's), or a reference and its arguments (``oci://...``,
        ``--version``, ``--plain-http``)."""
        values_file = self.control_plane.work_dir / f"values-{release}.json"
        values_file.write_text(json.dumps(values))
        verb = ("upgrade",) if upgrade else ("install", "--create-namespace")
        self.helm(*verb, release, *chart, "--namespace", namespace, "--values", str(values_file))

    # --- tables -------------------------------------------------------------------------------------------

    def create_table(
        self, namespace: str, name: str, spec: Mapping[str, Any], **metadata: Any
    ) -> dict[str, Any]:
        body = {
            "apiVersion": f"{API_GROUP}/{API_VERSION}",
            "kind": "HudiBucketTable",
            "metadata": {"name": name, "namespace": namespace, **metadata},
            "spec": dict(spec),
        }
        return self.custom.create_namespaced_custom_object(API_GROUP, API_VERSION, namespace, PLURAL, body)

    def table(self, namespace: str, name: str) -> dict[str, Any]:
        return self.custom.get_namespaced_custom_object(API_GROUP, API_VERSION, namespace, PLURAL, name)

    def patch_table(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object(
            API_GROUP, API_VERSION, namespace, PLURAL, name, dict(patch)
        )

    def status(self, namespace: str, name: str) -> dict[str, Any]:
        return dict(self.table(namespace, name).get("status") or {})

    def phase_is(self, namespace: str, name: str, phase: str, timeout: float = 120) -> dict[str, Any]:
        """The status once its phase is ``phase``."""
        return until(
            lambda: (status := self.status(namespace, name)).get("phase") == phase and status,
            timeout,
            lambda: f"{namespace}/{name} to be {phase} (status: {self.status(namespace, name)})",
        )

    def jobs(self, namespace: str, table: str = "") -> list[dict[str, Any]]:
        """The table's SparkApplications (all in the namespace without ``table``), oldest first."""
        selector = f"hudi.bucketops.io/table={table}" if table else ""
        apps = self.custom.list_namespaced_custom_object(*SPARK_APPLICATIONS[:2], namespace, SPARK_APPLICATIONS[2],
                                                         label_selector=selector)  # fmt: skip
        return sorted(apps["items"], key=lambda a: a["metadata"]["creationTimestamp"])

    def job_kinds(self, namespace: str, table: str) -> list[str]:
        return [a["metadata"]["labels"]["hudi.bucketops.io/job-kind"] for a in self.jobs(namespace, table)]

    def config_maps(self, namespace: str) -> dict[str, str]:
        """The job reports: ConfigMaps owned by a table, as name -> the owning table's uid."""
        return {
            c.metadata.name: owner.uid
            for c in self.core.list_namespaced_config_map(namespace).items
            for owner in c.metadata.owner_references or ()
            if owner.kind == "HudiBucketTable"
        }

    def events(self, namespace: str, name: str) -> list[str]:
        found = self.core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}")
        return [f"{e.reason}: {e.message}" for e in found.items]

    def deployment_container(self, namespace: str, name: str) -> tuple[str, dict[str, Any]]:
        """The operator Deployment's ServiceAccount and container, as the API server stores them."""
        deployment = self.apps.read_namespaced_deployment(name, namespace).to_dict()
        pod = deployment["spec"]["template"]["spec"]
        return pod["service_account_name"], pod["containers"][0]


class OperatorProcess:
    """`hudi-bucket-operator run` as a real process; its log is kept for the failure message."""

    def __init__(self, command: list[str], env: Mapping[str, str], log: Path) -> None:
        self.log = log
        self._out = log.open("ab")
        self.process = subprocess.Popen(command, env=dict(env), stdout=self._out, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        """SIGKILL: no cleanup, as when a node dies or the OOM killer strikes."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self._out.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._out.close()

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def assert_alive(self) -> None:
        assert self.process.poll() is None, (
            f"the operator exited {self.process.returncode}:\n{self.text()[-4000:]}"
        )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def operator_in_pod(
    cluster: Cluster, namespace: str, deployment: str, work_dir: Path, replica: str = "operator"
) -> OperatorProcess:
    """The operator as the chart's Deployment runs it: its args and env, its ServiceAccount's token. A
    second ``replica`` is another pod: its own ports (a pod has its own network), its own log."""
    service_account, container = cluster.deployment_container(namespace, deployment)
    files = pods.service_account_files(
        cluster.control_plane, namespace, service_account, work_dir / "operator-sa"
    )
    env = {e["name"]: e.get("value") or "" for e in container.get("env") or []}  # "" comes back as None
    args = list(container.get("args") or [])
    if replica != "operator":
        env["HBO_METRICS_PORT"] = str(free_port())
        args = [
            f"--liveness=http://0.0.0.0:{free_port()}/healthz" if a.startswith("--liveness=") else a
            for a in args
        ]
    # As a pod's container would be, started once its Roles are in force: a real kubelet takes longer.
    user = f"system:serviceaccount:{namespace}:{service_account}"
    for watched in [w for w in env.get("HBO_NAMESPACES", "").split(",") if w] or ["default"]:
        cluster.control_plane.wait_until_allowed(user, "watch", f"{PLURAL}.{API_GROUP}", watched)
    command = pods.pod_command([str(OPERATOR_BIN), "run", *args])
    base = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    return OperatorProcess(command, {**base, **env, **pods.pod_env(cluster.control_plane, files)},
                           work_dir / f"{replica}.log")  # fmt: skip


def operator_with_kubeconfig(
    kubeconfig: Path, work_dir: Path, *args: str, settings: Mapping[str, str] | None = None
) -> OperatorProcess:
    """The operator started by hand against a kubeconfig: no environment beyond KUBECONFIG (and PATH) and
    the admins' ``settings`` (HBO_* variables)."""
    env = {"KUBECONFIG": str(kubeconfig), "PATH": os.environ["PATH"], **(settings or {})}
    return OperatorProcess([str(OPERATOR_BIN), "run", *args], env, work_dir / "operator-kubeconfig.log")


def manifest(name: str, namespace: str, spec: Mapping[str, Any]) -> str:
    return yaml.safe_dump(
        {"apiVersion": f"{API_GROUP}/{API_VERSION}", "kind": "HudiBucketTable",
         "metadata": {"name": name, "namespace": namespace}, "spec": dict(spec)}
    )  # fmt: skip


def write_orders_table(spark: Any, root: Path, rows: int = 60, expressions: str = "") -> None:
    """The scenarios' table, written by our writer: orders (key ``order_id``) in two day partitions, two
    thirds of them on 2025-11-11, bucket-indexed with 2 buckets (and ``expressions``' rules, if any)."""
    data = spark.createDataFrame(
        [(f"O-{i}", "2025-11-11" if i % 3 else "2025-11-10", float(i)) for i in range(rows)],
        "order_id string, day string, amount double",
    )
    request = WriteOptions(
        source="", record_key=("order_id",), partition_fields=("day",), create=True, hive_style=True,
        default_buckets=2, expressions=expressions,
    )  # fmt: skip
    write(spark, str(root), request, rows=data)


def daily_window_opening(at: datetime) -> tuple[str, str]:
    """A daily window's cron schedule (UTC) opening at the whole minute of ``at``, and that start as
    status.writers.nextWindow says it."""
    opens = at.replace(second=0, microsecond=0)
    return f"{opens.minute} {opens.hour} * * *", opens.isoformat().replace("+00:00", "Z")


def open_window() -> dict[str, str]:
    """A window open now, and for the next hour at least."""
    schedule, _ = daily_window_opening(datetime.now(UTC) - timedelta(minutes=1))
    return {"schedule": schedule, "duration": "2h"}

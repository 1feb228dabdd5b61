"""What the operator benchmarks share: the operator as a measured process, a watch that timestamps each
table's first SparkApplication, and the audit log's requests counted by kind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from kubernetes import client, watch

from control_plane import AuditEvent

GROUP, VERSION, PLURAL = "hudi.bucketops.io", "v1alpha1", "hudibuckettables"
APPS = ("sparkoperator.k8s.io", "v1beta2", "sparkapplications")
OPERATOR_BIN = Path(sys.executable).parent / "hudi-bucket-operator"


def count_kinds(events: list[AuditEvent]) -> dict[str, int]:
    """Requests by verb and resource (with subresource)."""
    kinds: dict[str, int] = {}
    for e in events:
        kind = f"{e.verb} {e.resource or '(no resource)'}"
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))


def until_served(custom: client.CustomObjectsApi, manifest: str) -> None:
    group, version, plural = APPS if "sparkoperator" in manifest else (GROUP, VERSION, PLURAL)
    for _ in range(100):
        try:
            custom.list_cluster_custom_object(group, version, plural, limit=1)
            return
        except client.ApiException:
            time.sleep(0.2)
    raise RuntimeError(f"{plural} not served")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a running process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Operator:
    """`hudi-bucket-operator run` watching one namespace, with its CPU time and RSS readable."""

    def __init__(self, kubeconfig: Path, log: Path, namespace: str, **env_extra: str) -> None:
        env = {
            **env_extra,
            "KUBECONFIG": str(kubeconfig),
            "PATH": os.environ["PATH"],
            "HBO_NAMESPACES": namespace,
            "HBO_METRICS_PORT": "0",
            **{k: v for k, v in os.environ.items() if k == "HBO_WORKERS"},
        }
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            [str(OPERATOR_BIN), "run", f"--liveness=http://127.0.0.1:{free_port()}/healthz"],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


class AppWatch:
    """Timestamps each table's first SparkApplication as the watch delivers it."""

    def __init__(self, custom: client.CustomObjectsApi, namespace: str) -> None:
        self.custom = custom
        self.namespace = namespace
        self.seen: dict[str, float] = {}
        self.apps: dict[str, str] = {}  # app name -> its table
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> AppWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.is_set():
            stream = watch.Watch().stream(
                self.custom.list_namespaced_custom_object,
                *APPS[:2],
                self.namespace,
                APPS[2],
                timeout_seconds=5,
            )
            for event in stream:
                meta = event["object"]["metadata"]
                table = meta.get("annotations", {}).get("hudi.bucketops.io/table-name", "")
                self.seen.setdefault(table, time.monotonic())
                self.apps[meta["name"]] = table

    def wait_for(self, tables: set[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not tables <= set(self.seen):
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(tables - set(self.seen))} tables got no SparkApplication")
            time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])

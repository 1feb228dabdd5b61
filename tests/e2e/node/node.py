"""One real Kubernetes node beside the control plane: kubelet, containerd, runc, the CNI bridge,
kube-proxy (the Services' ClusterIPs, so pods reach the API server as in-cluster clients do), a cluster
DNS (Services by name, as Spark's executors find their driver), and kube-scheduler (pods that name no node, as Spark's executors, are placed on it).

Only one node runs on a machine at a time, whatever cache folder each run uses: they share names (the
cgroup, the links). The lock, /run/lock/hbo-node.lock, holds the run folder of the node that last had it.
That folder holds every folder kubelet and containerd write, and the record of what they change elsewhere
(host.py): ``stop()`` puts that back, and so does the next ``start()`` after a run that was killed.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import subprocess
import time
from pathlib import Path
from typing import IO

from kubernetes import client

from control_plane import ControlPlane
from control_plane.cluster import ADVERTISE_ADDRESS, _free_ports
from control_plane.processes import ManagedProcess, wait_until

from . import host
from .cluster_dns import ClusterDns
from .containerd import POD_SUBNET, Containerd
from .images import pack_pause_image
from .kube_proxy import KubeProxy
from .kubelet import TAINT, Kubelet

NODE_NAME = "hbo-node"
# On a link of its own (kubelet needs an address that is not loopback), and where pods reach the API
# server: the control plane runs on this node, as kubeadm's does.
NODE_IP = ADVERTISE_ADDRESS
STOP_GRACE_SECONDS = 2.0
LOCK_PATH = Path("/run/lock/hbo-node.lock")
# Short: containerd's and the shims' unix sockets are in it, and a socket's path has at most 107 bytes
# (containerd allows 104).
RUN_DIR = Path("/run/hbo-node")
IMAGE_PREFIX = "hbo.local/"  # no registry by that name: kubelet never pulls (imagePullPolicy Never)
STATE_DIR = Path(
    os.environ.get("HBO_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hudi-bucket-operator"
)


class Node:
    """``start()`` it from the main thread after the control plane; ``stop()`` before the control plane."""

    def __init__(
        self,
        control_plane: ControlPlane,
        bin_dir: Path,
        log_dir: Path,
        state_dir: Path = STATE_DIR,
        run_dir: Path = RUN_DIR,
    ) -> None:
        self.control_plane = control_plane
        self.bin_dir = bin_dir
        self.log_dir = log_dir  # kubelet's and containerd's logs: outside the run folder, they stay
        self.run_dir = run_dir
        image_store = state_dir / "node-images"
        self._lock_path = LOCK_PATH
        self._lock: IO[str] | None = None
        self._pause_tag = bin_dir.parent.name  # kube-<version>
        self.containerd = Containerd(self.run_dir, image_store, f"{IMAGE_PREFIX}pause:{self._pause_tag}")
        healthz_port, proxy_healthz_port, proxy_metrics_port = _free_ports(3)
        self.kubelet = Kubelet(self.run_dir, NODE_NAME, NODE_IP, self.containerd.endpoint, healthz_port)
        self.kube_proxy = KubeProxy(self.run_dir, NODE_NAME, NODE_IP, POD_SUBNET)
        self.kube_proxy.healthz_port, self.kube_proxy.metrics_port = proxy_healthz_port, proxy_metrics_port
        self._processes: dict[str, ManagedProcess] = {}
        self._cluster_dns: ClusterDns | None = None
        self.name = NODE_NAME
        self.toleration = {"key": TAINT["key"], "operator": "Exists", "effect": TAINT["effect"]}
        self.start_seconds: float | None = None
        self.stop_seconds: float | None = None

    # --- what tests use -------------------------------------------------------------------------------

    def load_image(self, layout_and_tag: str, repository: str) -> str:
        """An image from an OCI layout (``LAYOUT:TAG``) into the node; returns the name pods use."""
        return self.containerd.load(layout_and_tag, f"{IMAGE_PREFIX}{repository}")

    def trust_registry(self, host: str) -> None:
        """Pods may name images at ``host`` (a plain-HTTP registry on loopback); kubelet has containerd
        pull them as a cluster's nodes pull from any registry."""
        self.containerd.trust_plain_http(host)

    def container_log(self, namespace: str, pod: str, container: str) -> str:
        """What a container wrote, from kubelet's log files (CRI format: time, stream, tag, text)."""
        lines = []
        for path in sorted(self.kubelet.pod_logs.glob(f"{namespace}_{pod}_*/{container}/*.log")):
            for line in path.read_text().splitlines():
                lines.append(line.split(" ", 3)[3] if line.count(" ") >= 3 else "")
        return "\n".join(lines)

    def container_environment(self, container_id: str) -> dict[str, str]:
        """The environment a running container's process has (the kubelet's additions included), by the
        id a pod's status gives it (``containerd://<id>``)."""
        wanted = container_id.removeprefix("containerd://")
        for line in self.containerd.ctr("tasks", "list").splitlines()[1:]:
            task, pid, *_ = line.split()
            if task == wanted:
                variables = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
                return dict(v.split("=", 1) for v in variables if "=" in v)
        raise LookupError(f"no running task for container {container_id}")

    def rss_bytes(self) -> int:
        """The resident memory of every process the node runs (kubelet, containerd, shims, containers)."""
        total = 0
        for pid in host.processes():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:  # ended meanwhile
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        return total

    # --- lifecycle ------------------------------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> None:
        started = time.monotonic()
        atexit.register(self.stop)
        try:
            previous = self._take_lock(timeout)
            for left in {previous, self.run_dir}:  # a run killed before its teardown left these
                if left is not None and left.exists():
                    host.restore(left)
            self.containerd.open_image_store()
            self._start(started + timeout)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started

    def stop(self) -> None:
        """The scheduler and kubelet first, then every container, then containerd; then everything they
        left. Neither daemon stops a pod on its way out, and their state goes: a short grace is enough."""
        atexit.unregister(self.stop)
        started = time.monotonic()
        for name in ("kube-scheduler", "kube-proxy", "kubelet"):
            if name in self._processes:
                self._processes.pop(name).stop(timeout=STOP_GRACE_SECONDS)
        if self._cluster_dns is not None:
            self._cluster_dns.stop()
            self._cluster_dns = None
        containerd = self._processes.pop("containerd", None)
        emptied = False
        if containerd is not None:
            if containerd.exit_code() is None:
                try:
                    self.containerd.remove_containers()
                    emptied = True
                except (RuntimeError, subprocess.TimeoutExpired):
                    pass  # the image store is wiped by the next run instead
            emptied = containerd.stop(timeout=STOP_GRACE_SECONDS) == 0 and emptied
        if self._lock is not None:
            try:
                if self.run_dir.exists():
                    host.restore(self.run_dir)
                if emptied:
                    self.containerd.close_image_store()
            finally:
                self._lock.close()  # releases the flock
                self._lock = None
        self.stop_seconds = time.monotonic() - started

    def _take_lock(self, timeout: float) -> Path | None:
        """Waits for the lock; returns the run folder the node before wrote in it."""
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = self._lock_path.open("a+")  # not truncated before it is ours
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.close()
                    raise RuntimeError(
                        f"another node runs on this machine ({self._lock_path} is locked)"
                    ) from None
                time.sleep(1)
        lock.seek(0)
        previous = lock.read().strip()
        lock.truncate(0)
        lock.write(str(self.run_dir))
        lock.flush()
        self._lock = lock
        return Path(previous) if previous else None

    def _start(self, deadline: float) -> None:
        self.run_dir.mkdir(parents=True)
        # Before anything outside the folder changes.
        host.HostRecord.take(kube_proxy=self.bin_dir / "kube-proxy").save(self.run_dir)
        host.make_cgroups()
        self._add_node_link()
        self._cluster_dns = ClusterDns(self.control_plane, NODE_IP)  # on the node's link, as kubelet says
        self._cluster_dns.start()
        self.containerd.write_config()
        containerd = self._launch("containerd", self.containerd.argv())
        wait_until(self.containerd.serving, deadline - time.monotonic(), [containerd], "containerd serves")
        pause = pack_pause_image(self.bin_dir / "pause", self.run_dir / "pause-image", self._pause_tag)
        self.containerd.load(pause, f"{IMAGE_PREFIX}pause")
        self._forget_earlier_registration()
        kubelet = self._launch(
            "kubelet", [str(self.bin_dir / "kubelet"), *self.kubelet.prepare(self.control_plane)]
        )
        wait_until(
            self._ready, deadline - time.monotonic(), [containerd, kubelet], f"node {NODE_NAME} is Ready"
        )
        self._launch("kube-scheduler", [str(self.bin_dir / "kube-scheduler"), *self._scheduler_args()])
        kube_proxy = self._launch(
            "kube-proxy", [str(self.bin_dir / "kube-proxy"), *self.kube_proxy.prepare(self.control_plane)]
        )
        wait_until(
            self.kube_proxy.healthy, deadline - time.monotonic(), [kube_proxy], "kube-proxy synced its rules"
        )

    def _scheduler_args(self) -> list[str]:
        """As the user the bootstrap RBAC binds for it; no port of its own (nothing here scrapes it)."""
        folder = self.run_dir / "scheduler"
        folder.mkdir()
        kubeconfig = self.control_plane.kubeconfig_for_user(folder, "system:kube-scheduler")
        return [f"--kubeconfig={kubeconfig}", "--leader-elect=false", "--secure-port=0"]

    def _add_node_link(self) -> None:
        for command in (
            # A bridge, not a dummy link: this machine's kernel has no dummy driver.
            ["ip", "link", "add", host.NODE_LINK, "type", "bridge"],
            ["ip", "address", "add", f"{NODE_IP}/32", "dev", host.NODE_LINK],
            ["ip", "link", "set", host.NODE_LINK, "up"],
        ):
            subprocess.run(command, capture_output=True, check=True)

    def _launch(self, name: str, argv: list[str]) -> ManagedProcess:
        process = ManagedProcess(
            name, argv, self.log_dir / f"{name}.log", cgroup_procs=host.daemons_cgroup() / "cgroup.procs"
        )
        self._processes[name] = process
        process.start()
        return process

    def _forget_earlier_registration(self) -> None:
        """An earlier node of this control plane stays Ready for a while after it stopped (kubelet does
        not deregister): deleted, it cannot pass for this one."""
        try:
            client.CoreV1Api(self.control_plane.api_client()).delete_node(NODE_NAME)
        except client.ApiException as error:
            if error.status != 404:
                raise

    def _ready(self) -> bool:
        try:
            node = client.CoreV1Api(self.control_plane.api_client()).read_node(NODE_NAME, _request_timeout=2)
        except client.ApiException:
            return False
        conditions = {c.type: c.status for c in node.status.conditions or []}
        return conditions.get("Ready") == "True"

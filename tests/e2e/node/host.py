"""What a node changes on this machine outside its run folder, written down before it changes it, and put
back: by the node's ``stop()``, or by the next run when a run was killed (SIGKILL leaves containerd's
shims, the containers, their mounts, network namespaces and cgroups behind, and kube-proxy's nftables
tables, which its own ``--cleanup`` deletes).

kubelet and containerd run in ``hbo-node/daemons`` of the unified hierarchy: containerd forks its shims,
and the shims the containers, so ``hbo-node`` holds every process to kill, whoever their parent is now.
kubelet puts the pods' cgroups under ``hbo-node`` in each hierarchy (its ``cgroupRoot``). Tried on cgroups
v1 with the unified hierarchy beside (this VM); a machine with cgroups v2 alone takes the same names,
untried.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

CGROUP_FS = Path("/sys/fs/cgroup")
CGROUP_NAME = "hbo-node"
NODE_LINK = "hbo-node0"  # a bridge without ports holding the node IP: kubelet wants one not on loopback
CNI_BRIDGE = "hbo-cni0"  # the pods' bridge, made by the CNI bridge plugin
CNI_NETWORK = "hbo-node"

# kubelet sets these at start (protectKernelDefaults would fail on this machine's values instead), and the
# bridge plugin turns forwarding on for its gateway.
SYSCTLS = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
    "net/ipv4/ip_forward",
)
# Written whatever the configuration says: kubelet's symlinks to the pods' logs, libcni's result cache,
# containerd 1.6's shim sockets, kubelet's device-plugin socket.
FIXED_PATHS = ("/var/log/containers", "/var/lib/cni", "/run/containerd", "/var/lib/kubelet")
RECORD = "host.json"
CRI_STATE = "io.containerd.grpc.v1.cri"  # the CRI plugin's folder in containerd's state folder


@dataclass(frozen=True)
class HostRecord:
    """The machine as it was before the node started."""

    sysctls: dict[str, str]
    absent_paths: list[str]  # removed again afterwards
    kube_proxy: str = ""  # the binary that deletes its rules (``--cleanup``), when the node runs one

    @classmethod
    def take(cls, kube_proxy: Path | None = None) -> HostRecord:
        return cls(
            sysctls={name: (Path("/proc/sys") / name).read_text().strip() for name in SYSCTLS},
            absent_paths=[path for path in FIXED_PATHS if not os.path.lexists(path)],
            kube_proxy="" if kube_proxy is None else str(kube_proxy),
        )

    def save(self, run_dir: Path) -> None:
        (run_dir / RECORD).write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, run_dir: Path) -> HostRecord | None:
        try:
            return cls(**json.loads((run_dir / RECORD).read_text()))
        except (FileNotFoundError, json.JSONDecodeError):
            return None  # killed before it was written: nothing outside the folder was changed yet


def _unified_hierarchy() -> Path:
    """cgroups v2: all of /sys/fs/cgroup, or beside the v1 hierarchies in a hybrid setup (this VM's)."""
    return CGROUP_FS if (CGROUP_FS / "cgroup.controllers").exists() else CGROUP_FS / "unified"


def cgroups() -> list[Path]:
    """The node's cgroup in each hierarchy (the v1 controllers', the unified one)."""
    if _unified_hierarchy() == CGROUP_FS:
        return [CGROUP_FS / CGROUP_NAME]
    return [
        hierarchy / CGROUP_NAME
        for hierarchy in sorted(CGROUP_FS.iterdir())
        if os.path.ismount(hierarchy)  # not the symlinks of joined controllers (cpu,cpuacct), say
    ]


def daemons_cgroup() -> Path:
    """Where kubelet, containerd (and so the shims) run: beside the pods' ``kubepods``, as cgroups v2
    lets a cgroup that hands controllers to its children hold no process itself."""
    return _unified_hierarchy() / CGROUP_NAME / "daemons"


def make_cgroups() -> None:
    for cgroup in [*cgroups(), daemons_cgroup()]:
        cgroup.mkdir(exist_ok=True)
        if cgroup.parent.name == "cpuset":  # a v1 cpuset cgroup starts with no CPUs and no memory nodes
            for setting in ("cpuset.cpus", "cpuset.mems"):
                (cgroup / setting).write_text((cgroup.parent / setting).read_text())


def _processes_in(cgroup: Path) -> set[int]:
    found: set[int] = set()
    for procs in cgroup.rglob("cgroup.procs"):
        with contextlib.suppress(OSError):  # a cgroup going away meanwhile
            found.update(int(pid) for pid in procs.read_text().split())
    return found


def processes() -> set[int]:
    """Every process in the node's cgroups."""
    return set().union(*(_processes_in(cgroup) for cgroup in cgroups() if cgroup.exists()))


def kill_processes(timeout: float = 20.0) -> None:
    """SIGKILL to every process in the node's cgroups, until there is none."""
    deadline = time.monotonic() + timeout
    while True:
        pids = processes()
        if not pids:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {sorted(pids)} outlived SIGKILL in {CGROUP_NAME} cgroups")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def mounts_under(folder: Path) -> list[str]:
    """Mount points in or below ``folder``, deepest (last mounted) first."""
    found = []
    prefix = str(folder).rstrip("/") + "/"
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == str(folder) or point.startswith(prefix):
            found.append(point)
    return found[::-1]


def unmount_under(folder: Path) -> None:
    """Each mount below ``folder`` (overlays of containers, tmpfs volumes, network namespaces), until
    none is left: a mount can hide another at the same point."""
    for _ in range(10):
        points = mounts_under(folder)
        if not points:
            return
        for point in points:
            subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)
    raise RuntimeError(f"mounts left under {folder}: {mounts_under(folder)}")


def delete_links() -> None:
    for link in (CNI_BRIDGE, NODE_LINK):
        if Path("/sys/class/net", link).exists():
            subprocess.run(["ip", "link", "delete", link], capture_output=True, check=True)


def remove_kube_proxy_rules(kube_proxy: Path) -> None:
    """kube-proxy's own cleanup: its nftables tables (and any iptables or IPVS rules of other modes)."""
    result = subprocess.run([str(kube_proxy), "--cleanup"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{kube_proxy} --cleanup exited {result.returncode}: {result.stderr[-2000:]}")


def remove_cgroups(timeout: float = 10.0) -> None:
    """Deepest first; a cgroup whose last process just died can be busy for a moment."""
    deadline = time.monotonic() + timeout
    for cgroup in cgroups():
        if not cgroup.exists():
            continue
        for folder in sorted((p for p in cgroup.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            _rmdir_patiently(folder, deadline)
        _rmdir_patiently(cgroup, deadline)


def _rmdir_patiently(folder: Path, deadline: float) -> None:
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def restore(run_dir: Path) -> None:
    """Puts the machine back as the record in ``run_dir`` says it was, then removes ``run_dir``.

    Safe to call on a half-started node, and again on a restored one.
    """
    record = HostRecord.load(run_dir)
    kill_processes()
    if record is not None and record.kube_proxy:
        remove_kube_proxy_rules(Path(record.kube_proxy))
    unmount_under(run_dir)
    delete_links()
    remove_cgroups()
    if record is not None:
        for name, value in record.sysctls.items():
            (Path("/proc/sys") / name).write_text(value)
        for path in record.absent_paths:
            subprocess.run(["rm", "-rf", "--one-file-system", path], check=True)
    _forget_entries_in_fixed_paths(run_dir)
    # Never remove a folder that still has something mounted below it: that would delete what the
    # mount shows (a host path, say), not the node's files. (rm's --one-file-system would not enter it.)
    if mounts_under(run_dir):
        raise RuntimeError(f"not removing {run_dir}: still mounted {mounts_under(run_dir)}")
    subprocess.run(["rm", "-rf", "--one-file-system", str(run_dir)], check=True)


def _forget_entries_in_fixed_paths(run_dir: Path) -> None:
    """Ours in the fixed folders that were there before (and so stay): kubelet's symlinks to our pods'
    logs, libcni's results for our sandboxes."""
    links = Path("/var/log/containers")
    if links.is_dir():
        for link in links.iterdir():
            if link.is_symlink() and os.readlink(link).startswith(str(run_dir)):
                link.unlink()
    # libcni caches each attachment's result in its fixed folder, named by network and sandbox.
    sandboxes = {p.name for p in run_dir.glob(f"containerd/state/{CRI_STATE}/sandboxes/*")}
    for cached in Path("/var/lib/cni/results").glob("*"):
        network_and_sandbox = cached.name.rsplit("-", 1)[0]
        if any(network_and_sandbox.endswith(f"-{sandbox}") for sandbox in sandboxes):
            cached.unlink(missing_ok=True)

"""A node leaves this machine as it found it: after its stop, and after a test run killed outright
(SIGKILL leaves containerd's shims, the containers, their mounts, links, cgroups, sysctls and kube-proxy's
nftables rules behind), once the next node has started."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from control_plane import ControlPlane
from node import Node, host, missing_tools
from node.node import LOCK_PATH, RUN_DIR

KILLED_RUN = Path(__file__).parent / "node" / "killed_run.py"


def machine(state_dir: Path) -> dict[str, object]:
    """What a node changes outside its cache, as far as it can be read."""
    return {
        "processes": host.processes(),
        "cgroups": [str(cgroup) for cgroup in host.cgroups() if cgroup.exists()],
        "mounts": host.mounts_under(RUN_DIR) + host.mounts_under(state_dir),
        "links": sorted(p.name for p in Path("/sys/class/net").iterdir() if p.name.startswith("hbo-")),
        "sysctls": host.HostRecord.take().sysctls,
        "fixed paths": [path for path in host.FIXED_PATHS if os.path.lexists(path)],
        "run folder": RUN_DIR.exists(),
        "nftables tables": subprocess.run(
            ["nft", "list", "tables"], capture_output=True, text=True, check=True
        ).stdout.split("\n"),
    }


def no_node_runs() -> bool:
    """True when no node runs now. What a run killed before its teardown left (a whole machine's
    processes killed, say: its mounts, links, cgroups and sysctls stay) is put back first, as the next
    node's start would, so that this test's "before" is the machine as a node found it."""
    LOCK_PATH.parent.mkdir(parents=True, exist_ok=True)
    with LOCK_PATH.open("a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        lock.seek(0)
        earlier = lock.read().strip()
        if earlier and Path(earlier).exists():
            host.restore(Path(earlier))
        return True  # closing it unlocks


def wait_for_line(process: subprocess.Popen[str], timeout: float) -> str:
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline().strip() if ready and process.stdout else ""


@pytest.mark.node
def test_a_killed_runs_leftovers_are_put_back_by_the_next_nodes_start(
    control_plane: ControlPlane, kube_bin_dir: Path, tmp_path: Path
) -> None:
    lacking = missing_tools()
    if lacking:
        pytest.skip(lacking)
    if not no_node_runs():
        pytest.skip("a node runs already (this session's, or another on this machine)")
    state_dir = tmp_path / "cache"  # its own image store: the session's stays as it is
    before = machine(state_dir)
    run = subprocess.Popen(
        [sys.executable, str(KILLED_RUN), str(kube_bin_dir), str(state_dir), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for_line(run, 120) == "running", (tmp_path / "kubelet.log").read_text()[-3000:]
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        run.stdout.close()  # type: ignore[union-attr]
    left = machine(state_dir)
    assert left["processes"], "the shims and the pod's processes outlive a killed run"
    assert left["mounts"]
    assert left["links"]
    assert left["cgroups"]
    assert "table ip kube-proxy" in left["nftables tables"]

    next_node = Node(control_plane, kube_bin_dir, tmp_path / "next", state_dir)
    (tmp_path / "next").mkdir()
    next_node.start()
    next_node.stop()

    assert machine(state_dir) == before

"""A test run to be killed: starts a control plane and a node running a pod, prints ``running``, then
waits. The tests SIGKILL it, as a CI job's timeout would, to show what the next node puts back.

    python killed_run.py BIN_DIR STATE_DIR LOG_DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kubernetes import client

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/e2e, for control_plane and node
sys.path.insert(1, str(Path(__file__).parents[2]))  # tests, for lib.paths

from control_plane import ControlPlane
from node.node import IMAGE_PREFIX, Node


def main(bin_dir: Path, state_dir: Path, log_dir: Path) -> None:
    with ControlPlane(bin_dir, log_dir / "control-plane") as control_plane:
        node = Node(control_plane, bin_dir, log_dir, state_dir)
        node.start()
        core = client.CoreV1Api(control_plane.api_client())
        while True:  # the ServiceAccount admission wants the namespace's default one
            try:
                core.read_namespaced_service_account("default", "default")
                break
            except client.ApiException:
                time.sleep(0.2)
        pause = f"{IMAGE_PREFIX}pause:{bin_dir.parent.name}"  # sleeps until killed
        container = {"name": "sleeper", "image": pause, "imagePullPolicy": "Never"}
        pod = {"metadata": {"name": "sleeper"}, "spec": {"nodeName": node.name, "containers": [container]}}
        core.create_namespaced_pod("default", pod)
        while core.read_namespaced_pod("sleeper", "default").status.phase != "Running":
            time.sleep(0.2)
        print("running", flush=True)
        time.sleep(3600)


if __name__ == "__main__":
    main(*(Path(arg) for arg in sys.argv[1:4]))

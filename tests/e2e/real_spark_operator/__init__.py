"""The real Kubeflow Spark Operator: its release built from ../shared/vendor by build.sh (cached like the
control plane), its CRDs and its controller's RBAC from the same release (the RBAC as its own Helm chart
renders it), and its controller run out of cluster against the test control plane, as its README says it
runs: ``spark-operator controller start --kubeconfig``.

The controller submits each SparkApplication with spark-submit from ``$SPARK_HOME`` (PySpark's Spark,
as the Spark Operator's image carries one) in cluster mode, to the API server it finds in
``KUBERNETES_SERVICE_HOST``/``PORT``, as the controller's own ServiceAccount: the driver pod then runs
on the test node, as in a cluster. Its webhook is not run: our SparkApplications carry pod templates.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import yaml

import helm_chart
from control_plane import ControlPlane
from control_plane.processes import ManagedProcess
from spark_submit import spark_home

BUILD = Path(__file__).with_name("build.sh")
RELEASE, NAMESPACE = "spark-operator", "spark-operator"
CONTROLLER_ACCOUNT = "spark-operator-controller"  # its chart's name for it, with release "spark-operator"


def build_problem() -> str | None:
    """What this machine lacks to build the Spark Operator (no ../shared, no Go), or None."""
    result = subprocess.run(["bash", str(BUILD), "--check"], capture_output=True, text=True, check=False)
    return result.stdout.strip() or None if result.returncode else None


def built() -> Path:
    """The release folder (bin/spark-operator, crds/, chart/), built first if missing (about 4 minutes)."""
    result = subprocess.run(["bash", str(BUILD)], stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{BUILD} exited {result.returncode} (its messages are above)")
    return Path(result.stdout.strip().splitlines()[-1])


class SparkOperator:
    """The controller, watching ``namespaces``; ``start()`` installs what it needs first."""

    def __init__(self, control_plane: ControlPlane, work_dir: Path, namespaces: list[str]) -> None:
        self.control_plane, self.work_dir, self.namespaces = control_plane, work_dir, namespaces
        self.release = built()
        self.process: ManagedProcess | None = None

    def install(self) -> None:
        """The release's CRDs, and its controller's ServiceAccount and RBAC as its chart renders them."""
        crds = str(self.release / "crds")
        self.control_plane.kubectl("apply", "--server-side", "--force-conflicts", "-f", crds)
        # The controller's manager looks its kinds up once, at start: they must be served by then.
        self.control_plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", "-f", crds)
        self.control_plane.kubectl("create", "namespace", NAMESPACE, check=False)
        values = self.work_dir / "values.yaml"
        values.write_text(
            yaml.safe_dump({"spark": {"jobNamespaces": self.namespaces}, "webhook": {"enable": False}})
        )
        rendered = helm_chart.helm(
            "template", RELEASE, str(self.release / "chart"), "--namespace", NAMESPACE, "--values", str(values),
            "--show-only", "templates/controller/rbac.yaml", "--show-only", "templates/controller/serviceaccount.yaml",
        )  # fmt: skip
        self.control_plane.kubectl("apply", "--server-side", "-f", "-", input=rendered)

    def start(self) -> SparkOperator:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.install()
        token = self.control_plane.token_for(NAMESPACE, CONTROLLER_ACCOUNT, expiration_seconds=6 * 3600)
        kubeconfig = self.control_plane.kubeconfig_for_token(token, self.work_dir / "kubeconfig")
        server = urlparse(self.control_plane.server)
        env = {
            **{k: os.environ[k] for k in ("PATH", "HOME", "JAVA_HOME", "LANG") if k in os.environ},
            "SPARK_HOME": str(spark_home()),
            "KUBECONFIG": str(kubeconfig),  # spark-submit's client signs in as the controller, too
            "KUBERNETES_SERVICE_HOST": str(server.hostname),
            "KUBERNETES_SERVICE_PORT": str(server.port),
        }
        args = [
            "env", "-i", *(f"{key}={value}" for key, value in env.items()),
            str(self.release / "bin" / "spark-operator"), "controller", "start",
            f"--kubeconfig={kubeconfig}", f"--namespaces={','.join(self.namespaces)}",
            "--leader-election=false", "--enable-ui-service=false", "--enable-metrics=false",
            "--health-probe-bind-address=0", "--zap-log-level=info",
        ]  # fmt: skip
        self.process = ManagedProcess("spark-operator", args, self.work_dir / "controller.log")
        self.process.start()
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def running(self) -> bool:
        return self.process is not None and self.process.exit_code() is None

    def log(self) -> str:
        return (self.work_dir / "controller.log").read_text(errors="replace")

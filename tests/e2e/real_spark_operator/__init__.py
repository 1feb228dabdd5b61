"""The real Kubeflow Spark Operator: its release built from ../shared/vendor by build.sh (cached like the
control plane), its CRDs from the same release, and its controller run two ways:

- ``SparkOperator``: out of cluster against the test control plane, as its README says it runs
  (``spark-operator controller start --kubeconfig``), with its RBAC as its own Helm chart renders it;
- ``SparkOperatorInPods``: installed by its own Helm chart, its pod on the test node running an image
  made as the release's Dockerfile makes it (``image``), on our job image in place of Apache Spark's.

The controller submits each SparkApplication with spark-submit from ``$SPARK_HOME`` in cluster mode, to
the API server it finds in ``KUBERNETES_SERVICE_HOST``/``PORT``, as the controller's own ServiceAccount.
Its webhook is not run: our SparkApplications carry pod templates.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import yaml
from kubernetes import client

from control_plane import ControlPlane
from control_plane.processes import ManagedProcess
from lib import helm_chart
from node import Node
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


def install_crds(control_plane: ControlPlane) -> None:
    """The release's CRDs, served before the controller starts: its manager looks its kinds up once."""
    crds = str(built() / "crds")
    control_plane.kubectl("apply", "--server-side", "--force-conflicts", "-f", crds)
    control_plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", "-f", crds)


def image(job_image: str) -> str:
    """The controller's image as the release's Dockerfile makes it, on our job image (``LAYOUT:TAG``) in
    place of Apache Spark's, which no registry here serves: that image's Spark (spark-submit in
    ``$SPARK_HOME``), tini and user 185, with the controller's binary and the release's entrypoint.sh
    added. Two layers written beside the job image in its OCI layout (seconds), once per release and job
    image; returns ``LAYOUT:TAG``."""
    release = built()
    layout, job_tag = job_image.rsplit(":", 1)
    tag = f"{release.name}-{job_tag}"

    def umoci(*args: str) -> str:
        return subprocess.run(["umoci", *args], capture_output=True, text=True, check=True).stdout

    tags = umoci("ls", "--layout", layout).split()
    if tag in tags:
        return f"{layout}:{tag}"
    building = f"{tag}-building"
    umoci("insert", "--image", f"{layout}:{job_tag}", "--tag", building,
          str(release / "bin" / "spark-operator"), "/usr/bin/spark-operator")  # fmt: skip
    umoci(
        "insert", "--image", f"{layout}:{building}", str(release / "entrypoint.sh"), "/usr/bin/entrypoint.sh"
    )
    umoci("config", "--image", f"{layout}:{building}", "--tag", tag, "--clear=config.entrypoint",
          "--config.entrypoint=/usr/bin/entrypoint.sh", "--config.user=185:185")  # fmt: skip
    for old in [*tags, building]:  # of earlier job images: their layers go with images/build.sh's gc
        if old.startswith(f"{release.name}-"):
            umoci("rm", "--image", f"{layout}:{old}")
    return f"{layout}:{tag}"


class SparkOperatorInPods:
    """The controller as its own chart installs it (leader election on, as by default), its pod on
    ``node``, watching ``namespaces``. ``start()`` loads its image into the node and waits for the pod to
    be Ready; ``stop()`` uninstalls it."""

    RELEASE = "spark-operator-in-pods"  # not the out-of-cluster one's: helm would not adopt its objects
    CONTAINER = "spark-operator-controller"

    def __init__(self, control_plane: ControlPlane, node: Node, job_image: str, namespaces: list[str],
                 work_dir: Path) -> None:  # fmt: skip
        self.control_plane, self.node, self.job_image = control_plane, node, job_image
        self.namespaces, self.work_dir = namespaces, work_dir
        self.installed = False

    def start(self) -> SparkOperatorInPods:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        install_crds(self.control_plane)
        name = self.node.load_image(image(self.job_image), "spark-operator")
        registry, rest = name.split("/", 1)
        repository, tag = rest.rsplit(":", 1)
        values = {
            "image": {"registry": registry, "repository": repository, "tag": tag, "pullPolicy": "Never"},
            "controller": {"tolerations": [self.node.toleration]},
            "webhook": {"enable": False},
            # Our chart makes the jobs' ServiceAccount and its Role: the Spark Operator's are not needed.
            "spark": {"jobNamespaces": self.namespaces, "serviceAccount": {"create": False},
                      "rbac": {"create": False}},
        }  # fmt: skip
        values_file = self.work_dir / "values.json"
        values_file.write_text(json.dumps(values))
        self.installed = True
        self._helm(
            "install", self.RELEASE, str(built() / "chart"), "--namespace", self.RELEASE, "--create-namespace",
            "--values", str(values_file), "--wait", "--timeout", "180s",
        )  # fmt: skip
        return self

    def stop(self) -> None:
        if self.installed:
            self._helm("uninstall", self.RELEASE, "--namespace", self.RELEASE, "--wait", "--timeout", "60s")
            self.control_plane.kubectl(
                "delete", "namespace", self.RELEASE, "--wait=false", "--ignore-not-found"
            )

    def log(self) -> str:
        """What the controller's containers wrote (kubelet's log files on the node)."""
        core = client.CoreV1Api(self.control_plane.api_client())
        found = core.list_namespaced_pod(self.RELEASE).items
        return "\n".join(
            self.node.container_log(self.RELEASE, pod.metadata.name, self.CONTAINER) for pod in found
        )

    def _helm(self, *args: str) -> str:
        return helm_chart.helm(*args, "--kubeconfig", str(self.control_plane.kubeconfig_path))


class SparkOperator:
    """The controller, watching ``namespaces``; ``start()`` installs what it needs first."""

    def __init__(self, control_plane: ControlPlane, work_dir: Path, namespaces: list[str]) -> None:
        self.control_plane, self.work_dir, self.namespaces = control_plane, work_dir, namespaces
        self.release = built()
        self.process: ManagedProcess | None = None

    def install(self) -> None:
        """The release's CRDs, and its controller's ServiceAccount and RBAC as its chart renders them."""
        install_crds(self.control_plane)
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

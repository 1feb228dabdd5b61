"""What the Kubeflow Spark Operator makes of a SparkApplication when it submits it: spark-submit's
command line in cluster mode against the API server, and the driver's and executor's pod templates
(the application's ``template`` fields: security contexts, ``envFrom``, ``env``, and the placement the
chart's values give the pods, such as the test node's toleration).

Spark on Kubernetes does the rest, as in any cluster: spark-submit creates the driver pod (with its
ConfigMap and headless Service), and the driver, as the application's ServiceAccount, creates its
executor pods, which dial it through that Service's name.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import yaml

from control_plane import ControlPlane

DRIVER_CONTAINER = "spark-kubernetes-driver"  # Spark's names for its containers
EXECUTOR_CONTAINER = "spark-kubernetes-executor"
APP_NAME_LABEL = "sparkoperator.k8s.io/app-name"


def driver_pod_name(app: dict[str, Any]) -> str:
    return f"{app['metadata']['name']}-driver"


# The Spark Operator's own ServiceAccount and what its chart grants it for submitting: the driver pod, its
# ConfigMap and Service, in any namespace.
SUBMITTER = ("kube-system", "spark-operator")
SUBMITTER_RULES = [
    {
        "apiGroups": [""],
        "resources": ["pods", "services", "configmaps", "persistentvolumeclaims"],
        "verbs": ["create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"],
    }
]


def submitter_token(control_plane: ControlPlane) -> str:
    """A token of the Spark Operator's ServiceAccount (made, with its rights, on first use)."""
    namespace, name = SUBMITTER
    for manifest in (
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
         "rules": SUBMITTER_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]},
    ):  # fmt: skip
        control_plane.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump(manifest))
    return control_plane.token_for(namespace, name)


def command(app: dict[str, Any], control_plane: ControlPlane, folder: Path) -> list[str]:
    """spark-submit's arguments for ``app``, submitting as the Spark Operator's ServiceAccount; its token
    and pod templates are written into ``folder``."""
    meta, spec = app["metadata"], app["spec"]
    driver, executor = spec["driver"], spec["executor"]
    token = folder / "token"
    token.write_text(submitter_token(control_plane))
    conf: dict[str, Any] = {
        "spark.kubernetes.authenticate.submission.caCertFile": str(control_plane.ca_file),
        "spark.kubernetes.authenticate.submission.oauthTokenFile": str(token),
        "spark.kubernetes.namespace": meta["namespace"],
        "spark.kubernetes.submission.waitAppCompletion": "false",  # the controller follows the pod
        "spark.kubernetes.driver.pod.name": driver_pod_name(app),
        "spark.kubernetes.container.image": spec["image"],
        "spark.kubernetes.container.image.pullPolicy": spec.get("imagePullPolicy") or "IfNotPresent",
        "spark.kubernetes.authenticate.driver.serviceAccountName": driver.get("serviceAccount") or "default",
        "spark.kubernetes.authenticate.executor.serviceAccountName": executor.get("serviceAccount")
        or "default",
        "spark.driver.cores": driver.get("cores", 1),
        "spark.driver.memory": driver.get("memory", "1g"),
        "spark.executor.instances": executor.get("instances", 1),
        "spark.executor.cores": executor.get("cores", 1),
        "spark.executor.memory": executor.get("memory", "1g"),
    }
    for role, pod in (("driver", driver), ("executor", executor)):
        labels = {**(pod.get("labels") or {}), APP_NAME_LABEL: meta["name"]}
        conf |= {f"spark.kubernetes.{role}.label.{key}": value for key, value in labels.items()}
        template = folder / f"{role}-template.yaml"
        template.write_text(yaml.safe_dump(_template(pod), sort_keys=False))
        conf[f"spark.kubernetes.{role}.podTemplateFile"] = str(template)
    conf |= spec.get("sparkConf") or {}
    conf |= {f"spark.hadoop.{key}": value for key, value in (spec.get("hadoopConf") or {}).items()}
    return [
        str(spark_home() / "bin" / "spark-submit"),
        "--master", f"k8s://{control_plane.server}",
        "--deploy-mode", "cluster",
        "--name", meta["name"],
        *[arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")],
        spec["mainApplicationFile"],
        *(spec.get("arguments") or []),
    ]  # fmt: skip


def environment(folder: Path) -> dict[str, str]:
    """spark-submit's environment: only what the command line says. No kubeconfig of the machine's user,
    and no Python of this machine (spark-submit would hand PYSPARK_PYTHON on to the driver)."""
    kept = {
        key: os.environ[key] for key in ("PATH", "HOME", "JAVA_HOME", "LANG", "TMPDIR") if key in os.environ
    }
    return {**kept, "SPARK_HOME": str(spark_home()), "KUBECONFIG": str(folder / "no-kubeconfig")}


def spark_home() -> Path:
    """PySpark's Spark (the tests' own), as the Spark Operator's image carries one."""
    spec = find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise RuntimeError("PySpark is not installed")
    return Path(spec.origin).parent


def container(app: dict[str, Any], role: str) -> dict[str, Any]:
    """The driver's or executor's container in the application's pod template (``role``: driver or
    executor): what Spark starts that pod's container from."""
    [only] = app["spec"][role]["template"]["spec"]["containers"]
    return only  # type: ignore[no-any-return]


def _template(pod: dict[str, Any]) -> dict[str, Any]:
    """The application's pod template, as the controller writes it for spark-submit."""
    return {"apiVersion": "v1", "kind": "Pod", **(pod.get("template") or {"spec": {"containers": [{}]}})}

"""The real Kubeflow Spark Operator (v2.5.2, built from ../shared/vendor) submits the SparkApplication our
operator renders, and the driver pod it has Spark create is the one the stand-in's spark-submit creates:
same image, account, security context, environment, Secrets, placement and our labels. So the
process-based scenarios, which run the stand-in, run what the real controller would run."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import real_spark_operator
from kubernetes import client

import spark_submit
from control_plane import ControlPlane
from harness import until
from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator import naming
from hudi_bucket_operator.decisions import SubmitJob
from hudi_bucket_operator.job_policy import JobDefaults
from hudi_bucket_operator.placement import PodPlacement, Toleration
from hudi_bucket_operator.render import render_spark_application
from hudi_bucket_operator.spec import API_VERSION, KIND, parse_spec
from spark_operator import GROUP, PLURAL, VERSION

REAL, STAND_IN = "real-spark-operator", "stand-in-spark-operator"
ACCOUNT = "hudi-bucket-jobs"
UID = "7d0c2f4e-1b8a-4c55-9e61-3f2a5b9c0d17"
SPEC = {
    "table": {"uri": "s3a://lake/orders"},
    "buckets": {"default": 4, "rules": [{"pattern": "day=2025-11-11", "buckets": 8}]},
    "spark": {"envFromSecrets": [{"name": "lake-s3"}]},
}
DEFAULTS = JobDefaults(
    image="hudi-bucket-operator-job:e2e",
    allowed_secrets={"*": ("lake-s3",)},
    driver_pod=PodPlacement(
        tolerations=(Toleration(key="spark", operator="Exists", effect="NoSchedule"),),
        annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
    ),
)


def application(namespace: str) -> dict[str, Any]:
    """The plan job's SparkApplication of table ``orders`` in ``namespace`` (without its owner, whom the
    garbage collector would look for)."""
    table = {"apiVersion": API_VERSION, "kind": KIND, "spec": SPEC,
             "metadata": {"name": "orders", "namespace": namespace, "uid": UID, "generation": 1}}  # fmt: skip
    spec = parse_spec(SPEC)
    job = SubmitJob(spec.job_request(JobKind.PLAN, ""), 1, "", 0)
    name = naming.job_name("orders", UID, "plan", 1, "", "")
    app = render_spark_application(table=table, job=job, spark=spec.spark, job_name=name, defaults=DEFAULTS)
    del app["metadata"]["ownerReferences"]
    return app


def what_matters(pod: client.V1Pod) -> dict[str, Any]:
    """The driver pod as the job sees it: everything but names and ids the submission makes up."""
    [container] = pod.spec.containers
    ours = {k: v for k, v in (pod.metadata.labels or {}).items() if k.startswith("hudi.bucketops.io/")}
    return {
        "container": container.name,
        "image": container.image,
        "account": pod.spec.service_account_name,
        "securityContext": container.security_context.to_dict(),
        "envFrom": [source.to_dict() for source in container.env_from or []],
        "POD_NAMESPACE": [e.value_from.to_dict() for e in container.env or [] if e.name == "POD_NAMESPACE"],
        "tolerations": [t.to_dict() for t in pod.spec.tolerations or [] if t.key == "spark"],
        "annotations": {k: v for k, v in (pod.metadata.annotations or {}).items() if "autoscaler" in k},
        "labels": ours,
        "requests": container.resources.requests,
    }


def test_the_real_controller_has_spark_create_the_driver_pod_the_stand_in_creates(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    problem = real_spark_operator.build_problem()
    if problem:
        pytest.skip(problem)
    core = client.CoreV1Api(control_plane.api_client())
    for namespace in (REAL, STAND_IN):
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
        core.create_namespaced_service_account(
            namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=ACCOUNT))
        )
    controller = real_spark_operator.SparkOperator(control_plane, tmp_path / "real", [REAL]).start()
    try:
        real = application(REAL)
        apps = client.CustomObjectsApi(control_plane.api_client())
        apps.create_namespaced_custom_object(GROUP, VERSION, REAL, PLURAL, real)
        driver = spark_submit.driver_pod_name(real)

        def submitted() -> client.V1Pod | None:
            assert controller.running(), f"the controller exited; its log: {controller.log()[-3000:]}"
            found = core.list_namespaced_pod(REAL, field_selector=f"metadata.name={driver}").items
            return found[0] if found else None

        by_controller = until(
            submitted, 180, lambda: f"the real controller to submit; its log: {controller.log()[-3000:]}"
        )
        state = until(
            lambda: (apps.get_namespaced_custom_object(GROUP, VERSION, REAL, PLURAL, real["metadata"]["name"])
                     .get("status", {}).get("applicationState", {}).get("state")),
            60, "the application's state",
        )  # fmt: skip
        assert state in ("SUBMITTED", "RUNNING"), state

        stand_in = application(STAND_IN)
        folder = tmp_path / "stand-in"
        folder.mkdir()
        argv = spark_submit.command(stand_in, control_plane, folder)
        done = subprocess.run(
            argv, env=spark_submit.environment(folder), capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        by_stand_in = core.read_namespaced_pod(spark_submit.driver_pod_name(stand_in), STAND_IN)

        assert what_matters(by_controller) == what_matters(by_stand_in)
        assert what_matters(by_controller)["envFrom"] == [
            {"config_map_ref": None, "prefix": None, "secret_ref": {"name": "lake-s3", "optional": None}}
        ]
        assert what_matters(by_controller)["tolerations"]
    finally:
        controller.stop()

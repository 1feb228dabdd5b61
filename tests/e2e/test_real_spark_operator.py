"""The real Kubeflow Spark Operator (v2.5.2, built from ../shared/vendor) submits the SparkApplication our
operator renders, and the driver pod it has Spark create is the one the stand-in's spark-submit creates:
same image, account, security context, environment, Secrets, placement and our labels. So the
process-based scenarios, which run the stand-in, run what the real controller would run."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import real_spark_operator
from kubernetes import client

import spark_submit
from control_plane import ControlPlane
from harness import until
from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator.decide.decisions import JobPhase, SubmitJob
from hudi_bucket_operator.decide.render import render_spark_application
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.placement import PodPlacement, Toleration
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import API_VERSION, KIND
from hudi_bucket_operator.resource.spec import parse_spec
from hudi_bucket_operator.runtime.backends import observed_job
from spark_operator import GROUP, PLURAL, VERSION

REAL, STAND_IN, REFUSED = "real-spark-operator", "stand-in-spark-operator", "refused-spark-operator"
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


def test_a_submission_the_cluster_refuses_fails_with_its_reason_and_goes_after_its_time_to_live(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """No jobs' ServiceAccount in the namespace: the API server refuses the driver pod, so spark-submit
    fails. Under our restartPolicy Never the controller submits once, sets SUBMISSION_FAILED with
    spark-submit's words, then FAILED (the words kept), and deletes the application its
    timeToLiveSeconds after that. Our operator reads either state as a failed job, saying why."""
    problem = real_spark_operator.build_problem()
    if problem:
        pytest.skip(problem)
    core = client.CoreV1Api(control_plane.api_client())
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=REFUSED)))
    controller = real_spark_operator.SparkOperator(control_plane, tmp_path, [REFUSED]).start()
    try:
        app = application(REFUSED)
        app["spec"]["timeToLiveSeconds"] = 3
        name = app["metadata"]["name"]
        apps = client.CustomObjectsApi(control_plane.api_client())
        apps.create_namespaced_custom_object(GROUP, VERSION, REFUSED, PLURAL, app)
        states: list[str] = []

        def current() -> dict[str, Any] | None:
            assert controller.running(), f"the controller exited; its log: {controller.log()[-3000:]}"
            try:
                found: dict[str, Any] = apps.get_namespaced_custom_object(
                    GROUP, VERSION, REFUSED, PLURAL, name
                )
            except client.ApiException as err:
                if err.status == 404:
                    return None
                raise
            state = found.get("status", {}).get("applicationState", {}).get("state", "")
            if not states or states[-1] != state:
                states.append(state)
            return found

        def ended() -> dict[str, Any] | None:
            found = current()
            return found if found and states[-1] in ("SUBMISSION_FAILED", "FAILED") else None

        first = until(
            ended, 120, lambda: f"a failed submission, states {states}; log: {controller.log()[-3000:]}"
        )
        failed = until(lambda: (found := current()) and states[-1] == "FAILED" and found, 60, "FAILED")
        assert failed["status"]["submissionAttempts"] == 1  # never submitted again
        error = failed["status"]["applicationState"]["errorMessage"]
        assert f'serviceaccount "{ACCOUNT}" not found' in error, error
        for seen in (first, failed):
            seen["metadata"]["ownerReferences"] = [{"kind": KIND, "uid": UID}]  # as ours carry them
            observed = observed_job(seen)
            assert observed is not None
            assert observed[1].phase is JobPhase.FAILED
            assert observed[1].error == error
        # Gone its timeToLiveSeconds after it ended (the report ConfigMap, owned by the table, stays).
        ended_at = datetime.fromisoformat(failed["status"]["terminationTime"].replace("Z", "+00:00"))
        until(lambda: current() is None, 60, "the controller to delete it after its time to live")
        assert datetime.now(UTC) - ended_at >= timedelta(seconds=3)
    finally:
        controller.stop()

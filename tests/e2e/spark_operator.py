"""A test-only stand-in for the Kubeflow Spark Operator's controller.

It watches SparkApplications (by polling the real API server) and runs each new one once, as a local
`hudi-bucket-job` process with the application's own arguments, "in a pod" of the application's driver
ServiceAccount (see pods.py): so the job writes its report into the ConfigMap with that account's
token, and the chart's job Role is what allows it. It writes status as the real controller does:
SUBMITTED, RUNNING, then COMPLETED, or FAILED with an errorMessage.

What the real controller and the kubelet make of the rest of the spec, it does too: the driver's
``envFrom`` Secrets become the job's environment (read from the API server, as the kubelet reads them),
``sparkConf`` and ``hadoopConf`` (as ``spark.hadoop.*``) its Spark settings, and the jars the job image
carries (S3A's, and our commit protocol's) are on its classpath.

On a node, the real controller runs them (real_spark_operator: tests/e2e/test_jobs_in_pods.py), and
test_real_spark_operator.py checks that the driver pod it has Spark create is the one spark-submit creates
from what the stand-in is given.

``hold()`` keeps new applications SUBMITTED (not started) until ``release()``: a job in flight, for as
long as a test needs one.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

import pods
import spark_submit
from control_plane import ControlPlane
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV
from lib.paths import hudi_bundle, jvm_jar, s3a_jars

GROUP, VERSION, PLURAL = "sparkoperator.k8s.io", "v1beta2", "sparkapplications"
MANAGED_BY = "app.kubernetes.io/managed-by=hudi-bucket-operator"


@dataclass
class Run:
    namespace: str
    name: str
    arguments: list[str]
    log: Path
    exit_code: int | None = None
    states: list[str] = field(default_factory=list)
    pid: int | None = None  # its process, leader of its own process group (the JVM is in it too)
    seconds: float | None = None  # from start to exit


class SparkOperatorStandIn:
    def __init__(self, control_plane: ControlPlane, work_dir: Path, poll_seconds: float = 0.3) -> None:
        self.control_plane = control_plane
        self.work_dir = work_dir
        self.poll_seconds = poll_seconds
        self.runs: dict[str, Run] = {}  # by application uid: each application runs once
        self._api = client.CustomObjectsApi(control_plane.api_client())
        self._core = client.CoreV1Api(control_plane.api_client())
        self._gate = threading.Event()
        self._gate.set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="spark-operator-stand-in", daemon=True)
        self._workers: list[threading.Thread] = []

    def start(self) -> SparkOperatorStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Safe before ``start()`` too (a test's setup failing first)."""
        self._stop.set()
        self._gate.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=10)
        for worker in self._workers:
            worker.join(timeout=120)

    def hold(self) -> None:
        self._gate.clear()

    def release(self) -> None:
        self._gate.set()

    def runs_in(self, namespace: str) -> list[Run]:
        return [run for run in self.runs.values() if run.namespace == namespace]

    def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                apps = self._api.list_cluster_custom_object(GROUP, VERSION, PLURAL, label_selector=MANAGED_BY)
            except client.ApiException:
                apps = {"items": []}  # the API server restarting, say: look again next time
            for app in apps.get("items") or []:
                uid = app["metadata"]["uid"]
                if uid not in self.runs and not (app.get("status") or {}).get("applicationState"):
                    self._start(uid, app)
            self._stop.wait(self.poll_seconds)

    def _start(self, uid: str, app: dict[str, Any]) -> None:
        meta = app["metadata"]
        run = Run(
            meta["namespace"], meta["name"], list(app["spec"].get("arguments") or []),
            self.work_dir / f"{meta['namespace']}-{meta['name']}.log",
        )  # fmt: skip
        self.runs[uid] = run
        worker = threading.Thread(target=self._run, args=(run, app), name=f"job-{meta['name']}", daemon=True)
        self._workers.append(worker)
        worker.start()

    def _run(self, run: Run, app: dict[str, Any]) -> None:
        self._set_state(run, "SUBMITTED")
        self._gate.wait()
        if self._stop.is_set() or not self._exists(run):  # deleted while held: never runs
            return
        self._run_locally(run, app)

    def _run_locally(self, run: Run, app: dict[str, Any]) -> None:
        service_account = app["spec"]["driver"].get("serviceAccount") or "default"
        try:
            files = pods.service_account_files(
                self.control_plane, run.namespace, service_account, self.work_dir / f"sa-{run.name}"
            )
        except client.ApiException as err:  # its namespace going away (a test's end), or no such account
            if self._exists(run):  # as the Spark Operator ends a failed submission under restartPolicy Never
                message = f"failed to submit spark application: {err.status} {err.reason}"
                self._set_state(run, "SUBMISSION_FAILED", message)
                self._set_state(run, "FAILED", message)
            return
        self._set_state(run, "RUNNING")
        command = [sys.executable, "-m", "hudi_bucket", *run.arguments, "--master", "local[1]"]
        env = {
            **_base_env(),
            **self._secret_env(run.namespace, app),
            "PYSPARK_SUBMIT_ARGS": _submit_args(app),
        }
        started = time.monotonic()
        with run.log.open("wb") as log:
            process = subprocess.Popen(
                pods.pod_command(command),
                env={**env, **pods.pod_env(self.control_plane, files)},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a test may signal the whole job (os.killpg) as a kubelet would
            )
            run.pid = process.pid
            process.wait()
        run.seconds = time.monotonic() - started
        run.exit_code = process.returncode
        if process.returncode == 0:
            self._set_state(run, "COMPLETED")
        else:
            message = f"driver container failed with ExitCode: {process.returncode}, Reason: Error"
            self._set_state(run, "FAILED", message)

    def _secret_env(self, namespace: str, app: dict[str, Any]) -> dict[str, str]:
        """The driver's ``envFrom`` Secrets, as the kubelet resolves them into a container's environment."""
        env = {}
        for source in spark_submit.container(app, "driver").get("envFrom") or []:
            secret = self._core.read_namespaced_secret(source["secretRef"]["name"], namespace)
            env.update({k: base64.b64decode(v).decode() for k, v in (secret.data or {}).items()})
        return env

    def _exists(self, run: Run) -> bool:
        try:
            self._api.get_namespaced_custom_object(GROUP, VERSION, run.namespace, PLURAL, run.name)
        except client.ApiException as err:
            if err.status == 404:
                return False
            raise
        return True

    def _set_state(self, run: Run, state: str, error: str = "") -> None:
        run.states.append(state)
        app_state: dict[str, Any] = {"state": state}
        if error:
            app_state["errorMessage"] = error
        status = {
            "applicationState": app_state,
            "driverInfo": {"podName": f"{run.name}-driver"},  # the CRD requires it
            "submissionAttempts": 1,
            "lastSubmissionAttemptTime": _now(),
        }
        try:
            self._api.patch_namespaced_custom_object_status(
                GROUP, VERSION, run.namespace, PLURAL, run.name, {"status": status}
            )
        except client.ApiException as err:
            if err.status != 404:  # deleted meanwhile (its table was): nothing to report to
                raise


def _base_env() -> dict[str, str]:
    import os

    # What the job image's environment holds (Dockerfile.job): it always names Hudi's bundle and our jar,
    # whether or not this pytest was started by ./dev (which exports them). And the class-data archive
    # ./dev test maps into every JVM (SPARK_SUBMIT_OPTS): how soon the job's JVM starts, not what it does.
    keep = ("PATH", "HOME", "JAVA_HOME", "LANG", "TMPDIR", "PYSPARK_PYTHON", "SPARK_SUBMIT_OPTS")
    image = {
        HUDI_BUNDLE_ENV: str(hudi_bundle()),
        JVM_JAR_ENV: str(jvm_jar()),
        # The jars the image carries in /opt/spark/jars, on the classpath from the start as those are (not
        # --jars, which would also replace the spark.jars a job's session asks for: Hudi's bundle, for the
        # Hudi engine). After Spark's own, so that the class-data archive's classpath stays its start.
        "SPARK_DIST_CLASSPATH": ":".join(str(jar) for jar in (*s3a_jars(), jvm_jar())),
    }
    return {**{key: os.environ[key] for key in keep if key in os.environ}, **image}


def _submit_args(app: dict[str, Any]) -> str:
    """spark-submit's arguments for the application's Spark and Hadoop settings."""
    spec = app["spec"]
    conf = {
        **(spec.get("sparkConf") or {}),
        **{f"spark.hadoop.{k}": v for k, v in (spec.get("hadoopConf") or {}).items()},
    }
    args = [f"--conf {key}={value}" for key, value in conf.items()]
    return " ".join([*args, "pyspark-shell"])


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

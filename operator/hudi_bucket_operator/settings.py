"""The operator's settings, from the environment (the Helm chart sets them)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hudi_bucket_operator.job_policy import JobDefaults
from hudi_bucket_operator.spec import Resources

# The Spark of the job image (Dockerfile.job), which the tests run on (constraints.txt pins its PySpark).
SPARK_VERSION = "3.5.8"


def _words(value: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in value.split(",") if w.strip())


@dataclass(frozen=True)
class OperatorConfig:
    backend: str = "sparkoperator"  # or "local"
    namespaces: tuple[str, ...] = ()  # empty: every namespace (cluster-wide)
    resync_seconds: float = 60.0  # every table is reconciled this often, events or not
    workers: int = 64  # tables reconciled at once (and API calls in flight)
    metrics_port: int = 8080
    kube_server: str = ""  # an API server URL without credentials (tests, kubectl proxy)
    local_state_dir: Path = Path(".hudi-bucket-operator")
    job_defaults: JobDefaults = field(
        default_factory=lambda: JobDefaults(
            image="hudi-bucket-operator-job:latest", spark_version=SPARK_VERSION
        )
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OperatorConfig:
        env = os.environ if env is None else env
        base = JobDefaults(image="hudi-bucket-operator-job:latest", spark_version=SPARK_VERSION)
        defaults = JobDefaults(
            image=env.get("HBO_JOB_IMAGE", base.image),
            spark_version=env.get("HBO_SPARK_VERSION", base.spark_version),
            service_account=env.get("HBO_JOB_SERVICE_ACCOUNT", base.service_account),
            main_application_file=env.get("HBO_MAIN_APPLICATION_FILE", base.main_application_file),
            ttl_seconds=int(env.get("HBO_JOB_TTL_SECONDS", base.ttl_seconds)),
            driver=Resources(
                cores=int(env.get("HBO_DRIVER_CORES", "1")), memory=env.get("HBO_DRIVER_MEMORY", "2g")
            ),
            executor=Resources(
                cores=int(env.get("HBO_EXECUTOR_CORES", "1")),
                memory=env.get("HBO_EXECUTOR_MEMORY", "2g"),
                instances=int(env.get("HBO_EXECUTOR_INSTANCES", "1")),
            ),
            allowed_images=_words(env.get("HBO_ALLOWED_IMAGES", "")),
            allowed_service_accounts=_words(env.get("HBO_ALLOWED_SERVICE_ACCOUNTS", "")),
            allowed_spark_conf=_words(env.get("HBO_ALLOWED_SPARK_CONF", "")),
            allowed_hadoop_conf=_words(env.get("HBO_ALLOWED_HADOOP_CONF", "")),
            image_pull_policy=env.get("HBO_IMAGE_PULL_POLICY", base.image_pull_policy),
            spark_conf=json.loads(env.get("HBO_SPARK_CONF", "{}")),  # a JSON object of string values
        )
        return cls(
            backend=env.get("HBO_JOB_BACKEND", "sparkoperator"),
            namespaces=_words(env.get("HBO_NAMESPACES", "")),
            resync_seconds=float(env.get("HBO_RESYNC_SECONDS", "60")),
            workers=int(env.get("HBO_WORKERS", "64")),
            metrics_port=int(env.get("HBO_METRICS_PORT", "8080")),
            kube_server=env.get("HBO_KUBE_SERVER", ""),
            local_state_dir=Path(env.get("HBO_LOCAL_STATE_DIR", ".hudi-bucket-operator")),
            job_defaults=defaults,
        )

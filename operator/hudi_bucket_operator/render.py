"""The SparkApplication (sparkoperator.k8s.io/v1beta2) that runs one job of a table (pure: no I/O).

Field names and shapes follow the Kubeflow Spark Operator's CRD; the tests validate every manifest
against that CRD's own schema. The job writes its report into a ConfigMap named like the application
(``--report configmap://<namespace>/<name>``), which the operator creates before submitting the job.

What a spec may change is bounded here: the image must be on the operator's allowlist, sparkConf cannot
override what the operator owns (image, namespace, pod templates, credentials of the API client), and
credentials never appear inline: Secrets are referenced by name (``envFrom``), never copied.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hudi_bucket_operator import naming
from hudi_bucket_operator.reconcile import SubmitJob
from hudi_bucket_operator.spec import API_VERSION, KIND, InvalidSpecError, Resources, SparkSettings

SPARK_API_VERSION = "sparkoperator.k8s.io/v1beta2"
SPARK_KIND = "SparkApplication"
REPORT_SCHEME = "configmap"

# Under the spec's sparkConf. The job sets the Parquet and time zone settings Hudi needs by itself.
DEFAULT_SPARK_CONF: Mapping[str, str] = {
    # Pinned: a cluster's spark-defaults must not race duplicate task attempts in a table rewrite.
    "spark.speculation": "false",
    # Progress bars garble driver logs, which is where people read why a job failed.
    "spark.ui.showConsoleProgress": "false",
}

# sparkConf keys the operator owns: each would bypass the image allowlist, the namespace, the service
# account or the pod the operator renders.
_RESERVED_CONF = re.compile(
    r"spark\.kubernetes\.(container\.image|driver\.container\.image|executor\.container\.image"
    r"|namespace|driver\.podTemplateFile|executor\.podTemplateFile|authenticate\..*)"
    r"|spark\.master|spark\.submit\.deployMode"
)
# Keys whose values are credentials: they belong in a Secret, not in a manifest.
_CREDENTIAL_KEY = re.compile(
    r"secret|password|passwd|access\.key|session\.token|account\.key|private\.key|sas\.token",
    re.IGNORECASE,
)
# What Spark's JavaUtils.byteStringAs reads: 512m, 2g, 4096 (bytes) ...; not Kubernetes' 2Gi.
_SPARK_MEMORY = re.compile(r"[0-9]+([kmgtp]b?|b)?", re.IGNORECASE)

_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


class ImageNotAllowedError(InvalidSpecError):
    """spec.spark.image is not on the operator's allowlist of job images."""

    hint = (
        "leave spec.spark.image empty for the operator's default image, use one under an allowed prefix, "
        "or ask the operator's admins to extend allowedImages (Helm values)"
    )


@dataclass(frozen=True)
class JobDefaults:
    """The operator's settings for every job (Helm values); a spec overrides the fields it sets.

    ``allowed_images`` are prefixes of images a spec may choose besides ``image``. A prefix matches at
    a boundary: ``registry.example/hudi-job`` allows ``registry.example/hudi-job:1.2`` and
    ``registry.example/hudi-job@sha256:...`` but not ``registry.example/hudi-job-other``.
    """

    image: str
    spark_version: str
    service_account: str = "hudi-bucket-jobs"
    main_application_file: str = "local:///opt/hudi-bucket-operator/main.py"
    ttl_seconds: int = 86400
    driver: Resources = field(default_factory=lambda: Resources(cores=1, memory="2g"))
    executor: Resources = field(default_factory=lambda: Resources(cores=1, memory="2g", instances=1))
    image_pull_policy: str = "IfNotPresent"
    allowed_images: tuple[str, ...] = ()
    spark_conf: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [
            name
            for name in ("image", "spark_version", "service_account", "main_application_file")
            if not getattr(self, name)
        ]
        if missing:
            raise ValueError(f"JobDefaults needs {', '.join(missing)} (the operator's Helm values)")
        if self.image_pull_policy not in ("Always", "IfNotPresent", "Never"):
            raise ValueError(
                f"JobDefaults.image_pull_policy {self.image_pull_policy!r} is not a Kubernetes one"
            )
        if self.ttl_seconds < 0:
            raise ValueError(f"JobDefaults.ttl_seconds must be >= 0, not {self.ttl_seconds}")


def image_allowed(image: str, defaults: JobDefaults) -> bool:
    """Whether a spec may run ``image``: the default image, or one under an allowed prefix."""
    if image == defaults.image:
        return True
    for prefix in defaults.allowed_images:
        if not prefix or not image.startswith(prefix):
            continue
        if len(image) == len(prefix) or prefix[-1] in "/:@" or image[len(prefix)] in "/:@":
            return True
    return False


def render_spark_application(
    *,
    table: Mapping[str, Any],
    job: SubmitJob,
    spark: SparkSettings,
    job_name: str,
    defaults: JobDefaults,
) -> dict[str, Any]:
    """The SparkApplication running ``job`` for ``table``, as ``spark`` (the spec's) and ``defaults``
    (the operator's) say.

    Raises ImageNotAllowedError for an image off the allowlist, else InvalidSpecError naming every
    other problem of spec.spark that keeps the job from running (the operator reports it as Stalled).
    """
    if len(job_name) > naming.MAX_NAME_LENGTH or not _DNS_1035.fullmatch(job_name):
        raise ValueError(f"{job_name!r} is not a job name (see naming.job_name)")
    meta = table["metadata"]
    name, namespace, uid, generation = meta["name"], meta["namespace"], meta["uid"], int(meta["generation"])
    image = spark.image or defaults.image
    if not image_allowed(image, defaults):
        raise ImageNotAllowedError(
            f"spec.spark.image {image!r} is not allowed: this operator runs its default image "
            f"{defaults.image!r} and images under the prefixes {list(defaults.allowed_images)}"
        )
    driver = spark.driver.over(defaults.driver)
    executor = spark.executor.over(defaults.executor)
    ttl = defaults.ttl_seconds if spark.ttl_seconds is None else spark.ttl_seconds
    problems = _conf_problems(spark) + _resource_problems(driver, executor, ttl)
    if problems:
        raise InvalidSpecError("; ".join(problems))

    labels = naming.child_labels(name, uid, job.kind.value, generation)
    service_account = spark.service_account or defaults.service_account
    pod_namespace = {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    request = replace(job.request, report=report_uri(namespace, job_name))
    return {
        "apiVersion": SPARK_API_VERSION,
        "kind": SPARK_KIND,
        "metadata": {
            "name": job_name,
            "namespace": namespace,
            "labels": labels,
            "annotations": naming.child_annotations(
                name, plan_id=job.approved_plan, retry_token=job.retry_token
            ),
            "ownerReferences": [owner_reference(table)],
        },
        "spec": {
            "type": "Python",
            "mode": "cluster",
            "image": image,
            "imagePullPolicy": defaults.image_pull_policy,
            "sparkVersion": spark.spark_version or defaults.spark_version,
            "mainApplicationFile": defaults.main_application_file,
            "arguments": request.to_argv(),
            "restartPolicy": {"type": "Never"},  # the operator decides retries (the retry annotation)
            "timeToLiveSeconds": ttl,
            "sparkConf": {**DEFAULT_SPARK_CONF, **defaults.spark_conf, **spark.spark_conf},
            "hadoopConf": dict(spark.hadoop_conf),
            "driver": {
                **_pod(driver, service_account, labels, spark.env_from_secrets),
                "env": [pod_namespace],
            },
            "executor": {
                **_pod(executor, service_account, labels, spark.env_from_secrets),
                "instances": executor.instances,
            },
        },
    }


def render_report_configmap(*, table: Mapping[str, Any], job: SubmitJob, job_name: str) -> dict[str, Any]:
    """The empty ConfigMap a job's report goes into, created before the job.

    The table owns it, not the SparkApplication: the report outlives the application's TTL, and the
    job's service account then only needs to patch it.
    """
    meta = table["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": job_name,
            "namespace": meta["namespace"],
            "labels": naming.child_labels(meta["name"], meta["uid"], job.kind.value, int(meta["generation"])),
            "annotations": naming.child_annotations(
                meta["name"], plan_id=job.approved_plan, retry_token=job.retry_token
            ),
            "ownerReferences": [owner_reference(table)],
        },
        "data": {},
    }


def report_uri(namespace: str, job_name: str) -> str:
    """Where a job writes its report: the ConfigMap named like the job (see report_sink in the job)."""
    return f"{REPORT_SCHEME}://{namespace}/{job_name}"


def owner_reference(table: Mapping[str, Any]) -> dict[str, Any]:
    """Makes the table own a child: deleting the table deletes its jobs and reports."""
    meta = table["metadata"]
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod(
    resources: Resources, service_account: str, labels: Mapping[str, str], secrets: tuple[str, ...]
) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "cores": resources.cores,
        "memory": resources.memory,
        "serviceAccount": service_account,
        "labels": dict(labels),
    }
    if secrets:  # by reference only: the Secret's data never enters the manifest
        pod["envFrom"] = [{"secretRef": {"name": secret}} for secret in secrets]
    return pod


def _conf_problems(spark: SparkSettings) -> list[str]:
    problems = []
    reserved = sorted(key for key in spark.spark_conf if _RESERVED_CONF.fullmatch(key))
    if reserved:
        problems.append(
            f"spec.spark.sparkConf must not set {reserved}: the operator sets them "
            "(use spec.spark.image and spec.spark.serviceAccount)"
        )
    for where, conf in (("sparkConf", spark.spark_conf), ("hadoopConf", spark.hadoop_conf)):
        inline = sorted(
            key for key in conf if _CREDENTIAL_KEY.search(key) and not key.startswith("spark.kubernetes.")
        )
        if inline:
            problems.append(
                f"spec.spark.{where} holds credentials {inline}: put them in a Secret and name it in "
                "spec.spark.envFromSecrets (e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3a)"
            )
    return problems


def _resource_problems(driver: Resources, executor: Resources, ttl: object) -> list[str]:
    problems = []
    for where, res in (("driver", driver), ("executor", executor)):
        if isinstance(res.cores, bool) or not isinstance(res.cores, int) or res.cores < 1:
            problems.append(f"spec.spark.{where}.cores must be an integer >= 1, not {res.cores!r}")
        if not isinstance(res.memory, str) or not _SPARK_MEMORY.fullmatch(res.memory):
            problems.append(
                f"spec.spark.{where}.memory must be a Spark size such as 512m or 4g, not {res.memory!r}"
            )
    if (
        isinstance(executor.instances, bool)
        or not isinstance(executor.instances, int)
        or executor.instances < 1
    ):
        problems.append(f"spec.spark.executor.instances must be an integer >= 1, not {executor.instances!r}")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        problems.append(f"spec.spark.ttlSeconds must be an integer >= 0, not {ttl!r}")
    return problems

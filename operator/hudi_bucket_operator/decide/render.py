"""The SparkApplication (sparkoperator.k8s.io/v1beta2) that runs one job of a table (pure: no I/O).

Field names and shapes follow the Kubeflow Spark Operator's CRD; the tests validate every manifest
against that CRD's own schema. The job writes its report into a ConfigMap named like the application
(``--report configmap://<namespace>/<name>``), which the operator creates before submitting the job.

What a spec may change is bounded by ``job_policy``; credentials never appear inline: Secrets are
referenced by name (``envFrom``), never copied.

What the Spark Operator's controller cannot pass to spark-submit (the containers' security context,
environment and ``envFrom``, the admins' placement of the pods) goes into each pod's ``template``, which
the controller hands Spark as its pod template: so the pods are the same whether or not the Spark
Operator's optional webhook runs (it mutates only pods of applications without a driver template).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from hudi_bucket.contract.reports import ConfigMapReport, ReportOwner
from hudi_bucket_operator.decide.decisions import SubmitJob
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import job_settings
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import API_VERSION, KIND
from hudi_bucket_operator.resource.spec.spark import Resources, SparkSection

SPARK_API_VERSION = "sparkoperator.k8s.io/v1beta2"
SPARK_KIND = "SparkApplication"

# Under the admins' and the spec's sparkConf. The job sets the Parquet and time zone settings Hudi needs by
# itself.
DEFAULT_SPARK_CONF: Mapping[str, str] = {
    # Pinned: a cluster's spark-defaults must not race duplicate task attempts in a table rewrite.
    "spark.speculation": "false",
    # Progress bars garble driver logs, which is where people read why a job failed.
    "spark.ui.showConsoleProgress": "false",
}

# What Pod Security's ``restricted`` profile asks of every container, so that the driver and executor pods
# are admitted in namespaces that enforce it: the image's own non-root user (numeric, as Spark's images
# and ours have it), no privilege escalation, no capabilities, the runtime's default seccomp profile.
RESTRICTED_CONTAINER: Mapping[str, Any] = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}

# Spark's names for the containers it takes from a pod template (the controller names them in spark-submit).
DRIVER_CONTAINER = "spark-kubernetes-driver"
EXECUTOR_CONTAINER = "spark-kubernetes-executor"

_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def render_spark_application(
    *,
    table: Mapping[str, Any],
    job: SubmitJob,
    spark: SparkSection,
    job_name: str,
    defaults: JobDefaults,
) -> dict[str, Any]:
    """The SparkApplication running ``job`` for ``table``, as ``spark`` (the spec's) and ``defaults``
    (the operator's) say.

    Raises InvalidSpecError for settings ``job_settings`` refuses (``decide`` refused them before).
    """
    if len(job_name) > naming.MAX_NAME_LENGTH or not _DNS_1035.fullmatch(job_name):
        raise ValueError(f"{job_name!r} is not a job name (see naming.job_name)")
    meta = table["metadata"]
    name, namespace, uid, generation = meta["name"], meta["namespace"], meta["uid"], int(meta["generation"])
    settings = job_settings(spark, defaults)

    labels = naming.child_labels(name, uid, job.kind.value, generation)
    pod_namespace = {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    owner = ReportOwner(API_VERSION, KIND, name, uid)
    request = replace(job.request, report=ConfigMapReport(namespace, job_name, owner).uri)
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
            "image": settings.image,
            "imagePullPolicy": defaults.image_pull_policy,
            "sparkVersion": spark.spark_version or defaults.spark_version,
            "mainApplicationFile": defaults.main_application_file,
            "arguments": request.to_argv(),
            "restartPolicy": {"type": "Never"},  # the operator decides retries (the retry annotation)
            "timeToLiveSeconds": settings.ttl_seconds,
            "sparkConf": {**DEFAULT_SPARK_CONF, **defaults.spark_conf, **spark.spark_conf},
            "hadoopConf": dict(spark.hadoop_conf),
            "driver": _pod(
                settings.driver,
                settings.service_account,
                labels,
                defaults.driver_pod.template(
                    _container(DRIVER_CONTAINER, spark.secret_names, env=[pod_namespace]),
                    defaults.image_pull_secrets,
                ),
            ),
            "executor": {
                **_pod(
                    settings.executor,
                    settings.service_account,
                    labels,
                    defaults.executor_pod.template(
                        _container(EXECUTOR_CONTAINER, spark.secret_names), defaults.image_pull_secrets
                    ),
                ),
                "instances": settings.executor.instances,
            },
        },
    }


def owner_reference(table: Mapping[str, Any]) -> dict[str, Any]:
    """Makes the table own a child: deleting the table deletes its jobs (and their reports, see ReportOwner)."""
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
    resources: Resources, service_account: str, labels: Mapping[str, str], template: dict[str, Any]
) -> dict[str, Any]:
    return {
        "cores": resources.cores,
        "memory": resources.memory,
        "serviceAccount": service_account,
        "labels": dict(labels),
        "template": template,
    }


def _container(
    name: str, secrets: tuple[str, ...], env: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": name,
        "securityContext": copy.deepcopy(RESTRICTED_CONTAINER),  # each pod its own (callers may edit)
    }
    if env:
        container["env"] = env
    if secrets:  # by reference only: the Secret's data never enters the manifest
        container["envFrom"] = [{"secretRef": {"name": secret}} for secret in secrets]
    return container

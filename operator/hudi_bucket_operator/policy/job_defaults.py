"""The admins' settings for every job (Helm values ``jobs``; pure: no I/O): the default image, account,
resources and Spark settings a table's job gets, and the allow-lists and limits of what a table may ask
instead, each read from its environment variable. ``job_policy`` judges a spec against them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from hudi_bucket.core.sizing import format_size
from hudi_bucket_operator.policy.placement import PodPlacement
from hudi_bucket_operator.resource import images
from hudi_bucket_operator.resource.schedule import DURATION_FORMAT
from hudi_bucket_operator.resource.setting import (
    ByNamespace,
    Cores,
    Executors,
    Helm,
    Name,
    ObjectName,
    Shown,
    Words,
    json_text,
)
from hudi_bucket_operator.resource.spark_conf import MIB, PodMemory, Role, pod_memory, spark_bytes
from hudi_bucket_operator.resource.spec.fields import DURATION_PATTERN, check_duration, duration_seconds
from hudi_bucket_operator.resource.spec.problems import Expect
from hudi_bucket_operator.resource.spec.spark import MAX_TTL_SECONDS, Memory, Resources

_ACCOUNT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KEY_OR_PREFIX = re.compile(r"[^\s,]+")
ANY_NAMESPACE = "*"  # the key of the admins' per-namespace lists that holds what every namespace gets
# A table URI as Hadoop reads it: a scheme and what follows, or a local path. No whitespace, no control
# characters, no backslash.
TABLE_URI = re.compile(r"[^\s\\\x00-\x1f\x7f-\x9f]+")
SPARK_VERSION = "3.5.8"  # the Spark of the job image (Dockerfile.job; constraints.txt pins its PySpark)


PLACEMENT = (
    'a JSON object of Kubernetes pod fields: {"annotations": {}, "nodeSelector": {}, "tolerations": [], '
    '"affinity": {}, "priorityClassName": ""}'
)


def _placed(placement: PodPlacement) -> str:
    return json.dumps(placement.model_dump(by_alias=True, exclude_defaults=True, mode="json"))


Placement = Annotated[PodPlacement, BeforeValidator(json_text), Expect(PLACEMENT), Shown(_placed)]


class JobDefaults(BaseModel):
    """The operator's settings for every job (Helm values ``jobs``, each read from the environment
    variable its alias names); a spec overrides the fields it sets.

    ``allowed_images``: what a spec may choose besides ``image`` (see ``image_allowed``).
    ``allowed_service_accounts``: ServiceAccounts a spec may name besides ``service_account``.
    ``allowed_spark_conf``, ``allowed_hadoop_conf``: settings a spec may set besides the built-in
    allow-lists, each an exact key or a prefix ending in '.'; the owned settings stay refused, and a
    prefix admits no key the built-in lists refuse for a reason (only the exact key does).
    ``allowed_secrets``: the Secrets spec.spark.envFromSecrets may name, by namespace ('*': every one).
    ``allowed_table_uris``: prefixes of the table URIs a spec may name, by namespace ('*': every one);
    none until the admins name them (a tenant must not reach another's tables by default).
    ``max_*``: the largest driver and executors a spec may ask for (``max_driver``, ``max_executor``),
    their memory the pod's as Spark sizes it; the longest a finished job is kept; ``min_interval``, the
    shortest interval of a table's schedules (verify, re-planning).
    ``spark_conf``: the admins' own Spark settings for every job, under the spec's (not checked).
    ``driver_pod``, ``executor_pod``, ``image_pull_secrets``: where the jobs' pods run (``placement``).
    """

    # Lax: every value arrives as a string ("64" is the integer 64). Built by name in tests.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False)

    image: Annotated[
        Name,
        Field(alias="HBO_JOB_IMAGE", description="the jobs' image"),
        Helm("jobs.image"),  # repository, and tag (the chart's appVersion unless set)
    ] = "hudi-bucket-operator-job:latest"
    spark_version: Annotated[
        Name,
        Field(alias="HBO_SPARK_VERSION", description="the Spark of the jobs' image"),
        Helm("jobs.sparkVersion"),
    ] = SPARK_VERSION
    service_account: Annotated[
        ObjectName,
        Field(alias="HBO_JOB_SERVICE_ACCOUNT", description="the jobs' ServiceAccount"),
        Helm("jobs.serviceAccount.name"),
    ] = "hudi-bucket-jobs"
    main_application_file: Annotated[
        Name,
        Field(alias="HBO_MAIN_APPLICATION_FILE", description="the jobs' entry point in their image"),
        Helm("jobs.mainApplicationFile"),
    ] = "local:///opt/hudi-bucket-operator/main.py"
    ttl_seconds: Annotated[
        int,
        Field(
            alias="HBO_JOB_TTL_SECONDS",
            ge=0,
            le=MAX_TTL_SECONDS,
            description="how long a finished job's SparkApplication stays",
        ),
        Expect(f"an integer of seconds, 0 to {MAX_TTL_SECONDS} (a year)"),
        Helm("jobs.ttlSeconds"),
    ] = 86400
    driver_cores: Annotated[
        Cores, Field(alias="HBO_DRIVER_CORES", description="a job driver's cores"), Helm("jobs.driver.cores")
    ] = 1
    driver_memory: Annotated[
        Memory,
        Field(alias="HBO_DRIVER_MEMORY", description="a job driver's memory"),
        Helm("jobs.driver.memory"),
    ] = "2g"
    executor_instances: Annotated[
        Executors,
        Field(alias="HBO_EXECUTOR_INSTANCES", description="a job's executors"),
        Helm("jobs.executor.instances"),
    ] = 1
    executor_cores: Annotated[
        Cores,
        Field(alias="HBO_EXECUTOR_CORES", description="an executor's cores"),
        Helm("jobs.executor.cores"),
    ] = 1
    executor_memory: Annotated[
        Memory,
        Field(alias="HBO_EXECUTOR_MEMORY", description="an executor's memory"),
        Helm("jobs.executor.memory"),
    ] = "2g"
    image_pull_policy: Annotated[
        Literal["Always", "IfNotPresent", "Never"],
        Field(alias="HBO_IMAGE_PULL_POLICY", description="the jobs' image pull policy"),
        Expect("Always, IfNotPresent or Never"),
        Helm("jobs.image.pullPolicy"),
    ] = "IfNotPresent"
    allowed_images: Annotated[
        Words,
        Field(
            alias="HBO_ALLOWED_IMAGES",
            description="images a table's spec.spark.image may name besides the job image: repositories, prefixes ending in '/', exact references",
        ),
        Helm("jobs.allowedImages"),
    ] = ()
    allowed_service_accounts: Annotated[
        Words,
        Field(
            alias="HBO_ALLOWED_SERVICE_ACCOUNTS",
            description="ServiceAccounts a table's spec.spark.serviceAccount may name besides the jobs' own",
        ),
        Helm("jobs.allowedServiceAccounts"),
    ] = ()
    allowed_spark_conf: Annotated[
        Words,
        Field(
            alias="HBO_ALLOWED_SPARK_CONF",
            description="sparkConf keys (or prefixes ending in '.') a table may set beyond the built-in list",
        ),
        Helm("jobs.allowedSparkConf"),
    ] = ()
    allowed_hadoop_conf: Annotated[
        Words,
        Field(
            alias="HBO_ALLOWED_HADOOP_CONF",
            description="hadoopConf keys (or prefixes ending in '.') a table may set beyond the built-in list",
        ),
        Helm("jobs.allowedHadoopConf"),
    ] = ()
    allowed_secrets: Annotated[
        ByNamespace,
        Field(
            alias="HBO_ALLOWED_SECRETS",
            description="the Secrets a table's spec.spark.envFromSecrets may name, by namespace",
        ),
        Helm("jobs.allowedSecrets"),
    ] = {}
    allowed_table_uris: Annotated[
        ByNamespace,
        Field(
            alias="HBO_ALLOWED_TABLE_URIS",
            description="where tables may be, by namespace: URI prefixes (s3a://lake/team-a/, /data/)",
        ),
        Helm("jobs.allowedTableUris"),
    ] = {}
    max_ttl_seconds: Annotated[
        int,
        Field(
            alias="HBO_MAX_JOB_TTL_SECONDS",
            ge=0,
            le=MAX_TTL_SECONDS,
            description="the longest a table's spec.spark.ttlSeconds may keep a finished job's SparkApplication",
        ),
        Expect(f"an integer of seconds, 0 to {MAX_TTL_SECONDS} (a year)"),
        Helm("jobs.limits.ttlSeconds"),
    ] = 7 * 86400
    min_interval: Annotated[
        str,
        Field(
            alias="HBO_MIN_SCHEDULE_INTERVAL",
            pattern=DURATION_PATTERN,
            description="the shortest interval of a table's schedules: spec.verify.schedule (cron too) and "
            "spec.buckets.sizing.replanEvery; each run is a Spark job",
        ),
        AfterValidator(check_duration),
        Expect(DURATION_FORMAT),
        Helm("jobs.limits.minInterval"),
    ] = "1h"
    max_driver_cores: Annotated[
        Cores,
        Field(alias="HBO_MAX_DRIVER_CORES", description="the most cores a table's driver may ask for"),
        Helm("jobs.limits.driver.cores"),
    ] = 4
    max_driver_memory: Annotated[
        Memory,
        Field(
            alias="HBO_MAX_DRIVER_MEMORY",
            description="the most memory a table's driver pod may have: its heap and what Spark adds (overhead, off-heap, Python)",
        ),
        Helm("jobs.limits.driver.memory"),
    ] = "16g"
    max_executor_instances: Annotated[
        Executors,
        Field(alias="HBO_MAX_EXECUTOR_INSTANCES", description="the most executors a table's job may ask for"),
        Helm("jobs.limits.executor.instances"),
    ] = 50
    max_executor_cores: Annotated[
        Cores,
        Field(alias="HBO_MAX_EXECUTOR_CORES", description="the most cores a table's executor may ask for"),
        Helm("jobs.limits.executor.cores"),
    ] = 8
    max_executor_memory: Annotated[
        Memory,
        Field(
            alias="HBO_MAX_EXECUTOR_MEMORY",
            description="the most memory a table's executor pod may have: its heap and what Spark adds (overhead, off-heap, Python)",
        ),
        Helm("jobs.limits.executor.memory"),
    ] = "32g"
    spark_conf: Annotated[
        dict[str, Annotated[str, Field(strict=True)]],
        Field(
            alias="HBO_SPARK_CONF",
            description="the admins' own Spark settings for every job, under the spec's",
        ),
        BeforeValidator(json_text),
        Expect('a JSON object of strings, such as {"spark.ui.enabled": "false"}'),
        Helm("jobs.sparkConf"),
    ] = {}
    driver_pod: Annotated[
        Placement,
        Field(
            alias="HBO_DRIVER_POD",
            description="the job drivers' pods: annotations, nodeSelector, tolerations, affinity, priorityClassName",
        ),
        Helm("jobs.driver.pod"),
    ] = PodPlacement()
    executor_pod: Annotated[
        Placement,
        Field(
            alias="HBO_EXECUTOR_POD",
            description="the job executors' pods: annotations, nodeSelector, tolerations, affinity, priorityClassName",
        ),
        Helm("jobs.executor.pod"),
    ] = PodPlacement()
    image_pull_secrets: Annotated[
        Words,
        Field(
            alias="HBO_IMAGE_PULL_SECRETS",
            description="the Secrets the jobs' pods pull their image with, in each job namespace",
        ),
        Helm("jobs.imagePullSecrets"),
    ] = ()

    @property
    def driver(self) -> Resources:
        return Resources(cores=self.driver_cores, memory=self.driver_memory)

    @property
    def executor(self) -> Resources:
        return Resources(
            cores=self.executor_cores, memory=self.executor_memory, instances=self.executor_instances
        )

    @property
    def max_driver(self) -> Resources:
        return Resources(cores=self.max_driver_cores, memory=self.max_driver_memory)

    @property
    def max_executor(self) -> Resources:
        return Resources(
            cores=self.max_executor_cores,
            memory=self.max_executor_memory,
            instances=self.max_executor_instances,
        )

    @model_validator(mode="after")
    def _checked(self) -> JobDefaults:
        # What no one field's type says: each allowlist's entries, and the default job within the limits.
        secrets = [name for names in self.allowed_secrets.values() for name in names]
        bad = {
            "allowedImages": [e for e in self.allowed_images if not images.valid_entry(e)],
            "allowedServiceAccounts": [a for a in self.allowed_service_accounts if not _ACCOUNT.fullmatch(a)],
            "allowedSparkConf": [k for k in self.allowed_spark_conf if not _KEY_OR_PREFIX.fullmatch(k)],
            "allowedHadoopConf": [k for k in self.allowed_hadoop_conf if not _KEY_OR_PREFIX.fullmatch(k)],
            "allowedSecrets": [s for s in secrets if not _ACCOUNT.fullmatch(s)],
            "imagePullSecrets": [s for s in self.image_pull_secrets if not _ACCOUNT.fullmatch(s)],
            "allowedTableUris": [
                p
                for ps in self.allowed_table_uris.values()
                for p in ps
                if not TABLE_URI.fullmatch(p) or ".." in p or "${" in p
            ],
        }
        if problems := [f"jobs.{name} {entries}" for name, entries in bad.items() if entries]:
            raise ValueError(
                f"JobDefaults: {'; '.join(problems)}: not an image reference or prefix, a ServiceAccount "
                "or Secret name, a setting's key or prefix, or a URI prefix (the operator's Helm values)"
            )
        # The defaults a table gets when it says nothing must be within what a table may ask for.
        if problems := self.over_limits(self.driver, self.executor, ttl_seconds=self.ttl_seconds):
            raise ValueError(f"JobDefaults: the default job is over jobs.limits: {'; '.join(problems)}")
        return self

    def over_limits(
        self,
        driver: Resources,
        executor: Resources,
        spark_conf: Mapping[str, str] | None = None,
        ttl_seconds: int | None = None,
    ) -> list[str]:
        """Each way the driver or executors (their pods' memory as Spark sizes it with ``spark_conf``
        over the admins' own settings), or the time finished jobs are kept, exceed the admins' limits."""
        problems = []
        conf = {**self.spark_conf, **(spark_conf or {})}
        for role, asked, largest in (
            (Role.DRIVER, driver, self.max_driver),
            (Role.EXECUTOR, executor, self.max_executor),
        ):
            where = role.value
            if asked.cores is not None and largest.cores is not None and asked.cores > largest.cores:
                problems.append(f"spec.spark.{where}.cores {asked.cores} is over {largest.cores}")
            pod = pod_memory(role, asked.memory or "0", conf)
            limit = spark_bytes(largest.memory or "0", MIB)
            if pod is not None and limit is not None and pod.total > limit:
                problems.append(
                    f"spec.spark.{where}.memory {asked.memory} is over {largest.memory} with what Spark adds "
                    f"to its pod: {_said(pod)}"
                )
            if (
                asked.instances is not None
                and largest.instances is not None
                and asked.instances > largest.instances
            ):
                problems.append(f"spec.spark.{where}.instances {asked.instances} is over {largest.instances}")
        if ttl_seconds is not None and ttl_seconds > self.max_ttl_seconds:
            problems.append(f"spec.spark.ttlSeconds {ttl_seconds} is over {self.max_ttl_seconds}")
        return problems

    @property
    def min_interval_seconds(self) -> int:
        return duration_seconds(self.min_interval)


def _said(pod: PodMemory) -> str:
    parts = [
        ("heap", pod.heap),
        ("overhead", pod.overhead),
        ("off-heap", pod.off_heap),
        ("Python", pod.python),
    ]
    shown = " + ".join(f"{format_size(size)} {part}" for part, size in parts if size)
    return f"{shown} = {format_size(pod.total)}"

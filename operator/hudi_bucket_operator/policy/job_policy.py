"""What a spec may ask of the operator and its jobs (pure: no I/O).

Whoever may write a HudiBucketTable gets jobs whose pods the Spark Operator creates with its own, broader
rights, and an operator that pauses workloads for it; so a table gets only what its admins allow (Helm
values: ``JobDefaults`` for jobs, ``WriterPolicy`` for writers, together a ``Policy``):

- a table URI under a prefix the admins allow in its namespace (``uri_allowed``);
- an image: the default one, or one the image allowlist admits (``image_allowed``);
- a ServiceAccount: the default job account, or one the admins list;
- Spark and Hadoop settings: the tuning a rescale needs (spark_conf.py, each key with the values it
  takes), and what the admins add (exact keys, or prefixes ending in '.'); no ``${`` in any value;
- Secrets as the jobs' environment: only those the admins list for its namespace;
- resources within the admins' largest driver and executor;
- writers of kinds the admins declared, if they let the operator pause writers at all (writers.py).

Anything else is refused before a job exists: ``decide`` checks this before anything else (``admit``),
so a refused spec is one Stalled decision with one event naming what and why, and a writer it paused is
resumed first; the renderer resolves the same settings into the manifest. The settings no admin may
allow (``OWNED_SPARK_CONF``) are also refused at admission by the CRD's CEL rule on spec.spark.sparkConf;
a test keeps the two lists equal. What admins may allow must never be refused by CEL, or their extension
could not pass admission.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from hudi_bucket_operator.errors import (
    ImageNotAllowedError,
    ResourcesNotAllowedError,
    SecretNotAllowedError,
    ServiceAccountNotAllowedError,
    SettingNotAllowedError,
    TableUriNotAllowedError,
    WriterNotAllowedError,
)
from hudi_bucket_operator.policy.placement import PodPlacement
from hudi_bucket_operator.policy.writer_policy import WriterPolicy
from hudi_bucket_operator.resource import images
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
from hudi_bucket_operator.resource.spark_conf import (
    HADOOP_CONF_ALLOWED,
    MIB,
    OWNED_SPARK_CONF,
    SETTING_NAME,
    SPARK_CONF_ALLOWED,
    Role,
    Setting,
    first,
    reason_refused,
    spark_bytes,
)
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.resource.spec.problems import Expect
from hudi_bucket_operator.resource.spec.spark import MAX_TTL_SECONDS, Memory, Resources, SparkSection
from hudi_bucket_operator.resource.writers import WritersSpec

__all__ = [  # the lists, declared in spark_conf.py, as callers know them
    "HADOOP_CONF_ALLOWED",
    "OWNED_SPARK_CONF",
    "SPARK_CONF_ALLOWED",
]

_NOT_TUNING = "is not a tuning setting a table may set"
_NOT_A_KEY = "is no setting's name (printable ASCII without '=' or spaces): Spark would read another in it"
_SUBSTITUTION = (
    "holds '${', which Spark and Hadoop replace with the job's environment (its Secrets) or another setting"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_CHARACTERS = "holds control characters (a line break, a tab, ...)"

# Keys whose values are credentials: they belong in a Secret, not in a manifest, whoever allows what.
_CREDENTIAL_KEY = re.compile(
    r"secret|password|passwd|access\.key|session\.token|account\.key|private\.key|sas\.token",
    re.IGNORECASE,
)
_HADOOP_IN_SPARK = "spark.hadoop."  # Spark hands these to Hadoop without the prefix
_ACCOUNT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KEY_OR_PREFIX = re.compile(r"[^\s,]+")
ANY_NAMESPACE = "*"  # the key of the admins' per-namespace lists that holds what every namespace gets
# A table URI as Hadoop reads it: a scheme and what follows, or a local path. No whitespace, no control
# characters, no backslash.
_URI = re.compile(r"[^\s\\\x00-\x1f\x7f]+")
LOCAL_AND_S3A = ("s3a://", "/", "file:/")
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
    ``allowed_table_uris``: prefixes of the table URIs a spec may name, by namespace ('*': every one).
    ``max_*``: the largest driver and executors a spec may ask for (``max_driver``, ``max_executor``).
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
    ] = {ANY_NAMESPACE: LOCAL_AND_S3A}
    max_driver_cores: Annotated[
        Cores,
        Field(alias="HBO_MAX_DRIVER_CORES", description="the most cores a table's driver may ask for"),
        Helm("jobs.limits.driver.cores"),
    ] = 4
    max_driver_memory: Annotated[
        Memory,
        Field(alias="HBO_MAX_DRIVER_MEMORY", description="the most memory a table's driver may ask for"),
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
        Field(alias="HBO_MAX_EXECUTOR_MEMORY", description="the most memory a table's executor may ask for"),
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
                p for ps in self.allowed_table_uris.values() for p in ps if not _URI.fullmatch(p) or ".." in p
            ],
        }
        if problems := [f"jobs.{name} {entries}" for name, entries in bad.items() if entries]:
            raise ValueError(
                f"JobDefaults: {'; '.join(problems)}: not an image reference or prefix, a ServiceAccount "
                "or Secret name, a setting's key or prefix, or a URI prefix (the operator's Helm values)"
            )
        # The defaults a table gets when it says nothing must be within what a table may ask for.
        if problems := _over_limits(self.driver, self.executor, self):
            raise ValueError(f"JobDefaults: the default job is over jobs.limits: {'; '.join(problems)}")
        return self


def image_allowed(image: str, defaults: JobDefaults) -> bool:
    """Whether a spec may run ``image``: the default image, or one an entry of the allowlist admits
    (see ``images.admits`` for the rule)."""
    return image == defaults.image or any(images.admits(entry, image) for entry in defaults.allowed_images)


@dataclass(frozen=True)
class JobSettings:
    """What a job runs with: the spec's choices over the operator's defaults."""

    image: str
    service_account: str
    driver: Resources
    executor: Resources
    ttl_seconds: int


@dataclass(frozen=True)
class Policy:
    """Everything the admins decide about what tables may ask for: their jobs, and their writers."""

    jobs: JobDefaults = field(default_factory=JobDefaults)
    writers: WriterPolicy = field(default_factory=WriterPolicy)


@dataclass(frozen=True)
class Admitted:
    """A spec the policy admits: what its jobs run with, and its writers as the operator pauses them."""

    settings: JobSettings
    writers: WritersSpec


def admit(spec: TableSpec, namespace: str, policy: Policy) -> Admitted:
    """What this spec's jobs run with and its writers, or the first refusal: a table URI outside the
    allowed locations (TableUriNotAllowedError), then whatever ``job_settings`` refuses, then a Secret not
    allowed in the namespace (SecretNotAllowedError), then writers the admins do not let it pause
    (WriterNotAllowedError)."""
    settings = _job_settings_in(spec, namespace, policy.jobs)
    if problems := policy.writers.problems(spec.writer_refs):
        raise WriterNotAllowedError("; ".join(problems))
    return Admitted(settings, policy.writers.resolve(spec.writer_refs))


def _job_settings_in(spec: TableSpec, namespace: str, defaults: JobDefaults) -> JobSettings:
    if why := uri_refusal(spec.table.uri, allowed_in(defaults.allowed_table_uris, namespace)):
        raise TableUriNotAllowedError(f"spec.table.uri {why}")
    settings = job_settings(spec.spark, defaults)
    allowed = allowed_in(defaults.allowed_secrets, namespace)
    if refused := [name for name in spec.spark.secret_names if name not in allowed]:
        listed = f"only {list(allowed)}" if allowed else "none"
        raise SecretNotAllowedError(
            f"spec.spark.envFromSecrets names Secret(s) {refused} that tables in namespace {namespace!r} "
            f"may not use: the admins allow {listed}"
        )
    return settings


def job_settings(spark: SparkSection, defaults: JobDefaults) -> JobSettings:
    """The settings a job of this spec runs with, or the first of these that refuses it: an image off
    the allowlist (ImageNotAllowedError), a ServiceAccount not allowed (ServiceAccountNotAllowedError),
    Spark or Hadoop settings or values not allowed (SettingNotAllowedError, naming each key and why),
    resources over the admins' limits (ResourcesNotAllowedError)."""
    image = spark.image or defaults.image
    if not image_allowed(image, defaults):
        malformed = "" if images.reference(image) else " (not a lower-case image reference)"
        raise ImageNotAllowedError(
            f"spec.spark.image {image!r} is not allowed{malformed}: this operator runs its default "
            f"image {defaults.image!r} and the images its allowlist admits {list(defaults.allowed_images)}"
        )
    account = spark.service_account or defaults.service_account
    if account != defaults.service_account and account not in defaults.allowed_service_accounts:
        others = (
            f" and {list(defaults.allowed_service_accounts)}" if defaults.allowed_service_accounts else ""
        )
        raise ServiceAccountNotAllowedError(
            f"spec.spark.serviceAccount {account!r} is not allowed: jobs run as "
            f"{defaults.service_account!r}{others}"
        )
    if refused := refused_settings(spark, defaults):
        raise SettingNotAllowedError(f"spec.spark sets what a table may not: {'; '.join(refused)}")
    driver = spark.driver.resources().over(defaults.driver)
    executor = spark.executor.resources().over(defaults.executor)
    if problems := _over_limits(driver, executor, defaults):
        raise ResourcesNotAllowedError(
            f"spec.spark asks for more than the admins allow: {'; '.join(problems)}"
        )
    ttl = defaults.ttl_seconds if spark.ttl_seconds is None else spark.ttl_seconds
    return JobSettings(image, account, driver, executor, ttl)


def refused_settings(spark: SparkSection, defaults: JobDefaults) -> list[str]:
    """Each key of spec.spark.sparkConf and hadoopConf that a table may not set, or whose value it may
    not give, and why (naming the key, never the value)."""
    refused = [
        f"sparkConf[{key!r}] {why}"
        for key, value in sorted(spark.spark_conf.items())
        if (why := spark_conf_refusal(key, defaults) or _value_refusal(key, value, defaults))
    ]
    return refused + [
        f"hadoopConf[{key!r}] {why}"
        for key, value in sorted(spark.hadoop_conf.items())
        if (why := hadoop_conf_refusal(key, defaults) or _value_refusal(key, value, defaults, hadoop=True))
    ]


def spark_conf_refusal(key: str, defaults: JobDefaults) -> str:
    """Why a table may not set ``key`` in spec.spark.sparkConf ("" when it may)."""
    if not SETTING_NAME.fullmatch(key) or "${" in key:
        return _NOT_A_KEY
    if owned := first(OWNED_SPARK_CONF, key):
        return f"is set by the operator: {owned.why}"
    if key.startswith(_HADOOP_IN_SPARK) and key not in defaults.allowed_spark_conf:
        # A Hadoop setting, judged as one (allowedHadoopConf): an admin's sparkConf prefix (spark.,
        # spark.hadoop.) does not reach it; only the exact key listed in allowedSparkConf does.
        return hadoop_conf_refusal(key.removeprefix(_HADOOP_IN_SPARK), defaults)
    if _CREDENTIAL_KEY.search(key) and not key.startswith("spark.kubernetes."):
        return _CREDENTIAL
    if _admin_allows(defaults.allowed_spark_conf, key) or first(SPARK_CONF_ALLOWED, key):
        return ""
    return _refusal(key)


def hadoop_conf_refusal(key: str, defaults: JobDefaults) -> str:
    """Why a table may not set ``key`` in spec.spark.hadoopConf ("" when it may)."""
    if not SETTING_NAME.fullmatch(key) or "${" in key:
        return _NOT_A_KEY
    if _CREDENTIAL_KEY.search(key):
        return _CREDENTIAL
    if _admin_allows(defaults.allowed_hadoop_conf, key) or first(HADOOP_CONF_ALLOWED, key):
        return ""
    return _refusal(key)


def _value_refusal(key: str, value: str, defaults: JobDefaults, *, hadoop: bool = False) -> str:
    """Why a table may not give ``key`` (allowed) this value ("" when it may). Never says the value."""
    if "${" in value:
        return _SUBSTITUTION
    if _CONTROL.search(value):
        return _CONTROL_CHARACTERS
    if not hadoop and key.startswith(_HADOOP_IN_SPARK):
        key, hadoop = key.removeprefix(_HADOOP_IN_SPARK), True
    setting = first(HADOOP_CONF_ALLOWED if hadoop else SPARK_CONF_ALLOWED, key)
    expected = None if setting is None else setting.value
    if expected is None:  # an admin's key: its values are theirs to vouch for
        return ""
    if not expected.matches(value.strip()):
        return f"must be {expected.text}"
    if expected.memory_of is not None:
        largest = (defaults.max_driver if expected.memory_of is Role.DRIVER else defaults.max_executor).memory
        size, limit = spark_bytes(value.strip(), expected.default_shift), spark_bytes(largest or "0", MIB)
        if size is not None and limit is not None and size > limit:
            return f"must be no larger than {largest}, the largest {expected.memory_of} memory allowed"
    return ""


_CREDENTIAL = (
    "holds a credential: put it in a Secret and name it in spec.spark.envFromSecrets "
    "(e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3a)"
)


def _admin_allows(entries: tuple[str, ...], key: str) -> bool:
    """An admin's exact key admits it; a prefix admits it only if the built-in lists refuse it for no
    reason of their own (a mount, code, the pods, an endpoint, credentials need the exact key)."""
    if key in entries:
        return True
    return not reason_refused(key) and any(
        Setting(entry).covers(key) for entry in entries if entry.endswith(".")
    )


def _refusal(key: str) -> str:
    return reason_refused(key) or _NOT_TUNING


def _over_limits(driver: Resources, executor: Resources, defaults: JobDefaults) -> list[str]:
    """Each way the driver or executors exceed the admins' largest (jobs.limits)."""
    problems = []
    for where, asked, largest in (
        ("driver", driver, defaults.max_driver),
        ("executor", executor, defaults.max_executor),
    ):
        if asked.cores is not None and largest.cores is not None and asked.cores > largest.cores:
            problems.append(f"spec.spark.{where}.cores {asked.cores} is over {largest.cores}")
        size = spark_bytes(asked.memory or "0", MIB)
        limit = spark_bytes(largest.memory or "0", MIB)
        if size is not None and limit is not None and size > limit:
            problems.append(f"spec.spark.{where}.memory {asked.memory} is over {largest.memory}")
        if (
            asked.instances is not None
            and largest.instances is not None
            and asked.instances > largest.instances
        ):
            problems.append(f"spec.spark.{where}.instances {asked.instances} is over {largest.instances}")
    return problems


def allowed_in(by_namespace: Mapping[str, tuple[str, ...]], namespace: str) -> tuple[str, ...]:
    """What an admins' per-namespace list gives a namespace: its own entries and every namespace's."""
    return (*by_namespace.get(namespace, ()), *by_namespace.get(ANY_NAMESPACE, ()))


def uri_refusal(uri: str, prefixes: tuple[str, ...]) -> str:
    """Why a table may not be at ``uri`` ("" when it may): it must be under one of ``prefixes``, with no
    '.' or '..' segment (Hadoop would resolve it out of the prefix) and no credentials in it.

    A prefix ending in '/' admits what starts with it (``s3a://``, ``/``, ``s3a://lake/team-a/``); any
    other admits itself and what is under it (``s3a://lake/team-a`` admits ``s3a://lake/team-a/t``, not
    ``s3a://lake/team-ab``)."""
    if not _URI.fullmatch(uri):
        return "is not a path or URI Hadoop reads (whitespace, a backslash or a control character)"
    rest = uri.partition("://")[2]
    segments = (rest if rest else uri).split("/")
    if any(segment in (".", "..") for segment in segments):
        return "holds a '.' or '..' segment: give the table's path as it is"
    if rest and "@" in segments[0]:
        return "holds credentials before its host: put them in a Secret (spec.spark.envFromSecrets)"
    for prefix in prefixes:
        if uri.startswith(prefix if prefix.endswith("/") else prefix + "/") or uri == prefix:
            return ""
    where = f"under {list(prefixes)}" if prefixes else "nowhere (no location is allowed)"
    return f"{uri!r} is not where tables of this namespace may be: the admins allow them {where}"

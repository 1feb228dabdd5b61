"""What a spec may ask of the operator and its jobs (pure: no I/O).

Whoever may write a HudiBucketTable gets jobs whose pods the Spark Operator creates with its own, broader
rights, and an operator that pauses workloads for it; so a table gets only what its admins allow (Helm
values: ``job_defaults.JobDefaults`` for jobs, ``writer_policy.WriterPolicy`` for writers, together a
``Policy``):

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

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_bucket_operator.errors import (
    ImageNotAllowedError,
    ResourcesNotAllowedError,
    SecretNotAllowedError,
    ServiceAccountNotAllowedError,
    SettingNotAllowedError,
    TableUriNotAllowedError,
    WriterNotAllowedError,
)
from hudi_bucket_operator.policy.job_defaults import (
    ANY_NAMESPACE,
    TABLE_URI,
    JobDefaults,
)
from hudi_bucket_operator.policy.writer_policy import WriterPolicy
from hudi_bucket_operator.resource import images
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
from hudi_bucket_operator.resource.spec.spark import Resources, SparkSection
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
    if problems := defaults.over_limits(driver, executor):
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


def allowed_in(by_namespace: Mapping[str, tuple[str, ...]], namespace: str) -> tuple[str, ...]:
    """What an admins' per-namespace list gives a namespace: its own entries and every namespace's."""
    return (*by_namespace.get(namespace, ()), *by_namespace.get(ANY_NAMESPACE, ()))


def uri_refusal(uri: str, prefixes: tuple[str, ...]) -> str:
    """Why a table may not be at ``uri`` ("" when it may): it must be under one of ``prefixes``, with no
    '.' or '..' segment (Hadoop would resolve it out of the prefix) and no credentials in it.

    A prefix ending in '/' admits what starts with it (``s3a://``, ``/``, ``s3a://lake/team-a/``); any
    other admits itself and what is under it (``s3a://lake/team-a`` admits ``s3a://lake/team-a/t``, not
    ``s3a://lake/team-ab``)."""
    if not TABLE_URI.fullmatch(uri):
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

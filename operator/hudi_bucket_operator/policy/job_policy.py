"""What a spec may ask of the operator and its jobs (pure: no I/O).

Whoever may write a HudiBucketTable gets jobs whose pods the Spark Operator creates with its own, broader
rights, and an operator that pauses workloads for it; so a table gets only what its admins allow (Helm
values: ``job_defaults.JobDefaults`` for jobs, ``writer_policy.WriterPolicy`` for writers, together a
``Policy``):

- a table URI under a prefix the admins allow in its namespace (``uri_allowed``);
- an image: the default one, or one the image allowlist admits (``image_allowed``);
- a ServiceAccount: the default job account, or one the admins list;
- Spark and Hadoop settings: the tuning a rescale needs (spark_conf.py, each key with the values it
  takes), and what the admins add (exact keys, or prefixes ending in '.', which admit only the vetted
  ``PREFIX_ADMITS``); no ``${`` in any value;
- Secrets as the jobs' environment: only those the admins list for its namespace;
- pods within the admins' largest driver and executor, their memory as Spark sizes them (heap, overhead,
  off-heap, Python), and finished jobs kept no longer than the admins allow;
- schedules (verify, re-planning) no more often than the admins allow;
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
    ScheduleNotAllowedError,
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
    OWNED_SPARK_CONF,
    PREFIX_ADMITS,
    SETTING_NAME,
    SPARK_CONF_ALLOWED,
    Setting,
    first,
    reason_refused,
)
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.resource.spec.spark import Resources, SparkSection
from hudi_bucket_operator.resource.writers import WritersSpec

__all__ = [  # the lists, declared in spark_conf.py, as callers know them
    "HADOOP_CONF_ALLOWED",
    "OWNED_SPARK_CONF",
    "PREFIX_ADMITS",
    "SPARK_CONF_ALLOWED",
]

_NOT_TUNING = "is not a tuning setting a table may set"
_NOT_A_KEY = "is no setting's name (printable ASCII without '=' or spaces): Spark would read another in it"
_SUBSTITUTION = (
    "holds '${', which Spark and Hadoop replace with the job's environment (its Secrets) or another setting"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_CONTROL_CHARACTERS = "holds control characters (a line break, a tab, ...)"

# Keys whose values are credentials: they belong in a Secret, not in a manifest, whoever allows what.
_CREDENTIAL_KEY = re.compile(
    r"secret|password|passwd|access\.key|session\.token|account\.key|private\.key|sas\.token|encryption\.key",
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
    allowed in the namespace (SecretNotAllowedError), then schedules more frequent than the admins allow
    (ScheduleNotAllowedError), then writers the admins do not let it pause (WriterNotAllowedError)."""
    settings = _job_settings_in(spec, namespace, policy.jobs)
    if problems := schedule_problems(spec, policy.jobs.min_interval_seconds):
        raise ScheduleNotAllowedError(
            f"{'; '.join(problems)}: the admins allow a table's jobs at most every {policy.jobs.min_interval}"
        )
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


def schedule_problems(spec: TableSpec, shortest: int) -> list[str]:
    """Each schedule of ``spec`` that starts jobs less than ``shortest`` seconds apart."""
    problems = []
    if spec.verify_schedule is not None and spec.verify_schedule.shortest_interval() < shortest:
        every = spec.verify_schedule.shortest_interval()
        problems.append(f"spec.verify.schedule {spec.verify_schedule.text!r} runs a job every {every}s")
    if spec.replan_every is not None and spec.replan_every < shortest:
        problems.append(f"spec.buckets.sizing.replanEvery runs a job every {spec.replan_every}s")
    return problems


def job_settings(spark: SparkSection, defaults: JobDefaults) -> JobSettings:
    """The settings a job of this spec runs with, or the first of these that refuses it: an image off
    the allowlist (ImageNotAllowedError), a ServiceAccount not allowed (ServiceAccountNotAllowedError),
    Spark or Hadoop settings or values not allowed (SettingNotAllowedError, naming each key and why),
    pods or a time to keep finished jobs over the admins' limits (ResourcesNotAllowedError)."""
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
    ttl = defaults.ttl_seconds if spark.ttl_seconds is None else spark.ttl_seconds
    if problems := defaults.over_limits(driver, executor, spark.spark_conf, ttl):
        raise ResourcesNotAllowedError(
            f"spec.spark asks for more than the admins allow: {'; '.join(problems)}"
        )
    return JobSettings(image, account, driver, executor, ttl)


def refused_settings(spark: SparkSection, defaults: JobDefaults) -> list[str]:
    """Each key of spec.spark.sparkConf and hadoopConf that a table may not set, or whose value it may
    not give, and why (naming the key, never the value)."""
    refused = [
        f"sparkConf[{key!r}] {why}"
        for key, value in sorted(spark.spark_conf.items())
        if (why := spark_conf_refusal(key, defaults) or _value_refusal(key, value))
    ]
    return refused + [
        f"hadoopConf[{key!r}] {why}"
        for key, value in sorted(spark.hadoop_conf.items())
        if (why := hadoop_conf_refusal(key, defaults) or _value_refusal(key, value, hadoop=True))
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
    return _refusal(key, defaults.allowed_spark_conf)


def hadoop_conf_refusal(key: str, defaults: JobDefaults) -> str:
    """Why a table may not set ``key`` in spec.spark.hadoopConf ("" when it may)."""
    if not SETTING_NAME.fullmatch(key) or "${" in key:
        return _NOT_A_KEY
    if _CREDENTIAL_KEY.search(key):
        return _CREDENTIAL
    if _admin_allows(defaults.allowed_hadoop_conf, key) or first(HADOOP_CONF_ALLOWED, key):
        return ""
    return _refusal(key, defaults.allowed_hadoop_conf)


def _value_refusal(key: str, value: str, *, hadoop: bool = False) -> str:
    """Why a table may not give ``key`` (allowed) this value ("" when it may). Never says the value. What
    memory it adds to a pod is for ``JobDefaults.over_limits`` to sum."""
    if "${" in value:
        return _SUBSTITUTION
    if _CONTROL.search(value):
        return _CONTROL_CHARACTERS
    if not hadoop and key.startswith(_HADOOP_IN_SPARK):
        key, hadoop = key.removeprefix(_HADOOP_IN_SPARK), True
    setting = first((*(HADOOP_CONF_ALLOWED if hadoop else SPARK_CONF_ALLOWED), *PREFIX_ADMITS), key)
    expected = None if setting is None else setting.value
    if expected is None:  # an admin's exact key: its values are theirs to vouch for
        return ""
    return "" if expected.matches(value.strip()) else f"must be {expected.text}"


_CREDENTIAL = (
    "holds a credential: put it in a Secret and name it in spec.spark.envFromSecrets "
    "(e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3a)"
)


def _admin_allows(entries: tuple[str, ...], key: str) -> bool:
    """An admin's exact key admits it; a prefix admits only a key of ``PREFIX_ADMITS`` (vetted tuning)."""
    return key in entries or (
        first(PREFIX_ADMITS, key) is not None and bool(_prefixes_covering(entries, key))
    )


def _prefixes_covering(entries: tuple[str, ...], key: str) -> list[str]:
    return [entry for entry in entries if entry.endswith(".") and Setting(entry).covers(key)]


def _refusal(key: str, entries: tuple[str, ...]) -> str:
    if reason := reason_refused(key):
        return reason
    if covering := _prefixes_covering(entries, key):
        return (
            f"is not vetted tuning, the only kind the admins' prefix {covering[0]!r} admits (spark_conf.py's "
            "PREFIX_ADMITS): they may list its exact name"
        )
    return _NOT_TUNING


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
    if "${" in uri:
        return _SUBSTITUTION
    # Every segment, the authority's too: a '://' further in is part of a path, not a second scheme.
    if any(segment in (".", "..") for segment in uri.split("/")):
        return "holds a '.' or '..' segment: give the table's path as it is"
    scheme = _SCHEME.match(uri)
    if scheme is not None and "@" in uri[scheme.end() :].partition("/")[0]:
        return "holds credentials before its host: put them in a Secret (spec.spark.envFromSecrets)"
    for prefix in prefixes:
        if uri.startswith(prefix if prefix.endswith("/") else prefix + "/") or uri == prefix:
            return ""
    if not prefixes:
        return (
            f"{uri!r} is not where tables of this namespace may be: the admins allow them nowhere yet (no "
            "table is allowed until they name where each namespace's tables are: Helm values "
            "jobs.allowedTableUris, HBO_ALLOWED_TABLE_URIS)"
        )
    return (
        f"{uri!r} is not where tables of this namespace may be: the admins allow them under {list(prefixes)}"
    )

"""What a spec may ask of the operator's jobs (pure: no I/O).

Whoever may write a HudiBucketTable gets jobs whose pods the Spark Operator creates with its own, broader
rights; so a table gets only what its admins allow (Helm values, ``JobDefaults``):

- an image: the default one, or one the image allowlist admits (``image_allowed``);
- a ServiceAccount: the default job account, or one the admins list;
- Spark and Hadoop settings: the tuning a rescale needs (``SPARK_CONF_ALLOWED``, ``HADOOP_CONF_ALLOWED``),
  and what the admins add (exact keys, or prefixes ending in '.');
- sane resources.

Anything else is refused before a job exists: ``decide`` checks this before it chooses to run a job, so a
refused spec is one Stalled decision with one event naming what and why; the renderer resolves the same
settings into the manifest. The settings no admin may allow (``OWNED_SPARK_CONF``) are also refused at
admission by the CRD's CEL rule on spec.spark.sparkConf; a test keeps the two lists equal. What admins
may allow must never be refused by CEL, or their extension could not pass admission.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_bucket_operator import images
from hudi_bucket_operator.spec import InvalidSpecError, Resources, SparkSettings


@dataclass(frozen=True)
class Setting:
    """Spark or Hadoop settings by name: one exact key, or every key under a prefix ending in '.'."""

    key: str
    why: str = ""

    def covers(self, key: str) -> bool:
        return key.startswith(self.key) if self.key.endswith(".") else key == self.key


def _settings(why: str, *keys: str) -> tuple[Setting, ...]:
    return tuple(Setting(key, why) for key in keys)


def _first(settings: tuple[Setting, ...], key: str) -> Setting | None:
    return next((setting for setting in settings if setting.covers(key)), None)


# What a table may set in spec.spark.sparkConf: the tuning a rescale needs, and nothing that loads code,
# shapes the pods, moves files or points the job elsewhere. Exact keys: a prefix such as spark.sql.adaptive.
# would also admit a class name (spark.sql.adaptive.customCostEvaluatorClass).
SPARK_CONF_ALLOWED: tuple[Setting, ...] = (
    *_settings(
        "how the rewrite's reads and shuffles are split",
        "spark.sql.shuffle.partitions",
        "spark.default.parallelism",
        "spark.sql.files.maxPartitionBytes",
        "spark.sql.files.openCostInBytes",
        "spark.sql.files.minPartitionNum",
        "spark.sql.autoBroadcastJoinThreshold",
        "spark.sql.broadcastTimeout",
    ),
    *_settings(
        "adaptive query execution: how shuffle partitions are coalesced and skew is split",
        "spark.sql.adaptive.enabled",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes",
        "spark.sql.adaptive.coalescePartitions.enabled",
        "spark.sql.adaptive.coalescePartitions.parallelismFirst",
        "spark.sql.adaptive.coalescePartitions.minPartitionSize",
        "spark.sql.adaptive.coalescePartitions.initialPartitionNum",
        "spark.sql.adaptive.skewJoin.enabled",
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
        "spark.sql.adaptive.localShuffleReader.enabled",
        "spark.sql.adaptive.autoBroadcastJoinThreshold",
        "spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled",
        "spark.sql.adaptive.rebalancePartitionsSmallPartitionFactor",
    ),
    *_settings(
        "Parquet and compression of what the job reads, writes and shuffles",
        "spark.sql.parquet.compression.codec",
        "spark.sql.parquet.enableVectorizedReader",
        "spark.sql.parquet.columnarReaderBatchSize",
        "spark.sql.parquet.filterPushdown",
        "spark.io.compression.codec",
        "spark.io.compression.zstd.level",
        "spark.io.compression.lz4.blockSize",
        "spark.shuffle.compress",
        "spark.shuffle.spill.compress",
        "spark.rdd.compress",
    ),
    *_settings(
        "memory of the driver and executors beyond spec.spark's sizes: overheads and fractions",
        "spark.driver.memoryOverhead",
        "spark.executor.memoryOverhead",
        "spark.driver.memoryOverheadFactor",
        "spark.executor.memoryOverheadFactor",
        "spark.kubernetes.memoryOverheadFactor",
        "spark.executor.pyspark.memory",
        "spark.memory.fraction",
        "spark.memory.storageFraction",
        "spark.memory.offHeap.enabled",
        "spark.memory.offHeap.size",
        "spark.driver.maxResultSize",
    ),
    *_settings(
        "timeouts and retries of a long rewrite",
        "spark.network.timeout",
        "spark.executor.heartbeatInterval",
        "spark.task.maxFailures",
    ),
    # hudi_bucket.storage.native_s3.SWITCH (a test keeps them equal; the operator imports no storage).
    Setting("spark.hudibucket.s3.nativeListing", "the jobs' own switch: list S3 through S3A"),
)

# What a table may set in spec.spark.hadoopConf (and sparkConf's spark.hadoop.*): S3A's performance
# settings and Parquet's layout. No credentials, no credential provider, no endpoint, proxy or TLS
# switch: those say whose data the job reaches and how, which only admins may allow.
HADOOP_CONF_ALLOWED: tuple[Setting, ...] = (
    *_settings(
        "S3A's connection pool and threads",
        "fs.s3a.connection.maximum",
        "fs.s3a.threads.max",
        "fs.s3a.threads.keepalivetime",
        "fs.s3a.max.total.tasks",
        "fs.s3a.executor.capacity",
    ),
    *_settings(
        "S3A's timeouts and retries",
        "fs.s3a.connection.timeout",
        "fs.s3a.connection.establish.timeout",
        "fs.s3a.connection.request.timeout",
        "fs.s3a.attempts.maximum",
        "fs.s3a.retry.limit",
        "fs.s3a.retry.interval",
        "fs.s3a.retry.throttle.limit",
        "fs.s3a.retry.throttle.interval",
    ),
    *_settings(
        "S3A's uploads, reads and listings",
        "fs.s3a.multipart.size",
        "fs.s3a.multipart.threshold",
        "fs.s3a.block.size",
        "fs.s3a.fast.upload.buffer",
        "fs.s3a.fast.upload.active.blocks",
        "fs.s3a.readahead.range",
        "fs.s3a.experimental.input.fadvise",
        "fs.s3a.paging.maximum",
        "fs.s3a.socket.send.buffer",
        "fs.s3a.socket.recv.buffer",
        "fs.s3a.list.version",
        "fs.s3a.directory.marker.retention",
    ),
    *_settings(
        "how S3A addresses the store's own endpoint (a region of it, path-style requests)",
        "fs.s3a.endpoint.region",
        "fs.s3a.path.style.access",
    ),
    *_settings(
        "Parquet's row groups, pages and dictionaries",
        "parquet.block.size",
        "parquet.page.size",
        "parquet.dictionary.page.size",
        "parquet.enable.dictionary",
    ),
)

# sparkConf keys the operator sets for every job: no table may set them and no admin may allow them. The
# CRD's CEL rule on spec.spark.sparkConf refuses exactly these at admission.
OWNED_SPARK_CONF: tuple[Setting, ...] = (
    *_settings(
        "the image is spec.spark.image, which the image allowlist checks",
        "spark.kubernetes.container.image",
        "spark.kubernetes.driver.container.image",
        "spark.kubernetes.executor.container.image",
    ),
    Setting("spark.kubernetes.namespace", "a job runs in its table's namespace"),
    Setting(
        "spark.kubernetes.authenticate.",
        "the job's identity is spec.spark.serviceAccount, which the allowed accounts check",
    ),
    *_settings(
        "the operator renders the job's pods",
        "spark.kubernetes.driver.podTemplateFile",
        "spark.kubernetes.executor.podTemplateFile",
        "spark.kubernetes.driver.podTemplateContainerName",
        "spark.kubernetes.executor.podTemplateContainerName",
        "spark.kubernetes.driver.pod.name",
    ),
    *_settings(
        "the Spark Operator submits the job to Kubernetes in cluster mode",
        "spark.master",
        "spark.submit.deployMode",
    ),
)

# Why a key off the allow-lists is refused, for the message (the first that covers it).
_REFUSED_BECAUSE: tuple[Setting, ...] = (
    *_settings(
        "mounts volumes into the job's pods, the node's own folders among them",
        "spark.kubernetes.driver.volumes.",
        "spark.kubernetes.executor.volumes.",
    ),
    *_settings(
        "mounts a Secret into the job's pods (name Secrets in spec.spark.envFromSecrets instead)",
        "spark.kubernetes.driver.secrets.",
        "spark.kubernetes.executor.secrets.",
        "spark.kubernetes.driver.secretKeyRef.",
        "spark.kubernetes.executor.secretKeyRef.",
    ),
    *_settings(
        "sets environment variables of the job's pods",
        "spark.kubernetes.driverEnv.",
        "spark.executorEnv.",
    ),
    *_settings(
        "chooses the nodes the job's pods run on",
        "spark.kubernetes.node.selector.",
        "spark.kubernetes.driver.node.selector.",
        "spark.kubernetes.executor.node.selector.",
    ),
    Setting("spark.kubernetes.", "shapes the job's pods, which the operator renders"),
    *_settings(
        "loads code into the job",
        "spark.jars",
        "spark.jars.",
        "spark.files",
        "spark.archives",
        "spark.submit.pyFiles",
        "spark.driver.extraClassPath",
        "spark.executor.extraClassPath",
        "spark.driver.extraLibraryPath",
        "spark.executor.extraLibraryPath",
        "spark.plugins",
        "spark.sql.extensions",
    ),
    *_settings(
        "passes options to the job's JVMs (an agent, system properties)",
        "spark.driver.extraJavaOptions",
        "spark.executor.extraJavaOptions",
        "spark.driver.defaultJavaOptions",
        "spark.executor.defaultJavaOptions",
    ),
    *_settings(
        "points S3A at another server, or changes how it connects",
        "fs.s3a.endpoint",
        "fs.s3a.connection.ssl.enabled",
        "fs.s3a.proxy.",
    ),
    *_settings(
        "chooses whose credentials the job uses",
        "fs.s3a.aws.credentials.provider",
        "fs.s3a.assumed.role.",
    ),
    Setting(
        "fs.s3a.bucket.",
        "is a per-bucket S3A setting (a job reads one table: set the fs.s3a. setting itself)",
    ),
)
_NOT_TUNING = "is not a tuning setting a table may set"
# A setting's name: printable ASCII without '=' or spaces. The Spark Operator passes each setting as
# `--conf key=value`, so a key holding '=' names another setting (spark.master=k8s://... under an admin's
# prefix "spark."). The CRD's CEL rules refuse other keys at admission too.
_KEY = re.compile(r"[!-<>-~]+")
_NOT_A_KEY = "is no setting's name (printable ASCII without '=' or spaces): Spark would read another in it"

# Keys whose values are credentials: they belong in a Secret, not in a manifest, whoever allows what.
_CREDENTIAL_KEY = re.compile(
    r"secret|password|passwd|access\.key|session\.token|account\.key|private\.key|sas\.token",
    re.IGNORECASE,
)
_HADOOP_IN_SPARK = "spark.hadoop."  # Spark hands these to Hadoop without the prefix
# What Spark's JavaUtils.byteStringAs reads: 512m, 2g, 4096 (bytes) ...; not Kubernetes' 2Gi.
_SPARK_MEMORY = re.compile(r"[0-9]+([kmgtp]b?|b)?", re.IGNORECASE)
_ACCOUNT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KEY_OR_PREFIX = re.compile(r"[^\s,]+")
_WIDEN = "jobs.allowedSparkConf and jobs.allowedHadoopConf (Helm values)"


class ImageNotAllowedError(InvalidSpecError):
    """spec.spark.image is not on the operator's allowlist of job images."""

    hint = (
        "leave spec.spark.image empty for the operator's default image, use one the allowlist admits, "
        "or ask the operator's admins to extend allowedImages (Helm values)"
    )


class ServiceAccountNotAllowedError(InvalidSpecError):
    """spec.spark.serviceAccount is neither the operator's job account nor one its admins allow."""

    hint = (
        "leave spec.spark.serviceAccount empty for the operator's job account, or ask the operator's "
        "admins to list this one in jobs.allowedServiceAccounts (Helm values)"
    )


class SettingNotAllowedError(InvalidSpecError):
    """spec.spark sets Spark or Hadoop settings a table may not set."""

    hint = (
        "remove them from spec.spark; the operator's admins may allow settings the operator does not set "
        f"and that hold no credential, as exact keys or prefixes ending in '.', in {_WIDEN}"
    )


@dataclass(frozen=True)
class JobDefaults:
    """The operator's settings for every job (Helm values); a spec overrides the fields it sets.

    ``allowed_images``: what a spec may choose besides ``image`` (see ``image_allowed``).
    ``allowed_service_accounts``: ServiceAccounts a spec may name besides ``service_account``.
    ``allowed_spark_conf``, ``allowed_hadoop_conf``: settings a spec may set besides the built-in
    allow-lists, each an exact key or a prefix ending in '.'; the owned settings stay refused.
    ``spark_conf``: the admins' own Spark settings for every job, under the spec's (not checked).
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
    allowed_service_accounts: tuple[str, ...] = ()
    allowed_spark_conf: tuple[str, ...] = ()
    allowed_hadoop_conf: tuple[str, ...] = ()
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
        bad = {
            "allowedImages": [e for e in self.allowed_images if not images.valid_entry(e)],
            "allowedServiceAccounts": [a for a in self.allowed_service_accounts if not _ACCOUNT.fullmatch(a)],
            "allowedSparkConf": [k for k in self.allowed_spark_conf if not _KEY_OR_PREFIX.fullmatch(k)],
            "allowedHadoopConf": [k for k in self.allowed_hadoop_conf if not _KEY_OR_PREFIX.fullmatch(k)],
        }
        if problems := [f"jobs.{name} {entries}" for name, entries in bad.items() if entries]:
            raise ValueError(
                f"JobDefaults: {'; '.join(problems)}: not an image reference or prefix, a ServiceAccount "
                "name, or a setting's key or prefix (the operator's Helm values)"
            )


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


def job_settings(spark: SparkSettings, defaults: JobDefaults) -> JobSettings:
    """The settings a job of this spec runs with, or the first of these that refuses it: an image off
    the allowlist (ImageNotAllowedError), a ServiceAccount not allowed (ServiceAccountNotAllowedError),
    Spark or Hadoop settings not allowed (SettingNotAllowedError, naming each key and why), else
    InvalidSpecError naming every problem of spec.spark's resources."""
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
    driver = spark.driver.over(defaults.driver)
    executor = spark.executor.over(defaults.executor)
    ttl = defaults.ttl_seconds if spark.ttl_seconds is None else spark.ttl_seconds
    if problems := _resource_problems(driver, executor, ttl):
        raise InvalidSpecError("; ".join(problems))
    return JobSettings(image, account, driver, executor, ttl)


def refused_settings(spark: SparkSettings, defaults: JobDefaults) -> list[str]:
    """Each key of spec.spark.sparkConf and hadoopConf that a table may not set, and why."""
    refused = [
        f"sparkConf[{key!r}] {why}"
        for key in sorted(spark.spark_conf)
        if (why := spark_conf_refusal(key, defaults))
    ]
    return refused + [
        f"hadoopConf[{key!r}] {why}"
        for key in sorted(spark.hadoop_conf)
        if (why := hadoop_conf_refusal(key, defaults))
    ]


def spark_conf_refusal(key: str, defaults: JobDefaults) -> str:
    """Why a table may not set ``key`` in spec.spark.sparkConf ("" when it may)."""
    if not _KEY.fullmatch(key):
        return _NOT_A_KEY
    if owned := _first(OWNED_SPARK_CONF, key):
        return f"is set by the operator: {owned.why}"
    if key.startswith(_HADOOP_IN_SPARK) and not _admin_allows(defaults.allowed_spark_conf, key):
        return hadoop_conf_refusal(key.removeprefix(_HADOOP_IN_SPARK), defaults)
    if _CREDENTIAL_KEY.search(key) and not key.startswith("spark.kubernetes."):
        return _CREDENTIAL
    if _admin_allows(defaults.allowed_spark_conf, key) or _first(SPARK_CONF_ALLOWED, key):
        return ""
    return _refusal(key)


def hadoop_conf_refusal(key: str, defaults: JobDefaults) -> str:
    """Why a table may not set ``key`` in spec.spark.hadoopConf ("" when it may)."""
    if not _KEY.fullmatch(key):
        return _NOT_A_KEY
    if _CREDENTIAL_KEY.search(key):
        return _CREDENTIAL
    if _admin_allows(defaults.allowed_hadoop_conf, key) or _first(HADOOP_CONF_ALLOWED, key):
        return ""
    return _refusal(key)


_CREDENTIAL = (
    "holds a credential: put it in a Secret and name it in spec.spark.envFromSecrets "
    "(e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3a)"
)


def _admin_allows(entries: tuple[str, ...], key: str) -> bool:
    return any(Setting(entry).covers(key) for entry in entries)


def _refusal(key: str) -> str:
    known = _first(_REFUSED_BECAUSE, key)
    return known.why if known else _NOT_TUNING


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

"""The Spark and Hadoop settings a table may set, each with why and the values it takes (pure: no I/O).

A table sets tuning, never what loads code, shapes the job's pods, moves files or points the job
elsewhere. Each allowed key is exact (a prefix would admit whatever Spark or Hadoop add under it later,
a class name, a path) and has a type: a value outside it is refused naming the key and what it must be,
never the value, which might be a credential pasted by mistake. No value of any key may hold ``${``:
Spark replaces ``${env:NAME}`` and Hadoop ``${env.NAME}`` with the job's environment, which holds the
Secrets named in spec.spark.envFromSecrets, and a value that fails to parse is echoed in the job's error.
Values are read as Spark reads them, in ASCII only: Java lower-cases the KELVIN SIGN to 'k', so a size
such as ``40000000\u212a`` that a Unicode-aware check skips would be 38 GiB to Spark.

An admin's prefix (Helm values jobs.allowedSparkConf, jobs.allowedHadoopConf) admits only the keys of
``PREFIX_ADMITS``, tuning vetted one by one; any other key needs its exact name in the admins' list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

# Spark's units of JavaUtils.byteStringAs (lower case: it lowers the text first).
_SPARK_UNITS = {"": 0, "b": 0, "k": 10, "kb": 10, "m": 20, "mb": 20, "g": 30, "gb": 30}
_SPARK_UNITS |= {"t": 40, "tb": 40, "p": 50, "pb": 50}
# Any case, as Spark reads it; at most 15 digits, so that no size overflows a long.
SPARK_SIZE = re.compile(r"([0-9]{1,15})([kKmMgGtTpP][bB]?|[bB])?")
# A setting's name: printable ASCII without '=' or spaces. The Spark Operator passes each setting as
# `--conf key=value`, so a key holding '=' names another setting.
SETTING_NAME = re.compile(r"[!-<>-~]+")


def spark_bytes(text: str, default_shift: int = 0) -> int | None:
    """The bytes of a size in Spark's format (``512m``, ``2g``; a bare number in the setting's default
    unit, 2**``default_shift`` bytes), or None if it is not one."""
    match = SPARK_SIZE.fullmatch(text)
    if match is None:
        return None
    unit = (match.group(2) or "").lower()
    return int(match.group(1)) << (_SPARK_UNITS[unit] if unit else default_shift)


MIB = 20  # the default unit of Spark's memory settings (spark.driver.memory, ...Overhead)


class Role(StrEnum):
    """Whose pod a memory setting adds to, bounded by the admins' largest driver or executor."""

    DRIVER = "driver"
    EXECUTOR = "executor"


@dataclass(frozen=True)
class Value:
    """What a setting's value must be: ``pattern`` (whole, case-insensitive, ASCII), said as ``text``; a
    number within ``low``..``high``."""

    text: str
    pattern: str
    example: str
    low: float | None = None
    high: float | None = None

    def matches(self, value: str) -> bool:
        # ASCII only, as Spark and Hadoop read it: under re.IGNORECASE alone 'k' would match U+212A.
        if not value.isascii() or re.fullmatch(self.pattern, value, re.IGNORECASE | re.ASCII) is None:
            return False
        if self.low is None and self.high is None:
            return True
        number = float(value)
        return (self.low is None or number >= self.low) and (self.high is None or number <= self.high)


def integer(low: int, high: int) -> Value:
    return Value(f"an integer in {low}..{high}", r"[0-9]{1,10}", str(max(low, 1)), low, high)


def number(low: float, high: float) -> Value:
    pattern = r"[0-9]{1,6}(\.[0-9]{1,6})?|\.[0-9]{1,6}"
    return Value(f"a number in {low:g}..{high:g}", pattern, f"{(low + high) / 2:g}", low, high)


def one_of(*values: str) -> Value:
    return Value(f"one of {', '.join(values)}", "|".join(re.escape(v) for v in values), values[-1])


def memory(role: Role) -> Value:
    """A size that adds to a pod's memory, which ``pod_memory`` sums."""
    text = f"a size in Spark's format (e.g. 512m or 2g), its {role} pod within the largest allowed"
    return Value(text, SPARK_SIZE.pattern, "512m")


# How Spark 3.5 sizes a job's pods on Kubernetes (BasicDriverFeatureStep, BasicExecutorFeatureStep and
# ResourceProfile.getResourcesForClusterManager): the heap; an overhead, its own setting or else a factor
# of the heap and at least 384 MiB (the factor 0.4 for a non-JVM job, as the jobs are PySpark, unless
# set); for an executor, its off-heap memory when enabled and its Python workers' memory.
_OVERHEAD_MIN = 384 << MIB
_DECIMAL = re.compile(r"[0-9]{1,9}(\.[0-9]{0,9})?|\.[0-9]{1,9}")
_PYTHON_OVERHEAD_FACTOR = 0.4


@dataclass(frozen=True)
class PodMemory:
    """The memory of a driver's or executor's pod, in bytes, as Spark asks Kubernetes for it."""

    heap: int
    overhead: int
    off_heap: int = 0
    python: int = 0

    @property
    def total(self) -> int:
        return self.heap + self.overhead + self.off_heap + self.python


def pod_memory(role: Role, heap: str, conf: Mapping[str, str]) -> PodMemory | None:
    """The pod a driver or executor of ``heap`` (spark.<role>.memory) gets with the Spark settings
    ``conf``, or None when ``heap`` is no size. A setting that does not parse counts as unset (a table's
    are checked before; Spark would refuse it)."""
    heap_bytes = spark_bytes(heap, MIB)
    if heap_bytes is None:
        return None

    def size(key: str, default_shift: int = MIB) -> int | None:
        text = conf.get(key)
        return None if text is None else spark_bytes(text.strip(), default_shift)

    def factor(key: str) -> float | None:
        text = conf.get(key, "").strip()
        return float(text) if _DECIMAL.fullmatch(text) else None

    overhead = size(f"spark.{role}.memoryOverhead")
    if overhead is None:
        factors = (
            factor(f"spark.{role}.memoryOverheadFactor"),
            factor("spark.kubernetes.memoryOverheadFactor"),
        )
        chosen = next((f for f in factors if f is not None), _PYTHON_OVERHEAD_FACTOR)
        overhead = max(int(chosen * (heap_bytes >> MIB)) << MIB, _OVERHEAD_MIN)
    if role is Role.DRIVER:
        return PodMemory(heap_bytes, overhead)
    off_heap_on = conf.get("spark.memory.offHeap.enabled", "").strip().lower() == "true"
    off_heap = (size("spark.memory.offHeap.size", 0) or 0) if off_heap_on else 0
    return PodMemory(heap_bytes, overhead, off_heap, size("spark.executor.pyspark.memory") or 0)


BOOLEAN = Value("true or false", "true|false", "true")
SIZE = Value("a size in Spark's format, e.g. 128m or 64k", SPARK_SIZE.pattern, "128m")
SIZE_OR_OFF = Value("a size in Spark's format (e.g. 10m), or -1 for none", rf"-1|{SPARK_SIZE.pattern}", "-1")
DURATION = Value(
    "a duration in Spark's format, e.g. 120s, 5min or 1h", r"[0-9]{1,12}(us|ms|s|m|min|h|d)?", "120s"
)
HADOOP_SIZE = Value("a size in Hadoop's format, e.g. 64M or 128K", r"[0-9]{1,15}[kmgtpe]?", "64M")
HADOOP_DURATION = Value(
    "a duration in Hadoop's format, e.g. 500ms, 60s or 5m", r"[0-9]{1,12}(ns|us|ms|s|m|h|d)?", "500ms"
)
HADOOP_INT = integer(0, 2**31 - 1)
COUNT = integer(1, 1_000_000)
FRACTION = number(0, 1)
REGION = Value("a region name, e.g. eu-west-1", r"[a-z0-9][a-z0-9-]{0,62}", "eu-west-1")


@dataclass(frozen=True)
class Setting:
    """Spark or Hadoop settings by name: one exact key, or every key under a prefix ending in '.'; with
    why a table may set it (or may not), and the values it takes (None: not checked)."""

    key: str
    why: str = ""
    value: Value | None = None

    def covers(self, key: str) -> bool:
        return key.startswith(self.key) if self.key.endswith(".") else key == self.key


def _group(why: str, *settings: tuple[str, Value]) -> tuple[Setting, ...]:
    return tuple(Setting(key, why, value) for key, value in settings)


def _settings(why: str, *keys: str) -> tuple[Setting, ...]:
    return tuple(Setting(key, why) for key in keys)


def first(settings: tuple[Setting, ...], key: str) -> Setting | None:
    return next((setting for setting in settings if setting.covers(key)), None)


# A key whose value names a class (or a script) for Spark or Hadoop to load: fs.s3a.impl,
# fs.s3a.s3.client.factory.impl, spark.sql.sources.commitProtocolClass, parquet.*.class, a signer, ...
CLASS_KEY = re.compile(
    r"(?i)(\.impl|class|classes|classname|factory|provider|providers|codecs?|signers?|listeners?|plugins?|"
    r"extensions|registrator|script|module|serializer|handlers)$|\.impl\."
)
LOADS_CODE = "names a class or a program for the job to load (it loads code into the job)"
# A key whose value is an address the job would reach: spark.repl.class.uri, spark.ui.reverseProxyUrl, ...
ADDRESS_KEY = re.compile(r"(?i)(uri|url|urls|address|host)$")
REACHES_OUT = "names an address the job would reach (a remote server, or code or data fetched from it)"


def reason_refused(key: str) -> str:
    """Why the built-in lists refuse ``key`` for a reason of their own ("" when only for not being
    tuning): for the message, as no admin's prefix admits a key off ``PREFIX_ADMITS`` anyway."""
    known = first(REFUSED_BECAUSE, key)
    if known is not None:
        return known.why
    if CLASS_KEY.search(key):
        return LOADS_CODE
    return REACHES_OUT if ADDRESS_KEY.search(key) else ""


# What a table may set in spec.spark.sparkConf.
SPARK_CONF_ALLOWED: tuple[Setting, ...] = (
    *_group(
        "how the rewrite's reads and shuffles are split",
        ("spark.sql.shuffle.partitions", COUNT),
        ("spark.default.parallelism", COUNT),
        ("spark.sql.files.maxPartitionBytes", SIZE),
        ("spark.sql.files.openCostInBytes", SIZE),
        ("spark.sql.files.minPartitionNum", COUNT),
        ("spark.sql.autoBroadcastJoinThreshold", SIZE_OR_OFF),
        ("spark.sql.broadcastTimeout", DURATION),
    ),
    *_group(
        "adaptive query execution: how shuffle partitions are coalesced and skew is split",
        ("spark.sql.adaptive.enabled", BOOLEAN),
        ("spark.sql.adaptive.advisoryPartitionSizeInBytes", SIZE),
        ("spark.sql.adaptive.coalescePartitions.enabled", BOOLEAN),
        ("spark.sql.adaptive.coalescePartitions.parallelismFirst", BOOLEAN),
        ("spark.sql.adaptive.coalescePartitions.minPartitionSize", SIZE),
        ("spark.sql.adaptive.coalescePartitions.initialPartitionNum", COUNT),
        ("spark.sql.adaptive.skewJoin.enabled", BOOLEAN),
        ("spark.sql.adaptive.skewJoin.skewedPartitionFactor", number(1, 1000)),
        ("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", SIZE),
        ("spark.sql.adaptive.localShuffleReader.enabled", BOOLEAN),
        ("spark.sql.adaptive.autoBroadcastJoinThreshold", SIZE_OR_OFF),
        ("spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled", BOOLEAN),
        ("spark.sql.adaptive.rebalancePartitionsSmallPartitionFactor", FRACTION),
    ),
    *_group(
        "Parquet and compression of what the job reads, writes and shuffles",
        (
            "spark.sql.parquet.compression.codec",
            one_of("none", "uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "lz4_raw", "zstd"),
        ),
        ("spark.sql.parquet.enableVectorizedReader", BOOLEAN),
        ("spark.sql.parquet.columnarReaderBatchSize", COUNT),
        ("spark.sql.parquet.filterPushdown", BOOLEAN),
        # Spark takes any other value as a class name to load.
        ("spark.io.compression.codec", one_of("lz4", "lzf", "snappy", "zstd")),
        ("spark.io.compression.zstd.level", integer(1, 22)),
        ("spark.io.compression.lz4.blockSize", SIZE),
        ("spark.shuffle.compress", BOOLEAN),
        ("spark.shuffle.spill.compress", BOOLEAN),
        ("spark.rdd.compress", BOOLEAN),
    ),
    *_group(
        "memory of the driver and executors beyond spec.spark's sizes: overheads and fractions",
        ("spark.driver.memoryOverhead", memory(Role.DRIVER)),
        ("spark.executor.memoryOverhead", memory(Role.EXECUTOR)),
        ("spark.driver.memoryOverheadFactor", FRACTION),
        ("spark.executor.memoryOverheadFactor", FRACTION),
        ("spark.kubernetes.memoryOverheadFactor", FRACTION),
        ("spark.executor.pyspark.memory", memory(Role.EXECUTOR)),
        ("spark.memory.fraction", FRACTION),
        ("spark.memory.storageFraction", FRACTION),
        ("spark.memory.offHeap.enabled", BOOLEAN),
        ("spark.memory.offHeap.size", memory(Role.EXECUTOR)),  # a bare number: bytes (pod_memory)
        ("spark.driver.maxResultSize", SIZE),
    ),
    *_group(
        "timeouts and retries of a long rewrite",
        ("spark.network.timeout", DURATION),
        ("spark.executor.heartbeatInterval", DURATION),
        ("spark.task.maxFailures", integer(1, 100)),
    ),
    # hudi_bucket.storage.native_s3.SWITCH (a test keeps them equal; the operator imports no storage).
    Setting("spark.hudibucket.s3.nativeListing", "the jobs' own switch: list S3 through S3A", BOOLEAN),
)

# What a table may set in spec.spark.hadoopConf (and sparkConf's spark.hadoop.*): S3A's performance
# settings and Parquet's layout, typed as Hadoop 3.3.4 (the job image's) reads them. No credentials, no
# credential provider, no endpoint, proxy or TLS switch: those say whose data the job reaches and how.
HADOOP_CONF_ALLOWED: tuple[Setting, ...] = (
    *_group(
        "S3A's connection pool and threads",
        ("fs.s3a.connection.maximum", integer(1, 10_000)),
        ("fs.s3a.threads.max", integer(1, 10_000)),
        ("fs.s3a.threads.keepalivetime", HADOOP_INT),
        ("fs.s3a.max.total.tasks", integer(1, 10_000)),
        ("fs.s3a.executor.capacity", integer(1, 10_000)),
    ),
    *_group(
        "S3A's timeouts and retries",
        ("fs.s3a.connection.timeout", HADOOP_INT),
        ("fs.s3a.connection.establish.timeout", HADOOP_INT),
        ("fs.s3a.connection.request.timeout", HADOOP_DURATION),
        ("fs.s3a.attempts.maximum", integer(0, 1000)),
        ("fs.s3a.retry.limit", integer(0, 1000)),
        ("fs.s3a.retry.interval", HADOOP_DURATION),
        ("fs.s3a.retry.throttle.limit", integer(0, 1000)),
        ("fs.s3a.retry.throttle.interval", HADOOP_DURATION),
    ),
    *_group(
        "S3A's uploads, reads and listings",
        ("fs.s3a.multipart.size", HADOOP_SIZE),
        ("fs.s3a.multipart.threshold", HADOOP_SIZE),
        ("fs.s3a.block.size", HADOOP_SIZE),
        ("fs.s3a.fast.upload.buffer", one_of("disk", "array", "bytebuffer")),
        ("fs.s3a.fast.upload.active.blocks", integer(1, 10_000)),
        ("fs.s3a.readahead.range", HADOOP_SIZE),
        ("fs.s3a.experimental.input.fadvise", one_of("normal", "sequential", "random")),
        ("fs.s3a.paging.maximum", integer(1, 100_000)),
        ("fs.s3a.socket.send.buffer", HADOOP_INT),
        ("fs.s3a.socket.recv.buffer", HADOOP_INT),
        ("fs.s3a.list.version", one_of("1", "2")),
        ("fs.s3a.directory.marker.retention", one_of("delete", "keep", "authoritative")),
    ),
    *_group(
        "how S3A addresses the store's own endpoint (a region of it, path-style requests)",
        ("fs.s3a.endpoint.region", REGION),
        ("fs.s3a.path.style.access", BOOLEAN),
    ),
    *_group(
        "Parquet's row groups, pages and dictionaries",
        ("parquet.block.size", HADOOP_INT),
        ("parquet.page.size", HADOOP_INT),
        ("parquet.dictionary.page.size", HADOOP_INT),
        ("parquet.enable.dictionary", BOOLEAN),
    ),
)

# What an admin's prefix admits beyond the built-in lists (an exact key in their list admits any key but
# the owned ones): tuning vetted one by one, with the values it takes. Nothing here loads code, reaches an
# address, sizes the pods, chooses credentials, keys, sinks or redaction, or changes which rows a read
# returns (spark.sql.files.ignoreCorruptFiles would drop them unseen): that is what a prefix such as
# "spark." must never let through, whatever Spark adds under it later.
PREFIX_ADMITS: tuple[Setting, ...] = (
    *_group(
        "scheduling and retries of the job's tasks",
        ("spark.locality.wait", DURATION),
        ("spark.locality.wait.process", DURATION),
        ("spark.locality.wait.node", DURATION),
        ("spark.locality.wait.rack", DURATION),
        ("spark.scheduler.mode", one_of("FIFO", "FAIR")),
        ("spark.stage.maxConsecutiveAttempts", integer(1, 100)),
        ("spark.excludeOnFailure.enabled", BOOLEAN),
        ("spark.task.cpus", integer(1, 256)),
    ),
    *_group(
        "shuffles, broadcasts and their network",
        ("spark.reducer.maxSizeInFlight", SIZE),
        ("spark.reducer.maxReqsInFlight", integer(1, 2**31 - 1)),
        ("spark.shuffle.file.buffer", SIZE),
        ("spark.shuffle.sort.bypassMergeThreshold", integer(0, 1_000_000)),
        ("spark.rpc.askTimeout", DURATION),
        ("spark.rpc.message.maxSize", integer(1, 2047)),
        ("spark.kryoserializer.buffer", SIZE),
        ("spark.kryoserializer.buffer.max", SIZE),
        ("spark.broadcast.blockSize", SIZE),
        ("spark.broadcast.compress", BOOLEAN),
        ("spark.storage.memoryMapThreshold", SIZE),
    ),
    *_group(
        "how Spark SQL plans and runs the job's queries",
        ("spark.sql.codegen.wholeStage", BOOLEAN),
        ("spark.sql.codegen.maxFields", COUNT),
        ("spark.sql.execution.arrow.pyspark.enabled", BOOLEAN),
        ("spark.sql.execution.arrow.maxRecordsPerBatch", COUNT),
        ("spark.sql.sources.parallelPartitionDiscovery.threshold", COUNT),
        ("spark.sql.sources.parallelPartitionDiscovery.parallelism", COUNT),
        ("spark.sql.inMemoryColumnarStorage.batchSize", COUNT),
        ("spark.sql.inMemoryColumnarStorage.compressed", BOOLEAN),
    ),
    *_group(
        "the job's Python workers, UI and event log switch (its folder is a sink: not by prefix)",
        ("spark.python.worker.reuse", BOOLEAN),
        ("spark.ui.enabled", BOOLEAN),
        ("spark.ui.showConsoleProgress", BOOLEAN),
        ("spark.ui.retainedJobs", COUNT),
        ("spark.ui.retainedStages", COUNT),
        ("spark.ui.retainedTasks", COUNT),
        ("spark.eventLog.enabled", BOOLEAN),
        ("spark.eventLog.compress", BOOLEAN),
    ),
    *_group(
        "S3A's deletes and checksums",
        ("fs.s3a.multiobjectdelete.enable", BOOLEAN),
        ("fs.s3a.bulk.delete.page.size", integer(1, 1000)),
        ("fs.s3a.etag.checksum.enabled", BOOLEAN),
    ),
    *_group(
        "Parquet's padding and page checksums",
        ("parquet.writer.max-padding", HADOOP_INT),
        ("parquet.page.write-checksum.enabled", BOOLEAN),
        ("parquet.page.verify-checksum.enabled", BOOLEAN),
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

# Why a key off the allow-lists is refused, for the message (the first that covers it). An admin's
# prefix never admits these: only the exact key, listed by an admin, does.
REFUSED_BECAUSE: tuple[Setting, ...] = (
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
        "spark.sql.catalog.",  # spark.sql.catalog.<name> is a class
        "spark.sql.catalogImplementation",
        "spark.serializer",
        "spark.shuffle.manager",
        "spark.extraListeners",
        "spark.sql.queryExecutionListeners",
        "spark.sql.streaming.streamingQueryListeners",
        "spark.kryo.registrator",
        "spark.kryo.classesToRegister",
        "spark.ui.filters",
        "spark.metrics.conf.",  # sinks and sources by class
        "spark.pyspark.",  # the Python the job runs
        "spark.driver.resource.",  # a discovery script, run on the driver
        "spark.executor.resource.",
        "spark.sql.hive.metastore.",
        "io.compression.codecs",
    ),
    *_settings(
        "loads code into the job (a class from an address, a class path order, a Python module)",
        "spark.repl.class.",
        "spark.driver.userClassPathFirst",
        "spark.executor.userClassPathFirst",
        "spark.plugins.",
        "spark.sql.cache.serializer",
        "spark.sql.sources.default",
        "spark.python.daemon.module",
        "spark.python.worker.module",
        "fs.s3a.audit.",
    ),
    Setting("fs.defaultFS", "chooses the file system the job's paths without a scheme are on"),
    *_settings(
        "sizes the job's pods, which spec.spark.driver and spec.spark.executor say within the admins' limits",
        "spark.driver.memory",
        "spark.driver.cores",
        "spark.executor.memory",
        "spark.executor.cores",
        "spark.executor.instances",
        "spark.cores.max",
        "spark.dynamicAllocation.",
    ),
    Setting(
        "spark.speculation",
        "races duplicate attempts of a task in a table rewrite (the operator pins it off)",
    ),
    *_settings(
        "chooses what is redacted from the job's logs and UI (its Secrets would show)",
        "spark.redaction.",
        "spark.sql.redaction.",
    ),
    *_settings(
        "sends the job's events, logs or metrics to a sink (the admins choose sinks)",
        "spark.eventLog.dir",
        "spark.metrics.",
        "spark.history.",
        "spark.driver.log.",
        "spark.ui.reverseProxy",
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
        "fs.s3a.delegation.",
        "fs.s3a.security.credential.provider.path",
        "hadoop.security.",
    ),
    *_settings(
        "chooses how what the job writes is encrypted, signed or shared (keys, signers, ACLs, who pays)",
        "fs.s3a.encryption.",
        "fs.s3a.server-side-encryption",
        "fs.s3a.signing-algorithm",
        "fs.s3a.acl.",
        "fs.s3a.requester.pays.",
    ),
    Setting(
        "fs.s3a.bucket.",
        "is a per-bucket S3A setting (a job reads one table: set the fs.s3a. setting itself)",
    ),
)

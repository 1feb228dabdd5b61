"""spec.spark, how the table's Spark jobs run, as models (no I/O); ``Resources`` is a driver's or executors'
size, as the spec and the operator's defaults and limits give it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import Field

from hudi_bucket_operator.resource.crd_schema import Cel, Int32, Int64, MatchedByCel, cel_string, list_map
from hudi_bucket_operator.resource.images import REFERENCE
from hudi_bucket_operator.resource.spark_conf import OWNED_SPARK_CONF, SETTING_NAME, SPARK_SIZE
from hudi_bucket_operator.resource.spec.fields import DNS_SUBDOMAIN, DNS_SUBDOMAIN_MAX, DnsName
from hudi_bucket_operator.resource.spec.problems import Expect, Section

# Bounds of spec.spark, as the CRD states them.
MAX_CORES = 256
MAX_EXECUTORS = 1000
MAX_TTL_SECONDS = 365 * 24 * 3600
_NAME_FORMAT = "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
# Spark's own size format (JavaUtils.byteStringAs), as spec.spark's memory and the sparkConf sizes take it.
_SPARK_MEMORY_FORMAT = (
    "a number with an optional unit b, k, m, g, t or p (e.g. 512m or 4g); "
    "Kubernetes quantities such as 4Gi are not accepted"
)
Memory = Annotated[
    str,
    Field(max_length=32, pattern=f"^{SPARK_SIZE.pattern}$"),
    MatchedByCel(f"memory must use Spark's format, {_SPARK_MEMORY_FORMAT}"),
    Expect(f"in Spark's format, {_SPARK_MEMORY_FORMAT}"),
]
_MAX_CONF_ENTRIES = 100
ConfValue = Annotated[str, Field(max_length=4096), Expect("a string (quote it in YAML)")]
Conf = Annotated[
    dict[str, ConfValue], Field(max_length=_MAX_CONF_ENTRIES), Expect("a map of property names to strings")
]


@dataclass(frozen=True)
class Resources:
    """Driver or executor resources; a field left None is not set, and the operator's default applies."""

    cores: int | None = None
    memory: str | None = None
    instances: int | None = None  # executors only

    def over(self, default: Resources) -> Resources:
        """These resources, with each field that is not set taken from ``default``."""
        return Resources(
            cores=default.cores if self.cores is None else self.cores,
            memory=default.memory if self.memory is None else self.memory,
            instances=default.instances if self.instances is None else self.instances,
        )


class DriverSection(Section):
    cores: Annotated[Int32, Field(ge=1, le=MAX_CORES)] | None = None
    """CPU cores of the driver, whole (1 to the admins' limit, Helm values jobs.limits.driver.cores)."""
    memory: Memory | None = None
    """Spark's memory format, e.g. 2g or 512m."""

    def resources(self) -> Resources:
        return Resources(self.cores, self.memory)


class ExecutorSection(DriverSection):
    # The driver's fields again, described for an executor.
    cores: Annotated[Int32, Field(ge=1, le=MAX_CORES)] | None = None
    """CPU cores of each executor, whole (1 to the admins' limit, Helm values jobs.limits.executor.cores)."""
    memory: Memory | None = None
    """Spark's memory format, e.g. 4g or 512m."""
    instances: Annotated[Int32, Field(ge=1, le=MAX_EXECUTORS)] | None = None
    """How many executors (1 to the admins' limit, Helm values jobs.limits.executor.instances)."""

    def resources(self) -> Resources:
        return Resources(self.cores, self.memory, self.instances)


class SecretSection(Section):
    expected: ClassVar[str] = "an object with the Secret's name"

    name: Annotated[
        DnsName,
        Field(min_length=1),
        MatchedByCel(f"spec.spark.envFromSecrets[].name must be a Secret name: {_NAME_FORMAT}"),
        Expect(f"a Secret name ({_NAME_FORMAT})"),
    ]
    """A Secret in the table's namespace that the admins allow tables to name (Helm values
    jobs.allowedSecrets).
    """


_OWNED_KEYS = [setting.key for setting in OWNED_SPARK_CONF if not setting.key.endswith(".")]
_OWNED_PREFIXES = [setting.key for setting in OWNED_SPARK_CONF if setting.key.endswith(".")]


def _conf_rules(field: str, replacing: str) -> tuple[Cel, Cel]:
    """A conf map's keys are settings' names (a key holding '=' would name another in `--conf key=value`),
    and no value holds '${' (Spark replaces ${env:NAME} with the job's environment, its Secrets, whoever
    allows the key)."""
    return (
        Cel(
            f"self.all(k, k.matches({cel_string(f'^{SETTING_NAME.pattern}$')}))",
            f"{field}'s keys must be settings' names, printable ASCII without '=' or spaces",
        ),
        Cel(
            "self.all(k, !self[k].contains('${'))",
            f"{field}'s values must not hold '${{': {replacing} it with the job's environment or another "
            "setting",
        ),
    )


class SparkSection(Section):
    # A reference as container runtimes parse it, the name in lower case: no allowlist admits anything else.
    image: Annotated[
        str,
        Field(max_length=512),
        Cel(
            f"self == '' || self.matches({cel_string(f'^{REFERENCE.pattern}$')})",
            "spec.spark.image must be an image reference, name[:tag][@digest], with the name in lower-case "
            "ASCII (e.g. registry.example.com/hudi-bucket-job:0.1.0)",
        ),
    ] = ""
    """The job image (with hudi-bucket-job and Spark): empty for the operator's default, else one its
    allowlist admits (Helm values jobs.allowedImages).
    """
    spark_version: Annotated[
        str,
        Field(max_length=32, pattern=r"^([0-9A-Za-z][0-9A-Za-z.+-]*)?$"),
        MatchedByCel("spec.spark.sparkVersion must be a version such as 3.5.8"),
        Expect("a version such as 3.5.8"),
    ] = ""
    """The Spark version of the image, e.g. 3.5.8."""
    service_account: Annotated[
        str,
        Field(max_length=DNS_SUBDOMAIN_MAX, pattern=f"^({DNS_SUBDOMAIN})?$"),
        MatchedByCel(f"spec.spark.serviceAccount must be a ServiceAccount name: {_NAME_FORMAT}"),
        Expect(f"a ServiceAccount name ({_NAME_FORMAT})"),
    ] = ""
    """The service account the driver and executors run as: the operator's job account, or one its admins
    allow (Helm values jobs.allowedServiceAccounts).
    """
    driver: DriverSection = DriverSection()
    """Driver resources (default: 1 core, 2g)."""
    executor: ExecutorSection = ExecutorSection()
    """Executor resources (default: 1 instance, 1 core, 2g)."""
    spark_conf: Annotated[
        Conf,
        # What the operator sets for every job, which no admin may allow. What admins may allow is checked
        # by the operator, not here: their extension must pass admission.
        Cel(
            f"!self.exists(k, k in [{', '.join(cel_string(key) for key in _OWNED_KEYS)}]"
            f"{''.join(f' || k.startsWith({cel_string(prefix)})' for prefix in _OWNED_PREFIXES)})",
            "spec.spark.sparkConf must not set what the operator sets for every job: the images, "
            "namespace, service account (spark.kubernetes.authenticate.*), pod templates, driver pod name, "
            "master and deploy mode; use spec.spark.image and spec.spark.serviceAccount",
        ),
        *_conf_rules("spec.spark.sparkConf", "Spark and Hadoop would replace"),
    ] = {}
    """Extra Spark properties, e.g. spark.sql.shuffle.partitions: the tuning settings the operator allows, and
    those its admins add (Helm values jobs.allowedSparkConf).
    """
    hadoop_conf: Annotated[Conf, *_conf_rules("spec.spark.hadoopConf", "Hadoop would replace")] = {}
    """Extra Hadoop properties, e.g. fs.s3a.connection.maximum: the tuning settings the operator allows, and
    those its admins add (Helm values jobs.allowedHadoopConf, e.g. fs.s3a.endpoint). Credentials go in a
    Secret named in envFromSecrets.
    """
    env_from_secrets: Annotated[
        list[SecretSection], Field(max_length=16), list_map("name"), Expect("a list of {name: <Secret name>}")
    ] = []
    """Secrets (in this namespace) whose keys become environment variables of the driver and executors, e.g.
    AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: only those the operator's admins allow for the namespace
    (Helm values jobs.allowedSecrets).
    """
    ttl_seconds: Annotated[Int64, Field(ge=0, le=MAX_TTL_SECONDS)] | None = None
    """How long a finished job's SparkApplication is kept, in seconds."""

    @property
    def secret_names(self) -> tuple[str, ...]:
        """The Secrets exposed to driver and executors as env."""
        return tuple(secret.name for secret in self.env_from_secrets)

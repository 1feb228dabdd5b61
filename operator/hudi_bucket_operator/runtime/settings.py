"""The operator's settings, from the environment (the Helm chart sets them).

Each setting is declared once, in ``OperatorConfig``: its environment variable (the field's alias), its
default and what its value must be. A bad value stops the operator at start, with one problem per
variable (``SettingsError``), rather than failing a table later. tests/operator/test_settings.py keeps
the chart's deployment template and values.yaml in step with these settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from hudi_bucket_operator.errors import SettingsError
from hudi_bucket_operator.policy.job_policy import ANY_NAMESPACE, LOCAL_AND_S3A, JobDefaults, Policy
from hudi_bucket_operator.policy.placement import PodPlacement
from hudi_bucket_operator.resource.schedule import parse_duration
from hudi_bucket_operator.resource.spec.fields import DnsName
from hudi_bucket_operator.resource.spec.problems import Expect
from hudi_bucket_operator.resource.spec.spark import (
    MAX_CORES,
    MAX_EXECUTORS,
    MAX_TTL_SECONDS,
    Memory,
    Resources,
)
from hudi_bucket_operator.resource.writers import SuspendField, WriterKind, WriterPolicy

# The Spark of the job image (Dockerfile.job), which the tests run on (constraints.txt pins its PySpark).
SPARK_VERSION = JobDefaults.spark_version
_LIMITS, _WRITERS = JobDefaults(), WriterPolicy()
PLACEMENT = (
    'a JSON object of Kubernetes pod fields: {"annotations": {}, "nodeSelector": {}, "tolerations": [], '
    '"affinity": {}, "priorityClassName": ""}'
)


def _words(value: object) -> object:
    # A list in one variable: comma-separated, blanks ignored ("a, b," is ("a", "b")).
    return tuple(w.strip() for w in value.split(",") if w.strip()) if isinstance(value, str) else value


def _json(value: object) -> object:
    return json.loads(value) if isinstance(value, str) else value  # a JSONDecodeError is a ValueError


@dataclass(frozen=True)
class Helm:
    """The chart's value that sets a setting (its path in values.yaml), and what the chart's schema
    asks of it beyond the setting, if anything."""

    path: str
    narrower: str = ""


def _duration(value: object) -> object:
    if isinstance(value, str):
        seconds = parse_duration(value.strip())
        if seconds is None:
            raise ValueError("not a duration")
        return seconds
    return value


def _text(seconds: int) -> str:
    """Seconds as the largest whole unit of a duration: 3600 is 1h."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    raise ValueError(seconds)


class _Suspend(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    path: Annotated[str, Field(pattern=r"^spec(\.[A-Za-z_][A-Za-z0-9_-]*)+$")]
    value: Annotated[str, Field(min_length=1)]
    stopped_path: Annotated[
        str, Field(alias="stoppedPath", pattern=r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$")
    ]
    stopped: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Kind(BaseModel):
    """A kind of writer the admins let tables pause, and how (Helm value writers.kinds)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    api_version: Annotated[
        str,
        Field(alias="apiVersion", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9]+((alpha|beta)[0-9]+)?$"),
    ]
    kind: Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]*$")]
    plural: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]*$")]
    suspend: _Suspend

    def writer_kind(self) -> WriterKind:
        how = self.suspend
        field = SuspendField(how.path, how.value, how.stopped_path, tuple(how.stopped))
        return WriterKind(self.api_version, self.kind, self.plural, field)


Words = Annotated[tuple[str, ...], BeforeValidator(_words), Expect("a comma-separated list")]
ByNamespace = Annotated[
    dict[str, tuple[str, ...]],
    BeforeValidator(_json),
    Expect('a JSON object from namespaces ("*": every namespace) to lists, such as {"lake": ["lake-s3"]}'),
]


def _placed(placement: PodPlacement) -> str:
    return json.dumps(placement.model_dump(by_alias=True, exclude_defaults=True, mode="json"))


@dataclass(frozen=True)
class Shown:
    """How the settings' reference shows a default that the environment spells otherwise."""

    show: Callable[[Any], str]


Seconds = Annotated[
    int, BeforeValidator(_duration), Field(gt=0), Expect("a duration such as 15m, 6h or 1d"), Shown(_text)
]
Name = Annotated[str, Field(min_length=1), Expect("a non-empty string")]
ObjectName = Annotated[DnsName, Expect("a Kubernetes object name (lowercase letters, digits, '-' and '.')")]
# As a table's spec bounds them (the CRD): a default or a limit beyond could never be a table's own.
Cores = Annotated[int, Field(ge=1, le=MAX_CORES), Expect(f"an integer from 1 to {MAX_CORES}")]
Executors = Annotated[int, Field(ge=1, le=MAX_EXECUTORS), Expect(f"an integer from 1 to {MAX_EXECUTORS}")]


class OperatorConfig(BaseModel):
    """The operator's settings, each read from the environment variable its alias names."""

    # Lax: every value arrives as a string ("64" is the integer 64). Built by name in tests and the CLI.
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True, allow_inf_nan=False)

    backend: Annotated[
        Literal["sparkoperator", "local"],
        Field(alias="HBO_JOB_BACKEND", description="where jobs run: SparkApplications, or local processes"),
        Expect("sparkoperator or local"),
    ] = "sparkoperator"
    namespaces: Annotated[
        Words,
        Field(alias="HBO_NAMESPACES", description="the namespaces watched; empty: every namespace"),
        Helm("watch.namespaces"),
    ] = ()
    resync_seconds: Annotated[
        float,
        Field(
            alias="HBO_RESYNC_SECONDS",
            gt=0,
            description="every table is reconciled this often, events or not",
        ),
        Expect("a number of seconds above 0"),
        Helm("resyncSeconds"),
    ] = 60.0
    workers: Annotated[
        int,
        Field(alias="HBO_WORKERS", ge=1, description="tables reconciled at once (and API calls in flight)"),
        Expect("an integer above 0"),
        Helm("workers"),
    ] = 64
    metrics_port: Annotated[
        int,
        Field(alias="HBO_METRICS_PORT", ge=0, le=65535, description="the port of /metrics; 0: none"),
        Expect("a port number in 1..65535, or 0 for none"),
        Helm("metrics.port", narrower="1..65535: the chart's Service needs a port"),
    ] = 8080
    leader_election: Annotated[
        bool,
        Field(
            alias="HBO_LEADER_ELECTION",
            description="only the holder of a Lease reconciles: replicas stand by, upgrades roll",
        ),
        Expect("true or false"),
        Helm("leaderElection.enabled"),
    ] = True
    lease_name: Annotated[
        str,
        Field(
            alias="HBO_LEADER_ELECTION_LEASE",
            pattern=r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$",
            description="the Lease's name; empty: hudi-bucket-operator (the chart: the release's full name)",
        ),
        Expect("a Kubernetes object name (lowercase letters, digits, '-' and '.'), or empty"),
        Helm("leaderElection.leaseName"),
    ] = ""
    lease_namespace: Annotated[
        str,
        Field(
            alias="HBO_LEADER_ELECTION_NAMESPACE",
            description="the Lease's namespace; empty: the operator pod's own (out of a pod: the kubeconfig context's, else default)",
        ),
    ] = ""
    lease_seconds: Annotated[
        int,
        Field(
            alias="HBO_LEADER_ELECTION_LEASE_SECONDS",
            ge=3,
            description="how long a Lease not renewed stays its holder's: the longest a failover takes",
        ),
        Expect("an integer of seconds, 3 or more"),
        Helm("leaderElection.leaseSeconds"),
    ] = 15
    kube_server: Annotated[
        str,
        Field(
            alias="HBO_KUBE_SERVER",
            description="an API server URL without credentials (kubectl proxy); empty: in-cluster or kubeconfig",
        ),
    ] = ""
    local_state_dir: Annotated[
        Path,
        Field(alias="HBO_LOCAL_STATE_DIR", description="where the local backend keeps its jobs' state"),
        Expect("a directory path"),
    ] = Path(".hudi-bucket-operator")

    # What every job runs with unless its spec says otherwise (JobDefaults).
    job_image: Annotated[
        Name,
        Field(alias="HBO_JOB_IMAGE", description="the jobs' image"),
        Helm("jobs.image"),  # repository, and tag (the chart's appVersion unless set)
    ] = JobDefaults.image
    spark_version: Annotated[
        Name,
        Field(alias="HBO_SPARK_VERSION", description="the Spark of the jobs' image"),
        Helm("jobs.sparkVersion"),
    ] = SPARK_VERSION
    job_service_account: Annotated[
        ObjectName,
        Field(alias="HBO_JOB_SERVICE_ACCOUNT", description="the jobs' ServiceAccount"),
        Helm("jobs.serviceAccount.name"),
    ] = "hudi-bucket-jobs"
    main_application_file: Annotated[
        Name,
        Field(alias="HBO_MAIN_APPLICATION_FILE", description="the jobs' entry point in their image"),
        Helm("jobs.mainApplicationFile"),
    ] = "local:///opt/hudi-bucket-operator/main.py"
    job_ttl_seconds: Annotated[
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
    ] = _LIMITS.max_driver.cores or 1
    max_driver_memory: Annotated[
        Memory,
        Field(alias="HBO_MAX_DRIVER_MEMORY", description="the most memory a table's driver may ask for"),
        Helm("jobs.limits.driver.memory"),
    ] = _LIMITS.max_driver.memory or ""
    max_executor_instances: Annotated[
        Executors,
        Field(alias="HBO_MAX_EXECUTOR_INSTANCES", description="the most executors a table's job may ask for"),
        Helm("jobs.limits.executor.instances"),
    ] = _LIMITS.max_executor.instances or 1
    max_executor_cores: Annotated[
        Cores,
        Field(alias="HBO_MAX_EXECUTOR_CORES", description="the most cores a table's executor may ask for"),
        Helm("jobs.limits.executor.cores"),
    ] = _LIMITS.max_executor.cores or 1
    max_executor_memory: Annotated[
        Memory,
        Field(alias="HBO_MAX_EXECUTOR_MEMORY", description="the most memory a table's executor may ask for"),
        Helm("jobs.limits.executor.memory"),
    ] = _LIMITS.max_executor.memory or ""
    spark_conf: Annotated[
        dict[str, Annotated[str, Field(strict=True)]],
        Field(
            alias="HBO_SPARK_CONF",
            description="the admins' own Spark settings for every job, under the spec's",
        ),
        BeforeValidator(_json),
        Expect('a JSON object of strings, such as {"spark.ui.enabled": "false"}'),
        Helm("jobs.sparkConf"),
    ] = {}
    driver_pod: Annotated[
        PodPlacement,
        Field(
            alias="HBO_DRIVER_POD",
            description="the job drivers' pods: annotations, nodeSelector, tolerations, affinity, priorityClassName",
        ),
        BeforeValidator(_json),
        Expect(PLACEMENT),
        Shown(_placed),
        Helm("jobs.driver.pod"),
    ] = _LIMITS.driver_pod
    executor_pod: Annotated[
        PodPlacement,
        Field(
            alias="HBO_EXECUTOR_POD",
            description="the job executors' pods: annotations, nodeSelector, tolerations, affinity, priorityClassName",
        ),
        BeforeValidator(_json),
        Expect(PLACEMENT),
        Shown(_placed),
        Helm("jobs.executor.pod"),
    ] = _LIMITS.executor_pod
    image_pull_secrets: Annotated[
        Words,
        Field(
            alias="HBO_IMAGE_PULL_SECRETS",
            description="the Secrets the jobs' pods pull their image with, in each job namespace",
        ),
        Helm("jobs.imagePullSecrets"),
    ] = ()

    # What tables may have the operator pause (WriterPolicy).
    writers_enabled: Annotated[
        bool,
        Field(
            alias="HBO_WRITERS_ENABLED",
            description="whether tables may have the operator pause their writers (spec.writers)",
        ),
        Expect("true or false"),
        Helm("writers.enabled"),
    ] = _WRITERS.enabled
    writer_kinds: Annotated[
        list[_Kind],
        Field(
            alias="HBO_WRITER_KINDS",
            description="kinds of writers besides Deployment and StatefulSet, and how each is suspended",
        ),
        BeforeValidator(_json),
        Expect(
            'a JSON list of {"apiVersion", "kind", "plural", "suspend": {"path", "value", "stoppedPath", '
            '"stopped"}}'
        ),
        Helm("writers.kinds"),
    ] = []
    max_quiesce_timeout: Annotated[
        Seconds,
        Field(
            alias="HBO_MAX_QUIESCE_TIMEOUT",
            description="the longest spec.writers.quiesceTimeout a table may ask for",
        ),
        Helm("writers.maxQuiesceTimeout"),
    ] = _WRITERS.max_quiesce_timeout
    apply_deadline: Annotated[
        Seconds,
        Field(
            alias="HBO_APPLY_DEADLINE",
            description="how long an apply may hold writers paused: past it, it is cancelled and they resume",
        ),
        Helm("writers.applyDeadline"),
    ] = _WRITERS.apply_deadline

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OperatorConfig:
        """The settings ``env`` (default: this process's environment) gives; ``SettingsError`` if any is bad."""
        env = os.environ if env is None else env
        read = {variable: env[variable] for variable in VARIABLES if variable in env}
        try:
            config = cls.model_validate(read)
            config.policy  # noqa: B018  (JobDefaults checks the allowlists' entries, WriterPolicy the kinds)
        except ValidationError as err:
            raise SettingsError(_problems(err, read)) from None
        except ValueError as err:
            raise SettingsError(str(err)) from None
        return config

    @property
    def job_defaults(self) -> JobDefaults:
        return JobDefaults(
            image=self.job_image,
            spark_version=self.spark_version,
            service_account=self.job_service_account,
            main_application_file=self.main_application_file,
            ttl_seconds=self.job_ttl_seconds,
            driver=Resources(cores=self.driver_cores, memory=self.driver_memory),
            executor=Resources(
                cores=self.executor_cores, memory=self.executor_memory, instances=self.executor_instances
            ),
            image_pull_policy=self.image_pull_policy,
            allowed_images=self.allowed_images,
            allowed_service_accounts=self.allowed_service_accounts,
            allowed_spark_conf=self.allowed_spark_conf,
            allowed_hadoop_conf=self.allowed_hadoop_conf,
            allowed_secrets=self.allowed_secrets,
            allowed_table_uris=self.allowed_table_uris,
            max_driver=Resources(cores=self.max_driver_cores, memory=self.max_driver_memory),
            max_executor=Resources(
                cores=self.max_executor_cores,
                memory=self.max_executor_memory,
                instances=self.max_executor_instances,
            ),
            spark_conf=self.spark_conf,
            driver_pod=self.driver_pod,
            executor_pod=self.executor_pod,
            image_pull_secrets=self.image_pull_secrets,
        )

    @property
    def writer_policy(self) -> WriterPolicy:
        kinds = tuple(kind.writer_kind() for kind in self.writer_kinds)
        return WriterPolicy(self.writers_enabled, kinds, self.max_quiesce_timeout, self.apply_deadline)

    @property
    def policy(self) -> Policy:
        """What tables may ask for: of their jobs, and of their writers."""
        return Policy(self.job_defaults, self.writer_policy)


# Each setting's environment variable, and the field it sets.
VARIABLES = {info.alias: name for name, info in OperatorConfig.model_fields.items() if info.alias}
# The variables the chart sets, and the value (its path in values.yaml) each is set from.
HELM = {
    info.alias: item
    for info in OperatorConfig.model_fields.values()
    for item in info.metadata
    if isinstance(item, Helm) and info.alias
}
HELM_VALUES = {variable: item.path for variable, item in HELM.items()}


def _problems(err: ValidationError, read: Mapping[str, str]) -> str:
    """One problem per variable: its name, what it must be and the value found, all in one line."""
    said: dict[str, str] = {}
    for error in err.errors():
        name = str(error["loc"][0])
        said.setdefault(name, f"{name} must be {_expected(name, error['msg'])}, not {read[name]!r}")
    return "; ".join(said.values())


def _expected(alias: str, fallback: str) -> str:
    info = OperatorConfig.model_fields[VARIABLES[alias]]
    return next((item.text for item in info.metadata if isinstance(item, Expect)), fallback)


def reference() -> str:
    """Every setting as a Markdown table (docs/settings.md holds it; ``hudi-bucket-operator settings``
    prints it): its variable, the chart's value that sets it, its default, what it is, what it must be."""
    rows = ["| variable | Helm value | default | what it is | what it must be |", "|---|---|---|---|---|"]
    for variable, name in VARIABLES.items():
        info = OperatorConfig.model_fields[name]
        helm = "(not in the chart)"
        if variable in HELM:
            helm = f"`{HELM[variable].path}`" + (
                f" ({HELM[variable].narrower})" if HELM[variable].narrower else ""
            )
        default = info.get_default(call_default_factory=True)
        shown = next((item.show(default) for item in info.metadata if isinstance(item, Shown)), None)
        if shown is None:
            shown = (
                str(default).lower()
                if isinstance(default, bool)
                else ",".join(default)
                if isinstance(default, tuple)
                else json.dumps(default)
                if isinstance(default, dict | list)
                else str(default)
            )
        expected = _expected(variable, "a string")
        rows.append(
            f"| `{variable}` | {helm} | `{shown}` | {info.description} | {expected} |".replace(
                "``", "(empty)"
            )
        )
    return "\n".join(rows) + "\n"

"""The operator's settings, from the environment (the Helm chart sets them).

Each setting is declared once, in ``OperatorConfig``: its environment variable (the field's alias), its
default and what its value must be. A bad value stops the operator at start, with one problem per
variable (``SettingsError``), rather than failing a table later. tests/operator/test_settings.py keeps
the chart's deployment template and values.yaml in step with these settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from hudi_bucket.errors import HudiBucketError
from hudi_bucket_operator.job_policy import JobDefaults
from hudi_bucket_operator.manifest import Expect, Memory
from hudi_bucket_operator.spec import Resources

# The Spark of the job image (Dockerfile.job), which the tests run on (constraints.txt pins its PySpark).
SPARK_VERSION = "3.5.8"


class SettingsError(HudiBucketError):
    """The operator's environment holds a setting it cannot run with."""

    hint = "fix the operator's environment, which its Helm values set, and start it again"


def _words(value: object) -> object:
    # A list in one variable: comma-separated, blanks ignored ("a, b," is ("a", "b")).
    return tuple(w.strip() for w in value.split(",") if w.strip()) if isinstance(value, str) else value


def _json(value: object) -> object:
    return json.loads(value) if isinstance(value, str) else value  # a JSONDecodeError is a ValueError


Words = Annotated[tuple[str, ...], BeforeValidator(_words), Expect("a comma-separated list")]
Name = Annotated[str, Field(min_length=1), Expect("a non-empty string")]
Cores = Annotated[int, Field(ge=1), Expect("an integer above 0")]


class OperatorConfig(BaseModel):
    """The operator's settings, each read from the environment variable its alias names."""

    # Lax: every value arrives as a string ("64" is the integer 64). Built by name in tests and the CLI.
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True, allow_inf_nan=False)

    backend: Annotated[
        Literal["sparkoperator", "local"], Field(alias="HBO_JOB_BACKEND"), Expect("sparkoperator or local")
    ] = "sparkoperator"
    # Empty: every namespace (cluster-wide).
    namespaces: Annotated[Words, Field(alias="HBO_NAMESPACES")] = ()
    # Every table is reconciled this often, events or not.
    resync_seconds: Annotated[
        float, Field(alias="HBO_RESYNC_SECONDS", gt=0), Expect("a number of seconds above 0")
    ] = 60.0
    # Tables reconciled at once (and API calls in flight).
    workers: Annotated[int, Field(alias="HBO_WORKERS", ge=1), Expect("an integer above 0")] = 64
    # 0: no /metrics endpoint (the tests run many operators in one process).
    metrics_port: Annotated[
        int,
        Field(alias="HBO_METRICS_PORT", ge=0, le=65535),
        Expect("a port number in 1..65535, or 0 for none"),
    ] = 8080
    # An API server URL without credentials (tests, kubectl proxy); empty: in-cluster or kubeconfig.
    kube_server: Annotated[str, Field(alias="HBO_KUBE_SERVER")] = ""
    local_state_dir: Annotated[Path, Field(alias="HBO_LOCAL_STATE_DIR"), Expect("a directory path")] = Path(
        ".hudi-bucket-operator"
    )

    # What every job runs with unless its spec says otherwise (JobDefaults).
    job_image: Annotated[Name, Field(alias="HBO_JOB_IMAGE")] = "hudi-bucket-operator-job:latest"
    spark_version: Annotated[Name, Field(alias="HBO_SPARK_VERSION")] = SPARK_VERSION
    job_service_account: Annotated[Name, Field(alias="HBO_JOB_SERVICE_ACCOUNT")] = "hudi-bucket-jobs"
    main_application_file: Annotated[Name, Field(alias="HBO_MAIN_APPLICATION_FILE")] = (
        "local:///opt/hudi-bucket-operator/main.py"
    )
    job_ttl_seconds: Annotated[
        int, Field(alias="HBO_JOB_TTL_SECONDS", ge=0), Expect("an integer of seconds, 0 or more")
    ] = 86400
    driver_cores: Annotated[Cores, Field(alias="HBO_DRIVER_CORES")] = 1
    driver_memory: Annotated[Memory, Field(alias="HBO_DRIVER_MEMORY")] = "2g"
    executor_instances: Annotated[Cores, Field(alias="HBO_EXECUTOR_INSTANCES")] = 1
    executor_cores: Annotated[Cores, Field(alias="HBO_EXECUTOR_CORES")] = 1
    executor_memory: Annotated[Memory, Field(alias="HBO_EXECUTOR_MEMORY")] = "2g"
    image_pull_policy: Annotated[
        Literal["Always", "IfNotPresent", "Never"],
        Field(alias="HBO_IMAGE_PULL_POLICY"),
        Expect("Always, IfNotPresent or Never"),
    ] = "IfNotPresent"
    allowed_images: Annotated[Words, Field(alias="HBO_ALLOWED_IMAGES")] = ()
    allowed_service_accounts: Annotated[Words, Field(alias="HBO_ALLOWED_SERVICE_ACCOUNTS")] = ()
    allowed_spark_conf: Annotated[Words, Field(alias="HBO_ALLOWED_SPARK_CONF")] = ()
    allowed_hadoop_conf: Annotated[Words, Field(alias="HBO_ALLOWED_HADOOP_CONF")] = ()
    # The admins' own Spark settings for every job, under the spec's.
    spark_conf: Annotated[
        dict[str, Annotated[str, Field(strict=True)]],
        Field(alias="HBO_SPARK_CONF"),
        BeforeValidator(_json),
        Expect('a JSON object of strings, such as {"spark.ui.enabled": "false"}'),
    ] = {}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OperatorConfig:
        """The settings ``env`` (default: this process's environment) gives; ``SettingsError`` if any is bad."""
        env = os.environ if env is None else env
        read = {variable: env[variable] for variable in VARIABLES if variable in env}
        try:
            config = cls.model_validate(read)
            config.job_defaults  # noqa: B018  (JobDefaults checks the allowlists' entries)
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
            spark_conf=self.spark_conf,
        )


# Each setting's environment variable, and the field it sets.
VARIABLES = {info.alias: name for name, info in OperatorConfig.model_fields.items() if info.alias}


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

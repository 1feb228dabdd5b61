"""The operator's settings, from the environment (the Helm chart sets them).

Each setting is declared once, in its group of ``OperatorConfig`` (read as ``config.<group>.<field>``, as
Kopf's settings are): its environment variable (the field's alias), its default and what its value must
be. The jobs' and the writers' groups are the policy's own models (``JobDefaults``, ``WriterPolicy``),
the others are the runtime's. A bad value stops the operator at start, with one problem per variable
(``SettingsError``), rather than failing a table later. tests/operator/test_settings.py keeps the chart's
deployment template and values.yaml in step with these settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from hudi_bucket_operator.errors import SettingsError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.policy.writer_policy import WriterPolicy
from hudi_bucket_operator.resource.setting import Helm, Shown, Words
from hudi_bucket_operator.resource.spec.problems import Expect
from hudi_bucket_operator.runtime import metrics

# Lax: every value arrives as a string ("64" is the integer 64). Built by name in tests and the CLI.
_GROUP = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False)


class Backend(BaseModel):
    """Where jobs run."""

    model_config = _GROUP

    kind: Annotated[
        Literal["sparkoperator", "local"],
        Field(alias="HBO_JOB_BACKEND", description="where jobs run: SparkApplications, or local processes"),
        Expect("sparkoperator or local"),
    ] = "sparkoperator"
    local_state_dir: Annotated[
        Path,
        Field(alias="HBO_LOCAL_STATE_DIR", description="where the local backend keeps its jobs' state"),
        Expect("a directory path"),
    ] = Path(".hudi-bucket-operator")


class Watching(BaseModel):
    """What the operator watches, and how often and how widely it reconciles."""

    model_config = _GROUP

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


def _table_families(names: tuple[str, ...]) -> tuple[str, ...]:
    unknown = sorted(set(names) - set(metrics.table_families()))
    if unknown:
        raise ValueError(
            f"no per-table family {', '.join(unknown)} (they are {', '.join(metrics.table_families())})"
        )
    return names


class Metrics(BaseModel):
    """Where the operator serves its metrics."""

    model_config = _GROUP

    port: Annotated[
        int,
        Field(alias="HBO_METRICS_PORT", ge=0, le=65535, description="the port of /metrics; 0: none"),
        Expect("a port number in 1..65535, or 0 for none"),
        Helm("metrics.port", narrower="1..65535: the chart's Service needs a port"),
    ] = 8080
    omit_table_metrics: Annotated[
        Words,
        Field(
            alias="HBO_OMIT_TABLE_METRICS",
            description="per-table metric families not exported (each is a series a table; the chart's "
            "alerts read hbo_table_phase, _ready, _plan_awaiting_approval_since_timestamp_seconds, "
            "_layout_violations, _verify_due_timestamp_seconds, _writers_resume_deadline_timestamp_seconds)",
        ),
        AfterValidator(_table_families),
        Helm("metrics.omitTableMetrics"),
    ] = ()


class LeaderElection(BaseModel):
    """Whether replicas elect the one that reconciles, and with which Lease."""

    model_config = _GROUP

    enabled: Annotated[
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


class Kube(BaseModel):
    """Which Kubernetes API server the operator talks to."""

    model_config = _GROUP

    server: Annotated[
        str,
        Field(
            alias="HBO_KUBE_SERVER",
            description="an API server URL without credentials (kubectl proxy); empty: in-cluster or kubeconfig",
        ),
    ] = ""


class OperatorConfig(BaseModel):
    """The operator's settings, in groups; each setting is read from the environment variable its alias
    names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Backend = Backend()
    watching: Watching = Watching()
    metrics: Metrics = Metrics()
    leader_election: LeaderElection = LeaderElection()
    kube: Kube = Kube()
    jobs: JobDefaults = JobDefaults()  # what every job runs with unless its spec says otherwise
    writers: WriterPolicy = WriterPolicy()  # what tables may have the operator pause

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OperatorConfig:
        """The settings ``env`` (default: this process's environment) gives; ``SettingsError`` if any is bad."""
        env = os.environ if env is None else env
        read = {variable: env[variable] for variable in VARIABLES if variable in env}
        groups: dict[str, dict[str, str]] = {}
        for variable, value in read.items():
            groups.setdefault(VARIABLES[variable].group, {})[variable] = value
        try:
            return cls.model_validate(groups)
        except ValidationError as err:
            raise SettingsError(_problems(err, read)) from None

    @property
    def policy(self) -> Policy:
        """What tables may ask for: of their jobs, and of their writers."""
        return Policy(self.jobs, self.writers)


@dataclass(frozen=True)
class Variable:
    """A setting as its environment variable sets it: the group and the field it sets, as declared."""

    group: str
    field: str
    info: FieldInfo

    def of(self, config: OperatorConfig) -> Any:
        """The setting's value in ``config``."""
        return getattr(getattr(config, self.group), self.field)


# Each setting's environment variable, and the field of its group it sets.
_BUILT_IN = OperatorConfig()
VARIABLES = {
    info.alias: Variable(group, name, info)
    for group in OperatorConfig.model_fields
    for name, info in type(getattr(_BUILT_IN, group)).model_fields.items()
    if info.alias
}
# The variables the chart sets, and the value (its path in values.yaml) each is set from.
HELM = {
    variable: item
    for variable, setting in VARIABLES.items()
    for item in setting.info.metadata
    if isinstance(item, Helm)
}
HELM_VALUES = {variable: item.path for variable, item in HELM.items()}


def _problems(err: ValidationError, read: Mapping[str, str]) -> str:
    """One problem per variable: its name, what it must be and the value found, all in one line; and
    what a group finds wrong across its variables, as it says it."""
    said: dict[str, str] = {}
    for error in err.errors():
        _, *within = error["loc"]
        if not within:  # the group's own check
            text = str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
            said.setdefault(text, text)
            continue
        name = str(within[0])
        said.setdefault(name, f"{name} must be {_expected(name, error['msg'])}, not {read[name]!r}")
    return "; ".join(said.values())


def _expected(alias: str, fallback: str) -> str:
    info = VARIABLES[alias].info
    return next((item.text for item in info.metadata if isinstance(item, Expect)), fallback)


def reference() -> str:
    """Every setting as a Markdown table (docs/settings.md holds it; ``hudi-bucket-operator settings``
    prints it): its variable, the chart's value that sets it, its default, what it is, what it must be."""
    rows = ["| variable | Helm value | default | what it is | what it must be |", "|---|---|---|---|---|"]
    for variable, setting in VARIABLES.items():
        info = setting.info
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

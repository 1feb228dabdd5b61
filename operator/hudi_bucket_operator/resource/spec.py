"""The HudiBucketTable resource's spec, parsed into frozen values and checked (no I/O).

The CRD's schema and CEL rules reject bad manifests at admission; parse_spec checks the same things
again (a cluster may run without CEL, and the local mode has no API server at all), plus what only code
can check: that each pattern compiles and means the same in Java as in Python. The spec is declared
once, as the models in manifest.py; parse_spec validates a spec with them and turns it into a TableSpec.
Every problem names its field the way the manifest does (``spec.buckets.rules[0].pattern``, counting
rules from 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from hudi_bucket.contract.requests import (
    ApplyOptions,
    ApplyRequest,
    JobKind,
    PlanRequest,
    RescaleOptions,
    VerifyRequest,
)
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.rules import MAX_PATTERN_LENGTH, MAX_RULES, BucketRules
from hudi_bucket.core.sizing import SizingPolicy
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource.manifest import (
    MAX_CORES,
    MAX_EXECUTORS,
    MAX_TTL_SECONDS,
    ApplyPolicy,
    DriverSection,
    MetadataTablePolicy,
    SparkSection,
    TableSpecSection,
    WindowSection,
    WritersSection,
    problems,
)
from hudi_bucket_operator.resource.schedule import Schedule, parse_duration
from hudi_bucket_operator.resource.writers import DEFAULT_QUIESCE_TIMEOUT, Window, WorkloadRef, WriterRefs

__all__ = [  # what callers import from here, though declared with the models
    "MAX_CORES",
    "MAX_EXECUTORS",
    "MAX_PATTERN_LENGTH",
    "MAX_RULES",
    "MAX_TTL_SECONDS",
    "ApplyPolicy",
    "MetadataTablePolicy",
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


@dataclass(frozen=True)
class SparkSettings:
    """How jobs run; anything left empty falls back to the operator's defaults (Helm values)."""

    image: str = ""
    spark_version: str = ""
    service_account: str = ""
    driver: Resources = field(default_factory=Resources)
    executor: Resources = field(default_factory=Resources)
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    hadoop_conf: Mapping[str, str] = field(default_factory=dict)
    env_from_secrets: tuple[str, ...] = ()  # Secret names, exposed to driver and executors as env
    ttl_seconds: int | None = None


@dataclass(frozen=True)
class TableSpec:
    uri: str
    rules: BucketRules
    hash_fields: tuple[str, ...] = ()
    key_style: KeyStyle | None = None
    current_buckets: int | None = None
    convert: bool = False
    keep_duplicates: bool = False  # a conversion carries every copy of a key over (default: one copy)
    sizing: SizingPolicy | None = None
    replan_every: int | None = None  # seconds: plan a sized table again this often (None: on change only)
    policy: ApplyPolicy = ApplyPolicy.MANUAL
    approved_plan: str = ""
    metadata_table: MetadataTablePolicy = MetadataTablePolicy.REFUSE
    engine: Engine = Engine.AUTO
    spark: SparkSettings = field(default_factory=SparkSettings)
    verify: Schedule | None = None  # when the layout is checked (None: never)
    writers: WriterRefs = field(default_factory=WriterRefs)  # paused around an apply that moves data
    window: Window | None = None  # when an apply that moves data may start (None: whenever approved)

    def job_request(
        self, kind: JobKind, approved_plan: str = "", *, check_records: bool = False
    ) -> PlanRequest | ApplyRequest | VerifyRequest:
        """The request of a ``kind`` job for this table (its report goes where the backend says).

        An apply names the plan it applies: the job refuses any other, so a table that changed since
        the plan was made is never rewritten on a stale approval. ``check_records``: plan and apply read
        every record's key and repair the partitions holding records out of their buckets.
        """
        if kind is JobKind.VERIFY:
            return VerifyRequest(table=self.uri, hash_fields=self.hash_fields, key_style=self.key_style)
        disable = self.metadata_table is MetadataTablePolicy.DISABLE
        rescale = (self.rules, self.current_buckets, self.convert, disable, self.engine, self.sizing)
        if kind is JobKind.PLAN:
            options = RescaleOptions(
                *rescale, check_records=check_records, keep_duplicates=self.keep_duplicates
            )
            return PlanRequest(
                table=self.uri, hash_fields=self.hash_fields, key_style=self.key_style, rescale=options
            )
        if kind is JobKind.APPLY and approved_plan:
            applied = ApplyOptions(
                *rescale,
                check_records=check_records,
                keep_duplicates=self.keep_duplicates,
                approved_plan=approved_plan,
            )
            return ApplyRequest(
                table=self.uri, hash_fields=self.hash_fields, key_style=self.key_style, rescale=applied
            )
        raise ValueError(
            f"a table runs verify jobs, plan jobs and apply jobs of an approved plan, not {kind} "
            f"{approved_plan!r}"
        )


_KEY_STYLES = {"Hudi1x": KeyStyle.HUDI_1X, "Hudi0x": KeyStyle.HUDI_0X}


def parse_spec(spec: Mapping[str, Any]) -> TableSpec:
    """A TableSpec, or InvalidSpecError listing every problem found (not just the first)."""
    if not isinstance(spec, Mapping):
        raise InvalidSpecError(f"spec must be an object with table and buckets, not {spec!r}")
    try:
        manifest = TableSpecSection.model_validate(_plain(spec))
    except ValidationError as err:
        raise InvalidSpecError("; ".join(problems(err))) from None
    table, buckets, apply = manifest.table, manifest.buckets, manifest.apply
    sizing = buckets.sizing
    return TableSpec(
        uri=table.uri,
        rules=buckets.bucket_rules(),
        hash_fields=tuple(table.hash_fields),
        key_style=None if table.key_style is None else _KEY_STYLES[table.key_style],
        current_buckets=buckets.current_buckets,
        convert=buckets.convert,
        keep_duplicates=buckets.keep_duplicates,
        sizing=None if sizing is None else sizing.policy(),
        replan_every=None if sizing is None or sizing.replan_every is None else _seconds(sizing.replan_every),
        policy=apply.policy,
        approved_plan=apply.approved_plan,
        metadata_table=manifest.metadata_table,
        engine=manifest.engine,
        spark=_spark(manifest.spark),
        verify=None
        if manifest.verify is None or manifest.verify.schedule is None
        else Schedule.parse(manifest.verify.schedule),
        writers=_writers(manifest.writers),
        window=None if apply.window is None else _window(apply.window),
    )


def _plain(value: Any) -> Any:
    """Plain dicts and lists, as the models take them strictly (Kopf hands a spec over as a Mapping),
    as JSON has them: keys are strings, and null fields are left out (the API server prunes them; a
    manifest read from a file means the same)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _seconds(duration: str) -> int:
    seconds = parse_duration(duration)
    assert seconds is not None, duration  # the model checked it
    return seconds


def _resources(section: DriverSection, instances: int | None = None) -> Resources:
    return Resources(cores=section.cores, memory=section.memory, instances=instances)


def _spark(spark: SparkSection) -> SparkSettings:
    return SparkSettings(
        image=spark.image,
        spark_version=spark.spark_version,
        service_account=spark.service_account,
        driver=_resources(spark.driver),
        executor=_resources(spark.executor, spark.executor.instances),
        spark_conf=dict(spark.spark_conf),
        hadoop_conf=dict(spark.hadoop_conf),
        env_from_secrets=tuple(secret.name for secret in spark.env_from_secrets),
        ttl_seconds=spark.ttl_seconds,
    )


def _writers(writers: WritersSection) -> WriterRefs:
    workloads = tuple(WorkloadRef(workload.kind, workload.name) for workload in writers.workloads)
    timeout = (
        DEFAULT_QUIESCE_TIMEOUT if writers.quiesce_timeout is None else _seconds(writers.quiesce_timeout)
    )
    return WriterRefs(workloads, timeout)


def _window(window: WindowSection) -> Window:
    text = f"{window.schedule} for {window.duration}"
    return Window(Schedule.parse(window.schedule), _seconds(window.duration), text)

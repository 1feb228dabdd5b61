"""The HudiBucketTable resource's spec, parsed into frozen values and checked (no I/O).

The CRD's schema and CEL rules reject most bad manifests at admission; this module checks the same
things again (a cluster may run without CEL, and the local mode has no API server at all) plus what
only code can check: that each pattern compiles and means the same in Java as in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.rules import MAX_BUCKETS, BucketRules, PythonRegexMatcher, Rule
from hudi_bucket.errors import HudiBucketError

GROUP, VERSION, PLURAL, KIND = "hudi.bucketops.io", "v1alpha1", "hudibuckettables", "HudiBucketTable"
API_VERSION = f"{GROUP}/{VERSION}"
MAX_RULES = 100

# Annotations a user sets on a HudiBucketTable.
PAUSED = f"{GROUP}/paused"  # "true": start no new job (a running one finishes and is recorded)
UNMANAGED = f"{GROUP}/unmanaged"  # "true": the operator ignores the resource entirely
RETRY = f"{GROUP}/retry"  # change its value to retry a failed job without changing the spec


class InvalidSpecError(HudiBucketError):
    """The HudiBucketTable spec cannot be reconciled as written."""

    hint = "fix the spec (kubectl edit, or in Git); nothing runs until then"


class ApplyPolicy(StrEnum):
    AUTOMATIC = "Automatic"  # apply every plan as soon as it is made
    MANUAL = "Manual"  # apply a plan only once its id is copied into spec.apply.approvedPlan


class MetadataTablePolicy(StrEnum):
    REFUSE = "Refuse"  # a live metadata table stops the rescale (it would go stale)
    DISABLE = "Disable"  # remove it the way Hudi does, and say so


@dataclass(frozen=True)
class Resources:
    cores: int = 1
    memory: str = "2g"
    instances: int = 1  # executors only


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
    policy: ApplyPolicy = ApplyPolicy.MANUAL
    approved_plan: str = ""
    metadata_table: MetadataTablePolicy = MetadataTablePolicy.REFUSE
    spark: SparkSettings = field(default_factory=SparkSettings)

    def job_args(self) -> list[str]:
        """The `hudi-bucket-job` options that carry this spec (after the command and --table)."""
        args = [
            "--expressions",
            self.rules.render(),
            "--default",
            str(self.rules.default),
            "--rule",
            self.rules.rule_type,
        ]
        if self.hash_fields:
            args += ["--hash-fields", ",".join(self.hash_fields)]
        if self.key_style:
            args += ["--key-style", self.key_style.name]
        if self.current_buckets is not None:
            args += ["--current-buckets", str(self.current_buckets)]
        if self.convert:
            args.append("--convert")
        if self.metadata_table is MetadataTablePolicy.DISABLE:
            args.append("--disable-metadata-table")
        return args


_KEY_STYLES = {"Hudi1x": KeyStyle.HUDI_1X, "Hudi0x": KeyStyle.HUDI_0X}


def parse_spec(spec: Mapping[str, Any]) -> TableSpec:
    """A TableSpec, or InvalidSpecError listing every problem found (not just the first)."""
    problems: list[str] = []
    table = _mapping(spec, "table", problems)
    buckets = _mapping(spec, "buckets", problems)
    apply = spec.get("apply") or {}
    uri = table.get("uri")
    if not isinstance(uri, str) or not uri.strip():
        problems.append(
            "spec.table.uri is required: the table's base path (s3a://..., hdfs://..., /local/path)"
        )
    rules = _rules(buckets, problems)
    key_style = table.get("keyStyle")
    if key_style is not None and key_style not in _KEY_STYLES:
        problems.append(f"spec.table.keyStyle must be one of {sorted(_KEY_STYLES)}, not {key_style!r}")
    current = buckets.get("currentBuckets")
    if current is not None and not _count_ok(current):
        problems.append(
            f"spec.buckets.currentBuckets must be an integer in 1..{MAX_BUCKETS}, not {current!r}"
        )
    policy = _enum(ApplyPolicy, apply.get("policy", ApplyPolicy.MANUAL.value), "spec.apply.policy", problems)
    metadata = _enum(
        MetadataTablePolicy,
        spec.get("metadataTable", MetadataTablePolicy.REFUSE.value),
        "spec.metadataTable",
        problems,
    )
    if problems or rules is None or policy is None or metadata is None:
        raise InvalidSpecError("; ".join(problems))
    return TableSpec(
        uri=uri.strip(),
        rules=rules,
        hash_fields=tuple(table.get("hashFields") or ()),
        key_style=_KEY_STYLES.get(key_style) if key_style else None,
        current_buckets=current,
        convert=bool(buckets.get("convert", False)),
        policy=policy,
        approved_plan=str(apply.get("approvedPlan") or ""),
        metadata_table=metadata,
        spark=_spark(spec.get("spark") or {}),
    )


def _mapping(spec: Mapping[str, Any], key: str, problems: list[str]) -> Mapping[str, Any]:
    value = spec.get(key)
    if not isinstance(value, Mapping):
        problems.append(f"spec.{key} is required")
        return {}
    return value


def _count_ok(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_BUCKETS


def _rules(buckets: Mapping[str, Any], problems: list[str]) -> BucketRules | None:
    default = buckets.get("default")
    if not _count_ok(default):
        problems.append(f"spec.buckets.default must be an integer in 1..{MAX_BUCKETS}, not {default!r}")
        return None
    items = buckets.get("rules") or []
    if not isinstance(items, list) or len(items) > MAX_RULES:
        problems.append(f"spec.buckets.rules must be a list of at most {MAX_RULES} rules")
        return None
    # Every rule goes to validate(), bad ones too, so that its "rule N" numbering matches the manifest.
    rules = []
    for index, item in enumerate(items):
        pattern, count = (item or {}).get("pattern"), (item or {}).get("buckets")
        if not isinstance(pattern, str) or isinstance(count, bool) or not isinstance(count, int):
            problems.append(f"spec.buckets.rules[{index}] needs a pattern (string) and buckets (integer)")
            return None
        rules.append(Rule(pattern, count))
    candidate = BucketRules(tuple(rules), default, buckets.get("rule", "regex"))
    try:
        candidate.validate(PythonRegexMatcher())
    except HudiBucketError as err:
        problems.append(str(err.args[0]) if err.args else str(err))
    return candidate


def _enum(kind: type[StrEnum], value: object, where: str, problems: list[str]) -> Any:
    try:
        return kind(value)
    except ValueError:
        problems.append(f"{where} must be one of {[m.value for m in kind]}, not {value!r}")
        return None


def _resources(raw: Mapping[str, Any], default: Resources) -> Resources:
    return Resources(
        cores=int(raw.get("cores", default.cores)),
        memory=str(raw.get("memory", default.memory)),
        instances=int(raw.get("instances", default.instances)),
    )


def _spark(raw: Mapping[str, Any]) -> SparkSettings:
    return SparkSettings(
        image=str(raw.get("image", "")),
        spark_version=str(raw.get("sparkVersion", "")),
        service_account=str(raw.get("serviceAccount", "")),
        driver=_resources(raw.get("driver") or {}, Resources()),
        executor=_resources(raw.get("executor") or {}, Resources()),
        spark_conf={str(k): str(v) for k, v in (raw.get("sparkConf") or {}).items()},
        hadoop_conf={str(k): str(v) for k, v in (raw.get("hadoopConf") or {}).items()},
        env_from_secrets=tuple(str(s["name"]) for s in raw.get("envFromSecrets") or () if s and "name" in s),
        ttl_seconds=raw.get("ttlSeconds"),
    )

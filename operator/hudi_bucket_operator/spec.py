"""The HudiBucketTable resource's spec, parsed into frozen values and checked (no I/O).

The CRD's schema and CEL rules reject bad manifests at admission; parse_spec checks the same things
again (a cluster may run without CEL, and the local mode has no API server at all), plus what only code
can check: that each pattern compiles and means the same in Java as in Python. Every problem names its
field the way the manifest does (``spec.buckets.rules[0].pattern``, counting rules from 0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeGuard

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
from hudi_bucket.core.rules import (
    MAX_BUCKETS,
    MAX_PATTERN_LENGTH,
    MAX_RULES,
    REGEX,
    BucketRules,
    PythonRegexMatcher,
    Rule,
)
from hudi_bucket.core.sizing import (
    DEFAULT_TOLERANCE,
    MAX_TOLERANCE,
    QUANTITY_FORMAT,
    SizingError,
    SizingPolicy,
    parse_size,
)
from hudi_bucket.errors import HudiBucketError
from hudi_bucket_operator.schedule import FORMAT as SCHEDULE_FORMAT
from hudi_bucket_operator.schedule import Schedule, ScheduleError, parse_duration
from hudi_bucket_operator.writers import Window, WritersSpec, parse_window, parse_writers

GROUP, VERSION, PLURAL, KIND = "hudi.bucketops.io", "v1alpha1", "hudibuckettables", "HudiBucketTable"
API_VERSION = f"{GROUP}/{VERSION}"
# Bounds of spec.spark, as the CRD states them.
MAX_CORES = 256
MAX_EXECUTORS = 1000
MAX_TTL_SECONDS = 365 * 24 * 3600

# Annotations a user sets on a HudiBucketTable.
PAUSED = f"{GROUP}/paused"  # "true": start no new job (a running one finishes and is recorded)
UNMANAGED = f"{GROUP}/unmanaged"  # "true": the operator ignores the resource entirely
RETRY = f"{GROUP}/retry"  # change its value to retry a failed job without changing the spec
APPLY_NOW = f"{GROUP}/apply-now"  # a plan id: that plan starts outside spec.apply.window

# The CRD's patterns: a plan id (or empty), Spark's memory sizes, and Kubernetes object names.
_PLAN_ID = re.compile(r"(sha256:[0-9a-f]{64})?")
_SPARK_MEMORY = re.compile(r"[0-9]+([kKmMgGtTpP][bB]?)?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_SUBDOMAIN_MAX = 253
# spec.buckets.sizing.replanEvery: one number and one unit, as the CRD's CEL rule reads it.
_DURATION_FORMAT = (
    "a duration in minutes, hours or days, such as 90m, 24h or 7d (at most 999999m, 9999h or 999d)"
)
_NAME_FORMAT = "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"


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
    writers: WritersSpec = field(default_factory=WritersSpec)  # paused around an apply that moves data
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


class _Problems(list[str]):
    """What is wrong with a spec, each problem naming its field."""

    def wrong(self, where: str, expected: str, value: object) -> None:
        if value is None:
            self.append(f"{where} is required ({expected})")
        else:
            self.append(f"{where} must be {expected}, not {value!r}")


def parse_spec(spec: Mapping[str, Any]) -> TableSpec:
    """A TableSpec, or InvalidSpecError listing every problem found (not just the first)."""
    if not isinstance(spec, Mapping):
        raise InvalidSpecError(f"spec must be an object with table and buckets, not {spec!r}")
    problems = _Problems()
    table = _section(spec, "spec", "table", problems, expected="an object with the table's uri")
    buckets = _section(spec, "spec", "buckets", problems, expected="an object with default and rules")
    apply = _section(spec, "spec", "apply", problems, optional=True) or {}

    uri, hash_fields, key_style = "", tuple[str, ...](), None
    if table is not None:
        uri = _uri(table.get("uri"), problems)
        hash_fields = _hash_fields(table.get("hashFields"), problems)
        key_style = _choice(_KEY_STYLES, table.get("keyStyle"), "spec.table.keyStyle", problems)
    rules, current, convert, keep_duplicates, sizing, replan_every = None, None, False, False, None, None
    if buckets is not None:
        rules = _rules(buckets, problems)
        sizing_spec = _section(buckets, "spec.buckets", "sizing", problems, optional=True)
        sizing = None if sizing_spec is None else _sizing(sizing_spec, problems)
        replan_every = None if sizing_spec is None else _duration(sizing_spec.get("replanEvery"), problems)
        current = _integer(
            buckets.get("currentBuckets"), "spec.buckets.currentBuckets", 1, MAX_BUCKETS, problems
        )
        convert = _boolean(buckets.get("convert"), "spec.buckets.convert", problems)
        keep_duplicates = _boolean(buckets.get("keepDuplicates"), "spec.buckets.keepDuplicates", problems)
        if convert and current is not None:
            problems.append(
                "spec.buckets.convert and spec.buckets.currentBuckets cannot both be set: a table that is "
                "not bucket-indexed yet has no current bucket count; drop currentBuckets (or drop convert "
                "if the table is already bucket-indexed)"
            )
    policy = _choice({p.value: p for p in ApplyPolicy}, apply.get("policy"), "spec.apply.policy", problems)
    approved_plan = _string(
        apply.get("approvedPlan"),
        "spec.apply.approvedPlan",
        problems,
        _PLAN_ID,
        "a plan id as shown in status.plan.id (sha256: followed by 64 lowercase hex digits), or empty",
    )
    metadata_table = _choice(
        {p.value: p for p in MetadataTablePolicy}, spec.get("metadataTable"), "spec.metadataTable", problems
    )
    engine = _choice({e.value: e for e in Engine}, spec.get("engine"), "spec.engine", problems)
    spark = _spark(_section(spec, "spec", "spark", problems, optional=True) or {}, problems)
    verify = _verify(_section(spec, "spec", "verify", problems, optional=True), problems)
    writers = parse_writers(spec.get("writers"), problems)
    window = parse_window(apply.get("window"), problems)
    if problems or rules is None:
        raise InvalidSpecError("; ".join(problems))
    return TableSpec(
        uri=uri,
        rules=rules,
        hash_fields=hash_fields,
        key_style=key_style,
        current_buckets=current,
        convert=convert,
        keep_duplicates=keep_duplicates,
        sizing=sizing,
        replan_every=replan_every,
        policy=policy or ApplyPolicy.MANUAL,
        approved_plan=approved_plan,
        metadata_table=metadata_table or MetadataTablePolicy.REFUSE,
        engine=engine or Engine.AUTO,
        spark=spark,
        verify=verify,
        writers=writers,
        window=window,
    )


# --- one field each --------------------------------------------------------------------------------------


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _section(
    parent: Mapping[str, Any],
    where: str,
    key: str,
    problems: _Problems,
    *,
    expected: str = "an object",
    optional: bool = False,
) -> Mapping[str, Any] | None:
    value = parent.get(key)
    if isinstance(value, Mapping):
        return value
    if value is not None or not optional:
        problems.wrong(f"{where}.{key}", expected, value)
    return None


def _integer(value: object, where: str, low: int, high: int, problems: _Problems) -> int | None:
    """``value`` if it is an integer in low..high; None (and a problem unless absent) otherwise."""
    if value is None:
        return None
    if _is_int(value) and low <= value <= high:
        return value
    problems.wrong(where, f"an integer in {low}..{high}", value)
    return None


def _boolean(value: object, where: str, problems: _Problems) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    problems.wrong(where, "true or false", value)
    return False


def _string(
    value: object,
    where: str,
    problems: _Problems,
    pattern: re.Pattern[str] | None = None,
    expected: str = "a string",
) -> str:
    """``value`` if it is a string (empty, or matching ``pattern``); "" (and a problem) otherwise."""
    if value is None:
        return ""
    if isinstance(value, str) and (not value or pattern is None or pattern.fullmatch(value)):
        return value
    problems.wrong(where, expected, value)
    return ""


def _choice(choices: Mapping[str, Any], value: object, where: str, problems: _Problems) -> Any:
    if value is None:
        return None
    if isinstance(value, str) and value in choices:
        return choices[value]
    problems.wrong(where, f"one of {list(choices)}", value)
    return None


def _name(value: object, where: str, kind: str, problems: _Problems) -> str:
    """A Kubernetes object name (a DNS-1123 subdomain), or "" (and a problem)."""
    if isinstance(value, str) and len(value) <= _DNS_SUBDOMAIN_MAX and _DNS_SUBDOMAIN.fullmatch(value):
        return value
    problems.wrong(where, f"a {kind} name ({_NAME_FORMAT})", value)
    return ""


# --- the table and its rules ---------------------------------------------------------------------------


def _uri(value: object, problems: _Problems) -> str:
    where, expected = "spec.table.uri", "the table's base path (s3a://..., hdfs://..., /local/path)"
    if isinstance(value, str) and value.strip():
        return value.strip()
    if value is None or isinstance(value, str):
        problems.append(f"{where} is required: {expected}")
    else:
        problems.wrong(where, f"a string, {expected}", value)
    return ""


def _hash_fields(value: object, problems: _Problems) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.wrong("spec.table.hashFields", "a list of field names", value)
        return ()
    for index, name in enumerate(value):
        where = f"spec.table.hashFields[{index}]"
        if not isinstance(name, str) or not name:
            problems.wrong(where, "a field name", name)
        elif "," in name:
            problems.append(f"{where} {name!r} cannot contain ',': list each field as its own item")
    return tuple(name for name in value if isinstance(name, str))


def _rules(buckets: Mapping[str, Any], problems: _Problems) -> BucketRules | None:
    """The rules, or None with every problem found; a bad default or rule type does not stop the
    checks of the rules themselves."""
    default = buckets.get("default")
    if not (_is_int(default) and 1 <= default <= MAX_BUCKETS):
        problems.wrong("spec.buckets.default", f"an integer in 1..{MAX_BUCKETS}", default)
    rule_type = buckets.get("rule")  # Hudi ignores its case, the CRD's enum does not: one spelling
    if rule_type is not None and rule_type != REGEX:
        problems.wrong("spec.buckets.rule", f"{REGEX!r} (the only rule type Hudi 1.1 knows)", rule_type)
    items = buckets.get("rules")
    if items is None and buckets.get("sizing") is not None and _is_int(default):
        return BucketRules((), default, REGEX)  # sizing proposes the rules (or a rule that changes nothing)
    if items is None or items == []:
        problems.append(
            "spec.buckets.rules has no rules: give at least one (Hudi's rule engine fails on an empty list), "
            "or spec.buckets.sizing, which proposes rules of its own"
        )
        return None
    if not isinstance(items, list):
        problems.wrong("spec.buckets.rules", "a list of rules (pattern and buckets)", items)
        return None
    if len(items) > MAX_RULES:
        problems.append(f"spec.buckets.rules has {len(items)} rules: at most {MAX_RULES} rules are allowed")
    matcher = PythonRegexMatcher()
    rules = [_rule(index, item, matcher, problems) for index, item in enumerate(items)]
    if None in rules or not _is_int(default):
        return None
    return BucketRules(tuple(rule for rule in rules if rule is not None), default, REGEX)


def _rule(index: int, item: object, matcher: PythonRegexMatcher, problems: _Problems) -> Rule | None:
    where = f"spec.buckets.rules[{index}]"
    if not isinstance(item, Mapping):
        problems.wrong(where, "an object with pattern and buckets", item)
        return None
    pattern, count = item.get("pattern"), item.get("buckets")
    if not isinstance(pattern, str):
        problems.wrong(f"{where}.pattern", "a string (a Java regular expression)", pattern)
    if not _is_int(count):
        problems.wrong(f"{where}.buckets", f"an integer in 1..{MAX_BUCKETS}", count)
    if not isinstance(pattern, str):
        return None
    if len(pattern) > MAX_PATTERN_LENGTH:
        problems.append(f"{where}.pattern is {len(pattern)} characters long: at most {MAX_PATTERN_LENGTH}")
        return None
    # BucketRules.validate numbers rules from 1 within the list it checks: check each rule on its own
    # (with a placeholder count if its own is no integer) and name it by its place in the manifest.
    rule = Rule(pattern, count if _is_int(count) else 1)
    try:
        BucketRules((rule,), 1, REGEX).validate(matcher)
    except HudiBucketError as err:
        message = str(err.args[0]) if err.args else str(err)
        problem = message.partition(f"rule 1 ({rule.pattern!r} -> {rule.buckets!r}): ")[2] or message
        problems.append(f"{where} ({pattern!r} -> {count!r}): {problem}")
        return None
    return rule if _is_int(count) else None


def _duration(value: object, problems: _Problems) -> int | None:
    """Seconds from ``90m``, ``24h`` or ``7d`` (one number, one unit), within the CRD's bounds."""
    if value is None:
        return None
    seconds = parse_duration(value) if isinstance(value, str) else None
    if seconds is None:
        problems.wrong("spec.buckets.sizing.replanEvery", _DURATION_FORMAT, value)
    return seconds


def _verify(raw: Mapping[str, Any] | None, problems: _Problems) -> Schedule | None:
    """spec.verify.schedule: when the layout is checked (None: never)."""
    value = None if raw is None else raw.get("schedule")
    if value is None:
        return None
    try:
        if isinstance(value, str):
            return Schedule.parse(value)
    except ScheduleError:
        pass
    problems.wrong("spec.verify.schedule", SCHEDULE_FORMAT, value)
    return None


def _sizing(raw: Mapping[str, Any], problems: _Problems) -> SizingPolicy | None:
    where, before = "spec.buckets.sizing", len(problems)
    target = raw.get("targetFileSize")
    size = None
    try:
        if isinstance(target, str | int) and not isinstance(target, bool):
            size = parse_size(target)
    except ValueError:
        pass
    if size is None or size < 1:
        problems.wrong(f"{where}.targetFileSize", f"{QUANTITY_FORMAT}, above 0", target)
    low = _integer(raw.get("minBuckets"), f"{where}.minBuckets", 1, MAX_BUCKETS, problems)
    high = _integer(raw.get("maxBuckets"), f"{where}.maxBuckets", 1, MAX_BUCKETS, problems)
    if low is not None and high is not None and low > high:
        problems.append(f"{where}.minBuckets {low} must not be above maxBuckets {high}")
    partitions = _string(raw.get("partitions"), f"{where}.partitions", problems, expected="a Java regex")
    tolerance = raw.get("tolerance", DEFAULT_TOLERANCE)
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, int | float)
        or not 1 < tolerance <= MAX_TOLERANCE
    ):
        problems.wrong(
            f"{where}.tolerance", f"a factor above 1 and at most {MAX_TOLERANCE:g} (e.g. 2)", tolerance
        )
        tolerance = None
    if size is None or size < 1 or tolerance is None or len(problems) > before:
        return None
    policy = SizingPolicy(size, low or 1, high or MAX_BUCKETS, partitions, float(tolerance))
    try:  # what only code can check: that the partitions pattern compiles and means the same in Java
        policy.validate(PythonRegexMatcher())
    except SizingError as err:
        problems.append(f"{where}: {err.args[0]}")
        return None
    return policy


# --- how jobs run --------------------------------------------------------------------------------------


def _resources(raw: Mapping[str, Any], where: str, problems: _Problems, *, executor: bool) -> Resources:
    memory = raw.get("memory")
    if memory is not None and not (isinstance(memory, str) and _SPARK_MEMORY.fullmatch(memory)):
        problems.wrong(
            f"{where}.memory",
            "in Spark's format, a number with an optional unit k, m, g, t or p (e.g. 512m or 4g; "
            "not a Kubernetes quantity such as 4Gi)",
            memory,
        )
        memory = None
    return Resources(
        cores=_integer(raw.get("cores"), f"{where}.cores", 1, MAX_CORES, problems),
        memory=memory,
        instances=(
            _integer(raw.get("instances"), f"{where}.instances", 1, MAX_EXECUTORS, problems)
            if executor
            else None
        ),
    )


def _conf(raw: Mapping[str, Any], key: str, problems: _Problems) -> dict[str, str]:
    conf = _section(
        raw, "spec.spark", key, problems, expected="a map of property names to strings", optional=True
    )
    for name, value in (conf or {}).items():
        if not isinstance(value, str):
            problems.wrong(f"spec.spark.{key}[{name!r}]", "a string (quote it in YAML)", value)
    return {str(name): value for name, value in (conf or {}).items() if isinstance(value, str)}


def _secrets(value: object, problems: _Problems) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.wrong("spec.spark.envFromSecrets", "a list of {name: <Secret name>}", value)
        return ()
    names = []
    for index, item in enumerate(value):
        where = f"spec.spark.envFromSecrets[{index}]"
        if not isinstance(item, Mapping):
            problems.wrong(where, "an object with the Secret's name", item)
        elif name := _name(item.get("name"), f"{where}.name", "Secret", problems):
            names.append(name)
    return tuple(names)


def _spark(raw: Mapping[str, Any], problems: _Problems) -> SparkSettings:
    driver = _section(raw, "spec.spark", "driver", problems, optional=True) or {}
    executor = _section(raw, "spec.spark", "executor", problems, optional=True) or {}
    account = raw.get("serviceAccount")
    return SparkSettings(
        image=_string(raw.get("image"), "spec.spark.image", problems),
        spark_version=_string(raw.get("sparkVersion"), "spec.spark.sparkVersion", problems),
        service_account=(
            _name(account, "spec.spark.serviceAccount", "ServiceAccount", problems)
            if account not in (None, "")
            else ""
        ),
        driver=_resources(driver, "spec.spark.driver", problems, executor=False),
        executor=_resources(executor, "spec.spark.executor", problems, executor=True),
        spark_conf=_conf(raw, "sparkConf", problems),
        hadoop_conf=_conf(raw, "hadoopConf", problems),
        env_from_secrets=_secrets(raw.get("envFromSecrets"), problems),
        ttl_seconds=_integer(raw.get("ttlSeconds"), "spec.spark.ttlSeconds", 0, MAX_TTL_SECONDS, problems),
    )

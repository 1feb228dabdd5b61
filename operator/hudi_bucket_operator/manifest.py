"""The HudiBucketTable spec as the CRD declares it, as pydantic models (no I/O).

Each model is one object of the CRD's schema: its fields are the CRD's properties (snake_case here,
camelCase in the manifest), with the same required fields, enums and defaults. The CRD's CEL rules and
what only code can check (that a pattern compiles and means the same in Java as in Python) are the
models' validators; a section's rules across its fields (``rules_broken``) read the object as written,
so that, as with the API server, a field's error hides none of them. tests/operator/test_manifest.py
keeps the models and the CRD in step.

The models hold the manifest's values, checked; spec.py turns them into the operator's (a TableSpec).
``problems`` says what is wrong with a spec the models refuse, each problem naming its field the way
the manifest does (``spec.buckets.rules[0].pattern``, counting from 0) and what it must be.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from hudi_bucket.core.engine import Engine
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
from hudi_bucket_operator.errors import ScheduleError
from hudi_bucket_operator.schedule import FORMAT as SCHEDULE_FORMAT
from hudi_bucket_operator.schedule import Schedule, parse_duration

# Bounds of spec.spark, as the CRD states them.
MAX_CORES = 256
MAX_EXECUTORS = 1000
MAX_TTL_SECONDS = 365 * 24 * 3600
MAX_WRITERS = 20

# The CRD's patterns: a plan id (or empty), Spark's memory sizes, Kubernetes names.
_PLAN_ID = r"^(sha256:[0-9a-f]{64})?$"
_SPARK_MEMORY = r"^[0-9]+([kKmMgGtTpP][bB]?)?$"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS_SUBDOMAIN_MAX = 253
_NAME_FORMAT = "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
# spec.buckets.sizing.replanEvery: one number and one unit, as the CRD's CEL rule reads it.
REPLAN_FORMAT = (
    "a duration in minutes, hours or days, such as 90m, 24h or 7d (at most 999999m, 9999h or 999d)"
)
WAIT_FORMAT = "a duration in minutes, hours or days, such as 15m, 3h or 1d"
WINDOW_SCHEDULE_FORMAT = (
    "a cron expression in UTC as spec.verify.schedule takes one (no interval): five fields such as "
    "'0 1 * * *' or '0 1 * * SAT,SUN', or @hourly, @daily, @weekly, @monthly or @yearly"
)


class ApplyPolicy(enum.StrEnum):
    AUTOMATIC = "Automatic"  # apply every plan as soon as it is made
    MANUAL = "Manual"  # apply a plan only once its id is copied into spec.apply.approvedPlan


class MetadataTablePolicy(enum.StrEnum):
    REFUSE = "Refuse"  # a live metadata table stops the rescale (it would go stale)
    DISABLE = "Disable"  # remove it the way Hudi does, and say so


@dataclass(frozen=True)
class Expect:
    """What a field must be, as a refusal says it ("spec.x must be <text>, not 5")."""

    text: str


def problem(text: str, *, field: str = "") -> PydanticCustomError:
    """A problem a validator finds: ``text`` follows the path of the object it checks (and ``field``)."""
    return PydanticCustomError("spec_problem", "{text}", {"text": text, "field": field})


def wrong(field: str, expected: str, value: object) -> PydanticCustomError:
    """A problem with ``field`` of the object a validator checks, said as a field's type error is."""
    return problem(_must_be(expected, value), field=field)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _must_be(expected: str, value: object) -> str:
    return f" is required ({expected})" if value is None else f" must be {expected}, not {value!r}"


def _duration(text: str) -> str:
    if parse_duration(text) is None:
        raise ValueError("not a duration")
    return text


def _schedule(text: str) -> str:
    try:
        Schedule.parse(text)
    except ScheduleError:
        raise ValueError("not a schedule") from None
    return text


def _window_schedule(text: str) -> str:
    if parse_duration(text) is not None:  # a window starts at set times, not an interval after the last
        raise ValueError("an interval")
    return _schedule(text)


def _size(value: object) -> object:
    # Checked before the union int | str, so that a refusal names the field, not a member of the union.
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("not a size")
    if parse_size(value) < 1:
        raise ValueError("not above 0")
    return value


Duration = Annotated[str, AfterValidator(_duration)]
BucketCount = Annotated[int, Field(ge=1, le=MAX_BUCKETS)]
DnsName = Annotated[str, Field(max_length=_DNS_SUBDOMAIN_MAX, pattern=f"^{_DNS_SUBDOMAIN}$")]
Memory = Annotated[
    str,
    Field(pattern=_SPARK_MEMORY),
    Expect(
        "in Spark's format, a number with an optional unit k, m, g, t or p (e.g. 512m or 4g; "
        "not a Kubernetes quantity such as 4Gi)"
    ),
]
ConfValue = Annotated[str, Expect("a string (quote it in YAML)")]
Conf = Annotated[dict[str, ConfValue], Expect("a map of property names to strings")]


def _no_comma(name: str) -> str:
    if "," in name:
        raise problem(f" {name!r} cannot contain ',': list each field as its own item")
    return name


HashField = Annotated[str, Field(min_length=1), AfterValidator(_no_comma), Expect("a field name")]


class Section(BaseModel):
    """One object of the spec. Strict: a manifest's "4" is no integer and its "false" no boolean."""

    # Unknown fields are the API server's to prune or refuse; the operator reads what it knows.
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore", alias_generator=to_camel)
    expected: ClassVar[str] = "an object"

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        """The problems with this object by its own rules (the CRD's CEL rules, and what only code can
        check), read from the object as written, so that a field's error hides none of them."""
        return []

    @model_validator(mode="wrap")
    @classmethod
    def _fields_and_rules(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # As the API server does: the schema's errors and the CEL rules' problems, all said at once.
        try:
            section, errors = handler(data), []
        except ValidationError as err:
            section, errors = None, [_again(error) for error in err.errors()]
        if isinstance(data, Mapping):
            errors += [InitErrorDetails(type=found, loc=(), input=data) for found in cls.rules_broken(data)]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return section


# --- the table and its rules ---------------------------------------------------------------------------


class TableSection(Section):
    expected: ClassVar[str] = "an object with the table's uri"

    uri: Annotated[str, Expect("a string, the table's base path (s3a://..., hdfs://..., /local/path)")]
    hash_fields: Annotated[list[HashField], Expect("a list of field names")] = []
    key_style: Literal["Hudi1x", "Hudi0x"] | None = None

    @field_validator("uri")
    @classmethod
    def _trimmed(cls, uri: str) -> str:
        if not uri.strip():
            raise problem(" is required: the table's base path (s3a://..., hdfs://..., /local/path)")
        return uri.strip()


class RuleSection(Section):
    expected: ClassVar[str] = "an object with pattern and buckets"

    pattern: Annotated[str, Expect("a string (a Java regular expression)")]
    # Bounded by the rule's own check below, which says it as Hudi does (with the pattern).
    buckets: Annotated[int, Expect(f"an integer in 1..{MAX_BUCKETS}")]

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        # The rule as Hudi reads it; a count that is no integer does not stop its pattern's check.
        pattern = data.get("pattern")
        found = _rule_problem(pattern, data.get("buckets")) if isinstance(pattern, str) else None
        return [] if found is None else [found]


def _rule_problem(pattern: str, count: object) -> PydanticCustomError | None:
    if len(pattern) > MAX_PATTERN_LENGTH:
        return problem(f" is {len(pattern)} characters long: at most {MAX_PATTERN_LENGTH}", field="pattern")
    # BucketRules.validate numbers rules from 1 within the list it checks: check this rule on its own
    # (with a placeholder count if its own is no integer) and name it by its place in the manifest.
    rule = Rule(pattern, count if _is_int(count) else 1)
    try:
        BucketRules((rule,), 1, REGEX).validate(PythonRegexMatcher())
    except HudiBucketError as err:
        message = str(err.args[0]) if err.args else str(err)
        said = message.partition(f"rule 1 ({rule.pattern!r} -> {rule.buckets!r}): ")[2] or message
        return problem(f" ({pattern!r} -> {count!r}): {said}")
    return None


def _again(error: ErrorDetails) -> InitErrorDetails:
    """A field's error, to raise again beside its section's own problems."""
    kind = error["type"]
    ctx = error.get("ctx", {})
    again: str | PydanticCustomError = kind
    if kind == "spec_problem":
        again = problem(ctx["text"], field=ctx["field"])
    return InitErrorDetails(type=again, loc=error["loc"], input=error["input"], ctx=ctx)


class SizingSection(Section):
    target_file_size: Annotated[int | str, BeforeValidator(_size), Expect(f"{QUANTITY_FORMAT}, above 0")]
    min_buckets: BucketCount | None = None
    max_buckets: BucketCount | None = None
    partitions: Annotated[str, Expect("a Java regex")] = ""
    replan_every: Annotated[Duration, Expect(REPLAN_FORMAT)] | None = None
    tolerance: Annotated[
        float,
        Field(gt=1, le=MAX_TOLERANCE),
        Expect(f"a factor above 1 and at most {MAX_TOLERANCE:g} (e.g. 2)"),
    ] = DEFAULT_TOLERANCE

    def policy(self) -> SizingPolicy:
        return SizingPolicy(
            parse_size(self.target_file_size),
            self.min_buckets or 1,
            self.max_buckets or MAX_BUCKETS,
            self.partitions,
            float(self.tolerance),
        )

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        low, high = data.get("minBuckets"), data.get("maxBuckets")
        if _is_int(low) and _is_int(high) and low > high:
            return [problem(f" {low} must not be above maxBuckets {high}", field="minBuckets")]
        return []

    @model_validator(mode="after")
    def _policy(self) -> SizingSection:
        # What only code can check: that the partitions pattern compiles and means the same in Java
        # (bounds out of order are for rules_broken to say, once).
        if (self.min_buckets or 1) <= (self.max_buckets or MAX_BUCKETS):
            try:
                self.policy().validate(PythonRegexMatcher())
            except SizingError as err:
                raise problem(f": {err.args[0]}") from None
        return self


class BucketsSection(Section):
    expected: ClassVar[str] = "an object with default and rules"

    default: BucketCount
    # Hudi ignores the rule type's case, the CRD's enum does not: one spelling.
    rule: Annotated[Literal["regex"], Expect(f"{REGEX!r} (the only rule type Hudi 1.1 knows)")] = "regex"
    rules: Annotated[list[RuleSection], Expect("a list of rules (pattern and buckets)")] | None = None
    current_buckets: BucketCount | None = None
    convert: bool = False
    keep_duplicates: bool = False
    sizing: SizingSection | None = None

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        rules, found = data.get("rules"), []
        if rules == [] or (rules is None and data.get("sizing") is None):
            found.append(
                problem(
                    " has no rules: give at least one (Hudi's rule engine fails on an empty list), "
                    "or spec.buckets.sizing, which proposes rules of its own",
                    field="rules",
                )
            )
        if isinstance(rules, list) and len(rules) > MAX_RULES:
            found.append(
                problem(f" has {len(rules)} rules: at most {MAX_RULES} rules are allowed", field="rules")
            )
        if data.get("convert") is True and data.get("currentBuckets") is not None:
            found.append(
                problem(
                    " and spec.buckets.currentBuckets cannot both be set: a table that is not "
                    "bucket-indexed yet has no current bucket count; drop currentBuckets (or drop convert "
                    "if the table is already bucket-indexed)",
                    field="convert",
                )
            )
        return found

    def bucket_rules(self) -> BucketRules:
        rules = tuple(Rule(rule.pattern, rule.buckets) for rule in self.rules or ())
        return BucketRules(rules, self.default, REGEX)  # no rules: sizing proposes them


# --- when a plan is applied, and who writes the table meanwhile -----------------------------------------


class WindowSection(Section):
    expected: ClassVar[str] = "an object with schedule (cron, UTC) and duration"

    schedule: Annotated[str, AfterValidator(_window_schedule), Expect(WINDOW_SCHEDULE_FORMAT)]
    duration: Annotated[Duration, Expect(WAIT_FORMAT)]


class ApplySection(Section):
    policy: ApplyPolicy = Field(ApplyPolicy.MANUAL, strict=False)  # a manifest spells it as a string
    approved_plan: Annotated[
        str,
        Field(pattern=_PLAN_ID),
        Expect(
            "a plan id as shown in status.plan.id (sha256: followed by 64 lowercase hex digits), or empty"
        ),
    ] = ""
    window: WindowSection | None = None


class WorkloadSection(Section):
    expected: ClassVar[str] = "an object with kind and name"

    kind: Annotated[
        str,
        Field(pattern=r"^[A-Z][A-Za-z0-9]*$"),
        Expect("a kind such as Deployment, StatefulSet or one the admins declare (FlinkDeployment)"),
    ]
    name: Annotated[DnsName, Expect("the workload's name, in the table's namespace")]


class WritersSection(Section):
    expected: ClassVar[str] = "an object with workloads (and quiesceTimeout)"

    quiesce_timeout: Annotated[Duration, Expect(WAIT_FORMAT)] | None = None
    workloads: Annotated[
        list[WorkloadSection],
        Field(max_length=MAX_WRITERS),
        Expect(f"a list of at most {MAX_WRITERS} workloads"),
    ] = []

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        workloads = data.get("workloads")
        keys = [
            f"{workload['kind']}/{workload['name']}"
            for workload in (workloads if isinstance(workloads, list) else [])
            if isinstance(workload, Mapping)
            and isinstance(workload.get("kind"), str)
            and isinstance(workload.get("name"), str)
        ]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        return [problem(f" names {key} more than once", field="workloads") for key in twice]


class VerifySection(Section):
    schedule: Annotated[str, AfterValidator(_schedule), Expect(SCHEDULE_FORMAT)] | None = None


# --- how jobs run --------------------------------------------------------------------------------------


class DriverSection(Section):
    cores: Annotated[int, Field(ge=1, le=MAX_CORES)] | None = None
    memory: Memory | None = None


class ExecutorSection(DriverSection):
    instances: Annotated[int, Field(ge=1, le=MAX_EXECUTORS)] | None = None


class SecretSection(Section):
    expected: ClassVar[str] = "an object with the Secret's name"

    name: Annotated[DnsName, Expect(f"a Secret name ({_NAME_FORMAT})")]


class SparkSection(Section):
    image: str = ""
    spark_version: str = ""
    service_account: Annotated[
        str,
        Field(max_length=_DNS_SUBDOMAIN_MAX, pattern=f"^({_DNS_SUBDOMAIN})?$"),
        Expect(f"a ServiceAccount name ({_NAME_FORMAT})"),
    ] = ""
    driver: DriverSection = DriverSection()
    executor: ExecutorSection = ExecutorSection()
    spark_conf: Conf = {}
    hadoop_conf: Conf = {}
    env_from_secrets: Annotated[list[SecretSection], Expect("a list of {name: <Secret name>}")] = []
    ttl_seconds: Annotated[int, Field(ge=0, le=MAX_TTL_SECONDS)] | None = None


# --- the spec ------------------------------------------------------------------------------------------


class TableSpecSection(Section):
    """The whole spec of a HudiBucketTable."""

    expected: ClassVar[str] = "an object with table and buckets"

    table: TableSection
    buckets: BucketsSection
    apply: ApplySection = ApplySection()
    metadata_table: MetadataTablePolicy = Field(MetadataTablePolicy.REFUSE, strict=False)
    engine: Engine = Field(Engine.AUTO, strict=False)
    writers: WritersSection = WritersSection()
    verify: VerifySection | None = None
    spark: SparkSection = SparkSection()


# --- what is wrong, said the manifest's way ------------------------------------------------------------


def problems(err: ValidationError) -> list[str]:
    """Each of ``err``'s errors as one problem: the field's path in the manifest and what it must be."""
    return [_said(error) for error in err.errors()]


def _said(error: ErrorDetails) -> str:
    where, annotation = _locate(error["loc"])
    if error["type"] == "spec_problem":
        ctx = error.get("ctx", {})
        return f"{where}.{ctx['field']}{ctx['text']}" if ctx["field"] else f"{where}{ctx['text']}"
    value = None if error["type"] == "missing" else error["input"]
    return f"{where}{_must_be(_expected(annotation) or error['msg'], value)}"


def _locate(loc: tuple[int | str, ...]) -> tuple[str, Any]:
    """The manifest's path to ``loc`` and the annotation of what is there."""
    where: str = "spec"
    annotation: Any = TableSpecSection
    for part in loc:
        base = _unwrapped(annotation)[0]
        if isinstance(base, type) and issubclass(base, BaseModel):
            info = next(info for info in base.model_fields.values() if info.alias == part)
            where, annotation = f"{where}.{part}", _annotated(info)
        elif get_origin(base) is dict:
            where, annotation = f"{where}[{part!r}]", get_args(base)[1]
        elif get_origin(base) is list:
            where, annotation = f"{where}[{part}]", get_args(base)[0]
        else:  # nothing the spec declares: say where, and pydantic's own words
            return f"{where}[{part}]", None
    return where, annotation


def _annotated(info: FieldInfo) -> Any:
    return Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation


def _unwrapped(annotation: Any) -> tuple[Any, list[Any]]:
    """The type under ``Annotated`` and ``| None``, and all that ``Annotated`` says of it, outer first."""
    found: list[Any] = []
    while True:
        if get_origin(annotation) is Annotated:
            found += [
                item
                for extra in get_args(annotation)[1:]
                for item in (extra.metadata if isinstance(extra, FieldInfo) else [extra])
            ]
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType):
            members = [member for member in get_args(annotation) if member is not type(None)]
            if len(members) != 1:  # int | str: a union of its own, not an optional field
                return annotation, found
            annotation = members[0]
        else:
            return annotation, found


def _expected(annotation: Any) -> str | None:
    """What a value of ``annotation`` must be, as a refusal says it."""
    base, metadata = _unwrapped(annotation)
    for item in metadata:
        if isinstance(item, Expect):
            return item.text
    if isinstance(base, type) and issubclass(base, Section):
        return base.expected
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return f"one of {[member.value for member in base]}"
    if get_origin(base) is Literal:
        return f"one of {list(get_args(base))}"
    if base is bool:
        return "true or false"
    if base is int:
        # Field(ge=, le=) leaves annotated-types' Ge and Le in the metadata.
        low = next((item.ge for item in metadata if hasattr(item, "ge")), None)
        high = next((item.le for item in metadata if hasattr(item, "le")), None)
        return "an integer" if low is None or high is None else f"an integer in {low}..{high}"
    if base is str:
        return "a string"
    return None

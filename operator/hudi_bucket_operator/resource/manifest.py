"""The HudiBucketTable spec, as pydantic models from which the CRD's spec schema is generated (no I/O).

Each model is one object of the CRD's schema: its fields are the CRD's properties (snake_case here,
camelCase in the manifest), each described by its docstring, with its required fields, enums, defaults,
bounds, patterns and CEL rules (crd_schema.py's markers); crd.py turns them into the CRD. The CEL rules
are the API server's; what they check and what only code can check (that a pattern compiles and means the
same in Java as in Python) are the models' validators too; a section's rules across its fields
(``rules_broken``) read the object as written, so that, as with the API server, a field's error hides
none of them.

The models are also what the operator reads: ``parse_spec`` validates a spec into a ``TableSpec``
(again: a cluster may run without CEL, and the local mode has no API server at all), which works out
what the operator needs of it (the bucket rules as Hudi reads them, the sizing policy, schedules, the
writers, the apply window, each job's request). ``problems`` says what is wrong with a spec the models
refuse, each problem naming its field the way the manifest does (``spec.buckets.rules[0].pattern``,
counting from 0) and what it must be.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
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
    QUANTITY,
    QUANTITY_FORMAT,
    SizingError,
    SizingPolicy,
    parse_size,
)
from hudi_bucket.errors import HudiBucketError
from hudi_bucket_operator.errors import InvalidSpecError, ScheduleError
from hudi_bucket_operator.resource.crd_schema import (
    ATOMIC_LIST,
    FILLED,
    Cel,
    Int32,
    Int64,
    MatchedByCel,
    cel_rules,
    cel_string,
    extra,
    list_map,
)
from hudi_bucket_operator.resource.images import REFERENCE
from hudi_bucket_operator.resource.schedule import DURATION, Schedule, parse_duration
from hudi_bucket_operator.resource.schedule import FORMAT as SCHEDULE_FORMAT
from hudi_bucket_operator.resource.spark_conf import OWNED_SPARK_CONF, SETTING_NAME, SPARK_SIZE
from hudi_bucket_operator.resource.writers import DEFAULT_QUIESCE_TIMEOUT, Window, WorkloadRef, WriterRefs

# Bounds of spec.spark, as the CRD states them.
MAX_CORES = 256
MAX_EXECUTORS = 1000
MAX_TTL_SECONDS = 365 * 24 * 3600
MAX_WRITERS = 20

# The CRD's patterns: a plan id (or empty), Kubernetes names, durations, the shape of a cron expression
# (the operator checks each field and says what is wrong).
_PLAN_ID = r"^(sha256:[0-9a-f]{64})?$"
_PLAN_ID_FORMAT = (
    "a plan id as shown in status.plan.id (sha256: followed by 64 lowercase hex digits), or empty"
)
_DURATION = f"^({DURATION.pattern})$"
_CRON_SHAPE = r"@[A-Za-z]+|[0-9A-Za-z*?/,#-]+( +[0-9A-Za-z*?/,#-]+){4}"
_MAX_SCHEDULE_LENGTH = 100
_MAX_DURATION_LENGTH = 8
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


WaitDuration = Annotated[
    str,
    Field(max_length=_MAX_DURATION_LENGTH, pattern=_DURATION),
    AfterValidator(_duration),
    Expect(WAIT_FORMAT),
]
BucketCount = Annotated[Int32, Field(ge=1, le=MAX_BUCKETS)]
_IN_BUCKET_RANGE = f"self >= 1 && self <= {MAX_BUCKETS}"


def _bucket_count_rule(named: str) -> Cel:
    """The bounds again as a CEL rule, whose message names the field as a user knows it."""
    return Cel(_IN_BUCKET_RANGE, f"{named} must be a bucket count from 1 to {MAX_BUCKETS}")


DnsName = Annotated[str, Field(max_length=_DNS_SUBDOMAIN_MAX, pattern=f"^{_DNS_SUBDOMAIN}$")]
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


def _no_comma(name: str) -> str:
    if "," in name:
        raise problem(f" {name!r} cannot contain ',': list each field as its own item")
    return name


HashField = Annotated[
    str,
    Field(min_length=1, max_length=256),
    Cel(
        '!self.contains(",")',
        "a hash field name cannot contain ',': list each field as its own item of spec.table.hashFields",
    ),
    AfterValidator(_no_comma),
    Expect("a field name"),
]


class Section(BaseModel):
    """One object of the spec. Strict: a manifest's "4" is no integer and its "false" no boolean."""

    # Unknown fields are the API server's to prune or refuse; the operator reads what it knows.
    model_config = ConfigDict(
        strict=True, frozen=True, extra="ignore", alias_generator=to_camel, use_attribute_docstrings=True
    )
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


_BASE_PATH = "the table's base path (s3a://..., hdfs://..., /local/path)"


class TableSection(Section):
    expected: ClassVar[str] = "an object with the table's uri"

    uri: Annotated[
        str,
        Field(min_length=1, max_length=2048),
        Cel(
            "self.matches('[^[:space:]]')",
            f"spec.table.uri must not be blank: give {_BASE_PATH}",
        ),
        Cel(
            "self == oldSelf",
            "spec.table.uri is immutable: a HudiBucketTable manages one table for its whole life; to manage "
            "another table, create a new HudiBucketTable (and delete this one if it is no longer wanted)",
        ),
        Expect(f"a string, {_BASE_PATH}"),
    ]
    """The table's base path (s3a://..., hdfs://..., /local/path): the folder that holds
    .hoodie/hoodie.properties, under a location the operator's admins allow for the namespace (Helm values
    jobs.allowedTableUris; default s3a:// and local paths). Immutable.
    """
    hash_fields: Annotated[
        list[HashField], Field(max_length=32), ATOMIC_LIST, Expect("a list of field names")
    ] = []
    """Index key fields (hoodie.bucket.index.hash.field). Default: the record key fields."""
    key_style: Literal["Hudi1x", "Hudi0x"] | None = None
    """How record keys were split into index keys: Hudi1x or Hudi0x. Default: Hudi0x for table version 6, else
    Hudi1x.
    """

    @field_validator("uri")
    @classmethod
    def _trimmed(cls, uri: str) -> str:
        if not uri.strip():
            raise problem(f" is required: {_BASE_PATH}")
        return uri.strip()


class RuleSection(Section):
    expected: ClassVar[str] = "an object with pattern and buckets"

    # Its length is the rule's own check (below), which says it as Hudi does.
    pattern: Annotated[
        str,
        extra(minLength=1, maxLength=MAX_PATTERN_LENGTH),
        Cel(
            '!self.contains(",")',
            "a rule's pattern cannot contain ',' (Hudi splits each rule on it): write a literal comma as "
            r"\x2c, and spell out {n,m} repetitions (e.g. \d\d\d? for \d{2,3})",
        ),
        Cel(
            '!self.contains(";")',
            "a rule's pattern cannot contain ';' (Hudi splits the rule list on it): write a literal "
            r"semicolon as \x3b",
        ),
        Cel(
            r'!self.matches("^[\\x00-\\x20]") && !self.matches("[\\x00-\\x20]$")',
            "a rule's pattern cannot start or end with whitespace or a control character (Hudi trims "
            "them away): remove them, or write a space at either end as [ ]",
        ),
        Expect("a string (a Java regular expression)"),
    ]
    """A Java regular expression, found anywhere in the partition path (anchor it with ^ and $ to match a
    whole path). No ',' or ';', no [[...]] classes, no Java-only or Python-only syntax.
    """
    # Bounded by the rule's own check below, which says it as Hudi does (with the pattern).
    buckets: Annotated[
        Int32,
        extra(minimum=1, maximum=MAX_BUCKETS),
        _bucket_count_rule("a rule's buckets"),
        Expect(f"an integer in 1..{MAX_BUCKETS}"),
    ]
    """Bucket count of the partitions this rule matches (1..100000)."""

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
    model_config = ConfigDict(
        json_schema_extra=cel_rules(
            Cel(
                "!has(self.minBuckets) || !has(self.maxBuckets) || self.minBuckets <= self.maxBuckets",
                "spec.buckets.sizing.minBuckets must not be above maxBuckets",
            )
        )
    )

    target_file_size: Annotated[
        int | Annotated[str, Field(max_length=32)],
        BeforeValidator(_size),
        Cel(
            f"type(self) == int ? self >= 1 : self.matches({cel_string(f'^{QUANTITY.pattern}$')})",
            f"spec.buckets.sizing.targetFileSize must be {QUANTITY_FORMAT}, above 0",
        ),
        Expect(f"{QUANTITY_FORMAT}, above 0"),
    ]
    """The file size wanted, a Kubernetes quantity such as 512Mi or 1Gi."""
    min_buckets: BucketCount | None = None
    """Sizing gives no partition fewer buckets (default 1)."""
    max_buckets: BucketCount | None = None
    """Sizing gives no partition more buckets (default 100000)."""
    partitions: Annotated[str, Field(max_length=MAX_PATTERN_LENGTH), Expect("a Java regex")] = ""
    """A Java regular expression: only the partitions it is found in are sized (e.g. closed days only).
    Default: every partition.
    """
    replan_every: (
        Annotated[
            str,
            Field(max_length=7, pattern=_DURATION),
            MatchedByCel(f"spec.buckets.sizing.replanEvery must be {REPLAN_FORMAT}"),
            AfterValidator(_duration),
            Expect(REPLAN_FORMAT),
        ]
        | None
    ) = None
    """Plan again this often (a duration: 90m, 24h, 7d) once the table is Ready, so the counts follow the data
    as it grows; the plan is approved like any other. Default: plan only when the spec changes.
    """
    tolerance: Annotated[
        float,
        Field(gt=1, le=MAX_TOLERANCE),
        Expect(f"a factor above 1 and at most {MAX_TOLERANCE:g} (e.g. 2)"),
    ] = DEFAULT_TOLERANCE
    """How far from the target (a factor) files may be before a partition is worth a rewrite (default 2: files
    from half to twice the target are left alone).
    """

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


_NO_RULES = (
    " has no rules: give at least one (Hudi's rule engine fails on an empty list), or spec.buckets.sizing, "
    "which proposes rules of its own"
)
_CONVERT_AND_CURRENT = (
    " and spec.buckets.currentBuckets cannot both be set: a table that is not bucket-indexed yet has no "
    "current bucket count; drop currentBuckets (or drop convert if the table is already bucket-indexed)"
)


class BucketsSection(Section):
    # rules_broken's checks, as the API server's CEL rules
    model_config = ConfigDict(
        json_schema_extra=cel_rules(
            Cel("has(self.rules) || has(self.sizing)", f"spec.buckets.rules{_NO_RULES}"),
            Cel(
                "!(has(self.convert) && self.convert && has(self.currentBuckets))",
                f"spec.buckets.convert{_CONVERT_AND_CURRENT}",
            ),
        )
    )
    expected: ClassVar[str] = "an object with default and rules"

    default: Annotated[BucketCount, _bucket_count_rule("spec.buckets.default")]
    """Bucket count of partitions that no rule matches (1..100000)."""
    # Hudi ignores the rule type's case, the CRD's enum does not: one spelling.
    rule: Annotated[Literal["regex"], FILLED, Expect(f"{REGEX!r} (the only rule type Hudi 1.1 knows)")] = (
        "regex"
    )
    """The rule engine. Hudi 1.1 knows only regex (Java regular expressions)."""
    # Its length is for rules_broken to say.
    rules: (
        Annotated[
            list[RuleSection],
            extra(minItems=1, maxItems=MAX_RULES),
            ATOMIC_LIST,
            Expect("a list of rules (pattern and buckets)"),
        ]
        | None
    ) = None
    """Ordered rules; the first whose pattern matches somewhere in the partition path (e.g. dt=2025-11-11)
    gives that partition's bucket count. Hudi needs at least one: give one, or sizing, which proposes its
    own.
    """
    current_buckets: Annotated[BucketCount, _bucket_count_rule("spec.buckets.currentBuckets")] | None = None
    """Only for a plain bucket-index table that has no partition-level config yet: the bucket count it was
    written with (hoodie.bucket.index.num.buckets). Ignored once a config is in force (after the first
    apply), so the manifest may keep it.
    """
    convert: Annotated[bool, FILLED] = False
    """Lay out a table that is not bucket-indexed yet: every partition is rewritten into buckets. Ignored once
    a config is in force (after the first apply).
    """
    keep_duplicates: Annotated[bool, FILLED] = False
    """In a conversion, carry every copy of a key found more than once in a partition over. By default a
    conversion keeps one copy of each key, the one Hudi's merge keeps (the greatest ordering value, else
    the copy committed last), as a bucket table is primary-keyed; status.plan.duplicateKeys says how many
    keys the plan found.
    """
    sizing: SizingSection | None = None
    """Bucket counts from a target file size: the plan measures each partition that no rule matches and
    proposes rules (after spec.buckets.rules, which win) giving it about ceil(bytes / targetFileSize)
    buckets, a multiple or divisor of its current count when that is near enough (no shuffle). Partitions
    whose files are within tolerance of the target are left alone.
    """

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        rules, found = data.get("rules"), []
        if rules == [] or (rules is None and data.get("sizing") is None):
            found.append(problem(_NO_RULES, field="rules"))
        if isinstance(rules, list) and len(rules) > MAX_RULES:
            found.append(
                problem(f" has {len(rules)} rules: at most {MAX_RULES} rules are allowed", field="rules")
            )
        if data.get("convert") is True and data.get("currentBuckets") is not None:
            found.append(problem(_CONVERT_AND_CURRENT, field="convert"))
        return found


# --- when a plan is applied, and who writes the table meanwhile -----------------------------------------


class WindowSection(Section):
    expected: ClassVar[str] = "an object with schedule (cron, UTC) and duration"

    schedule: Annotated[
        str,
        Field(max_length=_MAX_SCHEDULE_LENGTH, pattern=f"^({_CRON_SHAPE})$"),
        AfterValidator(_window_schedule),
        Expect(WINDOW_SCHEDULE_FORMAT),
    ]
    """A cron expression in UTC as Kubernetes CronJobs take it, read as spec.verify.schedule's: five fields
    ('0 1 * * *', '0 1 * * SAT,SUN') or a macro (@hourly, @daily, @weekly, @monthly, @yearly).
    """
    duration: WaitDuration
    """How long each window lasts (90m, 3h, 1d)."""


class ApplySection(Section):
    # A manifest spells it as a string.
    policy: Annotated[ApplyPolicy, FILLED] = Field(ApplyPolicy.MANUAL, strict=False)
    """Manual: apply a plan only once its id (status.plan.id) is copied into approvedPlan. Automatic: apply
    every plan as soon as it is made.
    """
    approved_plan: Annotated[
        str,
        Field(max_length=71, pattern=_PLAN_ID),
        MatchedByCel(f"spec.apply.approvedPlan must be {_PLAN_ID_FORMAT}", keep_pattern=True),
        Expect(_PLAN_ID_FORMAT),
    ] = ""
    """The id of the plan you approve (copy status.plan.id). If the table changes and the new plan differs,
    its id differs and nothing is applied until you approve it.
    """
    window: WindowSection | None = None
    """When a plan that rewrites partitions may start: from each time the cron schedule names (UTC), for the
    duration. Outside it an approved plan waits (phase AwaitingWindow, the next start in
    status.writers.nextWindow); the annotation hudi.bucketops.io/apply-now set to a plan's id starts that
    plan at once. A plan that changes only the config (no partition rewritten) needs no window. Default:
    any time.
    """

    def approves(self, plan_id: str | None) -> bool:
        return self.policy is ApplyPolicy.AUTOMATIC or self.approved_plan == plan_id


class WorkloadSection(Section):
    """A workload writing the table, in its namespace, by kind and name: a Deployment or StatefulSet (scaled
    to 0, later back to its replicas), or a kind the operator's admins declare with how it is suspended (Helm
    values writers.kinds, e.g. a FlinkDeployment). The workload must consent: its owner labels or annotates
    it hudi.bucketops.io/writer-of=<this table's name> (an annotation may list several tables,
    comma-separated); without it nothing is paused and the table stalls."""

    expected: ClassVar[str] = "an object with kind and name"

    kind: Annotated[
        str,
        Field(max_length=63, pattern=r"^[A-Z][A-Za-z0-9]*$"),
        Expect("a kind such as Deployment, StatefulSet or one the admins declare (FlinkDeployment)"),
    ]
    """The workload's kind: Deployment, StatefulSet, or a kind the admins declare (Helm values writers.kinds).
    """
    name: Annotated[DnsName, Expect("the workload's name, in the table's namespace")]
    """The workload's name, in the table's namespace."""


class WritersSection(Section):
    expected: ClassVar[str] = "an object with workloads (and quiesceTimeout)"

    quiesce_timeout: WaitDuration | None = None
    """How long the writers may take to stop (90m, 15m, 1h); default 15m, at most what the admins allow (Helm
    values writers.maxQuiesceTimeout, default 1h).
    """
    workloads: Annotated[
        list[WorkloadSection],
        Field(max_length=MAX_WRITERS),
        Expect(f"a list of at most {MAX_WRITERS} workloads"),
    ] = []
    """The workloads to pause around an apply, each by kind and name (at most 20)."""

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
    schedule: (
        Annotated[
            str,
            # The shape only (no less than the operator's cron library takes): _schedule says what is wrong.
            Field(max_length=_MAX_SCHEDULE_LENGTH, pattern=f"^({DURATION.pattern}|{_CRON_SHAPE})$"),
            AfterValidator(_schedule),
            Expect(SCHEDULE_FORMAT),
        ]
        | None
    ) = None
    """An interval after the last check (90m, 6h, 7d) or a cron expression in UTC as Kubernetes CronJobs take
    it: five fields ('0 3 * * *', '0 3 * * MON-FRI') or a macro (@hourly, @daily, @weekly, @monthly,
    @yearly). A table never checked is checked once it is Ready.
    """


# --- how jobs run --------------------------------------------------------------------------------------


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
    spark_version: Annotated[str, Field(max_length=32)] = ""
    """The Spark version of the image, e.g. 3.5.8."""
    service_account: Annotated[
        str,
        Field(max_length=_DNS_SUBDOMAIN_MAX, pattern=f"^({_DNS_SUBDOMAIN})?$"),
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


# --- the spec ------------------------------------------------------------------------------------------


class TableSpec(Section):
    """The table and how its buckets are managed: what to converge it to, when, with which approval, and how
    its jobs run."""

    expected: ClassVar[str] = "an object with table and buckets"

    table: TableSection
    """Which table. Its record keys and partitioning are read from hoodie.properties."""
    buckets: BucketsSection
    """Bucket counts per partition. Rules are tried in order and the first whose pattern is found in the
    partition path wins, as in Hudi; partitions no rule matches get default.
    """
    apply: Annotated[ApplySection, FILLED] = ApplySection()
    """When a plan may be applied."""
    metadata_table: Annotated[MetadataTablePolicy, FILLED] = Field(MetadataTablePolicy.REFUSE, strict=False)
    """What to do about a live metadata table the rescale cannot keep (Native keeps one where the job has
    Hudi's bundle, unless its record index is partitioned; Hudi one of table version 8 or later). Refuse:
    stop and say so. Disable: remove it the way Hudi does, and say so.
    """
    engine: Annotated[Engine, FILLED] = Field(Engine.AUTO, strict=False)
    """Who rewrites the table. Native: this operator's own rewrite (copy-on-write and MERGE_ON_READ tables,
    bootstrapped file groups and log files read by Apache Hudi's own reader; shuffle-free where it can be;
    a live metadata table and its indexes kept by Hudi's own metadata writer of the table's version, a
    partitioned record index aside). Hudi: Apache Hudi's partition_bucket_index_manager procedure in the
    job (its Spark bundle in the job image), which keeps the metadata table and its indexes in sync (table
    version 8 or later). Auto: Native where it can, else Hudi.
    """
    writers: WritersSection = WritersSection()
    """The workloads that write the table, in its namespace. Before a plan that rewrites partitions is
    applied, the operator records each one's state in status.writers, pauses them, waits until they are
    quiet (no pod left; the status field says stopped), applies, and resumes each as it was (restarted
    writers load the new bucket counts). On a failure, a timeout or the admins' apply deadline they are
    resumed and the table stalls, saying why. Only if the operator's admins enable it (Helm values
    writers.enabled).
    """
    verify: VerifySection | None = None
    """Check the table's layout on a schedule, as `hudi-bucket-job verify` does (every record in its bucket,
    one file group per bucket), and plan again, so that a table changed by another writer shows a new plan
    instead of a stale Ready. A violation becomes status.layout and the LayoutHealthy condition, and the
    plan then repairs the partitions concerned; it is approved like any other plan. Default: never.
    """
    spark: SparkSection = SparkSection()
    """How the Spark jobs run. Anything left out falls back to the operator's defaults."""

    # What the operator reads off the spec, worked out once.

    @cached_property
    def bucket_rules(self) -> BucketRules:
        """The rules as Hudi reads them (none: sizing proposes them)."""
        rules = tuple(Rule(rule.pattern, rule.buckets) for rule in self.buckets.rules or ())
        return BucketRules(rules, self.buckets.default, REGEX)

    @property
    def key_style(self) -> KeyStyle | None:
        return None if self.table.key_style is None else _KEY_STYLES[self.table.key_style]

    @cached_property
    def sizing_policy(self) -> SizingPolicy | None:
        return None if self.buckets.sizing is None else self.buckets.sizing.policy()

    @property
    def replan_every(self) -> int | None:
        """Seconds: plan a sized table again this often (None: on change only)."""
        sizing = self.buckets.sizing
        return None if sizing is None or sizing.replan_every is None else _seconds(sizing.replan_every)

    @cached_property
    def verify_schedule(self) -> Schedule | None:
        """When the layout is checked (None: never)."""
        schedule = None if self.verify is None else self.verify.schedule
        return None if schedule is None else Schedule.parse(schedule)

    @cached_property
    def writer_refs(self) -> WriterRefs:
        """The writers paused around an apply that moves data."""
        writers = self.writers
        workloads = tuple(WorkloadRef(workload.kind, workload.name) for workload in writers.workloads)
        timeout = writers.quiesce_timeout
        return WriterRefs(workloads, DEFAULT_QUIESCE_TIMEOUT if timeout is None else _seconds(timeout))

    @cached_property
    def window(self) -> Window | None:
        """When an apply that moves data may start (None: whenever approved)."""
        window = self.apply.window
        if window is None:
            return None
        text = f"{window.schedule} for {window.duration}"
        return Window(Schedule.parse(window.schedule), _seconds(window.duration), text)

    def job_request(
        self, kind: JobKind, approved_plan: str = "", *, check_records: bool = False
    ) -> PlanRequest | ApplyRequest | VerifyRequest:
        """The request of a ``kind`` job for this table (its report goes where the backend says).

        An apply names the plan it applies: the job refuses any other, so a table that changed since
        the plan was made is never rewritten on a stale approval. ``check_records``: plan and apply read
        every record's key and repair the partitions holding records out of their buckets.
        """
        uri, hash_fields, key_style = self.table.uri, tuple(self.table.hash_fields), self.key_style
        if kind is JobKind.VERIFY:
            return VerifyRequest(table=uri, hash_fields=hash_fields, key_style=key_style)
        buckets, disable = self.buckets, self.metadata_table is MetadataTablePolicy.DISABLE
        rescale = (
            self.bucket_rules,
            buckets.current_buckets,
            buckets.convert,
            disable,
            self.engine,
            self.sizing_policy,
        )
        if kind is JobKind.PLAN:
            options = RescaleOptions(
                *rescale, check_records=check_records, keep_duplicates=buckets.keep_duplicates
            )
            return PlanRequest(table=uri, hash_fields=hash_fields, key_style=key_style, rescale=options)
        if kind is JobKind.APPLY and approved_plan:
            applied = ApplyOptions(
                *rescale,
                check_records=check_records,
                keep_duplicates=buckets.keep_duplicates,
                approved_plan=approved_plan,
            )
            return ApplyRequest(table=uri, hash_fields=hash_fields, key_style=key_style, rescale=applied)
        raise ValueError(
            f"a table runs verify jobs, plan jobs and apply jobs of an approved plan, not {kind} "
            f"{approved_plan!r}"
        )


_KEY_STYLES = {"Hudi1x": KeyStyle.HUDI_1X, "Hudi0x": KeyStyle.HUDI_0X}


def _seconds(duration: str) -> int:
    seconds = parse_duration(duration)
    assert seconds is not None, duration  # the model checked it
    return seconds


def parse_spec(spec: Mapping[str, Any]) -> TableSpec:
    """A TableSpec, or InvalidSpecError listing every problem found (not just the first)."""
    if not isinstance(spec, Mapping):
        raise InvalidSpecError(f"spec must be an object with table and buckets, not {spec!r}")
    try:
        return TableSpec.model_validate(_plain(spec))
    except ValidationError as err:
        raise InvalidSpecError("; ".join(problems(err))) from None


def _plain(value: Any) -> Any:
    """Plain dicts and lists, as the models take them strictly (Kopf hands a spec over as a Mapping),
    as JSON has them: keys are strings, and null fields are left out (the API server prunes them; a
    manifest read from a file means the same)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


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
    annotation: Any = TableSpec
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

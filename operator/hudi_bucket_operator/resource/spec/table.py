"""spec.table (which table) and spec.buckets (its rules, or the sizing that proposes them), as models, with
what only code can check: that a pattern compiles and means the same in Java as in Python (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, TypeGuard

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

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
    SizingPolicy,
    parse_size,
)
from hudi_bucket.errors import HudiBucketError, SizingError
from hudi_bucket_operator.resource.crd_schema import (
    ATOMIC_LIST,
    FILLED,
    Cel,
    Int32,
    MatchedByCel,
    cel_rules,
    cel_string,
    extra,
)
from hudi_bucket_operator.resource.schedule import DURATION_FORMAT
from hudi_bucket_operator.resource.spec.fields import (
    DURATION_PATTERN,
    MAX_DURATION_LENGTH,
    check_duration,
    plain_text,
)
from hudi_bucket_operator.resource.spec.problems import Expect, Section, problem

# spec.buckets.sizing.replanEvery, as the CRD's CEL rule reads it.
REPLAN_FORMAT = DURATION_FORMAT


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _size(value: object) -> object:
    # Checked before the union int | str, so that a refusal names the field, not a member of the union.
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("not a size")
    if parse_size(value) < 1:
        raise ValueError("not above 0")
    return value


BucketCount = Annotated[Int32, Field(ge=1, le=MAX_BUCKETS)]
_IN_BUCKET_RANGE = f"self >= 1 && self <= {MAX_BUCKETS}"


def _bucket_count_rule(named: str) -> Cel:
    """The bounds again as a CEL rule, whose message names the field as a user knows it."""
    return Cel(_IN_BUCKET_RANGE, f"{named} must be a bucket count from 1 to {MAX_BUCKETS}")


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
    *plain_text("a hash field name"),
    Expect("a field name"),
]
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
        *plain_text("spec.table.uri"),
        Expect(f"a string, {_BASE_PATH}"),
    ]
    """The table's base path (s3a://..., hdfs://..., /local/path): the folder that holds
    .hoodie/hoodie.properties, under a location the operator's admins allow for the namespace (Helm values
    jobs.allowedTableUris; none until they name them). Immutable.
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
        *plain_text("a rule's pattern"),
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
    partitions: Annotated[
        str,
        Field(max_length=MAX_PATTERN_LENGTH),
        *plain_text("spec.buckets.sizing.partitions"),
        Expect("a Java regex"),
    ] = ""
    """A Java regular expression: only the partitions it is found in are sized (e.g. closed days only).
    Default: every partition.
    """
    replan_every: (
        Annotated[
            str,
            Field(max_length=MAX_DURATION_LENGTH, pattern=DURATION_PATTERN),
            MatchedByCel(f"spec.buckets.sizing.replanEvery must be {REPLAN_FORMAT}"),
            AfterValidator(check_duration),
            Expect(REPLAN_FORMAT),
        ]
        | None
    ) = None
    """Plan again this often (a duration: 90m, 1h30m, 24h, 7d) once the table is Ready, so the counts follow the data
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

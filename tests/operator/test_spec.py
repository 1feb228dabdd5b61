"""parse_spec turns a HudiBucketTable spec into a TableSpec, or refuses it naming every problem.

What admission refuses, parse_spec refuses too: a cluster may run without CEL, and the local mode has no
API server at all. The manifests and the admission model come from lib/hbt_admission.py.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml

from hudi_bucket.contract.requests import (
    ApplyRequest,
    JobKind,
    PlanRequest,
    RescaleOptions,
    VerifyRequest,
    parse_argv,
)
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.rules import MAX_BUCKETS, MAX_RULES, BucketRules, Rule
from hudi_bucket.core.sizing import SizingPolicy
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource.api import KIND
from hudi_bucket_operator.resource.spec import parse_spec
from hudi_bucket_operator.resource.spec.apply import ApplyPolicy
from hudi_bucket_operator.resource.spec.spark import Resources, SparkSection
from hudi_bucket_operator.resource.spec.table_spec import MetadataTablePolicy
from hudi_bucket_operator.resource.writers import WriterRefs
from lib.hbt_admission import (
    ADMISSION,
    BAD_MANIFESTS,
    EXAMPLES,
    GOOD_MANIFESTS,
    PLAN_ID,
    PLAN_THEN_APPROVE,
    SIZED,
    SKEWED_DAYS,
    SMALL,
    rules_of,
    with_spec,
    without_spec,
)

SKEWED_EXPRESSIONS = r"\d{4}-(06-(01|17|18)|11-(01|10|11)),256;\d{4}-12-(24|25|31),128;^dt=2019-,4"


def refusal(spec: dict[str, Any]) -> str:
    with pytest.raises(InvalidSpecError) as caught:
        parse_spec(spec)
    return str(caught.value)


# --- valid specs --------------------------------------------------------------------------------------


def test_a_small_table_gets_the_defaults() -> None:
    spec = parse_spec(SMALL["spec"])
    assert spec.table.uri == "s3a://lake/warehouse/customers"
    assert spec.bucket_rules == BucketRules((Rule("^region=emea$", 8),), default=4, rule_type="regex")
    assert (spec.table.hash_fields, spec.key_style) == ([], None)
    assert (spec.buckets.current_buckets, spec.buckets.convert, spec.buckets.keep_duplicates) == (
        None,
        False,
        False,
    )
    assert (spec.apply.policy, spec.apply.approved_plan) == (ApplyPolicy.MANUAL, "")
    assert (spec.metadata_table, spec.engine) == (MetadataTablePolicy.REFUSE, Engine.AUTO)
    assert (spec.sizing_policy, spec.replan_every, spec.verify_schedule, spec.window) == (
        None,
        None,
        None,
        None,
    )
    assert spec.writer_refs == WriterRefs()
    assert spec.spark == SparkSection()


def test_every_field_of_a_skewed_days_table_is_read() -> None:
    spec = parse_spec(SKEWED_DAYS["spec"])
    assert spec.table.uri == "s3a://lake/warehouse/orders"
    assert spec.bucket_rules == BucketRules.parse(SKEWED_EXPRESSIONS, 16)
    assert spec.table.hash_fields == ["order_id"]
    assert (spec.apply.policy, spec.metadata_table) == (ApplyPolicy.AUTOMATIC, MetadataTablePolicy.DISABLE)
    spark = spec.spark
    assert (spark.image, spark.spark_version, spark.service_account) == (
        "registry.example.com/hudi-bucket-job:0.1.0",
        "4.0.1",
        "hudi-bucket-jobs",
    )
    assert spark.driver.resources() == Resources(cores=1, memory="2g")
    assert spark.executor.resources() == Resources(cores=4, memory="16g", instances=8)
    assert spark.spark_conf == {"spark.sql.shuffle.partitions": "2048"}
    assert spark.hadoop_conf == {"fs.s3a.endpoint": "https://s3.eu-west-1.amazonaws.com"}
    assert (spark.secret_names, spark.ttl_seconds) == (("lake-s3",), 86400)


def test_a_sized_table_carries_its_policy_into_plan_and_apply() -> None:
    spec = parse_spec(SIZED["spec"])
    policy = SizingPolicy(512 << 20, min_buckets=1, max_buckets=256, partitions="^day=", tolerance=2.0)
    assert spec.sizing_policy == policy
    plan = spec.job_request(JobKind.PLAN)
    apply = spec.job_request(JobKind.APPLY, approved_plan=PLAN_ID)
    assert plan.rescale.sizing == apply.rescale.sizing == policy
    assert parse_argv(plan.to_argv()) == plan
    assert "--target-file-size=536870912" in plan.to_argv()


def test_sizing_defaults_to_every_partition_at_a_factor_of_two_planned_on_change_only() -> None:
    spec = parse_spec(with_spec(SIZED, "buckets.sizing", {"targetFileSize": "1.5Gi"})["spec"])
    assert (spec.sizing_policy, spec.replan_every) == (SizingPolicy(3 << 29), None)
    assert parse_spec(SMALL["spec"]).sizing_policy is None


@pytest.mark.parametrize(("every", "seconds"), [("24h", 86400), ("90m", 5400), ("7d", 604800), ("1m", 60)])
def test_a_sized_table_may_be_planned_again_on_a_schedule(every: str, seconds: int) -> None:
    assert parse_spec(with_spec(SIZED, "buckets.sizing.replanEvery", every)["spec"]).replan_every == seconds
    assert ADMISSION.errors(with_spec(SIZED, "buckets.sizing.replanEvery", every)) == []


def test_a_sized_table_needs_no_rules_of_its_own() -> None:
    spec = parse_spec(without_spec(SIZED, "buckets.rules")["spec"])
    assert spec.bucket_rules == BucketRules((), 4)
    request = spec.job_request(JobKind.PLAN)
    assert "--expressions=" in request.to_argv()
    assert parse_argv(request.to_argv()) == request
    assert ADMISSION.errors(without_spec(SIZED, "buckets.rules")) == []


def test_a_sizing_pattern_that_may_differ_in_java_is_refused() -> None:
    assert "spec.buckets.sizing: invalid sizing policy: partitions: pattern '(?P<d>x)'" in refusal(
        with_spec(SIZED, "buckets.sizing.partitions", "(?P<d>x)")["spec"]
    )


def test_a_plan_then_approve_upgrade_carries_the_approved_plan_and_old_count() -> None:
    spec = parse_spec(PLAN_THEN_APPROVE["spec"])
    assert (spec.apply.policy, spec.apply.approved_plan) == (ApplyPolicy.MANUAL, PLAN_ID)
    assert (spec.buckets.current_buckets, spec.buckets.convert, spec.key_style) == (
        8,
        False,
        KeyStyle.HUDI_0X,
    )


def test_the_uri_is_trimmed() -> None:
    assert (
        parse_spec(with_spec(SMALL, "table.uri", " /data/customers\n")["spec"]).table.uri == "/data/customers"
    )


def test_the_rule_type_is_spelt_as_the_crd_spells_it() -> None:
    # Hudi reads the rule type ignoring case, but the CRD's enum is exact: parse_spec keeps one spelling.
    assert parse_spec(with_spec(SMALL, "buckets.rule", "regex")["spec"]).bucket_rules.rule_type == "regex"
    assert "spec.buckets.rule must be 'regex'" in refusal(with_spec(SMALL, "buckets.rule", "REGEX")["spec"])


def test_spark_resources_left_out_are_not_set() -> None:
    spark = parse_spec(with_spec(SMALL, "spark.driver", {"cores": 1})["spec"]).spark
    assert (spark.driver.resources(), spark.executor.resources()) == (Resources(cores=1), Resources())
    assert spark.driver.memory is None  # so the operator's default applies, whatever it is


def test_resources_take_what_they_leave_unset_from_the_defaults() -> None:
    defaults = Resources(cores=4, memory="8g", instances=3)
    assert Resources(cores=1).over(defaults) == Resources(cores=1, memory="8g", instances=3)
    assert Resources().over(defaults) == defaults


# --- job requests -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "table", "rescale"),
    [
        (SMALL, {}, RescaleOptions(BucketRules.parse("^region=emea$,8", 4))),
        (
            SKEWED_DAYS,
            {"hash_fields": ("order_id",)},
            RescaleOptions(BucketRules.parse(SKEWED_EXPRESSIONS, 16), disable_metadata_table=True),
        ),
        (
            PLAN_THEN_APPROVE,
            {"key_style": KeyStyle.HUDI_0X},
            RescaleOptions(BucketRules.parse("event_type=(click|view),64", 8), current_buckets=8),
        ),
        (
            with_spec(SMALL, "buckets.convert", True),
            {},
            RescaleOptions(BucketRules.parse("^region=emea$,8", 4), convert=True),
        ),
        (
            with_spec(with_spec(SMALL, "buckets.convert", True), "buckets.keepDuplicates", True),
            {},
            RescaleOptions(BucketRules.parse("^region=emea$,8", 4), convert=True, keep_duplicates=True),
        ),
    ],
    ids=["small", "skewed-days", "plan-then-approve", "convert", "convert-keeping-duplicates"],
)
def test_a_plan_request_carries_the_spec(
    manifest: dict[str, Any], table: dict, rescale: RescaleOptions
) -> None:
    spec = parse_spec(manifest["spec"])
    assert spec.job_request(JobKind.PLAN) == PlanRequest(table=spec.table.uri, **table, rescale=rescale)


def test_an_apply_request_carries_the_spec_and_the_plan_it_applies() -> None:
    spec = parse_spec(SKEWED_DAYS["spec"])
    request = spec.job_request(JobKind.APPLY, approved_plan=PLAN_ID)
    assert isinstance(request, ApplyRequest)
    assert request.rescale.approved_plan == PLAN_ID
    assert request.rescale.rules == spec.bucket_rules
    assert request.hash_fields == ("order_id",)


def test_an_apply_without_its_plan_or_another_kind_of_job_is_a_bug() -> None:
    spec = parse_spec(SMALL["spec"])
    with pytest.raises(ValueError, match="apply jobs of an approved plan"):
        spec.job_request(JobKind.APPLY)
    with pytest.raises(ValueError, match="not show"):
        spec.job_request(JobKind.SHOW)


def test_a_table_may_have_its_layout_checked_on_a_schedule() -> None:
    assert parse_spec(SMALL["spec"]).verify_schedule is None
    for schedule in ("6h", "0 3 * * *"):
        manifest = with_spec(SMALL, "verify", {"schedule": schedule})
        spec = parse_spec(manifest["spec"])
        assert spec.verify_schedule is not None
        assert spec.verify_schedule.text == schedule
        assert ADMISSION.errors(manifest) == []
        assert spec.job_request(JobKind.VERIFY) == VerifyRequest(table=spec.table.uri)


@pytest.mark.parametrize("schedule", ["daily", "0 3 * *", "61 * * * *", 6])
def test_a_schedule_that_is_neither_interval_nor_cron_is_refused(schedule: object) -> None:
    message = refusal(with_spec(SMALL, "verify", {"schedule": schedule})["spec"])
    assert "spec.verify.schedule must be an interval (a duration such as 30s, 90m, 1h30m or 7d)" in message


def test_a_repair_plan_and_its_apply_read_every_record() -> None:
    spec = parse_spec(SMALL["spec"])
    plan = spec.job_request(JobKind.PLAN, check_records=True)
    apply = spec.job_request(JobKind.APPLY, approved_plan=PLAN_ID, check_records=True)
    assert isinstance(plan, PlanRequest)
    assert isinstance(apply, ApplyRequest)
    assert plan.rescale.check_records
    assert apply.rescale.check_records
    assert parse_argv(apply.to_argv()) == apply


@pytest.mark.parametrize("kind", [JobKind.PLAN, JobKind.APPLY])
@pytest.mark.parametrize(
    "manifest",
    [*GOOD_MANIFESTS.values(), with_spec(SMALL, "buckets.convert", True)],
    ids=[*GOOD_MANIFESTS.keys(), "convert"],
)
def test_the_job_reads_back_the_request_of_every_spec(manifest: dict[str, Any], kind: JobKind) -> None:
    request = parse_spec(manifest["spec"]).job_request(kind, approved_plan=PLAN_ID)
    assert parse_argv(request.to_argv()) == request


def test_the_job_reads_back_a_pattern_starting_with_a_dash() -> None:
    spec = parse_spec(with_spec(SMALL, "buckets.rules", rules_of(("-11-11$", 8)))["spec"])
    request = spec.job_request(JobKind.PLAN)
    assert "--expressions=-11-11$,8" in request.to_argv()
    assert parse_argv(request.to_argv()) == request


# --- invalid specs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (with_spec(SMALL, "buckets.rules", rules_of(("dt=(2025", 8)))["spec"], "does not compile"),
        (with_spec(SMALL, "buckets.rules", rules_of((r"\d{2,3}", 8)))["spec"], "holds ','"),
        (with_spec(SMALL, "buckets.rules", rules_of(("a;b", 8)))["spec"], "holds ';'"),
        (with_spec(SMALL, "buckets.rules", rules_of(("", 8)))["spec"], "the pattern is empty"),
        (with_spec(SMALL, "buckets.rules", rules_of(("a", 0)))["spec"], "bucket count 0 is outside"),
        (with_spec(SMALL, "buckets.rules", rules_of(("a", MAX_BUCKETS + 1)))["spec"], "is outside 1..100000"),
        (
            with_spec(SMALL, "buckets.default", 0)["spec"],
            "spec.buckets.default must be an integer in 1..100000",
        ),
        (with_spec(SMALL, "buckets.default", True)["spec"], "spec.buckets.default must be an integer"),
        (
            with_spec(SMALL, "buckets.rules", rules_of(("[[:alpha:]]", 8)))["spec"],
            "may not mean the same in Java",
        ),
        (with_spec(SMALL, "buckets.rules", rules_of(("(?<day>0[1-9])", 8)))["spec"], "is Java-only"),
        (with_spec(SMALL, "buckets.rules", [])["spec"], "no rules"),
        (
            with_spec(SMALL, "buckets.rules", rules_of(*[("a", 2)] * (MAX_RULES + 1)))["spec"],
            f"at most {MAX_RULES} rules",
        ),
        (with_spec(SMALL, "apply.policy", "Sometimes")["spec"], "spec.apply.policy must be one of"),
        (with_spec(SMALL, "metadataTable", "Ignore")["spec"], "spec.metadataTable must be one of"),
        (with_spec(SMALL, "table.keyStyle", "1.x")["spec"], "spec.table.keyStyle must be one of"),
        (with_spec(SMALL, "buckets.currentBuckets", 0)["spec"], "spec.buckets.currentBuckets must be"),
        ({"buckets": SMALL["spec"]["buckets"]}, "spec.table is required"),
        ({"table": {"uri": "  "}, "buckets": SMALL["spec"]["buckets"]}, "spec.table.uri is required"),
        (None, "spec must be an object with table and buckets, not None"),
    ],
    ids=[
        "invalid-regex",
        "comma",
        "semicolon",
        "empty-pattern",
        "rule-n-zero",
        "rule-n-huge",
        "default-zero",
        "default-bool",
        "posix-class",
        "named-group",
        "no-rules",
        "too-many-rules",
        "unknown-policy",
        "unknown-metadata-table",
        "unknown-key-style",
        "current-buckets-zero",
        "missing-table",
        "blank-uri",
        "no-spec",
    ],
)
def test_a_bad_spec_is_refused_saying_why(spec: dict[str, Any], fragment: str) -> None:
    assert fragment in refusal(spec)


def test_every_problem_is_listed_not_just_the_first() -> None:
    spec = {
        "buckets": {
            "default": 16,
            "rules": rules_of(
                ("dt=(2025", 8), (r"\d{2,3}", 8), ("a", 0), ("b", MAX_BUCKETS + 1), ("[[:alpha:]]", 8)
            ),
        },
        "apply": {"policy": "Sometimes"},
        "metadataTable": "Ignore",
    }
    message = refusal(spec)
    for fragment in (
        "spec.buckets.rules[0] ('dt=(2025' -> 8): pattern 'dt=(2025' does not compile",
        "spec.buckets.rules[1] ('\\\\d{2,3}' -> 8): the pattern holds ','",
        "spec.buckets.rules[2] ('a' -> 0): bucket count 0 is outside 1..100000",
        "spec.buckets.rules[3] ('b' -> 100001): bucket count 100001 is outside 1..100000",
        "spec.buckets.rules[4] ('[[:alpha:]]' -> 8): pattern '[[:alpha:]]' may not mean the same in Java",
        "spec.table is required",
        "spec.apply.policy must be one of ['Automatic', 'Manual'], not 'Sometimes'",
        "spec.metadataTable must be one of ['Refuse', 'Disable'], not 'Ignore'",
    ):
        assert fragment in message


def test_rules_are_named_by_their_place_in_the_manifest_only() -> None:
    # BucketRules counts "rule 1, 2, ..." from 1; a user should see one scheme: the manifest's own path.
    rules = [*rules_of(("^a$", 4)), "not a rule", *rules_of(("b;c", 4))]
    message = refusal(with_spec(SMALL, "buckets.rules", rules)["spec"])
    assert "spec.buckets.rules[1] must be an object with pattern and buckets, not 'not a rule'" in message
    assert "spec.buckets.rules[2] ('b;c' -> 4): the pattern holds ';'" in message
    assert "rule 1" not in message
    assert "rule 3" not in message


def test_a_missing_table_is_one_problem() -> None:
    message = refusal({"buckets": SMALL["spec"]["buckets"]})
    assert message.count("spec.table") == 1


def test_a_refusal_says_what_to_do() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        parse_spec({})
    assert caught.value.hint
    assert str(caught.value).endswith(f"({caught.value.hint})")


def test_a_bad_default_does_not_hide_the_rules_problems() -> None:
    message = refusal(with_spec(SMALL, "buckets", {"default": 0, "rules": rules_of(("a,b", 4))})["spec"])
    assert "spec.buckets.default must be an integer in 1..100000, not 0" in message
    assert "spec.buckets.rules[0] ('a,b' -> 4): the pattern holds ','" in message


def test_an_unknown_rule_type_does_not_hide_the_rules_problems() -> None:
    buckets = {"default": 4, "rule": "glob", "rules": rules_of(("a,b", 4))}
    message = refusal(with_spec(SMALL, "buckets", buckets)["spec"])
    assert "spec.buckets.rule must be 'regex'" in message
    assert "spec.buckets.rules[0] ('a,b' -> 4): the pattern holds ','" in message


def test_a_rule_whose_count_is_no_integer_still_has_its_pattern_checked() -> None:
    message = refusal(with_spec(SMALL, "buckets.rules", [{"pattern": "a,b", "buckets": "4"}])["spec"])
    assert "spec.buckets.rules[0].buckets must be an integer in 1..100000, not '4'" in message
    assert "spec.buckets.rules[0] ('a,b' -> '4'): the pattern holds ','" in message


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        ("apply", "Manual", "spec.apply must be an object, not 'Manual'"),
        ("spark", ["image"], "spec.spark must be an object, not ['image']"),
        (
            "buckets.rules",
            ["a,4"],
            "spec.buckets.rules[0] must be an object with pattern and buckets, not 'a,4'",
        ),
        (
            "buckets.rules",
            "a,4",
            "spec.buckets.rules must be a list of rules (pattern and buckets), not 'a,4'",
        ),
        ("buckets.rules", [{"buckets": 4}], "spec.buckets.rules[0].pattern is required"),
        ("buckets.rule", 5, "spec.buckets.rule must be 'regex' (the only rule type Hudi 1.1 knows), not 5"),
        ("buckets.default", "4", "spec.buckets.default must be an integer in 1..100000, not '4'"),
        ("spark.driver", {"cores": "two"}, "spec.spark.driver.cores must be an integer in 1..256, not 'two'"),
        ("spark.executor", {"instances": 2.5}, "spec.spark.executor.instances must be an integer in 1..1000"),
        ("buckets.convert", "false", "spec.buckets.convert must be true or false, not 'false'"),
        ("buckets.keepDuplicates", 1, "spec.buckets.keepDuplicates must be true or false, not 1"),
        (
            "table.hashFields",
            "order_id",
            "spec.table.hashFields must be a list of field names, not 'order_id'",
        ),
        ("table.hashFields", ["id", 7], "spec.table.hashFields[1] must be a field name, not 7"),
        ("table.uri", 5, "spec.table.uri must be a string, the table's base path"),
        ("spark.ttlSeconds", "1d", "spec.spark.ttlSeconds must be an integer in 0..31536000, not '1d'"),
        ("spark.image", 5, "spec.spark.image must be a string, not 5"),
        ("apply.approvedPlan", 5, "spec.apply.approvedPlan must be a plan id"),
        (
            "spark.envFromSecrets",
            "lake-s3",
            "spec.spark.envFromSecrets must be a list of {name: <Secret name>}",
        ),
        (
            "spark.envFromSecrets",
            ["lake-s3"],
            "spec.spark.envFromSecrets[0] must be an object with the Secret's",
        ),
        ("spark.hadoopConf", ["fs.a=b"], "spec.spark.hadoopConf must be a map of property names to strings"),
    ],
    ids=str,
)
def test_a_wrongly_typed_value_is_refused_naming_its_field(path: str, value: Any, named: str) -> None:
    assert named in refusal(with_spec(SMALL, path, value)["spec"])


# --- admission and parse_spec agree -------------------------------------------------------------------

# Refused by admission only, on purpose: unknown fields are the API server's to drop or refuse, and
# these bounds exist to keep CEL's cost estimate low, not because the operator cannot handle more.
# An unknown field (how a writer is suspended, too) is the API server's to refuse: the operator reads what
# it knows (a writer's kind is suspended as the admins declare, whatever a manifest says).
_ADMISSION_ONLY = {"unknown-field", "pattern-too-long", "too-many-spark-conf", "writer-with-suspend"}
# Refused by job_policy before any job is created, not by parse_spec (tests/operator/test_job_policy.py).
_ADMISSION_ONLY |= {
    "spark-conf-owned-key", "spark-conf-owned-prefix", "spark-conf-key-with-equals", "hadoop-conf-key-with-space",
    "image-upper-case", "spark-conf-substitution", "hadoop-conf-substitution",
}  # fmt: skip
# What parse_spec says about each manifest admission refuses.
_SUBSTITUTED = "must not hold '${' (Spark SQL, Spark and Hadoop replace ${...} with the job's environment"
_PARSE_SPEC_SAYS = {
    "uri-substitution": f"spec.table.uri {_SUBSTITUTED}",
    "uri-escape": f"spec.table.uri {_SUBSTITUTED}",
    "pattern-substitution": f"spec.buckets.rules[0].pattern {_SUBSTITUTED}",
    "pattern-terminal-escape": f"spec.buckets.rules[0].pattern {_SUBSTITUTED}",
    "hash-field-substitution": f"spec.table.hashFields[0] {_SUBSTITUTED}",
    "sizing-partitions-substitution": f"spec.buckets.sizing.partitions {_SUBSTITUTED}",
    "spark-version-substitution": "spec.spark.sparkVersion must be a version such as 3.5.8",
    "missing-table": "spec.table is required",
    "missing-uri": "spec.table.uri is required",
    "blank-uri": "spec.table.uri is required",
    "default-zero": "spec.buckets.default must be an integer in 1..100000, not 0",
    "default-too-large": "spec.buckets.default must be an integer in 1..100000, not 100001",
    "rule-buckets-zero": "spec.buckets.rules[0] ('dt=2025' -> 0): bucket count 0 is outside",
    "rule-buckets-too-large": "spec.buckets.rules[0] ('dt=2025' -> 100001): bucket count 100001 is outside",
    "comma-in-pattern": "spec.buckets.rules[0] ('\\\\d{2,3}' -> 8): the pattern holds ','",
    "semicolon-in-pattern": "spec.buckets.rules[0] ('a;b' -> 8): the pattern holds ';'",
    "pattern-ends-with-space": "spec.buckets.rules[0] ('dt=2025 ' -> 8): the pattern starts or ends with",
    "empty-pattern": "spec.buckets.rules[0] ('' -> 8): the pattern is empty",
    "too-many-rules": f"spec.buckets.rules has {MAX_RULES + 1} rules: at most {MAX_RULES}",
    "no-rules": "spec.buckets.rules has no rules",
    "missing-rules": "spec.buckets.rules has no rules",
    "rule-as-string": "spec.buckets.rules[0] must be an object with pattern and buckets",
    "rule-type": "spec.buckets.rule must be 'regex' (the only rule type Hudi 1.1 knows), not 'glob'",
    "rule-type-case": "spec.buckets.rule must be 'regex' (the only rule type Hudi 1.1 knows), not 'REGEX'",
    "current-buckets-zero": "spec.buckets.currentBuckets must be an integer in 1..100000, not 0",
    "convert-string": "spec.buckets.convert must be true or false, not 'false'",
    "convert-with-current-buckets": "spec.buckets.convert and spec.buckets.currentBuckets cannot both be set",
    "comma-in-hash-field": "spec.table.hashFields[0] 'id,name' cannot contain ','",
    "empty-hash-field": "spec.table.hashFields[0] must be a field name, not ''",
    "hash-fields-string": "spec.table.hashFields must be a list of field names, not 'id'",
    "key-style": "spec.table.keyStyle must be one of ['Hudi1x', 'Hudi0x'], not '1.x'",
    "apply-string": "spec.apply must be an object, not 'Manual'",
    "policy": "spec.apply.policy must be one of ['Automatic', 'Manual'], not 'Auto'",
    "approved-plan-without-prefix": "spec.apply.approvedPlan must be a plan id as shown in status.plan.id",
    "metadata-table": "spec.metadataTable must be one of ['Refuse', 'Disable'], not 'Ignore'",
    "spark-list": "spec.spark must be an object, not ['image']",
    "executor-memory-quantity": "spec.spark.executor.memory must be in Spark's format",
    "driver-memory-word": "spec.spark.driver.memory must be in Spark's format",
    "driver-cores-word": "spec.spark.driver.cores must be an integer in 1..256, not 'two'",
    "no-executors": "spec.spark.executor.instances must be an integer in 1..1000, not 0",
    "service-account-name": "spec.spark.serviceAccount must be a ServiceAccount name",
    "secret-name": "spec.spark.envFromSecrets[0].name must be a Secret name",
    "secret-without-name": "spec.spark.envFromSecrets[0].name is required (a Secret name",
    "spark-conf-number": "spec.spark.sparkConf['spark.sql.shuffle.partitions'] must be a string",
    "ttl-word": "spec.spark.ttlSeconds must be an integer in 0..31536000, not '1d'",
    "ttl-negative": "spec.spark.ttlSeconds must be an integer in 0..31536000, not -1",
    "sizing-without-target": "spec.buckets.sizing.targetFileSize is required (a size in bytes or a "
    "Kubernetes quantity such as 512Mi or 1Gi, above 0)",
    "sizing-target-not-a-quantity": "spec.buckets.sizing.targetFileSize must be a size in bytes or a "
    "Kubernetes quantity such as 512Mi or 1Gi, above 0, not '512MB'",
    "sizing-target-zero": "spec.buckets.sizing.targetFileSize must be a size in bytes or a Kubernetes "
    "quantity such as 512Mi or 1Gi, above 0, not 0",
    "sizing-replan-every-words": "spec.buckets.sizing.replanEvery must be a duration such as 30s, 90m, "
    "1h30m, 6h or 7d (s, m, h, d: each once, the largest first), not '1 day'",
    "sizing-min-above-max": "spec.buckets.sizing.minBuckets 64 must not be above maxBuckets 8",
    "sizing-tolerance-one": "spec.buckets.sizing.tolerance must be a factor above 1 and at most 100 (e.g. 2), not 1",
    "writer-kind-lower-case": "spec.writers.workloads[0].kind must be a kind such as Deployment",
    "window-interval": "spec.apply.window.schedule must be a cron expression as spec.verify.schedule takes one (no interval)",
}
_SHARED_REFUSALS = [
    pytest.param(*param.values, _PARSE_SPEC_SAYS[param.id], id=param.id)
    for param in BAD_MANIFESTS
    if param.id not in _ADMISSION_ONLY
]


def test_every_refusal_of_admission_is_also_parse_specs_or_says_why_not() -> None:
    ids = {param.id for param in BAD_MANIFESTS}
    assert set(_PARSE_SPEC_SAYS) == ids - _ADMISSION_ONLY


@pytest.mark.parametrize(("manifest", "fragment", "parse_spec_says"), _SHARED_REFUSALS)
def test_what_admission_refuses_parse_spec_refuses(
    manifest: dict[str, Any], fragment: str, parse_spec_says: str
) -> None:
    assert any(fragment in error for error in ADMISSION.errors(manifest))
    assert parse_spec_says in refusal(manifest["spec"])


@pytest.mark.parametrize(
    "pattern",
    ["[[:alpha:]]", "dt=(2025", r"\p{Digit}{4}", "(?P<day>0[1-9])"],
    ids=["posix-class", "unbalanced", "java-only-class", "python-only-group"],
)
def test_what_only_code_can_check_is_left_to_parse_spec(pattern: str) -> None:
    manifest = with_spec(SMALL, "buckets.rules", rules_of((pattern, 8)))
    assert ADMISSION.errors(manifest) == []
    refusal(manifest["spec"])


@pytest.mark.parametrize("manifest", GOOD_MANIFESTS.values(), ids=GOOD_MANIFESTS.keys())
def test_what_admission_admits_parses(manifest: dict[str, Any]) -> None:
    assert ADMISSION.errors(manifest) == []
    assert parse_spec(ADMISSION.defaulted(manifest)["spec"]) == parse_spec(manifest["spec"])


def test_the_escapes_the_refusals_suggest_are_admitted_and_parse() -> None:
    # The comma and semicolon messages tell users to write \x2c and \x3b: Java and Python read both.
    manifest = with_spec(SMALL, "buckets.rules", rules_of((r"^tag=a\x2cb\x3bc$", 8)))
    assert ADMISSION.errors(manifest) == []
    rules = parse_spec(manifest["spec"]).bucket_rules
    assert rules.render() == r"^tag=a\x2cb\x3bc$,8"
    assert BucketRules.parse(rules.render(), rules.default) == rules


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_every_example_is_admitted_and_parses(path: Path) -> None:
    tables = [doc for doc in yaml.safe_load_all(path.read_text()) if doc and doc.get("kind") == KIND]
    assert tables, f"{path.name} holds no {KIND}"
    for manifest in tables:
        assert ADMISSION.errors(manifest) == []
        assert parse_spec(ADMISSION.defaulted(manifest)["spec"]) == parse_spec(manifest["spec"])


@pytest.mark.parametrize(
    ("given", "engine"), [(None, Engine.AUTO), ("Native", Engine.NATIVE), ("Hudi", Engine.HUDI)]
)
def test_the_engine_reaches_both_jobs(given: str | None, engine: Engine) -> None:
    spec = parse_spec({**SMALL["spec"], **({"engine": given} if given else {})})
    assert spec.engine is engine
    for request in (spec.job_request(JobKind.PLAN), spec.job_request(JobKind.APPLY, approved_plan="p")):
        assert request.rescale.engine is engine


def test_an_unknown_engine_is_refused_naming_the_choices() -> None:
    with pytest.raises(InvalidSpecError, match=r"spec\.engine"):
        parse_spec({**SMALL["spec"], "engine": "Spark"})


def test_a_spec_handed_over_as_a_read_only_mapping_parses() -> None:
    # Kopf hands the spec over as a Mapping, not a dict; the models take plain dicts strictly.
    read_only = MappingProxyType({**SMALL["spec"], "table": MappingProxyType(SMALL["spec"]["table"])})
    assert parse_spec(read_only) == parse_spec(SMALL["spec"])


def test_the_rules_of_one_object_are_all_said_at_once() -> None:
    buckets = {"default": 4, "rules": [], "convert": True, "currentBuckets": 4}
    message = refusal(with_spec(SMALL, "buckets", buckets)["spec"])
    assert "spec.buckets.rules has no rules" in message
    assert "spec.buckets.convert and spec.buckets.currentBuckets cannot both be set" in message


def test_a_null_field_is_a_field_left_out() -> None:
    # The API server prunes null fields; a manifest read from a file (the local mode) means the same.
    nulls = {"apply": None, "spark": {"driver": None, "image": None}, "writers": None, "engine": None}
    assert parse_spec({**SMALL["spec"], **nulls}) == parse_spec(SMALL["spec"])
    assert "spec.buckets.default is required" in refusal(with_spec(SMALL, "buckets.default", None)["spec"])


def test_keys_are_strings_as_in_json() -> None:
    # YAML read from a file may hold a number as a key; the API server's JSON never does.
    spark = parse_spec(with_spec(SMALL, "spark.sparkConf", {1: "x"})["spec"]).spark
    assert spark.spark_conf == {"1": "x"}


def test_a_fields_error_hides_none_of_its_objects_rules() -> None:
    # As the API server says the schema's errors and the CEL rules' problems together.
    buckets = {"default": 0, "convert": True, "currentBuckets": 4}
    message = refusal(with_spec(SMALL, "buckets", buckets)["spec"])
    assert "spec.buckets.default must be an integer in 1..100000, not 0" in message
    assert "spec.buckets.rules has no rules" in message
    assert "spec.buckets.convert and spec.buckets.currentBuckets cannot both be set" in message
    workloads = [{"kind": "Deployment", "name": "ingest"}, {"kind": "Deployment", "name": "ingest"}]
    message = refusal({**SMALL["spec"], "writers": {"workloads": workloads, "quiesceTimeout": "1 hour"}})
    assert "spec.writers.workloads names Deployment/ingest more than once" in message
    assert "spec.writers.quiesceTimeout must be a duration" in message

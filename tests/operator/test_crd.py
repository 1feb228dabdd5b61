"""The HudiBucketTable CRD is a structural schema that admits realistic manifests and rejects bad ones.

No API server runs here (and kmock runs no schema and no CEL), so ``hbt_admission.ADMISSION`` plays the
API server's part as far as the CRD decides it (see k8s_schema): defaulting, OpenAPI validation with
unknown fields rejected (what ``kubectl apply`` asks for by default), then every
``x-kubernetes-validations`` rule evaluated by a real CEL interpreter (cel-python), transition rules only
on update. test_spec.py sends the same manifests through parse_spec, which must agree.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest
from jsonpath_ng.ext import parse as parse_jsonpath

from hudi_bucket.contract.reports import ApplyResult, JobReport, Outcome, PlanResult, TableBuckets
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.planning import ChangeReason, PartitionChange, Plan
from hudi_bucket.core.rules import MAX_BUCKETS, MAX_PATTERN_LENGTH, MAX_RULES, BucketRules, Rule
from hudi_bucket_operator.decide.reconcile import JobPhase, Observed, ObservedJob, decide
from hudi_bucket_operator.errors import ScheduleError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import GROUP, KIND, PLURAL, VERSION
from hudi_bucket_operator.resource.schedule import Schedule
from hudi_bucket_operator.resource.spec import parse_spec
from hudi_bucket_operator.resource.spec.apply import ApplyPolicy
from hudi_bucket_operator.resource.spec.spark import MAX_CORES, MAX_EXECUTORS, MAX_TTL_SECONDS
from hudi_bucket_operator.resource.spec.table_spec import MetadataTablePolicy
from hudi_bucket_operator.resource.table_status import TableStatus
from lib import hbt_admission, k8s_schema
from lib.hbt_admission import (
    ADMISSION,
    BAD_MANIFESTS,
    CRD,
    GOOD_MANIFESTS,
    PLAN_ID,
    SCHEMA,
    SKEWED_DAYS,
    SMALL,
    SPEC_SCHEMA,
    VERSION_DOC,
    with_spec,
)
from lib.hbt_resources import ANYWHERE
from lib.k8s_schema import cel_holds, is_transition_rule, to_json_schema
from lib.structural_schema import (
    all_validations,
    nulls_in_declared_fields,
    structural_problems,
    unbounded,
    undescribed,
)

# --- the resource -------------------------------------------------------------------------------------


def test_the_crd_names_the_resource_the_operator_watches() -> None:
    assert CRD["apiVersion"] == "apiextensions.k8s.io/v1"
    assert CRD["metadata"]["name"] == f"{PLURAL}.{GROUP}"
    spec = CRD["spec"]
    assert (spec["group"], spec["scope"]) == (GROUP, "Namespaced")
    assert spec["names"] == {
        "kind": KIND,
        "listKind": f"{KIND}List",
        "plural": PLURAL,
        "singular": KIND.lower(),
        "shortNames": ["hbt"],
        "categories": ["hudi"],
    }
    assert (VERSION_DOC["name"], VERSION_DOC["served"], VERSION_DOC["storage"]) == (VERSION, True, True)
    assert VERSION_DOC["subresources"] == {"status": {}}


def test_the_schema_is_structural() -> None:
    assert structural_problems(SCHEMA) == []


def _field(schema: dict[str, Any]) -> dict[str, Any]:
    """A root schema whose one field ``a`` has ``schema``."""
    return {"type": "object", "properties": {"a": schema}}


_VALIDATED = {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "m"}]}


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        pytest.param(_field({}), "properties.a: needs a type", id="untyped-field"),
        pytest.param(
            _field({"type": "object", "properties": {}, "additionalProperties": {}}),
            "mutually exclusive",
            id="properties-and-additional",
        ),
        pytest.param(
            _field({"type": "object", "additionalProperties": False}),
            "must be a schema",
            id="additional-false",
        ),
        pytest.param(
            _field({"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
            "uniqueItems",
            id="unique-items",
        ),
        pytest.param(_field({"$ref": "#/definitions/b"}), "$ref: not allowed", id="ref"),
        pytest.param(
            _field({"type": "integer", "anyOf": [{"type": "integer"}]}), "anyOf[0].type", id="type-in-junctor"
        ),
        pytest.param(
            _field({"type": "string", "x-kubernetes-int-or-string": True}),
            "type left out",
            id="int-or-string-typed",
        ),
        pytest.param(_field({"type": "string", "default": 3}), "default: 3 is not of type", id="bad-default"),
        pytest.param(
            _field(
                {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "items": {"type": "object", "properties": {"n": {"type": "string"}}},
                }
            ),
            "needs x-kubernetes-list-map-keys",
            id="list-map-without-keys",
        ),
        pytest.param(
            _field({"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]}),
            "needs a message",
            id="rule-without-message",
        ),
        pytest.param(
            _field({"type": "string", "x-kubernetes-validations": [{"rule": "self ==", "message": "m"}]}),
            "does not compile",
            id="rule-not-compiling",
        ),
        pytest.param(
            _field({"type": "array", "items": _VALIDATED}),
            "oldSelf cannot be used",
            id="old-self-in-atomic-list",
        ),
        pytest.param(
            {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {}}}}},
            "only name and generateName",
            id="metadata-restricted",
        ),
    ],
)
def test_the_structural_checker_catches_what_kubernetes_refuses(schema: dict[str, Any], problem: str) -> None:
    problems = structural_problems(schema)
    assert any(problem in found for found in problems), problems


def test_the_structural_checker_accepts_old_self_under_keyed_lists() -> None:
    keyed = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": _VALIDATED}},
    }
    assert structural_problems(_field(keyed)) == []


def test_every_list_map_and_free_string_is_bounded() -> None:
    assert unbounded(SPEC_SCHEMA, ".spec") == []


def test_every_field_is_described_for_kubectl_explain() -> None:
    kubernetes_own = {".apiVersion", ".kind", ".metadata"}  # kubectl explain describes these itself
    assert [where for where in undescribed(SCHEMA) if where not in kubernetes_own] == []


def test_bucket_bounds_are_the_codes() -> None:
    buckets = SPEC_SCHEMA["properties"]["buckets"]["properties"]
    rules = buckets["rules"]
    for field in (buckets["default"], buckets["currentBuckets"], rules["items"]["properties"]["buckets"]):
        assert (field["minimum"], field["maximum"]) == (1, MAX_BUCKETS)
        (validation,) = field["x-kubernetes-validations"]
        assert f"<= {MAX_BUCKETS}" in validation["rule"]
        assert f"1 to {MAX_BUCKETS}" in validation["message"]
    assert rules["maxItems"] == MAX_RULES
    assert rules["items"]["properties"]["pattern"]["maxLength"] == MAX_PATTERN_LENGTH


def test_spark_bounds_are_the_codes() -> None:
    spark = SPEC_SCHEMA["properties"]["spark"]["properties"]
    for pod in ("driver", "executor"):
        cores = spark[pod]["properties"]["cores"]
        assert (cores["minimum"], cores["maximum"]) == (1, MAX_CORES)
    instances = spark["executor"]["properties"]["instances"]
    assert (instances["minimum"], instances["maximum"]) == (1, MAX_EXECUTORS)
    assert (spark["ttlSeconds"]["minimum"], spark["ttlSeconds"]["maximum"]) == (0, MAX_TTL_SECONDS)


def test_enums_are_what_parse_spec_accepts() -> None:
    properties = SPEC_SCHEMA["properties"]
    assert set(properties["apply"]["properties"]["policy"]["enum"]) == {
        policy.value for policy in ApplyPolicy
    }
    assert set(properties["metadataTable"]["enum"]) == {policy.value for policy in MetadataTablePolicy}
    for key_style in properties["table"]["properties"]["keyStyle"]["enum"]:
        parse_spec(with_spec(SMALL, "table.keyStyle", key_style)["spec"])
    for rule_type in properties["buckets"]["properties"]["rule"]["enum"]:
        parse_spec(with_spec(SMALL, "buckets.rule", rule_type)["spec"])


def test_defaults_are_parse_specs_defaults() -> None:
    defaulted = ADMISSION.defaulted(SMALL)
    assert defaulted["spec"]["apply"] == {"policy": "Manual"}
    assert defaulted["spec"]["metadataTable"] == "Refuse"
    assert (defaulted["spec"]["buckets"]["rule"], defaulted["spec"]["buckets"]["convert"]) == ("regex", False)
    assert parse_spec(defaulted["spec"]) == parse_spec(SMALL["spec"])


# --- the schema translator (k8s_schema) -----------------------------------------------------------------

_OBJECT_AB = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("node", "value", "valid"),
    [
        pytest.param({"x-kubernetes-int-or-string": True}, 3, True, id="int-or-string-int"),
        pytest.param({"x-kubernetes-int-or-string": True}, "50%", True, id="int-or-string-string"),
        pytest.param({"x-kubernetes-int-or-string": True}, 1.5, False, id="int-or-string-float"),
        pytest.param({"x-kubernetes-int-or-string": True}, None, False, id="int-or-string-null"),
        pytest.param(
            {"x-kubernetes-int-or-string": True, "nullable": True}, None, True, id="int-or-string-nullable"
        ),
        pytest.param({"type": "string"}, None, False, id="null-not-nullable"),
        pytest.param({"type": "string", "nullable": True}, None, True, id="null-nullable"),
        pytest.param(
            {"type": "string", "enum": ["a"], "nullable": True}, None, True, id="null-nullable-enum"
        ),
        pytest.param(
            {"type": "string", "enum": ["a"], "nullable": True}, "b", False, id="nullable-enum-other"
        ),
        pytest.param({"type": "integer", "format": "int32"}, 2**31 - 1, True, id="int32-max"),
        pytest.param({"type": "integer", "format": "int32"}, 2**31, False, id="int32-over"),
        pytest.param({"type": "integer", "format": "int32"}, -(2**31) - 1, False, id="int32-under"),
        pytest.param({"type": "integer", "format": "int64"}, 2**31, True, id="int64-beyond-int32"),
        pytest.param({"type": "integer", "format": "int64"}, 2**63, False, id="int64-over"),
        pytest.param({"type": "integer", "format": "int32", "maximum": 9}, 10, False, id="own-bound-wins"),
        pytest.param(
            {"type": "number", "minimum": 0, "exclusiveMinimum": True}, 0, False, id="exclusive-minimum"
        ),
        pytest.param(
            {"type": "number", "maximum": 1, "exclusiveMaximum": True}, 0.5, True, id="exclusive-maximum"
        ),
        pytest.param(_OBJECT_AB, {"a": 1, "c": 2}, False, id="undeclared-field"),
        pytest.param(
            {**_OBJECT_AB, "x-kubernetes-preserve-unknown-fields": True},
            {"a": 1, "c": 2},
            True,
            id="preserved-field",
        ),
        pytest.param({"x-kubernetes-preserve-unknown-fields": True}, ["any"], True, id="preserved-untyped"),
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "string"}}, {"k": 1}, False, id="map-values"
        ),
        pytest.param(
            {**_OBJECT_AB, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
            {},
            False,
            id="junctor-applies",
        ),
        pytest.param(
            {**_OBJECT_AB, "allOf": [{"properties": {"a": {"maximum": 5}}}]},
            {"a": 1, "b": 2},
            True,
            id="junctor-properties-close-nothing",
        ),
        pytest.param(
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "properties": {"spec": {"type": "object"}},
            },
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {}}, "spec": {}},
            True,
            id="embedded-resource",
        ),
    ],
)
def test_the_translated_schema_means_what_the_api_server_does(node: Any, value: Any, valid: bool) -> None:
    translated = to_json_schema(node)
    jsonschema.Draft7Validator.check_schema(translated)
    assert jsonschema.Draft7Validator(translated).is_valid(value) is valid


def test_a_resource_always_admits_object_metadata() -> None:
    # A CRD may narrow metadata.name only; labels and the rest are ObjectMeta's, checked by the server.
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}
        },
    }
    validator = k8s_schema.resource_validator(schema)
    assert validator.is_valid({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "abc", "labels": {}}})
    assert not validator.is_valid({"metadata": {"name": "abcd"}})


def test_schema_errors_name_fields_as_the_api_server_does() -> None:
    manifest = with_spec(SMALL, "buckets.rules", [{"pattern": "", "buckets": 8}])
    assert k8s_schema.schema_errors(ADMISSION.validator, manifest) == [
        "spec.buckets.rules[0].pattern: '' should be non-empty"
    ]
    assert k8s_schema.schema_errors(ADMISSION.validator, []) == ["<root>: [] is not of type 'object'"]


def test_crd_validators_are_built_once_per_crd_version() -> None:
    path = hbt_admission.CRD_PATH
    assert k8s_schema.crd_validator(path, VERSION) is k8s_schema.crd_validator(path, VERSION)
    assert k8s_schema.crd_validator(path, VERSION).is_valid(SMALL)
    with pytest.raises(LookupError, match="v9"):
        k8s_schema.crd_validator(path, "v9")


# --- admission ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("manifest", GOOD_MANIFESTS.values(), ids=GOOD_MANIFESTS.keys())
def test_realistic_manifests_are_admitted(manifest: dict[str, Any]) -> None:
    assert ADMISSION.errors(manifest) == []


@pytest.mark.parametrize(("manifest", "fragment"), BAD_MANIFESTS)
def test_bad_manifests_are_refused_saying_why(manifest: dict[str, Any], fragment: str) -> None:
    errors = ADMISSION.errors(manifest)
    assert any(fragment in error for error in errors), errors


def test_every_cel_rule_refuses_some_bad_manifest() -> None:
    messages = {validation["message"] for _, validation in all_validations(SCHEMA)}
    refused = {
        message
        for param in BAD_MANIFESTS
        for error in ADMISSION.errors(param.values[0])
        for message in messages
        if message in error
    }
    transition = {v["message"] for _, v in all_validations(SCHEMA) if is_transition_rule(v["rule"])}
    assert messages - transition - refused == set()


@pytest.mark.parametrize("manifest", GOOD_MANIFESTS.values(), ids=GOOD_MANIFESTS.keys())
def test_an_update_that_changes_nothing_is_admitted(manifest: dict[str, Any]) -> None:
    assert ADMISSION.errors(manifest, old=manifest) == []


@pytest.mark.parametrize(
    ("pattern", "holds"),
    [
        ("dt=2025", True),
        (" dt", False),
        ("dt\t", False),
        ("\x00dt", False),
        ("d t", True),
        ("dt\u00a0", True),
    ],
)
def test_the_pattern_trim_rule_matches_javas_string_trim(pattern: str, holds: bool) -> None:
    (rule,) = [
        v["rule"] for _, v in all_validations(SCHEMA) if "start or end with whitespace" in v["message"]
    ]
    assert cel_holds(rule, pattern) is holds


@pytest.mark.parametrize("plan_id", ["", PLAN_ID])
def test_an_approved_plan_is_empty_or_a_plan_id(plan_id: str) -> None:
    assert ADMISSION.errors(with_spec(SMALL, "apply.approvedPlan", plan_id)) == []


@pytest.mark.parametrize("plan_id", [PLAN_ID.upper(), PLAN_ID[:-1], "sha1:" + "0" * 40, PLAN_ID + "0"])
def test_an_approved_plan_that_is_no_plan_id_is_refused(plan_id: str) -> None:
    errors = ADMISSION.errors(with_spec(SMALL, "apply.approvedPlan", plan_id))
    assert any("must be a plan id as shown in status.plan.id" in error for error in errors), errors


def test_the_table_uri_cannot_change() -> None:
    moved = with_spec(SMALL, "table.uri", "s3a://lake/warehouse/customers_v2")
    (error,) = ADMISSION.errors(moved, old=SMALL)
    assert error.startswith("spec.table.uri: spec.table.uri is immutable")
    assert "create a new HudiBucketTable" in error


def test_everything_but_the_table_uri_may_change() -> None:
    changed = with_spec(SKEWED_DAYS, "buckets.default", 32)
    changed = with_spec(changed, "spark.envFromSecrets", [{"name": "lake-s3-rotated"}])
    assert ADMISSION.errors(changed, old=SKEWED_DAYS) == []


def test_a_new_resource_has_no_old_uri_to_keep() -> None:
    assert ADMISSION.errors(with_spec(SMALL, "table.uri", "/data/other")) == []


# --- status and printer columns -------------------------------------------------------------------------

# What the jobs report about the table, and a plan with a rescale and a partition converted from no
# bucket layout (old_buckets None).
RULES = BucketRules((Rule("^region=emea$", 8),), 4)
TABLE_FACTS = TableBuckets.of(
    HashingConfig.from_rules(RULES, "20261121093000123"), {"region=emea": 8, "region=apac": 4}
)
PLAN = Plan(
    RULES,
    None,
    (
        PartitionChange("region=emea", 4, 8, 4, 9_100_000, 2_147_483_648, ChangeReason.RESCALE, True),
        PartitionChange("region=apac", None, 4, 1, 1_200, 80_000, ChangeReason.CONVERT),
    ),
    "20261121093000123",
)
NOW = datetime(2026, 11, 21, 9, 30, tzinfo=UTC)


def _finished_job(kind: JobKind, sequence: int, result: PlanResult | ApplyResult) -> ObservedJob:
    report = JobReport(
        kind, "s3a://lake/warehouse/customers", Outcome.SUCCEEDED, "done", "", "", result.to_dict(),
        table_buckets=TABLE_FACTS,
    )  # fmt: skip
    return ObservedJob(
        f"customers-1-{kind.value}",
        kind,
        1,
        "",
        JobPhase.COMPLETED,
        f"2026-11-21T09:0{sequence}:00Z",
        sequence,
        report=report,
    )


def operator_statuses() -> dict[str, dict[str, Any]]:
    """The statuses reconcile.decide writes along plan -> (approval) -> apply, as the API server gets them."""
    plan_job = _finished_job(JobKind.PLAN, 0, PlanResult(PLAN.reported(), {}))
    applied = ApplyResult(
        PLAN.reported(), "20261121094500321", 2, 9_101_200, 2_147_563_648, 312.5, False, (), {}
    )
    apply_job = _finished_job(JobKind.APPLY, 1, applied)
    automatic = with_spec(SMALL, "apply.policy", "Automatic")["spec"]
    admins = Policy(JobDefaults(allowed_table_uris=ANYWHERE))
    awaiting = decide(Observed(SMALL["spec"], 1, {}, TableStatus(), (plan_job,), admins), NOW).status
    applying = decide(Observed(automatic, 1, {}, TableStatus(), (plan_job,), admins), NOW).status
    applied = decide(Observed(automatic, 1, {}, applying, (plan_job, apply_job), admins), NOW).status
    return {
        "awaiting-approval": awaiting.to_api(),
        "applying": applying.to_api(),
        "applied": applied.to_api(),
    }


@pytest.mark.parametrize("stage", ["awaiting-approval", "applying", "applied"])
def test_the_status_the_operator_writes_is_kept_whole(stage: str) -> None:
    # The API server prunes what the schema does not declare and drops nulls in declared fields; either
    # would make the stored status differ from what the operator wrote, and the operator write it again.
    status = operator_statuses()[stage]
    assert ADMISSION.errors({**SMALL, "status": status}) == []
    assert not nulls_in_declared_fields(SCHEMA["properties"]["status"], status)


def test_printer_columns_show_readiness_phase_config_rescaling_and_the_plan() -> None:
    status = operator_statuses()["awaiting-approval"]
    metadata = {**SMALL["metadata"], "creationTimestamp": "2026-11-20T08:00:00Z"}
    resource = {**SMALL, "metadata": metadata, "status": status}
    columns = VERSION_DOC["additionalPrinterColumns"]
    assert {column["name"]: column["type"] for column in columns} == {
        "Ready": "string",
        "Phase": "string",
        "Reason": "string",
        "Config": "string",
        "Rescaling": "integer",
        "Table": "string",
        "Plan": "string",
        "Age": "date",
    }
    shown = {}
    for column in columns:
        assert column["jsonPath"].startswith(".")
        matches = parse_jsonpath("$" + column["jsonPath"]).find(resource)
        shown[column["name"]] = matches[0].value if matches else None
    assert shown == {
        "Ready": "False",
        "Phase": "AwaitingApproval",
        "Reason": "AwaitingApproval",
        "Config": "20261121093000123",
        "Rescaling": 2,
        "Table": "s3a://lake/warehouse/customers",
        "Plan": status["plan"]["id"],
        "Age": "2026-11-20T08:00:00Z",
    }


def test_the_printer_columns_are_blank_before_the_first_reconcile() -> None:
    for column in VERSION_DOC["additionalPrinterColumns"]:
        if column["jsonPath"].startswith(".status"):
            assert parse_jsonpath("$" + column["jsonPath"]).find(SMALL) == []


@pytest.mark.parametrize(
    "schedule",
    [
        "90m",
        "6h",
        "7d",
        "0 3 * * *",
        "*/15 8-18 * * 1-5",
        "0 0 1,15 * *",
        "0 3 * * MON-FRI",
        "0 3 ? jan,feb sun",
        "@daily",
        "@hourly",
        "0 0 L * *",
        "0 0 * * 5#2",
    ],
)
def test_a_verify_schedule_is_an_interval_or_five_cron_fields(schedule: str) -> None:
    assert ADMISSION.errors(with_spec(SMALL, "verify.schedule", schedule)) == []
    Schedule.parse(schedule)  # and the operator reads it


@pytest.mark.parametrize(
    "schedule", ["0 1 * * *", "0 1 * * SAT,SUN", "0 1 ? jan,feb sun", "@daily", "@weekly", "0 0 * * 5#2"]
)
def test_a_window_takes_the_cron_expressions_a_verify_schedule_takes(schedule: str) -> None:
    window = {"schedule": schedule, "duration": "3h"}
    assert ADMISSION.errors(with_spec(SMALL, "apply.window", window)) == []
    assert ADMISSION.errors(with_spec(SMALL, "verify.schedule", schedule)) == []
    assert parse_spec(with_spec(SMALL, "apply.window", window)["spec"]).window is not None


@pytest.mark.parametrize("schedule", ["6h", "90m", "daily", "0 1 * *", "@ daily", ""])
def test_a_window_of_another_shape_or_an_interval_is_refused_by_the_api_server(schedule: str) -> None:
    errors = ADMISSION.errors(with_spec(SMALL, "apply.window", {"schedule": schedule, "duration": "3h"}))
    assert any("apply.window.schedule" in error for error in errors), errors


@pytest.mark.parametrize("schedule", ["6 hours", "daily", "0s", "0 3 * *", "0 3 * * * *", "@ daily", ""])
def test_a_verify_schedule_of_another_shape_is_refused_by_the_api_server(schedule: str) -> None:
    errors = ADMISSION.errors(with_spec(SMALL, "verify.schedule", schedule))
    assert any("verify.schedule" in error for error in errors), errors
    with pytest.raises(ScheduleError):
        Schedule.parse(schedule)

"""The Helm chart lints and renders under every value set, into objects Kubernetes accepts, that run the
operator the way its settings and CLI expect: one restricted replica, its watched namespaces, its job
defaults and image allowlist, its metrics and liveness endpoints."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import celpy
import jsonschema
import kubernetes_validate
import pytest
import yaml
from celpy import celtypes

from hudi_bucket_operator.cli import build_parser
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import image_allowed
from hudi_bucket_operator.policy.placement import PodPlacement
from hudi_bucket_operator.resource.api import (
    API_VERSION,
    APPROVE,
    DECIDED_BY,
    DENY,
    GROUP,
    KIND,
    PAUSED,
    PLURAL,
    REASON,
    VERSION,
)
from hudi_bucket_operator.runtime.settings import OperatorConfig
from lib import helm_chart, k8s_schema
from lib.helm_chart import CHART, NAMESPACE, VALUE_SETS, find, one, render
from lib.paths import REPO

pytestmark = pytest.mark.usefixtures("helm_available")

CHART_CRD = CHART / "crds" / f"{PLURAL}.{GROUP}.yaml"
VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
SCHEMA = json.loads((CHART / "values.schema.json").read_text())
# Objects whose schema is a CRD of another project: checked field by field in their own tests.
FOREIGN_KINDS = {("monitoring.coreos.com/v1", "ServiceMonitor")}

value_sets = pytest.mark.parametrize("values", list(VALUE_SETS.values()), ids=list(VALUE_SETS))


def deployment(values: Mapping[str, Any]) -> Mapping[str, Any]:
    return one(render(values), "Deployment")


def container(values: Mapping[str, Any]) -> Mapping[str, Any]:
    (only,) = deployment(values)["spec"]["template"]["spec"]["containers"]
    return only


def app_version() -> str:
    return str(yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"])


def env_of(values: Mapping[str, Any]) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container(values)["env"]}


# --- lint and Kubernetes schemas ---------------------------------------------------------------------


@value_sets
def test_chart_lints_cleanly(values: dict[str, Any]) -> None:
    output = helm_chart.lint(values)
    assert "0 chart(s) failed" in output
    assert "[WARNING]" not in output
    assert "[ERROR]" not in output


@value_sets
@pytest.mark.parametrize("kubernetes", helm_chart.KUBERNETES_VERSIONS)
def test_every_rendered_object_meets_the_kubernetes_schema(values: dict[str, Any], kubernetes: str) -> None:
    objs = render(values, include_crds=True, kubernetes=kubernetes)
    assert objs
    for obj in objs:
        if (obj["apiVersion"], obj["kind"]) in FOREIGN_KINDS:
            continue
        # strict: a misspelt field is an error, as kubectl's strict field validation makes it
        kubernetes_validate.validate(obj, kubernetes, strict=True)


def test_the_charts_crd_is_the_projects_crd() -> None:
    assert CHART_CRD.read_bytes() == (REPO / "crds" / CHART_CRD.name).read_bytes(), (
        f"charts/.../crds/{CHART_CRD.name} differs from crds/{CHART_CRD.name}: "
        f"cp crds/{CHART_CRD.name} {CHART_CRD.relative_to(REPO)}"
    )
    (crd,) = find(render(include_crds=True), "CustomResourceDefinition")
    assert crd["metadata"]["name"] == f"{PLURAL}.{GROUP}"


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.yaml")), ids=lambda path: path.name)
def test_examples_are_admitted_by_the_charts_crd(path: Any) -> None:
    admission = k8s_schema.Admission(k8s_schema.crd_version(CHART_CRD, VERSION)["schema"]["openAPIV3Schema"])
    tables = [doc for doc in yaml.safe_load_all(path.read_text()) if doc and doc["kind"] == KIND]
    assert tables
    for table in tables:
        assert admission.errors(table) == []


# --- values.schema.json ------------------------------------------------------------------------------


def _objects_in(node: Any, where: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    found = []
    if isinstance(node, Mapping):
        if node.get("type") == "object" or "properties" in node:
            found.append((where or "<root>", node))
        for name, sub in (node.get("properties") or {}).items():
            found.extend(_objects_in(sub, f"{where}.{name}"))
        if isinstance(node.get("additionalProperties"), Mapping):
            found.extend(_objects_in(node["additionalProperties"], f"{where}.*"))
        if isinstance(node.get("items"), Mapping):
            found.extend(_objects_in(node["items"], f"{where}[]"))
        for name, sub in (node.get("definitions") or {}).items():
            found.extend(_objects_in(sub, f"#{name}"))
        for junctor in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(junctor) or ():
                found.extend(_objects_in(sub, where))
    return found


def test_values_schema_refuses_unknown_keys_everywhere() -> None:
    # Kubernetes' own structures are passed through as they are; the API server checks them (and
    # tests/lib/helm_chart.py checks the rendered objects against Kubernetes' schemas).
    passed_through = {
        ".affinity.nodeAffinity", ".affinity.podAffinity", ".affinity.podAntiAffinity",
        ".extraEnv[]", ".extraVolumes[]", ".extraVolumeMounts[]", ".topologySpreadConstraints[]",
        ".podSecurityContext", ".containerSecurityContext",
    }  # fmt: skip
    open_objects = [
        where
        for where, node in _objects_in(SCHEMA)
        if where not in passed_through and node.get("additionalProperties", True) is True
    ]
    assert open_objects == []


def test_default_values_meet_the_schema() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert list(jsonschema.Draft7Validator(SCHEMA).iter_errors(VALUES)) == []


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"replicas": 2}, "replicas"),
        ({"watch": {"namespace": ["lake"]}}, "namespace"),
        ({"watch": {"namespaces": ["Lake_1"]}}, "namespaces"),
        ({"logFormat": "yaml"}, "logFormat"),
        ({"jobs": {"driver": {"memory": "4Gi"}}}, "memory"),
        ({"jobs": {"executor": {"instances": 0}}}, "instances"),
        ({"jobs": {"allowedImages": ["a.example/x,b.example/y"]}}, "allowedImages"),
        ({"jobs": {"allowedServiceAccounts": ["Cluster_Admin"]}}, "allowedServiceAccounts"),
        ({"jobs": {"allowedSparkConf": ["spark.jars spark.files"]}}, "allowedSparkConf"),
        ({"jobs": {"allowedHadoopConf": ["fs.s3a.endpoint,fs.s3a.proxy.host"]}}, "allowedHadoopConf"),
        ({"jobs": {"ttlSeconds": "1d"}}, "ttlSeconds"),
        ({"metrics": {"port": 0}}, "port"),
        ({"metrics": {"serviceMonitor": {"enabled": "yes"}}}, "enabled"),
        ({"image": {"pullPolicy": "Sometimes"}}, "pullPolicy"),
        ({"livenessProbe": {"periodSecond": 10}}, "periodSecond"),
        ({"livenessProbe": {"successThreshold": 2}}, "successThreshold"),
        ({"readinessProbe": {"timeoutSeconds": 0}}, "timeoutSeconds"),
    ],
)
def test_chart_refuses_unknown_or_wrong_values(values: dict[str, Any], complaint: str) -> None:
    with pytest.raises(helm_chart.HelmError, match=complaint):
        render(values)


# --- the operator's Deployment -----------------------------------------------------------------------


@value_sets
def test_replicas_roll_with_leader_election_and_a_lone_one_is_replaced_without(
    values: dict[str, Any],
) -> None:
    spec = deployment(values)["spec"]
    assert spec["replicas"] == values.get("replicaCount", 1)
    if values.get("leaderElection", {}).get("enabled", True):  # a new pod stands by until the old one goes
        assert spec["strategy"] == {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
        }
    else:
        assert spec["strategy"] == {"type": "Recreate"}


def test_more_than_one_replica_needs_leader_election() -> None:
    with pytest.raises(helm_chart.HelmError, match=r"replicaCount above 1 needs leaderElection\.enabled"):
        render({"replicaCount": 2, "leaderElection": {"enabled": False}})


def test_replicas_get_a_disruption_budget_spread_and_the_admins_env_and_volumes() -> None:
    values = VALUE_SETS["replicated"]
    objs = render(values)
    budget = one(objs, "PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == 1
    assert budget["spec"]["selector"] == deployment(values)["spec"]["selector"]
    pod = deployment(values)["spec"]["template"]["spec"]
    assert pod["topologySpreadConstraints"] == values["topologySpreadConstraints"]
    assert values["extraVolumes"][0] in pod["volumes"]
    (operator,) = pod["containers"]
    assert values["extraVolumeMounts"][0] in operator["volumeMounts"]
    assert values["extraEnv"][0] in operator["env"]
    assert find(render({}), "PodDisruptionBudget") == []


def test_the_operator_pods_security_contexts_and_probes_are_the_admins_merged_with_the_defaults() -> None:
    values = VALUE_SETS["operator-pod"]
    template = deployment(values)["spec"]["template"]
    pod, (box,) = template["spec"], template["spec"]["containers"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"},
        "runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001,
    }  # fmt: skip
    assert box["securityContext"]["runAsUser"] == 10001
    assert box["securityContext"]["readOnlyRootFilesystem"] is True
    assert box["livenessProbe"] == {
        "httpGet": {"path": "/healthz", "port": "health"},
        "initialDelaySeconds": 30, "periodSeconds": 30, "timeoutSeconds": 5, "failureThreshold": 5,
    }  # fmt: skip
    assert box["readinessProbe"] == {
        "httpGet": {"path": "/healthz", "port": "health"},
        "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3,
    }  # fmt: skip
    assert template["metadata"]["annotations"]["policy.example.com/owner"] == "data-platform"
    assert template["metadata"]["labels"]["team"] == "data-platform"
    without = container({"livenessProbe": {"enabled": False}, "readinessProbe": {"enabled": False}})
    assert not {"livenessProbe", "readinessProbe"} & without.keys()


@value_sets
def test_operator_pod_meets_the_restricted_pod_security_standard(values: dict[str, Any]) -> None:
    pod = deployment(values)["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not {"hostNetwork", "hostPID", "hostIPC"} & pod.keys()
    assert all(
        set(volume) - {"name"} <= {"emptyDir", "configMap", "secret", "projected"}
        for volume in pod["volumes"]
    )
    (box,) = pod["containers"]
    security = box["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["runAsNonRoot"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert "privileged" not in security
    assert all("hostPort" not in port for port in box["ports"])


@value_sets
def test_operator_has_resource_requests_and_liveness_and_readiness_probes_on_kopfs_endpoint(
    values: dict[str, Any],
) -> None:
    box = container(values)
    assert {"cpu", "memory"} <= box["resources"]["requests"].keys()
    args = build_parser().parse_args(["run", *box["args"]])
    ports = {port["name"]: port["containerPort"] for port in box["ports"]}
    for kind in ("livenessProbe", "readinessProbe"):
        probe = box[kind]["httpGet"]
        assert args.liveness == f"http://0.0.0.0:{ports[probe['port']]}/healthz"
        assert probe["path"] == "/healthz"


@pytest.mark.parametrize(("log_format", "verbose"), [("full", False), ("json", True), ("plain", False)])
def test_log_format_and_verbosity_reach_the_operators_command_line(log_format: str, verbose: bool) -> None:
    args = build_parser().parse_args(
        ["run", *container({"logFormat": log_format, "verbose": verbose})["args"]]
    )
    assert (args.log_format, args.verbose) == (log_format, verbose)


def test_watched_namespaces_reach_the_operator() -> None:
    assert OperatorConfig.from_env(env_of({})).watching.namespaces == ()
    env = env_of({"watch": {"namespaces": ["lake", "sales"]}})
    assert OperatorConfig.from_env(env).watching.namespaces == ("lake", "sales")
    assert build_parser().parse_args(["run", *container({})["args"]]).namespace == []


def test_default_job_settings_are_the_operators_defaults() -> None:
    from_chart = OperatorConfig.from_env(env_of({}))
    built_in = OperatorConfig.from_env({})
    assert from_chart.jobs.spark_version == built_in.jobs.spark_version
    assert from_chart.jobs.service_account == built_in.jobs.service_account
    assert from_chart.jobs.main_application_file == built_in.jobs.main_application_file
    assert from_chart.jobs.ttl_seconds == built_in.jobs.ttl_seconds
    assert from_chart.jobs.driver == built_in.jobs.driver
    assert from_chart.jobs.executor == built_in.jobs.executor
    assert from_chart.jobs.image == f"hudi-bucket-operator-job:{app_version()}"
    assert from_chart.metrics.port == 8080
    assert from_chart.watching.resync_seconds == 60


def test_custom_job_defaults_and_allowlist_reach_the_operator() -> None:
    config = OperatorConfig.from_env(env_of(VALUE_SETS["job-defaults"]))
    assert config.jobs == JobDefaults(
        image="registry.example.com/hudi/job:2.1.0",
        spark_version="4.1.0",
        service_account="lake-spark",
        ttl_seconds=31536000,
        max_ttl_seconds=31536000,
        min_interval="15m",
        allowed_table_uris={"lake": ("s3a://lake/warehouse/",), "sales": ("s3a://sales/",)},
        driver_cores=2,
        driver_memory="4g",
        executor_cores=4,
        executor_memory="16g",
        executor_instances=12,
        allowed_images=("registry.example.com/hudi/", "registry.example.com/team-a/spark-job"),
    )
    assert (config.watching.resync_seconds, config.metrics.port) == (2.5, 9090)


def test_the_job_pods_values_reach_the_operator_and_the_job_service_account() -> None:
    values = VALUE_SETS["job-pods"]
    jobs = values["jobs"]
    defaults = OperatorConfig.from_env(env_of(values)).jobs
    assert defaults.driver_pod == PodPlacement.model_validate(jobs["driver"]["pod"])
    assert defaults.executor_pod == PodPlacement.model_validate(jobs["executor"]["pod"])
    assert defaults.driver_pod.priority_class_name == "batch-high"
    assert defaults.image_pull_secrets == ("registry-key",)
    assert defaults.image_pull_policy == "Always"
    # Pinned by digest: the job image, and the operator's own
    assert defaults.image == f"hudi-bucket-operator-job@sha256:{'b' * 64}"
    assert image_allowed(defaults.image, defaults)
    assert container(values)["image"] == f"hudi-bucket-operator@sha256:{'a' * 64}"
    (account,) = [
        a for a in find(render(values), "ServiceAccount") if a["metadata"]["name"] == "hudi-bucket-jobs"
    ]
    assert account["metadata"]["annotations"] == jobs["serviceAccount"]["annotations"]


def test_each_namespace_gets_its_own_cloud_identity_on_the_jobs_account() -> None:
    """IRSA's role (or workload identity) per namespace: the store's policy, not only the operator's
    prefixes, keeps a team's jobs in its own buckets."""
    role = "eks.amazonaws.com/role-arn"
    values = {
        "watch": {"namespaces": ["team-a", "team-b", "shared"]},
        "jobs": {
            "allowedTableUris": {"team-a": ["s3a://lake/team-a/"], "team-b": ["s3a://lake/team-b/"]},
            "serviceAccount": {
                "annotations": {role: "arn:aws:iam::1:role/none", "team": "data"},
                "annotationsByNamespace": {
                    "team-a": {role: "arn:aws:iam::1:role/team-a"},
                    "team-b": {role: "arn:aws:iam::1:role/team-b"},
                },
            },
        },
    }
    accounts = {
        a["metadata"]["namespace"]: a["metadata"]["annotations"]
        for a in find(render(values), "ServiceAccount")
        if a["metadata"]["name"] == "hudi-bucket-jobs"
    }
    assert accounts == {
        "team-a": {role: "arn:aws:iam::1:role/team-a", "team": "data"},
        "team-b": {role: "arn:aws:iam::1:role/team-b", "team": "data"},
        "shared": {role: "arn:aws:iam::1:role/none", "team": "data"},
    }


def test_by_default_the_chart_allows_no_table_anywhere_and_says_so() -> None:
    config = OperatorConfig.from_env(env_of({}))
    assert config.jobs.allowed_table_uris == {}
    assert "No table can run yet: jobs.allowedTableUris names no location" in _notes({})
    assert "No table can run yet" not in _notes({"jobs": {"allowedTableUris": {"lake": ["/data/"]}}})


def test_image_allowlist_limits_what_a_table_may_run() -> None:
    defaults = OperatorConfig.from_env(env_of(VALUE_SETS["job-defaults"])).jobs
    assert image_allowed("registry.example.com/hudi/job:2.1.0", defaults)
    assert image_allowed("registry.example.com/hudi/other:1", defaults)
    assert image_allowed("registry.example.com/team-a/spark-job@sha256:" + "0" * 64, defaults)
    assert not image_allowed("registry.example.com/team-a/spark-job-evil:1", defaults)
    assert not image_allowed("docker.io/library/python:3", defaults)
    only_default = OperatorConfig.from_env(env_of({})).jobs
    assert only_default.allowed_images == ()
    assert not image_allowed("registry.example.com/hudi/job:2.1.0", only_default)


def test_what_admins_allow_tables_reaches_the_operator() -> None:
    assert OperatorConfig.from_env(env_of({})).jobs.allowed_service_accounts == ()
    values = {
        "jobs": {
            "allowedServiceAccounts": ["lake-spark", "lake-spark-irsa"],
            "allowedSparkConf": ["spark.speculation", "spark.kubernetes.driver.label."],
            "allowedHadoopConf": ["fs.s3a.endpoint", "fs.s3a.connection.ssl.enabled"],
        }
    }
    defaults = OperatorConfig.from_env(env_of(values)).jobs
    assert defaults.allowed_service_accounts == ("lake-spark", "lake-spark-irsa")
    assert defaults.allowed_spark_conf == ("spark.speculation", "spark.kubernetes.driver.label.")
    assert defaults.allowed_hadoop_conf == ("fs.s3a.endpoint", "fs.s3a.connection.ssl.enabled")
    defaults = OperatorConfig.from_env(env_of({})).jobs
    assert (defaults.allowed_spark_conf, defaults.allowed_hadoop_conf) == ((), ())


# --- metrics -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [{}, VALUE_SETS["job-defaults"]], ids=["default-port", "port-9090"])
def test_metrics_service_reaches_the_port_the_operator_serves(values: dict[str, Any]) -> None:
    objs = render(values)
    service = one(objs, "Service")
    port = OperatorConfig.from_env(env_of(values)).metrics.port
    (service_port,) = service["spec"]["ports"]
    box_ports = {p["name"]: p["containerPort"] for p in container(values)["ports"]}
    assert box_ports[service_port["targetPort"]] == port == service_port["port"]
    pod_labels = deployment(values)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert find(objs, "ServiceMonitor") == []


def test_service_monitor_scrapes_the_metrics_service() -> None:
    objs = render(VALUE_SETS["service-monitor"])
    service, monitor = one(objs, "Service"), one(objs, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == service["spec"]["ports"][0]["name"]
    assert endpoint["path"] == "/metrics"


# --- the admission policy on decisions ----------------------------------------------------------------

PLAN = "sha256:" + "3f9a" * 16
NOT_THEIRS = "must name who makes it: set hudi.bucketops.io/decided-by to alice"
UNSAFE_REASON = (
    "hudi.bucketops.io/reason must hold no control characters (line breaks, tabs, escape sequences) and no "
    "'${': kubectl hbt history prints it and status.history keeps it"
)


class Object(celtypes.MapType):
    """An object that CEL compares with null, as Kubernetes' CEL does (cel-python refuses ``map != null``)."""

    def __ne__(self, other: Any) -> bool:
        return other is None or super().__ne__(other)


def admission_says(annotations: dict[str, str], before: dict[str, str] | None = None) -> list[str]:
    """What the chart's ValidatingAdmissionPolicy says when alice sets a table's annotations to
    ``annotations`` (from ``before``; None: she creates the table): the messages of the validations that
    fail, none when it admits. Its CEL is evaluated as the API server does (variables in order, then each
    validation), by cel-python; tests/e2e/test_in_a_cluster.py has a real API server enforce it."""
    policy = one(render({}), "ValidatingAdmissionPolicy")["spec"]
    env = celpy.Environment()

    def table(annotations: dict[str, str]) -> dict[str, Any]:
        metadata = {"name": "orders", "namespace": "lake", "annotations": annotations}
        return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata}

    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(table(annotations)),
        "oldObject": celpy.json_to_cel(None) if before is None else Object(celpy.json_to_cel(table(before))),
        "request": celpy.json_to_cel({"userInfo": {"username": "alice"}}),
    }

    def evaluate(expression: str) -> Any:
        result = env.program(env.compile(expression)).evaluate(activation)
        assert not isinstance(result, Exception), f"{expression}: {result}"
        return result

    variables: dict[celtypes.StringType, Any] = {}
    for variable in policy["variables"]:
        activation["variables"] = celtypes.MapType(variables)
        variables[celtypes.StringType(variable["name"])] = evaluate(variable["expression"])
    activation["variables"] = celtypes.MapType(variables)
    return [
        str(evaluate(v["messageExpression"]) if "messageExpression" in v else v["message"])
        for v in policy["validations"]
        if not evaluate(v["expression"])
    ]


def test_an_approval_denial_or_reason_is_admitted_only_naming_who_sets_it() -> None:
    mine = {DECIDED_BY: "alice"}
    assert admission_says({APPROVE: PLAN, **mine, REASON: "reviewed in CHG-1234"}, before={}) == []
    assert admission_says({DENY: PLAN, **mine}) == []
    for decision in ({APPROVE: PLAN}, {DENY: PLAN}, {REASON: "reviewed"}, {DECIDED_BY: "bob"}):
        assert admission_says({**decision, DECIDED_BY: "bob"}, before={}) == [
            f"an approval, a denial or its reason {NOT_THEIRS} (kubectl hbt approve|deny does)"
        ]
    # bob approved; alice changes only his reason, or gives one where he gave none.
    bobs = {APPROVE: PLAN, DECIDED_BY: "bob", REASON: "reviewed"}
    assert NOT_THEIRS in admission_says({**bobs, REASON: "not reviewed at all"}, before=bobs)[0]
    assert NOT_THEIRS in admission_says(bobs, before={APPROVE: PLAN, DECIDED_BY: "bob"})[0]
    # What is left as it was, or removed, is no decision of hers.
    assert admission_says({**bobs, PAUSED: "true"}, before=bobs) == []
    assert admission_says({APPROVE: PLAN, DECIDED_BY: "bob"}, before=bobs) == []


@pytest.mark.parametrize(
    "reason",
    [
        "line one\nline two",
        "tab\there",
        "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
        "del\x7f",
        "next line\x85",
        "${env:AWS_SECRET_ACCESS_KEY}",
        "s3a://lake/${hadoop.tmp.dir}",
    ],
    ids=[
        "line-break",
        "tab",
        "escape-sequence",
        "delete",
        "c1-next-line",
        "env-reference",
        "setting-reference",
    ],
)
def test_a_reason_with_control_characters_or_a_reference_is_refused_even_from_who_decides(
    reason: str,
) -> None:
    said = admission_says({APPROVE: PLAN, DECIDED_BY: "alice", REASON: reason}, before={})
    assert said == [UNSAFE_REASON]
    # One set before the policy was in force does not stop other changes to the table.
    earlier = {APPROVE: PLAN, DECIDED_BY: "bob", REASON: reason}
    assert admission_says({**earlier, PAUSED: "true"}, before=earlier) == []


def test_plain_text_in_any_language_is_a_reason() -> None:
    reason = "reviewed in CHG-1234 — ok für Q4, 'quoted' \"too\" $HOME {braces} 見直し済み"
    assert admission_says({APPROVE: PLAN, DECIDED_BY: "alice", REASON: reason}, before={}) == []


# --- NOTES.txt ---------------------------------------------------------------------------------------


def _notes(values: Mapping[str, Any]) -> str:
    with_values = ["--set-json", f"watch={json.dumps(values.get('watch', {'namespaces': []}))}"]
    for key, value in values.items():
        if key != "watch":
            with_values += ["--set-json", f"{key}={json.dumps(value)}"]
    out = helm_chart.helm(
        "install", helm_chart.RELEASE, str(CHART), "--namespace", NAMESPACE, "--dry-run=client", *with_values
    )
    return out[out.index("NOTES:") :]


def test_notes_tell_what_to_do_next() -> None:
    notes = _notes({})
    assert "every namespace" in notes
    assert "jobs.serviceAccount.namespaces" in notes  # tables elsewhere need the job service account
    assert "kubectl -n hudi-bucket-operator rollout status deployment/hudi-bucket-operator" in notes
    assert "spark.jobNamespaces" in notes
    assert "kubectl apply --server-side --force-conflicts -f charts/hudi-bucket-operator/crds/" in notes
    namespaced = _notes({"watch": {"namespaces": ["lake", "sales"]}})
    assert "lake, sales" in namespaced
    assert "jobs.serviceAccount.namespaces" not in namespaced

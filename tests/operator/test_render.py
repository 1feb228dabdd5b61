"""SparkApplication manifests: valid against the Spark Operator's real CRD, and right where a schema
cannot tell (arguments the job parses, owner, labels, no inline credentials, the image allowlist)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import yaml

from hudi_bucket.contract.reports import ConfigMapReport
from hudi_bucket.contract.requests import JobKind, parse_argv
from hudi_bucket_operator.decide.decisions import SubmitJob
from hudi_bucket_operator.decide.render import DEFAULT_SPARK_CONF, render_spark_application
from hudi_bucket_operator.errors import ImageNotAllowedError, InvalidSpecError, SettingNotAllowedError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import image_allowed
from hudi_bucket_operator.policy.placement import Affinity, PodPlacement, Toleration
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import API_VERSION, KIND
from hudi_bucket_operator.resource.spec import TableSpec, parse_spec
from lib import hbt_admission, k8s_schema
from lib.paths import SPARK_APPLICATION_CRD as CRD

needs_the_crd = pytest.mark.shared  # the Spark Operator's real CRD is in ../shared
UID = "0b6f3c52-9d41-4f0e-8a7e-2f5d8c1b9e33"
PLAN_ID = "sha256:" + "ab" * 32
DEFAULTS = JobDefaults(
    image="registry.example/hudi-bucket-job:0.1.0",
    spark_version="4.0.1",
    service_account="hudi-bucket-jobs",
    allowed_images=("registry.example/hudi-bucket-job", "mirror.example/lake/"),
    # What FULL_SPEC needs beyond the built-in allow-lists, as admins would allow it.
    allowed_service_accounts=("orders-jobs",),
    allowed_spark_conf=("spark.speculation",),
    allowed_hadoop_conf=("fs.s3a.endpoint",),
)
MINIMAL_SPEC: dict[str, Any] = {
    "table": {"uri": "s3a://lake/warehouse/orders"},
    "buckets": {
        "default": 16,
        "rules": [{"pattern": r"\d{4}-(06-(01|17|18)|11-(01|10|11))", "buckets": 256}],
    },
}
FULL_SPEC: dict[str, Any] = {
    "table": {
        "uri": "s3a://lake/warehouse/orders",
        "hashFields": ["order_id", "region"],
        "keyStyle": "Hudi0x",
    },
    "buckets": {
        "default": 16,
        "rule": "regex",
        "rules": [{"pattern": r"2026-06-.*", "buckets": 64}],
        "currentBuckets": 8,  # convert is the other way to start, and cannot go with currentBuckets
    },
    "apply": {"policy": "Automatic"},
    "metadataTable": "Disable",
    "spark": {
        "image": "mirror.example/lake/hudi-bucket-job@sha256:" + "0" * 64,
        "sparkVersion": "4.0.0",
        "serviceAccount": "orders-jobs",
        "driver": {"cores": 2, "memory": "3g"},
        "executor": {"instances": 4, "cores": 3, "memory": "6g"},
        "sparkConf": {"spark.sql.shuffle.partitions": "400", "spark.speculation": "true"},
        "hadoopConf": {"fs.s3a.endpoint": "http://minio.lake:9000", "fs.s3a.path.style.access": "true"},
        "envFromSecrets": [{"name": "lake-s3"}, {"name": "lake-extra"}],
        "ttlSeconds": 600,
    },
}


def table_body(spec: dict[str, Any], name: str = "orders") -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": name,
            "namespace": "lake",
            "uid": UID,
            "generation": 3,
            # What Argo CD and Helm put on the table: none of it may reach a child.
            "labels": {"app.kubernetes.io/instance": "lake-tables", "team": "orders"},
            "annotations": {"argocd.argoproj.io/tracking-id": "lake-tables:hudi.bucketops.io/x:lake/orders"},
        },
        "spec": spec,
    }


def render(spec: dict[str, Any] = MINIMAL_SPEC, kind: str = "plan", **options: Any) -> dict[str, Any]:
    table = table_body(spec, options.pop("name", "orders"))
    table_spec = options.pop("table_spec", None) or parse_spec(spec)
    job = submitted(table_spec, kind, options.pop("retry_token", ""))
    meta = table["metadata"]
    name = naming.job_name(meta["name"], UID, kind, meta["generation"], job.retry_token, job.approved_plan)
    return render_spark_application(
        table=table,
        job=job,
        spark=table_spec.spark,
        job_name=name,
        defaults=options.pop("defaults", DEFAULTS),
    )


def submitted(table_spec: TableSpec, kind: str, retry_token: str = "") -> SubmitJob:
    """The job decide submits: an apply of PLAN_ID, or a plan."""
    approved = PLAN_ID if kind == "apply" else ""
    return SubmitJob(table_spec.job_request(JobKind(kind), approved), 3, retry_token, 0)


DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def spark_application_errors(manifest: dict[str, Any]) -> list[str]:
    """What the Spark Operator's CRD refuses in ``manifest`` (see k8s_schema: misspelt fields too)."""
    return k8s_schema.schema_errors(k8s_schema.crd_validator(CRD, "v1beta2"), manifest)


def assert_valid_labels(labels: dict[str, str]) -> None:
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        assert QUALIFIED_NAME.fullmatch(name), key
        assert len(name) <= 63, key
        assert not prefix or all(DNS_1123_LABEL.fullmatch(p) for p in prefix.split(".")), key
        assert LABEL_VALUE.fullmatch(value), (key, value)
        assert len(value) <= 63, (key, value)


def assert_valid(manifest: dict[str, Any]) -> None:
    assert spark_application_errors(manifest) == []
    meta = manifest["metadata"]
    assert DNS_1123_LABEL.fullmatch(meta["name"])
    assert len(meta["name"]) < 50
    assert_valid_labels(meta["labels"])
    assert_valid_labels(manifest["spec"]["driver"]["labels"])
    assert_valid_labels(manifest["spec"]["executor"]["labels"])


def strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)
    else:
        yield str(node)


# --- the schema check itself is not vacuous ------------------------------------------------------------


@needs_the_crd
def test_the_translated_schema_catches_misspelt_fields_and_wrong_types() -> None:
    good = render()
    assert spark_application_errors(good) == []
    misspelt = copy.deepcopy(good)
    misspelt["spec"]["driver"]["envfrom"] = [{"secretRef": {"name": "x"}}]
    assert any("envfrom" in e for e in spark_application_errors(misspelt))
    wrong_type = copy.deepcopy(good)
    wrong_type["spec"]["driver"]["memory"] = 2048
    assert spark_application_errors(wrong_type)
    bad_enum = copy.deepcopy(good)
    bad_enum["spec"]["restartPolicy"] = {"type": "Sometimes"}
    assert spark_application_errors(bad_enum)
    too_big = copy.deepcopy(good)
    too_big["spec"]["executor"]["instances"] = 2**31
    assert spark_application_errors(too_big)


@pytest.mark.parametrize("spec", [MINIMAL_SPEC, FULL_SPEC], ids=["defaults", "full"])
def test_the_table_specs_rendered_here_are_admitted(spec: dict[str, Any]) -> None:
    assert hbt_admission.ADMISSION.errors(table_body(spec)) == []


def container(body: dict[str, Any], pod: str) -> dict[str, Any]:
    """The container of the driver's or executor's pod template (Spark's own, to which it adds)."""
    [only] = body[pod]["template"]["spec"]["containers"]
    return only  # type: ignore[no-any-return]


# --- manifests --------------------------------------------------------------------------------------------


@needs_the_crd
@pytest.mark.parametrize("kind", ["verify", "plan", "apply"])
@pytest.mark.parametrize("spec", [MINIMAL_SPEC, FULL_SPEC], ids=["defaults", "full"])
def test_manifests_are_valid_against_the_crd(kind: str, spec: dict[str, Any]) -> None:
    manifest = render(spec, kind)
    assert_valid(manifest)
    assert manifest["apiVersion"] == "sparkoperator.k8s.io/v1beta2"
    assert manifest["kind"] == "SparkApplication"
    body = manifest["spec"]
    assert (body["type"], body["mode"], body["restartPolicy"]) == ("Python", "cluster", {"type": "Never"})
    assert body["mainApplicationFile"] == DEFAULTS.main_application_file
    assert container(body, "driver")["env"] == [
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    ]
    # Spark's own container names, which the controller tells spark-submit to take from the templates
    assert container(body, "driver")["name"] == "spark-kubernetes-driver"
    assert container(body, "executor")["name"] == "spark-kubernetes-executor"
    json.dumps(manifest)  # plain data only
    yaml.safe_dump(manifest)


def test_defaults_fill_what_the_spec_leaves_empty() -> None:
    defaults = JobDefaults(
        image="registry.example/hudi-bucket-job:0.1.0",
        spark_version="4.0.1",
        service_account="jobs",
        ttl_seconds=3600,
        driver_cores=2,
        driver_memory="4g",
        executor_cores=4,
        executor_memory="8g",
        executor_instances=3,
        image_pull_policy="Always",
        spark_conf={"spark.eventLog.enabled": "false"},
    )
    body = render(MINIMAL_SPEC, defaults=defaults)["spec"]
    assert body["image"] == defaults.image
    assert body["imagePullPolicy"] == "Always"
    assert body["sparkVersion"] == "4.0.1"
    assert body["timeToLiveSeconds"] == 3600
    assert body["sparkConf"] == {**DEFAULT_SPARK_CONF, "spark.eventLog.enabled": "false"}
    assert body["hadoopConf"] == {}
    assert {k: body["driver"][k] for k in ("cores", "memory", "serviceAccount")} == {
        "cores": 2,
        "memory": "4g",
        "serviceAccount": "jobs",
    }
    assert {k: body["executor"][k] for k in ("instances", "cores", "memory", "serviceAccount")} == {
        "instances": 3,
        "cores": 4,
        "memory": "8g",
        "serviceAccount": "jobs",
    }
    assert "envFrom" not in container(body, "driver")
    assert "envFrom" not in container(body, "executor")


def test_every_spark_option_of_the_spec_is_carried() -> None:
    body = render(FULL_SPEC, "apply")["spec"]
    spark = FULL_SPEC["spark"]
    assert body["image"] == spark["image"]
    assert body["sparkVersion"] == "4.0.0"
    assert body["timeToLiveSeconds"] == 600
    assert body["sparkConf"] == {**DEFAULT_SPARK_CONF, **spark["sparkConf"]}  # the spec wins
    assert body["hadoopConf"] == spark["hadoopConf"]
    secrets = [{"secretRef": {"name": "lake-s3"}}, {"secretRef": {"name": "lake-extra"}}]
    assert body["driver"] | {"labels": None, "template": None} == {
        "cores": 2,
        "memory": "3g",
        "serviceAccount": "orders-jobs",
        "labels": None,
        "template": None,
    }
    assert body["executor"] | {"labels": None, "template": None} == {
        "instances": 4,
        "cores": 3,
        "memory": "6g",
        "serviceAccount": "orders-jobs",
        "labels": None,
        "template": None,
    }
    assert container(body, "driver")["envFrom"] == container(body, "executor")["envFrom"] == secrets
    assert container(body, "driver")["envFrom"] is not container(body, "executor")["envFrom"]


@needs_the_crd
def test_the_admins_placement_of_the_pods_is_in_their_templates() -> None:
    """Kubernetes' own fields, where Spark takes them from (the controller passes the templates on)."""
    driver_pod = PodPlacement(
        priority_class_name="batch-high",
        tolerations=(Toleration(key="spark", operator="Exists", effect="NoSchedule"),),
        annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
    )
    executor_pod = PodPlacement(
        node_selector={"pool": "spot"},
        affinity=Affinity(node_affinity={"preferredDuringSchedulingIgnoredDuringExecution": []}),
    )
    defaults = DEFAULTS.model_copy(
        update={
            "driver_pod": driver_pod,
            "executor_pod": executor_pod,
            "image_pull_secrets": ("registry-key",),
        }
    )
    manifest = render(FULL_SPEC, "apply", defaults=defaults)
    assert_valid(manifest)
    driver, executor = (manifest["spec"][pod]["template"] for pod in ("driver", "executor"))
    assert driver["metadata"] == {"annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}}
    assert driver["spec"] | {"containers": None} == {
        "containers": None,
        "priorityClassName": "batch-high",
        "tolerations": [{"key": "spark", "operator": "Exists", "effect": "NoSchedule"}],
        "imagePullSecrets": [{"name": "registry-key"}],
    }
    assert "metadata" not in executor
    assert executor["spec"] | {"containers": None} == {
        "containers": None,
        "nodeSelector": {"pool": "spot"},
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
        "imagePullSecrets": [{"name": "registry-key"}],
    }


def test_without_placement_the_templates_hold_the_containers_alone() -> None:
    body = render(FULL_SPEC)["spec"]
    assert body["driver"]["template"] == {"spec": {"containers": [container(body, "driver")]}}
    assert body["executor"]["template"] == {"spec": {"containers": [container(body, "executor")]}}


def test_a_value_set_in_the_spec_wins_even_when_it_equals_the_builtin_default() -> None:
    defaults = JobDefaults(image=DEFAULTS.image, spark_version="4.0.1", driver_cores=4, driver_memory="8g")
    spec = {**MINIMAL_SPEC, "spark": {"driver": {"cores": 1}}}
    driver = render(spec, defaults=defaults)["spec"]["driver"]
    assert (driver["cores"], driver["memory"]) == (1, "8g")


# --- arguments ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["verify", "plan", "apply"])
@pytest.mark.parametrize("spec", [MINIMAL_SPEC, FULL_SPEC], ids=["defaults", "full"])
def test_the_arguments_are_the_jobs_request_reporting_into_its_configmap(
    kind: str, spec: dict[str, Any]
) -> None:
    manifest = render(spec, kind)
    request = submitted(parse_spec(spec), kind).request
    parsed = parse_argv(manifest["spec"]["arguments"])
    assert parsed == replace(request, report=parsed.report)
    report = ConfigMapReport.parse(parsed.report)
    assert (report.namespace, report.name) == ("lake", manifest["metadata"]["name"])
    # The job creates its report's ConfigMap, owned by the table as the job itself is.
    [owner] = manifest["metadata"]["ownerReferences"]
    assert report.owner is not None
    assert report.owner.reference() == {key: owner[key] for key in ("apiVersion", "kind", "name", "uid")}


def test_apply_carries_the_approved_plan() -> None:
    manifest = render(MINIMAL_SPEC, "apply")
    assert f"--approved-plan={PLAN_ID}" in manifest["spec"]["arguments"]
    assert manifest["metadata"]["annotations"][naming.PLAN_ID_ANNOTATION] == PLAN_ID


def test_a_job_name_that_is_no_dns_label_is_a_bug() -> None:
    table, spec = table_body(MINIMAL_SPEC), parse_spec(MINIMAL_SPEC)
    with pytest.raises(ValueError, match="job name"):
        render_spark_application(
            table=table, job=submitted(spec, "plan"), spark=spec.spark, job_name="x" * 60, defaults=DEFAULTS
        )


# --- ownership and labels -------------------------------------------------------------------------------


def test_the_table_owns_the_job_and_its_labels_are_not_copied() -> None:
    meta = render(FULL_SPEC, "apply")["metadata"]
    assert meta["namespace"] == "lake"
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "hudi.bucketops.io/v1alpha1",
            "kind": "HudiBucketTable",
            "name": "orders",
            "uid": UID,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert meta["labels"] == naming.child_labels("orders", UID, "apply", 3)
    everything = set(strings(meta))
    assert "app.kubernetes.io/instance" not in everything
    assert "team" not in everything
    assert "argocd.argoproj.io/tracking-id" not in everything
    assert meta["annotations"][naming.TABLE_NAME_ANNOTATION] == "orders"


def test_pods_carry_our_labels_only() -> None:
    body = render(FULL_SPEC)["spec"]
    labels = naming.child_labels("orders", UID, "plan", 3)
    assert body["driver"]["labels"] == labels
    assert body["executor"]["labels"] == labels


def test_driver_and_executor_meet_pod_security_restricted() -> None:
    """Their containers ask for what the ``restricted`` profile checks (the pods themselves are admitted
    by a real API server in tests/e2e/test_jobs_in_pods.py)."""
    body = render(FULL_SPEC)["spec"]
    for pod in ("driver", "executor"):
        assert container(body, pod)["securityContext"] == {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        }
    assert (
        container(body, "driver")["securityContext"]["capabilities"]
        is not container(body, "executor")["securityContext"]["capabilities"]
    )


@needs_the_crd
def test_a_long_odd_table_name_still_renders_a_valid_manifest() -> None:
    name = "orders." + "x" * 240
    manifest = render(MINIMAL_SPEC, "plan", name=name)
    assert_valid(manifest)
    assert manifest["metadata"]["annotations"][naming.TABLE_NAME_ANNOTATION] == name
    assert manifest["metadata"]["ownerReferences"][0]["name"] == name


def test_retry_token_is_annotated() -> None:
    manifest = render(MINIMAL_SPEC, retry_token="2")
    assert manifest["metadata"]["annotations"][naming.RETRY_TOKEN_ANNOTATION] == "2"


# --- credentials -----------------------------------------------------------------------------------------


def test_secrets_are_referenced_never_inlined() -> None:
    manifest = render(FULL_SPEC, "apply")
    for pod in ("driver", "executor"):
        for source in container(manifest["spec"], pod)["envFrom"]:
            assert source.keys() == {"secretRef"}
            assert source["secretRef"].keys() == {"name"}
    everything = list(strings(manifest))
    assert not {"data", "stringData", "secretKeyRef", "envSecretKeyRefs"} & set(everything)
    assert not any(re.search(r"secret\.key|access\.key|password", s, re.IGNORECASE) for s in everything)


@pytest.mark.parametrize(
    ("where", "key"),
    [
        ("hadoopConf", "fs.s3a.secret.key"),
        ("hadoopConf", "fs.s3a.access.key"),
        ("hadoopConf", "fs.s3a.session.token"),
        ("hadoopConf", "fs.azure.account.key.lake.dfs.core.windows.net"),
        ("hadoopConf", "fs.azure.account.oauth2.client.secret"),
        ("hadoopConf", "fs.gs.auth.service.account.private.key"),
        ("sparkConf", "spark.hadoop.fs.s3a.secret.key"),
        ("sparkConf", "spark.ssl.keyPassword"),
    ],
)
def test_inline_credentials_are_refused(where: str, key: str) -> None:
    spec = {**MINIMAL_SPEC, "spark": {where: {key: "AKIA-not-really"}}}
    with pytest.raises(InvalidSpecError, match=re.escape(key)) as caught:
        render(spec)
    assert "envFromSecrets" in str(caught.value)
    assert "AKIA-not-really" not in str(caught.value)


def test_settings_about_credentials_are_not_credentials() -> None:
    conf = {
        "fs.s3a.aws.credentials.provider": "com.amazonaws.auth.WebIdentityTokenCredentialsProvider",
        "fs.azure.account.oauth.provider.type": "org.apache.hadoop.fs.azurebfs.oauth2.MsiTokenProvider",
        "fs.azure.account.oauth2.client.id": "0000-1111",
    }
    spec = {**MINIMAL_SPEC, "spark": {"hadoopConf": conf}}
    with pytest.raises(SettingNotAllowedError, match="chooses whose credentials the job uses"):
        render(spec)  # which credentials a job uses is the admins' choice
    allowed = DEFAULTS.model_copy(
        update={"allowed_hadoop_conf": ("fs.s3a.aws.credentials.provider", *conf.keys())}
    )
    assert render(spec, defaults=allowed)["spec"]["hadoopConf"] == conf


@pytest.mark.parametrize(
    "key",
    [
        "spark.kubernetes.container.image",
        "spark.kubernetes.driver.container.image",
        "spark.kubernetes.executor.container.image",
        "spark.kubernetes.namespace",
        "spark.kubernetes.driver.podTemplateFile",
        "spark.kubernetes.authenticate.driver.serviceAccountName",
        "spark.master",
    ],
)
def test_spark_conf_cannot_override_what_the_operator_owns(key: str) -> None:
    spec = {**MINIMAL_SPEC, "spark": {"sparkConf": {key: "anything"}}}
    everything = DEFAULTS.model_copy(
        update={"allowed_spark_conf": ("spark.",)}
    )  # not even an admin's widest prefix
    with pytest.raises(InvalidSpecError, match=re.escape(key)):
        render(spec, defaults=everything)


def test_resources_over_the_admins_limits_are_never_rendered() -> None:
    # decide refuses these before any job; render checks again what reaches it from code.
    spark = {"driver": {"memory": "99999999g"}, "executor": {"instances": 1000, "cores": 256}}
    table_spec = parse_spec({**MINIMAL_SPEC, "spark": spark})
    with pytest.raises(InvalidSpecError) as caught:
        render(MINIMAL_SPEC, table_spec=table_spec)
    message = str(caught.value)
    for part in ("driver.memory 99999999g", "executor.instances 1000", "executor.cores 256"):
        assert part in message


# --- the image allowlist ---------------------------------------------------------------------------------


def test_an_image_off_the_allowlist_is_refused_naming_image_and_allowlist() -> None:
    spec = {**MINIMAL_SPEC, "spark": {"image": "docker.io/evil/miner:latest"}}
    with pytest.raises(ImageNotAllowedError) as caught:
        render(spec)
    message = str(caught.value)
    assert "docker.io/evil/miner:latest" in message
    assert DEFAULTS.image in message
    for prefix in DEFAULTS.allowed_images:
        assert prefix in message
    assert isinstance(caught.value, InvalidSpecError)  # the operator reports it as Stalled


@pytest.mark.parametrize(
    ("image", "allowed"),
    [
        ("registry.example/hudi-bucket-job:0.1.0", True),  # the default
        ("registry.example/hudi-bucket-job:0.2.0", True),
        ("registry.example/hudi-bucket-job@sha256:" + "1" * 64, True),
        ("registry.example/hudi-bucket-job", True),
        ("mirror.example/lake/anything:1", True),
        ("registry.example/hudi-bucket-job-evil:1", False),  # a prefix matches at a boundary only
        ("registry.example/hudi-bucket-jobs:1", False),
        ("mirror.example/lakehouse/x:1", False),
        ("docker.io/library/spark:4.0.1", False),
    ],
)
def test_allowlist_prefixes_match_at_a_boundary(image: str, allowed: bool) -> None:
    assert image_allowed(image, DEFAULTS) is allowed


def test_without_an_allowlist_only_the_default_image_runs() -> None:
    defaults = JobDefaults(image="registry.example/job:1", spark_version="4.0.1")
    assert image_allowed("registry.example/job:1", defaults)
    assert not image_allowed("registry.example/job:2", defaults)
    spec = {**MINIMAL_SPEC, "spark": {"image": "registry.example/job:2"}}
    with pytest.raises(ImageNotAllowedError):
        render(spec, defaults=defaults)


def test_operator_defaults_are_checked() -> None:
    with pytest.raises(ValueError, match="image"):
        JobDefaults(image="", spark_version="4.0.1")
    with pytest.raises(ValueError, match="image_pull_policy"):
        JobDefaults(image="x", spark_version="4.0.1", image_pull_policy="Sometimes")


@needs_the_crd
def test_a_spec_of_table_and_buckets_alone_renders_too() -> None:
    # Everything else is the models' defaults.
    table_spec = parse_spec({"table": MINIMAL_SPEC["table"], "buckets": MINIMAL_SPEC["buckets"]})
    manifest = render(MINIMAL_SPEC, table_spec=table_spec)
    assert_valid(manifest)

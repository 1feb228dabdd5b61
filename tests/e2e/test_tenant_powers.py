"""What a table's author can make the operator do, on the real control plane after a real helm install.

The author is a ServiceAccount that may write HudiBucketTables in its namespace but not create pods. Each
setting that would get it pods the cluster's RBAC does not allow (the node's filesystem, any Secret, code
from anywhere, a JVM agent, another ServiceAccount, ...) is refused at admission by the CRD's CEL rules,
or stalls its table with one event, and no SparkApplication is created for it: read from the API server.
A tuning setting reaches the SparkApplication; `helm upgrade` with a wider allow-list lets the settings
the admins added through. No job runs here (no Spark Operator stand-in): the SparkApplication the operator
creates is what is checked. The tests run in order: each leaves the tables as the next one expects them.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from control_plane import ControlPlane
from harness import API_GROUP, API_VERSION, PLURAL, Cluster, OperatorProcess, operator_in_pod, until

RELEASE = "hudi-bucket-operator-policy"  # holds the chart's name: the release's full name
RELEASE_NS = "hudi-bucket-operator-policy"
LAKE = "policy-lake"
AUTHOR = "table-author"
RESYNC = 2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chart_values(**jobs: Any) -> dict[str, Any]:
    return {
        "watch": {"namespaces": [LAKE]},
        "resyncSeconds": RESYNC,
        "metrics": {"port": free_port()},
        "health": {"port": free_port()},
        "jobs": {"image": {"tag": "e2e"}, **jobs},
    }


def spec(name: str, spark: dict[str, Any]) -> dict[str, Any]:
    """A table nothing will read (no job runs here), with this spec.spark."""
    return {
        "table": {"uri": f"s3a://lake/warehouse/{name}"},
        "buckets": {"default": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
        "spark": spark,
    }


@dataclass
class World:
    cluster: Cluster
    operator: OperatorProcess
    author: client.CustomObjectsApi
    work: Path

    def create_as_author(self, name: str, spark: dict[str, Any]) -> dict[str, Any]:
        body = {
            "apiVersion": f"{API_GROUP}/{API_VERSION}",
            "kind": "HudiBucketTable",
            "metadata": {"name": name, "namespace": LAKE},
            "spec": spec(name, spark),
        }
        return self.author.create_namespaced_custom_object(API_GROUP, API_VERSION, LAKE, PLURAL, body)

    def restart_operator(self) -> None:
        self.operator.stop()
        self.operator = operator_in_pod(self.cluster, RELEASE_NS, RELEASE, self.work)


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
    return control_plane.api_client_for_token(control_plane.token_for(LAKE, AUTHOR))


@pytest.fixture(scope="module")
def world(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    work = tmp_path_factory.mktemp("e2e-policy")
    cluster = Cluster(control_plane)
    cluster.install_crds()
    cluster.kubectl("create", "namespace", LAKE)
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


def test_the_author_may_write_tables_but_not_create_pods(world: World) -> None:
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="escape"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
    )
    with pytest.raises(client.ApiException) as refused:
        client.CoreV1Api(world.author.api_client).create_namespaced_pod(LAKE, pod)
    assert refused.value.status == 403


# What no admin may allow (the operator sets it for every job), and an image no allowlist admits: the API
# server refuses each table, saying why.
AT_ADMISSION = {
    "spark.kubernetes.container.image": "spec.spark.sparkConf must not set what the operator sets",
    "spark.kubernetes.namespace": "spec.spark.sparkConf must not set what the operator sets",
    "spark.kubernetes.authenticate.driver.serviceAccountName": "spec.spark.sparkConf must not set",
    "spark.kubernetes.driver.podTemplateFile": "spec.spark.sparkConf must not set what the operator sets",
    "spark.kubernetes.driver.pod.name": "spec.spark.sparkConf must not set what the operator sets",
    "spark.master": "spec.spark.sparkConf must not set what the operator sets",
    # `--conf spark.master=k8s://...=x` to spark-submit, whatever prefix the admins allow
    "spark.master=k8s://https://evil.example": "spec.spark.sparkConf's keys must be settings' names",
}
MALFORMED_IMAGES = [
    "registry.example/hudi-job/../evil:1",
    "Registry.example/hudi-job:1",
    "registr\u0443.example/j:1",
]


def test_what_no_admin_may_allow_is_refused_at_admission(world: World) -> None:
    attempts = [({"sparkConf": {key: "x"}}, why) for key, why in AT_ADMISSION.items()]
    attempts += [
        ({"image": image}, "spec.spark.image must be an image reference") for image in MALFORMED_IMAGES
    ]
    attempts += [({"hadoopConf": {"fs.s3a.endpoint=http://evil.example": "x"}}, "hadoopConf's keys must be")]
    for index, (spark, why) in enumerate(attempts):
        with pytest.raises(client.ApiException) as refused:
            world.create_as_author(f"owned-{index}", spark)
        assert refused.value.status == 422, spark
        assert why in json.loads(refused.value.body)["message"], spark
    tables = world.cluster.custom.list_namespaced_custom_object(API_GROUP, API_VERSION, LAKE, PLURAL)
    assert tables["items"] == []


# (table, spec.spark, the event's reason, what its message says): each admitted, each refused by the
# operator before a job exists.
STALLED = [
    ("host-path-mount", {"sparkConf": {"spark.kubernetes.driver.volumes.hostPath.node.mount.path": "/host"}},
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driver.volumes.hostPath.node.mount.path'] mounts volumes"),
    ("host-path-options", {"sparkConf": {"spark.kubernetes.driver.volumes.hostPath.node.options.path": "/"}},
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driver.volumes.hostPath.node.options.path'] mounts volumes"),
    ("any-secret", {"sparkConf": {"spark.kubernetes.driver.secrets.cluster-admin-token": "/var/run/t"}},
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driver.secrets.cluster-admin-token'] mounts a Secret"),
    ("jars", {"sparkConf": {"spark.jars": "https://evil.example/miner.jar"}},
     "SettingNotAllowed", "sparkConf['spark.jars'] loads code into the job"),
    ("packages", {"sparkConf": {"spark.jars.packages": "com.evil:miner:1.0"}},
     "SettingNotAllowed", "sparkConf['spark.jars.packages'] loads code into the job"),
    ("java-agent", {"sparkConf": {"spark.driver.extraJavaOptions": "-javaagent:/tmp/a.jar"}},
     "SettingNotAllowed", "sparkConf['spark.driver.extraJavaOptions'] passes options to the job's JVMs"),
    ("driver-env", {"sparkConf": {"spark.kubernetes.driverEnv.AWS_ROLE_ARN": "arn:aws:iam::1:role/admin"}},
     "SettingNotAllowed", "sparkConf['spark.kubernetes.driverEnv.AWS_ROLE_ARN'] sets environment variables"),
    ("node-selector", {"sparkConf": {"spark.kubernetes.node.selector.kubernetes.io/hostname": "master-0"}},
     "SettingNotAllowed", "sparkConf['spark.kubernetes.node.selector.kubernetes.io/hostname'] chooses the nodes"),
    ("endpoint", {"hadoopConf": {"fs.s3a.endpoint": "http://evil.example"}},
     "SettingNotAllowed", "hadoopConf['fs.s3a.endpoint'] points S3A at another server"),
    ("endpoint-in-spark-conf", {"sparkConf": {"spark.hadoop.fs.s3a.endpoint": "http://evil.example"}},
     "SettingNotAllowed", "sparkConf['spark.hadoop.fs.s3a.endpoint'] points S3A at another server"),
    ("credentials-provider", {"hadoopConf": {"fs.s3a.aws.credentials.provider": "com.evil.Provider"}},
     "SettingNotAllowed", "hadoopConf['fs.s3a.aws.credentials.provider'] chooses whose credentials"),
    ("inline-secret", {"hadoopConf": {"fs.s3a.secret.key": "not-really"}},
     "SettingNotAllowed", "hadoopConf['fs.s3a.secret.key'] holds a credential"),
    ("cluster-admin", {"serviceAccount": "cluster-admin"},
     "ServiceAccountNotAllowed", "spec.spark.serviceAccount 'cluster-admin' is not allowed"),
    ("lake-spark", {"serviceAccount": "lake-spark"},
     "ServiceAccountNotAllowed", "spec.spark.serviceAccount 'lake-spark' is not allowed"),
    ("image", {"image": "docker.io/someone/miner:latest"},
     "ImageNotAllowed", "spec.spark.image 'docker.io/someone/miner:latest' is not allowed"),
]  # fmt: skip
# What the admins allow in the last test, and the tables it lets through.
WIDER = {"allowedHadoopConf": ["fs.s3a.endpoint"], "allowedServiceAccounts": ["lake-spark"]}
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
    for name, spark, _, _ in STALLED:
        world.create_as_author(name, spark)
    for name, _, reason, says in STALLED:
        held, _ = stalled_once(world, name)
        assert (held["reason"], says in held["message"]) == (reason, True), held
    time.sleep(3 * RESYNC)  # three more passes over every table: still one event each
    for name, _, reason, says in STALLED:
        [event] = world.cluster.events(LAKE, name)
        assert event.startswith(f"{reason}: "), event
        assert says in event
        assert "evil.example" not in event  # the keys are named, not their values
        assert "not-really" not in event
    assert world.cluster.jobs(LAKE) == []  # no SparkApplication at all, as the API server lists them
    assert world.cluster.config_maps(LAKE) == {}
    world.operator.assert_alive()


def test_an_allowed_tuning_setting_reaches_the_spark_application(world: World) -> None:
    tuning = {
        "sparkConf": {"spark.sql.shuffle.partitions": "7", "spark.sql.adaptive.enabled": "false"},
        "hadoopConf": {"fs.s3a.connection.maximum": "32", "fs.s3a.endpoint.region": "eu-west-1"},
    }
    world.create_as_author("tuned", tuning)
    [app] = until(lambda: world.cluster.jobs(LAKE, "tuned"), 60, "the tuned table's plan job")
    body = app["spec"]
    assert body["sparkConf"].items() >= tuning["sparkConf"].items()
    assert body["hadoopConf"] == tuning["hadoopConf"]
    assert body["driver"]["serviceAccount"] == body["executor"]["serviceAccount"] == "hudi-bucket-jobs"
    assert body["image"] == "hudi-bucket-operator-job:e2e"
    assert world.cluster.phase_is(LAKE, "tuned", "Planning")["phase"] == "Planning"  # held by no one: pending
    assert {a["metadata"]["labels"]["hudi.bucketops.io/table"] for a in world.cluster.jobs(LAKE)} == {"tuned"}


def test_helm_upgrade_with_a_wider_allow_list_lets_the_added_settings_through(world: World) -> None:
    world.cluster.install_chart(RELEASE, RELEASE_NS, chart_values(**WIDER), upgrade=True)
    _, container = world.cluster.deployment_container(RELEASE_NS, RELEASE)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["HBO_ALLOWED_HADOOP_CONF"], env["HBO_ALLOWED_SERVICE_ACCOUNTS"]) == (
        "fs.s3a.endpoint",
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
    assert set(apps) == LET_THROUGH | {"tuned"}
    assert {a["metadata"]["labels"]["hudi.bucketops.io/table"] for a in world.cluster.jobs(LAKE)} == set(apps)
    for name, _, reason, _ in STALLED:
        if name in LET_THROUGH:
            continue
        # The rest still stalled, each told once, the restart notwithstanding; but the account refused
        # is told again, as its message now names the account the admins added.
        assert world.cluster.status(LAKE, name)["phase"] == "Stalled"
        told = world.cluster.events(LAKE, name)
        assert [e.split(":")[0] for e in told] == [reason] * (2 if name == "cluster-admin" else 1), told
    assert any(
        "'hudi-bucket-jobs' and ['lake-spark']" in e for e in world.cluster.events(LAKE, "cluster-admin")
    )
    world.operator.assert_alive()

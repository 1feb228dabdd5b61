"""The operator, for real: Kopf runs our handlers against an HTTP Kubernetes API (kmock's emulator).

Spark Operator is played by the test: it marks SparkApplications COMPLETED or FAILED and fills the
report ConfigMap the way the job does, over the same HTTP API.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import kopf
import pytest
import pytest_asyncio

import k8s_schema
from hbt_resources import APPS, CONFIG_MAPS, SPEC, TABLES, VERBS
from hudi_bucket.core.planning import PartitionLayout, make_plan
from hudi_bucket.core.rules import BucketRules, PythonRegexMatcher
from hudi_bucket_operator import handlers, naming
from hudi_bucket_operator.spec import PAUSED, RETRY, UNMANAGED
from paths import K8S_FIXTURES

pytestmark = pytest.mark.asyncio

TABLE_PATH = "/apis/hudi.bucketops.io/v1alpha1/namespaces/lake/hudibuckettables/orders"


def spark_application_errors(app: dict[str, Any]) -> list[str]:
    validator = k8s_schema.crd_validator(
        K8S_FIXTURES / "sparkoperator.k8s.io_sparkapplications.yaml", "v1beta2"
    )
    return k8s_schema.schema_errors(validator, app)


def the_plan(expressions: str = "11-11,16") -> dict[str, Any]:
    """A real plan (made by the real planner) for a table of two days, each in 4 buckets."""
    layouts = [
        PartitionLayout(
            day, tuple(f"{b:08d}-aaaa-bbbb-cccc-dddddddddddd-0" for b in range(4)), rows=1000, bytes=4096
        )
        for day in ("day=2025-11-10", "day=2025-11-11")
    ]
    plan = make_plan(
        layouts,
        None,
        BucketRules.parse(expressions, 4),
        PythonRegexMatcher(),
        current_buckets=4,
        base_instant="1",
    )
    return plan.to_dict()


def report(
    command: str, result: dict[str, Any], outcome: str = "Succeeded", error: dict | None = None
) -> str:
    doc = {
        "version": 1,
        "command": command,
        "table": SPEC["table"]["uri"],
        "outcome": outcome,
        "message": f"{command} {outcome.lower()}",
        "started": "2026-11-21T10:00:00Z",
        "finished": "2026-11-21T10:01:00Z",
        "result": result,
    }
    if error:
        doc["error"] = error
    return json.dumps(doc)


def plain(obj: Any) -> dict[str, Any]:
    """kmock's stored object as plain JSON data."""
    return json.loads(json.dumps(obj.raw))


@dataclasses.dataclass
class Cluster:
    """The API server (kmock), the operator (Kopf, restartable) and the test playing Spark Operator."""

    kmock: Any
    http: aiohttp.ClientSession
    stop: asyncio.Event | None = None
    task: asyncio.Task | None = None

    async def start_operator(self) -> None:
        self.stop = asyncio.Event()
        settings = kopf.OperatorSettings()
        settings.queueing.exit_timeout = 0.1  # tests stop and restart the operator: do it promptly
        settings.watching.reconnect_backoff = 0.1
        operator = kopf.operator(clusterwide=True, standalone=True, stop_flag=self.stop, settings=settings)
        self.task = asyncio.create_task(operator)

    async def stop_operator(self) -> None:
        assert self.stop is not None
        assert self.task is not None
        self.stop.set()
        with contextlib.suppress(asyncio.CancelledError):  # how Kopf ends its root task on a stop flag
            await asyncio.wait_for(self.task, timeout=20)

    async def call(self, method: str, path: str, body: dict | None = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
        async with self.http.request(method, path, json=body, headers=headers) as response:
            assert response.status < 400, await response.text()
            return await response.json(content_type=None) or {}

    async def create_table(
        self, spec: dict[str, Any] = SPEC, annotations: dict[str, str] | None = None
    ) -> None:
        body = {
            "apiVersion": "hudi.bucketops.io/v1alpha1",
            "kind": "HudiBucketTable",
            "metadata": {
                "name": "orders",
                "namespace": "lake",
                "uid": "7c0b7d53-5bd1-4b8e-9f1a-3d2c1b0a9f8e",
                "generation": 1,
                "resourceVersion": "1",
                "labels": {"argocd.argoproj.io/instance": "lake"},
                "annotations": annotations or {},
            },
            "spec": spec,
        }
        await self.call("POST", "/apis/hudi.bucketops.io/v1alpha1/namespaces/lake/hudibuckettables", body)

    async def edit_table(self, spec: dict | None = None, annotations: dict | None = None) -> None:
        """As `kubectl apply` would: a spec change bumps the generation (the API server's job)."""
        current = self.table()
        patch: dict[str, Any] = {"metadata": {}}
        if spec is not None:
            patch["spec"] = spec
            patch["metadata"]["generation"] = current["metadata"]["generation"] + 1
        if annotations is not None:
            patch["metadata"]["annotations"] = annotations
        await self.call("PATCH", TABLE_PATH, patch)

    def table(self) -> dict[str, Any]:
        return plain(self.kmock.objects[TABLES, "lake", "orders"])

    def status(self) -> dict[str, Any]:
        return dict(self.table().get("status") or {})

    def apps(self) -> list[dict[str, Any]]:
        return [
            plain(obj)
            for (resource, _, _), obj in self.kmock.objects.items()
            if resource.plural == "sparkapplications" and not obj.deleted
        ]

    async def finish_job(self, name: str, state: str, report_json: str | None, error: str = "") -> None:
        """What Spark Operator and the job do: the job fills its report, the app reaches its state.

        Written into kmock's store directly (the operator notices on its next poll): kmock stops
        answering writes over HTTP once a watch stream was cancelled mid-way, as a restart does.
        """
        if report_json is not None:
            self.kmock.objects[CONFIG_MAPS, "lake", name].patch({"data": {"report.json": report_json}})
        app_state = {"state": state, **({"errorMessage": error} if error else {})}
        self.kmock.objects[APPS, "lake", name].patch({"status": {"applicationState": app_state}})

    async def until(self, check: Callable[[], Any], timeout: float = 15) -> Any:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = check()
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out; status={json.dumps(self.status(), default=str)[:2000]}")
            await asyncio.sleep(0.05)

    async def job(self, kind: str, count: int = 1) -> dict[str, Any]:
        """Wait for the count-th job of this kind and return it."""
        apps = await self.until(
            lambda: [a for a in self.apps() if a["metadata"]["labels"][naming.JOB_KIND_LABEL] == kind][
                count - 1 :
            ]
        )
        return apps[0]

    def phase(self) -> str:
        return self.status().get("phase", "")


@pytest_asyncio.fixture
async def cluster(kmock: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Cluster]:
    kmock.resources[TABLES] = kmock.ResourceInfo(
        kind="HudiBucketTable", namespaced=True, verbs=VERBS, subresources={"status"}
    )
    kmock.resources[APPS] = kmock.ResourceInfo(kind="SparkApplication", namespaced=True, verbs=VERBS)
    kmock.resources[CONFIG_MAPS] = kmock.ResourceInfo(kind="ConfigMap", namespaced=True, verbs=VERBS)
    kmock.resources["v1/events"] = kmock.ResourceInfo(kind="Event", namespaced=True, verbs={"create"})
    kmock.resources["v1/namespaces"] = kmock.ResourceInfo(
        kind="Namespace", namespaced=False, verbs={"list", "watch"}
    )
    server = str(kmock.url).rstrip("/")
    monkeypatch.setattr(
        handlers, "CONFIG", dataclasses.replace(handlers.CONFIG, kube_server=server, metrics_port=0)
    )
    async with aiohttp.ClientSession(base_url=server) as http:
        world = Cluster(kmock, http)
        await world.start_operator()
        yield world
        if world.task is not None and not world.task.done():
            await world.stop_operator()


async def test_plan_approve_apply_ready(cluster: Cluster) -> None:
    await cluster.create_table()

    plan_app = await cluster.job("plan")
    assert spark_application_errors(plan_app) == []
    assert "argocd.argoproj.io/instance" not in plan_app["metadata"]["labels"]  # Argo CD would prune it
    assert plan_app["metadata"]["ownerReferences"][0]["kind"] == "HudiBucketTable"
    assert plan_app["spec"]["arguments"][:3] == ["plan", "--table", SPEC["table"]["uri"]]
    await cluster.until(lambda: cluster.phase() == "Planning")

    plan = the_plan()
    await cluster.finish_job(plan_app["metadata"]["name"], "COMPLETED", report("plan", {"plan": plan}))
    await cluster.until(lambda: cluster.phase() == "AwaitingApproval")
    status = cluster.status()
    assert status["plan"]["id"] == plan["id"]
    assert status["plan"]["partitions"] == 1
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False"
    assert plan["id"] in ready["message"]
    assert [a["metadata"]["labels"][naming.JOB_KIND_LABEL] for a in cluster.apps()] == [
        "plan"
    ]  # waits for approval

    await cluster.edit_table(spec={**SPEC, "apply": {"policy": "Manual", "approvedPlan": plan["id"]}})
    # A new generation plans again; the table did not change, so the plan (and its id) is the same.
    second_plan = await cluster.job("plan", count=2)
    await cluster.finish_job(second_plan["metadata"]["name"], "COMPLETED", report("plan", {"plan": plan}))
    apply_app = await cluster.job("apply")
    assert spark_application_errors(apply_app) == []
    assert "--approved-plan" in apply_app["spec"]["arguments"]
    assert plan["id"] in apply_app["spec"]["arguments"]

    config = {"instant": "20261121100100000", "expressions": "11-11,16", "default": 4}
    applied = {
        "instant": config["instant"],
        "plan": plan,
        "rowsWritten": 1000,
        "seconds": 42.0,
        "config": config,
    }
    await cluster.finish_job(apply_app["metadata"]["name"], "COMPLETED", report("apply", applied))
    await cluster.until(lambda: cluster.phase() == "Ready")
    status = cluster.status()
    assert status["config"] == config
    assert status["observedGeneration"] == 2
    assert status["history"][0]["instant"] == config["instant"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "Ready": "True",
        "Reconciling": "False",
        "Stalled": "False",
    }


async def test_automatic_policy_applies_without_approval(cluster: Cluster) -> None:
    await cluster.create_table({**SPEC, "apply": {"policy": "Automatic"}})
    plan_app = await cluster.job("plan")
    await cluster.finish_job(plan_app["metadata"]["name"], "COMPLETED", report("plan", {"plan": the_plan()}))
    apply_app = await cluster.job("apply")
    await cluster.finish_job(
        apply_app["metadata"]["name"], "COMPLETED", report("apply", {"instant": "2", "plan": the_plan()})
    )
    await cluster.until(lambda: cluster.phase() == "Ready")


async def test_a_failed_job_stalls_until_the_spec_or_the_retry_annotation_changes(cluster: Cluster) -> None:
    await cluster.create_table()
    plan_app = await cluster.job("plan")
    error = {"type": "PreflightError", "message": "the table is MERGE_ON_READ", "hint": "compact it first"}
    await cluster.finish_job(
        plan_app["metadata"]["name"],
        "FAILED",
        report("plan", {}, "Failed", error),
        error="driver exited with 1",
    )
    await cluster.until(lambda: cluster.phase() == "Stalled")
    stalled = next(c for c in cluster.status()["conditions"] if c["type"] == "Stalled")
    assert stalled["reason"] == "JobFailed"
    assert "MERGE_ON_READ" in stalled["message"]
    assert "compact it first" in stalled["message"]

    await asyncio.sleep(1.5)  # several poll intervals: an error stays until something changes
    assert len(cluster.apps()) == 1
    assert cluster.phase() == "Stalled"

    await cluster.edit_table(annotations={RETRY: "1"})
    await cluster.job("plan", count=2)
    await cluster.until(lambda: cluster.phase() == "Planning")


async def test_the_operator_resumes_tracking_after_a_restart(cluster: Cluster) -> None:
    await cluster.create_table()
    plan_app = await cluster.job("plan")
    await cluster.stop_operator()

    await cluster.finish_job(plan_app["metadata"]["name"], "COMPLETED", report("plan", {"plan": the_plan()}))
    await cluster.start_operator()
    await cluster.until(lambda: cluster.phase() == "AwaitingApproval")
    assert len(cluster.apps()) == 1  # the running job was found again, not started twice


async def test_a_child_left_by_a_crash_is_adopted_on_409(cluster: Cluster) -> None:
    """A crash between creating the report ConfigMap and the SparkApplication leaves the ConfigMap:
    the next create gets 409, which means adopt it (and never edit it), then carry on."""
    await cluster.stop_operator()
    await cluster.create_table()
    uid = cluster.table()["metadata"]["uid"]
    name = naming.job_name("orders", uid, "plan", 1)
    leftover = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "lake",
            "labels": naming.child_labels("orders", uid, "plan", 1),
        },
        "data": {"left": "by the crashed run"},
    }
    await cluster.call("POST", "/api/v1/namespaces/lake/configmaps", leftover)
    await cluster.start_operator()

    app = await cluster.job("plan")
    assert app["metadata"]["name"] == name
    conflicts = [r for r in cluster.kmock if r.method == "POST" and str(r.url).endswith("/configmaps")]
    assert len(conflicts) == 2  # the leftover's, and ours that came back 409
    assert plain(cluster.kmock.objects[CONFIG_MAPS, "lake", name])["data"] == {"left": "by the crashed run"}
    await cluster.finish_job(name, "COMPLETED", report("plan", {"plan": the_plan()}))
    await cluster.until(lambda: cluster.phase() == "AwaitingApproval")


async def test_a_paused_table_starts_no_job_until_resumed(cluster: Cluster) -> None:
    await cluster.create_table(annotations={PAUSED: "true"})
    await cluster.until(lambda: cluster.phase() == "Paused")
    await asyncio.sleep(1)
    assert cluster.apps() == []
    await cluster.edit_table(annotations={PAUSED: "false"})
    await cluster.job("plan")


async def test_an_unmanaged_table_is_left_alone(cluster: Cluster) -> None:
    await cluster.create_table(annotations={UNMANAGED: "true"})
    await asyncio.sleep(1.5)
    assert cluster.apps() == []
    assert cluster.status() == {}


async def test_an_invalid_spec_is_stalled_and_starts_no_job(cluster: Cluster) -> None:
    await cluster.create_table(
        {"table": {"uri": "s3a://x"}, "buckets": {"default": 0, "rules": [{"pattern": "a,b", "buckets": 4}]}}
    )
    await cluster.until(lambda: cluster.phase() == "Stalled")
    stalled = next(c for c in cluster.status()["conditions"] if c["type"] == "Stalled")
    assert stalled["reason"] == "InvalidSpec"
    assert "default" in stalled["message"]
    assert "','" in stalled["message"] or "comma" in stalled["message"]
    await asyncio.sleep(1)
    assert cluster.apps() == []


async def test_deleting_the_table_resource_deletes_nothing_else(cluster: Cluster) -> None:
    await cluster.create_table()
    await cluster.job("plan")
    requests_before = len(list(cluster.kmock))
    await cluster.call("DELETE", TABLE_PATH)
    await cluster.until(lambda: cluster.kmock.objects[TABLES, "lake", "orders"].deleted)
    await asyncio.sleep(1)
    later = list(cluster.kmock)[requests_before:]
    assert [r for r in later if r.method == "DELETE" and "hudibuckettables" not in str(r.url)] == []
    assert [r for r in later if r.method == "POST" and "sparkapplications" in str(r.url)] == []
    assert len(cluster.apps()) == 1  # children go by owner reference (the cluster's GC), not by us

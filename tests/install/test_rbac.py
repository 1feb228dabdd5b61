"""The chart's RBAC grants the operator exactly the API calls it makes, and the Spark jobs what they need.

``OPERATOR_CALLS`` is the list, kept by hand: every (API group, resource, verb) the operator uses. One
test runs the real operator (Kopf and our handlers) against kmock's API emulator through a table's
plan, its recording and the table's deletion, and checks that the calls it makes are that list. The
others check the chart's rules against the list both ways: nothing missing, nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any

import aiohttp
import helm_chart
import kopf
import pytest
from helm_chart import NAMESPACE, VALUE_SETS, find, one, render

from hudi_bucket import report_sink
from hudi_bucket_operator import handlers, kube
from hudi_bucket_operator import render as job_render
from hudi_bucket_operator.spec import API_VERSION, GROUP, KIND, PLURAL

Permission = tuple[str, str, str]  # (API group, resource[/subresource], verb)

TABLES, STATUS, FINALIZERS = PLURAL, f"{PLURAL}/status", f"{PLURAL}/finalizers"
OPERATOR_CALLS: frozenset[Permission] = frozenset(
    {
        # Kopf watches the tables: a list, then a watch from its resourceVersion.
        (GROUP, TABLES, "list"),
        (GROUP, TABLES, "watch"),
        # Kopf patches a table for its finalizer (the poll timer requires one) and its annotations.
        (GROUP, TABLES, "patch"),
        # Kopf patches the status through the status subresource (the CRD declares it).
        (GROUP, STATUS, "patch"),
        # Kopf posts events (handler logs at INFO and above, and kopf.event in the handlers).
        ("", "events", "create"),
        # kube.KubeClient for SparkOperatorBackend: jobs are created, then listed by label ...
        ("sparkoperator.k8s.io", "sparkapplications", "create"),
        ("sparkoperator.k8s.io", "sparkapplications", "list"),
        # ... and their reports are ConfigMaps: created empty, read once the job ends, then deleted.
        ("", "configmaps", "create"),
        ("", "configmaps", "get"),
        ("", "configmaps", "delete"),
    }
)
# Not a call: creating a child whose ownerReference has blockOwnerDeletion is allowed only to who may
# update the owner's finalizers, where the OwnerReferencesPermissionEnforcement admission plugin runs.
OWNER_REFERENCE_PERMISSION: Permission = (GROUP, FINALIZERS, "update")
# Kopf watching all namespaces also watches CRDs, to notice ours changing without a restart. Watching
# a list of namespaces it would also list namespaces; neither is granted then (that would take a
# ClusterRole): Kopf falls back to the named namespaces and to the CRDs it found at start-up.
CLUSTER_WIDE_CALLS: frozenset[Permission] = frozenset(
    {
        ("apiextensions.k8s.io", "customresourcedefinitions", "list"),
        ("apiextensions.k8s.io", "customresourcedefinitions", "watch"),
    }
)
# What a Spark driver does in its namespace (Spark on Kubernetes): runs its executors as pods, with a
# headless service, configmaps for their configuration and, if asked, volume claims; removes them.
SPARK_DRIVER_NEEDS: frozenset[Permission] = frozenset(
    ("", resource, verb)
    for resource in ("pods", "services", "configmaps", "persistentvolumeclaims")
    for verb in ("get", "list", "watch", "create", "delete", "deletecollection")
)
# What report_sink's own error hint promises the job's Role grants.
REPORT_NEEDS: frozenset[Permission] = frozenset(
    ("", "configmaps", verb) for verb in ("get", "patch", "create")
)


def granted(rules: Iterable[Mapping[str, Any]]) -> set[Permission]:
    """Every (group, resource, verb) that RBAC rules allow; wildcards are refused, not expanded."""
    out = set()
    for rule in rules:
        assert "*" not in rule["verbs"], f"wildcard in {rule}"
        assert "*" not in rule["resources"], f"wildcard in {rule}"
        assert not rule.get("resourceNames")
        assert not rule.get("nonResourceURLs")
        out |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    return out


def operator_roles(objs: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    name = helm_chart.RELEASE
    return find(objs, "ClusterRole", name) + find(objs, "Role", name)


# --- what the operator really calls ------------------------------------------------------------------

TABLES_KEY = f"{API_VERSION}/{PLURAL}"
APPS_KEY = "sparkoperator.k8s.io/v1beta2/sparkapplications"
CONFIG_MAPS_KEY = "v1/configmaps"
TABLE_COLLECTION = f"/apis/{API_VERSION}/namespaces/lake/{PLURAL}"
DRIVER_HEADER = "X-Test-Driver"  # marks the test's own requests, which are not the operator's
VERBS = {"list", "watch", "get", "patch", "create", "delete"}


def _permission(request: Any) -> Permission | None:
    """The RBAC permission a request needs, or None for discovery (allowed to every user)."""
    if request.resource is None or request.resource.plural is None:
        return None
    resource = request.resource.plural + (f"/{request.subresource}" if request.subresource else "")
    method = str(request.method.value).upper()
    if method == "GET":
        verb = "get" if request.name else "watch" if request.params.get("watch") == "true" else "list"
    elif method == "DELETE":
        verb = "delete" if request.name else "deletecollection"
    else:
        verb = {"POST": "create", "PATCH": "patch", "PUT": "update"}[method]
    return (request.resource.group or "", resource, verb)


async def _until(check: Any, timeout: float = 20) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := check()):
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)
    return value


@pytest.mark.asyncio
async def test_the_operator_makes_exactly_the_listed_calls(
    kmock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kmock.resources[TABLES_KEY] = kmock.ResourceInfo(
        kind=KIND, namespaced=True, verbs=VERBS, subresources={"status"}
    )
    kmock.resources[APPS_KEY] = kmock.ResourceInfo(kind="SparkApplication", namespaced=True, verbs=VERBS)
    kmock.resources[CONFIG_MAPS_KEY] = kmock.ResourceInfo(kind="ConfigMap", namespaced=True, verbs=VERBS)
    kmock.resources["v1/events"] = kmock.ResourceInfo(kind="Event", namespaced=True, verbs={"create"})
    # As in any cluster, discovery shows namespaces and CRDs (Kopf waits to see both before it starts).
    kmock.resources["v1/namespaces"] = kmock.ResourceInfo(
        kind="Namespace", namespaced=False, verbs={"list", "watch"}
    )
    kmock.resources["apiextensions.k8s.io/v1/customresourcedefinitions"] = kmock.ResourceInfo(
        kind="CustomResourceDefinition", namespaced=False, verbs={"list", "watch"}
    )
    server = str(kmock.url).rstrip("/")
    monkeypatch.setattr(
        handlers, "CONFIG", dataclasses.replace(handlers.CONFIG, kube_server=server, metrics_port=0)
    )
    settings = kopf.OperatorSettings()
    settings.queueing.exit_timeout = 0.1
    settings.watching.reconnect_backoff = 0.1
    stop = asyncio.Event()
    # As `hudi-bucket-operator run` starts it when watching every namespace.
    task = asyncio.create_task(
        kopf.operator(clusterwide=True, standalone=True, stop_flag=stop, settings=settings)
    )
    table = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": "orders",
            "namespace": "lake",
            "uid": "3b1f6c52-0d8e-4c1e-9a57-1f2e3d4c5b6a",
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": {
            "table": {"uri": "s3a://lake/warehouse/orders"},
            "buckets": {"default": 4, "currentBuckets": 4, "rules": [{"pattern": "11-11", "buckets": 16}]},
        },
    }
    try:
        async with aiohttp.ClientSession(base_url=server, headers={DRIVER_HEADER: "1"}) as http:
            async with http.post(TABLE_COLLECTION, json=table) as response:
                assert response.status < 400
            apps = await _until(
                lambda: [o for (key, _, _), o in kmock.objects.items() if key.plural == "sparkapplications"]
            )
            name = apps[0].raw["metadata"]["name"]
            # Playing Spark Operator and the job: the plan fails, with its report (written to the store).
            failed = {
                "version": 1,
                "command": "plan",
                "table": "s3a://lake/warehouse/orders",
                "outcome": "Failed",
                "message": "plan failed",
                "started": "t0",
                "finished": "t1",
                "result": {},
            }
            kmock.objects[CONFIG_MAPS_KEY, "lake", name].patch({"data": {"report.json": json.dumps(failed)}})
            kmock.objects[APPS_KEY, "lake", name].patch({"status": {"applicationState": {"state": "FAILED"}}})
            # Recorded (Stalled), then its report is forgotten (deleted).
            await _until(lambda: kmock.objects[CONFIG_MAPS_KEY, "lake", name].deleted)
            async with http.delete(f"{TABLE_COLLECTION}/orders") as response:
                assert response.status < 400
            await _until(lambda: kmock.objects[TABLES_KEY, "lake", "orders"].deleted)
    finally:
        stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=20)

    made = {_permission(r) for r in kmock if DRIVER_HEADER not in r.headers} - {None}
    assert made == OPERATOR_CALLS | CLUSTER_WIDE_CALLS


def test_children_name_their_table_as_owner_blocking_its_deletion() -> None:
    reference = job_render.owner_reference({"metadata": {"name": "orders", "uid": "u"}})
    assert reference["blockOwnerDeletion"] is True  # hence OWNER_REFERENCE_PERMISSION


def test_the_operators_client_knows_only_spark_applications_and_config_maps() -> None:
    # A new kind in kube.py is a new call: add it to OPERATOR_CALLS (and to the chart's rules).
    resources = {value for value in vars(kube).values() if isinstance(value, kube.Resource)}
    assert resources == {kube.SPARK_APPLICATIONS, kube.CONFIG_MAPS}
    assert {(r.group, r.plural) for r in resources} == {
        (group, resource)
        for group, resource, _ in OPERATOR_CALLS
        if resource in ("sparkapplications", "configmaps")
    }


# --- the operator's rules ------------------------------------------------------------------------------


def test_watching_every_namespace_grants_the_calls_cluster_wide_and_nothing_more() -> None:
    objs = render({})
    (role,) = operator_roles(objs)
    assert role["kind"] == "ClusterRole"
    rules = granted(role["rules"])
    expected = OPERATOR_CALLS | CLUSTER_WIDE_CALLS | {OWNER_REFERENCE_PERMISSION}
    assert expected - rules == set(), "missing"
    assert rules - expected == set(), "superfluous"
    binding = one(objs, "ClusterRoleBinding", helm_chart.RELEASE)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": helm_chart.RELEASE, "namespace": NAMESPACE}
    ]


def test_watching_named_namespaces_grants_the_calls_in_each_and_nothing_cluster_scoped() -> None:
    objs = render(VALUE_SETS["two-namespaces"])
    roles = operator_roles(objs)
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["lake", "sales"]
    expected = OPERATOR_CALLS | {OWNER_REFERENCE_PERMISSION}
    for role in roles:
        assert role["kind"] == "Role"
        rules = granted(role["rules"])
        assert expected - rules == set(), "missing"
        assert rules - expected == set(), "superfluous"
        (binding,) = [
            b
            for b in find(objs, "RoleBinding", helm_chart.RELEASE)
            if b["metadata"]["namespace"] == role["metadata"]["namespace"]
        ]
        assert binding["roleRef"]["kind"] == "Role"
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": helm_chart.RELEASE, "namespace": NAMESPACE}
        ]
    assert find(objs, "ClusterRole") == find(objs, "ClusterRoleBinding") == []


def test_rbac_can_be_left_to_the_user() -> None:
    objs = render({"rbac": {"create": False}})
    assert operator_roles(objs) == []
    assert find(objs, "ClusterRoleBinding") == []


# --- the Spark jobs' service account -----------------------------------------------------------------


def job_objects(values: Mapping[str, Any]) -> dict[str, dict[str, Mapping[str, Any]]]:
    """{namespace: {kind: object}} of the jobs' ServiceAccount, Role and RoleBinding."""
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    name = OPERATOR_JOB_SA(values)
    for obj in render(values):
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding") and obj["metadata"]["name"] == name:
            out.setdefault(obj["metadata"]["namespace"], {})[obj["kind"]] = obj
    return out


def OPERATOR_JOB_SA(values: Mapping[str, Any]) -> str:  # noqa: N802 - reads like the setting it is
    (box,) = one(render(values), "Deployment")["spec"]["template"]["spec"]["containers"]
    return next(e["value"] for e in box["env"] if e["name"] == "HBO_JOB_SERVICE_ACCOUNT")


@pytest.mark.parametrize(
    ("values", "namespaces"),
    [
        ({}, [NAMESPACE]),
        (VALUE_SETS["two-namespaces"], ["lake", "sales"]),
        ({"jobs": {"serviceAccount": {"namespaces": ["lake"]}}}, ["lake"]),
        (VALUE_SETS["job-defaults"], ["lake", "sales"]),
    ],
    ids=["release-namespace", "watched-namespaces", "listed", "renamed"],
)
def test_jobs_service_account_is_where_tables_run_and_named_as_the_operator_says(
    values: dict[str, Any], namespaces: list[str]
) -> None:
    objs = job_objects(values)
    assert sorted(objs) == namespaces
    name = OPERATOR_JOB_SA(values)
    for namespace, kinds in objs.items():
        assert set(kinds) == {"ServiceAccount", "Role", "RoleBinding"}
        binding = kinds["RoleBinding"]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]


def test_jobs_role_covers_the_spark_driver_and_the_report() -> None:
    for kinds in job_objects({}).values():
        rules = granted(kinds["Role"]["rules"])
        assert rules >= SPARK_DRIVER_NEEDS | REPORT_NEEDS
        assert {group for group, _, _ in rules} == {""}  # nothing beyond core objects in its namespace


@pytest.mark.asyncio
@pytest.mark.parametrize("precreated", [True, False], ids=["patch", "create"])
async def test_jobs_report_needs_only_what_the_role_grants(kmock: Any, precreated: bool) -> None:
    kmock.resources[CONFIG_MAPS_KEY] = kmock.ResourceInfo(kind="ConfigMap", namespaced=True, verbs=VERBS)
    if precreated:  # as the operator does before it submits the job
        kmock.objects[CONFIG_MAPS_KEY, "lake", "orders-plan-1"] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "orders-plan-1", "namespace": "lake"},
        }
    await asyncio.to_thread(
        report_sink.write_configmap_report,
        "configmap://lake/orders-plan-1",
        b'{"outcome": "Succeeded"}',
        api_server=str(kmock.url),
        token="job-token",
        backoff=0.01,
    )
    used = {_permission(r) for r in kmock}
    assert used <= REPORT_NEEDS
    (kinds,) = job_objects({}).values()
    assert used <= granted(kinds["Role"]["rules"])


def test_no_job_service_account_when_the_user_brings_one() -> None:
    assert job_objects({"jobs": {"serviceAccount": {"create": False}}}) == {}

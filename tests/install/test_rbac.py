"""The chart's RBAC grants the operator exactly the API calls it makes, and the Spark jobs what they need.

``OPERATOR_CALLS`` is the list, kept by hand: every (API group, resource, verb) the operator uses. These
tests check the chart's rules against the list both ways (nothing missing, nothing more), for each way
the chart can be installed. The end-to-end tests (tests/e2e/test_in_a_cluster.py) show on a real API
server, from its audit log, that the operator and the jobs use exactly what the chart grants them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from hudi_bucket_operator.decide import render as job_render
from hudi_bucket_operator.resource.api import GROUP, PLURAL
from hudi_bucket_operator.runtime import kube
from lib import helm_chart
from lib.helm_chart import FLINK_WRITER_KIND, NAMESPACE, VALUE_SETS, find, one, render
from lib.rbac_rules import Permission, granted

TABLES, STATUS, FINALIZERS = PLURAL, f"{PLURAL}/status", f"{PLURAL}/finalizers"
OPERATOR_CALLS: frozenset[Permission] = frozenset(
    {
        # Kopf watches the tables: a list, then a watch from its resourceVersion.
        (GROUP, TABLES, "list"),
        (GROUP, TABLES, "watch"),
        # Kopf removes the finalizer that earlier builds put on every table (a patch).
        (GROUP, TABLES, "patch"),
        # A replica that begins to lead reads each table as the API server holds it (handlers._read).
        (GROUP, TABLES, "get"),
        # Kopf patches the status through the status subresource (the CRD declares it).
        (GROUP, STATUS, "patch"),
        # Kopf posts events (handler logs at INFO and above, and kopf.event in the handlers).
        ("", "events", "create"),
        # kube.KubeClient for SparkOperatorBackend: jobs are created, then listed by label; Kopf watches
        # them (a list, then a watch), so that a job's progress reconciles its table ...
        ("sparkoperator.k8s.io", "sparkapplications", "create"),
        ("sparkoperator.k8s.io", "sparkapplications", "list"),
        ("sparkoperator.k8s.io", "sparkapplications", "watch"),
        # ... and their reports are ConfigMaps (the job creates them): read once the job ends, then deleted.
        ("", "configmaps", "get"),
        ("", "configmaps", "delete"),
    }
)
# With writers.enabled (spec.writers), workloads.py reads each writer whole (its owner's consent), reads
# and patches the writers' scale subresource and counts their pods; and gets and patches each kind the
# admins declare in writers.kinds.
WRITER_CALLS: frozenset[Permission] = frozenset(
    {
        ("apps", "deployments", "get"),
        ("apps", "statefulsets", "get"),
        ("apps", "deployments/scale", "get"),
        ("apps", "deployments/scale", "patch"),
        ("apps", "statefulsets/scale", "get"),
        ("apps", "statefulsets/scale", "patch"),
        ("", "pods", "list"),
        # an apply that holds them paused past writers.applyDeadline is deleted (cancelled)
        ("sparkoperator.k8s.io", "sparkapplications", "delete"),
    }
)
FLINK_CALLS: frozenset[Permission] = frozenset(
    {("flink.apache.org", "flinkdeployments", "get"), ("flink.apache.org", "flinkdeployments", "patch")}
)
# Leader election (leadership.py), in the operator's own namespace: the Lease is created, read, renewed.
LEASE_CALLS: frozenset[Permission] = frozenset(
    ("coordination.k8s.io", "leases", verb) for verb in ("create", "get", "update")
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


def operator_roles(objs: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    name = helm_chart.RELEASE
    return find(objs, "ClusterRole", name) + find(objs, "Role", name)


def test_children_name_their_table_as_owner_blocking_its_deletion() -> None:
    reference = job_render.owner_reference({"metadata": {"name": "orders", "uid": "u"}})
    assert reference["blockOwnerDeletion"] is True  # hence OWNER_REFERENCE_PERMISSION


def test_the_operators_client_knows_only_the_kinds_the_chart_grants() -> None:
    # A new kind in kube.py is a new call: add it to OPERATOR_CALLS (and to the chart's rules).
    resources = {value for value in vars(kube).values() if isinstance(value, kube.Resource)}
    assert resources == {
        kube.SPARK_APPLICATIONS, kube.CONFIG_MAPS, kube.DEPLOYMENTS, kube.STATEFUL_SETS, kube.PODS,
        kube.LEASES,  # leader election: test_leader_election_grants_one_lease_in_the_release_namespace
    }  # fmt: skip
    assert {(r.group, r.plural) for r in resources} == {
        (group, resource.removesuffix("/scale"))
        for group, resource, _ in OPERATOR_CALLS | WRITER_CALLS | LEASE_CALLS
        if resource.removesuffix("/scale")
        in ("sparkapplications", "configmaps", "deployments", "statefulsets", "pods", "leases")
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


@pytest.mark.parametrize(
    "values",
    [{}, {"watch": {"namespaces": ["lake", "sales"]}}],
    ids=["cluster-wide", "named-namespaces"],
)
def test_pausing_writers_is_granted_only_when_enabled_and_only_on_the_kinds_listed(
    values: dict[str, Any],
) -> None:
    enabled = {**values, "writers": {"enabled": True, "kinds": [FLINK_WRITER_KIND]}}
    for before, after in zip(operator_roles(render(values)), operator_roles(render(enabled)), strict=True):
        assert granted(after["rules"]) - granted(before["rules"]) == WRITER_CALLS | FLINK_CALLS
    listed_only = {**values, "writers": {"enabled": False, "kinds": [FLINK_WRITER_KIND]}}
    for before, after in zip(
        operator_roles(render(values)), operator_roles(render(listed_only)), strict=True
    ):
        assert granted(after["rules"]) == granted(before["rules"])


def test_rbac_can_be_left_to_the_user() -> None:
    objs = render({"rbac": {"create": False}})
    assert operator_roles(objs) == []
    assert find(objs, "ClusterRoleBinding") == []
    assert find(objs, "Role", LEADER_ELECTION) == find(objs, "RoleBinding", LEADER_ELECTION) == []


LEADER_ELECTION = f"{helm_chart.RELEASE}-leader-election"


@pytest.mark.parametrize(
    ("values", "lease"),
    [({}, helm_chart.RELEASE), ({"leaderElection": {"leaseName": "lake-operator"}}, "lake-operator")],
    ids=["release-name", "named"],
)
def test_leader_election_grants_one_lease_in_the_release_namespace(
    values: dict[str, Any], lease: str
) -> None:
    objs = render(values)
    (role,) = find(objs, "Role", LEADER_ELECTION)
    assert role["metadata"]["namespace"] == NAMESPACE
    # create cannot name its object; reading and renewing can, and name only the operator's own Lease.
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [lease],
         "verbs": ["get", "update"]},
    ]  # fmt: skip
    (binding,) = find(objs, "RoleBinding", LEADER_ELECTION)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": LEADER_ELECTION,
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": helm_chart.RELEASE, "namespace": NAMESPACE}
    ]
    (container,) = one(objs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert {"name": "HBO_LEADER_ELECTION_LEASE", "value": lease} in container["env"]


def test_without_leader_election_no_lease_is_granted() -> None:
    objs = render({"leaderElection": {"enabled": False}})
    assert find(objs, "Role", LEADER_ELECTION) == find(objs, "RoleBinding", LEADER_ELECTION) == []


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


def test_no_job_service_account_when_the_user_brings_one() -> None:
    assert job_objects({"jobs": {"serviceAccount": {"create": False}}}) == {}

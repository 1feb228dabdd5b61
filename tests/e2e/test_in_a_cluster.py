"""The product as it runs in a cluster, end to end on a real control plane.

The chart is installed by a real helm. The operator runs as a real process, "in a pod" of the chart's
ServiceAccount (its token, the Deployment's own args and env), so the chart's RBAC is what is tested.
A stand-in for the Spark Operator runs each SparkApplication as a real `hudi-bucket-job` process with
the job ServiceAccount's token, on a real Hudi table in a local folder. The tests run in order: each
scenario leaves the cluster as the next one expects it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from control_plane import AuditEvent, ControlPlane
from harness import (
    Cluster,
    OperatorProcess,
    free_port,
    manifest,
    operator_in_pod,
    operator_with_kubeconfig,
    until,
    write_orders_table,
)
from hudi_bucket import cli
from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator.plugin.views import short_id
from hudi_bucket_operator.resource.api import APPROVE, DECIDED_BY, DENY, REASON
from hudi_bucket_operator.resource.spec import parse_spec
from lib import bucket_tables, prometheus
from lib.hudi_rs import records
from lib.hudi_spark import data_rows, hudi_read, hudi_write
from lib.hudi_tables import MERGE_ON_READ, one_record_per_key, write_hudi_bucket_table
from lib.hudi_tables import records as hudi_records
from lib.prometheus import Prometheus
from lib.rbac_rules import Permission, granted
from lib.shown import show
from spark_operator import SparkOperatorStandIn

pytestmark = [
    pytest.mark.spark,  # the tables are written, and verified, with the session's Spark
    pytest.mark.shared,  # the Spark Operator's real CRD, installed in the cluster
]

LAKE = "lake"  # the namespace the namespaced install watches
RELEASE = "hudi-bucket-operator"
RELEASE_NS = "hudi-bucket-operator"
LEGACY_FINALIZER = "hudi.bucketops.io/timers"
TABLES = "hudibuckettables.hudi.bucketops.io"
ARGO_TRACKING = "argocd.argoproj.io/tracking-id"


METRICS_PORT = free_port()  # the operator's /metrics, which Prometheus scrapes through every scenario


def chart_values(**overrides: Any) -> dict[str, Any]:
    return {
        "watch": {"namespaces": [LAKE]},
        "resyncSeconds": 2,
        "metrics": {"port": METRICS_PORT},
        "health": {"port": free_port()},
        # The scenarios' tables are copies in local folders, and s3a://lake/ the bucket nothing reads.
        "jobs": {"image": {"tag": "e2e"}, "allowedTableUris": {LAKE: ["/", "s3a://lake/"], "sales": ["/"]}},
        # A killed leader's Lease is taken 5 s after its last renewal, not 15 s: the scenarios kill it.
        "leaderElection": {"enabled": True, "leaseName": "", "leaseSeconds": 5},
        **overrides,
    }


COLUMNS = ("order_id", "day", "amount")


def spec(uri: Path, **apply: str) -> dict[str, Any]:
    return {
        "table": {"uri": str(uri)},
        "buckets": {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
        "apply": apply or {"policy": "Manual"},
    }


def rows(root: Path) -> list[dict[str, Any]]:
    return records(root, columns=COLUMNS)


# People with rights on the tables in LAKE and none beyond: the plugin acts with its user's own.
TABLE_USERS = {"reader": ["get", "list"], "author": ["get", "list", "patch"]}


def table_user(world: World, name: str, verbs: list[str]) -> Path:
    """A kubeconfig of a user who may do ``verbs`` to the tables in LAKE, and nothing else."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": f"tables-{name}", "namespace": LAKE},
        "rules": [{"apiGroups": ["hudi.bucketops.io"], "resources": ["hudibuckettables"], "verbs": verbs}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"tables-{name}", "namespace": LAKE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"tables-{name}"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}],
    }
    world.cluster.kubectl(
        "apply", "-f", "-", input=json.dumps({"kind": "List", "apiVersion": "v1", "items": [role, binding]})
    )
    for verb in verbs:
        world.cluster.control_plane.wait_until_allowed(name, verb, TABLES, LAKE)
    return world.cluster.control_plane.kubeconfig_for_user(world.work / f"user-{name}", name)


def kubectl_as(kubeconfig: Path, *args: str, plugin: str = "") -> subprocess.CompletedProcess[str]:
    """A real kubectl in LAKE as the user of ``kubeconfig``, finding this environment's plugins on PATH
    (a plugin's name goes first: kubectl takes no flag before it)."""
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    assert kubectl, "no kubectl on PATH"
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        [kubectl, *([plugin] if plugin else []), f"--kubeconfig={kubeconfig}", "-n", LAKE, *args],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def kubectl_hbt(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`kubectl hbt` as its users run it."""
    done = kubectl_as(kubeconfig, *args, plugin="hbt")
    if check:
        assert done.returncode == 0, done.stderr
    return done


@dataclass
class World:
    cluster: Cluster
    spark_operator: SparkOperatorStandIn
    operator: OperatorProcess
    work: Path
    template: Path
    rescaled: Path  # the template with spec()'s rules applied
    prometheus: Prometheus | None  # None: no Prometheus to be had on this machine

    def table_copy(self, name: str, template: Path | None = None) -> Path:
        target = self.work / "tables" / name
        shutil.copytree(template or self.template, target)
        return target

    def restart_operator(self) -> None:
        self.operator.stop()
        self.operator = operator_in_pod(self.cluster, RELEASE_NS, RELEASE, self.work)


@pytest.fixture(scope="module")
def world(
    control_plane: ControlPlane, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    work = tmp_path_factory.mktemp("e2e-operator")
    template = work / "template"
    write_orders_table(spark, template)
    # The tables that start Ready: spec()'s rules applied here, in-process, as its apply job would, so
    # such a table's first round is one plan that finds nothing to do (no JVM started for an apply).
    rescaled = work / "rescaled"
    shutil.copytree(template, rescaled)
    _, *planned = parse_spec(spec(rescaled)).job_request(JobKind.PLAN).to_argv()
    assert cli.main(["apply", *planned]) == 0  # what the plan job would plan, applied without approval

    cluster = Cluster(control_plane)
    cluster.install_crds()
    cluster.kubectl("create", "namespace", LAKE)
    cluster.install_chart(RELEASE, RELEASE_NS, chart_values())
    control_plane.wait_until_allowed(
        f"system:serviceaccount:{LAKE}:hudi-bucket-jobs", "create", "configmaps", LAKE
    )
    spark_operator = SparkOperatorStandIn(control_plane, work).start()
    try:
        metrics = f"127.0.0.1:{METRICS_PORT}"
        with prometheus.scraping_if_found(metrics, work / "prometheus", free_port()) as scraper:
            operator = operator_in_pod(cluster, RELEASE_NS, RELEASE, work)
            world = World(cluster, spark_operator, operator, work, template, rescaled, scraper)
            yield world
            world.operator.stop()
    finally:
        spark_operator.stop()


def test_a_manual_plan_waits_for_approval_then_applies(world: World) -> None:
    cluster, uri = world.cluster, world.table_copy("orders")
    before = rows(uri)
    cluster.create_table(LAKE, "orders", spec(uri))

    status = cluster.phase_is(LAKE, "orders", "AwaitingApproval")
    plan_id = status["plan"]["id"]
    assert status["plan"]["items"][0]["partition"] == "day=2025-11-11"
    assert status["observedGeneration"] == 1
    time.sleep(3)  # longer than the resync: nothing moves without approval
    assert cluster.job_kinds(LAKE, "orders") == ["plan"]
    until(
        lambda: any(e.startswith("AwaitingApproval") for e in cluster.events(LAKE, "orders")),
        30,
        "the AwaitingApproval event (Kopf posts events in the background)",
    )

    # Approved with the kubectl plugin, by someone who may read tables and not change them (refused, as
    # kubectl says it), then by the table's author, who may change them and nothing else.
    reader, author = (table_user(world, name, verbs) for name, verbs in TABLE_USERS.items())
    listed = kubectl_hbt(reader, "list")
    assert "orders   AwaitingApproval" in listed.stdout
    assert f"{short_id(plan_id)} 1 partition " in listed.stdout
    planned = kubectl_hbt(reader, "plan", "orders").stdout
    assert planned.startswith(f"Plan {plan_id}\n  table     {LAKE}/orders\n  approved  no")
    assert "+ config  11-11,6 default 2" in planned
    assert next(line for line in planned.splitlines() if "day=2025-11-11" in line).split()[2:5] == [
        "2",
        "->",
        "6",
    ]
    # kubectl's habits: its flags after the verb, its output formats.
    assert kubectl_hbt(reader, "list", "-n", LAKE, "-o", "name").stdout.split() == [
        "hudibuckettable.hudi.bucketops.io/orders"
    ]
    as_json = kubectl_hbt(reader, "plan", "orders", "-o", "json", "-n", LAKE).stdout
    assert json.loads(as_json)["id"] == plan_id
    refused = kubectl_hbt(reader, "approve", "orders", check=False)
    assert refused.returncode == 1
    assert 'cannot patch resource "hudibuckettables"' in refused.stderr
    show("kubectl hbt list (a real plan awaiting approval)", listed.stdout)
    show("kubectl hbt plan orders", planned)

    # Who approves is who the API server says: the chart's admission policy refuses an approval naming
    # someone else (asked as a dry run, so that nothing is approved before the policy is in force).
    forged = [f"{APPROVE}={plan_id}", f"{DECIDED_BY}=someone-else", "--dry-run=server"]
    said = until(
        lambda: (done := kubectl_as(author, "annotate", "hbt", "orders", *forged)).returncode and done.stderr,
        30,
        "the admission policy to refuse a forged approval",
    )
    assert "must name who makes it: set hudi.bucketops.io/decided-by to author" in said

    # A table Argo CD keeps in step with Git is decided in Git: the plugin refuses to approve or deny it,
    # printing what to commit, and changes nothing.
    tracked = f"{ARGO_TRACKING}=lake:hudi.bucketops.io/HudiBucketTable:lake/orders"
    cluster.kubectl("annotate", "hbt", "orders", "-n", LAKE, tracked)
    in_git = kubectl_hbt(author, "approve", "orders", check=False)
    assert in_git.returncode == 1
    assert "is managed by Argo CD" in in_git.stderr
    assert f"spec:\n  apply:\n    approvedPlan: {plan_id}" in in_git.stderr
    not_denied = kubectl_hbt(author, "deny", "orders", check=False)
    assert not_denied.returncode == 1
    assert (
        "is managed by Argo CD, which keeps it as Git says: deny its plan in Git instead" in not_denied.stderr
    )
    assert "    policy: Manual\n" in not_denied.stderr
    show("kubectl hbt approve orders (tracked by Argo CD)", in_git.stderr)
    show("kubectl hbt deny orders (tracked by Argo CD)", not_denied.stderr)
    decided = {APPROVE, DENY, DECIDED_BY, REASON} & set(
        cluster.table(LAKE, "orders")["metadata"]["annotations"]
    )
    assert decided == set()
    cluster.kubectl("annotate", "hbt", "orders", "-n", LAKE, f"{ARGO_TRACKING}-")

    # A decision is of the plan its author read: one naming another plan is refused, and a write naming
    # a version the table has since left (the plugin's, when the plan changes between its read and its
    # write) is refused by the API server, in the words the plugin recognises.
    other = kubectl_hbt(author, "approve", "orders", "--plan", "e" * 12, check=False)
    assert other.returncode == 1
    assert f"plan is now {plan_id}, not the plan {'e' * 12} you named: nothing was decided" in other.stderr
    stale = {"metadata": {"resourceVersion": "1", "annotations": {APPROVE: plan_id, DECIDED_BY: "author"}}}
    late = kubectl_as(author, "patch", "hbt", "orders", "--type=merge", f"--patch={json.dumps(stale)}")
    assert late.returncode == 1
    assert "the object has been modified" in late.stderr
    show("kubectl hbt approve orders --plan eeeeeeeeeeee", other.stderr)

    # Denied by its author: the table stalls saying who (as the API server knows them) and why, and
    # applies nothing.
    who = kubectl_as(author, "auth", "whoami", "--output=jsonpath={.status.userInfo.username}").stdout
    assert who == "author"
    denied = kubectl_hbt(author, "deny", "orders", "--reason", "not during the freeze")
    assert denied.stdout == f"{LAKE}/orders: plan {plan_id} denied\n"
    stalled = cluster.phase_is(LAKE, "orders", "Stalled")
    [stall] = [c for c in stalled["conditions"] if c["type"] == "Stalled"]
    assert stall["reason"] == "PlanDenied"
    assert who in stall["message"]
    assert "not during the freeze" in stall["message"]
    assert (stalled["history"][0]["outcome"], stalled["history"][0]["decidedBy"]) == ("Denied", who)
    denial = kubectl_hbt(reader, "history", "orders").stdout
    [row] = [line for line in denial.splitlines() if " Denied " in line]
    assert re.split(r"\s{3,}", row)[-2:] == [who, "not during the freeze"]  # DECIDED BY, REASON
    show("kubectl hbt history orders (denied)", denial)
    time.sleep(3)  # longer than the resync: a denial stands
    assert cluster.job_kinds(LAKE, "orders") == ["plan"]

    # The freeze over, the same plan approved: approving undoes the denial.
    approved = kubectl_hbt(author, "approve", "orders", "--reason", "reviewed in CHG-1")
    assert approved.stdout == f"{LAKE}/orders: plan {plan_id} approved\n"
    status = cluster.phase_is(LAKE, "orders", "Ready")
    assert cluster.job_kinds(LAKE, "orders") == ["plan", "apply"]  # the approval plans no second time
    history = kubectl_hbt(reader, "history", "orders").stdout
    show("kubectl hbt history orders (applied)", history)
    assert plan_id[7:19] in history
    assert "author" in history
    assert "reviewed in CHG-1" in history
    assert (status["history"][0]["decidedBy"], status["history"][0]["reason"]) == (
        "author",
        "reviewed in CHG-1",
    )
    assert status["observedGeneration"] == 1  # approved by annotation: the spec is as it was
    assert status["config"]["expressions"] == "11-11,6"
    assert status["history"][0]["planId"] == plan_id
    assert {p["partition"]: p["buckets"] for p in status["partitions"]["items"]} == {
        "day=2025-11-10": 2,
        "day=2025-11-11": 6,
    }
    # The table is what the status says: same rows (hudi-rs reads them), every record in its bucket.
    assert rows(uri) == before
    assert cli.main(["verify", "--table", str(uri)]) == 0
    # Each job ran once, as the job ServiceAccount, and its report (a ConfigMap) went once recorded.
    runs = world.spark_operator.runs_in(LAKE)
    assert [r.states[-1] for r in runs] == ["COMPLETED"] * 2
    until(lambda: cluster.config_maps(LAKE) == {}, 30, "the recorded reports to be deleted")

    # A layout check asked for with the plugin (the table has no spec.verify): one verify job, then the
    # plan that follows a check, which finds nothing to do; the list shows when it was checked.
    asked = kubectl_hbt(author, "verify", "orders").stdout
    assert asked.startswith(f"{LAKE}/orders: layout check asked for at ")
    checked = until(
        lambda: (s := cluster.status(LAKE, "orders")).get("layout") and s, 120, "the layout check"
    )
    assert checked["layout"]["violations"] == 0
    until(lambda: cluster.job_kinds(LAKE, "orders")[2:] == ["verify", "plan"], 60, "the check's round")
    cluster.phase_is(LAKE, "orders", "Ready")
    listed = kubectl_hbt(reader, "list").stdout
    show("kubectl hbt list (after a layout check)", listed)
    assert "ok " in next(line for line in listed.splitlines() if " orders " in line)


def test_the_automatic_policy_applies_each_plan(world: World) -> None:
    cluster, uri = world.cluster, world.table_copy("events")
    cluster.create_table(LAKE, "events", spec(uri, policy="Automatic"))
    status = cluster.phase_is(LAKE, "events", "Ready")
    assert cluster.job_kinds(LAKE, "events") == ["plan", "apply"]
    assert status["history"][0]["outcome"] == "Succeeded"
    assert cli.main(["verify", "--table", str(uri)]) == 0


def test_a_drifted_layout_is_found_on_schedule_and_repaired_once_approved(world: World, spark: Any) -> None:
    """Another writer breaks a Ready table where no plan can see it (a record in the wrong bucket, a
    second version of a key in another bucket); spec.verify's check finds it, LayoutHealthy turns False,
    the repair plan waits for approval, its apply mends the layout and the check after it passes."""
    cluster, uri = world.cluster, world.table_copy("drifted", world.rescaled)
    cluster.create_table(LAKE, "drifted", spec(uri, policy="Automatic"))
    cluster.phase_is(LAKE, "drifted", "Ready")
    assert cluster.job_kinds(LAKE, "drifted") == ["plan"]
    before = rows(uri)
    bucket_tables.break_by_moving_a_record(uri, "day=2025-11-11")
    _, key = bucket_tables.break_by_copying_a_record(uri, "day=2025-11-10", amount=999.0)

    verify = {"schedule": "7d"}  # never checked: checked once Ready, then weekly
    cluster.patch_table(LAKE, "drifted", {"spec": {"apply": {"policy": "Manual"}, "verify": verify}})
    status = cluster.phase_is(LAKE, "drifted", "AwaitingApproval", timeout=180)
    healthy = next(c for c in status["conditions"] if c["type"] == "LayoutHealthy")
    assert (healthy["status"], healthy["reason"]) == ("False", "LayoutViolation")
    assert (status["layout"]["violations"], status["layout"]["partitions"]) == (2, 2)
    assert (status["plan"]["partitions"], status["plan"]["repairs"]) == (2, 2)
    assert {item["reason"] for item in status["plan"]["items"]} == {"repair"}
    until(
        lambda: any(e.startswith("LayoutViolation") for e in cluster.events(LAKE, "drifted")),
        30,
        "the LayoutViolation event",
    )

    approve = {"spec": {"apply": {"policy": "Manual", "approvedPlan": status["plan"]["id"]}}}
    cluster.patch_table(LAKE, "drifted", approve)

    def mended() -> dict[str, Any] | None:
        status = cluster.status(LAKE, "drifted")
        conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
        settled = status.get("phase") == "Ready" and conditions.get("LayoutHealthy") == "True"
        return status if settled else None

    status = until(mended, 240, "the repaired table to be Ready with a healthy layout")
    assert (status["history"][0]["repairs"], status["history"][0]["duplicatesResolved"]) == (2, 1)
    assert status["layout"]["violations"] == 0
    assert "verify" in cluster.job_kinds(LAKE, "drifted")
    until(lambda: any(e.startswith("Repaired") for e in cluster.events(LAKE, "drifted")), 30, "Repaired")
    assert cli.main(["verify", "--table", str(uri)]) == 0
    # Every key once, the copy written last winning (the table orders by commit time), in both readers.
    expected = sorted(({**r, "amount": 999.0} if r["order_id"] == key else r for r in before), key=repr)
    assert sorted(rows(uri), key=repr) == expected
    hudi_rows = data_rows(hudi_read(spark, uri))  # (amount, day, order_id): columns by name
    assert hudi_rows == sorted(((r["amount"], r["day"], r["order_id"]) for r in expected), key=repr)


def test_a_bucket_split_in_two_file_groups_is_repaired_under_the_automatic_policy(
    world: World, spark: Any
) -> None:
    """The third kind of drift: a bucket written as two file groups. With spec.verify on, the operator
    plans its repair and, the policy being Automatic, applies it; the check after it passes."""
    cluster, uri = world.cluster, world.table_copy("split", world.rescaled)
    cluster.create_table(LAKE, "split", spec(uri, policy="Automatic"))
    cluster.phase_is(LAKE, "split", "Ready")
    assert cluster.job_kinds(LAKE, "split") == ["plan"]
    before = sorted(rows(uri), key=repr)
    bucket_tables.break_by_splitting_a_bucket(uri, "day=2025-11-11")
    assert cli.main(["verify", "--table", str(uri)]) == 1

    cluster.patch_table(LAKE, "split", {"spec": {"verify": {"schedule": "7d"}}})

    def mended() -> dict[str, Any] | None:
        status = cluster.status(LAKE, "split")
        conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
        repaired = (status.get("history") or [{}])[0].get("repairs")
        settled = status.get("phase") == "Ready" and conditions.get("LayoutHealthy") == "True"
        return status if settled and repaired else None

    status = until(mended, 240, "the split bucket repaired and the layout checked healthy")
    assert status["history"][0]["repairs"] == 1
    assert cli.main(["verify", "--table", str(uri)]) == 0
    assert sorted(rows(uri), key=repr) == before
    hudi_rows = data_rows(hudi_read(spark, uri))  # (amount, day, order_id): columns by name
    assert hudi_rows == sorted(((r["amount"], r["day"], r["order_id"]) for r in before), key=repr)


def test_a_table_only_hudi_rewrites_is_rescaled_by_the_hudi_engine(world: World, spark: Any) -> None:
    """A MERGE_ON_READ table with log files: engine Auto picks Hudi's procedure; Hudi reads the same rows
    after it and upserts without a duplicate key. (Which shapes Auto gives Hudi is the preflight's unit
    tests'; Hudi's procedure on a table with a metadata table is tests/interop/test_hudi_engine.py's: the
    operator's path is the same for every shape, so one shape runs it here.)"""
    name = "logged"
    uri = world.work / "tables" / name
    options = write_hudi_bucket_table(spark, uri, 9, MERGE_ON_READ)
    before = one_record_per_key(spark, uri)
    rules = [{"pattern": "day=2025-11-1[23]", "buckets": 6}]
    table = {
        "table": {"uri": str(uri)},
        "buckets": {"default": 2, "rules": rules},
        "apply": {"policy": "Automatic"},
    }
    world.cluster.create_table(LAKE, name, table)
    status = world.cluster.phase_is(LAKE, name, "Ready")
    assert status["history"][0]["outcome"] == "Succeeded"
    assert status["config"]["expressions"] == "day=2025-11-1[23],6"
    assert one_record_per_key(spark, uri) == before
    assert cli.main(["verify", "--table", str(uri)]) == 0
    in_force = {"hoodie.bucket.index.partition.expressions": status["config"]["expressions"]}
    hudi_write(spark, uri, hudi_records(spark, range(90, 130), 3), {**options, **in_force})
    assert len(one_record_per_key(spark, uri)) == 130


def test_the_api_server_refuses_a_spec_the_crd_rules_out(world: World) -> None:
    bad = {
        "table": {"uri": "s3a://lake/t"},
        "buckets": {"default": 4, "rules": [{"pattern": "\\d{2,3}", "buckets": 8}]},
    }
    refused = world.cluster.kubectl("apply", "-f", "-", input=manifest("bad", LAKE, bad), check=False)
    assert refused.returncode != 0
    assert "a rule's pattern cannot contain ',' (Hudi splits each rule on it)" in refused.stderr  # a CEL rule
    with pytest.raises(client.ApiException) as missing:
        world.cluster.table(LAKE, "bad")
    assert missing.value.status == 404


def test_a_failed_job_stalls_until_the_retry_annotation_changes(world: World) -> None:
    cluster, nowhere = world.cluster, world.work / "not-a-table"
    nowhere.mkdir()
    cluster.create_table(LAKE, "broken", spec(nowhere))
    status = cluster.phase_is(LAKE, "broken", "Stalled")
    stalled = next(c for c in status["conditions"] if c["type"] == "Stalled")
    assert stalled["reason"] == "JobFailed"
    assert "is not a Hudi table" in stalled["message"]  # the job's own words, from its report
    time.sleep(3)
    assert cluster.job_kinds(LAKE, "broken") == ["plan"]  # no retry loop

    cluster.patch_table(LAKE, "broken", {"metadata": {"annotations": {"hudi.bucketops.io/retry": "1"}}})
    until(lambda: cluster.job_kinds(LAKE, "broken") == ["plan", "plan"], 60, "a second plan job")
    cluster.phase_is(LAKE, "broken", "Stalled")


def test_prometheus_saw_what_the_scenarios_caused(world: World) -> None:
    """A real Prometheus scraped the operator through the scenarios above, with the chart's alert rules
    (each ``for`` at 0s): the alerts those scenarios call for fired, for their tables, the others did not,
    and every dashboard query had data."""
    scraper = prometheus.required(world.prometheus)
    assert scraper.scraped(), scraper.log.read_text()[-3000:]
    until(lambda: scraper.fired("HudiBucketOperatorJobsFailing", kind="plan"), 30, "the failed plan's alert")
    assert scraper.fired("HudiBucketTableNotReady", namespace=LAKE, name="broken", phase="Stalled")
    assert scraper.fired("HudiBucketTableLayoutViolations", namespace=LAKE, name="drifted")
    # Not for a day, not past a deadline: no scenario waited so long.
    assert not scraper.fired("HudiBucketTablePlanAwaitingApproval")
    assert not scraper.fired("HudiBucketTableWritersPausedPastDeadline")
    assert scraper.seen('hbo_table_plan_awaiting_approval_since_timestamp_seconds{name="orders"}')
    assert scraper.seen(
        f'hbo_table_phase{{namespace="{LAKE}", name="orders", phase="AwaitingApproval"}} == 1'
    )
    [rows] = scraper.query('hbo_table_last_rescale_rows{name="orders"}')
    assert int(rows["value"][1]) > 0
    fired = scraper.seen('count by (alertname, name) (ALERTS{alertstate="firing"})')
    alerts = sorted(f"{a['metric']['alertname']} {a['metric'].get('name', '')}".strip() for a in fired)
    show("Alerts Prometheus fired in the cluster scenarios", "\n".join(alerts))
    show("Dashboard panels at the end of the cluster scenarios", "\n".join(panel_values(scraper)))
    # The writers' panel: this module pauses no writers (test_writers_in_a_cluster.py does).
    quiet = {"Writers paused for"}
    empty = [
        title
        for title, query in prometheus.dashboard_queries()
        if title not in quiet and not scraper.seen(query)
    ]
    assert empty == [], f"dashboard panels without data: {empty}"


def panel_values(scraper: Prometheus) -> list[str]:
    """Each dashboard panel's title and what its query returns now, a series a line."""
    lines = []
    for title, query in prometheus.dashboard_queries():
        lines.append(title)
        for series in scraper.query(query):
            labels = ", ".join(f"{k}={v}" for k, v in sorted(series["metric"].items()) if k != "__name__")
            lines.append(f"    {labels or '-'}: {series['value'][1]}")
    return lines


def test_a_paused_table_starts_no_job_until_resumed_and_an_unmanaged_one_none_at_all(world: World) -> None:
    cluster, uri = world.cluster, world.table_copy("paused")
    cluster.create_table(LAKE, "paused", spec(uri), annotations={"hudi.bucketops.io/paused": "true"})
    cluster.create_table(LAKE, "unmanaged", spec(uri), annotations={"hudi.bucketops.io/unmanaged": "true"})
    cluster.phase_is(LAKE, "paused", "Paused")
    time.sleep(3)
    assert cluster.jobs(LAKE, "paused") == []
    assert cluster.jobs(LAKE, "unmanaged") == []
    assert cluster.status(LAKE, "unmanaged") == {}
    # Resumed by its author with the plugin (and listed, while paused, as such).
    author = table_user(world, "author", TABLE_USERS["author"])
    listed = [line.split()[1:3] for line in kubectl_hbt(author, "list").stdout.splitlines()]
    assert ["paused", "Paused"] in listed
    assert kubectl_hbt(author, "resume", "paused").stdout == f"{LAKE}/paused resumed\n"
    cluster.phase_is(LAKE, "paused", "AwaitingApproval")


def test_a_killed_operator_adopts_the_job_in_flight(world: World) -> None:
    cluster, uri = world.cluster, world.table_copy("restart")
    world.spark_operator.hold()  # the job is submitted but does not finish yet
    cluster.create_table(LAKE, "restart", spec(uri))
    until(lambda: cluster.jobs(LAKE, "restart"), 60, "the plan job")
    world.operator.kill()
    world.operator = operator_in_pod(world.cluster, RELEASE_NS, RELEASE, world.work)
    cluster.phase_is(LAKE, "restart", "Planning")
    world.spark_operator.release()
    cluster.phase_is(LAKE, "restart", "AwaitingApproval")
    assert cluster.job_kinds(LAKE, "restart") == ["plan"]  # adopted, not started twice
    assert len([r for r in world.spark_operator.runs_in(LAKE) if r.name.startswith("restart-")]) == 1


def test_two_replicas_the_leader_killed_mid_apply_and_the_standby_finishes_the_work(world: World) -> None:
    """Two replicas, as replicaCount 2 runs them: one reconciles, the other watches and waits. The leader
    is killed (SIGKILL, as when its node dies) while the apply job runs: the standby takes the Lease once
    it expires, adopts the job in flight and finishes the table, with no job started twice."""
    cluster, uri = world.cluster, world.table_copy("failover")
    before_rows = rows(uri)
    standby = operator_in_pod(cluster, RELEASE_NS, RELEASE, world.work, replica="standby")
    try:
        cluster.create_table(LAKE, "failover", spec(uri))
        plan_id = cluster.phase_is(LAKE, "failover", "AwaitingApproval")["plan"]["id"]
        before = lease(cluster)
        assert "leading as" in world.operator.text()
        assert "leading as" not in standby.text()  # it watches, and waits

        world.spark_operator.hold()  # the apply job is submitted, and runs until released
        cluster.patch_table(
            LAKE, "failover", {"spec": {"apply": {"policy": "Manual", "approvedPlan": plan_id}}}
        )
        until(lambda: "apply" in cluster.job_kinds(LAKE, "failover"), 60, "the apply job")
        world.operator.kill()
        until(lambda: "leading as" in standby.text(), 60, "the standby to take the Lease")
        after = lease(cluster)
        assert after["holderIdentity"] != before["holderIdentity"]
        assert after["leaseTransitions"] == before.get("leaseTransitions", 0) + 1
        cluster.phase_is(LAKE, "failover", "Applying")
        world.spark_operator.release()
        status = cluster.phase_is(LAKE, "failover", "Ready")
        assert status["history"][0]["planId"] == plan_id
        assert cluster.job_kinds(LAKE, "failover") == ["plan", "apply"]  # adopted, not started twice
        assert len([r for r in world.spark_operator.runs_in(LAKE) if r.name.startswith("failover-")]) == 2
        assert rows(uri) == before_rows
    finally:
        world.spark_operator.release()
        world.operator = standby  # the replica that leads now


def lease(cluster: Cluster) -> dict[str, Any]:
    found = cluster.kubectl("get", "lease", RELEASE, "-n", RELEASE_NS, "-o", "json")
    return dict(json.loads(found.stdout)["spec"])


def test_a_report_the_operator_did_not_record_goes_with_its_table(world: World) -> None:
    """The job creates its report's ConfigMap, owned by the table: with the operator stopped before it
    recorded the report, deleting the table still deletes the report."""
    cluster, uri = world.cluster, world.table_copy("unrecorded")
    world.spark_operator.hold()  # the job must not finish before the operator is stopped, however fast
    cluster.create_table(LAKE, "unrecorded", spec(uri))
    [app] = until(lambda: cluster.jobs(LAKE, "unrecorded"), 60, "the plan job")
    world.operator.stop()
    world.spark_operator.release()
    name, uid = app["metadata"]["name"], cluster.table(LAKE, "unrecorded")["metadata"]["uid"]
    until(lambda: cluster.config_maps(LAKE).get(name) == uid, 120, "the job's report, owned by its table")
    cluster.custom.delete_namespaced_custom_object(
        "hudi.bucketops.io", "v1alpha1", LAKE, "hudibuckettables", "unrecorded"
    )
    until(lambda: name not in cluster.config_maps(LAKE), 60, "the garbage collector to delete the report")
    world.restart_operator()


def test_a_table_from_a_release_with_a_finalizer_loses_it(world: World) -> None:
    cluster, uri = world.cluster, world.table_copy("legacy")
    cluster.create_table(LAKE, "legacy", spec(uri), finalizers=[LEGACY_FINALIZER])
    until(lambda: not cluster.table(LAKE, "legacy")["metadata"].get("finalizers"), 30, "the finalizer to go")
    cluster.phase_is(LAKE, "legacy", "AwaitingApproval")


def test_helm_upgrade_keeps_the_tables_managed(world: World) -> None:
    cluster = world.cluster
    before = cluster.status(LAKE, "orders")
    cluster.install_chart(RELEASE, RELEASE_NS, chart_values(logFormat="json", resyncSeconds=3), upgrade=True)
    world.restart_operator()  # as the Deployment's rollout would
    _, container = cluster.deployment_container(RELEASE_NS, RELEASE)
    assert "--log-format=json" in container["args"]
    time.sleep(4)
    # Nothing redone (the plan, its apply, the check asked for and the plan after it).
    assert cluster.job_kinds(LAKE, "orders") == ["plan", "apply", "verify", "plan"]
    assert cluster.status(LAKE, "orders")["history"] == before["history"]

    rules = [{"pattern": "11-1[01]", "buckets": 4}]
    cluster.patch_table(LAKE, "orders", {"spec": {"buckets": {"rules": rules}}})
    status = cluster.phase_is(LAKE, "orders", "AwaitingApproval")
    assert status["observedGeneration"] == 2  # its approval, by annotation, changed no spec
    world.operator.assert_alive()


def test_deleting_a_table_deletes_its_children_and_no_data(world: World) -> None:
    cluster = world.cluster
    uri = Path(cluster.table(LAKE, "events")["spec"]["table"]["uri"])
    before, files = rows(uri), sorted(p.relative_to(uri) for p in uri.rglob("*"))
    assert cluster.jobs(LAKE, "events")
    cluster.custom.delete_namespaced_custom_object(
        "hudi.bucketops.io", "v1alpha1", LAKE, "hudibuckettables", "events"
    )
    until(lambda: not cluster.jobs(LAKE, "events"), 60, "the garbage collector to delete the jobs")
    assert rows(uri) == before
    assert sorted(p.relative_to(uri) for p in uri.rglob("*")) == files


def test_a_namespace_with_tables_is_deleted_with_the_operator_stopped(world: World) -> None:
    world.operator.stop()
    cluster = world.cluster
    assert cluster.jobs(LAKE)  # tables, jobs and their reports are all there
    cluster.core.delete_namespace(LAKE)

    def gone() -> bool:
        try:
            cluster.core.read_namespace(LAKE)
        except client.ApiException as err:
            return err.status == 404
        return False

    until(gone, 90, "the namespace to be deleted")


def test_a_cluster_wide_install_runs_from_a_kubeconfig(world: World) -> None:
    cluster = world.cluster
    cluster.helm("uninstall", RELEASE, "--namespace", RELEASE_NS)
    cluster.kubectl("create", "namespace", "sales")
    jobs = {**chart_values()["jobs"], "serviceAccount": {"namespaces": ["sales"]}}
    values = chart_values(watch={"namespaces": []}, jobs=jobs)
    cluster.install_chart(RELEASE, RELEASE_NS, values)
    # Started once the chart's ClusterRole is in force, as a pod would be (and its jobs' Role likewise).
    plane = cluster.control_plane
    plane.wait_until_allowed(f"system:serviceaccount:{RELEASE_NS}:{RELEASE}", "watch", TABLES, "sales")
    plane.wait_until_allowed("system:serviceaccount:sales:hudi-bucket-jobs", "create", "configmaps", "sales")
    token = cluster.control_plane.token_for(RELEASE_NS, RELEASE)
    kubeconfig = cluster.control_plane.kubeconfig_for_token(token, world.work / "operator.kubeconfig")
    # As kubens leaves it: the operator's namespace, where its leader election keeps its Lease.
    cluster.kubectl(
        "config", "set-context", "--current", f"--namespace={RELEASE_NS}", f"--kubeconfig={kubeconfig}"
    )
    liveness = f"--liveness=http://127.0.0.1:{free_port()}/healthz"
    settings = {"HBO_ALLOWED_TABLE_URIS": json.dumps({"sales": ["/"]})}  # none by default
    world.operator = operator_with_kubeconfig(kubeconfig, world.work, liveness, settings=settings)

    uri = world.table_copy("sales-orders")
    cluster.create_table("sales", "orders", spec(uri, policy="Automatic"))
    status = cluster.phase_is("sales", "orders", "Ready")
    assert status["config"]["expressions"] == "11-11,6"
    world.operator.assert_alive()


def test_each_service_account_used_exactly_what_the_chart_grants_it(world: World) -> None:
    """From the API server's audit log of every scenario above: the operator's ServiceAccount made every
    call its Role and ClusterRole allow and no other, and was never refused; the jobs' ServiceAccounts
    needed only to create their report."""
    cluster = world.cluster
    operator = f"system:serviceaccount:{RELEASE_NS}:{RELEASE}"
    used, refused = audited(cluster.control_plane.audit_events(), operator)
    assert refused == set()
    rbac = client.RbacAuthorizationV1Api(cluster.custom.api_client)
    role = rbac.read_cluster_role(RELEASE)  # the cluster-wide install's; the namespaced one is gone
    grants = granted(cluster.custom.api_client.sanitize_for_serialization(role)["rules"])
    election = rbac.read_namespaced_role(f"{RELEASE}-leader-election", RELEASE_NS)  # its one Lease
    grants |= granted(cluster.custom.api_client.sanitize_for_serialization(election)["rules"], named=True)
    # Not a call: creating a child whose ownerReference blocks its owner's deletion needs this.
    assert grants - used == {("hudi.bucketops.io", "hudibuckettables/finalizers", "update")}
    assert used - grants == set()

    jobs = {e.user for e in cluster.control_plane.audit_events()} & {
        f"system:serviceaccount:{namespace}:hudi-bucket-jobs" for namespace in (LAKE, "sales")
    }
    assert len(jobs) == 2
    for job in jobs:
        used, refused = audited(cluster.control_plane.audit_events(), job)
        assert (used, refused) == ({("", "configmaps", "create")}, set())


def audited(events: list[AuditEvent], user: str) -> tuple[set[Permission], set[Permission]]:
    """The (group, resource, verb) triples ``user`` called, and those RBAC refused it. A request the
    authenticator refused (401: no user) was nobody's and uses no grant; discovery (/apis ...) needs none."""
    used, refused = set(), set()
    for event in events:
        if event.user != user or event.resource is None:
            continue
        permission = (event.api_group or "", event.resource, event.verb)
        # Refused by the authorizer; a 403 it allowed came from admission (e.g. a namespace being deleted).
        (refused if event.forbidden else used).add(permission)
    return used, refused

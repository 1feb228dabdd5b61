"""The local mode: the same reconcile, with `hudi-bucket-job` run as local PySpark processes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_bucket.commands.write import write
from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, WriteOptions
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.runtime.local import apply_locally, load_manifests
from lib.bucket_tables import live_groups, no_bloom_filters
from lib.hbt_resources import ANYWHERE
from lib.hudi_rs import records
from lib.paths import hudi_bundle

COLUMNS = ("order_id", "day", "amount")  # what the demo table holds
# A new table of orders by day, 2 buckets in every day, from the rows given.
NEW_ORDERS_TABLE = WriteOptions(
    source="",
    record_key=("order_id",),
    partition_fields=("day",),
    create=True,
    hive_style=True,
    default_buckets=2,
)


def manifest(uri: Path, **apply: str) -> dict[str, Any]:
    return {
        "apiVersion": "hudi.bucketops.io/v1alpha1",
        "kind": "HudiBucketTable",
        "metadata": {"name": "orders", "namespace": "lake"},
        "spec": {
            "table": {"uri": str(uri)},
            "buckets": {"default": 2, "currentBuckets": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
            "apply": apply or {"policy": "Manual"},
        },
    }


# Its admins let tables be anywhere (the operator's default: nowhere until named).
ANYWHERE_POLICY = Policy(JobDefaults(allowed_table_uris=ANYWHERE))


def reconcile(documents: list[dict[str, Any]], state: Path, lines: list[str]) -> dict[str, Any]:
    [body] = asyncio.run(apply_locally(documents, state, lines.append, ANYWHERE_POLICY))
    return body


def new_orders_table(spark: Any, table: Path) -> list[dict[str, Any]]:
    """60 orders over two days, written as a new table; its rows as hudi-rs reads them."""
    data = spark.createDataFrame(
        [(f"O-{i}", "2025-11-11" if i % 3 else "2025-11-10", float(i)) for i in range(60)],
        "order_id string, day string, amount double",
    )
    write(spark, str(table), NEW_ORDERS_TABLE, rows=data)
    return records(table, columns=COLUMNS)


def test_plan_approve_apply_then_converged(spark: Any, tmp_path: Path) -> None:
    table, state, lines = tmp_path / "orders", tmp_path / "state", []
    before = new_orders_table(spark, table)

    planned = reconcile([manifest(table)], state, lines)
    assert planned["status"]["phase"] == "AwaitingApproval"
    plan_id = planned["status"]["plan"]["id"]
    assert planned["status"]["plan"]["items"][0]["partition"] == "day=2025-11-11"

    applied = reconcile([manifest(table, policy="Manual", approvedPlan=plan_id)], state, lines)
    assert applied["status"]["phase"] == "Ready", applied["status"]
    assert applied["status"]["config"]["expressions"] == "11-11,6"
    assert applied["status"]["history"][0]["planId"] == plan_id
    assert records(table, columns=COLUMNS) == before
    assert any("apply started" in line for line in lines)

    jobs_so_far = len([line for line in lines if "started" in line])
    again = reconcile([manifest(table, policy="Manual", approvedPlan=plan_id)], state, lines)
    assert again["status"]["phase"] == "Ready"
    assert len([line for line in lines if "started" in line]) == jobs_so_far  # same spec: nothing runs


@pytest.mark.spark  # a local job: PySpark in a process of its own
def test_a_failing_job_stalls_with_its_reason(tmp_path: Path) -> None:
    lines: list[str] = []
    body = reconcile([manifest(tmp_path / "no-table-here")], tmp_path / "state", lines)
    assert body["status"]["phase"] == "Stalled"
    stalled = next(c for c in body["status"]["conditions"] if c["type"] == "Stalled")
    assert "is not a Hudi table" in stalled["message"]


def test_a_sized_table_shows_the_proposed_rules_applies_them_then_converges(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, state, lines = tmp_path / "orders", tmp_path / "state", []
    days = {"2025-11-01": 50, "2025-11-02": 5000, "2025-11-11": 100}
    data = spark.createDataFrame(
        [(f"{day}-{i}", day, float(i)) for day, count in days.items() for i in range(count)],
        "order_id string, day string, amount double",
    )
    with no_bloom_filters(monkeypatch) as in_table:
        write(spark, str(table), NEW_ORDERS_TABLE, rows=data)
        in_table(table)
    busy = sum(b.size for g in live_groups(table)["day=2025-11-02"] if (b := g.latest_base_file))
    sized = manifest(table)
    sized["spec"]["buckets"]["sizing"] = {"targetFileSize": busy // 8, "partitions": "^day="}

    planned = reconcile([sized], state, lines)
    plan = planned["status"]["plan"]
    assert planned["status"]["phase"] == "AwaitingApproval"
    expressions = plan["rules"]["expressions"]
    assert expressions.startswith("11-11,6;")  # the explicit rule first: it wins over sizing
    assert "^day=2025-11-02$," in expressions
    assert plan["sizing"]["sizedPartitions"] == 2  # 11-01 and 11-02; 11-11 is the explicit rule's

    approved = {**sized, "spec": {**sized["spec"], "apply": {"policy": "Manual", "approvedPlan": plan["id"]}}}
    applied = reconcile([approved], state, lines)
    assert applied["status"]["phase"] == "Ready", applied["status"]
    assert applied["status"]["config"]["expressions"] == expressions
    buckets = {item["partition"]: item["buckets"] for item in applied["status"]["partitions"]["items"]}
    assert buckets["day=2025-11-02"] >= 4

    # A new generation plans again: the table is sized, so the plan is empty and nothing is applied.
    approved["spec"]["buckets"]["sizing"]["tolerance"] = 3
    again = reconcile([approved], state, lines)
    assert again["status"]["plan"]["noop"] is True
    ready = next(c for c in again["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "Converged")


def test_the_hudi_engine_rescales_in_local_jobs_given_the_bundle_in_the_environment(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HUDI_BUNDLE_ENV, str(hudi_bundle()))  # as `./dev demo --engine hudi` sets it
    table, state, lines = tmp_path / "orders", tmp_path / "state", []
    before = new_orders_table(spark, table)
    hudi = manifest(table, policy="Automatic")
    hudi["spec"]["engine"] = "Hudi"

    body = reconcile([hudi], state, lines)

    assert body["status"]["phase"] == "Ready", body["status"]
    assert body["status"]["config"]["expressions"] == "11-11,6"
    assert records(table, columns=COLUMNS) == before
    [report] = (state / "jobs").rglob("*-apply-*.json")
    assert any(
        "partition_bucket_index_manager" in note for note in json.loads(report.read_text())["result"]["notes"]
    )


@pytest.mark.parametrize(
    ("name", "namespace", "refusal"),
    [
        ("../../../x", "lake", "metadata.name must be a DNS-1123 subdomain"),
        ("a/b", "lake", "metadata.name must be a DNS-1123 subdomain"),
        ("Orders", "lake", "metadata.name must be a DNS-1123 subdomain"),
        ("", "lake", "metadata.name must be a DNS-1123 subdomain"),
        ("orders", "..", "metadata.namespace '..' must be a DNS-1123 label"),
    ],
    ids=["parent-folders", "slash", "upper-case", "empty", "namespace-parent-folder"],
)
def test_a_manifest_whose_name_kubernetes_would_refuse_is_refused_before_anything_is_written(
    tmp_path: Path, name: str, namespace: str, refusal: str
) -> None:
    state = tmp_path / "runs" / "state"  # ../../../x from its namespace's folder is tmp_path/x
    bad = manifest(tmp_path / "orders")
    bad["metadata"] = {"name": name, "namespace": namespace}
    file = tmp_path / "tables.yaml"
    file.write_text(yaml.safe_dump_all([manifest(tmp_path / "orders"), bad]))

    with pytest.raises(InvalidSpecError, match=refusal) as from_file:
        load_manifests([file])
    # Manifests given as they are (the demo's): every one is checked before the first is reconciled.
    with pytest.raises(InvalidSpecError, match=refusal):
        asyncio.run(apply_locally([manifest(tmp_path / "orders"), bad], state, print))

    said = str(from_file.value)
    assert f"HudiBucketTable {name!r} in {file}" in said
    assert "lower-case letters, digits" in said
    assert list(tmp_path.rglob("*")) == [file]  # no state, inside the state dir or outside it


def test_names_kubernetes_takes_are_loaded_with_or_without_a_namespace(
    tmp_path: Path,
) -> None:
    dotted = manifest(tmp_path / "orders")
    dotted["metadata"] = {"name": "orders.eu-1", "namespace": "lake-2"}
    unplaced = manifest(tmp_path / "orders")
    unplaced["metadata"] = {"name": "orders"}
    file = tmp_path / "tables.yaml"
    file.write_text(yaml.safe_dump_all([dotted, unplaced]))

    assert load_manifests([file]) == [dotted, unplaced]

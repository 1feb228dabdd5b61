"""`hudi-bucket-operator demo`: the embedded default, end to end on this machine.

1. Generate an orders dataset whose days are skewed (11-11 holds far more rows than other days).
2. Create a Hudi table from it with the `write` job: a plain bucket index, 4 buckets everywhere.
3. Reconcile examples/skewed-days.yaml with the local mode: plan, then apply, giving busy days more
   buckets (Automatic policy here, so the plan applies without approval). With ``--sized``,
   examples/sized-days.yaml instead: each day's count comes from a target file size. With
   ``--engine hudi``, Apache Hudi's own procedure rewrites the table (its Spark bundle named in the
   environment, which the local backend hands to each job).
4. Show each partition before and after.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JobRequest, ShowRequest, WriteOptions, WriteRequest
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.sizing import format_size
from hudi_bucket_operator.runtime.local import Echo, apply_locally, load_manifests
from hudi_bucket_operator.runtime.settings import OperatorConfig

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE, SIZED_EXAMPLE = EXAMPLES / "skewed-days.yaml", EXAMPLES / "sized-days.yaml"
# The demo's days hold megabytes, not the gigabytes a real table's do: a target to match.
SIZED_TARGET = "256Ki"
DAYS = [f"2025-11-{d:02d}" for d in range(1, 15)]
BUSY = {"2025-11-11": 12, "2025-11-10": 3}  # weight of a busy day; others weigh 1


def generate_orders(path: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    weights = np.array([BUSY.get(day, 1) for day in DAYS], dtype=float)
    rng = np.random.default_rng(1111)
    day = rng.choice(len(DAYS), size=rows, p=weights / weights.sum())
    table = pa.table(
        {
            "order_id": [f"ORD-{i:08d}" for i in range(rows)],
            "customer_id": rng.integers(1, 50_000, size=rows),
            "amount": np.round(rng.gamma(2.0, 30.0, size=rows), 2),
            "day": pa.array(np.array(DAYS)[day]),
            "updated_at": rng.integers(1_700_000_000_000, 1_760_000_000_000, size=rows),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def run_job(request: JobRequest, log: Path) -> dict[str, Any]:
    """Run `hudi-bucket-job` as the local backend does; the report comes back as a dict."""
    report = log.with_suffix(".json")
    argv = replace(request, report=str(report)).to_argv()
    with log.open("wb") as out:
        code = subprocess.call([sys.executable, "-m", "hudi_bucket", *argv], stdout=out, stderr=out)
    result: dict[str, Any] = json.loads(report.read_text())
    if code != 0:
        raise SystemExit(f"{request.kind} failed: {result.get('message')} (log: {log})")
    return result


def partition_rows(show: dict[str, Any]) -> dict[str, tuple[int | None, int, int, int]]:
    """Each partition's (buckets, file groups, rows, largest base file in bytes)."""
    return {
        p["partition"]: (p["buckets"], p["fileGroups"], p["rows"] or 0, p["largestFile"] or 0)
        for p in show["result"]["partitions"]
    }


def run_demo(
    folder: Path, rows: int, echo: Echo, *, sized: bool = False, engine: Engine = Engine.AUTO
) -> int:
    if engine is Engine.HUDI and not os.path.isfile(os.environ.get(HUDI_BUNDLE_ENV, "")):
        raise SystemExit(
            f"the Hudi engine needs Hudi's Spark bundle: {HUDI_BUNDLE_ENV} names no file "
            "(run `./dev demo --engine hudi`, which fetches it, or set it to `./dev hudi-bundle`'s output)"
        )
    if folder.exists():
        shutil.rmtree(folder)
    logs = folder / "logs"
    logs.mkdir(parents=True)
    table = (folder / "orders").resolve()
    source = folder / "source" / "orders.parquet"

    echo(f"1. generating {rows:,} orders over {len(DAYS)} days (11-11 is the busy one) -> {source}")
    generate_orders(source, rows)
    echo(f"2. creating the Hudi table {table} (bucket index, 4 buckets in every partition)")
    options = WriteOptions(
        source=str(source),
        record_key=("order_id",),
        partition_fields=("day",),
        ordering_field="updated_at",
        create=True,
        hive_style=True,
        default_buckets=4,
    )
    created = run_job(WriteRequest(table=str(table), write=options), logs / "write.log")
    echo(f"   {created['message']}")
    before = partition_rows(run_job(ShowRequest(table=str(table)), logs / "show-before.log"))

    example = SIZED_EXAMPLE if sized else EXAMPLE
    manifest = load_manifests([example])[0]
    manifest["spec"]["table"]["uri"] = str(table)
    manifest["spec"].setdefault("apply", {})["policy"] = "Automatic"
    if sized:
        manifest["spec"]["buckets"]["sizing"]["targetFileSize"] = SIZED_TARGET
    manifest["spec"]["engine"] = engine.value
    echo(f"3. reconciling {example.name} locally (plan, then apply; engine {engine.value})")
    # The demo is its own admin: its table may be where it made it (the operator allows none by default).
    config = OperatorConfig.from_env()
    jobs = config.jobs.model_copy(update={"allowed_table_uris": {"*": (str(table),)}})
    policy = replace(config.policy, jobs=jobs)
    [body] = asyncio.run(
        apply_locally([manifest], folder / "state", lambda line: echo(f"   {line}"), policy=policy)
    )
    after = partition_rows(run_job(ShowRequest(table=str(table)), logs / "show-after.log"))

    echo("4. partitions before -> after")
    echo(f"   {'partition':<16} {'rows':>9}  {'buckets':>13}  {'file groups':>13}  {'largest file':>21}")
    for partition in sorted(after):
        (b0, f0, r, l0), (b1, f1, _, l1) = before.get(partition, (None, 0, 0, 0)), after[partition]
        sizes = f"{format_size(l0):>9} -> {format_size(l1):<9}"
        echo(f"   {partition:<16} {r:>9,}  {b0 or 4:>5} -> {b1:<5}  {f0:>5} -> {f1:<5}  {sizes}")
    echo("final status:")
    echo(yaml.safe_dump({"status": body["status"]}, sort_keys=False))
    ready = next(c for c in body["status"]["conditions"] if c["type"] == "Ready")
    return 0 if ready["status"] == "True" else 1

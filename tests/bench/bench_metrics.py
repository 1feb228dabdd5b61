"""The operator's /metrics at 1,000 and 10,000 tables: how many series, how many bytes, and how long one
scrape takes to render, each count in a fresh process (its own registry, nothing else loaded).

Run: .venv/bin/python tests/bench/bench_metrics.py [--tables 1000 10000] [--out FILE]

The tables are what a day-two fleet holds: most Ready (checked, rescaled once), some awaiting approval,
a few with writers paused mid-apply, a few Stalled. Each is recorded as the leader records it after a
pass (``record_table``); the scrape is ``generate_latest`` of the process's registry, as the metrics
server renders it, timed over five renders (the median). ``--out`` writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ONE_COUNT = """
import json, statistics, sys, time
from prometheus_client import REGISTRY, generate_latest
from hudi_bucket_operator.resource.schedule import Schedule
from hudi_bucket_operator.resource.table_status import TableStatus
from hudi_bucket_operator.runtime import metrics

tables = int(sys.argv[1])
samples = json.loads(sys.argv[2])
daily = Schedule.parse("@daily")
for i in range(tables):
    metrics.record_table("lake-%d" % (i % 50), "table-%d" % i, TableStatus.of(samples[i % len(samples)]), daily)
times = []
for _ in range(5):
    began = time.perf_counter()
    text = generate_latest(REGISTRY)
    times.append(time.perf_counter() - began)
series = sum(1 for line in text.splitlines() if line and not line.startswith(b"#"))
print(json.dumps({"tables": tables, "series": series, "bytes": len(text),
                  "render_seconds": statistics.median(times)}))
"""

READY = {
    "phase": "Ready",
    "conditions": [{"type": "Ready", "status": "True", "reason": "Applied", "message": "",
                    "lastTransitionTime": "2026-11-24T01:00:00Z"}],
    "layout": {"checkedAt": "2026-11-24T11:00:00Z", "violations": 0, "fileGroups": 10,
               "largestFileGroupBytes": 300 * 2**20, "medianFileGroupBytes": 125 * 2**20},
    "history": [{"job": "t-apply-1", "planId": "sha256:" + "3f9a" * 16, "partitions": 2, "rows": 1200,
                 "seconds": 42.4, "outcome": "Succeeded", "finished": "2026-11-24T01:00:00Z",
                 "writersDowntimeSeconds": 61.0}],
    "writers": {"last": {"pausedAt": "2026-11-24T00:59:00Z", "resumedAt": "2026-11-24T01:00:01Z",
                         "downtimeSeconds": 61.0, "writers": ["Deployment/ingest"]}},
}  # fmt: skip
AWAITING = {
    "phase": "AwaitingApproval",
    "conditions": [{"type": "Ready", "status": "False", "reason": "AwaitingApproval", "message": "",
                    "lastTransitionTime": "2026-11-24T09:30:00Z"}],
    "plan": {"id": "sha256:" + "4b8d" * 16, "plannedAt": "2026-11-24T09:30:00Z", "partitions": 3},
}  # fmt: skip
APPLYING = {
    "phase": "Applying",
    "writers": {"step": "Applying", "planId": "sha256:" + "3f9a" * 16, "generation": 3, "retryToken": "",
                "checkRecords": False, "pausedAt": "2026-11-24T11:45:00Z",
                "applyDeadline": "2026-11-24T17:45:00Z", "items": []},
}  # fmt: skip
STALLED = {
    "phase": "Stalled",
    "conditions": [{"type": "Ready", "status": "False", "reason": "JobFailed", "message": "failed",
                    "lastTransitionTime": "2026-11-24T11:00:00Z"}],
}  # fmt: skip
# Out of every 20 tables: 16 Ready, 2 awaiting approval, 1 applying, 1 Stalled.
FLEET = [READY] * 16 + [AWAITING] * 2 + [APPLYING, STALLED]


def measure(tables: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", ONE_COUNT, str(tables), json.dumps(FLEET)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--out", type=Path, help="write the figures here, as JSON")
    args = parser.parse_args()
    rows = []
    for tables in args.tables:
        began = time.perf_counter()
        figures = measure(tables)
        figures["wall_seconds"] = round(time.perf_counter() - began, 1)
        rows.append(figures)
        print(
            f"{tables:>6} tables: {figures['series']:>7} series ({figures['series'] / tables:.1f} a table), "
            f"{figures['bytes'] / 2**20:.1f} MiB, rendered in {figures['render_seconds']:.2f} s"
        )
    if args.out:
        args.out.write_text(json.dumps({"median_of": 5, "runs": rows}, indent=2) + "\n")
    print(statistics.mean(r["series"] / r["tables"] for r in rows), "series a table on average")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The operator at 1,000 tables, on the real control plane of the end-to-end tests (tests/e2e).

Run: .venv/bin/python tests/bench/bench_operator.py [--tables 1000] [--batch 50] [--settle 30]
     [--restart-jobs 100] [--also N]
About 3 minutes on 2 cores for 1,000 tables (``--also 9000`` adds the figure at 10,000 tables, about 10
minutes more). No Spark Operator runs: every SparkApplication stays unstarted, so only the operator is
measured (the restart phase marks some of them RUNNING by hand, as the Spark Operator would).

The operator is `hudi-bucket-operator run` as a real process, watching one namespace, with a
ServiceAccount of its own (bound to cluster-admin: RBAC is not what is measured here) so that the API
server's audit log tells its requests apart. What it prints:

1. created -> first SparkApplication: tables are POSTed ``--batch`` at a time (concurrently), batch after
   batch. By the API server's clock (its audit log: the table's POST answered, the job's POST answered):
   p50/p90/p99/max, and when the last one came after the last POST; then as a watch in the bench saw them.
2. Nothing changing, over ``--settle`` seconds after the burst drained: the operator's API requests per
   second (watches excluded: they are long-lived streams), its CPU (of one core) and RSS.
3. A restart with ``--restart-jobs`` jobs running: SIGKILL, start again; how long until every table's
   status is right again (the running ones Running, the others Pending), and the SparkApplications
   counted: a duplicate would be a second job for one table.
4. Tables carrying a finalizer (none should), and, with ``--also``, RSS at the larger count.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[1] / "e2e")]  # tests/, tests/e2e/

from kubernetes import client  # noqa: E402
from operator_kit import (  # noqa: E402
    APPS,
    GROUP,
    PLURAL,
    VERSION,
    AppWatch,
    Operator,
    count_kinds,
    cpu_seconds,
    until_served,
)

from control_plane import AuditEvent, ControlPlane, ensure_binaries  # noqa: E402
from lib.paths import K8S_FIXTURES, REPO  # noqa: E402

NAMESPACE = "bench"
# Measured before this design (issue 12): a timer per table, one LIST per table per 10 s poll.
OLD = {
    "p50": "4.4 s",
    "p99": "6.6 s",
    "last": "14.7 s after the first POST",
    "rps": "about 106",
    "cpu": "10%",
    "rss": "193 MiB",
    "finalizers": "1,000 of 1,000",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--settle", type=float, default=30.0)
    parser.add_argument("--restart-jobs", type=int, default=100)
    parser.add_argument("--also", type=int, default=0, help="then create this many more, for RSS")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-operator-"))
    plane = ControlPlane(ensure_binaries(), work / "control-plane")
    plane.start()
    try:
        run(plane, work, args)
    finally:
        plane.stop()


def run(plane: ControlPlane, work: Path, args: argparse.Namespace) -> None:
    api = plane.api_client()
    custom = client.CustomObjectsApi(api)
    setup = [
        ("apply", "--server-side", "-f", str(REPO / "crds")),
        ("apply", "--server-side", "-f", str(K8S_FIXTURES / "sparkoperator.k8s.io_sparkapplications.yaml")),
        ("create", "namespace", NAMESPACE),
        ("create", "serviceaccount", "operator", "-n", NAMESPACE),
        ("create", "clusterrolebinding", "bench-operator", "--clusterrole=cluster-admin",
         f"--serviceaccount={NAMESPACE}:operator"),
    ]  # fmt: skip
    for command in setup:
        plane.kubectl(*command)
        if command[0] == "apply":  # served only once established: watches would get 404 before
            until_served(custom, command[-1])
    user = f"system:serviceaccount:{NAMESPACE}:operator"
    kubeconfig = plane.kubeconfig_for_token(
        plane.token_for(NAMESPACE, "operator"), work / "operator.kubeconfig"
    )

    first_app = AppWatch(custom, NAMESPACE).start()
    operator = Operator(kubeconfig, work / "operator.log", NAMESPACE)
    time.sleep(3)  # Kopf lists the (empty) namespace and starts its watches

    server_pids = [pid for name, pid in plane.pids().items() if name in ("kube-apiserver", "etcd")]
    server_cpu = sum(cpu_seconds(pid) for pid in server_pids)
    burst_cpu, burst_began, burst_audit = operator.cpu_seconds(), time.monotonic(), len(plane.audit_events())
    created, last_post = create_tables(custom, 0, args.tables, args.batch)
    posting = last_post - burst_began
    first_app.wait_for(set(created), timeout=300)
    burst = {
        "posting": posting,
        "cpu": operator.cpu_seconds() - burst_cpu,
        "server_cpu": sum(cpu_seconds(pid) for pid in server_pids) - server_cpu,
        "wall": time.monotonic() - burst_began,
        "calls": count_kinds([e for e in plane.audit_events()[burst_audit:] if e.user == user]),
    }
    latency, last_after = server_latencies(plane.audit_events()[burst_audit:], user)
    watched = sorted(first_app.seen[name] - created[name] for name in created)
    quiet(custom, seconds=5)

    cpu0, t0, audit0 = operator.cpu_seconds(), time.monotonic(), len(plane.audit_events())
    time.sleep(args.settle)
    elapsed = time.monotonic() - t0
    calls = [e for e in plane.audit_events()[audit0:] if e.user == user and e.verb != "watch"]
    steady = {
        "rps": len(calls) / elapsed,
        "cpu": (operator.cpu_seconds() - cpu0) / elapsed,
        "rss": operator.rss_mib(),
        "kinds": count_kinds(calls),
    }

    restart = restart_with_running_jobs(custom, operator, kubeconfig, work, args.restart_jobs)
    operator = restart.pop("operator")
    finalizers = sum(
        1 for t in custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)["items"]
        if t["metadata"].get("finalizers")
    )  # fmt: skip

    big = None
    if args.also:
        more, _ = create_tables(custom, args.tables, args.also, args.batch)
        first_app.wait_for(set(more), timeout=3600)
        quiet(custom, seconds=10)
        big = (args.tables + args.also, operator.rss_mib())
    operator.stop()
    first_app.stop()

    report(args, latency, last_after, watched, burst, steady, restart, finalizers, big)


def server_latencies(events: list[AuditEvent], operator: str) -> tuple[list[float], float]:
    """Each table's created -> first SparkApplication by the API server's clock (its audit log: when it
    answered the table's POST, when it answered the operator's POST of the job), and the last job after
    the last table. A watching client's clock adds its own lag: under load the bench's 50 POSTing threads
    and its watch share one interpreter, which is not the operator's delay."""
    tables, jobs = {}, {}
    for event in events:
        if event.verb != "create" or event.stage != "ResponseComplete" or event.name is None:
            continue
        if event.resource == PLURAL:
            tables[event.name] = event.answered_at
        elif event.resource == APPS[2] and event.user == operator:
            table = event.name.rsplit("-", 2)[0]  # <table>-<kind>-<hash>
            jobs[table] = min(jobs.get(table, float("inf")), event.answered_at)
    latency = sorted(jobs[name] - tables[name] for name in tables)
    return latency, max(jobs.values()) - max(tables.values())


def create_tables(custom: client.CustomObjectsApi, start: int, count: int, batch: int) -> tuple[dict, float]:
    """POST tables ``batch`` at a time; each table's time is when its POST returned."""
    created: dict[str, float] = {}

    def post(i: int) -> None:
        name = f"t{i:05d}"
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "HudiBucketTable",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                "table": {"uri": f"s3a://bench/{name}"},
                "buckets": {
                    "default": 4,
                    "currentBuckets": 4,
                    "rules": [{"pattern": "11-11", "buckets": 16}],
                },
            },
        }
        custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, body)
        created[name] = time.monotonic()

    with concurrent.futures.ThreadPoolExecutor(batch) as pool:
        for first in range(start, start + count, batch):
            list(pool.map(post, range(first, min(first + batch, start + count))))
    return created, max(created.values())


def quiet(custom: client.CustomObjectsApi, seconds: float) -> None:
    """Until no table's status changed for ``seconds``."""
    last, since = None, time.monotonic()
    while time.monotonic() - since < seconds:
        version = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)["metadata"][
            "resourceVersion"
        ]
        if version != last:
            last, since = version, time.monotonic()
        time.sleep(1)


def restart_with_running_jobs(
    custom: client.CustomObjectsApi, operator: Operator, kubeconfig: Path, work: Path, running: int
) -> dict[str, Any]:
    apps = custom.list_namespaced_custom_object(*APPS[:2], NAMESPACE, APPS[2])["items"]
    started = {a["metadata"]["name"] for a in apps[:running]}
    operator.kill()
    for name in started:  # as the Spark Operator would, while ours is down
        status = {"applicationState": {"state": "RUNNING"}, "driverInfo": {}}
        custom.patch_namespaced_custom_object_status(*APPS[:2], NAMESPACE, APPS[2], name, {"status": status})
    began = time.monotonic()
    operator = Operator(kubeconfig, work / "operator.log", NAMESPACE)

    by_app = {
        a["metadata"]["name"]: a["metadata"]["annotations"]["hudi.bucketops.io/table-name"] for a in apps
    }
    want = {by_app[name]: "Running" for name in started}

    def wrong() -> dict[str, Any]:
        tables = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)["items"]
        phases = {
            t["metadata"]["name"]: (t.get("status") or {}).get("lastJob", {}).get("phase") for t in tables
        }
        return {name: phase for name, phase in phases.items() if phase != want.get(name, "Pending")}

    while mismatched := wrong():
        if time.monotonic() - began > 120:
            print(f"after 120 s, {len(mismatched)} statuses are wrong, e.g. {list(mismatched.items())[:3]}")
            break
        time.sleep(0.25)
    seconds = time.monotonic() - began
    after = custom.list_namespaced_custom_object(*APPS[:2], NAMESPACE, APPS[2])["items"]
    per_table: dict[str, int] = {}
    for app in after:
        table = app["metadata"]["annotations"]["hudi.bucketops.io/table-name"]
        per_table[table] = per_table.get(table, 0) + 1
    return {
        "operator": operator,
        "seconds": seconds,
        "duplicates": sum(n - 1 for n in per_table.values()),
        "apps": len(after),
    }


def report(
    args: argparse.Namespace,
    latency: list[float],
    last_after: float,
    watched: list[float],
    burst: dict[str, float],
    steady: dict[str, Any],
    restart: dict[str, Any],
    finalizers: int,
    big: tuple[int, float] | None,
) -> None:
    def pct(p: float, of: list[float] = latency) -> float:
        return of[min(len(of) - 1, round(p / 100 * (len(of) - 1)))]

    n = args.tables
    rows = [
        ("created -> first SparkApplication, p50", f"{pct(50):.2f} s", OLD["p50"]),
        ("  p90 / p99 / max", f"{pct(90):.2f} / {pct(99):.2f} / {latency[-1]:.2f} s", f"p99 {OLD['p99']}"),
        ("  the last one, after the last POST", f"{last_after:.2f} s", OLD["last"]),
        (
            "  as the bench's watch saw them, p50 / p99",
            f"{pct(50, watched):.2f} / {pct(99, watched):.2f} s",
            "-",
        ),
        ("  POSTing them took", f"{burst['posting']:.1f} s", "7.7 s"),
        (
            "  operator CPU from the first POST to the last app",
            f"{burst['cpu']:.1f} s in {burst['wall']:.1f} s",
            "-",
        ),
        ("  API server and etcd CPU, the same span", f"{burst['server_cpu']:.1f} s", "-"),
        ("API requests/s, nothing changing", f"{steady['rps']:.2f}", OLD["rps"]),
        ("operator CPU, nothing changing", f"{steady['cpu'] * 100:.1f}% of a core", OLD["cpu"]),
        (f"operator RSS at {n} tables", f"{steady['rss']:.0f} MiB", OLD["rss"]),
        (
            f"restart with {args.restart_jobs} jobs running: statuses right after",
            f"{restart['seconds']:.1f} s",
            "-",
        ),
        ("  duplicate SparkApplications", f"{restart['duplicates']} (of {restart['apps']})", "-"),
        ("tables carrying a finalizer", f"{finalizers} of {n}", OLD["finalizers"]),
    ]
    if big is not None:
        rows.append((f"operator RSS at {big[0]} tables", f"{big[1]:.0f} MiB", "-"))
    width = max(len(r[0]) for r in rows)
    print(
        f"\n{n} tables POSTed {args.batch} at a time; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(f"{'':{width}}  {'this design':>22}  {'before (issue 12)':>26}")
    for label, new, old in rows:
        print(f"{label:{width}}  {new:>22}  {old:>26}")
    print(f"operator requests during the burst: {burst['calls']}")
    print(f"operator requests while nothing changed: {steady['kinds'] or 'none'}")
    print(
        json.dumps(
            {
                "latency_p50": pct(50),
                "latency_p99": pct(99),
                "watched_p99": pct(99, watched),
                "burst": burst,
                "steady": steady,
            }
        )
    )


if __name__ == "__main__":
    main()

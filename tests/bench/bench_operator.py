"""The operator under load: 1,000 HudiBucketTables created at once, against kmock, in one process.

Run: .venv/bin/python tests/bench/bench_operator.py [--tables N] [--batch B] [--pause S] [--poll S]
     [--settle K] [--profile] [--tracemalloc] [--same-loop] [--plain-kmock] [--json PATH]
1,000 tables take about a minute on 2 idle cores (3 to 4 when other work shares them): the control run,
the creation burst (about 15 s), a drain, then --settle poll intervals of steady state (30 s). --tables
100 --poll 5 --settle 1 takes about 15 seconds. A standalone script: pytest does not collect it.

The parties, as tests/operator/test_operator.py sets them up: kmock's KubernetesEmulator behind
kmock.Server (as kmock's pytest fixture builds them), the five resources declared as the ``cluster``
fixture declares them, and Kopf started with ``kopf.operator(clusterwide=True, standalone=True,
stop_flag=...)`` on this process's main event loop, handlers.CONFIG pointed at kmock. kmock runs in a
thread of its own, with its own event loop: in a cluster the API server is another process, and on one
loop its work (serving every request and streaming every watch event, in Python) queues in front of the
operator's (``--same-loop`` puts it on the operator's loop, as the tests do). The load generator, which
POSTs the tables like Argo CD would, runs on kmock's loop too.

What it prints, in one run:

1. Reconcile latency, from the moment kmock stored a table (and sent its ADDED event) to the moment it
   stored the table's plan SparkApplication: p50/p90/p99/max over all tables, split into "stored -> Kopf
   reads the ADDED event" (watch delivery), "read -> the first reconcile pass starts" (Kopf's queueing),
   and "first pass -> app stored" (list the table's apps, create the report ConfigMap, create the app).
   Tables are POSTed ``--batch`` at a time (concurrently), batch after batch (``--pause``: at most one
   batch every PAUSE seconds). Creation is driven by the watch event (``@kopf.on.event``), not by the
   timer (HBO_RESYNC_SECONDS, default 10 like the chart's resyncSeconds), which matters for the steady state.
2. For each phase (creation, drain, steady state): CPU of the operator's thread and of kmock's thread
   (thread CPU clocks, so the API server's cost is apart from the operator's), how busy the operator's
   event loop was and how much of that it waited for a CPU or the GIL, event-loop lag, reconcile passes,
   watch events, every request kind with its rate and outcome (no-op patches, 422s), log records.
3. Memory: VmRSS. Kopf, kmock and this script share the process, so the RSS is also taken before Kopf
   starts, and a control run in a child process (same imports, kmock holding the same tables, no
   operator) gives "kmock holding N objects": the operator's share is the difference. kmock also grows
   while the operator runs (the children, and every version of every object, which kmock keeps), so an
   adjusted share also subtracts that growth, sized object by object (Python-level sizes: an estimate).
4. Steady state: after every table has its plan job and the creation burst drained (no write for 2 s),
   ``--settle`` poll intervals: RSS at the end, and what one poll round costs.

kmock 0.8 differs from a real API server in ways that would otherwise be what is measured; unless
``--plain-kmock``, the emulator here behaves like the API server on those points (see BenchEmulator):
label selectors on lists, resourceVersions, no-op patches, Events, and its request log.

``--profile`` profiles both threads in CPU time and charges standard-library time to the calling
package; ``--tracemalloc`` attributes the live heap at steady state to packages (both slow the run).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import cProfile
import ctypes
import dataclasses
import gc
import io
import json
import logging
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import types
from collections.abc import Callable
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000, help="HudiBucketTables to create (1000)")
    parser.add_argument("--batch", type=int, default=50, help="concurrent POSTs per batch (50)")
    parser.add_argument(
        "--pause", type=float, default=0.0, help="start a batch at most every PAUSE seconds (0: at once)"
    )
    parser.add_argument("--poll", type=float, default=10.0, help="HBO_RESYNC_SECONDS: the timer interval (10)")
    parser.add_argument("--settle", type=int, default=3, help="poll intervals of steady state (3)")
    parser.add_argument("--timeout", type=float, default=240.0, help="give up waiting for apps after (s)")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["INFO", "WARNING"],
        help="the root log level, as `kopf run` (INFO) or `kopf run --quiet` (WARNING) sets it (INFO); "
        "Kopf logs every handler run at INFO",
    )
    parser.add_argument(
        "--plain-kmock", action="store_true", help="kmock 0.8 as is (see the module doc; use few tables)"
    )
    parser.add_argument(
        "--same-loop", action="store_true", help="run kmock on the operator's event loop (as the tests do)"
    )
    parser.add_argument("--keep-request-log", action="store_true", help="let kmock keep every request")
    parser.add_argument("--profile", action="store_true", help="cProfile the run; CPU time by package")
    parser.add_argument(
        "--profile-out", metavar="PREFIX", help="with --profile: also dump PREFIX.{operator,kmock}.pstats"
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="trace allocations from the operator's start; live heap by package at steady state (slow)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--control", action="store_true", help=argparse.SUPPRESS)  # the child process
    return parser.parse_args(argv)


ARGS = parse_args()
# Kopf fixes the timer interval when the handlers module is imported: set it first.
os.environ["HBO_RESYNC_SECONDS"] = str(ARGS.poll)
os.environ["HBO_METRICS_PORT"] = "0"

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: shared test data

import aiohttp  # noqa: E402
import aiohttp.web  # noqa: E402
import kmock  # noqa: E402
import kopf  # noqa: E402
from kmock._internal import dicts as kmock_dicts  # noqa: E402  (kmock's own patch semantics)
from kopf._cogs.clients import watching as kopf_watching  # noqa: E402  (timing its watch stream)

from hbt_resources import APPS, CONFIG_MAPS, SPEC, TABLES, VERBS  # noqa: E402
from hudi_bucket_operator import handlers, naming  # noqa: E402

NAMESPACE = "lake"


# -- measuring ----------------------------------------------------------------------------------------


def rss_kib(field: str = "VmRSS") -> int:
    """Resident memory of this process (KiB), from /proc; ru_maxrss (the peak) where there is no /proc."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def settled_rss_kib() -> int:
    gc.collect()
    return rss_kib()


_MALLINFO2_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (*_MALLINFO2_FIELDS, "fordblks", "keepcost")]


def _is_socket(fd: str) -> bool:
    with contextlib.suppress(OSError):
        return os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return False


def heap_kib() -> dict[str, int]:
    """Where the heap is: pymalloc's arenas (in use by objects, or held), glibc malloc (in use, free but
    kept). What is held or kept but not in use is memory the burst needed and the process did not give
    back. Empty where glibc's mallinfo2 is missing."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:  # _debugmallocstats writes to the C stderr
        os.dup2(captured.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        text = captured.read().decode(errors="replace")
    numbers = {}
    for line in text.splitlines():
        if "=" in line:
            name, _, value = line.rpartition("=")
            with contextlib.suppress(ValueError):
                numbers[name.strip("# ").strip()] = int(value.strip().replace(",", ""))
    arenas = next((v for k, v in numbers.items() if "bytes/arena" in k), 0)
    return {
        "sockets": sum(1 for fd in os.listdir("/proc/self/fd") if _is_socket(fd)),
        "pymalloc_used": numbers.get("bytes in allocated blocks", 0) // 1024,
        "pymalloc_arenas": arenas // 1024,
        "malloc_used": (info.uordblks + info.hblkhd) // 1024,
        "malloc_free": info.fordblks // 1024,
    }


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_SIZED = (dict, list, tuple, set, frozenset, str, bytes, int, float, bool, type(None))


def deep_size(*roots: Any) -> int:
    """Bytes held by plain data and kmock's own containers reachable from roots (each object once)."""
    seen: set[int] = set()
    stack = list(roots)
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        kind = type(obj)
        if not (isinstance(obj, _SIZED) or kind.__module__.startswith("kmock")):
            continue
        if isinstance(obj, type | types.ModuleType | types.FunctionType | types.MethodType):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def _owner(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/", maxsplit=1)[0].split(".", maxsplit=1)[0]
    if "hudi_bucket_operator" in filename:
        return "hudi_bucket_operator"
    if "hudi_bucket" in filename:
        return "hudi_bucket"
    if filename.endswith("bench_operator.py"):
        return "this bench"
    return ""  # the standard library: charged to its caller


def heap_by_package(top: int = 12) -> list[tuple[str, int, int]]:
    """Live traced memory, charged to the innermost frame outside the standard library."""
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    sizes: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    for stat in snapshot.statistics("traceback"):
        owner = "stdlib (no caller traced)"
        for frame in reversed(stat.traceback):  # innermost first
            name = _owner(frame.filename)
            if name:
                owner = f"{name} ({os.path.basename(frame.filename)}:{frame.lineno})"
                break
        sizes[owner] += stat.size
        counts[owner] += stat.count
    by_package: collections.Counter[str] = collections.Counter()
    for owner, size in sizes.items():
        by_package[owner.split(" ")[0]] += size
    return [(k, v, 0) for k, v in by_package.most_common()] + [
        (k, v, counts[k]) for k, v in sizes.most_common(top)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def mib(kib: float) -> str:
    return f"{kib / 1024:7.1f} MiB"


# -- the API server -----------------------------------------------------------------------------------


def _selector_terms(selector: str) -> list[tuple[str, str]] | None:
    """``k=v,k2==v2`` as pairs; None for anything else (set-based, !=, existence)."""
    terms = []
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term or "=" not in term or " in " in term or " notin " in term:
            return None
        key, value = term.replace("==", "=").split("=", 1)
        terms.append((key.strip(), value.strip()))
    return terms


class BenchEmulator(kmock.KubernetesEmulator):
    """kmock's emulator, timed and counted; unless --plain-kmock, closer to a real API server:

    - lists honour equality ``labelSelector``s through a label index (kmock ignores selectors and
      answers every object of the resource; a real API server filters server-side, in its watch cache);
    - a create, get, patch or delete finds its object by key (kmock scans its whole store for it);
    - every write bumps ``metadata.resourceVersion`` (kmock never changes it), so a JSON patch whose
      ``test`` of the resourceVersion is stale fails with 422, as Kopf's finalizer patches expect;
    - a patch that changes nothing is answered with the object, neither stored as a new version nor
      sent to watchers (kmock stores and announces it);
    - Events (``generateName``) are answered 201 and not stored (kmock keys them all by name None and
      answers 409 after the first);
    - a served request is dropped from kmock's request logs: kmock keeps every request (with its aiohttp
      request, body and parsed JSON) and matches each new one against all of them, which makes serving
      quadratic in the number of requests (--keep-request-log keeps them).
    """

    def bench_setup(self, realistic: bool, keep_log: bool) -> None:
        self.realistic = realistic
        self.keep_log = keep_log
        self.resource_version = 1000
        self.table_created: dict[str, float] = {}  # table uid -> when the API server stored it
        self.app_created: dict[str, float] = {}  # table uid -> when its first SparkApplication was created
        self.apps_per_table: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()  # "VERB plural" -> requests
        self.call_seconds: collections.Counter[str] = collections.Counter()  # wall time, server side
        self.statuses: collections.Counter[str] = collections.Counter()  # "VERB plural status"
        self.noops: collections.Counter[str] = collections.Counter()  # patches that changed nothing
        self.regressions = 0  # status writes that put back a status the object had before
        self.selects = 0  # label-selected lists served from the index
        self.select_seconds = 0.0
        # (plural, namespace, label, value) -> object keys; and each key's entries, to update them
        self.index: dict[tuple[str, str, str, str], set[Any]] = collections.defaultdict(set)
        self.indexed: dict[Any, list[tuple[str, str, str, str]]] = {}

    @staticmethod
    def _key(raw: aiohttp.web.BaseRequest) -> str:
        parts = raw.path.strip("/").split("/")
        plural = next((p for p in reversed(parts) if p in PLURALS), parts[-1] if parts else "")
        verb = raw.method
        if raw.method == "GET":
            verb = (
                "WATCH" if raw.query.get("watch") == "true" else ("LIST" if parts[-1] in PLURALS else "GET")
            )
        if raw.method == "PATCH" and parts[-1] == "status":
            plural += "/status"
        return f"{verb} {plural}"

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        key = self._key(raw_request)
        self.calls[key] += 1
        started = time.perf_counter()
        response = await super().__call__(raw_request)
        if not key.startswith("WATCH"):
            self.call_seconds[key] += time.perf_counter() - started
            self.statuses[f"{key} {response.status}"] += 1
        return response

    def _next_resource_version(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        try:
            return await self._handle_as_api_server(request)
        finally:
            if not self.keep_log:
                self.forget(request)

    async def _handle_as_api_server(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        plural = request.resource.plural if request.resource is not None else None
        action = request.action
        if self.realistic and request.resource is not None:
            if plural == "events" and action == kmock.action.CREATE:
                return aiohttp.web.json_response(request.data, status=201)
            if action == kmock.action.CREATE and isinstance(request.data, dict):
                metadata = request.data.setdefault("metadata", {})
                metadata["resourceVersion"] = self._next_resource_version()
            elif action == kmock.action.UPDATE and request.name is not None:
                unchanged = self._unchanged(request)
                if unchanged is not None:
                    self.noops[f"PATCH {plural}" + ("/status" if request.subresource else "")] += 1
                    return aiohttp.web.json_response(unchanged)
        response = await super()._handle(request)
        if self.realistic and action in (kmock.action.CREATE, kmock.action.UPDATE, kmock.action.DELETE):
            name = request.name or (request.data or {}).get("metadata", {}).get("name")
            namespace = request.namespace or (request.data or {}).get("metadata", {}).get("namespace")
            self._reindex((request.resource, namespace, name))
        if action == kmock.action.CREATE and response.status < 400:
            if plural == "hudibuckettables":  # stored, and its ADDED event sent to watchers
                self.table_created.setdefault(request.data["metadata"]["uid"], time.perf_counter())
            elif plural == "sparkapplications":
                uid = request.data["metadata"]["labels"][naming.TABLE_UID_LABEL]
                self.app_created.setdefault(uid, time.perf_counter())
                self.apps_per_table[uid] += 1
        return response

    def _unchanged(self, request: kmock.Request) -> dict[str, Any] | None:
        """The stored object if the patch would not change it; else bumps the patch's resourceVersion."""
        key = (request.resource, request.namespace, request.name)
        if key not in self._objects or self._objects[key].deleted:
            return None  # kmock answers 404
        obj = self._objects[key]
        current = obj.raw
        patch = request.data
        stored = (current.get("metadata") or {}).get("resourceVersion")
        tests = [op for op in patch if op.get("op") == "test"] if isinstance(patch, list) else []
        if any(op.get("path") == "/metadata/resourceVersion" and op.get("value") != stored for op in tests):
            raise kmock.KubernetesError(status=422, reason="Invalid", message=f"resourceVersion is {stored}")
        try:
            patched = kmock_dicts.patch_dict(current, patch)
        except Exception:  # let kmock answer it as it would
            return None
        if patched == current:
            return current
        status = patched.get("status")
        older = list(obj.history)[:-1]
        if status != current.get("status") and any(
            v is not None and v.get("status") == status for v in older
        ):
            self.regressions += 1
        version = self._next_resource_version()
        if isinstance(patch, list):
            patch.append({"op": "replace", "path": "/metadata/resourceVersion", "value": version})
        elif isinstance(patch, dict) and isinstance(patch.get("metadata", {}), dict):
            patch.setdefault("metadata", {})["resourceVersion"] = version
        return None

    def _reindex(self, key: Any) -> None:
        for entry in self.indexed.pop(key, []):
            self.index[entry].discard(key)
        if key not in self._objects or self._objects[key].deleted:
            return
        resource, namespace, _ = key
        labels = (self._objects[key].raw.get("metadata") or {}).get("labels") or {}
        entries = [(resource.plural, namespace, k, v) for k, v in labels.items()]
        for entry in entries:
            self.index[entry].add(key)
        self.indexed[key] = entries

    async def _serve_list(self, request: kmock.Request) -> Any:
        terms = _selector_terms(request.params.get("labelSelector", ""))
        if not (self.realistic and terms and request.namespace):
            return await super()._serve_list(request)
        async with self._lock:
            started = time.perf_counter()  # no await below: CPU time of the lookup and the copy
            plural, namespace = request.resource.plural, request.namespace
            (label, value), rest = terms[0], terms[1:]
            items = []
            for key in self.index.get((plural, namespace, label, value), ()):
                raw = self._objects[key].raw
                labels = raw.get("metadata", {}).get("labels") or {}
                if all(labels.get(k) == v for k, v in rest):
                    items.append(raw)
            self.select_seconds += time.perf_counter() - started
            self.selects += 1
        return {"metadata": {"resourceVersion": "..."}, "items": items}

    # kmock finds the object of every create, get, patch and delete by scanning its whole store
    # (KubernetesEmulator.__get_objs); an API server looks it up by key. So does the emulator here.

    def _stored(self, request: kmock.Request) -> Any:
        data = request.data if isinstance(request.data, dict) else {}
        namespace = request.namespace or data.get("metadata", {}).get("namespace")
        name = request.name or data.get("metadata", {}).get("name")
        key = (request.resource, namespace, name)
        return self._objects[key] if key in self._objects else None  # noqa: SIM401 - no .get()

    async def _serve_fetch(self, request: kmock.Request) -> Any:
        if not self.realistic:
            return await super()._serve_fetch(request)
        obj = self._stored(request)
        if obj is None or obj.deleted:
            raise kmock.KubernetesObjectNotFoundError()
        return obj.raw

    async def _serve_create(self, request: kmock.Request) -> Any:
        obj = self._stored(request) if self.realistic else None
        return obj.raw if obj is not None else await super()._serve_create(request)

    async def _serve_update(self, request: kmock.Request) -> Any:
        obj = self._stored(request) if self.realistic else None
        return obj.last.raw if obj is not None else await super()._serve_update(request)

    async def _serve_delete(self, request: kmock.Request) -> Any:
        obj = self._stored(request) if self.realistic else None
        return obj.last.raw if obj is not None else await super()._serve_delete(request)

    def linear_scan_seconds(self, plural: str, namespace: str, label: str, value: str) -> float:
        """What one label-selected list costs as a linear scan of kmock's store (kmock's own way)."""
        started = time.perf_counter()
        _ = [
            obj.raw
            for (res, ns, _), obj in self._objects.items()
            if res.plural == plural
            and ns == namespace
            and not obj.deleted
            and (obj.raw.get("metadata", {}).get("labels") or {}).get(label) == value
        ]
        return time.perf_counter() - started

    def forget(self, request: kmock.Request) -> None:
        """Drop a served request from kmock's logs (by identity: kmock's Request.__eq__ is a matcher)."""
        for log in (self._requests, *(payload._requests for payload in self._payloads)):
            for index in range(len(log) - 1, -1, -1):
                if log[index] is request:
                    del log[index]
                    break


PLURALS = {"hudibuckettables", "sparkapplications", "configmaps", "events", "namespaces"}


def declare_resources(api: BenchEmulator) -> None:
    """As tests/operator/test_operator.py's `cluster` fixture declares them."""
    api.resources[TABLES] = kmock.ResourceInfo(
        kind="HudiBucketTable", namespaced=True, verbs=VERBS, subresources={"status"}
    )
    api.resources[APPS] = kmock.ResourceInfo(kind="SparkApplication", namespaced=True, verbs=VERBS)
    api.resources[CONFIG_MAPS] = kmock.ResourceInfo(kind="ConfigMap", namespaced=True, verbs=VERBS)
    api.resources["v1/events"] = kmock.ResourceInfo(kind="Event", namespaced=True, verbs={"create"})
    api.resources["v1/namespaces"] = kmock.ResourceInfo(
        kind="Namespace", namespaced=False, verbs={"list", "watch"}
    )


def table_uid(index: int) -> str:
    return f"7c0b7d53-5bd1-4b8e-9f1a-{index:012d}"


def table_body(index: int) -> dict[str, Any]:
    return {
        "apiVersion": "hudi.bucketops.io/v1alpha1",
        "kind": "HudiBucketTable",
        "metadata": {
            "name": f"orders-{index:05d}",
            "namespace": NAMESPACE,
            "uid": table_uid(index),
            "generation": 1,
            "resourceVersion": "1",  # kmock does not assign one; Kopf's patches need it
            "labels": {"argocd.argoproj.io/instance": "lake"},
            "annotations": {},
        },
        "spec": {**SPEC, "table": {"uri": f"s3a://lake/warehouse/orders_{index:05d}"}},
    }


async def create_tables(
    http: aiohttp.ClientSession, count: int, batch: int, created: dict[str, float], rtts: list[float]
) -> None:
    path = f"/apis/hudi.bucketops.io/v1alpha1/namespaces/{NAMESPACE}/hudibuckettables"

    async def one(index: int) -> None:
        sent = time.perf_counter()
        async with http.post(path, json=table_body(index)) as response:
            assert response.status < 400, await response.text()
            await response.read()
        done = time.perf_counter()
        created[table_uid(index)] = done
        rtts.append(done - sent)

    for start in range(0, count, batch):
        begun = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(start, min(start + batch, count))))
        await asyncio.sleep(max(0.0, ARGS.pause - (time.perf_counter() - begun)))


class ApiServer:
    """kmock in a thread of its own, with its own event loop: the API server is another party, as in a
    cluster, so its work does not queue on the operator's event loop (it still shares the process,
    its memory and the GIL). The load generator (the table POSTs, like Argo CD) runs there too."""

    def __init__(self, same_loop: bool = False) -> None:
        self.same_loop = same_loop
        self.ready = threading.Event()
        self.profiler = cProfile.Profile(time.thread_time) if ARGS.profile and not same_loop else None
        self.thread: threading.Thread | None = None

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.done = asyncio.Event()
        if self.profiler is not None:
            self.profiler.enable()
        try:
            async with BenchEmulator() as api, kmock.Server(api):
                api.bench_setup(realistic=not ARGS.plain_kmock, keep_log=ARGS.keep_request_log)
                declare_resources(api)
                self.api = api
                self.url = str(api.url).rstrip("/")
                self.http = aiohttp.ClientSession(base_url=self.url)
                self.ready.set()
                await self.done.wait()
                await self.http.close()
        finally:
            if self.profiler is not None:
                self.profiler.disable()

    async def start(self) -> None:
        if self.same_loop:  # --same-loop: kmock on the operator's loop, as the pytest fixture runs it
            self.task = asyncio.create_task(self._serve())
            while not self.ready.is_set():
                await asyncio.sleep(0.01)
            return
        self.thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name="kmock", daemon=True)
        self.thread.start()
        if not await asyncio.to_thread(self.ready.wait, 30):
            raise RuntimeError("kmock did not start")

    async def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.done.set)
        if self.same_loop:
            await self.task
        elif self.thread is not None:
            await asyncio.to_thread(self.thread.join, 30)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) on kmock's loop (awaited there if it is a coroutine function); its result here."""

        async def call() -> Any:
            result = fn(*args)
            return await result if asyncio.iscoroutine(result) else result

        if self.same_loop:
            return await call()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), self.loop))

    def cpu(self) -> float:
        """CPU seconds of kmock's thread (0 when it shares the operator's loop)."""
        if self.thread is None or self.thread.ident is None:
            return 0.0
        return time.clock_gettime(time.pthread_getcpuclockid(self.thread.ident))


# -- the control: kmock holding the tables, no operator -----------------------------------------------


async def control() -> dict[str, Any]:
    server = ApiServer()
    await server.start()
    empty = settled_rss_kib()
    await server.run(create_tables, server.http, ARGS.tables, ARGS.batch, {}, [])
    figures = {
        "rss_empty_kib": empty,
        "rss_tables_kib": settled_rss_kib(),
        "heap": heap_kib(),
        "store_bytes": await server.run(deep_size, server.api._objects),
    }
    await server.stop()
    return figures


def run_control() -> dict[str, Any]:
    argv = [sys.executable, __file__, "--control", *sys.argv[1:]]
    argv = [a for a in argv if a not in ("--profile", "--tracemalloc")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the control run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the operator -------------------------------------------------------------------------------------


@dataclasses.dataclass
class OperatorProbe:
    """Wraps handlers.reconcile_once and Kopf's watch stream (timing only) to split the latency."""

    received: dict[str, float] = dataclasses.field(default_factory=dict)  # uid -> 1st watch event read
    watch_events: int = 0
    first_pass: dict[str, float] = dataclasses.field(default_factory=dict)
    passes_before_submit: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    submitted: set[str] = dataclasses.field(default_factory=set)
    passes: int = 0
    pass_seconds: float = 0.0
    max_concurrent: int = 0
    running: int = 0

    def install(self) -> None:
        original = handlers.reconcile_once

        async def timed(backend: Any, body: dict[str, Any], now: Any = None) -> Any:
            uid = body["metadata"].get("uid", "")
            started = time.perf_counter()
            self.first_pass.setdefault(uid, started)
            self.running += 1
            self.max_concurrent = max(self.max_concurrent, self.running)
            try:
                decision = await original(backend, body, now)
            finally:
                self.running -= 1
                self.passes += 1
                self.pass_seconds += time.perf_counter() - started
            if uid not in self.submitted:
                self.passes_before_submit[uid] += 1
                if decision.submit is not None:
                    self.submitted.add(uid)
            return decision

        handlers.reconcile_once = timed

        # Kopf's watcher reads the stream through this function (looked up at call time).
        stream = kopf_watching.infinite_watch

        async def watched(*args: Any, **kwargs: Any) -> Any:
            async for event in stream(*args, **kwargs):
                if isinstance(event, dict):
                    self.watch_events += 1
                    uid = ((event.get("object") or {}).get("metadata") or {}).get("uid")
                    if uid:
                        self.received.setdefault(uid, time.perf_counter())
                yield event

        kopf_watching.infinite_watch = watched


class Sampler:
    """RSS every second; event-loop lag every 50 ms (how late a 50 ms sleep wakes up)."""

    def __init__(self) -> None:
        self.rss: list[tuple[float, int]] = []
        self.lag: list[tuple[float, float]] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.idle = 0.0

    async def _rss(self) -> None:
        while True:
            self.rss.append((time.perf_counter(), rss_kib()))
            await asyncio.sleep(1)

    async def _lag(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.05)
            now = time.perf_counter()
            self.lag.append((now, now - before - 0.05))

    def start(self) -> None:
        self.tasks = [asyncio.create_task(self._rss()), asyncio.create_task(self._lag())]
        # Time the loop spends waiting in select() is idle time; the rest it was busy (or starved).
        self.idle = 0.0
        selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
        select = selector.select

        def timed_select(timeout: float | None = None) -> Any:
            started = time.perf_counter()
            try:
                return select(timeout)
            finally:
                self.idle += time.perf_counter() - started

        selector.select = timed_select

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def lag_between(self, start: float, end: float) -> list[float]:
        return [lag for t, lag in self.lag if start <= t <= end]


class LogCounter(logging.Handler):
    """Counts log records by logger name and message start (Kopf's per-handler "succeeded" lines)."""

    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.counts: collections.Counter[str] = collections.Counter()

    def emit(self, record: logging.LogRecord) -> None:
        words = record.getMessage().split()
        self.counts[f"{record.levelname} {record.name}: {' '.join(words[:3])}"] += 1


def configure_logging(counter: LogCounter) -> None:
    """As `kopf run` does (kopf.configure), but into /dev/null: the formatting cost stays, the noise goes."""
    kopf.configure(quiet=ARGS.log_level == "WARNING")
    devnull = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(devnull)
    logging.getLogger().addHandler(counter)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # kmock's HTTP server, not the operator


async def until(check: Callable[[], bool], timeout: float, step: float = 0.05) -> bool:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(step)
    return True


@dataclasses.dataclass
class Phase:
    """What the counters did between two moments."""

    seconds: float
    cpu: float  # the whole process
    cpu_operator: float  # the main thread: the operator's event loop (Kopf, handlers, their HTTP clients)
    cpu_api: float  # kmock's thread: the API server, its HTTP server, the load generator
    idle: float  # the operator's event loop waiting in select()
    lag: list[float]
    loadavg: tuple[float, float]  # 1-minute load average at the start and the end
    calls: dict[str, int]
    call_seconds: dict[str, float]
    statuses: dict[str, int]
    noops: dict[str, int]
    logs: dict[str, int]
    passes: int
    pass_seconds: float
    watch_events: int  # table events Kopf read from its watch stream
    scans: int  # label-selected lists the emulator served from its index
    scan_seconds: float  # CPU time of those lookups
    regressions: int  # status writes that put back an older status


class Meter:
    def __init__(self, server: ApiServer, probe: OperatorProbe, logs: LogCounter, sampler: Sampler) -> None:
        self.server, self.probe, self.logs, self.sampler = server, probe, logs, sampler

    def _api_counters(self) -> dict[str, Any]:  # on kmock's loop: its counters change there
        api = self.server.api
        return {
            "counters": [
                collections.Counter(c) for c in (api.calls, api.call_seconds, api.statuses, api.noops)
            ],
            "scans": api.selects,
            "scan_seconds": api.select_seconds,
            "regressions": api.regressions,
        }

    async def _snapshot(self) -> dict[str, Any]:
        api = await self.server.run(self._api_counters)
        return {
            **api,
            "t": time.perf_counter(),
            "cpu": cpu_seconds(),
            "cpu_operator": time.thread_time(),
            "cpu_api": self.server.cpu(),
            "idle": self.sampler.idle,
            "load": os.getloadavg()[0],
            "logs": collections.Counter(self.logs.counts),
            "passes": self.probe.passes,
            "pass_seconds": self.probe.pass_seconds,
            "watch_events": self.probe.watch_events,
        }

    async def mark(self) -> None:
        self.start = await self._snapshot()

    async def phase(self) -> Phase:
        a, b = self.start, await self._snapshot()

        def delta(before: collections.Counter[str], after: collections.Counter[str]) -> dict[str, Any]:
            diff = collections.Counter(after)
            diff.subtract(before)
            return {k: v for k, v in diff.items() if v}

        calls, call_seconds, statuses, noops = (
            delta(x, y) for x, y in zip(a["counters"], b["counters"], strict=True)
        )
        return Phase(
            seconds=b["t"] - a["t"],
            cpu=b["cpu"] - a["cpu"],
            cpu_operator=b["cpu_operator"] - a["cpu_operator"],
            cpu_api=b["cpu_api"] - a["cpu_api"],
            idle=b["idle"] - a["idle"],
            lag=self.sampler.lag_between(a["t"], b["t"]),
            loadavg=(a["load"], b["load"]),
            calls=calls,
            call_seconds=call_seconds,
            statuses=statuses,
            noops=noops,
            logs=delta(a["logs"], b["logs"]),
            passes=b["passes"] - a["passes"],
            pass_seconds=b["pass_seconds"] - a["pass_seconds"],
            watch_events=b["watch_events"] - a["watch_events"],
            scans=b["scans"] - a["scans"],
            scan_seconds=b["scan_seconds"] - a["scan_seconds"],
            regressions=b["regressions"] - a["regressions"],
        )


def _inspect_store(api: BenchEmulator) -> dict[str, Any]:
    """On kmock's loop: what its store holds once the tables settled."""
    tables = [obj for (res, _, _), obj in api._objects.items() if res.plural == "hudibuckettables"]
    apps = collections.Counter(
        obj.raw["metadata"]["labels"][naming.TABLE_UID_LABEL]
        for (res, _, _), obj in api._objects.items()
        if res.plural == "sparkapplications" and not obj.deleted
    )
    scans = [
        api.linear_scan_seconds("sparkapplications", NAMESPACE, naming.TABLE_UID_LABEL, table_uid(i))
        for i in range(0, ARGS.tables, max(ARGS.tables // 20, 1))
    ]
    return {
        "store_bytes": deep_size(api._objects),
        "store_objects": len(api._objects),
        "tables_with_finalizers": sum(1 for o in tables if (o.raw.get("metadata") or {}).get("finalizers")),
        "table_versions": [len(o.history) for o in tables],
        "tables_with_apps": len(apps),
        "linear_scan": statistics.mean(scans),
        "request_log": len(api._requests),
    }


async def bench(control_figures: dict[str, Any]) -> dict[str, Any]:
    log_counter = LogCounter()
    configure_logging(log_counter)
    probe = OperatorProbe()
    probe.install()
    sampler = Sampler()
    rss: dict[str, int] = {"imports": settled_rss_kib()}
    heaps: dict[str, dict[str, int]] = {}

    server = ApiServer(same_loop=ARGS.same_loop)
    await server.start()
    api = server.api
    handlers.CONFIG = dataclasses.replace(handlers.CONFIG, kube_server=server.url, metrics_port=0)
    rss["kmock_empty"] = settled_rss_kib()
    sampler.start()
    meter = Meter(server, probe, log_counter, sampler)

    stop = asyncio.Event()
    settings = kopf.OperatorSettings()
    settings.queueing.exit_timeout = 1.0
    memo = kopf.Memo()
    operator = asyncio.create_task(
        kopf.operator(clusterwide=True, standalone=True, stop_flag=stop, settings=settings, memo=memo)
    )
    if not await until(lambda: api.calls["WATCH hudibuckettables"] > 0, timeout=30):
        raise RuntimeError("Kopf never started watching HudiBucketTables")
    await asyncio.sleep(0.5)
    rss["operator_idle"] = settled_rss_kib()
    heaps["operator_idle"] = heap_kib()
    if ARGS.tracemalloc:
        tracemalloc.start(12)

    # -- creation: batches of concurrent POSTs, then wait for every table's plan app -----------------
    await meter.mark()
    answered: dict[str, float] = {}  # table uid -> when its POST was answered
    rtts: list[float] = []
    await server.run(create_tables, server.http, ARGS.tables, ARGS.batch, answered, rtts)
    posted = time.perf_counter() - meter.start["t"]
    all_planned = await until(lambda: len(api.app_created) >= ARGS.tables, timeout=ARGS.timeout)
    creation = await meter.phase()
    rss["all_planned"] = settled_rss_kib()
    heaps["all_planned"] = heap_kib()
    store_planned = (await server.run(deep_size, api._objects)) if all_planned else 0

    # -- steady state: let the creation burst drain (no writes for 2 s), then the measured polls ------
    await meter.mark()
    writes = -1
    while time.perf_counter() - meter.start["t"] < ARGS.timeout:
        calls = await server.run(lambda: dict(api.calls))
        now = sum(v for k, v in calls.items() if not k.startswith(("LIST", "GET", "WATCH")))
        if now == writes:
            break
        writes = now
        await asyncio.sleep(2)
    drain = await meter.phase()
    await meter.mark()
    await asyncio.sleep(ARGS.settle * ARGS.poll)
    steady = await meter.phase()
    rss["steady"] = settled_rss_kib()
    heaps["steady"] = heap_kib()
    heap = heap_by_package() if ARGS.tracemalloc else []
    store = await server.run(_inspect_store, api)
    memo_bytes = deep_size(getattr(memo, "statuses", {}))
    tasks = len(asyncio.all_tasks())

    # -- stop ---------------------------------------------------------------------------------------
    stopping = time.perf_counter()
    stop.set()
    with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
        await asyncio.wait_for(operator, timeout=60)
    stop_seconds = time.perf_counter() - stopping
    await sampler.stop()
    await server.stop()

    created = api.table_created  # when the API server stored each table (and sent its ADDED event)

    def spans(end: dict[str, float], start: dict[str, float]) -> list[float]:
        return [end[uid] - start[uid] for uid in created if uid in end and uid in start]

    return {
        "control": control_figures,
        "tables": ARGS.tables,
        "batch": ARGS.batch,
        "poll_seconds": ARGS.poll,
        "all_planned": all_planned,
        "latency": spans(api.app_created, created),
        "queueing": spans(probe.first_pass, created),
        "delivery": spans(probe.received, created),
        "dispatch": spans(probe.first_pass, probe.received),
        "reconciling": spans(api.app_created, probe.first_pass),
        "post_rtt": rtts,
        "posted_seconds": posted,
        "creation": dataclasses.asdict(creation),
        "drain": dataclasses.asdict(drain),
        "steady": dataclasses.asdict(steady),
        "passes_before_submit": list(probe.passes_before_submit.values()),
        "max_concurrent_passes": probe.max_concurrent,
        "apps_created_twice": sum(1 for n in api.apps_per_table.values() if n > 1),
        "rss": rss,
        "heaps": heaps,
        "rss_peak": rss_kib("VmHWM"),
        "rss_samples": sampler.rss,
        "store_planned": store_planned,
        "store_steady": store["store_bytes"],
        **{k: v for k, v in store.items() if k != "store_bytes"},
        "memo_bytes": memo_bytes,
        "tasks": tasks,
        "stop_seconds": stop_seconds,
        "heap": heap,
        "api_profile": server.profiler,
    }


# -- the report ---------------------------------------------------------------------------------------


def _ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (
        f"p50 {percentile(values, 50) * 1000:7.0f} ms  p90 {percentile(values, 90) * 1000:7.0f} ms  "
        f"p99 {percentile(values, 99) * 1000:7.0f} ms  max {max(values) * 1000:7.0f} ms"
    )


def _lag(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (
        f"event-loop lag p50 {percentile(values, 50) * 1000:.0f} ms, p99 {percentile(values, 99) * 1000:.0f} ms, "
        f"max {max(values) * 1000:.0f} ms"
    )


def _phase(p: dict[str, Any], n: int) -> list[str]:
    seconds = p["seconds"]
    busy = seconds - p["idle"]
    lines = [
        f"  CPU {p['cpu']:.1f} s in {seconds:.1f} s: the operator's thread (Kopf, handlers, their HTTP clients) "
        f"{p['cpu_operator']:.1f} s ({p['cpu_operator'] / seconds * 100:.0f}% of a core), kmock's thread "
        f"(API server, load generator) {p['cpu_api']:.1f} s",
        f"  the operator's event loop was busy {busy:.1f} s ({busy / seconds * 100:.0f}%), "
        f"{max(busy - p['cpu_operator'], 0):.1f} s of it waiting for a CPU or the GIL "
        f"(load average {p['loadavg'][0]:.1f} -> {p['loadavg'][1]:.1f} on {os.cpu_count()} cores); "
        f"{_lag(p['lag'])}",
        f"  reconcile passes {p['passes']} ({p['passes'] / seconds:.1f}/s, {p['passes'] / n:.2f} a table), "
        f"{p['pass_seconds'] / max(p['passes'], 1) * 1000:.1f} ms wall each; Kopf read {p['watch_events']} "
        f"watch events ({p['watch_events'] / n:.2f} a table)",
        f"  label-selected lists served from the emulator's index: {p['scans']}, "
        f"{p['scan_seconds'] / max(p['scans'], 1) * 1000:.3f} ms CPU each",
        "  requests (server-side wall time includes waiting for the shared event loop):",
    ]
    for key, count in sorted(p["calls"].items(), key=lambda kv: -kv[1]):
        line = f"      {key:30s} {count:7d} {count / seconds:8.1f}/s"
        if p["call_seconds"].get(key):
            line += f"  {p['call_seconds'][key] / count * 1000:7.2f} ms each"
        noops = p["noops"].get(key, 0)
        failed = {k.rsplit(" ", 1)[1]: v for k, v in p["statuses"].items() if k.startswith(key + " ")}
        failed = {code: v for code, v in failed.items() if not code.startswith("2")}
        if noops:
            line += f"  ({noops} changed nothing)"
        if failed:
            line += "  (" + ", ".join(f"{v} answered {code}" for code, v in sorted(failed.items())) + ")"
        lines.append(line)
    if p["regressions"]:
        lines.append(
            f"  {p['regressions']} status writes put back a status the table had before (out-of-order writes)"
        )
    posted = [(k, v) for k, v in sorted(p["logs"].items(), key=lambda kv: -kv[1]) if v > 0]
    if posted:
        lines.append(
            "  log records (to stderr in production; Kopf 1.45 posts them as Events only if posting.loggers):"
        )
        lines += [f"      {key:50s} {count:7d} {count / seconds:8.1f}/s" for key, count in posted[:5]]
    return lines


def _heaps(f: dict[str, Any]) -> list[str]:
    rows = [("control: kmock holding the tables", f["control"].get("heap") or {})]
    rows += [(name, f["heaps"].get(key) or {}) for name, key in _HEAP_ROWS]
    if not all(h for _, h in rows):
        return []
    lines = [
        "  the heap behind the RSS: Python objects (pymalloc: in use / arenas held), C heap (malloc: in use /"
        " freed but kept):"
    ]
    lines += [
        f"    {name:36s} {h['pymalloc_used'] / 1024:6.1f} / {h['pymalloc_arenas'] / 1024:6.1f} MiB    "
        f"{h['malloc_used'] / 1024:6.1f} / {h['malloc_free'] / 1024:6.1f} MiB    {h['sockets']:4d} sockets open"
        for name, h in rows
    ]
    base, steady = rows[0][1], f["heaps"]["steady"]
    used = steady["pymalloc_used"] + steady["malloc_used"] - base["pymalloc_used"] - base["malloc_used"]
    held = steady["pymalloc_arenas"] - steady["pymalloc_used"] + steady["malloc_free"]
    lines.append(
        f"    at steady state the operator's objects (and kmock's growth) use {used / 1024:.1f} MiB more than the "
        f"control; {held / 1024:.1f} MiB is held free, the creation burst's high-water mark"
    )
    return lines


_HEAP_ROWS = (
    ("Kopf running, no tables", "operator_idle"),
    ("every table has its plan app", "all_planned"),
    ("steady state", "steady"),
)


def _heap(heap: list[tuple[str, int, int]]) -> list[str]:
    if not heap:
        return []
    packages = [(k, v) for k, v, c in heap if c == 0]
    sites = [(k, v, c) for k, v, c in heap if c]
    lines = ["  live heap allocated since the operator started (tracemalloc), by package:"]
    lines += [f"      {k:40s} {v / 1048576:7.1f} MiB" for k, v in packages]
    lines += ["    by allocation site (innermost frame outside the standard library):"]
    lines += [f"      {k:60s} {v / 1048576:7.1f} MiB  {c:8d} blocks" for k, v, c in sites]
    return lines


def report(f: dict[str, Any]) -> str:
    c, rss, n = f["control"], f["rss"], f["tables"]
    creation, steady = f["creation"], f["steady"]
    base = c["rss_tables_kib"]
    growth_planned = (f["store_planned"] - c["store_bytes"]) / 1024
    growth_steady = (f["store_steady"] - c["store_bytes"]) / 1024

    def share(kib: float) -> str:
        return f"{mib(kib)}  ({kib / n:6.1f} KiB a table)"

    return "\n".join(
        [
            f"hudi-bucket-operator bench: {n} HudiBucketTables POSTed {f['batch']} at a time"
            + (f", a batch every {ARGS.pause:g} s; " if ARGS.pause else "; ")
            + f"HBO_RESYNC_SECONDS={f['poll_seconds']:g}; log level {ARGS.log_level}; "
            f"kmock {'as is' if ARGS.plain_kmock else 'with API-server semantics (see --help)'}"
            f"{' on the operator loop' if ARGS.same_loop else ' in its own thread'}",
            "",
            "Reconcile latency: table created (stored by the API server, its ADDED event sent) -> its plan "
            "SparkApplication created (stored)",
            f"  all tables                {_ms(f['latency'])}",
            f"  created -> 1st pass       {_ms(f['queueing'])}  (watch event, Kopf's queueing):",
            f"    created -> Kopf reads its ADDED event  {_ms(f['delivery'])}",
            f"    read -> its handler's 1st pass         {_ms(f['dispatch'])}",
            f"  1st pass -> app created   {_ms(f['reconciling'])}  (list apps, POST ConfigMap, POST app)",
            f"  table POST round trip     {_ms(f['post_rtt'])}",
            f"  {len(f['latency'])}/{n} tables planned{'' if f['all_planned'] else ' (not all within --timeout)'}; "
            f"{f['apps_created_twice']} got a second plan app; "
            f"{statistics.mean(f['passes_before_submit'] or [0]):.2f} passes a table up to the submitting one; "
            f"up to {f['max_concurrent_passes']} passes in flight",
            f"Creation phase: POSTs took {f['posted_seconds']:.1f} s, the last plan app came "
            f"{creation['seconds']:.1f} s after the first POST",
            *_phase(creation, n),
            "",
            f"Draining: {f['drain']['seconds']:.0f} s until no write for 2 s: {f['drain']['passes']} passes, "
            f"{f['drain']['cpu']:.1f} s CPU, "
            + ", ".join(f"{v} {k}" for k, v in sorted(f["drain"]["calls"].items(), key=lambda kv: -kv[1])[:4])
            + f"; {sum(f['drain']['noops'].values())} patches changed nothing, "
            f"{f['drain']['regressions']} status writes put back an older status",
            "",
            f"Steady state: {steady['seconds']:.0f} s ({ARGS.settle} poll intervals); "
            f"expected {n / f['poll_seconds']:.1f} passes/s",
            *_phase(steady, n),
            f"  for comparison, kmock's own way to answer one such list, a linear scan of its store "
            f"({f['store_objects']} objects), takes {f['linear_scan'] * 1000:.2f} ms: at "
            f"{n / f['poll_seconds']:.0f} lists/s that is {f['linear_scan'] * n / f['poll_seconds'] * 100:.0f}% "
            "of a core",
            "",
            "Memory: RSS (VmRSS). Kopf, kmock and this script share the process.",
            f"  after imports                          {mib(rss['imports'])}",
            f"  kmock running, empty                   {mib(rss['kmock_empty'])}",
            f"  Kopf running, no tables                {mib(rss['operator_idle'])}",
            f"  every table has its plan app           {mib(rss['all_planned'])}",
            f"  steady state (drained + {ARGS.settle} polls)       {mib(rss['steady'])}",
            f"  peak (VmHWM)                           {mib(f['rss_peak'])}",
            f"  control process (same imports, no operator): kmock empty {mib(c['rss_empty_kib'])}, "
            f"holding the {n} tables {mib(c['rss_tables_kib'])}",
            "  operator's share = RSS - control RSS with kmock holding the tables:",
            f"    every table planned                  {share(rss['all_planned'] - base)}",
            f"    steady state                         {share(rss['steady'] - base)}",
            "  ...less kmock's store growth since the control (the children, every version of every object: "
            f"{c['store_bytes'] / 1048576:.1f} -> {f['store_steady'] / 1048576:.1f} MiB, "
            f"{statistics.mean(f['table_versions'] or [0]):.1f} versions a table):",
            f"    every table planned                  {share(rss['all_planned'] - base - growth_planned)}",
            f"    steady state                         {share(rss['steady'] - base - growth_steady)}",
            *_heaps(f),
            f"  the operator's memo.statuses: {f['memo_bytes'] / 1024:.0f} KiB; asyncio tasks: {f['tasks']}",
            *_heap(f["heap"]),
            "",
            f"Kopf put a finalizer on {f['tables_with_finalizers']}/{n} tables (it does for any resource with a "
            f"timer); stopping the operator took {f['stop_seconds']:.1f} s; kmock's request log holds "
            f"{f['request_log']} requests",
        ]
    )


def _profile_owner(filename: str) -> str:
    """Who a profiled function's time belongs to; "" for the standard library and C builtins."""
    if "site-packages/aiohttp/" in filename:
        name = os.path.basename(filename)
        if name.startswith("web") or name == "test_utils.py":
            return "aiohttp, server side (kmock's HTTP)"
        if name.startswith(("client", "connector", "resolver", "cookiejar", "tracing")):
            return "aiohttp, client side (Kopf's and the operator's API calls)"
        return "aiohttp, shared (HTTP parser, writer, streams)"
    if "site-packages/" in filename:
        package = filename.split("site-packages/")[1].split("/", maxsplit=1)[0].split(".", maxsplit=1)[0]
        if package in ("jsonpatch", "jsonpointer"):
            return "kmock"  # its JSON patches
        if package in ("prometheus_client",):
            return "hudi_bucket_operator"  # its metrics
        if package == "aiohappyeyeballs":
            return "aiohttp, client side (Kopf's and the operator's API calls)"
        return package
    if "hudi_bucket_operator" in filename or "/hudi_bucket/" in filename:
        return "hudi_bucket_operator"
    if filename.endswith("bench_operator.py"):
        return "this bench"
    return ""


def _profile_func_owner(func: tuple[str, int, str]) -> str:
    owner = _profile_owner(func[0])
    if owner == "this bench" and func[2] in _EMULATION:
        return "this bench: API-server emulation on kmock (index, resourceVersions, no-op patches)"
    if owner == "this bench":
        return "this bench: load, probes, measuring (incl. gc.collect and sizing at checkpoints)"
    return owner


_EMULATION = {
    "__call__",
    "_key",
    "_handle",
    "_handle_as_api_server",
    "_unchanged",
    "_reindex",
    "_serve_list",
    "forget",
    "_next_resource_version",
    "_selector_terms",
}
_LOOP = ("asyncio/base_events.py", "asyncio/events.py", "asyncio/runners.py", "selectors.py")


def profile_summary(profiler: cProfile.Profile, what: str, top: int = 30, functions: int = 25) -> str:
    """CPU by owner: standard-library and C time is charged to the packages that called it.

    A stdlib function's own time goes to its callers in proportion to the time it spent under each
    (exact for the first hop); further up, a stdlib caller's share goes on by its callers' cumulative
    times. The event loop's own machinery is its own owner.
    """
    raw = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    memo: dict[Any, dict[str, float]] = {}

    def spread(func: Any, trail: frozenset[Any]) -> dict[str, float]:
        owner = _profile_func_owner(func)
        if owner:
            return {owner: 1.0}
        if func[0].endswith(_LOOP):
            return {"asyncio event loop": 1.0}
        if func in memo:
            return memo[func]
        callers = raw.get(func, (0, 0, 0, 0, {}))[4]
        total = sum(edge[3] for edge in callers.values())
        result: collections.Counter[str] = collections.Counter()
        if func in trail or not callers or total <= 0:
            result["stdlib, no caller known"] = 1.0
        else:
            for caller, edge in callers.items():
                for name, share in spread(caller, trail | {func}).items():
                    result[name] += share * edge[3] / total
        memo[func] = dict(result)
        return memo[func]

    owners: collections.Counter[str] = collections.Counter()
    total = 0.0
    for func, (_, _, tottime, _, callers) in raw.items():
        total += tottime
        if func[2] == "<method 'poll' of 'select.epoll' objects>":
            owners["idle (waiting in epoll)"] += tottime
            continue
        owner = _profile_func_owner(func)
        if owner:
            owners[owner] += tottime
            continue
        edges = sum(edge[2] for edge in callers.values())
        if not callers or edges <= 0:
            owners["stdlib, no caller known"] += tottime
            continue
        for caller, edge in callers.items():
            for name, share in spread(caller, frozenset({func})).items():
                owners[name] += tottime * share * edge[2] / edges
    lines = [
        "",
        f"CPU of {what} by owner (cProfile, {total:.1f} s profiled; stdlib and C time charged to its callers):",
    ]
    lines += [f"  {name:60s} {t:7.1f} s  {t / total * 100:5.1f}%" for name, t in owners.most_common(top)]
    if not functions:
        return "\n".join(lines)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(functions)
    return "\n".join(lines) + "\n\nTop functions by self time:\n" + text.getvalue()


def main() -> int:
    if ARGS.control:
        print(json.dumps(asyncio.run(control())))
        return 0
    control_figures = run_control()
    # Thread CPU time, not wall time: two threads share the GIL, and the machine may be busy.
    profiler = cProfile.Profile(time.thread_time) if ARGS.profile else None
    if profiler is not None:
        profiler.enable()
    figures = asyncio.run(bench(control_figures))
    api_profiler = figures.pop("api_profile")
    if profiler is not None:
        profiler.disable()
    print(report(figures))
    if profiler is not None:
        print(profile_summary(profiler, "the operator's thread" if api_profiler else "the process"))
    if api_profiler is not None:
        print(profile_summary(api_profiler, "kmock's thread", top=8, functions=0))
    if ARGS.profile_out:
        for profile, name in ((profiler, "operator"), (api_profiler, "kmock")):
            if profile is not None:
                profile.dump_stats(f"{ARGS.profile_out}.{name}.pstats")
    if ARGS.json:
        with open(ARGS.json, "w") as out:
            json.dump(figures, out, indent=1)
    return 0 if figures["all_planned"] else 1


if __name__ == "__main__":
    sys.exit(main())

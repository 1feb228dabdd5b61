"""A real Prometheus (Debian's, beside the promtool `./dev promtool` fetches) scraping the operator, with
the chart's alert rules loaded: what the e2e scenarios caused, asked of it as a user's Prometheus would be.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from lib.paths import REPO

MONITORING = REPO / "charts" / "hudi-bucket-operator" / "monitoring"
RULES = MONITORING / "alerts.yaml"
DASHBOARD = MONITORING / "dashboard.json"
EVERY = 1  # seconds between scrapes and between rule evaluations


def binary() -> Path | None:
    """Prometheus, fetched once into the cache; None when it cannot be had here."""
    fetched = subprocess.run(
        ["bash", str(REPO / "dev"), "promtool"], capture_output=True, text=True, check=False
    )
    if fetched.returncode != 0:
        return None
    found = Path(fetched.stdout.splitlines()[-1]).with_name("prometheus")
    return found if found.is_file() else None


def rules_without_waiting(target: Path) -> Path:
    """The chart's rules with each ``for`` at 0s, so that an alert fires in the minutes a scenario takes
    rather than after the half hour it waits for in a cluster: its expression is left as it is."""
    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        group["interval"] = f"{EVERY}s"
        for rule in group["rules"]:
            rule.pop("for", None)
    target.write_text(yaml.safe_dump(rules))
    return target


def dashboard_queries() -> list[tuple[str, str]]:
    """Each dashboard panel's title and query, its namespace variable at "All"."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [
        (panel["title"], re.sub(r"\$namespace\b", ".*", target["expr"]))
        for panel in panels
        for target in panel.get("targets", [])
    ]


class Prometheus:
    def __init__(self, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.process, self.log = url, process, log
        self.started = time.time()

    def _get(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector ``expr`` is now."""
        found: list[dict[str, Any]] = self._get("/api/v1/query", query=expr)["result"]
        return found

    def seen(self, expr: str) -> list[dict[str, Any]]:
        """The series ``expr`` had at any moment since Prometheus started (a range query)."""
        found: list[dict[str, Any]] = self._get(
            "/api/v1/query_range", query=expr, start=str(self.started), end=str(time.time()), step=f"{EVERY}s"
        )["result"]
        return found

    def fired(self, alert: str, **labels: str) -> bool:
        """Whether ``alert`` fired for series with ``labels`` since Prometheus started."""
        matchers = ",".join(
            [f'alertname="{alert}"', 'alertstate="firing"'] + [f'{k}="{v}"' for k, v in labels.items()]
        )
        return bool(self.seen(f"ALERTS{{{matchers}}}"))

    def scraped(self) -> bool:
        return any(target["health"] == "up" for target in self._get("/api/v1/targets")["activeTargets"])


@contextmanager
def scraping(binary: Path, metrics: str, work: Path, port: int) -> Iterator[Prometheus]:
    """Prometheus on ``port``, scraping ``metrics`` (host:port) every second, the chart's rules loaded."""
    work.mkdir(parents=True, exist_ok=True)
    config = {
        "global": {"scrape_interval": f"{EVERY}s", "evaluation_interval": f"{EVERY}s"},
        "rule_files": [str(rules_without_waiting(work / "alerts.yaml"))],
        "scrape_configs": [
            # honor_labels, as the chart's ServiceMonitor: the tables' namespace label is the table's.
            {
                "job_name": "hudi-bucket-operator",
                "honor_labels": True,
                "static_configs": [{"targets": [metrics]}],
            }
        ],
    }
    (work / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = work / "prometheus.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                str(binary),
                f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={work / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    prometheus = Prometheus(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"Prometheus exited:\n{log.read_text()[-3000:]}"
            try:
                prometheus._get("/api/v1/status/buildinfo")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield prometheus
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def scraping_if_found(metrics: str, work: Path, port: int) -> Iterator[Prometheus | None]:
    """``scraping`` with this machine's Prometheus, or None when it has none (the scenarios run anyway;
    only what asks Prometheus is skipped, through ``required``)."""
    found = binary()
    if found is None:
        yield None
        return
    with scraping(found, metrics, work, port) as prometheus:
        yield prometheus


def required(prometheus: Prometheus | None) -> Prometheus:
    """The Prometheus a test asks, or the test skipped saying how to have one."""
    if prometheus is None:
        pytest.skip(
            "no Prometheus: `./dev promtool` fetches it, with promtool, from Debian's prometheus package"
        )
    return prometheus

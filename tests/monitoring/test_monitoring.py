"""The chart's alert rules and dashboard (charts/hudi-bucket-operator/monitoring/) hold: promtool (Debian's
prometheus package's, fetched by `./dev promtool`) runs every rule's tests in alerts_test.yaml and
parses every dashboard query, and each names only metrics the operator exports."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_bucket_operator.runtime import metrics
from paths import REPO

MONITORING = REPO / "charts" / "hudi-bucket-operator" / "monitoring"
RULES = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
DASHBOARD = json.loads((MONITORING / "dashboard.json").read_text())
RULE_TESTS = Path(__file__).parent / "alerts_test.yaml"
# The dashboard's one variable, as its "All" matches (allValue).
VARIABLES = {"$namespace": ".*"}


@pytest.fixture(scope="session")
def promtool() -> Path:
    fetched = subprocess.run(
        ["bash", str(REPO / "dev"), "promtool"], check=False, capture_output=True, text=True
    )
    if fetched.returncode != 0:
        pytest.skip(
            f"no promtool (`./dev promtool` fetches it from Debian's prometheus package): {fetched.stderr}"
        )
    return Path(fetched.stdout.splitlines()[-1])


def run(promtool: Path, *args: str, cwd: Path) -> None:
    done = subprocess.run([str(promtool), *args], check=False, capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr


def alerts() -> list[dict[str, Any]]:
    return [rule for group in RULES["groups"] for rule in group["rules"] if "alert" in rule]


def dashboard_queries() -> list[str]:
    queries = [target["expr"] for panel in DASHBOARD["panels"] for target in panel.get("targets", [])]
    return [re.sub(r"\$\w+", lambda found: VARIABLES[found.group()], query) for query in queries]


def exported() -> set[str]:
    """The names of the series /metrics has, as PromQL names them."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    return {
        family.name + suffix
        for metric in metrics.METRICS
        for family in metric.describe()
        for suffix in suffixes[family.type]
    }


def test_every_alert_rule_passes_its_promtool_tests(promtool: Path) -> None:
    run(promtool, "test", "rules", RULE_TESTS.name, cwd=RULE_TESTS.parent)


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    cases = [
        case for test in yaml.safe_load(RULE_TESTS.read_text())["tests"] for case in test["alert_rule_test"]
    ]
    fired = {case["alertname"] for case in cases if case["exp_alerts"]}
    quiet = {case["alertname"] for case in cases if not case["exp_alerts"]}
    names = {rule["alert"] for rule in alerts()}
    assert fired == quiet == names


def test_every_dashboard_query_parses(promtool: Path, tmp_path: Path) -> None:
    # promtool checks a rules file's expressions with Prometheus' own parser: each query as a rule.
    rules = [{"record": f"dashboard:query_{n}", "expr": query} for n, query in enumerate(dashboard_queries())]
    (tmp_path / "queries.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]})
    )
    run(promtool, "check", "rules", "queries.yaml", cwd=tmp_path)


@pytest.mark.parametrize("source", ["alert rules", "dashboard"])
def test_rules_and_dashboard_name_only_metrics_the_operator_exports(source: str) -> None:
    queries = [rule["expr"] for rule in alerts()] if source == "alert rules" else dashboard_queries()
    named = {name for query in queries for name in re.findall(r"\bhbo_\w+", query)}
    assert named
    assert named <= exported()

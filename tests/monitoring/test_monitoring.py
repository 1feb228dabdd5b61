"""The chart's alert rules and dashboard (charts/hudi-bucket-operator/monitoring/) hold: promtool (Debian's
prometheus package's, fetched by `./dev promtool`) runs every rule's tests in alerts_test.yaml and
every dashboard query, and each names only metrics the operator exports."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hudi_bucket_operator.runtime import metrics
from lib.paths import REPO

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


def dashboard_queries() -> list[tuple[str, str]]:
    """Each panel's title and queries, with the variables as "All" sets them."""
    return [
        (panel["title"], re.sub(r"\$\w+", lambda found: VARIABLES[found.group()], target["expr"]))
        for panel in DASHBOARD["panels"]
        for target in panel["targets"]
    ]


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


# What /metrics could show, a sample a minute for an hour: a plan awaiting approval (orders), writers
# paused for an apply (clicks), a Ready table checked and rescaled (events), and the operator's counters.
SCRAPED = {
    'hbo_table_ready{namespace="lake", name="orders"}': "0",
    'hbo_table_phase{namespace="lake", name="orders", phase="AwaitingApproval"}': "1",
    'hbo_table_plan_awaiting_approval_since_timestamp_seconds{namespace="lake", name="orders"}': "0",
    'hbo_table_ready{namespace="lake", name="clicks"}': "0",
    'hbo_table_phase{namespace="lake", name="clicks", phase="Applying"}': "1",
    'hbo_table_writers_paused{namespace="lake", name="clicks"}': "1",
    'hbo_table_writers_paused_since_timestamp_seconds{namespace="lake", name="clicks"}': "0",
    'hbo_table_ready{namespace="lake", name="events"}': "1",
    'hbo_table_phase{namespace="lake", name="events", phase="Ready"}': "1",
    'hbo_table_last_verify_timestamp_seconds{namespace="lake", name="events"}': "0",
    'hbo_table_layout_violations{namespace="lake", name="events"}': "0",
    'hbo_table_file_group_skew_ratio{namespace="lake", name="events"}': "1.5",
    'hbo_table_file_group_largest_bytes{namespace="lake", name="events"}': "300000000",
    'hbo_table_file_group_median_bytes{namespace="lake", name="events"}': "200000000",
    'hbo_table_last_rescale_duration_seconds{namespace="lake", name="events"}': "60",
    'hbo_table_last_rescale_rows{namespace="lake", name="events"}': "1000",
    'hbo_jobs_finished_total{kind="apply", outcome="Succeeded"}': "0+1",
    'hbo_rescale_duration_seconds_bucket{le="60"}': "0+1",
    'hbo_rescale_duration_seconds_bucket{le="+Inf"}': "0+1",
    "hbo_rows_rewritten_total": "0+1000",
    'hbo_leader{pod="hudi-bucket-operator-0"}': "1",
    'hbo_reconciles_total{phase="Ready"}': "0+1",
}


def test_every_dashboard_query_parses_and_shows_data(promtool: Path, tmp_path: Path) -> None:
    # Prometheus' own parser and engine, through promtool: an alert per query that fires when the query
    # returns nothing, none of which may fire on what /metrics could show.
    rules = [
        {"alert": f"Query{n}ShowsNothing", "expr": f"absent({query})", "annotations": {"panel": title}}
        for n, (title, query) in enumerate(dashboard_queries())
    ]
    (tmp_path / "queries.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]})
    )
    test = {
        "rule_files": ["queries.yaml"],
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": series, "values": f"{values}x60"} for series, values in SCRAPED.items()
                ],
                "alert_rule_test": [
                    {"alertname": rule["alert"], "eval_time": "30m", "exp_alerts": []} for rule in rules
                ],
            }
        ],
    }
    (tmp_path / "queries_test.yaml").write_text(yaml.safe_dump(test))
    run(promtool, "test", "rules", "queries_test.yaml", cwd=tmp_path)


@pytest.mark.parametrize("source", ["alert rules", "dashboard"])
def test_rules_and_dashboard_name_only_metrics_the_operator_exports(source: str) -> None:
    if source == "alert rules":
        queries = [rule["expr"] for rule in alerts()]
    else:
        queries = [query for _, query in dashboard_queries()]
    named = {name for query in queries for name in re.findall(r"\bhbo_\w+", query)}
    assert named
    assert named <= exported()

"""The chart ships its alert rules and dashboard off by default; enabled, the PrometheusRule holds the rules
file promtool tests (tests/monitoring) and a ConfigMap the dashboard, labelled for Grafana's sidecar."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
import yaml

from lib import helm_chart
from lib.helm_chart import CHART, NAMESPACE, find, one, render
from lib.paths import REPO

pytestmark = pytest.mark.usefixtures("helm_available")

RULES = yaml.safe_load((CHART / "monitoring" / "alerts.yaml").read_text())

ENABLED: dict[str, Any] = {
    "prometheusRule": {"enabled": True, "additionalLabels": {"release": "prom"}},
    "grafanaDashboard": {"enabled": True, "annotations": {"grafana_folder": "Lakehouse"}},
}


def dashboards(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        o for o in find(objs, "ConfigMap") if o["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
    ]


def test_no_rules_and_no_dashboard_by_default() -> None:
    objs = render()
    assert find(objs, "PrometheusRule") == []
    assert dashboards(objs) == []


def test_enabled_the_prometheus_rule_holds_the_tested_rules_file_with_the_admins_labels() -> None:
    rule = one(render(ENABLED), "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["namespace"] == NAMESPACE
    assert rule["metadata"]["labels"]["release"] == "prom"
    assert rule["spec"] == RULES


def test_enabled_the_dashboard_is_a_configmap_grafanas_sidecar_loads() -> None:
    (configmap,) = dashboards(render(ENABLED))
    kubernetes_validate.validate(configmap, helm_chart.KUBERNETES_VERSIONS[-1], strict=True)
    assert configmap["metadata"]["namespace"] == NAMESPACE
    assert configmap["metadata"]["annotations"] == {"grafana_folder": "Lakehouse"}
    (dashboard,) = configmap["data"].values()
    assert json.loads(dashboard) == json.loads((CHART / "monitoring" / "dashboard.json").read_text())
    elsewhere = render({"grafanaDashboard": {"enabled": True, "namespace": "monitoring"}})
    assert dashboards(elsewhere)[0]["metadata"]["namespace"] == "monitoring"


def test_enabled_the_chart_lints_cleanly() -> None:
    output = helm_chart.lint(ENABLED)
    assert "0 chart(s) failed" in output
    assert "[WARNING]" not in output


def test_the_service_monitor_keeps_the_tables_namespace_label() -> None:
    # Without honorLabels, Prometheus would rename the tables' namespace label to exported_namespace and
    # put the operator pod's namespace in its place.
    monitor = one(render({"metrics": {"serviceMonitor": {"enabled": True}}}), "ServiceMonitor")
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True


def test_each_alert_may_be_left_out_or_given_its_own_for_and_severity_and_each_a_runbook() -> None:
    tuned = {
        "prometheusRule": {
            "enabled": True,
            "runbookUrl": "https://docs.example/hbo/alerts.md",
            "alerts": {
                "HudiBucketTablePlanAwaitingApproval": {"enabled": False},
                "HudiBucketOperatorJobsFailing": {"for": "30m", "severity": "info"},
            },
        }
    }
    rendered = one(render(tuned), "PrometheusRule")["spec"]["groups"]
    rules = {rule["alert"]: rule for group in rendered for rule in group["rules"]}
    shipped = {rule["alert"]: rule for group in RULES["groups"] for rule in group["rules"]}
    assert list(rules) == [name for name in shipped if name != "HudiBucketTablePlanAwaitingApproval"]
    runbook = (REPO / "docs" / "alerts.md").read_text()
    for name, rule in rules.items():
        # Each runbook_url names the alert's own section of docs/alerts.md (GitHub's anchor for it).
        assert rule["annotations"].pop("runbook_url") == f"https://docs.example/hbo/alerts.md#{name.lower()}"
        assert f"\n### {name}\n" in runbook
    failing = shipped["HudiBucketOperatorJobsFailing"]
    assert rules.pop("HudiBucketOperatorJobsFailing") == {
        **failing,
        "for": "30m",
        "labels": {**failing["labels"], "severity": "info"},
    }
    assert all(rule == shipped[name] for name, rule in rules.items())  # the rest as promtool tests them


def test_an_alert_the_chart_has_not_is_refused_naming_those_it_has() -> None:
    with pytest.raises(
        helm_chart.HelmError,
        match=r"prometheusRule\.alerts\.HudiBucketTableNotRedy: no alert of that name.*HudiBucketTableNotReady",
    ):
        render({"prometheusRule": {"enabled": True, "alerts": {"HudiBucketTableNotRedy": {"for": "1h"}}}})
    with pytest.raises(helm_chart.HelmError, match="values don't meet the specifications of the schema"):
        render(
            {"prometheusRule": {"enabled": True, "alerts": {"HudiBucketTableNotReady": {"for": "an hour"}}}}
        )

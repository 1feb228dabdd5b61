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

pytestmark = pytest.mark.usefixtures("helm_available")

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
    assert rule["spec"] == yaml.safe_load((CHART / "monitoring" / "alerts.yaml").read_text())


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

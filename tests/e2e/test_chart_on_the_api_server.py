"""The chart, rendered with each value set the chart tests use (every value, tests/helm_chart.py), is
accepted by the real API server: a server-side dry run of every object, so admission, the built-in
schemas and defaulting see exactly what `helm install` would send."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import helm_chart
from control_plane import ControlPlane
from helm_chart import NAMESPACE, VALUE_SETS

# The Prometheus Operator's kind, whose CRD no test installs: the Kubernetes schema tests check it.
NOT_SERVED = {"ServiceMonitor"}


@pytest.mark.parametrize("values", list(VALUE_SETS.values()), ids=list(VALUE_SETS))
def test_every_rendered_object_is_accepted_by_the_api_server(
    control_plane: ControlPlane, values: dict[str, Any]
) -> None:
    if helm_chart.helm_binary() is None:
        pytest.skip("no helm binary")
    objects = [o for o in helm_chart.render(values) if o["kind"] not in NOT_SERVED]
    namespaces = {NAMESPACE} | {o["metadata"]["namespace"] for o in objects if "namespace" in o["metadata"]}
    for namespace in sorted(namespaces):
        control_plane.kubectl("create", "namespace", namespace, check=False)  # there from an earlier set
    stream = yaml.safe_dump_all(objects)
    applied = control_plane.kubectl("apply", "--dry-run=server", "--server-side", "-f", "-", input=stream)
    assert len(applied.stdout.splitlines()) == len(objects), applied.stdout

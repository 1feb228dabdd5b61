"""The chart, rendered with each value set the chart tests use (every value, tests/lib/helm_chart.py), is
accepted by the real API server: a server-side dry run of every object, so admission, the built-in
schemas and defaulting see exactly what `helm install` would send."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import yaml

from control_plane import ControlPlane
from lib import helm_chart
from lib.helm_chart import VALUE_SETS

# The Prometheus Operator's kind, whose CRD no test installs: the Kubernetes schema tests check it.
NOT_SERVED = {"ServiceMonitor"}


def renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string that is one of ``names`` replaced: the value sets' namespaces made
    this test's own, so that other tests find theirs (``lake``) still to be made."""
    if isinstance(value, dict):
        return {names.get(k, k): renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    return names.get(value, value) if isinstance(value, str) else value


@pytest.mark.parametrize("values", list(VALUE_SETS.values()), ids=list(VALUE_SETS))
def test_every_rendered_object_is_accepted_by_the_api_server(
    control_plane: ControlPlane, values: dict[str, Any]
) -> None:
    if helm_chart.helm_binary() is None:
        pytest.skip("no helm binary")
    suffix = uuid.uuid4().hex[:8]
    release_namespace = f"chart-{suffix}"
    values = renamed(values, {name: f"{name}-{suffix}" for name in ("lake", "sales")})
    objects = [
        o for o in helm_chart.render(values, namespace=release_namespace) if o["kind"] not in NOT_SERVED
    ]
    namespaces = {release_namespace} | {
        o["metadata"]["namespace"] for o in objects if "namespace" in o["metadata"]
    }
    for namespace in sorted(namespaces):
        control_plane.kubectl("create", "namespace", namespace)
    try:
        stream = yaml.safe_dump_all(objects)
        applied = control_plane.kubectl("apply", "--dry-run=server", "--server-side", "-f", "-", input=stream)
        assert len(applied.stdout.splitlines()) == len(objects), applied.stdout
    finally:
        control_plane.kubectl("delete", "namespace", *sorted(namespaces), "--wait=false")

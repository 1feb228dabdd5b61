"""GitOps tools read a HudiBucketTable's health the way its status means it.

The statuses are the operator's own (built with hudi_bucket_operator.resource.conditions). The Argo CD health
check runs in a real Lua 5.1 interpreter (lupa; Argo CD's gopher-lua speaks Lua 5.1); the Flux
healthCheckExprs run in a real CEL interpreter (cel-python) in the order Flux evaluates them.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import celpy
import pytest
import yaml
from lupa import lua51

from hudi_bucket_operator.resource import conditions
from hudi_bucket_operator.resource.api import API_VERSION, GROUP, KIND
from hudi_bucket_operator.resource.table_status import TableStatus
from lib import helm_chart
from lib.paths import REPO

GITOPS = REPO / "gitops"
HEALTH_LUA = (GITOPS / "argocd" / "health.lua").read_text()
HEALTH_KEY = f"resource.customizations.health.{GROUP}_{KIND}"
NOW = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
PLAN_ID = "sha256:" + "ab" * 32


def table(status: TableStatus | None, generation: int = 3) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "orders", "namespace": "lake", "generation": generation},
        "spec": {"table": {"uri": "s3a://lake/warehouse/orders"}},
    }
    if status is not None:
        obj["status"] = status.to_api()
    return obj


def seen(generation: int = 3) -> TableStatus:
    return TableStatus(observed_generation=generation)


# (name, the table, Argo CD's health and message (a part of it), Flux's status)
SAMPLES = [
    ("new", table(None), "Progressing", "Waiting for the operator", "InProgress"),
    (
        "planning",
        table(conditions.progressing(seen(), NOW, "Planning", "plan job orders-plan-1 running")),
        "Progressing",
        "plan job orders-plan-1 running",
        "InProgress",
    ),
    (
        "applying",
        table(conditions.progressing(seen(), NOW, "Applying", "apply job orders-apply-1 running")),
        "Progressing",
        "apply job orders-apply-1 running",
        "InProgress",
    ),
    (
        "ready",
        table(conditions.ready(seen(), NOW, "Applied", "32 buckets in force since 20261121100100000")),
        "Healthy",
        "32 buckets in force",
        "Current",
    ),
    (
        "spec-changed-since",
        table(conditions.ready(seen(2), NOW, "Applied", "in force"), generation=3),
        "Progressing",
        "generation 3",
        "InProgress",
    ),
    (
        "stalled",
        table(conditions.stalled(seen(), NOW, "InvalidSpec", "spec.buckets.rules[0].pattern: bad regex")),
        "Degraded",
        "spec.buckets.rules[0].pattern: bad regex",
        "Failed",
    ),
    (
        "awaiting-approval",
        table(conditions.awaiting(seen(), NOW, f"plan {PLAN_ID} awaits approval")),
        "Suspended",
        f"plan {PLAN_ID} awaits approval",
        "Current",
    ),
    ("paused", table(conditions.paused(seen(), NOW)), "Suspended", "paused by annotation", "Current"),
]
ids = [sample[0] for sample in SAMPLES]


def argocd_health(obj: dict[str, Any]) -> dict[str, str]:
    lua = lua51.LuaRuntime()
    lua.globals().obj = lua.table_from(copy.deepcopy(obj), recursive=True)
    result = lua.execute(HEALTH_LUA)
    return dict(result.items())


def flux_status(obj: dict[str, Any], exprs: dict[str, str]) -> str:
    """What Flux's CEL status evaluator (fluxcd/pkg runtime/cel) makes of ``obj``."""
    observed = (obj.get("status") or {}).get("observedGeneration")
    if observed is not None and observed != obj["metadata"].get("generation"):
        return "InProgress"
    env = celpy.Environment()
    activation = {key: celpy.json_to_cel(value) for key, value in obj.items()}
    for field, status in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        if field not in exprs:
            continue
        result = env.program(env.compile(exprs[field])).evaluate(activation)
        assert not isinstance(result, Exception), f"{field}: {result}"
        if result:
            return status
    return "InProgress"


def kstatus_status(obj: dict[str, Any]) -> str:
    """What plain kstatus (cli-utils' pkg/kstatus/status, checkGenericProperties, for a kind it has no
    rules of its own for) makes of ``obj``: the deletion, the generation, then Reconciling and Stalled
    True; Ready is not read, and anything else is Current."""
    if obj["metadata"].get("deletionTimestamp"):
        return "Terminating"
    observed = (obj.get("status") or {}).get("observedGeneration")
    if observed is not None and observed != obj["metadata"].get("generation"):
        return "InProgress"
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition["type"] == "Reconciling" and condition["status"] == "True":
            return "InProgress"
        if condition["type"] == "Stalled" and condition["status"] == "True":
            return "Failed"
    return "Current"


# docs/install.md and gitops/flux/kustomization.yaml say this: plain kstatus counts every wait as Current
# (a new table too, until its first status), where the example's healthCheckExprs are stricter.
PLAIN_KSTATUS = {
    "new": "Current",
    "planning": "InProgress",
    "applying": "InProgress",
    "ready": "Current",
    "spec-changed-since": "InProgress",
    "stalled": "Failed",
    "awaiting-approval": "Current",
    "paused": "Current",
}


@pytest.mark.parametrize(("name", "obj", "health", "message", "flux"), SAMPLES, ids=ids)
def test_plain_kstatus_reads_the_table_status_as_the_docs_say(
    name: str, obj: dict[str, Any], health: str, message: str, flux: str
) -> None:
    assert kstatus_status(obj) == PLAIN_KSTATUS[name]


def test_a_plan_waiting_for_its_window_is_current_to_kstatus_and_in_progress_to_the_example() -> None:
    waiting = table(conditions.awaiting(seen(), NOW, "approved; waits for its window", "AwaitingWindow"))
    assert kstatus_status(waiting) == "Current"
    assert flux_status(waiting, flux_exprs()) == "InProgress"


def flux_exprs() -> dict[str, str]:
    kustomization = yaml.safe_load((GITOPS / "flux" / "kustomization.yaml").read_text())
    (check,) = kustomization["spec"]["healthCheckExprs"]
    assert (check["apiVersion"], check["kind"]) == (API_VERSION, KIND)
    return {k: v for k, v in check.items() if k in ("inProgress", "failed", "current")}


@pytest.mark.parametrize(("name", "obj", "health", "message", "flux"), SAMPLES, ids=ids)
def test_argocd_health_check_reads_the_table_status(
    name: str, obj: dict[str, Any], health: str, message: str, flux: str
) -> None:
    result = argocd_health(obj)
    assert result["status"] == health
    assert message in result["message"]


# A table without any status yet is left out: Flux's CEL reports an error for the missing field (and
# looks again) until the operator writes the first status, moments after the table is created.
@pytest.mark.parametrize(("name", "obj", "health", "message", "flux"), SAMPLES[1:], ids=ids[1:])
def test_flux_health_check_exprs_read_the_table_status(
    name: str, obj: dict[str, Any], health: str, message: str, flux: str
) -> None:
    assert flux_status(obj, flux_exprs()) == flux


def test_argocd_config_map_carries_the_health_check_verbatim() -> None:
    config_map = yaml.safe_load((GITOPS / "argocd" / "argocd-cm.yaml").read_text())
    assert config_map["metadata"]["name"] == "argocd-cm"
    assert config_map["data"] == {HEALTH_KEY: HEALTH_LUA}


def test_argocd_applications_deploy_the_chart_and_the_rules_server_side() -> None:
    apps = [doc for doc in yaml.safe_load_all((GITOPS / "argocd" / "applications.yaml").read_text()) if doc]
    operator, tables = apps
    assert (REPO / operator["spec"]["source"]["path"] / "Chart.yaml").is_file()
    for app in apps:
        assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"]
        assert app["spec"]["syncPolicy"]["automated"]["selfHeal"] is True
    assert tables["spec"]["destination"]["namespace"] == "lake"


def test_the_gitops_examples_give_the_chart_values_it_accepts() -> None:
    argocd = [d for d in yaml.safe_load_all((GITOPS / "argocd" / "applications.yaml").read_text()) if d]
    flux = [d for d in yaml.safe_load_all((GITOPS / "flux" / "helmrelease.yaml").read_text()) if d]
    (release,) = [d for d in flux if d["kind"] == "HelmRelease"]
    assert (REPO / release["spec"]["chart"]["spec"]["chart"] / "Chart.yaml").is_file()
    assert release["spec"]["upgrade"]["crds"] == "CreateReplace"
    for values in (argocd[0]["spec"]["source"]["helm"]["valuesObject"], release["spec"]["values"]):
        assert helm_chart.values_errors(values) == []

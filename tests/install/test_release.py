"""A release a platform team can pin: one version, said the same everywhere; a changelog that names each
release's commit and what an upgrade asks; and the API narrowed only where the changelog says so.

The last release's CRD is kept in tests/install/releases/<version>/ (copied from the commit the changelog
names for it), so that what changed since is read without the repository's history.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from hudi_bucket.release import VERSION
from hudi_bucket_operator import cli
from hudi_bucket_operator.decide.decisions import Observed
from hudi_bucket_operator.decide.reconcile import decide
from hudi_bucket_operator.plugin import main as plugin
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import GROUP, PLURAL
from hudi_bucket_operator.resource.api import VERSION as API_VERSION
from hudi_bucket_operator.resource.table_status import TableStatus
from lib.hbt_admission import ADMISSION, SMALL, with_spec
from lib.hbt_resources import ANYWHERE
from lib.paths import REPO
from registry.last_release import changelog_sections, last_release

CHANGELOG = (REPO / "CHANGELOG.md").read_text()
CHART = yaml.safe_load((REPO / "charts" / "hudi-bucket-operator" / "Chart.yaml").read_text())
CRD_NAME = f"{PLURAL}.{GROUP}.yaml"
RELEASES = REPO / "tests" / "install" / "releases"
_SECTION = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\S+)$", re.MULTILINE)


def _declared_version() -> str:
    found = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), re.MULTILINE)
    assert found is not None
    return found[1]


def _sections() -> dict[str, str]:
    return changelog_sections(CHANGELOG)


def test_the_version_is_declared_once_and_said_the_same_everywhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    version = _declared_version()
    assert version == VERSION  # the installed package's metadata
    assert CHART["version"] == CHART["appVersion"] == version
    assert next(iter(_sections())) == version  # the changelog's newest release
    # The operator's pins in the GitOps examples (the tables' own Application tracks the user's branch).
    argo = yaml.safe_load_all((REPO / "gitops" / "argocd" / "applications.yaml").read_text())
    flux = yaml.safe_load_all((REPO / "gitops" / "flux" / "helmrelease.yaml").read_text())
    pinned = [
        d["spec"]["source"]["targetRevision"]
        for d in argo
        if d["spec"]["source"]["path"].startswith("charts/")
    ]
    pinned += [d["spec"]["ref"]["tag"] for d in flux if d["kind"] == "GitRepository"]
    assert pinned == [f"v{version}"] * 2
    for main, said in (
        (cli.main, f"hudi-bucket-operator {version}"),
        (plugin.main, f"kubectl-hbt {version}"),
    ):
        with pytest.raises(SystemExit) as exited:
            main(["--version"])
        assert exited.value.code == 0
        assert capsys.readouterr().out.strip() == said


def test_each_release_says_when_what_commit_and_an_unreleased_one_says_so() -> None:
    for version, section in _sections().items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
        date = _SECTION.match(section)["date"]  # type: ignore[index]
        if date == "unreleased":
            assert version == _declared_version()  # only the one being made
            continue
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date), (version, date)
        assert re.search(r"commit `[0-9a-f]{7,40}`", section), f"{version} names no commit"
    assert (RELEASES / _last_release() / CRD_NAME).is_file()


def _last_release() -> str:
    return last_release(CHANGELOG).version


# --- the API between releases -------------------------------------------------------------------------------


def _schema(path: Any) -> Mapping[str, Any]:
    crd = yaml.safe_load(path.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == API_VERSION]
    return dict(version["schema"]["openAPIV3Schema"]["properties"])


def _narrowed(old: Mapping[str, Any], new: Mapping[str, Any] | None, where: str) -> Iterator[str]:
    """Each way ``new`` admits less than ``old`` at ``where`` and below: a field removed or newly required,
    a new CEL rule or pattern, a tighter bound, an enum value or a type gone."""
    if new is None:
        yield f"{where} removed"
        return
    said = {"pattern": "a new pattern", "type": "another type", "format": "another format"}
    for key, what in said.items():
        if key in new and new.get(key) != old.get(key):
            yield f"{where}: {what}"
    rules = {r["rule"] for r in old.get("x-kubernetes-validations", [])}
    if any(r["rule"] not in rules for r in new.get("x-kubernetes-validations", [])):
        yield f"{where}: a new rule"
    for key in ("maxLength", "maxItems", "maxProperties", "maximum"):
        if key in new and (key not in old or new[key] < old[key]):
            yield f"{where}: a lower {key}"
    for key in ("minLength", "minItems", "minProperties", "minimum"):
        if key in new and (key not in old or new[key] > old[key]):
            yield f"{where}: a higher {key}"
    if "enum" in new and set(old.get("enum", new["enum"])) - set(new["enum"]):
        yield f"{where}: enum values gone"
    if set(new.get("required", [])) - set(old.get("required", [])):
        yield f"{where}: newly required {sorted(set(new['required']) - set(old.get('required', [])))}"
    for name, child in (old.get("properties") or {}).items():
        yield from _narrowed(child, (new.get("properties") or {}).get(name), f"{where}.{name}")
    if isinstance(old.get("items"), Mapping):
        yield from _narrowed(old["items"], new.get("items"), f"{where}[]")
    if isinstance(old.get("additionalProperties"), Mapping) and isinstance(
        new.get("additionalProperties"), Mapping
    ):
        yield from _narrowed(old["additionalProperties"], new["additionalProperties"], f"{where}{{}}")


def narrowed_since_the_last_release() -> list[str]:
    old, new = _schema(RELEASES / _last_release() / CRD_NAME), _schema(REPO / "crds" / CRD_NAME)
    return [change for name in ("spec", "status") for change in _narrowed(old[name], new.get(name), name)]


def test_every_field_narrowed_or_removed_since_the_last_release_is_named_in_its_changelog() -> None:
    """While the API is v1alpha1 a minor release may narrow a field (docs/install.md, "Versions and the
    API"), never silently: the newest release's section names each field, with what to do."""
    section = _sections()[_declared_version()]
    unnamed = [
        change for change in narrowed_since_the_last_release() if f"`{change.split(':')[0]}`" not in section
    ]
    assert unnamed == []


def test_the_narrowing_check_sees_what_narrows() -> None:
    old = {"properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "string"}}}}
    new = {
        "required": ["a"],
        "properties": {
            "a": {"type": "string", "maxLength": 8, "x-kubernetes-validations": [{"rule": "self != ''"}]},
            "b": {"type": "array", "items": {"type": "string", "pattern": "^x$"}},
        },
    }
    assert list(_narrowed(old, new, "spec")) == [
        "spec: newly required ['a']",
        "spec.a: a new rule",
        "spec.a: a lower maxLength",
        "spec.b[]: a new pattern",
    ]
    assert list(_narrowed(old, {"properties": {"a": {"type": "string"}}}, "spec")) == ["spec.b removed"]
    assert list(_narrowed(old, old, "spec")) == []


# --- what the last release wrote ---------------------------------------------------------------------------

# Statuses release 0.1.0 wrote, made by that commit's own code (its decide, its tests' scenarios): planning,
# awaiting approval, applying, Ready after an apply, Stalled, and writers held paused during an apply.
LAST_STATUSES: dict[str, dict[str, Any]] = json.loads((RELEASES / "0.1.0" / "statuses.json").read_text())
NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _within(old: Any, new: Any) -> bool:
    """Whether everything ``old`` says, ``new`` says too (``new`` may say more)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and _within(v, new[k]) for k, v in old.items())
    if isinstance(old, list):
        return isinstance(new, list) and len(old) == len(new) and all(map(_within, old, new))
    return bool(old == new)


@pytest.mark.parametrize("stage", sorted(LAST_STATUSES))
def test_a_status_the_last_release_wrote_is_stored_read_and_decided_on(stage: str) -> None:
    """Stored under the new CRD as it was, read by the new operator without losing a word, and its table
    decided on again: no refusal of the old status, no stalled pass."""
    old = LAST_STATUSES[stage]
    assert ADMISSION.errors({**SMALL, "status": old}) == []
    read = TableStatus.of(old)
    assert _within(old, read.to_api())
    spec = with_spec(SMALL, "apply.policy", "Automatic")["spec"]
    admins = Policy(JobDefaults(allowed_table_uris=ANYWHERE))
    decision = decide(Observed(spec, 1, {}, read, (), admins, name="customers", namespace="lake"), NOW)
    stalled = next(c for c in decision.status.conditions or [] if c.type == "Stalled")
    assert (stalled.status, stalled.reason) != ("True", "ReconcileError"), stalled.message

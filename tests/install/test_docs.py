"""docs/install.md works as a new user would run it: its files exist, its values and helm commands are
ones the chart accepts, its values table names every value the chart has and no other, and its RBAC
table is what the chart grants."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from lib import helm_chart
from lib.paths import REPO

DOC = REPO / "docs" / "install.md"
TEXT = DOC.read_text()
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
REPO_PATH = re.compile(r"(?<![\w/.-])((?:charts|crds|deploy|gitops|examples|docs)/[\w./-]*|Dockerfile\.\w+)")


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(TEXT) if lang == language]


def commands() -> list[list[str]]:
    """Every shell command of the bash blocks, continuation lines joined, as words."""
    out = []
    for body in blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(shlex.split(line, comments=True))
    return out


def my_values() -> dict:
    (values,) = [yaml.safe_load(body) for body in blocks("yaml") if body.startswith("# my-values.yaml")]
    return values


def test_the_three_install_paths_are_documented() -> None:
    headings = re.findall(r"^## (.+)$", TEXT, re.MULTILINE)
    assert {"1. Helm", "2. kubectl apply --server-side", "3. GitOps: Argo CD or Flux"} <= set(headings)


def test_every_file_the_guide_names_exists() -> None:
    named = set(REPO_PATH.findall(TEXT)) | {
        (DOC.parent / link).resolve().relative_to(REPO).as_posix()
        for link in re.findall(r"\]\((\.\./[^)#]+)\)", TEXT)
    }
    assert "deploy/hudi-bucket-operator.yaml" in named
    for path in named:
        assert (REPO / path).exists(), f"docs/install.md names {path}, which does not exist"


def test_the_guides_values_file_meets_the_chart_schema() -> None:
    assert helm_chart.values_errors(my_values()) == []


def test_the_values_table_names_every_value_of_the_chart_and_no_other() -> None:
    table = TEXT.split("### The main values", 1)[1].split("\n\n", 2)[1]
    named = {
        name for row in table.splitlines()[2:] for name in re.findall(r"`([\w.]+)`", row.split(" | ")[0])
    }
    defaults = yaml.safe_load((helm_chart.CHART / "values.yaml").read_text())

    def exists(path: str) -> bool:
        node = defaults
        for key in path.split("."):
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return True

    assert sorted(name for name in named if not exists(name)) == []
    assert sorted(set(defaults) - {name.split(".")[0] for name in named}) == []


@pytest.mark.usefixtures("helm_available")
def test_the_guides_helm_commands_render(tmp_path: Path) -> None:
    values_file = tmp_path / "my-values.yaml"
    values_file.write_text(yaml.safe_dump(my_values()))
    ran = 0
    for words in commands():
        if words[:1] != ["helm"] or "charts/hudi-bucket-operator" not in words:
            continue
        command, options = words[1], [w for w in words[2:] if w not in ("--install", "--create-namespace")]
        assert command in ("install", "upgrade", "template"), words
        options = [str(values_file) if w == "my-values.yaml" else w for w in options]
        if ">" in options:
            options = options[: options.index(">")]
        release, chart, *flags = options
        assert (release, chart) == ("hudi-bucket-operator", "charts/hudi-bucket-operator")
        rendered = helm_chart.helm("template", release, str(REPO / chart), *flags)
        assert "kind: Deployment" in rendered
        ran += 1
    assert ran >= 3


def test_the_guides_kubectl_applies_are_server_side() -> None:
    applies = [words for words in commands() if words[:2] == ["kubectl", "apply"] and "-n" not in words[:4]]
    for words in applies:
        if any(w.startswith(("crds/", "deploy/", "my-hudi", "charts/")) for w in words):
            assert "--server-side" in words, words


@pytest.mark.usefixtures("helm_available")
def test_the_guides_rbac_table_is_what_the_chart_grants() -> None:
    section = TEXT[TEXT.index("## RBAC") :]
    documented = set()
    for row in re.findall(r"^\| `?([^|`]*)`? \| `([^`]+)` \| ([^|]+) \|", section, re.MULTILINE):
        group = "" if row[0] == "(core)" else row[0]
        documented |= {(group, row[1], verb.strip()) for verb in row[2].split(",")}
    objs = helm_chart.render({})
    (role,) = [o for o in objs if o["kind"] == "ClusterRole"]
    (election,) = [
        o for o in objs if o["kind"] == "Role" and o["metadata"]["name"].endswith("-leader-election")
    ]
    granted = {
        (g, r, v)
        for rule in role["rules"] + election["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    assert documented == granted


ARCHITECTURE = REPO / "docs" / "architecture.md"
NAMED_FILE = re.compile(r"`((?:[\w-]+/)*[\w-]+\.(?:py|yaml|toml))`")
NAMED_PACKAGE = re.compile(r"`([a-z_]+)/`")
OPERATOR = REPO / "operator" / "hudi_bucket_operator"  # its rooms: runtime/, decide/, policy/, resource/


def test_every_file_and_package_the_architecture_page_names_exists() -> None:
    """docs/architecture.md is the page a newcomer reads first: what it names must be there."""
    text = ARCHITECTURE.read_text()
    tracked = [p.relative_to(REPO).as_posix() for p in REPO.rglob("*") if ".venv" not in p.parts]
    files = set(NAMED_FILE.findall(text))
    assert files, "the page names files"
    missing = [f for f in files if not any(path == f or path.endswith("/" + f) for path in tracked)]
    assert missing == []
    packages = set(NAMED_PACKAGE.findall(text))
    homes = [REPO / "spark_app" / "hudi_bucket", OPERATOR, REPO / "operator", REPO / "tests", REPO]
    assert [p for p in packages if not any((home / p).is_dir() for home in homes)] == []

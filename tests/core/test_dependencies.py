"""The core, the contract and the errors (which the operator and the jobs both run) import nothing but
the standard library, themselves and the project's base dependencies (or what those bring, as
pydantic brings pydantic-core): installed without an extra, they work."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions, requires

from packaging.requirements import Requirement

from lib.paths import REPO

PACKAGE = REPO / "spark_app" / "hudi_bucket"
BASE = [PACKAGE / "core", PACKAGE / "contract", PACKAGE / "errors.py"]


def imported_modules() -> dict[str, str]:
    """Every top-level module the base imports, with a file that imports it."""
    found: dict[str, str] = {}
    files = [f for root in BASE for f in ([root] if root.is_file() else sorted(root.rglob("*.py")))]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def test_the_base_imports_only_the_base_dependencies() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    base = {Requirement(line).name.lower() for line in declared}
    base |= {
        Requirement(line).name.lower().replace("-", "_")
        for name in base
        for line in requires(name) or []
        if Requirement(line).marker is None  # not an extra's
    }
    distributions = packages_distributions()
    outside = {
        module: where
        for module, where in imported_modules().items()
        if module not in sys.stdlib_module_names and module != "hudi_bucket"
        and not {d.lower() for d in distributions.get(module, [module])} & base
    }  # fmt: skip
    assert outside == {}


def test_kubectl_hbt_runs_from_the_base_install() -> None:
    """The plugin is a script of the base install (no extra): what importing it loads is the standard
    library, the project, and the base dependencies (a fresh interpreter, as `kubectl hbt` starts one)."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, hudi_bucket_operator.plugin.main; print(*sys.modules)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    base = {Requirement(line).name.lower() for line in declared}
    base |= {Requirement(line).name.lower() for name in set(base) for line in requires(name) or []
             if Requirement(line).marker is None}  # fmt: skip
    distributions = packages_distributions()
    outside = sorted(
        top
        for top in {name.split(".")[0] for name in loaded}
        if top not in sys.stdlib_module_names and not top.startswith("_")
        # cython_runtime: the module every Cython-compiled extension (PyYAML's _yaml) registers, no package
        and top not in ("hudi_bucket", "hudi_bucket_operator", "cython_runtime")
        and not {d.lower().replace("_", "-") for d in distributions.get(top, [top])}
        & {b.replace("_", "-") for b in base}
    )  # fmt: skip
    assert outside == []

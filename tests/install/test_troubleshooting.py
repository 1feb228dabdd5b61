"""docs/troubleshooting.md explains every reason and phase a table can show. The reasons are read from the
code, not listed here: those declared in ``conditions.Reason``, and those of a refused spec, named after
``InvalidSpecError`` and each of its subclasses. A reason handed over as a bare string would escape both,
so no reason may be one."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import hudi_bucket_operator
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource import conditions
from hudi_bucket_operator.resource.conditions import Reason
from lib.paths import REPO

DOC = REPO / "docs" / "troubleshooting.md"
TEXT = DOC.read_text()

# Where a reason (or a phase, which is one) is handed over: the callee's name and the reason's position
# among its arguments; the keywords ``reason`` and ``phase`` of these callees and of maintenance's Advance.
REASON_ARGUMENT = {
    "_apply": 2,
    "progressing": 2,
    "ready": 2,
    "stalled": 2,
    "_stalled": 3,
    "awaiting": 3,
    "scheduled": 1,
    "layout_health": 3,
    "Outcome": 1,
    "_outcome": 2,
    "Advance": None,
}
EVENT_TYPES = {"Normal", "Warning"}


def operator_modules() -> list[ModuleType]:
    """Every module of the operator, imported (so that every subclass of InvalidSpecError exists)."""
    found = pkgutil.walk_packages(hudi_bucket_operator.__path__, "hudi_bucket_operator.")
    return [importlib.import_module(module.name) for module in found if not module.ispkg]


def refusals() -> set[str]:
    """The reasons of a refused spec: InvalidSpecError's and each of its subclasses'."""
    operator_modules()
    found, classes = set(), [InvalidSpecError]
    while classes:
        cls = classes.pop()
        found.add(cls.reason())
        classes += cls.__subclasses__()
    return found


def every_reason() -> set[str]:
    declared = {value for name, value in vars(Reason).items() if name.isupper()}
    return declared | refusals() | {conditions.READY, conditions.STALLED}  # the phases that are no reason


def documented() -> set[str]:
    """The names in the first column of the table of every reason and phase."""
    section = TEXT[TEXT.index("## Every reason and phase") :]
    section = section[: section.index("\n## ", 1)]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`(\w+)`", cell)}


def test_the_refusals_are_found() -> None:
    assert {"InvalidSpec", "ImageNotAllowed", "WriterNotAllowed"} <= refusals()


def test_every_reason_and_phase_is_explained() -> None:
    missing = sorted(every_reason() - documented())
    assert missing == [], f"docs/troubleshooting.md does not explain {missing}"


def test_the_page_explains_no_reason_the_operator_never_gives() -> None:
    unknown = sorted(documented() - every_reason())
    assert unknown == [], f"docs/troubleshooting.md explains {unknown}, which the operator never gives"


def _bare_reasons(path: Path) -> list[str]:
    """Each reason in ``path`` handed over as a string literal, as ``line: text``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        given: list[ast.expr] = []
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee in REASON_ARGUMENT:
                position = REASON_ARGUMENT[callee]
                if position is not None and len(node.args) > position:
                    given.append(node.args[position])
                given += [k.value for k in node.keywords if k.arg in ("reason", "phase")]
        elif isinstance(node, ast.Tuple) and len(node.elts) == 3:
            kind = node.elts[0]
            if isinstance(kind, ast.Constant) and kind.value in EVENT_TYPES:
                given.append(node.elts[1])  # an event: (type, reason, message)
        found += [
            f"{path.name}:{e.lineno}: {e.value!r}"
            for e in given
            if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return found


def test_no_reason_is_a_bare_string() -> None:
    """Each reason is ``Reason``'s or a refused spec's, so the tests above see every one."""
    bare = [line for module in operator_modules() for line in _bare_reasons(Path(str(module.__file__)))]
    assert bare == [], "declare these reasons in conditions.Reason"

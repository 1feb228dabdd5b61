"""What RBAC rules grant, as plain (API group, resource[/subresource], verb) triples."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Permission = tuple[str, str, str]  # (API group, resource[/subresource], verb)


def granted(rules: Iterable[Mapping[str, Any]], named: bool = False) -> set[Permission]:
    """Every (group, resource, verb) that RBAC rules allow; wildcards are refused, not expanded. Rules
    that name their objects (resourceNames) only where ``named`` says they may."""
    out = set()
    for rule in rules:
        assert "*" not in rule["verbs"], f"wildcard in {rule}"
        assert "*" not in rule["resources"], f"wildcard in {rule}"
        assert named or not rule.get("resourceNames")
        assert not rule.get("nonResourceURLs")
        out |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    return out

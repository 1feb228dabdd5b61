"""The HudiBucketTable CustomResourceDefinition, generated from the models (no I/O).

The models are the truth: spec/ declares the spec, table_status.py the status, each field with its
description (its docstring), bounds, patterns and CEL rules (crd_schema.py's markers). ``document`` turns
their JSON schema into a Kubernetes structural schema and wraps it in the CRD; ``render`` is the YAML that
crds/ and the chart's crds/ hold (``hudi-bucket-operator crd`` prints it, and a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

import yaml

from hudi_bucket_operator.resource.api import GROUP, KIND, PLURAL, VERSION
from hudi_bucket_operator.resource.conditions import READY
from hudi_bucket_operator.resource.crd_schema import FILLED_IN
from hudi_bucket_operator.resource.naming import OPERATOR
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.resource.table_status import TableStatus

SHORT_NAMES = ("hbt",)
CATEGORIES = ("hudi",)
DESCRIPTION = (
    "The partition-level bucket rules of one Apache Hudi table. The operator plans the rescale a change "
    "of rules needs, waits for approval if asked to, and applies it with Spark."
)
_READY = f'.status.conditions[?(@.type=="{READY}")]'
# What `kubectl get hbt` shows (priority 1: only with -o wide).
PRINTER_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Ready", "type": "string", "description": "Status of the Ready condition.",
     "jsonPath": f"{_READY}.status"},
    {"name": "Phase", "type": "string",
     "description": "The step the table is in (Planning, AwaitingApproval, Applying, Ready, Stalled, ...).",
     "jsonPath": ".status.phase"},
    {"name": "Reason", "type": "string",
     "description": "Reason of the Ready condition (Converged, Applied, AwaitingApproval, Applying, "
     "JobFailed, ...; docs/troubleshooting.md explains each).",
     "jsonPath": f"{_READY}.reason"},
    {"name": "Config", "type": "string", "description": "Instant of the bucket config in force on the table.",
     "jsonPath": ".status.config.instant"},
    {"name": "Rescaling", "type": "integer", "description": "Partitions the current plan would rewrite.",
     "jsonPath": ".status.plan.partitions"},
    {"name": "Table", "type": "string", "description": "The table's base path.", "jsonPath": ".spec.table.uri",
     "priority": 1},
    {"name": "Plan", "type": "string",
     "description": "The id of the latest plan (what spec.apply.approvedPlan names to approve it).",
     "jsonPath": ".status.plan.id", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)  # fmt: skip

HEADER = f"""\
# {KIND}: one Apache Hudi table's partition-level bucket rules, reconciled by {OPERATOR}.
#
# Generated from the models (operator/hudi_bucket_operator/resource/spec/ for the spec, table_status.py for
# the status) by `{OPERATOR} crd`: do not edit. Change the models, then run
#   {OPERATOR} crd > crds/{PLURAL}.{GROUP}.yaml
#   cp crds/{PLURAL}.{GROUP}.yaml charts/{OPERATOR}/crds/
# Admission checks what it can (types, bounds, enums, CEL rules); the operator checks the rest (that each
# pattern compiles, means the same in Java as in Python and cannot backtrack out of control; what the
# admins allow: spec.spark, spec.table.uri, spec.writers) and reports it on the Ready condition.
"""

# Keywords in the order the YAML shows them; others follow, then the nested schemas.
_KEY_ORDER = ("type", "format", "description", "nullable", "default", "enum", "required")
_NESTED = ("properties", "additionalProperties", "items")


def document() -> dict[str, Any]:
    """The CustomResourceDefinition, as the API server takes it."""
    schema = {
        "type": "object",
        "description": DESCRIPTION,
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": structural(TableSpec.model_json_schema(by_alias=True)),
            "status": structural(TableStatus.model_json_schema(by_alias=True)),
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{PLURAL}.{GROUP}",
            "labels": {"app.kubernetes.io/name": OPERATOR, "app.kubernetes.io/component": "crd"},
        },
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": PLURAL,
                "singular": KIND.lower(),
                "shortNames": list(SHORT_NAMES),
                "categories": list(CATEGORIES),
            },
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [dict(column) for column in PRINTER_COLUMNS],
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def render() -> str:
    """The CRD as crds/ holds it: the header, then the document in block style."""
    dumped: str = yaml.safe_dump(document(), sort_keys=False, width=110, allow_unicode=True)
    return HEADER + dumped


def structural(model_schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON schema (pydantic's, by alias) as a Kubernetes structural schema."""
    return _node(model_schema, model_schema.get("$defs", {}))


def _node(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = _inlined(schema, defs)
    node: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "$defs"):  # pydantic's names of things, not the resource's
            continue
        if key == "description":
            node[key] = " ".join(value.split())  # docstrings are wrapped for the source, not for kubectl
        elif key == "properties":
            node[key] = {name: _node(sub, defs) for name, sub in value.items()}
        elif key == "items":
            node[key] = _node(value, defs)
        elif key == "additionalProperties":
            if value is True or value == {}:  # free-form: the API server keeps whatever is there
                node["x-kubernetes-preserve-unknown-fields"] = True
            else:
                node[key] = _node(value, defs)
        elif key == "x-kubernetes-validations":  # pydantic sorts keys: the rule first again, then its message
            node[key] = [{"rule": rule["rule"], "message": rule["message"]} for rule in value]
        elif key == "const":
            node["enum"] = [value]
        elif key in ("exclusiveMinimum", "exclusiveMaximum"):  # JSON Schema's numbers, OpenAPI 3.0's flags
            node["minimum" if key == "exclusiveMinimum" else "maximum"] = value
            node[key] = True
        else:
            node[key] = value
    filled_in = node.pop(FILLED_IN, False)
    if "default" in node and not filled_in:
        del node["default"]  # the operator's default: the stored resource leaves the field out
    elif filled_in and node.get("type") == "object":
        node["default"] = {}  # the API server then fills in the object's own fields' defaults
    return _ordered(node)


def _inlined(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its $ref followed and ``| None`` dropped, its own keywords over those it points at
    (a field's description over its model's docstring)."""
    if "$ref" in schema:
        own = {key: value for key, value in schema.items() if key != "$ref"}
        return {**_inlined(defs[schema["$ref"].rpartition("/")[2]], defs), **own}
    if "anyOf" in schema:
        own = {key: value for key, value in schema.items() if key != "anyOf"}
        members = [_inlined(member, defs) for member in schema["anyOf"] if member.get("type") != "null"]
        if len(members) == 1:
            return {**members[0], **own}
        if sorted(str(member.get("type")) for member in members) == ["integer", "string"]:
            # int | str: one field of either type, each member's bounds kept (they apply to their type)
            bounds = {key: value for member in members for key, value in member.items() if key != "type"}
            return {"x-kubernetes-int-or-string": True, **bounds, **own}
        raise ValueError(f"no structural schema for a union of {members}")
    return schema


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    first = [key for key in _KEY_ORDER if key in node]
    last = [key for key in _NESTED if key in node]
    middle = [key for key in node if key not in first and key not in last]
    return {key: node[key] for key in (*first, *middle, *last)}

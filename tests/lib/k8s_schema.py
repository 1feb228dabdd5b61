"""Kubernetes CRD schemas in tests: validation, defaulting and CEL rules as the API server applies them.

No API server runs in the tests, so this module does its part as far as a CRD decides it:

- ``to_json_schema`` turns an OpenAPI v3 (structural) schema node into JSON Schema (draft 7), which
  ``crd_validator`` and ``schema_errors`` use to check whole objects;
- ``apply_defaults`` fills in the schema's defaults;
- ``cel_failures`` evaluates every ``x-kubernetes-validations`` rule with a real CEL interpreter
  (cel-python), transition rules only on update;
- ``Admission`` chains the three, as the API server does on create and update.

The JSON Schema is stricter than the API server in two places, on purpose: a field the schema does not
declare is an error (the API server would drop it, and a misspelt field would go unnoticed; this is
what ``kubectl apply``'s strict field validation reports), and so is a null where the schema is not
nullable (the API server would drop that too).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml
from jsonschema.protocols import Validator

INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}

# Keywords that mean the same in OpenAPI v3 and JSON Schema draft 7, copied as they are.
_SAME_MEANING = (
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
    "multipleOf",
)
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_MISSING = object()


# --- OpenAPI v3 (structural) to JSON Schema -----------------------------------------------------------


def to_json_schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema (draft 7) that an OpenAPI v3 CRD schema node means to the API server.

    - ``x-kubernetes-int-or-string`` becomes ``type: [integer, string]``;
    - ``x-kubernetes-preserve-unknown-fields`` keeps undeclared fields (and, without a type, any value);
    - ``nullable`` adds null to the type (and to the enum); without it null is refused;
    - ``format: int32``/``int64`` bound integers as the API server does;
    - OpenAPI 3.0's boolean ``exclusiveMinimum``/``exclusiveMaximum`` become draft 7's numbers;
    - an object that declares properties refuses any other field (``additionalProperties: false``),
      except inside allOf/anyOf/oneOf/not, where properties only add checks to declared fields;
    - an ``x-kubernetes-embedded-resource`` object also admits apiVersion, kind and any metadata.

    Descriptions, defaults and other annotations are left out; CEL rules are ``cel_failures``'s part.
    """
    return _translate(node, in_junctor=False)


def _translate(node: Mapping[str, Any], *, in_junctor: bool) -> dict[str, Any]:
    out: dict[str, Any] = {key: copy.deepcopy(node[key]) for key in _SAME_MEANING if key in node}
    for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if node.get(flag) is True and bound in out:
            out[flag] = out.pop(bound)
    if node.get("format") in INT_RANGES:
        low, high = INT_RANGES[node["format"]]
        out.setdefault("minimum", low)
        out.setdefault("maximum", high)

    types = ["integer", "string"] if node.get("x-kubernetes-int-or-string") else []
    if not types and "type" in node:
        types = [node["type"]]
    if types and node.get("nullable"):
        types.append("null")
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if types:
        out["type"] = types[0] if len(types) == 1 else types

    if "properties" in node:
        out["properties"] = {
            name: _translate(sub, in_junctor=in_junctor) for name, sub in node["properties"].items()
        }
        if not in_junctor and not node.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        out["additionalProperties"] = _translate(additional, in_junctor=in_junctor)
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    if isinstance(node.get("items"), Mapping):
        out["items"] = _translate(node["items"], in_junctor=in_junctor)
    for junctor in _JUNCTORS:
        if junctor in node:
            out[junctor] = [_translate(sub, in_junctor=True) for sub in node[junctor]]
    if "not" in node:
        out["not"] = _translate(node["not"], in_junctor=True)
    if node.get("x-kubernetes-embedded-resource") and not in_junctor:
        _admit_object_header(out)
    return out


def _admit_object_header(out: dict[str, Any]) -> None:
    """apiVersion, kind and metadata are allowed on every Kubernetes object, declared or not.

    The API server validates metadata as ObjectMeta itself; a schema may only narrow name and
    generateName, so the translated metadata keeps its other fields open.
    """
    if out.get("additionalProperties") is not False:
        return
    properties = out["properties"]
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    properties.setdefault("metadata", {"type": "object"}).pop("additionalProperties", None)


def resource_validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for whole objects of a CRD version whose ``openAPIV3Schema`` is ``schema``."""
    translated = to_json_schema(schema)
    _admit_object_header(translated)
    jsonschema.Draft7Validator.check_schema(translated)
    return jsonschema.Draft7Validator(translated)


@functools.cache
def crd_version(crd_path: Path, version: str) -> dict[str, Any]:
    """The ``spec.versions[]`` entry named ``version`` of the CRD in ``crd_path`` (shared: do not modify)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the Spark Operator's CRD is 12k lines
    crd = yaml.load(crd_path.read_text(), Loader=loader)
    found = [entry for entry in crd["spec"]["versions"] if entry["name"] == version]
    if len(found) != 1:
        names = [entry["name"] for entry in crd["spec"]["versions"]]
        raise LookupError(f"{crd_path.name} has no version {version!r} (it has {names})")
    return found[0]


@functools.cache
def crd_validator(crd_path: Path, version: str) -> Validator:
    """A validator for objects of one version of the CRD in ``crd_path`` (built once per run)."""
    return resource_validator(crd_version(crd_path, version)["schema"]["openAPIV3Schema"])


def field_path(parts: Iterable[str | int]) -> str:
    """``spec.buckets.rules[0].pattern``, as the API server names fields (``<root>`` for the object)."""
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)
    return text.lstrip(".") or "<root>"


def schema_errors(validator: Validator, obj: Any) -> list[str]:
    """``field.path: what is wrong`` for every schema error of ``obj`` (empty when it is valid)."""
    return [f"{field_path(error.absolute_path)}: {error.message}" for error in validator.iter_errors(obj)]


# --- defaulting -----------------------------------------------------------------------------------------


def apply_defaults(node: Mapping[str, Any], value: Any) -> Any:
    """``value`` with the schema's defaults filled in where fields are absent, as the API server does
    (a defaulted object gets its own fields' defaults too). Changes ``value`` in place."""
    if isinstance(value, dict) and "properties" in node:
        for name, sub in node["properties"].items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                value[name] = apply_defaults(sub, value[name])
    elif isinstance(value, dict) and isinstance(node.get("additionalProperties"), Mapping):
        for key in value:
            value[key] = apply_defaults(node["additionalProperties"], value[key])
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        value[:] = [apply_defaults(node["items"], item) for item in value]
    return value


# --- CEL rules (x-kubernetes-validations) -----------------------------------------------------------------


@functools.cache
def compile_cel(rule: str) -> celpy.Runner:
    """A runnable CEL program; raises celpy.CELParseError for a rule that does not compile."""
    env = celpy.Environment()
    return env.program(env.compile(rule))


def is_transition_rule(rule: str) -> bool:
    """Whether ``rule`` compares with the old object (``oldSelf``): it runs on updates only."""
    return "oldSelf" in rule


def cel_holds(rule: str, self_value: Any, old_value: Any = _MISSING) -> bool | str:
    """True, False, or the evaluation error (which the API server also reports as a failure)."""
    activation = {"self": celpy.json_to_cel(self_value)}
    if old_value is not _MISSING:
        activation["oldSelf"] = celpy.json_to_cel(old_value)
    try:
        result = compile_cel(rule).evaluate(activation)
    except celpy.CELEvalError as error:
        return f"error: {error}"
    if isinstance(result, Exception):
        return f"error: {result}"
    return bool(result)


def cel_failures(node: Mapping[str, Any], value: Any, old: Any = _MISSING, path: str = "") -> Iterator[str]:
    """``path: message`` for every CEL rule ``value`` breaks; transition rules only where ``old`` has
    the same field (list items correlate by key in list-type map lists only, as in Kubernetes)."""
    if value is None:
        return
    for validation in node.get("x-kubernetes-validations", ()):
        rule = validation["rule"]
        if is_transition_rule(rule) and old is _MISSING:
            continue
        holds = cel_holds(rule, value, old) if is_transition_rule(rule) else cel_holds(rule, value)
        if holds is not True:
            detail = "" if holds is False else f" ({holds})"
            yield f"{path or '<root>'}: {validation['message']}{detail}"
    if isinstance(value, dict) and "properties" in node:
        for name, sub in node["properties"].items():
            if name in value:
                old_child = old.get(name, _MISSING) if isinstance(old, dict) else _MISSING
                yield from cel_failures(sub, value[name], old_child, f"{path}.{name}".lstrip("."))
    elif isinstance(value, dict) and isinstance(node.get("additionalProperties"), Mapping):
        for key, item in value.items():
            old_child = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
            yield from cel_failures(node["additionalProperties"], item, old_child, f"{path}[{key}]")
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        keys = node.get("x-kubernetes-list-map-keys") if node.get("x-kubernetes-list-type") == "map" else None
        old_items = {}
        if keys and isinstance(old, list):
            old_items = {tuple(item.get(k) for k in keys): item for item in old if isinstance(item, dict)}
        for index, item in enumerate(value):
            old_item = _MISSING
            if keys and isinstance(item, dict):
                old_item = old_items.get(tuple(item.get(k) for k in keys), _MISSING)
            yield from cel_failures(node["items"], item, old_item, f"{path}[{index}]")


# --- admission ------------------------------------------------------------------------------------------


class Admission:
    """What the API server does with an object of one CRD version on create (``old`` None) or update:
    defaulting, schema validation with unknown fields refused, then the CEL rules."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.validator = resource_validator(schema)

    def defaulted(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """A defaulted copy of ``manifest`` (which is left as it is)."""
        return apply_defaults(self.schema, copy.deepcopy(dict(manifest)))

    def errors(self, manifest: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[str]:
        """Why the API server would refuse ``manifest`` (empty when it would admit it)."""
        obj = self.defaulted(manifest)
        previous = _MISSING if old is None else self.defaulted(old)
        return schema_errors(self.validator, obj) + list(cel_failures(self.schema, obj, previous))

"""Kubernetes' structural schema rules for a CRD, checked without an API server (what
apiextensions-apiserver refuses when a CRD is created, and what it drops from stored objects)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import celpy
import jsonschema

from lib import k8s_schema
from lib.k8s_schema import is_transition_rule, to_json_schema

_OPENAPI_KEYWORDS = frozenset(
    [
        "type",
        "format",
        "title",
        "description",
        "default",
        "enum",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "properties",
        "additionalProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "nullable",
        "example",
        "externalDocs",
    ]
)
_K8S_EXTENSIONS = frozenset(
    f"x-kubernetes-{name}"
    for name in [
        "preserve-unknown-fields",
        "int-or-string",
        "embedded-resource",
        "list-type",
        "list-map-keys",
        "map-type",
        "validations",
    ]
)
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_SCALARS = _TYPES - {"object", "array"}
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_NOT_IN_JUNCTORS = ("type", "description", "default", "additionalProperties", "nullable")
_VALIDATION_KEYS = frozenset(
    {"rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"}
)


def structural_problems(
    node: Any,
    path: str = "openAPIV3Schema",
    *,
    root: bool = True,
    junctor: bool = False,
    correlated: bool = True,
) -> list[str]:
    """What keeps ``node`` from being a structural schema Kubernetes accepts (empty when none).

    Follows apiextensions' rules: every field and item typed (unless int-or-string or preserving
    unknown fields), properties xor additionalProperties, no additionalProperties: false, no
    uniqueItems, no $ref/definitions/patternProperties/dependencies/additionalItems/id, value
    validations only inside allOf/anyOf/oneOf/not, metadata restricted at the root, defaults that
    validate, well-formed list types, and CEL rules that compile, carry a message and use oldSelf only
    where old values correlate (not under items of atomic or set lists).
    """
    if not isinstance(node, Mapping):
        return [f"{path}: must be a schema object"]
    problems = [
        f"{path}.{key}: not allowed in a CRD schema"
        for key in set(node) - _OPENAPI_KEYWORDS - _K8S_EXTENSIONS
    ]
    kind = node.get("type")
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and preserve is not True:
        problems.append(f"{path}.x-kubernetes-preserve-unknown-fields: must be true or absent")
    if junctor:
        problems += [
            f"{path}.{key}: not allowed inside allOf/anyOf/oneOf/not"
            for key in _NOT_IN_JUNCTORS
            if key in node
        ]
    elif int_or_string and kind is not None:
        problems.append(f"{path}: x-kubernetes-int-or-string needs type left out")
    elif not int_or_string and not preserve and kind not in _TYPES:
        problems.append(f"{path}: needs a type (one of {sorted(_TYPES)}), not {kind!r}")
    if node.get("uniqueItems"):
        problems.append(f"{path}.uniqueItems: cannot be true (use x-kubernetes-list-type: set)")
    additional = node.get("additionalProperties")
    if additional is not None:
        if "properties" in node:
            problems.append(f"{path}: properties and additionalProperties are mutually exclusive")
        if not isinstance(additional, Mapping):
            problems.append(f"{path}.additionalProperties: must be a schema (not {additional!r})")
        if root:
            problems.append(f"{path}.additionalProperties: not allowed at the root")
    if "items" in node and not isinstance(node["items"], Mapping):
        problems.append(f"{path}.items: must be one schema, not a list")
    if kind == "array" and "items" not in node and not junctor:
        problems.append(f"{path}: an array needs items")
    problems += _list_type_problems(node, path)
    problems += _default_problems(node, path)
    problems += _validation_problems(node, path, correlated)
    if root:
        metadata = node.get("properties", {}).get("metadata")
        if metadata is not None and set(metadata.get("properties", {})) - {"name", "generateName"}:
            problems.append(f"{path}.properties.metadata: only name and generateName may be restricted")
    for name, sub in (node.get("properties") or {}).items():
        problems += structural_problems(sub, f"{path}.properties.{name}", root=False, correlated=correlated)
    if isinstance(additional, Mapping):
        problems += structural_problems(
            additional, f"{path}.additionalProperties", root=False, correlated=correlated
        )
    if isinstance(node.get("items"), Mapping):
        keyed = node.get("x-kubernetes-list-type") == "map"
        problems += structural_problems(
            node["items"], f"{path}.items", root=False, correlated=correlated and keyed
        )
    for junctor_name in _JUNCTORS:
        for index, sub in enumerate(node.get(junctor_name, ())):
            problems += structural_problems(sub, f"{path}.{junctor_name}[{index}]", root=False, junctor=True)
    if "not" in node:
        problems += structural_problems(node["not"], f"{path}.not", root=False, junctor=True)
    return problems


def _list_type_problems(node: Mapping[str, Any], path: str) -> list[str]:
    list_type, keys = node.get("x-kubernetes-list-type"), node.get("x-kubernetes-list-map-keys")
    items = node.get("items") if isinstance(node.get("items"), Mapping) else {}
    problems = []
    if list_type is not None and node.get("type") != "array":
        problems.append(f"{path}: x-kubernetes-list-type is for arrays")
    if list_type not in (None, "atomic", "set", "map"):
        problems.append(f"{path}.x-kubernetes-list-type: {list_type!r} is not atomic, set or map")
    if keys is not None and list_type != "map":
        problems.append(f"{path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map")
    if list_type == "set" and items.get("type") not in _SCALARS:
        problems.append(f"{path}: a set's items must be scalars")
    if list_type == "map":
        if not keys:
            problems.append(f"{path}: a list-type map needs x-kubernetes-list-map-keys")
        if items.get("type") != "object":
            problems.append(f"{path}: a list-type map's items must be objects")
        for key in keys or ():
            field = items.get("properties", {}).get(key)
            if field is None or field.get("type") not in _SCALARS:
                problems.append(f"{path}: list-map key {key!r} must be a scalar property of the items")
            elif key not in items.get("required", ()) and "default" not in field:
                problems.append(f"{path}: list-map key {key!r} must be required or defaulted")
    return problems


def _default_problems(node: Mapping[str, Any], path: str) -> list[str]:
    if "default" not in node:
        return []
    without_default = {key: value for key, value in node.items() if key != "default"}
    validator = jsonschema.Draft7Validator(to_json_schema(without_default))
    return [f"{path}.default: {error.message}" for error in validator.iter_errors(node["default"])]


def _validation_problems(node: Mapping[str, Any], path: str, correlated: bool) -> list[str]:
    problems = []
    for index, validation in enumerate(node.get("x-kubernetes-validations", ())):
        where = f"{path}.x-kubernetes-validations[{index}]"
        problems += [f"{where}.{key}: unknown" for key in set(validation) - _VALIDATION_KEYS]
        rule, message = validation.get("rule", ""), validation.get("message", "")
        if not message.strip():
            problems.append(f"{where}: needs a message that says what to do")
        try:
            k8s_schema.compile_cel(rule)
        except celpy.CELParseError as error:
            problems.append(f"{where}: rule {rule!r} does not compile: {error}")
        if is_transition_rule(rule) and not correlated:
            problems.append(f"{where}: oldSelf cannot be used under items of an atomic or set list")
    return problems


def subschemas(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``node`` and every schema under it, depth first, each with its path: ``.name`` for a property,
    ``.*`` for a map's values, ``[]`` for a list's items."""
    yield path, node
    for name, sub in (node.get("properties") or {}).items():
        yield from subschemas(sub, f"{path}.{name}")
    for key, suffix in (("additionalProperties", ".*"), ("items", "[]")):
        if isinstance(node.get(key), Mapping):
            yield from subschemas(node[key], f"{path}{suffix}")


def unbounded(node: Mapping[str, Any], path: str = "") -> list[str]:
    """Lists without maxItems, maps without maxProperties, free strings without maxLength: CEL's cost
    estimate assumes the worst for each, and the API server refuses rules over budget."""
    found = []
    for where, sub in subschemas(node, path):
        kind = sub.get("type")
        if kind == "array" and "maxItems" not in sub:
            found.append(f"{where}: array without maxItems")
        if isinstance(sub.get("additionalProperties"), Mapping) and "maxProperties" not in sub:
            found.append(f"{where}: map without maxProperties")
        if kind == "string" and "enum" not in sub and "maxLength" not in sub:
            found.append(f"{where}: string without maxLength")
    return found


def undescribed(node: Mapping[str, Any], path: str = "") -> list[str]:
    """The properties without a description, which `kubectl explain` would show bare."""
    return [
        where
        for where, sub in subschemas(node, path)
        if where != path and not where.endswith((".*", "[]")) and not sub.get("description")
    ]


def all_validations(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, str]]]:
    for where, sub in subschemas(node, path):
        for validation in sub.get("x-kubernetes-validations", ()):
            yield where, validation


def nulls_in_declared_fields(node: Mapping[str, Any], value: Any) -> list[str]:
    """Where ``value`` holds a null the API server would drop: a declared field that is not nullable."""
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return []
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            sub = (node.get("properties") or {}).get(key) or node.get("additionalProperties")
            if item is None and not (isinstance(sub, Mapping) and sub.get("nullable")):
                found.append(key)
            elif isinstance(sub, Mapping):
                found += nulls_in_declared_fields(sub, item)
        return found
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [key for item in value for key in nulls_in_declared_fields(node["items"], item)]
    return []

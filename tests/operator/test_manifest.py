"""The spec's models (manifest.py) and the CRD's schema declare the same resource.

Both schemas are walked side by side (the model's from pydantic's model_json_schema, by alias): every
object has the same properties (by the manifest's names) and the same required ones, and each property
the same enum, default and numeric bounds where the CRD declares them. Either side gaining a field the
other lacks fails here, naming the field.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from hbt_admission import SPEC_SCHEMA
from hudi_bucket_operator.manifest import TableSpecSection

MODEL_SCHEMA = TableSpecSection.model_json_schema(by_alias=True)


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    """The model's schema for one value: its $ref followed, and ``| None`` dropped."""
    if "$ref" in schema:
        return _resolved(MODEL_SCHEMA["$defs"][schema["$ref"].rpartition("/")[2]])
    members = [member for member in schema.get("anyOf", []) if member.get("type") != "null"]
    if len(members) == 1:
        return _resolved(members[0])
    return schema


def _enum(schema: dict[str, Any]) -> set[Any] | None:
    schema = _resolved(schema)
    if "const" in schema:
        return {schema["const"]}
    return set(schema["enum"]) if "enum" in schema else None


def _objects(crd: dict[str, Any], model: dict[str, Any], where: str) -> list[tuple[str, dict, dict]]:
    """Every object of the spec, as (its path, the CRD's schema, the model's schema)."""
    model = _resolved(model)
    found = [(where, crd, model)]
    for name, crd_property in crd.get("properties", {}).items():
        model_property = _resolved(model.get("properties", {}).get(name, {}))
        if crd_property.get("type") == "object" and "properties" in crd_property:
            found += _objects(crd_property, model_property, f"{where}.{name}")
        items = crd_property.get("items", {})
        if crd_property.get("type") == "array" and items.get("type") == "object":
            found += _objects(items, model_property.get("items", {}), f"{where}.{name}[]")
    return found


def differences(crd: dict[str, Any], model: dict[str, Any]) -> list[str]:
    """Where the model's schema and the CRD's disagree, one line each."""
    found = []
    for where, crd_object, model_object in _objects(crd, model, "spec"):
        crd_properties, model_properties = (
            crd_object.get("properties", {}),
            model_object.get("properties", {}),
        )
        for name in sorted(set(crd_properties) ^ set(model_properties)):
            side = "the CRD" if name in crd_properties else "the model"
            found.append(f"{where}.{name}: only {side} declares it")
        if set(model_object.get("required", [])) != set(crd_object.get("required", [])):
            found.append(f"{where}: required {model_object.get('required')} != {crd_object.get('required')}")
        for name in sorted(set(crd_properties) & set(model_properties)):
            found += _property_differences(f"{where}.{name}", crd_properties[name], model_properties[name])
    return found


def _property_differences(where: str, crd: dict[str, Any], model: dict[str, Any]) -> list[str]:
    found = []
    crd_enum = set(crd["enum"]) if "enum" in crd else None
    if _enum(model) != crd_enum:
        found.append(f"{where}: enum {_enum(model)} != {crd_enum}")
    if isinstance(crd.get("default"), dict):
        # An object the API server defaults ({}) only fills in its own properties' defaults, which the
        # walk compares there; the model must give it a default too.
        if "default" not in model:
            found.append(f"{where}: the CRD defaults it, the model requires it")
    elif "default" in crd and model.get("default") != crd["default"]:
        found.append(f"{where}: default {model.get('default')!r} != {crd['default']!r}")
    bounds = _resolved(model)
    for bound in ("minimum", "maximum"):
        if bound in crd and bound in bounds and bounds[bound] != crd[bound]:
            found.append(f"{where}: {bound} {bounds[bound]} != {crd[bound]}")
    return found


def test_the_walk_reaches_every_object_of_the_spec() -> None:
    assert {where for where, _, _ in _objects(SPEC_SCHEMA, MODEL_SCHEMA, "spec")} == {
        "spec", "spec.table", "spec.buckets", "spec.buckets.rules[]", "spec.buckets.sizing", "spec.apply",
        "spec.apply.window", "spec.writers", "spec.writers.workloads[]", "spec.writers.workloads[].suspend",
        "spec.verify", "spec.spark", "spec.spark.driver", "spec.spark.executor", "spec.spark.envFromSecrets[]",
    }  # fmt: skip


def test_the_models_declare_what_the_crd_declares() -> None:
    assert differences(SPEC_SCHEMA, MODEL_SCHEMA) == []


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda crd: crd["properties"]["table"]["properties"].update(owner={"type": "string"}),
         "spec.table.owner: only the CRD declares it"),
        (lambda crd: crd["properties"]["spark"]["properties"].pop("ttlSeconds"),
         "spec.spark.ttlSeconds: only the model declares it"),
        (lambda crd: crd["properties"]["buckets"]["required"].append("convert"), "spec.buckets: required"),
        (lambda crd: crd["properties"]["engine"]["enum"].append("Flink"), "spec.engine: enum"),
        (lambda crd: crd["properties"]["apply"]["properties"]["policy"].update(default="Automatic"),
         "spec.apply.policy: default 'Manual' != 'Automatic'"),
        (lambda crd: crd["properties"]["buckets"]["properties"]["rules"]["items"]["required"].pop(),
         "spec.buckets.rules[]: required"),
        (lambda crd: crd["properties"]["spark"]["properties"]["driver"]["properties"]["cores"].update(maximum=64),
         "spec.spark.driver.cores: maximum 256 != 64"),
    ],
    ids=["crd-only", "model-only", "required", "enum", "default", "required-in-items", "bound"],
)  # fmt: skip
def test_a_difference_is_found_and_named(change: Callable[[dict[str, Any]], object], said: str) -> None:
    crd = copy.deepcopy(SPEC_SCHEMA)
    change(crd)
    assert any(said in difference for difference in differences(crd, MODEL_SCHEMA))

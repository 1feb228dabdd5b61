"""A part of the CRD's schema and the pydantic models that declare it, walked side by side.

The models' schema is pydantic's model_json_schema, by alias: every object has the same properties (by
the resource's names) and the same required ones, and each property the same enum, default and bounds
where the CRD declares them. Either side gaining a field the other lacks is a difference, naming the
field. test_manifest.py holds the spec to it, test_table_status.py the status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Bounds compared where both sides declare them (pydantic says a list's, a map's and a text's
# max_length as maxItems, maxProperties and maxLength, as the CRD does).
BOUNDS = ("minimum", "maximum", "maxItems", "maxProperties", "maxLength")


@dataclass(frozen=True)
class ModelSchema:
    """A model's JSON schema (by alias), whose $refs point into its own $defs."""

    schema: dict[str, Any]

    def resolved(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema for one value: its $ref followed, and ``| None`` dropped."""
        if "$ref" in schema:
            return self.resolved(self.schema["$defs"][schema["$ref"].rpartition("/")[2]])
        members = [member for member in schema.get("anyOf", []) if member.get("type") != "null"]
        if len(members) == 1:
            return self.resolved(members[0])
        return schema

    def enum(self, schema: dict[str, Any]) -> set[Any] | None:
        schema = self.resolved(schema)
        if "const" in schema:
            return {schema["const"]}
        return set(schema["enum"]) if "enum" in schema else None

    def objects(
        self, crd: dict[str, Any], model: dict[str, Any], where: str
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """Every object under ``where``, as (its path, the CRD's schema, the model's schema). An object
        the CRD leaves free-form (no properties: status.writers, status.history's entries) is not walked:
        the CRD keeps whatever its model writes."""
        model = self.resolved(model)
        found = [(where, crd, model)]
        for name, crd_property in crd.get("properties", {}).items():
            model_property = self.resolved(model.get("properties", {}).get(name, {}))
            if crd_property.get("type") == "object" and "properties" in crd_property:
                found += self.objects(crd_property, model_property, f"{where}.{name}")
            items = crd_property.get("items", {})
            if crd_property.get("type") == "array" and "properties" in items:
                found += self.objects(items, model_property.get("items", {}), f"{where}.{name}[]")
        return found

    def differences(self, crd: dict[str, Any], where: str) -> list[str]:
        """Where the model's schema and the CRD's (the object at ``where``) disagree, one line each."""
        found = []
        for path, crd_object, model_object in self.objects(crd, self.schema, where):
            crd_properties, model_properties = (
                crd_object.get("properties", {}),
                model_object.get("properties", {}),
            )
            for name in sorted(set(crd_properties) ^ set(model_properties)):
                side = "the CRD" if name in crd_properties else "the model"
                found.append(f"{path}.{name}: only {side} declares it")
            if set(model_object.get("required", [])) != set(crd_object.get("required", [])):
                found.append(
                    f"{path}: required {model_object.get('required')} != {crd_object.get('required')}"
                )
            for name in sorted(set(crd_properties) & set(model_properties)):
                found += self._property_differences(
                    f"{path}.{name}", crd_properties[name], model_properties[name]
                )
        return found

    def _property_differences(self, where: str, crd: dict[str, Any], model: dict[str, Any]) -> list[str]:
        found = []
        crd_enum = set(crd["enum"]) if "enum" in crd else None
        if self.enum(model) != crd_enum:
            found.append(f"{where}: enum {self.enum(model)} != {crd_enum}")
        if isinstance(crd.get("default"), dict):
            # An object the API server defaults ({}) only fills in its own properties' defaults, which the
            # walk compares there; the model must give it a default too.
            if "default" not in model:
                found.append(f"{where}: the CRD defaults it, the model requires it")
        elif "default" in crd and model.get("default") != crd["default"]:
            found.append(f"{where}: default {model.get('default')!r} != {crd['default']!r}")
        bounds = self.resolved(model)
        for bound in BOUNDS:
            if bound in crd and bound in bounds and bounds[bound] != crd[bound]:
                found.append(f"{where}: {bound} {bounds[bound]} != {crd[bound]}")
        return found

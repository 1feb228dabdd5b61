"""What the models declare of the CRD's schema beyond what pydantic's JSON schema says (no I/O).

The CRD is generated from the models (crd.py): these markers, in a field's ``Annotated`` or a model's
``json_schema_extra``, put into the models' JSON schema the Kubernetes keywords pydantic has no word for:
integer formats, CEL rules, list types, nullable fields and the defaults the API server fills in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, GetJsonSchemaHandler, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

# Keys crd.py reads and removes: a field whose default the API server fills in (else a default is the
# operator's, and the stored resource leaves the field out).
FILLED_IN = "x-filled-in"

Int32 = Annotated[int, Field(json_schema_extra={"format": "int32"})]
Int64 = Annotated[int, Field(json_schema_extra={"format": "int64"})]


class _Keywords:
    """A marker that adds keywords to the JSON schema of the value it annotates."""

    def keywords(self, schema: JsonSchemaValue) -> None:
        raise NotImplementedError

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        self.keywords(schema)
        return schema


@dataclass(frozen=True)
class Cel(_Keywords):
    """A CEL rule the API server checks (x-kubernetes-validations), with the message it refuses with."""

    rule: str
    message: str

    def keywords(self, schema: JsonSchemaValue) -> None:
        schema.setdefault("x-kubernetes-validations", []).append({"rule": self.rule, "message": self.message})


@dataclass(frozen=True)
class MatchedByCel(_Keywords):
    """The field's ``pattern``, checked by a CEL rule instead, so that a refusal says ``message``.
    ``keep_pattern`` keeps the pattern too (for clients that read it)."""

    message: str
    keep_pattern: bool = False

    def keywords(self, schema: JsonSchemaValue) -> None:
        pattern = schema["pattern"] if self.keep_pattern else schema.pop("pattern")
        Cel(f"self.matches({cel_string(pattern)})", self.message).keywords(schema)


@dataclass(frozen=True)
class Extra(_Keywords):
    """Keywords as they are (nullable, x-kubernetes-list-type, ...); a tuple (hashable, as annotations
    must be) is a list."""

    values: tuple[tuple[str, Any], ...]

    def keywords(self, schema: JsonSchemaValue) -> None:
        schema.update((key, list(value) if isinstance(value, tuple) else value) for key, value in self.values)


def extra(**values: Any) -> Extra:
    return Extra(tuple((key.replace("_", "-"), value) for key, value in values.items()))


# An object the API server keeps as it is: the model reads and writes it, the CRD does not prune it (an
# older operator's keys survive, and a null the model writes is not dropped before it reads it back).
FREE_FORM = WithJsonSchema({"type": "object", "additionalProperties": True})
NULLABLE = Extra((("nullable", True),))
FILLED = Extra(((FILLED_IN, True),))
ATOMIC_LIST = Extra((("x-kubernetes-list-type", "atomic"),))


def list_map(*keys: str) -> Extra:
    """A list the API server merges item by item, each item named by ``keys``."""
    return Extra((("x-kubernetes-list-type", "map"), ("x-kubernetes-list-map-keys", keys)))


def cel_rules(*rules: Cel) -> dict[str, Any]:
    """A model's own CEL rules, across its fields, for its ``json_schema_extra``."""
    return {"x-kubernetes-validations": [{"rule": rule.rule, "message": rule.message} for rule in rules]}


def cel_string(text: str) -> str:
    """``text`` as a CEL string literal (single-quoted; a backslash and a quote escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

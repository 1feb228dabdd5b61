"""What a job's report is made of: frozen pydantic dataclasses whose fields are the report's JSON, with
the fields' names in camelCase as its keys.

A job writes the report and the operator reads it (``contract.reports``): the fields declare its shape
once, for both. Dataclasses rather than models, so that the code builds them as it always has (by
position too). Reading is lax as JSON needs (an enum from its value, a tuple from a list); what cannot
be read is a ValidationError naming each field's path.
"""

from __future__ import annotations

from typing import Protocol, Self, TypeAlias

from pydantic import ConfigDict, JsonValue, TypeAdapter
from pydantic.alias_generators import to_camel

# A JSON object, as json.loads gives it: what a report holds of what no reader types (a command's result
# in the report's envelope, a plan's preflight notes).
JsonObject: TypeAlias = dict[str, JsonValue]

REPORT_JSON = ConfigDict(
    alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
)


class ReportJson:
    """``to_dict`` and ``from_dict`` for a report's dataclass (declared with ``config=REPORT_JSON``)."""

    def to_dict(self) -> JsonObject:
        """JSON-safe, as the report holds it."""
        dumped: JsonObject = TypeAdapter(type(self)).dump_python(self, mode="json")
        return dumped

    @classmethod
    def from_dict(cls, data: object) -> Self:
        """What ``to_dict`` gave, read back; ValidationError for anything else."""
        return TypeAdapter(cls).validate_python(data)


class ReportedResult(Protocol):
    """A command's typed result: its ``to_dict`` is the report's ``result``."""

    def to_dict(self) -> JsonObject: ...

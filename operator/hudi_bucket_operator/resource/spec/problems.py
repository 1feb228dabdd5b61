"""What the spec's models share: the ``Section`` base, and what is wrong with a spec, said the manifest's way
(no I/O).

A section's rules across its fields (``rules_broken``) read the object as written, so that, as with the
API server, a field's error hides none of them. ``problems`` says each problem of a spec the models
refuse, naming its field the way the manifest does (``spec.buckets.rules[0].pattern``, counting from 0)
and what it must be (the field's ``Expect``, else what its type says).
"""

from __future__ import annotations

import enum
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, ValidatorFunctionWrapHandler, model_validator
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError


@dataclass(frozen=True)
class Expect:
    """What a field must be, as a refusal says it ("spec.x must be <text>, not 5")."""

    text: str


def problem(text: str, *, field: str = "") -> PydanticCustomError:
    """A problem a validator finds: ``text`` follows the path of the object it checks (and ``field``)."""
    return PydanticCustomError("spec_problem", "{text}", {"text": text, "field": field})


def _must_be(expected: str, value: object) -> str:
    return f" is required ({expected})" if value is None else f" must be {expected}, not {value!r}"


class Section(BaseModel):
    """One object of the spec. Strict: a manifest's "4" is no integer and its "false" no boolean."""

    # Unknown fields are the API server's to prune or refuse; the operator reads what it knows.
    model_config = ConfigDict(
        strict=True, frozen=True, extra="ignore", alias_generator=to_camel, use_attribute_docstrings=True
    )
    expected: ClassVar[str] = "an object"

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        """The problems with this object by its own rules (the CRD's CEL rules, and what only code can
        check), read from the object as written, so that a field's error hides none of them."""
        return []

    @model_validator(mode="wrap")
    @classmethod
    def _fields_and_rules(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # As the API server does: the schema's errors and the CEL rules' problems, all said at once.
        try:
            section, errors = handler(data), []
        except ValidationError as err:
            section, errors = None, [_again(error) for error in err.errors()]
        if isinstance(data, Mapping):
            errors += [InitErrorDetails(type=found, loc=(), input=data) for found in cls.rules_broken(data)]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return section


def _again(error: ErrorDetails) -> InitErrorDetails:
    """A field's error, to raise again beside its section's own problems."""
    kind = error["type"]
    ctx = error.get("ctx", {})
    again: str | PydanticCustomError = kind
    if kind == "spec_problem":
        again = problem(ctx["text"], field=ctx["field"])
    return InitErrorDetails(type=again, loc=error["loc"], input=error["input"], ctx=ctx)


def problems(err: ValidationError, spec: type[Section]) -> list[str]:
    """Each of ``err``'s errors (validating ``spec``) as one problem: the field's path in the manifest and
    what it must be."""
    return [_said(error, spec) for error in err.errors()]


def _said(error: ErrorDetails, spec: type[Section]) -> str:
    where, annotation = _locate(error["loc"], spec)
    if error["type"] == "spec_problem":
        ctx = error.get("ctx", {})
        return f"{where}.{ctx['field']}{ctx['text']}" if ctx["field"] else f"{where}{ctx['text']}"
    value = None if error["type"] == "missing" else error["input"]
    return f"{where}{_must_be(_expected(annotation) or error['msg'], value)}"


def _locate(loc: tuple[int | str, ...], spec: type[Section]) -> tuple[str, Any]:
    """The manifest's path to ``loc`` in ``spec`` and the annotation of what is there."""
    where: str = "spec"
    annotation: Any = spec
    for part in loc:
        base = _unwrapped(annotation)[0]
        if isinstance(base, type) and issubclass(base, BaseModel):
            info = next(info for info in base.model_fields.values() if info.alias == part)
            where, annotation = f"{where}.{part}", _annotated(info)
        elif get_origin(base) is dict:
            where, annotation = f"{where}[{part!r}]", get_args(base)[1]
        elif get_origin(base) is list:
            where, annotation = f"{where}[{part}]", get_args(base)[0]
        else:  # nothing the spec declares: say where, and pydantic's own words
            return f"{where}[{part}]", None
    return where, annotation


def _annotated(info: FieldInfo) -> Any:
    return Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation


def _unwrapped(annotation: Any) -> tuple[Any, list[Any]]:
    """The type under ``Annotated`` and ``| None``, and all that ``Annotated`` says of it, outer first."""
    found: list[Any] = []
    while True:
        if get_origin(annotation) is Annotated:
            found += [
                item
                for extra in get_args(annotation)[1:]
                for item in (extra.metadata if isinstance(extra, FieldInfo) else [extra])
            ]
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType):
            members = [member for member in get_args(annotation) if member is not type(None)]
            if len(members) != 1:  # int | str: a union of its own, not an optional field
                return annotation, found
            annotation = members[0]
        else:
            return annotation, found


def _expected(annotation: Any) -> str | None:
    """What a value of ``annotation`` must be, as a refusal says it."""
    base, metadata = _unwrapped(annotation)
    for item in metadata:
        if isinstance(item, Expect):
            return item.text
    if isinstance(base, type) and issubclass(base, Section):
        return base.expected
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return f"one of {[member.value for member in base]}"
    if get_origin(base) is Literal:
        return f"one of {list(get_args(base))}"
    if base is bool:
        return "true or false"
    if base is int:
        # Field(ge=, le=) leaves annotated-types' Ge and Le in the metadata.
        low = next((item.ge for item in metadata if hasattr(item, "ge")), None)
        high = next((item.le for item in metadata if hasattr(item, "le")), None)
        return "an integer" if low is None or high is None else f"an integer in {low}..{high}"
    if base is str:
        return "a string"
    return None

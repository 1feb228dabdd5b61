"""How the operator's settings are declared (pure: no I/O): the markers on a setting's field and the
value types the settings share, as their environment variables spell them.

The settings live where they are used (``job_defaults.JobDefaults``, ``writer_policy.WriterPolicy``, the runtime's
own groups in runtime/settings.py); runtime/settings.py reads them all from the environment, says what a
bad one must be (``spec.problems.Expect``) and prints their reference.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from hudi_bucket_operator.resource.schedule import DURATION_FORMAT, parse_duration
from hudi_bucket_operator.resource.spec.fields import DnsName
from hudi_bucket_operator.resource.spec.problems import Expect
from hudi_bucket_operator.resource.spec.spark import MAX_CORES, MAX_EXECUTORS


@dataclass(frozen=True)
class Helm:
    """The chart's value that sets a setting (its path in values.yaml), and what the chart's schema
    asks of it beyond the setting, if anything."""

    path: str
    narrower: str = ""


@dataclass(frozen=True)
class Shown:
    """How the settings' reference shows a default that the environment spells otherwise."""

    show: Callable[[Any], str]


def _words(value: object) -> object:
    # A list in one variable: comma-separated, blanks ignored ("a, b," is ("a", "b")).
    return tuple(w.strip() for w in value.split(",") if w.strip()) if isinstance(value, str) else value


def json_text(value: object) -> object:
    """A JSON value as its variable spells it (a value given as such is taken as it is)."""
    return json.loads(value) if isinstance(value, str) else value  # a JSONDecodeError is a ValueError


def _duration(value: object) -> object:
    if isinstance(value, str):
        seconds = parse_duration(value.strip())
        if seconds is None:
            raise ValueError("not a duration")
        return seconds
    return value


def _text(seconds: int) -> str:
    """Seconds as the largest whole unit of a duration: 3600 is 1h."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    raise ValueError(seconds)


Words = Annotated[tuple[str, ...], BeforeValidator(_words), Expect("a comma-separated list")]
ByNamespace = Annotated[
    dict[str, tuple[str, ...]],
    BeforeValidator(json_text),
    Expect(
        'a JSON object from namespaces ("*": every namespace) to lists of strings, such as {"lake": ["a", "b"], "*": ["c"]}'
    ),
]
Seconds = Annotated[int, BeforeValidator(_duration), Field(gt=0), Expect(DURATION_FORMAT), Shown(_text)]
Name = Annotated[str, Field(min_length=1), Expect("a non-empty string")]
ObjectName = Annotated[DnsName, Expect("a Kubernetes object name (lowercase letters, digits, '-' and '.')")]
# As a table's spec bounds them (the CRD): a default or a limit beyond could never be a table's own.
Cores = Annotated[int, Field(ge=1, le=MAX_CORES), Expect(f"an integer from 1 to {MAX_CORES}")]
Executors = Annotated[int, Field(ge=1, le=MAX_EXECUTORS), Expect(f"an integer from 1 to {MAX_EXECUTORS}")]

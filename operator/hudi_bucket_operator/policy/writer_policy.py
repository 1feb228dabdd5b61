"""What the admins let tables pause (Helm values ``writers``; pure: no I/O): whether at all, the kinds of
writer besides Deployment and StatefulSet and how each is suspended, and how long writers may stay paused.
A table names its writers (resource/writers.py); this policy refuses what its admins did not allow and
resolves each writer's kind to how it is paused.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter

from hudi_bucket_operator.resource.setting import Helm, Seconds, Shown, json_text
from hudi_bucket_operator.resource.spec.problems import Expect
from hudi_bucket_operator.resource.writers import (
    SCALED_KINDS,
    SuspendField,
    Writer,
    WriterKind,
    WriterRefs,
    WritersSpec,
)


class _Suspend(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    path: Annotated[str, Field(pattern=r"^spec(\.[A-Za-z_][A-Za-z0-9_-]*)+$")]
    value: Annotated[str, Field(min_length=1)]
    stopped_path: Annotated[
        str, Field(alias="stoppedPath", pattern=r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$")
    ]
    stopped: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Kind(BaseModel):
    """A kind of writer the admins let tables pause, and how, as Helm value writers.kinds declares it."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    api_version: Annotated[
        str,
        Field(alias="apiVersion", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/v[0-9]+((alpha|beta)[0-9]+)?$"),
    ]
    kind: Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]*$")]
    plural: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]*$")]
    suspend: _Suspend

    def writer_kind(self) -> WriterKind:
        how = self.suspend
        field = SuspendField(how.path, how.value, how.stopped_path, tuple(how.stopped))
        return WriterKind(self.api_version, self.kind, self.plural, field)


def _declared(value: object) -> object:
    """Writer kinds from their declaration (a JSON list of ``_Kind``); kinds given as such stay."""
    if not isinstance(value, str):
        return value
    return tuple(kind.writer_kind() for kind in _KINDS.validate_python(json_text(value)))


_KINDS = TypeAdapter(list[_Kind])


def _declaration(kinds: tuple[WriterKind, ...]) -> str:
    """Kinds as their variable declares them (a declared kind has its suspend field)."""
    declared = []
    for kind in kinds:
        how = kind.suspend or SuspendField("", "", "", ())
        suspend = {
            "path": how.path,
            "value": how.suspended,
            "stoppedPath": how.stopped_path,
            "stopped": how.stopped,
        }
        declared.append(
            {"apiVersion": kind.api_version, "kind": kind.kind, "plural": kind.plural, "suspend": suspend}
        )
    return json.dumps(declared)


class WriterPolicy(BaseModel):
    """What the admins let tables pause (Helm values ``writers``, each read from the environment variable
    its alias names): whether at all, the kinds besides Deployment and StatefulSet and how each is
    suspended, the longest quiesceTimeout a table may ask for, and how long an apply may hold its writers
    paused before they are resumed regardless."""

    # Lax: every value arrives as a string ("true" is True). Built by name in tests.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    enabled: Annotated[
        bool,
        Field(
            alias="HBO_WRITERS_ENABLED",
            description="whether tables may have the operator pause their writers (spec.writers)",
        ),
        Expect("true or false"),
        Helm("writers.enabled"),
    ] = False
    kinds: Annotated[
        tuple[WriterKind, ...],
        Field(
            alias="HBO_WRITER_KINDS",
            description="kinds of writers besides Deployment and StatefulSet, and how each is suspended",
        ),
        BeforeValidator(_declared),
        Expect(
            'a JSON list of {"apiVersion", "kind", "plural", "suspend": {"path", "value", "stoppedPath", '
            '"stopped"}}'
        ),
        Shown(_declaration),
        Helm("writers.kinds"),
    ] = ()
    max_quiesce_timeout: Annotated[
        Seconds,
        Field(
            alias="HBO_MAX_QUIESCE_TIMEOUT",
            description="the longest spec.writers.quiesceTimeout a table may ask for",
        ),
        Helm("writers.maxQuiesceTimeout"),
    ] = 3600
    apply_deadline: Annotated[
        Seconds,
        Field(
            alias="HBO_APPLY_DEADLINE",
            description="how long an apply may hold writers paused: past it, it is cancelled and they resume",
        ),
        Helm("writers.applyDeadline"),
    ] = 6 * 3600

    def kind(self, name: str) -> WriterKind | None:
        return next((k for k in (*SCALED_KINDS, *self.kinds) if k.kind == name), None)

    def problems(self, refs: WriterRefs) -> list[str]:
        """Why the table may not have the operator pause these writers (none: it may)."""
        if not refs.workloads:
            return []
        if not self.enabled:
            return [
                "spec.writers names workloads, but this operator may not pause writers: its admins have not "
                "enabled it (Helm value writers.enabled)"
            ]
        problems = []
        if unknown := sorted({w.kind for w in refs.workloads if self.kind(w.kind) is None}):
            known = [k.kind for k in (*SCALED_KINDS, *self.kinds)]
            problems.append(
                f"spec.writers.workloads names kind(s) {unknown} that the operator does not know how to "
                f"pause: it pauses {known} (its admins declare other kinds in the Helm value writers.kinds)"
            )
        if refs.quiesce_timeout > self.max_quiesce_timeout:
            problems.append(
                f"spec.writers.quiesceTimeout is {refs.quiesce_timeout} s, over the "
                f"{self.max_quiesce_timeout} s the admins allow (Helm value writers.maxQuiesceTimeout)"
            )
        return problems

    def resolve(self, refs: WriterRefs) -> WritersSpec:
        """The writers as the operator pauses them: each kind as the admins declared it (a kind they did
        not declare is left out: ``problems`` refused it)."""
        writers = []
        for ref in refs.workloads:
            kind = self.kind(ref.kind)
            if kind is not None:
                writers.append(Writer(kind.api_version, kind.kind, ref.name, kind.plural, kind.suspend))
        return WritersSpec(tuple(writers), refs.quiesce_timeout)

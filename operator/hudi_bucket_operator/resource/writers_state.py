"""``status.writers`` as pydantic models: maintenance.py's memory of the steps around an apply (no I/O).

The JSON they read and write is the shape the operator always stored there (the CRD leaves the field
free-form), so a table whose writers an older operator paused is resumed by this one:

    {"step": "Applying", "planId": "sha256:…", "generation": 3, "retryToken": "", "checkRecords": false,
     "pausedAt": "2026-11-24T01:20:00Z", "deadline": "…", "applyDeadline": "…",
     "items": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "ingest", "plural": "deployments",
                "prior": {"replicas": 3}}],
     "last": {"pausedAt": "…", "resumedAt": "…", "downtimeSeconds": 30.0, "writers": ["Deployment/ingest"]}}

Between applies only ``last`` is left (``WritersState``); while the steps run, ``ApplySteps``. Times are
RFC 3339 strings to the second (…Z), as elsewhere in the status.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from hudi_bucket_operator.resource.writers import ObservedWriter, SuspendField, Writer


class _Stored(BaseModel):
    # As table_status.StatusPart (which imports these models, so cannot be imported here): JSON the
    # operator wrote, read back; camelCase keys; unknown keys dropped on the next write.
    model_config = ConfigDict(
        frozen=True, extra="ignore", alias_generator=to_camel, validate_by_name=True, validate_by_alias=True
    )


class Step(StrEnum):
    AWAITING_WINDOW = "AwaitingWindow"
    PAUSING = "Pausing"
    APPLYING = "Applying"
    RESUMING = "Resuming"


HOLDING = frozenset({Step.PAUSING, Step.APPLYING, Step.RESUMING})  # the steps writers may be paused in


class Outcome(_Stored):
    """What the conditions say once the writers are back: Ready or Stalled, with the reason."""

    ready: bool
    reason: str
    message: str

    @classmethod
    def stalled(cls, reason: str, message: str) -> Outcome:
        return cls(ready=False, reason=reason, message=message)


class Prior(_Stored):
    """What a writer was set to before the pause: a scaled writer's replicas, else its suspend field's
    value (None: the field was unset)."""

    replicas: int | None = None
    value: str | None = None

    @classmethod
    def of(cls, found: ObservedWriter) -> Prior:
        return cls(replicas=found.replicas) if found.replicas is not None else cls(value=found.value)

    @property
    def setting(self) -> int | str | None:
        return self.replicas if self.replicas is not None else self.value

    @model_validator(mode="after")
    def _one_setting(self) -> Self:
        if self.replicas is not None and self.value is not None:
            raise ValueError("a writer's prior is its replicas or its suspend field's value, not both")
        return self

    @model_serializer(mode="wrap")
    def _null_value(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An unset suspend field is recorded as {"value": null}, as it always was.
        data = handler(self)
        if self.replicas is None:
            data.setdefault("value", None)
        return data


class PausedWriter(_Stored):
    """One writer the steps pause, and what resuming it needs, whatever the spec says by then."""

    api_version: str
    kind: str
    name: str
    plural: str
    path: str | None = None  # its suspend field; None: paused by scale
    prior: Prior

    @classmethod
    def of(cls, writer: Writer, found: ObservedWriter) -> PausedWriter:
        path = writer.suspend.path if writer.suspend is not None else None
        return cls(
            api_version=writer.api_version,
            kind=writer.kind,
            name=writer.name,
            plural=writer.plural,
            path=path,
            prior=Prior.of(found),
        )

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.name}"

    def writer(self) -> Writer:
        """The writer as recorded: enough to read and resume it."""
        suspend = SuspendField(self.path, "", self.path, ()) if self.path else None
        return Writer(self.api_version, self.kind, self.name, self.plural, suspend)

    def described(self) -> str:
        if self.prior.replicas is not None:
            return f"{self.key} ({self.prior.replicas} replica(s))"
        return f"{self.key} ({self.path}: {self.prior.value})"

    @model_validator(mode="after")
    def _prior_as_paused(self) -> Self:
        if (self.path is None) != (self.prior.replicas is not None):
            raise ValueError(
                f"{self.key}: a writer paused by scale has its replicas as prior, one paused by its "
                "suspend field (path) that field's value"
            )
        return self


class LastPause(_Stored):
    """The latest pause of the table's writers, once they were resumed."""

    paused_at: str
    resumed_at: str
    downtime_seconds: float
    writers: tuple[str, ...]


class WritersState(_Stored):
    """``status.writers`` between applies: only what the last pause cost."""

    last: LastPause | None = None


class ApplySteps(WritersState):
    """``status.writers`` while the steps around an approved plan's apply run."""

    step: Step
    plan_id: str
    generation: int
    retry_token: str
    check_records: bool
    next_window: str | None = None  # AwaitingWindow outside the window: when it opens
    items: tuple[PausedWriter, ...] | None = None  # recorded before any is paused
    paused_at: str | None = None
    deadline: str | None = None  # the quiesce timeout: the writers quiet by then, or resumed
    apply_deadline: str | None = None  # the admins' bound on an apply holding them paused
    outcome: Outcome | None = None  # Resuming: what the conditions say once they are back
    again: bool | None = None  # Resuming: then wait for the window again, the same plan

    @property
    def paused(self) -> tuple[PausedWriter, ...]:
        return self.items or ()

    @model_validator(mode="after")
    def _pausing_has_a_deadline(self) -> Self:
        if self.step is Step.PAUSING and self.deadline is None:
            raise ValueError("the Pausing step has a quiesce deadline")
        return self


def _shape(raw: object) -> str:
    """Which model a ``status.writers`` is: the steps while they run (a step recorded), else idle."""
    if isinstance(raw, Mapping):
        return "steps" if raw.get("step") else "idle"
    return "steps" if isinstance(raw, ApplySteps) else "idle"


# status.writers as TableStatus holds it: a step recorded, the steps; else what is left between applies.
StoredWriters = Annotated[
    Annotated[ApplySteps, Tag("steps")] | Annotated[WritersState, Tag("idle")], Discriminator(_shape)
]

"""What one pass of ``decide`` sees (the table's spec and status, its jobs, its writers) and what it decides
(a status, at most one job to start, events, actions on the writers); with the small status helpers the
steps of ``decide`` share. Pure: no API, no backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from hudi_bucket.contract.reports import JobReport
from hudi_bucket.contract.requests import ApplyRequest, JobKind, PlanRequest, VerifyRequest
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import PAUSED
from hudi_bucket_operator.resource.conditions import Event
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.resource.table_status import LastJob, TableStatus
from hudi_bucket_operator.resource.writers import ObservedWriter, WriterAction

# A job's place in its round: a check first, then the plan, then its apply.
SEQUENCE = {JobKind.VERIFY: -1, JobKind.PLAN: 0, JobKind.APPLY: 1}


class JobPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"

    @property
    def terminal(self) -> bool:
        return self in (JobPhase.COMPLETED, JobPhase.FAILED)


@dataclass(frozen=True)
class ObservedJob:
    name: str
    kind: JobKind
    generation: int
    retry_token: str
    phase: JobPhase
    created: str  # ISO timestamp: orders jobs of one generation
    sequence: int = 0  # position in its generation's chain: plan 0, apply 1
    error: str = ""  # the job system's own message (SparkApplication errorMessage)
    report: JobReport | None = None


@dataclass(frozen=True)
class Observed:
    spec: Mapping[str, Any]
    generation: int
    annotations: Mapping[str, str]
    status: TableStatus
    jobs: Sequence[ObservedJob] = ()
    policy: Policy = field(default_factory=Policy)  # what the admins let tables ask for (Helm values)
    name: str = ""
    namespace: str = "default"
    # The table's writers as the API shows them, by "Kind/name", when ``writers_needed`` named any
    # (None: not looked at, as in the local mode).
    writers: Mapping[str, ObservedWriter] | None = None
    deleting: bool = False  # the table is being deleted (it waits for its writers to be resumed)

    @property
    def paused(self) -> bool:
        """Start no new job: the paused annotation says so, or the table is being deleted (a job in
        flight finishes and is recorded, and writers paused are resumed)."""
        return self.deleting or self.annotations.get(PAUSED, "").lower() == "true"


@dataclass(frozen=True)
class SubmitJob:
    """A job to start: what it does (its request, without a report destination) and what it is for."""

    request: PlanRequest | ApplyRequest | VerifyRequest
    generation: int
    retry_token: str
    sequence: int

    @property
    def kind(self) -> JobKind:
        return self.request.kind

    @property
    def approved_plan(self) -> str:
        return self.request.rescale.approved_plan if isinstance(self.request, ApplyRequest) else ""


@dataclass(frozen=True)
class Decision:
    status: TableStatus
    submit: SubmitJob | None = None
    recorded: str | None = None  # a job whose result this decision records (its report can go)
    events: tuple[Event, ...] = ()
    requeue: bool = False  # look again soon: a job is in flight
    spec: TableSpec | None = field(default=None, compare=False)
    # What to do to the table's writers, once this status (which records their prior state) is written.
    writer_actions: tuple[WriterAction, ...] = ()
    poll_seconds: float | None = None  # look again this soon: writers are moving (no watch tells us)
    cancel: str | None = None  # a job to stop (an apply past its deadline): deleted, never waited for


def recorded(decision: Decision) -> Decision:
    """Mark in the status that the job's result is recorded, so it is never evaluated again."""
    if decision.recorded is None:
        return decision
    last = decision.status.last_job or LastJob()
    status = decision.status.model_copy(update={"last_job": last.model_copy(update={"recorded": True})})
    return replace(decision, status=status)


def with_last_job(status: TableStatus, job: ObservedJob) -> TableStatus:
    return status.model_copy(
        update={"last_job": last_job(job.name, job.kind, job.generation, job.retry_token, job.phase)}
    )


def last_job(name: str, kind: JobKind, generation: int, retry_token: str, phase: JobPhase) -> LastJob:
    """The status's record of a job (not yet recorded: its result is not in the status)."""
    return LastJob(
        name=name, kind=kind.value, generation=generation, retry_token=retry_token, phase=phase.value
    )


def layout_broken(status: TableStatus) -> bool:
    """Whether the last layout check found violations: plans and applies then check every record."""
    return status.layout is not None and bool(status.layout.violations)

"""Where jobs run. ``sparkoperator`` creates SparkApplications; ``local`` runs the same `hudi-bucket-job`
command as a local PySpark process. Both report the same way, so ``decide`` cannot tell them apart.

A table's SparkApplications are observed from the operator's index of them (fed by the watch, see
`observed_job`), not listed on each pass; a report is fetched only when a finished job's result is
about to be recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from hudi_bucket.contract.reports import ConfigMapReport, JobReport
from hudi_bucket.contract.requests import JobKind
from hudi_bucket_operator.decide.decisions import SEQUENCE, JobPhase, ObservedJob, SubmitJob
from hudi_bucket_operator.decide.render import render_spark_application
from hudi_bucket_operator.errors import KubeConflictError, KubeNotFoundError
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource import naming
from hudi_bucket_operator.resource.api import KIND
from hudi_bucket_operator.resource.spec import TableSpec
from hudi_bucket_operator.runtime.kube import SPARK_APPLICATIONS, KubeClient


@dataclass(frozen=True)
class TableRef:
    """The HudiBucketTable a job belongs to: what naming and owner references need."""

    name: str
    namespace: str
    uid: str
    body: dict[str, Any] = field(compare=False, repr=False)


class JobBackend(Protocol):
    # What specs may ask of the operator and its jobs: one policy, whether jobs run as SparkApplications
    # or as local processes, so a spec refused in a cluster is refused locally too.
    policy: Policy

    async def report(self, table: TableRef, name: str) -> JobReport | None:
        """The report of this table's finished job ``name`` (None: it wrote none)."""
        ...

    async def submit(self, table: TableRef, spec: TableSpec, job: SubmitJob) -> str:
        """Start the job (idempotent: an existing job of the same name is adopted); returns its name."""
        ...

    async def forget(self, table: TableRef, name: str) -> None:
        """Drop what is only needed until a job's result is recorded (its report)."""
        ...

    async def cancel(self, table: TableRef, name: str) -> None:
        """Stop a job, wherever it is (gone already is as good)."""
        ...


def job_name_for(table: TableRef, job: SubmitJob) -> str:
    return naming.job_name(
        table.name,
        table.uid,
        job.kind.value,
        job.generation,
        retry_token=job.retry_token,
        plan_id=job.approved_plan,
    )


_SPARK_PHASES = {
    "COMPLETED": JobPhase.COMPLETED,
    "FAILED": JobPhase.FAILED,
    # Final for our applications: under their restartPolicy Never the Spark Operator never submits again
    # (it moves on to FAILED itself, but an older or another controller may leave it here).
    "SUBMISSION_FAILED": JobPhase.FAILED,
    "RUNNING": JobPhase.RUNNING,
}


def observed_job(app: Mapping[str, Any]) -> tuple[str, ObservedJob] | None:
    """(the owning table's uid, the job) as a SparkApplication shows them; None if it is not one of ours."""
    meta = app.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    owner = next((o.get("uid") for o in meta.get("ownerReferences") or [] if o.get("kind") == KIND), None)
    try:
        kind, generation = JobKind(labels[naming.JOB_KIND_LABEL]), int(labels[naming.GENERATION_LABEL])
    except (KeyError, ValueError):
        return None
    if not owner or kind not in SEQUENCE:  # the only kinds the operator runs
        return None
    state = (app.get("status") or {}).get("applicationState") or {}
    # Only COMPLETED, FAILED and SUBMISSION_FAILED are final; the rest (SUBMITTED, ...) is in flight.
    phase = _SPARK_PHASES.get(state.get("state", ""), JobPhase.PENDING)
    return owner, ObservedJob(
        name=meta["name"],
        kind=kind,
        generation=generation,
        retry_token=annotations.get(naming.RETRY_TOKEN_ANNOTATION, ""),
        phase=phase,
        created=meta.get("creationTimestamp", ""),
        sequence=SEQUENCE[kind],
        error=state.get("errorMessage", ""),
    )


class SparkOperatorBackend:
    """Jobs as SparkApplications; each reports into a ConfigMap of the same name, owned by the table."""

    def __init__(self, client: KubeClient, policy: Policy) -> None:
        self.client = client
        self.policy = policy

    async def report(self, table: TableRef, name: str) -> JobReport | None:
        try:
            data = await self.client.config_map_data(table.namespace, name)
        except KubeNotFoundError:
            return None
        text = data.get(ConfigMapReport.KEY)
        return JobReport.from_json(text) if text else None

    async def submit(self, table: TableRef, spec: TableSpec, job: SubmitJob) -> str:
        name = job_name_for(table, job)
        manifest = render_spark_application(
            table=table.body, job=job, spark=spec.spark, job_name=name, defaults=self.policy.jobs
        )
        # Created before (a retry, an operator restart): adopt it, never edit it.
        with contextlib.suppress(KubeConflictError):
            await self.client.create(SPARK_APPLICATIONS, manifest)
        return name

    async def forget(self, table: TableRef, name: str) -> None:
        await self.client.delete_config_map(table.namespace, name)

    async def cancel(self, table: TableRef, name: str) -> None:
        # The Spark Operator deletes the driver's pod with it, and the driver its executors.
        await self.client.delete(SPARK_APPLICATIONS, table.namespace, name)


@dataclass
class _LocalJob:
    observed: ObservedJob
    process: asyncio.subprocess.Process
    report_path: Path


class LocalBackend:
    """Jobs as local `hudi-bucket-job` processes (local Spark): the embedded default, no cluster needed."""

    def __init__(
        self, state_dir: Path, master: str = "local[2]", echo: Any = None, policy: Policy | None = None
    ) -> None:
        self.state_dir = state_dir
        self.policy = policy or Policy()  # the operator's settings from the environment, as in a cluster
        self.master = master
        self.echo = echo or (lambda _line: None)
        self.jobs: dict[str, _LocalJob] = {}

    async def observe(self, table: TableRef) -> list[ObservedJob]:
        observed = []
        for job in self.jobs.values():
            if job.report_path.parent == self._dir(table):  # one folder per table
                observed.append(await self._refresh(job))
        return observed

    async def _refresh(self, job: _LocalJob) -> ObservedJob:
        """The job as its process shows it; its report is read when the controller needs it."""
        if job.observed.phase.terminal or job.process.returncode is None:
            return job.observed
        phase = JobPhase.COMPLETED if job.process.returncode == 0 else JobPhase.FAILED
        log = job.report_path.with_suffix(".log")
        error = f"see {log}" if phase is JobPhase.FAILED else ""
        job.observed = replace(job.observed, phase=phase, error=error)
        self.echo(f"job {job.observed.name}: {phase.value.lower()}")
        return job.observed

    async def report(self, table: TableRef, name: str) -> JobReport | None:
        path = self._dir(table) / f"{name}.json"
        return JobReport.from_json(path.read_bytes()) if path.exists() else None

    def _dir(self, table: TableRef) -> Path:
        return self.state_dir / table.namespace / table.name

    async def submit(self, table: TableRef, spec: TableSpec, job: SubmitJob) -> str:
        name = job_name_for(table, job)
        if name in self.jobs:
            return name
        folder = self._dir(table)
        folder.mkdir(parents=True, exist_ok=True)
        report = folder / f"{name}.json"
        report.unlink(missing_ok=True)
        args = replace(job.request, report=str(report), master=self.master).to_argv()
        log = report.with_suffix(".log").open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hudi_bucket", *args, stdout=log, stderr=log, env={**os.environ}
        )
        log.close()
        self.echo(f"job {name}: {job.kind.value} started (log: {report.with_suffix('.log')})")
        self.jobs[name] = _LocalJob(
            ObservedJob(
                name=name,
                kind=job.kind,
                generation=job.generation,
                retry_token=job.retry_token,
                phase=JobPhase.RUNNING,
                created=datetime.now(UTC).isoformat(),
                sequence=job.sequence,
            ),
            process,
            report,
        )
        return name

    async def forget(self, table: TableRef, name: str) -> None:
        job = self.jobs.pop(name, None)
        if job is not None and job.process.returncode is None:
            job.process.kill()

    async def cancel(self, table: TableRef, name: str) -> None:
        await self.forget(table, name)

    async def wait(self) -> None:
        """Until every running job has exited (the local mode's pace)."""
        await asyncio.gather(*(j.process.wait() for j in self.jobs.values() if j.process.returncode is None))

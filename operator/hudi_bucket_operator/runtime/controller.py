"""One reconcile pass for one table: given its jobs, fetch the one report needed, decide, act. Shared by
the Kopf handlers (jobs from their index of SparkApplications) and the local mode (jobs from the local
backend); the caller writes the returned status (``TableStatus.to_api``) and posts the returned events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from hudi_bucket.contract.reports import JobError, JobReport, Outcome
from hudi_bucket.errors import ReportError
from hudi_bucket_operator.decide import maintenance
from hudi_bucket_operator.decide.apply_window import writers_needed
from hudi_bucket_operator.decide.decisions import Decision, JobPhase, Observed, ObservedJob, last_job
from hudi_bucket_operator.decide.reconcile import decide, failed
from hudi_bucket_operator.decide.rounds import report_needed
from hudi_bucket_operator.errors import KubeError
from hudi_bucket_operator.resource.table_status import TableStatus
from hudi_bucket_operator.resource.writers import ObservedWriter, Writer
from hudi_bucket_operator.runtime import metrics
from hudi_bucket_operator.runtime.backends import JobBackend, TableRef


def table_ref(body: dict[str, Any]) -> TableRef:
    meta = body["metadata"]
    return TableRef(meta["name"], meta.get("namespace") or "default", meta.get("uid", ""), body)


WriterReader = Callable[[list[Writer]], Awaitable[Mapping[str, ObservedWriter]]]


async def reconcile_once(
    backend: JobBackend,
    body: dict[str, Any],
    jobs: Sequence[ObservedJob],
    now: datetime | None = None,
    writers: WriterReader | None = None,
) -> Decision:
    """One pass. ``writers`` reads the table's writers when ``decide`` needs them (None: the local mode,
    which cannot). The decision's writer actions are the caller's, once it has written the status.

    Whatever ``decide`` raises (a bug, a spec no check foresaw) stalls the table saying so, with the
    writers it paused resumed first: a pass that fails must never leave them paused. What the API
    raises propagates: the pass is retried."""
    now = now or datetime.now(UTC)
    table = table_ref(body)
    meta = body["metadata"]
    observed = Observed(
        spec=body.get("spec") or {},
        generation=int(meta.get("generation") or 1),
        annotations=meta.get("annotations") or {},
        status=TableStatus.of(body.get("status")),
        jobs=tuple(jobs),
        policy=backend.policy,
        name=table.name,
        namespace=table.namespace,
        deleting=bool(meta.get("deletionTimestamp")),
    )
    needed = report_needed(observed)
    if needed is not None and needed.report is None:
        with_report = replace(needed, report=await _report(backend, table, needed))
        observed = replace(observed, jobs=tuple(with_report if j is needed else j for j in observed.jobs))
    try:
        wanted = writers_needed(observed)
        if wanted and writers is not None:
            observed = replace(observed, writers=await writers(wanted))
        decision = decide(observed, now)
    except KubeError:
        raise
    except Exception as err:
        if maintenance.holding(observed.status.writers) and observed.writers is None and writers is not None:
            recorded = maintenance.to_observe(None, observed.status.writers)
            observed = replace(observed, writers=await writers(recorded))
        decision = failed(observed, now, err)
    if decision.cancel is not None:
        await backend.cancel(table, decision.cancel)
    if decision.submit is not None and decision.spec is not None:
        # A KubeError propagates: the API failed us, the pass is retried with backoff.
        name = await backend.submit(table, decision.spec, decision.submit)
        metrics.JOBS_SUBMITTED.labels(kind=decision.submit.kind.value).inc()
        submitted = decision.submit
        job = last_job(name, submitted.kind, submitted.generation, submitted.retry_token, JobPhase.PENDING)
        decision = replace(decision, status=decision.status.model_copy(update={"last_job": job}))
    if decision.recorded is not None:
        metrics.record_job(decision.status)
        await backend.forget(table, decision.recorded)
    metrics.RECONCILES.labels(phase=decision.status.phase or "").inc()
    return decision


async def _report(backend: JobBackend, table: TableRef, job: ObservedJob) -> JobReport | None:
    """The job's report; one this release cannot read counts as the job's failure, saying why."""
    try:
        return await backend.report(table, job.name)
    except ReportError as err:
        return JobReport(job.kind, table.name, Outcome.FAILED, str(err), "", "", error=JobError.of(err))

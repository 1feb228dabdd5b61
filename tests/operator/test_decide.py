"""`decide`, the operator's whole policy, as a table: what it does next for each situation it can meet.

Each row is (situation, what was observed, what must follow). The end-to-end tests on a real API server
show the same decisions carried out; this table shows every branch, fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest

from hudi_bucket.contract.reports import ApplyResult, JobError, JobReport, Outcome, PlanResult, TableBuckets
from hudi_bucket.contract.requests import JobKind
from hudi_bucket.core.hashing_config import HashingConfig
from hudi_bucket.core.planning import ChangeReason, PartitionChange, Plan
from hudi_bucket.core.rules import BucketRules
from hudi_bucket_operator.decide import decisions
from hudi_bucket_operator.decide.decisions import JobPhase, ObservedJob
from hudi_bucket_operator.decide.reconcile import HISTORY_LIMIT, decide
from hudi_bucket_operator.decide.rounds import report_needed
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.resource.api import PAUSED, RETRY
from hudi_bucket_operator.resource.conditions import condition
from hudi_bucket_operator.resource.table_status import (
    Condition,
    HistoryEntry,
    LastJob,
    SizingDone,
    TableStatus,
)
from lib.hbt_resources import ANYWHERE, SPEC

# Every pass sees admins who let tables be anywhere (the operator's default lets them be nowhere).
Observed = partial(decisions.Observed, policy=Policy(JobDefaults(allowed_table_uris=ANYWHERE)))

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
RULES = BucketRules.parse("11-11,16", 4)
CHANGE = PartitionChange("day=2026-11-11", 4, 16, 4, 1000, 10, ChangeReason.RESCALE, shuffle_free=True)
PLAN, NOOP = Plan(RULES, None, (CHANGE,), "20261123100000000"), Plan(RULES, RULES, ())
PLAN_ID, OTHER_PLAN_ID = PLAN.plan_id, "sha256:" + "0" * 64
DUPLICATES = Plan(
    RULES, None, (PartitionChange("day=2026-11-11", None, 16, 4, 1000, 10, ChangeReason.CONVERT),), "1"
).with_duplicate_keys({"day=2026-11-11": 12})
IN_FORCE = TableBuckets.of(HashingConfig.from_rules(RULES, "20261123110000000"), {CHANGE.partition: 16})


def report(
    command: JobKind,
    outcome: Outcome = Outcome.SUCCEEDED,
    result: dict | None = None,
    table_buckets: TableBuckets | None = None,
) -> JobReport:
    error = JobError("PreflightError", "MERGE_ON_READ", "compact it") if outcome is Outcome.FAILED else None
    said = f"{command}: {outcome.value}"
    return JobReport(command, "s3a://x", outcome, said, "t0", "t1", result or {}, error, table_buckets)


def planned(plan: Plan = PLAN) -> JobReport:
    return report(
        JobKind.PLAN, result=PlanResult(plan.reported(), {}).to_dict(), table_buckets=TableBuckets()
    )


def applied(instant: str | None = "20261123110000000", rows: int = 1000) -> JobReport:
    result = ApplyResult(PLAN.reported(), instant, 1, rows, 10, 1.5, True, (), {})
    outcome = Outcome.SUCCEEDED if instant else Outcome.NO_CHANGE
    return report(JobKind.APPLY, outcome, result.to_dict(), IN_FORCE)


def job(
    kind: JobKind,
    phase: JobPhase,
    result: JobReport | None = None,
    generation: int = 1,
    token: str = "",
    error: str = "",
) -> ObservedJob:
    sequence = 0 if kind is JobKind.PLAN else 1
    name = f"orders-{kind.value}-{generation}{token}"
    return ObservedJob(
        name, kind, generation, token, phase, f"2026-11-23T11:0{sequence}:00Z", sequence, error, result
    )


PLAN_DONE = job(JobKind.PLAN, JobPhase.COMPLETED, planned())


def recorded(observed_job: ObservedJob) -> TableStatus:
    """The status after the operator recorded this job's result."""
    last = LastJob(
        name=observed_job.name,
        kind=observed_job.kind.value,
        generation=observed_job.generation,
        retry_token=observed_job.retry_token,
        phase=observed_job.phase.value,
        recorded=True,
    )
    return TableStatus(last_job=last)


@dataclass(frozen=True)
class Case:
    jobs: tuple[ObservedJob, ...] = ()
    spec: dict[str, Any] = field(default_factory=lambda: SPEC)
    generation: int = 1
    annotations: dict[str, str] = field(default_factory=dict)
    status: TableStatus = field(default_factory=TableStatus)
    # What must follow:
    phase: str | None = None  # None: the status is left as it was
    submit: str = ""  # "plan", "apply" or nothing
    records: str = ""  # the job whose result this decision records
    says: str = ""  # in the Ready condition's message
    event: str = ""  # the reason of the one event posted


MANUAL_APPROVED = {**SPEC, "apply": {"policy": "Manual", "approvedPlan": PLAN_ID}}
AUTOMATIC = {**SPEC, "apply": {"policy": "Automatic"}}
CASES = {
    "a new table is planned, with no event (its status says so)": Case(phase="Planning", submit="plan"),
    "a paused new table starts nothing": Case(annotations={PAUSED: "true"}, phase="Paused"),
    "an invalid spec stalls, starts nothing": Case(
        spec={"table": {"uri": "s3a://x"}, "buckets": {"default": 0}},
        phase="Stalled",
        says="default",
        event="InvalidSpec",
    ),
    "a plan in flight is waited for": Case(
        jobs=(job(JobKind.PLAN, JobPhase.RUNNING),), phase="Planning", says="running"
    ),
    "any job in flight is waited for, even an older generation's": Case(
        jobs=(job(JobKind.APPLY, JobPhase.PENDING, generation=1),), generation=2, phase="Applying"
    ),
    "a plan waits for approval under the Manual policy": Case(
        jobs=(PLAN_DONE,), phase="AwaitingApproval", records=PLAN_DONE.name, says=f"approvedPlan to {PLAN_ID}",
        event="AwaitingApproval",
    ),
    "an approved plan is applied": Case(
        jobs=(PLAN_DONE,), spec=MANUAL_APPROVED, phase="Applying", submit="apply", records=PLAN_DONE.name,
        event="Applying",
    ),
    "a conversion's plan says how many keys it found more than once, and that one copy of each is kept": Case(
        jobs=(job(JobKind.PLAN, JobPhase.COMPLETED, planned(DUPLICATES)),), phase="AwaitingApproval",
        records="orders-plan-1", says="12 key(s) found more than once (one copy of each kept)",
        event="AwaitingApproval",
    ),
    "another plan's approval does not apply this one": Case(
        jobs=(PLAN_DONE,), spec={**SPEC, "apply": {"policy": "Manual", "approvedPlan": OTHER_PLAN_ID}},
        phase="AwaitingApproval", records=PLAN_DONE.name, event="AwaitingApproval",
    ),
    "the Automatic policy applies every plan": Case(
        jobs=(PLAN_DONE,), spec=AUTOMATIC, phase="Applying", submit="apply", records=PLAN_DONE.name,
        event="Applying",
    ),
    "an approved plan waits while paused, unrecorded": Case(
        jobs=(PLAN_DONE,), spec=AUTOMATIC, annotations={PAUSED: "true"}, phase="Paused"
    ),
    "a plan that changes nothing is Ready": Case(
        jobs=(job(JobKind.PLAN, JobPhase.COMPLETED, planned(NOOP)),),
        phase="Ready", records="orders-plan-1", says="already matches", event="Converged",
    ),
    "a failed plan stalls with the job's own words": Case(
        jobs=(job(JobKind.PLAN, JobPhase.FAILED, report(JobKind.PLAN, Outcome.FAILED)),),
        phase="Stalled", records="orders-plan-1", says="MERGE_ON_READ (compact it)", event="JobFailed",
    ),
    "a finished job whose report cannot be used stalls, saying why": Case(
        jobs=(job(JobKind.PLAN, JobPhase.COMPLETED, report(JobKind.PLAN, result={"plan": {"id": PLAN_ID}})),),
        phase="Stalled", records="orders-plan-1", says="its report cannot be used", event="InvalidReport",
    ),
    "a job that failed without a report stalls with the Spark Operator's message": Case(
        jobs=(job(JobKind.PLAN, JobPhase.FAILED, error="driver pod OOMKilled"),),
        phase="Stalled", records="orders-plan-1", says="OOMKilled", event="JobFailed",
    ),
    "a completed apply is Ready and goes into history": Case(
        jobs=(PLAN_DONE, job(JobKind.APPLY, JobPhase.COMPLETED, applied())),
        status=recorded(PLAN_DONE), phase="Ready", records="orders-apply-1", says="apply: Succeeded",
        event="Applied",
    ),
    "an apply that found nothing to do is Ready": Case(
        jobs=(PLAN_DONE, job(JobKind.APPLY, JobPhase.COMPLETED, applied(instant=None))),
        status=recorded(PLAN_DONE), phase="Ready", records="orders-apply-1", says="apply: NoChange",
    ),
    "a recorded job is never evaluated again": Case(
        jobs=(PLAN_DONE,), status=recorded(PLAN_DONE)
    ),
    "a finished generation whose jobs are gone stays as it is": Case(status=recorded(PLAN_DONE)),
    "a stalled table retries on a new retry token": Case(
        jobs=(job(JobKind.PLAN, JobPhase.FAILED, report(JobKind.PLAN, Outcome.FAILED)),),
        status=recorded(job(JobKind.PLAN, JobPhase.FAILED)), annotations={RETRY: "2"},
        phase="Planning", submit="plan", event="Planning",
    ),
    "a new generation is planned again": Case(
        jobs=(PLAN_DONE,), status=recorded(PLAN_DONE), generation=2, phase="Planning", submit="plan",
        event="Planning",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    observed = Observed(case.spec, case.generation, case.annotations, case.status, case.jobs)
    decision = decide(observed, NOW)

    assert decision.status.observed_generation == case.generation
    if case.phase is None:
        assert decision.status == case.status.model_copy(update={"observed_generation": case.generation})
    else:
        assert decision.status.phase == case.phase
    assert (decision.submit.kind.value if decision.submit else "") == case.submit
    assert (decision.recorded or "") == case.records
    if case.records:
        assert decision.status.last_job is not None
        assert (decision.status.last_job.name, decision.status.last_job.recorded) == (case.records, True)
    if case.says:
        ready = condition(decision.status, "Ready")
        assert ready is not None
        assert case.says in (ready.message or "")
    assert [reason for _, reason, _ in decision.events] == ([case.event] if case.event else [])


def test_an_apply_carries_the_plan_it_was_approved_for_and_the_generation_and_token() -> None:
    observed = Observed(MANUAL_APPROVED, 3, {RETRY: "7"}, TableStatus(), (job(JobKind.PLAN, JobPhase.COMPLETED,
                        planned(), generation=3, token="7"),))  # fmt: skip
    submit = decide(observed, NOW).submit
    assert submit is not None
    assert (submit.kind, submit.generation, submit.retry_token, submit.approved_plan) == (
        JobKind.APPLY, 3, "7", PLAN_ID,
    )  # fmt: skip


def test_history_keeps_the_newest_entries_first_and_is_bounded() -> None:
    old = [HistoryEntry(job=f"old-{i}") for i in range(HISTORY_LIMIT)]
    apply_done = job(JobKind.APPLY, JobPhase.COMPLETED, applied("9", rows=5))
    observed = Observed(
        SPEC, 1, {}, recorded(PLAN_DONE).model_copy(update={"history": old}), (PLAN_DONE, apply_done)
    )
    history = decide(observed, NOW).status.history or []
    assert len(history) == HISTORY_LIMIT
    assert history[0] == HistoryEntry(
        job=apply_done.name, instant="9", plan_id=PLAN_ID, partitions=1, rows=5, seconds=1.5,
        outcome="Succeeded", finished="t1",
    )  # fmt: skip
    assert history[1] == old[0]


def test_a_condition_keeps_its_transition_time_while_its_status_holds() -> None:
    first = decide(Observed(SPEC, 1, {}, TableStatus(), (job(JobKind.PLAN, JobPhase.PENDING),)), NOW).status
    later = datetime(2026, 11, 23, 12, 5, tzinfo=UTC)
    second = decide(Observed(SPEC, 1, {}, first, (job(JobKind.PLAN, JobPhase.RUNNING),)), later).status
    before, after = condition(first, "Reconciling"), condition(second, "Reconciling")
    assert before is not None
    assert after is not None
    assert after.last_transition_time == before.last_transition_time


@pytest.mark.parametrize("kind", [JobKind.PLAN, JobKind.APPLY])
def test_the_pass_after_a_submission_writes_nothing_until_the_job_moves(kind: JobKind) -> None:
    # What the submitting pass wrote (the controller adds lastJob once the job is created).
    pending = job(kind, JobPhase.PENDING)
    submitted = decide(Observed(SPEC, 1, {}, TableStatus(), ()), NOW).status.model_copy(
        update={
            "last_job": LastJob(
                name=pending.name, kind=kind.value, generation=1, retry_token="", phase="Pending"
            )
        }
    )
    again = decide(Observed(SPEC, 1, {}, submitted, (pending,)), NOW)
    assert again.status == submitted
    assert again.submit is None
    running = decide(Observed(SPEC, 1, {}, submitted, (replace(pending, phase=JobPhase.RUNNING),)), NOW)
    assert running.status.last_job is not None
    assert running.status.last_job.phase == "Running"


POLICY = Policy(
    JobDefaults(
        image="registry.example/hudi-job:1.0",
        spark_version="3.5.8",
        allowed_images=("registry.example/hudi-job",),
        allowed_table_uris=ANYWHERE,
    )
)


@pytest.mark.parametrize(
    ("spark_spec", "reason"),
    [
        ({"image": "docker.io/someone/else:latest"}, "ImageNotAllowed"),
        ({"serviceAccount": "cluster-admin"}, "ServiceAccountNotAllowed"),
        ({"sparkConf": {"spark.master": "local[*]"}}, "SettingNotAllowed"),
        (
            {"sparkConf": {"spark.kubernetes.driver.volumes.hostPath.n.mount.path": "/host"}},
            "SettingNotAllowed",
        ),
        ({"hadoopConf": {"fs.s3a.endpoint": "http://elsewhere.example"}}, "SettingNotAllowed"),
        ({"driver": {"memory": "2Gi"}}, "InvalidSpec"),
        ({"driver": {"memory": "99999999g"}}, "ResourcesNotAllowed"),
        ({"envFromSecrets": [{"name": "cluster-admin-token"}]}, "SecretNotAllowed"),
        ({"sparkConf": {"spark.sql.shuffle.partitions": "${env:PASSWORD}"}}, "SettingNotAllowed"),
    ],
)
def test_a_job_the_operator_would_not_run_is_one_stalled_decision_with_one_event(
    spark_spec: dict[str, Any], reason: str
) -> None:
    observed = Observed({**SPEC, "spark": spark_spec}, 1, {}, TableStatus(), (), policy=POLICY)
    first = decide(observed, NOW)
    assert (first.submit, first.status.phase) == (None, "Stalled")
    assert [(kind, why) for kind, why, _ in first.events] == [("Warning", reason)]
    again = decide(Observed(observed.spec, 1, {}, first.status, (), policy=POLICY), NOW)
    assert (again.submit, again.status, again.events) == (None, first.status, ())


def test_a_table_stalled_on_a_setting_starts_its_job_once_the_admins_allow_it() -> None:
    spec = {**SPEC, "spark": {"hadoopConf": {"fs.s3a.endpoint": "http://minio.lake:9000"}}}
    stalled = decide(Observed(spec, 1, {}, TableStatus(), (), policy=POLICY), NOW)
    held = condition(stalled.status, "Stalled")
    assert held is not None
    assert "hadoopConf['fs.s3a.endpoint'] points S3A at another server" in (held.message or "")
    # helm upgrade, operator restarted
    widened = replace(
        POLICY, jobs=POLICY.jobs.model_copy(update={"allowed_hadoop_conf": ("fs.s3a.endpoint",)})
    )
    assert decide(Observed(spec, 1, {}, stalled.status, (), policy=widened), NOW).submit is not None


def test_a_table_where_its_namespace_may_have_none_stalls_before_any_job() -> None:
    spec = {**SPEC, "table": {"uri": "http://169.254.169.254/latest/meta-data"}}
    stalled = decide(Observed(spec, 1, {}, TableStatus(), (), policy=POLICY, namespace="lake"), NOW)
    assert (stalled.submit, stalled.status.phase) == (None, "Stalled")
    assert [(kind, why) for kind, why, _ in stalled.events] == [("Warning", "TableUriNotAllowed")]


def test_a_job_within_the_operators_bounds_is_started() -> None:
    spark = {
        "image": "registry.example/hudi-job:1.1",
        "driver": {"memory": "4g"},
        "sparkConf": {"spark.sql.shuffle.partitions": "64"},
        "hadoopConf": {"fs.s3a.connection.maximum": "64"},
    }
    observed = Observed({**SPEC, "spark": spark}, 1, {}, TableStatus(), (), policy=POLICY)
    assert decide(observed, NOW).submit is not None


def test_a_sized_plan_shows_its_proposed_rules_and_what_sizing_did() -> None:
    sized_rules = BucketRules.parse(r"11-11,16;^day=2026-11-(?:0[12]|10)$,8", 4)
    plan = Plan(sized_rules, None, (CHANGE,), "20261123100000000")
    sizing = {
        "sizedPartitions": 5,
        "resized": 2,
        "shuffleFree": 2,
        "rules": [{"pattern": r"^day=2026-11-(?:0[12]|10)$", "buckets": 8}],
    }
    result = PlanResult(plan.reported(), {}, sizing).to_dict()
    plan_done = job(
        JobKind.PLAN, JobPhase.COMPLETED, report(JobKind.PLAN, result=result, table_buckets=TableBuckets())
    )

    status = decide(Observed(SPEC, 1, {}, TableStatus(), (plan_done,)), NOW).status

    assert status.to_api()["plan"]["rules"] == {"expressions": sized_rules.render(), "default": 4}
    measured = {"sizedPartitions": 5, "resized": 2, "shuffleFree": 2, "rules": 1, "measured": "t1"}
    assert status.to_api()["plan"]["sizing"] == measured

    # The apply of that plan keeps what sizing said of it; another plan's apply would not.
    result = ApplyResult(plan.reported(), "20261123110000000", 1, 1000, 10, 1.5, True, (), {})
    applied_report = report(JobKind.APPLY, result=result.to_dict(), table_buckets=IN_FORCE)
    apply_done = job(JobKind.APPLY, JobPhase.COMPLETED, applied_report)
    status = decide(Observed(SPEC, 1, {}, status, (plan_done, apply_done)), NOW).status
    assert status.to_api()["history"][0]["planId"] == plan.plan_id
    assert status.to_api()["plan"]["sizing"]["shuffleFree"] == 2


SIZED_SPEC = {
    **SPEC,
    "buckets": {**SPEC["buckets"], "sizing": {"targetFileSize": "512Mi", "replanEvery": "24h"}},
}


def settled_sized(measured: datetime, token: str = "") -> TableStatus:
    """The status of a sized table whose last plan, measured then, was recorded and left it Ready."""
    plan_done = job(JobKind.PLAN, JobPhase.COMPLETED, planned(), token=token)
    annotations = {RETRY: token} if token else {}
    status = decide(Observed(SIZED_SPEC, 1, annotations, TableStatus(), (plan_done,)), NOW).status
    sizing = SizingDone(
        sized_partitions=1, resized=0, shuffle_free=0, rules=0,
        measured=measured.isoformat().replace("+00:00", "Z"),
    )  # fmt: skip
    assert status.plan is not None
    return status.model_copy(
        update={
            "plan": status.plan.model_copy(update={"sizing": sizing}),
            "conditions": [Condition(type="Ready", status="True", reason="Converged")],
        }
    )


@pytest.mark.parametrize("token", ["", "7"])
def test_a_sized_table_is_planned_again_once_its_measurement_is_old(token: str) -> None:
    annotations = {RETRY: token} if token else {}
    fresh = settled_sized(NOW - timedelta(hours=23), token)
    assert decide(Observed(SIZED_SPEC, 1, annotations, fresh, ()), NOW).submit is None

    stale = settled_sized(NOW - timedelta(hours=25), token)
    decision = decide(Observed(SIZED_SPEC, 1, annotations, stale, ()), NOW)
    assert decision.submit is not None
    assert decision.submit.kind is JobKind.PLAN
    round_token = f"{token}@sizing-{int(NOW.timestamp())}"
    assert decision.submit.retry_token == round_token
    # Routine work on a Ready table: the phase says it, the conditions stay (no health check flaps).
    assert decision.status.phase == "Planning"
    assert decision.status.conditions == stale.conditions
    round_job = LastJob(name="x", generation=1, retry_token=round_token)
    in_flight = decision.status.model_copy(update={"last_job": round_job})
    running = job(JobKind.PLAN, JobPhase.RUNNING, token=round_token)
    assert (
        decide(Observed(SIZED_SPEC, 1, annotations, in_flight, (running,)), NOW).status.conditions
        == stale.conditions
    )

    # The round's plan is the one whose report is read and recorded, as a retry's would be.
    status = decision.status.model_copy(update={"last_job": round_job})
    replanned = job(JobKind.PLAN, JobPhase.COMPLETED, planned(), token=round_token)
    observed = Observed(SIZED_SPEC, 1, annotations, status, (replanned,))
    assert report_needed(observed) == replanned
    assert decide(observed, NOW).recorded == replanned.name


def test_a_stalled_or_paused_sized_table_is_not_planned_again() -> None:
    stale = settled_sized(NOW - timedelta(days=3))
    assert decide(Observed(SIZED_SPEC, 1, {PAUSED: "true"}, stale, ()), NOW).submit is None
    stalled = stale.model_copy(
        update={"conditions": [Condition(type="Ready", status="False", reason="JobFailed")]}
    )
    assert decide(Observed(SIZED_SPEC, 1, {}, stalled, ()), NOW).submit is None
    unscheduled = {**SPEC, "buckets": {**SPEC["buckets"], "sizing": {"targetFileSize": "512Mi"}}}
    assert decide(Observed(unscheduled, 1, {}, stale, ()), NOW).submit is None


def test_a_failed_jobs_words_reach_the_status_and_its_event_redacted_and_bounded() -> None:
    """The table's author reads its conditions and events: what the job echoed of a setting's value (its
    environment, after Hadoop's substitution) or of the spec's own values is not there."""
    endpoint = "https://s3.lake-internal.example:9443"
    spec = {**SPEC, "spark": {"hadoopConf": {"fs.s3a.endpoint": endpoint}}}
    policy = replace(
        POLICY, jobs=POLICY.jobs.model_copy(update={"allowed_hadoop_conf": ("fs.s3a.endpoint",)})
    )
    words = (
        f's3a://x: Hadoop cannot open this location (For input string: "AKIA-planted-9f2e") at {endpoint}'
        + "\n\tat org.apache.hadoop.conf.Configuration.getInt(Configuration.java:1)" * 500
    )
    failed = JobReport(
        JobKind.PLAN, "s3a://x", Outcome.FAILED, words, "t0", "t1", {}, JobError("StorageError", words)
    )
    observed = Observed(
        spec, 1, {}, TableStatus(), (job(JobKind.PLAN, JobPhase.FAILED, failed),), policy=policy
    )
    decision = decide(observed, NOW)
    held = condition(decision.status, "Stalled")
    assert held is not None
    [(_, reason, event)] = decision.events
    assert (held.reason, reason) == ("JobFailed", "JobFailed")
    for said in (held.message or "", event):
        assert said.startswith("plan job orders-plan-1 failed: s3a://x: Hadoop cannot open this location")
        assert "AKIA-planted-9f2e" not in said
        assert endpoint not in said
        assert len(said) <= 2100


def test_a_spec_refused_with_a_message_longer_than_a_condition_holds_is_told_once() -> None:
    rules = [{"pattern": "(" * 300 + f"x{i}", "buckets": 2} for i in range(100)]  # 40,000 characters said
    spec = {**SPEC, "buckets": {"default": 2, "rules": rules}}
    first = decide(Observed(spec, 1, {}, TableStatus(), ()), NOW)
    held = condition(first.status, "Stalled")
    assert held is not None
    assert (held.reason, len(held.message or "")) == ("InvalidSpec", 4096)
    again = decide(Observed(spec, 1, {}, TableStatus.of(first.status.to_api()), ()), NOW)
    assert (again.events, again.status) == ((), first.status)


def test_a_plan_awaits_approval_since_it_was_first_made_even_when_planned_again_to_the_same_plan() -> None:
    # A plan job's report finished at t1; the spec then changes in what does not change the plan (generation
    # 2: planned again, the same plan at t2), then in what does (generation 3: another plan at t3).
    first = decide(Observed(SPEC, 1, {}, TableStatus(), (PLAN_DONE,)), NOW).status
    assert first.plan is not None
    assert first.plan.planned_at == "t1"

    def planned_again(generation: int, plan: Plan, finished: str) -> TableStatus:
        again = job(JobKind.PLAN, JobPhase.COMPLETED, replace(planned(plan), finished=finished), generation)
        decision = decide(Observed(SPEC, generation, {}, first, (again,)), NOW)
        assert decision.recorded == again.name
        return decision.status

    kept = planned_again(2, PLAN, "t2")
    assert kept.plan is not None
    assert (kept.phase, kept.plan.id, kept.plan.planned_at) == ("AwaitingApproval", PLAN_ID, "t1")
    other = Plan(BucketRules.parse("11-11,8", 4), None, (replace(CHANGE, new_buckets=8),), "1")
    new = planned_again(3, other, "t3")
    assert new.plan is not None
    assert (new.plan.id, new.plan.planned_at) == (other.plan_id, "t3")

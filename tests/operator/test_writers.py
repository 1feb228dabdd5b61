"""Writers and windows: a plan that rewrites partitions starts only in its window, with the table's
writers paused (only those whose owners consent, of kinds the admins declared), and they are resumed as
they were, whatever happens, wherever the operator crashes, and at the apply deadline at the latest.

The first tables read spec.writers and spec.apply.window. Then ``decide`` is run against a small world
of writers (a Deployment whose pods go a pass after its replicas do, a FlinkDeployment whose status
says it stopped a pass after it is suspended) and an apply job: every crash point is a pass whose
writer actions are lost, or whose status write is lost too (its job submitted all the same), and the
operator restarted with only the stored status.
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
from hudi_bucket.errors import PlanNotApprovedError
from hudi_bucket_operator.decide import decisions, maintenance
from hudi_bucket_operator.decide.apply_window import writers_needed
from hudi_bucket_operator.decide.decisions import Decision, JobPhase, ObservedJob, recorded
from hudi_bucket_operator.decide.reconcile import decide, failed
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.policy.job_defaults import JobDefaults
from hudi_bucket_operator.policy.job_policy import Policy
from hudi_bucket_operator.policy.writer_policy import WriterPolicy
from hudi_bucket_operator.resource.api import APPLY_NOW, PAUSED
from hudi_bucket_operator.resource.conditions import condition
from hudi_bucket_operator.resource.spec import parse_spec
from hudi_bucket_operator.resource.table_status import TableStatus
from hudi_bucket_operator.resource.writers import (
    ObservedWriter,
    SuspendField,
    WorkloadRef,
    WriterKind,
    WriterVerb,
    consents,
    get_path,
    merge_patch_for,
)
from lib.hbt_resources import ANYWHERE, SPEC

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # noon: outside a 01:00-04:00 window
NIGHT = datetime(2026, 11, 24, 1, 30, tzinfo=UTC)
RULES = BucketRules.parse("11-11,16", 4)
CHANGE = PartitionChange("day=2026-11-11", 4, 16, 4, 1000, 10, ChangeReason.RESCALE, shuffle_free=True)
PLAN = Plan(RULES, None, (CHANGE,), "20261123100000000")
CONFIG_ONLY = Plan(RULES, None, (), "20261123100000000")  # new rules, no partition rewritten
FLINK = {"kind": "FlinkDeployment", "name": "orders-cdc"}
# How the admins let a FlinkDeployment be paused (Helm values writers.kinds), as the chart's example says.
FLINK_KIND = WriterKind(
    "flink.apache.org/v1beta1",
    "FlinkDeployment",
    "flinkdeployments",
    SuspendField(
        "spec.job.state", "suspended", "status.jobStatus.state", ("SUSPENDED", "FINISHED", "CANCELED")
    ),
)
WRITER_POLICY = WriterPolicy(enabled=True, kinds=(FLINK_KIND,))
# Every pass of this module sees the admins' policy letting tables pause writers, and the table's name.
LAKE_JOBS = JobDefaults(allowed_table_uris=ANYWHERE)
Observed = partial(
    decisions.Observed, policy=Policy(LAKE_JOBS, WRITER_POLICY), name="orders", namespace="lake"
)
WORKLOADS = [{"kind": "Deployment", "name": "ingest"}, FLINK]
WINDOW = {"schedule": "0 1 * * *", "duration": "3h"}
WRITERS_SPEC = {
    **SPEC,
    "apply": {"policy": "Automatic", "window": WINDOW},
    "writers": {"workloads": WORKLOADS},
}


# --- the spec -------------------------------------------------------------------------------------------


def test_writers_and_a_window_are_read_from_the_spec() -> None:
    spec = parse_spec({**WRITERS_SPEC, "writers": {"workloads": WORKLOADS, "quiesceTimeout": "5m"}})
    assert spec.writer_refs.workloads == (
        WorkloadRef("Deployment", "ingest"),
        WorkloadRef("FlinkDeployment", "orders-cdc"),
    )
    # How each is paused is the admins' policy's to say.
    deployment, flink = WRITER_POLICY.resolve(spec.writer_refs).workloads
    assert (deployment.api_version, deployment.plural, deployment.scaled) == ("apps/v1", "deployments", True)
    assert (flink.plural, flink.suspend.path if flink.suspend else None) == (
        "flinkdeployments",
        "spec.job.state",
    )
    assert spec.writer_refs.quiesce_timeout == 300
    assert parse_spec(SPEC).writer_refs.quiesce_timeout == 15 * 60  # the default
    assert spec.window is not None
    assert spec.window.start_of(NOW) is None
    assert spec.window.next_start(NOW) == datetime(2026, 11, 24, 1, 0, tzinfo=UTC)
    assert spec.window.start_of(NIGHT) == datetime(2026, 11, 24, 1, 0, tzinfo=UTC)
    assert spec.window.start_of(datetime(2026, 11, 24, 4, 0, tzinfo=UTC)) is None  # the end is out


def test_a_window_in_a_time_zone_opens_on_its_clocks_as_cron_runs_across_a_change_of_them() -> None:
    """2:30 in Berlin: 1:30 UTC in winter, 0:30 in summer; on the night the clocks skip it, at the first
    minute after (3:00, summer time); on the night they pass it twice, once."""
    window = parse_spec(
        {
            **SPEC,
            "apply": {"window": {"schedule": "30 2 * * *", "duration": "1h", "timeZone": "Europe/Berlin"}},
        }
    ).window
    assert window is not None
    assert window.text == "30 2 * * * for 1h (Europe/Berlin)"

    def starts(after: datetime) -> list[datetime]:
        found = [window.next_start(after)]
        while len(found) < 3:
            found.append(window.next_start(found[-1]))
        return found

    assert starts(datetime(2026, 3, 27, 12, tzinfo=UTC)) == [
        datetime(2026, 3, 28, 1, 30, tzinfo=UTC),
        datetime(2026, 3, 29, 1, 0, tzinfo=UTC),  # 3:00 CEST: 2:30 never came
        datetime(2026, 3, 30, 0, 30, tzinfo=UTC),
    ]
    assert starts(datetime(2026, 10, 23, 12, tzinfo=UTC)) == [
        datetime(2026, 10, 24, 0, 30, tzinfo=UTC),
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),  # the first 2:30 (CEST), not the second too
        datetime(2026, 10, 26, 1, 30, tzinfo=UTC),
    ]
    assert window.start_of(datetime(2026, 11, 24, 2, 29, tzinfo=UTC)) == datetime(
        2026, 11, 24, 1, 30, tzinfo=UTC
    )
    assert window.start_of(datetime(2026, 11, 24, 2, 30, tzinfo=UTC)) is None


@pytest.mark.parametrize(
    ("writers", "window", "says"),
    [
        ({"workloads": [{"kind": "Deployment"}]}, None, "spec.writers.workloads[0].name is required"),
        ({"workloads": [{"kind": "deployment", "name": "x"}]}, None, "kind must be a kind such as Deployment"),
        ({"workloads": WORKLOADS + WORKLOADS[:1]}, None, "names Deployment/ingest more than once"),
        ({"quiesceTimeout": "15"}, None, "spec.writers.quiesceTimeout must be a duration"),
        (None, {"schedule": "6h", "duration": "1h"}, "spec.apply.window.schedule must be a cron expression"),
        (None, {"schedule": "0 1 * * *"}, "spec.apply.window.duration is required"),
        (None, {**WINDOW, "timeZone": "Mars/Olympus_Mons"}, "spec.apply.window.timeZone must be a time zone"),
        (None, {**WINDOW, "timeZone": "Europe/../etc"}, "spec.apply.window.timeZone must be a time zone"),
    ],
)  # fmt: skip
def test_a_bad_writer_or_window_is_refused_naming_its_field(
    writers: dict[str, Any] | None, window: dict[str, Any] | None, says: str
) -> None:
    spec: dict[str, Any] = {**SPEC, "apply": {"window": window} if window else {}}
    if writers is not None:
        spec["writers"] = writers
    with pytest.raises(InvalidSpecError, match=None) as refused:
        parse_spec(spec)
    assert says in str(refused.value)


def test_paths_read_and_merge_patch_a_field() -> None:
    assert (
        get_path({"status": {"jobStatus": {"state": "SUSPENDED"}}}, "status.jobStatus.state") == "SUSPENDED"
    )
    assert get_path({"status": {}}, "status.jobStatus.state") is None
    assert merge_patch_for("spec.job.state", "suspended") == {"spec": {"job": {"state": "suspended"}}}


# --- the steps, one decision each ----------------------------------------------------------------------


def report(
    kind: JobKind, outcome: Outcome, result: dict[str, Any], table_buckets: TableBuckets | None = None
) -> JobReport:
    error = (
        JobError("ConcurrentWriteError", "another writer committed", "retry")
        if outcome is Outcome.FAILED
        else None
    )
    said = f"{kind}: {outcome.value}"
    return JobReport(kind, "s3a://x", outcome, said, "t0", "t1", result, error, table_buckets)


def planned(plan: Plan = PLAN) -> JobReport:
    return report(JobKind.PLAN, Outcome.SUCCEEDED, PlanResult(plan.reported(), {}).to_dict(), TableBuckets())


def applied(ok: bool = True) -> JobReport:
    result = ApplyResult(PLAN.reported(), "20261124013000000", 1, 1000, 10, 1.5, True, (), {})
    in_force = TableBuckets.of(HashingConfig.from_rules(RULES, "20261124013000000"), {CHANGE.partition: 16})
    outcome = Outcome.SUCCEEDED if ok else Outcome.FAILED
    if not ok:
        return report(JobKind.APPLY, outcome, {})
    return report(JobKind.APPLY, outcome, result.to_dict(), in_force)


def job(kind: JobKind, phase: JobPhase, result: JobReport | None = None) -> ObservedJob:
    sequence = 0 if kind is JobKind.PLAN else 1
    created = f"2026-11-23T11:0{sequence}:00Z"
    return ObservedJob(f"orders-{kind.value}-1", kind, 1, "", phase, created, sequence, "", result)


PLAN_DONE = job(JobKind.PLAN, JobPhase.COMPLETED, planned())
RUNNING_WRITERS = {
    "Deployment/ingest": ObservedWriter(replicas=3, pods=3),
    "FlinkDeployment/orders-cdc": ObservedWriter(value="running"),
}


def test_an_approved_plan_outside_its_window_waits_saying_when_the_window_opens() -> None:
    decision = decide(
        Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,), writers=RUNNING_WRITERS), NOW
    )
    assert decision.status.phase == "AwaitingWindow"
    assert decision.status.to_api()["writers"]["nextWindow"] == "2026-11-24T01:00:00Z"
    assert (decision.submit, decision.writer_actions, decision.recorded) == (None, (), PLAN_DONE.name)
    assert [r for _, r, _ in decision.events] == ["AwaitingWindow"]
    ready = condition(decision.status, "Ready")
    assert ready is not None
    assert "waits for its window (0 1 * * * for 3h, UTC): next at 2026-11-24T01:00:00Z" in (
        ready.message or ""
    )
    # Recorded: the next passes keep waiting, quietly, until the window opens.
    again = decide(Observed(WRITERS_SPEC, 1, {}, decision.status, (PLAN_DONE,)), NOW + timedelta(hours=1))
    assert (again.status.phase, again.events, again.submit) == ("AwaitingWindow", (), None)
    opened = decide(
        Observed(WRITERS_SPEC, 1, {}, decision.status, (PLAN_DONE,), writers=RUNNING_WRITERS), NIGHT
    )
    assert opened.status.phase == "PausingWriters"


def test_the_apply_now_annotation_overrides_the_window_for_its_plan_only() -> None:
    waiting = decide(
        Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,), writers=RUNNING_WRITERS), NOW
    ).status
    other = {APPLY_NOW: "sha256:" + "0" * 64}
    assert (
        decide(
            Observed(WRITERS_SPEC, 1, other, waiting, (PLAN_DONE,), writers=RUNNING_WRITERS), NOW
        ).status.phase
        == "AwaitingWindow"
    )
    this = {APPLY_NOW: PLAN.plan_id}
    now = decide(Observed(WRITERS_SPEC, 1, this, waiting, (PLAN_DONE,), writers=RUNNING_WRITERS), NOW)
    assert now.status.phase == "PausingWriters"


def test_in_the_window_the_writers_prior_state_is_recorded_before_anything_is_paused() -> None:
    decision = decide(
        Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,), writers=RUNNING_WRITERS), NIGHT
    )
    assert decision.status.phase == "PausingWriters"
    assert decision.writer_actions == ()  # this status first
    written = decision.status.to_api()["writers"]
    assert [(i["kind"], i["name"], i["prior"]) for i in written["items"]] == [
        ("Deployment", "ingest", {"replicas": 3}),
        ("FlinkDeployment", "orders-cdc", {"value": "running"}),
    ]
    assert written["deadline"] == "2026-11-24T01:45:00Z"  # quiesceTimeout's default
    assert decision.poll_seconds == maintenance.POLL_SECONDS
    paused = decide(
        Observed(WRITERS_SPEC, 1, {}, decision.status, (PLAN_DONE,), writers=RUNNING_WRITERS), NIGHT
    )
    assert [(a.verb, a.kind, a.replicas, a.path, a.value) for a in paused.writer_actions] == [
        (WriterVerb.PAUSE, "Deployment", 0, "", None),
        (WriterVerb.PAUSE, "FlinkDeployment", None, "spec.job.state", "suspended"),
    ]
    assert paused.submit is None
    assert "waiting for the writers to stop: Deployment/ingest (3 pod(s)), FlinkDeployment/orders-cdc" in (
        paused.status.conditions[0].message
    )


@pytest.mark.parametrize(
    ("spec", "plan"),
    [
        ({**SPEC, "apply": {"policy": "Automatic"}}, PLAN),
        (WRITERS_SPEC, CONFIG_ONLY),
    ],
    ids=["no-writers-no-window", "config-only"],
)
def test_an_apply_needing_no_window_nor_pause_starts_at_once(spec: dict[str, Any], plan: Plan) -> None:
    plan_done = job(JobKind.PLAN, JobPhase.COMPLETED, planned(plan))
    decision = decide(Observed(spec, 1, {}, TableStatus(), (plan_done,), writers=RUNNING_WRITERS), NOW)
    assert decision.submit is not None
    assert decision.submit.kind is JobKind.APPLY
    assert (decision.status.writers is None, decision.writer_actions) == (True, ())


def test_a_window_without_writers_starts_the_apply_once_it_opens() -> None:
    spec = {**SPEC, "apply": {"policy": "Automatic", "window": WINDOW}}
    waiting = decide(Observed(spec, 1, {}, TableStatus(), (PLAN_DONE,)), NOW)
    assert (waiting.status.phase, waiting.submit, waiting.requeue) == ("AwaitingWindow", None, False)
    opened = decide(Observed(spec, 1, {}, waiting.status, (PLAN_DONE,)), NIGHT)
    assert opened.submit is not None
    assert opened.submit.approved_plan == PLAN.plan_id


def test_a_writer_not_found_stalls_before_anything_is_paused() -> None:
    seen = {**RUNNING_WRITERS, "Deployment/ingest": ObservedWriter(found=False)}
    decision = decide(Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,), writers=seen), NIGHT)
    assert (decision.status.phase, decision.writer_actions, decision.submit) == ("Stalled", (), None)
    assert "Deployment/ingest; nothing was paused" in decision.status.conditions[0].message
    assert [r for _, r, _ in decision.events][-1] == "WriterNotFound"


def test_which_writers_a_pass_reads() -> None:
    assert (
        writers_needed(Observed(WRITERS_SPEC, 1, {}, TableStatus(), ())) == []
    )  # nothing to decide about them
    assert [w.key for w in writers_needed(Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,)))] == [
        "Deployment/ingest", "FlinkDeployment/orders-cdc",
    ]  # fmt: skip
    recorded = decide(
        Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,), writers=RUNNING_WRITERS), NIGHT
    ).status
    # The spec made invalid: the writers recorded paused are still read, to resume them.
    observed = Observed({"table": {}}, 2, {}, recorded, (PLAN_DONE,))
    assert [w.key for w in writers_needed(observed)] == ["Deployment/ingest", "FlinkDeployment/orders-cdc"]


def test_approving_the_plan_that_awaits_approval_pauses_the_writers_on_that_pass() -> None:
    """The approval alone starts the apply without planning again, and so reads the writers, whose
    state is recorded first: the table does not stall for want of them, nor plan a second time."""
    manual = {**WRITERS_SPEC, "apply": {"policy": "Manual"}}
    awaiting = decide(Observed(manual, 1, {}, TableStatus(), (PLAN_DONE,), writers=RUNNING_WRITERS), NOW)
    assert awaiting.status.phase == "AwaitingApproval"
    approved = {**manual, "apply": {"policy": "Manual", "approvedPlan": PLAN.plan_id}}
    observed = Observed(approved, 2, {}, recorded(awaiting).status, (PLAN_DONE,))
    assert [w.key for w in writers_needed(observed)] == ["Deployment/ingest", "FlinkDeployment/orders-cdc"]
    decision = decide(replace(observed, writers=RUNNING_WRITERS), NOW)
    assert decision.submit is None  # no second plan
    written = decision.status.to_api()["writers"]
    assert (decision.status.phase, written["step"]) == ("PausingWriters", "Pausing")
    assert [item["prior"] for item in written["items"]] == [
        {"replicas": 3},
        {"value": "running"},
    ]


# --- a small world, and the operator crashed at every pass -----------------------------------------------


@dataclass
class World:
    """Writers that stop a pass after they are told to (pods go, Flink reports SUSPENDED), and an apply
    job that runs for one pass, then completes or fails."""

    replicas: int = 3
    pods: int = 3
    flink: str = "running"
    flink_stopped: bool = False
    apply_fails: bool = False
    apply_report: JobReport | None = None  # what the first apply reports, if not applied(not apply_fails)
    jobs: list[ObservedJob] = field(default_factory=lambda: [PLAN_DONE])
    applies: int = 0
    paused_at: list[int] = field(default_factory=list)  # the passes at which a writer was paused
    running: set[str] = field(default_factory=set)
    plans: list[str | None] = field(default_factory=list)  # the plans an apply was submitted for

    def seen(self) -> dict[str, ObservedWriter]:
        return {
            "Deployment/ingest": ObservedWriter(replicas=self.replicas, pods=self.pods),
            "FlinkDeployment/orders-cdc": ObservedWriter(value=self.flink, stopped=self.flink_stopped),
        }

    def act(self, decision: Decision) -> None:
        for action in decision.writer_actions:
            if action.kind == "Deployment":
                self.replicas = action.replicas or 0
            else:
                self.flink = action.value or ""

    def submit(self, decision: Decision) -> None:
        if decision.submit is None or decision.submit.kind is not JobKind.APPLY:
            return
        plan = decision.submit.approved_plan
        if plan not in self.plans:  # else adopted, as the backend does: an apply's name holds its plan
            self.plans.append(plan)
            self.applies += 1
            first = job(JobKind.APPLY, JobPhase.RUNNING)
            self.jobs.append(
                replace(
                    first,
                    name=f"orders-apply-{self.applies}",
                    created=f"2026-11-23T11:{self.applies:02d}:00Z",
                )
            )

    def tick(self, pass_no: int) -> None:
        self.pods = self.replicas  # pods follow the replicas a pass later
        self.flink_stopped = self.flink == "suspended"
        if self.replicas == 0 or self.flink == "suspended":
            self.paused_at.append(pass_no)
        # A job runs through one pass (seen in flight), and ends before the next.
        self.jobs = [
            replace(j, phase=JobPhase.COMPLETED, report=self.report_of(j))
            if j.kind is JobKind.APPLY and j.phase is JobPhase.RUNNING and j.name in self.running
            else j
            for j in self.jobs
        ]
        self.running = {j.name for j in self.jobs if j.phase is JobPhase.RUNNING}

    def report_of(self, apply: ObservedJob) -> JobReport:
        if self.apply_report is not None and apply.name == "orders-apply-1":
            return self.apply_report
        return applied(not self.apply_fails)

    @property
    def as_before(self) -> bool:
        return (self.replicas, self.flink) == (3, "running")


def paused_world() -> tuple[World, TableStatus]:
    """A world whose writers the operator paused (the priors recorded, then the pauses), and its status."""
    world = World()
    status = TableStatus()
    for pass_no in range(2):
        decision = decide(
            Observed(WRITERS_SPEC, 1, {}, status, tuple(world.jobs), writers=world.seen()), NIGHT
        )
        status = decision.status
        world.act(decision)
        world.tick(pass_no)
    assert world.replicas == 0
    return world, status


def run(
    world: World, crash_at: int | None = None, lose_status: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """Passes until the steps are over; at ``crash_at`` the operator dies after writing the status (its
    writer actions lost) or, with ``lose_status``, before writing it (its job submitted all the same).
    The status goes through the API's JSON between passes, as the operator writes and reads it."""
    status: dict[str, Any] = {}
    annotations = kwargs.get("annotations", {})
    spec = kwargs.get("spec", WRITERS_SPEC)
    for pass_no in range(40):
        observed = Observed(
            spec, 1, annotations, TableStatus.of(status), tuple(world.jobs), writers=world.seen()
        )
        decision = decide(observed, NIGHT + timedelta(seconds=2 * pass_no))
        world.submit(decision)  # the controller submits first, then writes the status, then acts
        if pass_no != crash_at or not lose_status:
            status = decision.status.to_api()
        if pass_no != crash_at:
            world.act(decision)
        world.tick(pass_no)
        if (
            pass_no > 2
            and not maintenance.active(TableStatus.of(status).writers)
            and status.get("phase") != "Applying"
        ):
            return status
    raise AssertionError(f"never settled: {status}")


def test_a_rescale_pauses_the_writers_applies_and_resumes_them_as_they_were() -> None:
    world = World()
    status = run(world)
    assert (status["phase"], world.applies, world.as_before) == ("Ready", 1, True)
    assert status["history"][0]["outcome"] == "Succeeded"
    last = status["writers"]["last"]
    assert last["writers"] == ["Deployment/ingest", "FlinkDeployment/orders-cdc"]
    assert last["downtimeSeconds"] > 0
    assert status["history"][0]["writersDowntimeSeconds"] == last["downtimeSeconds"]


def test_a_failed_apply_resumes_the_writers_then_stalls_with_the_jobs_words() -> None:
    world = World(apply_fails=True)
    status = run(world)
    assert (status["phase"], world.as_before) == ("Stalled", True)
    assert "another writer committed (retry)" in status["conditions"][0]["message"]


def test_a_failed_apply_is_told_once_when_the_writers_are_back() -> None:
    world, status, told = World(apply_fails=True), TableStatus(), []
    for pass_no in range(12):
        decision = decide(Observed(WRITERS_SPEC, 1, {}, status, tuple(world.jobs), writers=world.seen()),
                          NIGHT + timedelta(seconds=2 * pass_no))  # fmt: skip
        world.submit(decision)
        status = recorded(decision).status
        told += [(reason, world.as_before) for kind, reason, _ in decision.events if kind == "Warning"]
        world.act(decision)
        world.tick(pass_no)
    assert status.phase == "Stalled"
    assert told == [("JobFailed", True)]


def test_writers_that_do_not_stop_in_time_are_resumed_and_the_table_stalls() -> None:
    spec = {**WRITERS_SPEC, "writers": {"workloads": WORKLOADS, "quiesceTimeout": "1m"}}
    world = World()
    status = TableStatus()
    for pass_no in range(60):  # Flink never says it stopped
        decision = decide(Observed(spec, 1, {}, status, tuple(world.jobs), writers=world.seen()),
                          NIGHT + timedelta(seconds=5 * pass_no))  # fmt: skip
        status = decision.status
        world.act(decision)
        world.pods = world.replicas
        if status.phase == "Stalled":
            break
    assert (status.phase, world.applies, world.as_before) == ("Stalled", 0, True)
    held = condition(status, "Stalled")
    assert held is not None
    assert held.reason == "QuiesceTimeout"
    assert "FlinkDeployment/orders-cdc" in (held.message or "")


@pytest.mark.parametrize("lose_status", [False, True], ids=["after-status", "before-status"])
@pytest.mark.parametrize("apply_fails", [False, True], ids=["applied", "apply-failed"])
@pytest.mark.parametrize("crash_at", range(9))
def test_an_operator_crashed_at_any_pass_never_leaves_a_writer_paused(
    crash_at: int, apply_fails: bool, lose_status: bool
) -> None:
    world = World(apply_fails=apply_fails)
    status = run(world, crash_at=crash_at, lose_status=lose_status)
    assert world.as_before, f"left paused: {world}"
    assert world.applies == 1
    assert status["phase"] == ("Stalled" if apply_fails else "Ready")
    assert "step" not in status["writers"]


@pytest.mark.parametrize(
    "interruption",
    [
        {"annotations": {PAUSED: "true"}},
        {"spec": {**WRITERS_SPEC, "buckets": {"default": 0}}},
    ],
    ids=["paused-annotation", "spec-made-invalid"],
)
def test_writers_paused_before_the_apply_are_resumed_when_the_table_is_paused_or_its_spec_broken(
    interruption: dict[str, Any],
) -> None:
    world, status = paused_world()
    spec, annotations = interruption.get("spec", WRITERS_SPEC), interruption.get("annotations", {})
    for _ in range(4):
        decision = decide(
            Observed(spec, 1, annotations, status, tuple(world.jobs), writers=world.seen()), NIGHT
        )
        status = decision.status
        world.act(decision)
    assert (world.as_before, world.applies) == (True, 0)
    assert status.phase == ("Paused" if annotations else "Stalled")


@pytest.mark.parametrize("deleted_at", range(8))
def test_a_table_deleted_at_any_pass_starts_nothing_new_and_holds_its_writers_no_longer(
    deleted_at: int,
) -> None:
    """Deleting a table whose writers the operator may hold paused waits (a finalizer) until this: every
    writer as it was, no step left that holds them; an apply in flight finishes first, none starts."""
    world, status, applies_before = World(), TableStatus(), 0
    for pass_no in range(40):
        deleting = pass_no >= deleted_at
        if pass_no == deleted_at:
            applies_before = world.applies
        observed = Observed(
            WRITERS_SPEC, 1, {}, status, tuple(world.jobs), writers=world.seen(), deleting=deleting
        )
        decision = decide(observed, NIGHT + timedelta(seconds=2 * pass_no))
        world.submit(decision)
        status = decision.status
        world.act(decision)
        world.tick(pass_no)
        if deleting and not maintenance.holding(status.writers):
            break
    else:
        raise AssertionError(f"still holding the writers: {status.writers}")
    assert world.as_before
    assert world.applies == applies_before  # none started once the table was being deleted
    assert world.running == set()  # one in flight ran to its end


CHANGED = Plan(BucketRules.parse("11-11,8", 4), None, (replace(CHANGE, new_buckets=8),), "20261124010000000")


def refused_as_changed() -> JobReport:
    """An apply that found the table changed since its plan was approved, and the plan it found."""
    found = PlanResult(CHANGED.reported(), {}).to_dict()
    error = JobError(PlanNotApprovedError.__name__, "the plan is another", PlanNotApprovedError.hint)
    return JobReport(JobKind.APPLY, "s3a://x", Outcome.FAILED, "refused", "t1", "t2", found, error)


@pytest.mark.parametrize("policy", ["Manual", "Automatic"])
def test_an_apply_in_the_window_that_finds_the_table_changed_resumes_the_writers_and_offers_the_new_plan(
    policy: str,
) -> None:
    approval = {"approvedPlan": PLAN.plan_id} if policy == "Manual" else {}
    spec = {**WRITERS_SPEC, "apply": {"policy": policy, "window": WINDOW, **approval}}
    world, status = World(apply_report=refused_as_changed()), TableStatus()
    for pass_no in range(16):
        decision = decide(Observed(spec, 1, {}, status, tuple(world.jobs), writers=world.seen()),
                          NIGHT + timedelta(seconds=2 * pass_no))  # fmt: skip
        world.submit(decision)
        status = recorded(decision).status
        world.act(decision)
        world.tick(pass_no)
    assert world.as_before
    if policy == "Manual":  # the plan it found awaits approval, saying how to give it
        assert (status.phase, world.applies) == ("AwaitingApproval", 1)
        assert status.plan is not None
        assert status.plan.id == CHANGED.plan_id
        assert f"approvedPlan to {CHANGED.plan_id}" in (status.conditions[0].message or "")
    else:  # the plan it found is applied as any plan is: the writers paused again, in the window
        assert (status.phase, world.applies, world.plans) == ("Ready", 2, [PLAN.plan_id, CHANGED.plan_id])


# --- consent, the admins' policy, the apply deadline, a pass that raises ---------------------------------


def test_consent_is_the_workloads_label_or_its_annotation_naming_the_table() -> None:
    assert consents({"labels": {"hudi.bucketops.io/writer-of": "orders"}}, "orders")
    assert consents({"annotations": {"hudi.bucketops.io/writer-of": "customers, orders"}}, "orders")
    assert not consents({}, "orders")
    assert not consents({"labels": {"hudi.bucketops.io/writer-of": "customers"}}, "orders")
    assert not consents({"labels": {"hudi.bucketops.io/writer-of": "orders-2"}}, "orders")
    assert not consents({"annotations": {"hudi.bucketops.io/writer-of": "orders-archive"}}, "orders")
    assert not consents({"labels": {"app": "orders"}, "annotations": {"owner": "orders"}}, "orders")


def test_a_writer_whose_owner_did_not_consent_stalls_the_table_before_anything_is_paused() -> None:
    seen = {**RUNNING_WRITERS, "Deployment/ingest": ObservedWriter(consents=False, replicas=3, pods=3)}
    decision = decide(Observed(WRITERS_SPEC, 1, {}, TableStatus(), (PLAN_DONE,), writers=seen), NIGHT)
    assert (decision.status.phase, decision.writer_actions, decision.submit) == ("Stalled", (), None)
    held = condition(decision.status, "Stalled")
    assert held is not None
    assert held.reason == "WriterNotConsented"
    assert "Deployment/ingest do not let this table pause them: nothing was paused" in (held.message or "")
    assert "hudi.bucketops.io/writer-of=orders" in (held.message or "")
    assert [r for _, r, _ in decision.events][-1] == "WriterNotConsented"


def test_consent_withdrawn_while_pausing_resumes_every_writer_and_stalls() -> None:
    world, status = paused_world()
    for _ in range(4):
        seen = {
            **world.seen(),
            "Deployment/ingest": replace(world.seen()["Deployment/ingest"], consents=False),
        }
        decision = decide(Observed(WRITERS_SPEC, 1, {}, status, tuple(world.jobs), writers=seen), NIGHT)
        status = decision.status
        world.act(decision)
    assert (world.as_before, world.applies, status.phase) == (True, 0, "Stalled")
    held = condition(status, "Stalled")
    assert held is not None
    assert held.reason == "WriterNotConsented"


@pytest.mark.parametrize(
    ("policy", "writers", "says"),
    [
        (WriterPolicy(), WORKLOADS, "its admins have not enabled it (Helm value writers.enabled)"),
        (
            WriterPolicy(enabled=True),
            WORKLOADS,
            "kind(s) ['FlinkDeployment'] that the operator does not know how to pause",
        ),
        (
            WRITER_POLICY,
            [*WORKLOADS, {"kind": "CronJob", "name": "nightly"}],
            "kind(s) ['CronJob'] that the operator does not know how to pause",
        ),
    ],
    ids=["not-enabled", "kind-not-declared", "another-kind"],
)
def test_writers_the_admins_do_not_let_it_pause_stall_the_table_before_any_job(
    policy: WriterPolicy, writers: list[dict[str, str]], says: str
) -> None:
    spec = {**WRITERS_SPEC, "writers": {"workloads": writers}}
    observed = Observed(spec, 1, {}, TableStatus(), (), policy=Policy(LAKE_JOBS, policy))
    assert writers_needed(replace(observed, jobs=(PLAN_DONE,))) == []  # not even read
    decision = decide(observed, NIGHT)
    assert (decision.submit, decision.writer_actions, decision.status.phase) == (None, (), "Stalled")
    held = condition(decision.status, "Stalled")
    assert held is not None
    assert held.reason == "WriterNotAllowed"
    assert says in (held.message or "")


def test_a_quiesce_timeout_over_the_admins_limit_stalls_the_table() -> None:
    spec = {**WRITERS_SPEC, "writers": {"workloads": WORKLOADS, "quiesceTimeout": "999d"}}
    decision = decide(Observed(spec, 1, {}, TableStatus(), ()), NIGHT)
    held = condition(decision.status, "Stalled")
    assert held is not None
    assert (held.reason, decision.submit) == ("WriterNotAllowed", None)
    assert "quiesceTimeout is 86313600 s, over the 3600 s the admins allow" in (held.message or "")


def test_an_apply_that_holds_the_writers_past_the_deadline_is_cancelled_and_they_are_resumed() -> None:
    """A job that never runs (its pods cannot be scheduled): at the admins' apply deadline the operator
    deletes it, resumes the writers as they were and stalls the table; nothing is applied again."""
    deadline = 600
    world = World()
    status = TableStatus()
    observed = partial(
        Observed, policy=Policy(LAKE_JOBS, WRITER_POLICY.model_copy(update={"apply_deadline": deadline}))
    )
    cancelled: list[str] = []
    moment = NIGHT
    for pass_no in range(40):
        decision = decide(
            observed(WRITERS_SPEC, 1, {}, status, tuple(world.jobs), writers=world.seen()), moment
        )
        world.submit(decision)
        status = decision.status
        world.act(decision)
        world.pods, world.flink_stopped = world.replicas, world.flink == "suspended"
        if decision.cancel:
            cancelled.append(decision.cancel)
        if status.phase == "Applying" and not cancelled:
            assert decision.poll_seconds is not None  # looked at again by the deadline at the latest
            moment += timedelta(seconds=deadline / 4)  # the job stays Running: never scheduled
        else:
            moment += timedelta(seconds=2)
        if status.phase == "Stalled" and pass_no > 3:
            break
    assert cancelled == ["orders-apply-1"]
    assert (world.as_before, world.applies) == (True, 1)
    held = condition(status, "Stalled")
    assert held is not None
    assert held.reason == "ApplyDeadlineExceeded"
    assert "apply job orders-apply-1 did not finish by the apply deadline" in (held.message or "")
    # The cancelled job lingers (its deletion under way), then goes: either way nothing starts again.
    for jobs in (tuple(world.jobs), (PLAN_DONE,)):
        later = decide(observed(WRITERS_SPEC, 1, {}, status, jobs, writers=world.seen()), moment)
        assert (later.submit, later.writer_actions, later.cancel, later.status.phase) == (
            None,
            (),
            None,
            "Stalled",
        )


def test_a_pass_that_raises_resumes_the_paused_writers_then_stalls_saying_why() -> None:
    world, status = paused_world()
    events = []
    for _ in range(4):  # every pass raises: a bug, or a spec no check foresaw
        observed = Observed(WRITERS_SPEC, 1, {}, status, tuple(world.jobs), writers=world.seen())
        decision = failed(observed, NIGHT, RecursionError("maximum recursion depth exceeded" + "!" * 50_000))
        status = decision.status
        events += decision.events
        world.act(decision)
    assert (world.as_before, world.applies, status.phase) == (True, 0, "Stalled")
    held = condition(status, "Stalled")
    assert held is not None
    assert held.reason == "ReconcileError"
    assert (held.message or "").startswith("the operator failed on this table (RecursionError)")
    assert len(held.message or "") <= 4096  # bounded: the status model, and the API, take it
    assert [r for _, r, _ in events] == ["WritersResumed", "ReconcileError"]  # told once

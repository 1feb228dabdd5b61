"""spec.apply (when a plan is applied: the policy, the approved plan, the window) and spec.writers (the
workloads paused around an apply), as models (no I/O)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from hudi_bucket_operator.resource.crd_schema import FILLED, MatchedByCel
from hudi_bucket_operator.resource.schedule import DURATION_FORMAT, parse_duration
from hudi_bucket_operator.resource.spec.fields import (
    CRON_SHAPE,
    DURATION_PATTERN,
    MAX_DURATION_LENGTH,
    MAX_SCHEDULE_LENGTH,
    DnsName,
    check_duration,
    check_schedule,
)
from hudi_bucket_operator.resource.spec.problems import Expect, Section, problem

MAX_WRITERS = 20
# The CRD's pattern of a plan id, or empty.
_PLAN_ID = r"^(sha256:[0-9a-f]{64})?$"
_PLAN_ID_FORMAT = (
    "a plan id as shown in status.plan.id (sha256: followed by 64 lowercase hex digits), or empty"
)
# A name of the IANA time zone database, as Kubernetes checks a CronJob's timeZone.
TIME_ZONE_PATTERN = r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$"
MAX_TIME_ZONE_LENGTH = 64
TIME_ZONE_FORMAT = "a time zone of the IANA database, such as Europe/Berlin or America/New_York"
WINDOW_SCHEDULE_FORMAT = (
    "a cron expression as spec.verify.schedule takes one (no interval): five fields such as "
    "'0 1 * * *' or '0 1 * * SAT,SUN', or @hourly, @daily, @weekly, @monthly or @yearly"
)


class ApplyPolicy(enum.StrEnum):
    AUTOMATIC = "Automatic"  # apply every plan as soon as it is made
    MANUAL = "Manual"  # apply a plan only once its id is copied into spec.apply.approvedPlan


def _time_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("an unknown time zone") from None
    return name


def _window_schedule(text: str) -> str:
    if parse_duration(text) is not None:  # a window starts at set times, not an interval after the last
        raise ValueError("an interval")
    return check_schedule(text)


WaitDuration = Annotated[
    str,
    Field(max_length=MAX_DURATION_LENGTH, pattern=DURATION_PATTERN),
    AfterValidator(check_duration),
    Expect(DURATION_FORMAT),
]


class WindowSection(Section):
    expected: ClassVar[str] = "an object with schedule (cron), duration and optionally timeZone"

    schedule: Annotated[
        str,
        Field(max_length=MAX_SCHEDULE_LENGTH, pattern=f"^({CRON_SHAPE})$"),
        AfterValidator(_window_schedule),
        Expect(WINDOW_SCHEDULE_FORMAT),
    ]
    """A cron expression as Kubernetes CronJobs take it, on the clocks of timeZone (UTC without one): five
    fields ('0 1 * * *', '0 1 * * SAT,SUN') or a macro (@hourly, @daily, @weekly, @monthly, @yearly).
    """
    duration: WaitDuration
    """How long each window lasts (90m, 1h30m, 3h, 1d)."""
    time_zone: (
        Annotated[
            str,
            Field(max_length=MAX_TIME_ZONE_LENGTH, pattern=TIME_ZONE_PATTERN),
            AfterValidator(_time_zone),
            Expect(TIME_ZONE_FORMAT),
        ]
        | None
    ) = None
    """The time zone the schedule is read in, as a CronJob's timeZone: a name of the IANA time zone
    database (Europe/Berlin, America/New_York). Default: UTC. Across a change of the clocks a start runs
    as cron runs it: once, and a start the clocks skip at the first minute after.
    """


class ApplySection(Section):
    # A manifest spells it as a string.
    policy: Annotated[ApplyPolicy, FILLED] = Field(ApplyPolicy.MANUAL, strict=False)
    """Manual: apply a plan only once its id (status.plan.id) is copied into approvedPlan. Automatic: apply
    every plan as soon as it is made.
    """
    approved_plan: Annotated[
        str,
        Field(max_length=71, pattern=_PLAN_ID),
        MatchedByCel(f"spec.apply.approvedPlan must be {_PLAN_ID_FORMAT}", keep_pattern=True),
        Expect(_PLAN_ID_FORMAT),
    ] = ""
    """The id of the plan you approve (copy status.plan.id). If the table changes and the new plan differs,
    its id differs and nothing is applied until you approve it.
    """
    window: WindowSection | None = None
    """When a plan that rewrites partitions may start: from each time the cron schedule names (on the clocks
    of timeZone, UTC by default), for the duration. Outside it an approved plan waits (phase AwaitingWindow, the next start in
    status.writers.nextWindow); the annotation hudi.bucketops.io/apply-now set to a plan's id starts that
    plan at once. A plan that changes only the config (no partition rewritten) needs no window. Default:
    any time.
    """

    def approves(self, plan_id: str | None) -> bool:
        return self.policy is ApplyPolicy.AUTOMATIC or self.approved_plan == plan_id


class WorkloadSection(Section):
    """A workload writing the table, in its namespace, by kind and name: a Deployment or StatefulSet (scaled
    to 0, later back to its replicas), or a kind the operator's admins declare with how it is suspended (Helm
    values writers.kinds, e.g. a FlinkDeployment). The workload must consent: its owner labels or annotates
    it hudi.bucketops.io/writer-of=<this table's name> (an annotation may list several tables,
    comma-separated); without it nothing is paused and the table stalls."""

    expected: ClassVar[str] = "an object with kind and name"

    kind: Annotated[
        str,
        Field(max_length=63, pattern=r"^[A-Z][A-Za-z0-9]*$"),
        Expect("a kind such as Deployment, StatefulSet or one the admins declare (FlinkDeployment)"),
    ]
    """The workload's kind: Deployment, StatefulSet, or a kind the admins declare (Helm values writers.kinds).
    """
    name: Annotated[DnsName, Expect("the workload's name, in the table's namespace")]
    """The workload's name, in the table's namespace."""


class WritersSection(Section):
    expected: ClassVar[str] = "an object with workloads (and quiesceTimeout)"

    quiesce_timeout: WaitDuration | None = None
    """How long the writers may take to stop (90m, 15m, 1h); default 15m, at most what the admins allow (Helm
    values writers.maxQuiesceTimeout, default 1h).
    """
    workloads: Annotated[
        list[WorkloadSection],
        Field(max_length=MAX_WRITERS),
        Expect(f"a list of at most {MAX_WRITERS} workloads"),
    ] = []
    """The workloads to pause around an apply, each by kind and name (at most 20)."""

    @classmethod
    def rules_broken(cls, data: Mapping[str, Any]) -> list[PydanticCustomError]:
        workloads = data.get("workloads")
        keys = [
            f"{workload['kind']}/{workload['name']}"
            for workload in (workloads if isinstance(workloads, list) else [])
            if isinstance(workload, Mapping)
            and isinstance(workload.get("kind"), str)
            and isinstance(workload.get("name"), str)
        ]
        twice = sorted({key for key in keys if keys.count(key) > 1})
        return [problem(f" names {key} more than once", field="workloads") for key in twice]

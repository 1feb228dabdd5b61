"""The whole spec, ``TableSpec``, and ``parse_spec``, which validates a spec into one (no I/O).

The models are also what the operator reads: a ``TableSpec`` works out what the operator needs of the
spec (the bucket rules as Hudi reads them, the sizing policy, schedules, the writers, the apply window,
each job's request). The CRD's schema and CEL rules refuse bad manifests at admission; ``parse_spec``
checks the same again (a cluster may run without CEL, and the local mode has no API server at all).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import UTC
from functools import cached_property
from typing import Annotated, Any, ClassVar
from zoneinfo import ZoneInfo

from pydantic import AfterValidator, Field, ValidationError

from hudi_bucket.contract.requests import (
    ApplyOptions,
    ApplyRequest,
    JobKind,
    PlanRequest,
    RescaleOptions,
    VerifyRequest,
)
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.rules import REGEX, BucketRules, Rule
from hudi_bucket.core.sizing import SizingPolicy
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource.crd_schema import FILLED
from hudi_bucket_operator.resource.schedule import DURATION, Schedule
from hudi_bucket_operator.resource.schedule import FORMAT as SCHEDULE_FORMAT
from hudi_bucket_operator.resource.spec.apply import ApplySection, WritersSection
from hudi_bucket_operator.resource.spec.fields import (
    CRON_SHAPE,
    MAX_SCHEDULE_LENGTH,
    check_schedule,
    duration_seconds,
)
from hudi_bucket_operator.resource.spec.problems import Expect, Section, problems
from hudi_bucket_operator.resource.spec.spark import SparkSection
from hudi_bucket_operator.resource.spec.table import BucketsSection, TableSection
from hudi_bucket_operator.resource.writers import DEFAULT_QUIESCE_TIMEOUT, Window, WorkloadRef, WriterRefs


class MetadataTablePolicy(enum.StrEnum):
    REFUSE = "Refuse"  # a live metadata table stops the rescale (it would go stale)
    DISABLE = "Disable"  # remove it the way Hudi does, and say so


class VerifySection(Section):
    schedule: (
        Annotated[
            str,
            # The shape only (no less than the operator's cron library takes): check_schedule says what is
            # wrong.
            Field(max_length=MAX_SCHEDULE_LENGTH, pattern=f"^({DURATION.pattern}|{CRON_SHAPE})$"),
            AfterValidator(check_schedule),
            Expect(SCHEDULE_FORMAT),
        ]
        | None
    ) = None
    """An interval after the last check (90m, 6h, 7d) or a cron expression in UTC as Kubernetes CronJobs take
    it: five fields ('0 3 * * *', '0 3 * * MON-FRI') or a macro (@hourly, @daily, @weekly, @monthly,
    @yearly). A table never checked is checked once it is Ready.
    """


class TableSpec(Section):
    """The table and how its buckets are managed: what to converge it to, when, with which approval, and how
    its jobs run."""

    expected: ClassVar[str] = "an object with table and buckets"

    table: TableSection
    """Which table. Its record keys and partitioning are read from hoodie.properties."""
    buckets: BucketsSection
    """Bucket counts per partition. Rules are tried in order and the first whose pattern is found in the
    partition path wins, as in Hudi; partitions no rule matches get default.
    """
    apply: Annotated[ApplySection, FILLED] = ApplySection()
    """When a plan may be applied."""
    metadata_table: Annotated[MetadataTablePolicy, FILLED] = Field(MetadataTablePolicy.REFUSE, strict=False)
    """What to do about a live metadata table the rescale cannot keep (Native keeps one where the job has
    Hudi's bundle, unless its record index is partitioned; Hudi one of table version 8 or later). Refuse:
    stop and say so. Disable: remove it the way Hudi does, and say so.
    """
    engine: Annotated[Engine, FILLED] = Field(Engine.AUTO, strict=False)
    """Who rewrites the table. Native: this operator's own rewrite (copy-on-write and MERGE_ON_READ tables,
    bootstrapped file groups and log files read by Apache Hudi's own reader; shuffle-free where it can be;
    a live metadata table and its indexes kept by Hudi's own metadata writer of the table's version, a
    partitioned record index aside). Hudi: Apache Hudi's partition_bucket_index_manager procedure in the
    job (its Spark bundle in the job image), which keeps the metadata table and its indexes in sync (table
    version 8 or later). Auto: Native where it can, else Hudi.
    """
    writers: WritersSection = WritersSection()
    """The workloads that write the table, in its namespace. Before a plan that rewrites partitions is
    applied, the operator records each one's state in status.writers, pauses them, waits until they are
    quiet (no pod left; the status field says stopped), applies, and resumes each as it was (restarted
    writers load the new bucket counts). On a failure, a timeout or the admins' apply deadline they are
    resumed and the table stalls, saying why. Only if the operator's admins enable it (Helm values
    writers.enabled).
    """
    verify: VerifySection | None = None
    """Check the table's layout on a schedule, as `hudi-bucket-job verify` does (every record in its bucket,
    one file group per bucket), and plan again, so that a table changed by another writer shows a new plan
    instead of a stale Ready. A violation becomes status.layout and the LayoutHealthy condition, and the
    plan then repairs the partitions concerned; it is approved like any other plan. Default: never.
    """
    spark: SparkSection = SparkSection()
    """How the Spark jobs run. Anything left out falls back to the operator's defaults."""

    # What the operator reads off the spec, worked out once.

    @cached_property
    def bucket_rules(self) -> BucketRules:
        """The rules as Hudi reads them (none: sizing proposes them)."""
        rules = tuple(Rule(rule.pattern, rule.buckets) for rule in self.buckets.rules or ())
        return BucketRules(rules, self.buckets.default, REGEX)

    @property
    def key_style(self) -> KeyStyle | None:
        return None if self.table.key_style is None else _KEY_STYLES[self.table.key_style]

    @cached_property
    def sizing_policy(self) -> SizingPolicy | None:
        return None if self.buckets.sizing is None else self.buckets.sizing.policy()

    @property
    def replan_every(self) -> int | None:
        """Seconds: plan a sized table again this often (None: on change only)."""
        sizing = self.buckets.sizing
        return (
            None if sizing is None or sizing.replan_every is None else duration_seconds(sizing.replan_every)
        )

    @cached_property
    def verify_schedule(self) -> Schedule | None:
        """When the layout is checked (None: never)."""
        schedule = None if self.verify is None else self.verify.schedule
        return None if schedule is None else Schedule.parse(schedule)

    @cached_property
    def writer_refs(self) -> WriterRefs:
        """The writers paused around an apply that moves data."""
        writers = self.writers
        workloads = tuple(WorkloadRef(workload.kind, workload.name) for workload in writers.workloads)
        timeout = writers.quiesce_timeout
        return WriterRefs(
            workloads, DEFAULT_QUIESCE_TIMEOUT if timeout is None else duration_seconds(timeout)
        )

    @cached_property
    def window(self) -> Window | None:
        """When an apply that moves data may start (None: whenever approved)."""
        window = self.apply.window
        if window is None:
            return None
        zone = window.time_zone
        text = f"{window.schedule} for {window.duration}" + (f" ({zone})" if zone else "")
        return Window(
            Schedule.parse(window.schedule),
            duration_seconds(window.duration),
            text,
            ZoneInfo(zone) if zone else UTC,
        )

    def job_request(
        self, kind: JobKind, approved_plan: str = "", *, check_records: bool = False
    ) -> PlanRequest | ApplyRequest | VerifyRequest:
        """The request of a ``kind`` job for this table (its report goes where the backend says).

        An apply names the plan it applies: the job refuses any other, so a table that changed since
        the plan was made is never rewritten on a stale approval. ``check_records``: plan and apply read
        every record's key and repair the partitions holding records out of their buckets.
        """
        uri, hash_fields, key_style = self.table.uri, tuple(self.table.hash_fields), self.key_style
        if kind is JobKind.VERIFY:
            return VerifyRequest(table=uri, hash_fields=hash_fields, key_style=key_style)
        buckets, disable = self.buckets, self.metadata_table is MetadataTablePolicy.DISABLE
        rescale = (
            self.bucket_rules,
            buckets.current_buckets,
            buckets.convert,
            disable,
            self.engine,
            self.sizing_policy,
        )
        if kind is JobKind.PLAN:
            options = RescaleOptions(
                *rescale, check_records=check_records, keep_duplicates=buckets.keep_duplicates
            )
            return PlanRequest(table=uri, hash_fields=hash_fields, key_style=key_style, rescale=options)
        if kind is JobKind.APPLY and approved_plan:
            applied = ApplyOptions(
                *rescale,
                check_records=check_records,
                keep_duplicates=buckets.keep_duplicates,
                approved_plan=approved_plan,
            )
            return ApplyRequest(table=uri, hash_fields=hash_fields, key_style=key_style, rescale=applied)
        raise ValueError(
            f"a table runs verify jobs, plan jobs and apply jobs of an approved plan, not {kind} "
            f"{approved_plan!r}"
        )


_KEY_STYLES = {"Hudi1x": KeyStyle.HUDI_1X, "Hudi0x": KeyStyle.HUDI_0X}


def parse_spec(spec: Mapping[str, Any]) -> TableSpec:
    """A TableSpec, or InvalidSpecError listing every problem found (not just the first)."""
    if not isinstance(spec, Mapping):
        raise InvalidSpecError(f"spec must be an object with table and buckets, not {spec!r}")
    try:
        return TableSpec.model_validate(_plain(spec))
    except ValidationError as err:
        raise InvalidSpecError("; ".join(problems(err, TableSpec))) from None


def _plain(value: Any) -> Any:
    """Plain dicts and lists, as the models take them strictly (Kopf hands a spec over as a Mapping),
    as JSON has them: keys are strings, and null fields are left out (the API server prunes them; a
    manifest read from a file means the same)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value

"""The plan rewrites exactly the partitions whose count changes or whose layout is broken, and its id
names what apply would do."""

from __future__ import annotations

import json
import uuid

import pytest
from pydantic import ValidationError

from hudi_bucket.core.buckets import new_bucket_file_id
from hudi_bucket.core.filegroups import BaseFile, FileGroup, FileSlice
from hudi_bucket.core.planning import (
    PLAN_ID_PREFIX,
    ChangeReason,
    PartitionChange,
    PartitionLayout,
    Plan,
    ReportedPlan,
    is_shuffle_free,
    layout_from_file_groups,
    make_plan,
)
from hudi_bucket.core.rules import MAX_BUCKETS, BucketRules, PythonRegexMatcher, Rule
from hudi_bucket.errors import InvalidBucketCountError, InvalidRuleError, NotBucketIndexedError, PlanError

PY = PythonRegexMatcher()
RESCALE, CONVERT, REPAIR = ChangeReason.RESCALE, ChangeReason.CONVERT, ChangeReason.REPAIR


def file_id(bucket: int, n: int = 0) -> str:
    return new_bucket_file_id(bucket, uuid.UUID(int=n))


def laid_out(partition: str, buckets: int | list[int], rows: int = 0, size: int = 0) -> PartitionLayout:
    """A partition holding one file group per bucket (``buckets`` as a count, or as explicit ids)."""
    ids = list(range(buckets)) if isinstance(buckets, int) else buckets
    return PartitionLayout(partition, tuple(file_id(b, n) for n, b in enumerate(ids)), rows, size)


def rules(expressions: str, default: int) -> BucketRules:
    return BucketRules.parse(expressions, default)


def summary(plan: Plan) -> list[tuple[str, int | None, int, ChangeReason]]:
    return [(c.partition, c.old_buckets, c.new_buckets, c.reason) for c in plan.changes]


# --- which partitions change ---------------------------------------------------------------------


def test_hive_style_partitions_matched_by_a_rule_are_rescaled() -> None:
    layouts = [laid_out(f"dt=2025-11-{day}", 8, rows=10, size=100) for day in (10, 11, 12)]
    plan = make_plan(layouts, rules("dt=x,8", 8), rules("dt=2025-11-1[01],64", 8), PY)
    assert summary(plan) == [("dt=2025-11-10", 8, 64, RESCALE), ("dt=2025-11-11", 8, 64, RESCALE)]
    assert plan.changes[0] == PartitionChange("dt=2025-11-10", 8, 64, 8, 10, 100, RESCALE, True)


def test_nested_partitions_take_the_first_matching_rule() -> None:
    layouts = [laid_out(p, 8) for p in ("a=1/b=2", "a=1/b=3", "a=2/b=2", "a=2/b=3")]
    plan = make_plan(layouts, rules("x,1", 8), rules("^a=1/,4;b=2$,2", 8), PY)
    assert summary(plan) == [
        ("a=1/b=2", 8, 4, RESCALE),
        ("a=1/b=3", 8, 4, RESCALE),
        ("a=2/b=2", 8, 2, RESCALE),
    ]


def test_non_hive_style_partitions_are_matched_as_bare_values() -> None:
    layouts = [laid_out("2025-11-11", 8), laid_out("2025-11-12", 8)]
    plan = make_plan(layouts, rules("x,1", 8), rules(r"\d{4}-11-11,32", 8), PY)
    assert summary(plan) == [("2025-11-11", 8, 32, RESCALE)]


def test_a_non_partitioned_table_is_one_partition_named_empty() -> None:
    plan = make_plan([laid_out("", 8)], rules("x,1", 8), rules("x,1", 16), PY)
    assert summary(plan) == [("", 8, 16, RESCALE)]


@pytest.mark.parametrize(
    ("desired", "expected"),
    [
        # the broad rule comes first, so it wins for the 11th too
        ("dt=2025-11-1[01],32;dt=2025-11-11,16", [("dt=2025-11-10", 8, 32), ("dt=2025-11-11", 16, 32)]),
        # the narrow rule comes first: the 11th keeps its 16
        ("dt=2025-11-11,16;dt=2025-11-1[01],32", [("dt=2025-11-10", 8, 32)]),
    ],
)
def test_first_match_wins_decides_which_partitions_change(desired: str, expected: list[tuple]) -> None:
    layouts = [laid_out("dt=2025-11-10", 8), laid_out("dt=2025-11-11", 16)]
    plan = make_plan(layouts, rules("dt=2025-11-11,16", 8), rules(desired, 8), PY)
    assert [(c.partition, c.old_buckets, c.new_buckets) for c in plan.changes] == expected


def test_the_config_in_force_gives_the_old_count() -> None:
    layouts = [laid_out("dt=1", 4), laid_out("dt=2", 8)]
    plan = make_plan(layouts, rules("dt=1,4", 8), rules("dt=2,4", 8), PY)
    assert summary(plan) == [("dt=1", 4, 8, RESCALE), ("dt=2", 8, 4, RESCALE)]


def test_empty_partitions_are_never_rewritten_but_their_rules_still_change_the_config() -> None:
    plan = make_plan([PartitionLayout("dt=1", ())], rules("x,1", 8), rules("dt=1,64", 8), PY)
    assert plan.changes == ()
    assert plan.config_changes
    assert not plan.is_noop


def test_rows_bytes_and_file_groups_are_carried_into_the_change() -> None:
    layout = PartitionLayout("dt=1", (file_id(0), file_id(1)), rows=1234, bytes=5678)
    (change,) = make_plan([layout], rules("x,1", 2), rules("x,1", 4), PY).changes
    assert (change.file_groups, change.rows, change.bytes) == (2, 1234, 5678)


# --- upgrade, convert, repair, noop ----------------------------------------------------------------


def test_upgrading_a_plain_bucket_table_takes_the_old_count_from_current_buckets() -> None:
    layouts = [laid_out("dt=1", 4), laid_out("dt=2", 4)]
    plan = make_plan(layouts, None, rules("dt=1,16", 8), PY, current_buckets=4)
    assert summary(plan) == [("dt=1", 4, 16, RESCALE), ("dt=2", 4, 8, RESCALE)]
    assert plan.config_changes


def test_without_a_config_or_current_buckets_the_old_count_is_the_desired_default() -> None:
    plan = make_plan([laid_out("dt=1", 8), laid_out("dt=2", 8)], None, rules("dt=1,16", 8), PY)
    assert summary(plan) == [("dt=1", 8, 16, RESCALE)]


def test_an_upgrade_that_moves_no_partition_still_writes_the_first_config() -> None:
    plan = make_plan([laid_out("dt=1", 4)], None, rules("nomatch,16", 4), PY, current_buckets=4)
    assert plan.changes == ()
    assert plan.config_changes
    assert not plan.is_noop


def test_convert_rewrites_every_non_empty_partition() -> None:
    plain = [PartitionLayout("dt=1", (str(uuid.UUID(int=1)) + "-0",)), PartitionLayout("dt=2", ())]
    # A random UUID may start with 8 digits: converting rewrites it anyway.
    lucky = PartitionLayout("dt=3", (file_id(0),))
    plan = make_plan([*plain, lucky], None, rules("dt=1,16", 8), PY, convert=True)
    assert summary(plan) == [("dt=1", None, 16, CONVERT), ("dt=3", None, 8, CONVERT)]
    assert not any(c.shuffle_free for c in plan.changes)


def test_file_ids_that_are_not_bucket_ids_need_convert() -> None:
    layouts = [PartitionLayout(f"dt={i}", (f"plain{i}-0",)) for i in range(7)]
    with pytest.raises(NotBucketIndexedError) as error:
        make_plan([*layouts, laid_out("dt=ok", 8)], None, rules("x,1", 8), PY)
    message = str(error.value)
    assert "not bucket-indexed" in message
    assert "'dt=0', 'dt=1', 'dt=2', 'dt=3', 'dt=4' and 2 more" in message
    assert "dt=ok" not in message
    assert "--convert" in message


@pytest.mark.parametrize(
    ("buckets", "why"),
    [([0, 1, 1, 2], "two file groups hold bucket 1"), ([0, 1, 8], "bucket 8 is past N=8")],
)
def test_a_broken_layout_under_an_unchanged_count_is_repaired(buckets: list[int], why: str) -> None:
    plan = make_plan([laid_out("dt=1", buckets), laid_out("dt=2", 8)], rules("x,1", 8), rules("x,1", 8), PY)
    assert summary(plan) == [("dt=1", 8, 8, REPAIR)], why
    assert plan.changes[0].file_groups == len(buckets)
    assert not plan.config_changes
    assert not plan.is_noop


def test_a_broken_layout_with_a_changing_count_is_a_rescale_that_needs_a_shuffle() -> None:
    plan = make_plan([laid_out("dt=1", [0, 0, 1])], rules("x,1", 8), rules("x,1", 16), PY)
    assert summary(plan) == [("dt=1", 8, 16, RESCALE)]
    assert not plan.changes[0].shuffle_free


def test_partitions_whose_records_are_misplaced_are_repaired_with_a_shuffle_apart_from_rescales() -> None:
    layouts = [laid_out("dt=1", 8, rows=3), laid_out("dt=2", 8), laid_out("dt=3", 8)]
    plan = make_plan(layouts, rules("dt=3,8", 8), rules("dt=3,16", 8), PY, misplaced=["dt=1", "dt=3"])
    assert summary(plan) == [("dt=1", 8, 8, REPAIR), ("dt=3", 8, 16, REPAIR)]
    assert not any(c.shuffle_free for c in plan.changes)
    assert [c.partition for c in plan.repairs] == ["dt=1", "dt=3"]
    assert plan.reported().repairs == 2


def test_misplaced_records_change_the_plan_id() -> None:
    layouts = [laid_out("dt=1", 8)]
    clean = make_plan(layouts, rules("x,1", 8), rules("x,1", 8), PY)
    broken = make_plan(layouts, rules("x,1", 8), rules("x,1", 8), PY, misplaced=["dt=1"])
    assert clean.is_noop
    assert not broken.is_noop
    assert broken.plan_id != clean.plan_id


def test_a_converged_table_is_a_noop() -> None:
    layouts = [laid_out("dt=1", 16), laid_out("dt=2", [0, 3, 7]), PartitionLayout("dt=3", ())]
    plan = make_plan(layouts, rules("dt=1,16", 8), rules("dt=1,16", 8), PY)
    assert plan.is_noop
    assert not plan.config_changes


@pytest.mark.parametrize(
    "desired",
    [
        rules("dt=1,16;dt=9,4", 8),  # a rule that matches no existing partition
        rules("dt=1,16", 4),  # a default that moves no partition (dt=1 matches the rule)
        BucketRules((Rule("dt=1", 16),), 8, "REGEX"),  # the rule type, as written
    ],
)
def test_a_config_only_change_rewrites_nothing_but_is_not_a_noop(desired: BucketRules) -> None:
    plan = make_plan([laid_out("dt=1", 16)], rules("dt=1,16", 8), desired, PY)
    assert plan.changes == ()
    assert plan.config_changes
    assert not plan.is_noop


# --- refusals --------------------------------------------------------------------------------------


def test_desired_rules_are_validated_before_anything_else() -> None:
    plain = PartitionLayout("dt=1", ("not-a-bucket-id",))
    with pytest.raises(InvalidRuleError, match="no rules"):
        make_plan([plain], None, BucketRules((), 8), PY)
    with pytest.raises(InvalidRuleError, match="outside"):
        make_plan([plain], None, rules("x,0", 8), PY)


@pytest.mark.parametrize("count", [0, -1, MAX_BUCKETS + 1, True])
def test_current_buckets_must_be_a_sensible_count(count: int) -> None:
    with pytest.raises(InvalidBucketCountError, match="current bucket count"):
        make_plan([laid_out("dt=1", 8)], None, rules("x,1", 8), PY, current_buckets=count)


def test_current_buckets_at_the_limits_are_accepted() -> None:
    for count in (1, MAX_BUCKETS):
        make_plan([laid_out("dt=1", 1)], None, rules("x,1", 8), PY, current_buckets=count)


def test_contradictory_options_are_refused() -> None:
    with pytest.raises(PlanError, match="--convert and --current-buckets") as error:
        make_plan([laid_out("dt=1", 8)], None, rules("x,1", 8), PY, convert=True, current_buckets=8)
    assert "drop --current-buckets" in str(error.value)


@pytest.mark.parametrize("options", [{"convert": True}, {"current_buckets": 4}], ids=["convert", "current"])
def test_onboarding_options_are_ignored_once_a_config_is_in_force(options: dict) -> None:
    """A declared spec keeps them after its first apply: the config in force is the truth from then on."""
    in_force = rules("x,1", 8)
    assert make_plan([laid_out("dt=1", 8)], in_force, in_force, PY, **options).is_noop
    assert (
        make_plan([laid_out("dt=1", 8)], in_force, rules("dt=1,16", 8), PY, **options).changes[0].old_buckets
        == 8
    )


def test_a_partition_listed_twice_is_refused() -> None:
    with pytest.raises(PlanError, match="listed twice"):
        make_plan([laid_out("dt=1", 8), laid_out("dt=1", 8)], None, rules("x,1", 8), PY)


def test_a_config_in_force_this_engine_cannot_evaluate_is_named_as_such() -> None:
    java_only = BucketRules((Rule(r"(?<y>\d{4})", 4),), 8)  # a named group Python's re spells otherwise
    with pytest.raises(InvalidRuleError, match="the bucket config in force: rule 1") as error:
        make_plan([laid_out("2025", 4)], java_only, rules("x,1", 8), PY)
    assert "Java regex" in str(error.value)


# --- shuffle-free rescales -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [(8, 16, True), (16, 8, True), (8, 24, True), (8, 1, True), (8, 12, False), (12, 8, False)],
)
def test_shuffle_free_when_one_count_divides_the_other(old: int, new: int, expected: bool) -> None:
    assert is_shuffle_free(laid_out("p", old), old, new) is expected


@pytest.mark.parametrize(
    "layout",
    [
        laid_out("p", [0, 1, 1]),  # two file groups share a bucket
        laid_out("p", [0, 8]),  # a bucket past the old count
        PartitionLayout("p", ("not-a-bucket-id",)),
    ],
)
def test_a_dirty_layout_is_never_shuffle_free(layout: PartitionLayout) -> None:
    assert not is_shuffle_free(layout, 8, 16)


def test_missing_buckets_do_not_make_a_layout_dirty() -> None:
    assert is_shuffle_free(laid_out("p", [1, 5]), 8, 16)


def test_plans_mark_each_rescale_shuffle_free_or_not() -> None:
    layouts = [laid_out("a", 8), laid_out("b", 8), laid_out("c", [0, 0])]
    plan = make_plan(layouts, rules("x,1", 8), rules("a,16;b,12;c,16", 8), PY)
    assert [(c.partition, c.shuffle_free) for c in plan.changes] == [("a", True), ("b", False), ("c", False)]


# --- the plan id -----------------------------------------------------------------------------------

LAYOUTS = [laid_out("dt=1", 8, rows=5, size=50), laid_out("dt=2", 8), laid_out("dt=3", [0, 0])]
CURRENT, DESIRED = rules("x,1", 8), rules("dt=1,16", 8)


def plan_of(layouts: list[PartitionLayout] = LAYOUTS, **changes: object) -> Plan:
    arguments: dict = {
        "current": CURRENT,
        "desired": DESIRED,
        "base_instant": "20251111093000123",
        "config_version": "20251101000000000",
    }
    arguments.update(changes)
    return make_plan(layouts, arguments.pop("current"), arguments.pop("desired"), PY, **arguments)


def test_the_plan_id_is_a_sha256_digest_stable_across_calls_and_input_order() -> None:
    plan_id = plan_of().plan_id
    assert plan_id.startswith(PLAN_ID_PREFIX)
    assert len(plan_id) == len(PLAN_ID_PREFIX) + 64
    assert plan_of().plan_id == plan_id
    assert plan_of(list(reversed(LAYOUTS))).plan_id == plan_id
    assert plan_of(list(reversed(LAYOUTS))) == plan_of()


@pytest.mark.parametrize(
    "change",
    [
        {"config_version": "20251102000000000"},  # a config written since, even one saying the same
        {"config_version": None},
        {"desired": rules("dt=1,32", 8)},
        {"desired": rules("dt=1,16;nomatch,4", 8)},  # same partition changes, another config
        {"current": rules("y,1", 8)},
    ],
)
def test_the_plan_id_changes_with_the_config_it_replaces_and_the_one_it_writes(change: dict) -> None:
    assert plan_of(**change).plan_id != plan_of().plan_id


@pytest.mark.parametrize("later", ["20251111093000124", "20251112000000000", None])
def test_writers_committing_since_the_plan_do_not_change_its_id(later: str | None) -> None:
    """A table waits for its approval and its window while its writers commit: their commits move the
    latest instant, not what apply does."""
    grown = [PartitionLayout(p.partition, p.file_ids, rows=p.rows + 7, bytes=p.bytes + 700) for p in LAYOUTS]
    again = plan_of(grown, base_instant=later)
    assert again.plan_id == plan_of().plan_id
    assert again.base_instant == later


def test_the_plan_id_changes_when_the_table_layout_changes_what_apply_does() -> None:
    repaired = [laid_out("dt=1", 8), laid_out("dt=2", 8), laid_out("dt=3", [0])]
    assert plan_of(repaired).plan_id != plan_of().plan_id


def test_a_new_partition_to_rewrite_changes_the_plan_id_and_one_left_alone_does_not() -> None:
    rewritten = [*LAYOUTS, laid_out("dt=10", 8)]  # dt=10 matches dt=1: 8 -> 16
    untouched = [*LAYOUTS, laid_out("dt=4", 8)]  # 8 under both configs
    assert plan_of(rewritten).plan_id != plan_of().plan_id
    assert plan_of(untouched).plan_id == plan_of().plan_id


def test_rows_and_bytes_do_not_change_the_plan_id() -> None:
    resized = [PartitionLayout(p.partition, p.file_ids, rows=999, bytes=12345) for p in LAYOUTS]
    assert plan_of(resized).plan_id == plan_of().plan_id


# --- reports ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [
        plan_of(),
        plan_of(current=None),
        make_plan([PartitionLayout("p", ("plain-0",))], None, DESIRED, PY, convert=True),
        Plan(DESIRED, rules(";", 8), ()),  # Hudi accepts an empty rule list in force
    ],
)
def test_reports_round_trip_through_json(plan: Plan) -> None:
    report = json.loads(json.dumps(plan.reported().to_dict()))
    assert ReportedPlan.from_dict(report) == plan.reported()
    assert report["id"] == plan.plan_id
    assert "omittedChanges" not in report  # a whole plan's report is what it always was
    assert report["changes"] == [change.to_dict() for change in plan.changes]


def test_a_report_carries_totals_and_the_config_decision() -> None:
    report = plan_of().reported().to_dict()
    assert (report["partitions"], report["repairs"], report["rows"], report["bytes"]) == (2, 1, 5, 50)
    assert report["desired"] == {"expressions": "dt=1,16", "default": 8, "rule": "regex"}
    assert report["configChanges"] is True
    assert report["noop"] is False
    assert report["changes"][0]["reason"] == "rescale"


def test_a_report_names_the_largest_changes_and_counts_the_rest_with_the_whole_plans_id() -> None:
    layouts = [PartitionLayout(f"dt={i % 3}/h={i:05d}", ("00000000-0000-0000-0000-000000000000-0",),
                               rows=i, bytes=i * 10) for i in range(5000)]  # fmt: skip
    whole = plan_of(layouts, desired=rules("^dt=,16", 8))
    reported = whole.reported(max_changes=100)
    assert (reported.partitions, reported.omitted_changes, len(reported.changes)) == (5000, 4900, 100)
    assert {c.rows for c in reported.changes} == set(range(4900, 5000))
    assert [c.partition for c in reported.changes] == sorted(c.partition for c in reported.changes)
    assert (reported.id, reported.rows, reported.bytes) == (
        whole.plan_id,
        sum(range(5000)),
        10 * sum(range(5000)),
    )
    text = json.dumps(reported.to_dict())
    assert ReportedPlan.from_dict(json.loads(text)) == reported
    assert len(json.dumps(whole.reported().to_dict(), indent=2)) < 400_000  # a ConfigMap holds 1 MiB


def test_a_report_whose_content_does_not_match_its_id_is_refused() -> None:
    report = plan_of().reported().to_dict()
    report["changes"][0]["newBuckets"] = 32
    with pytest.raises(ValidationError, match=r"hashes to .* do not edit plan reports"):
        ReportedPlan.from_dict(report)
    del report["id"]
    with pytest.raises(ValidationError, match="id"):
        ReportedPlan.from_dict(report)


def test_a_report_whose_changes_do_not_add_up_is_refused() -> None:
    report = plan_of().reported().to_dict()
    report["omittedChanges"] = 3
    with pytest.raises(ValidationError, match=r"names 2 change\(s\) and omits 3, but counts 2"):
        ReportedPlan.from_dict(report)


@pytest.mark.parametrize("damage", ["desired", "changes"])
def test_a_malformed_report_is_refused_naming_the_field(damage: str) -> None:
    report = plan_of().reported().to_dict()
    del report[damage]
    with pytest.raises(ValidationError) as refused:
        ReportedPlan.from_dict(report)
    assert [error["loc"] for error in refused.value.errors()] == [(damage,)]


def test_a_report_of_a_plan_made_before_duplicate_keys_config_versions_and_bounds_is_read() -> None:
    report = plan_of().reported().to_dict()
    del report["configVersion"], report["duplicateKeys"]
    for change in report["changes"]:
        del change["duplicateKeys"]
    older = plan_of(config_version=None)
    assert ReportedPlan.from_dict({**report, "id": older.plan_id}) == older.reported()


# --- layouts from file groups ----------------------------------------------------------------------


def group(partition: str, fid: str, *sizes: int) -> FileGroup:
    """A file group with one committed base file per size (the last is the latest); no size, no base."""
    slices = tuple(
        FileSlice(partition, fid, f"2025010100000000{n}", BaseFile(partition, "f", fid, "0-0-0", "t", size))
        for n, size in enumerate(sizes)
    )
    return FileGroup(partition, fid, slices or (FileSlice(partition, fid, "20250101000000000"),))


def test_a_layout_sums_latest_base_file_sizes_and_known_rows() -> None:
    groups = [group("dt=1", file_id(0), 10, 100), group("dt=1", file_id(1), 7), group("dt=1", file_id(2))]
    layout = layout_from_file_groups("dt=1", groups, {file_id(0): 3, file_id(1): 4, "elsewhere": 50})
    assert layout == PartitionLayout("dt=1", (file_id(0), file_id(1), file_id(2)), rows=7, bytes=107)


def test_a_layout_without_row_counts_has_zero_rows() -> None:
    assert layout_from_file_groups("", [group("", file_id(0), 5)]).rows == 0


def test_a_layout_refuses_file_groups_of_another_partition() -> None:
    with pytest.raises(ValueError, match="dt=2"):
        layout_from_file_groups("dt=1", [group("dt=2", file_id(0), 5)])

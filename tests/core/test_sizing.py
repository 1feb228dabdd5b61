"""Sizing: each partition's bucket count from a target file size, and the rules that carry the counts."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hudi_bucket.core.filegroups import BaseFile, FileGroup, FileSlice, LogFile
from hudi_bucket.core.rules import (
    MAX_PATTERN_LENGTH,
    BucketRules,
    PythonRegexMatcher,
    Rule,
    portability_problem,
)
from hudi_bucket.core.sizing import (
    PartitionSize,
    SizingPolicy,
    Verdict,
    choose_all,
    choose_buckets,
    exact_pattern,
    fewer_counts,
    measure,
    rules_for,
    size_table,
)
from hudi_bucket.errors import SizingError

MiB = 1 << 20
TARGET = 128 * MiB
POLICY = SizingPolicy(TARGET)
PY = PythonRegexMatcher()
NO_RULES = BucketRules((Rule("^never$", 2),), 4)

# Partition paths with the characters that mean something to Hudi or to a regex engine, and some that
# do not mean anything to anyone.
PATH_CHARS = st.sampled_from([*"abcdz012349=/-_.,;:()[]{}|^$*+?\\ &#~'\"", "é", "日", "\t"])
PATHS = st.text(PATH_CHARS, min_size=1, max_size=24)
policies = st.builds(
    SizingPolicy,
    target_file_size=st.integers(1, 1 << 34),
    min_buckets=st.integers(1, 8),
    max_buckets=st.integers(8, 4096),
    tolerance=st.floats(1.1, 8),
)


def days(*numbers: int) -> list[str]:
    return [f"day=2025-11-{n:02d}" for n in numbers]


# --- one partition's count ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "current", "expected"),
    [
        (4 * TARGET, 4, (4, Verdict.KEEP)),  # exactly on target
        (7 * TARGET, 4, (4, Verdict.KEEP)),  # files of 1.75x target: within the default factor of 2
        (40 * TARGET, 4, (40, Verdict.RESIZE)),  # 10x: the ideal count is a multiple, so no shuffle
        (33 * TARGET, 4, (32, Verdict.RESIZE)),  # a multiple of 4 near 33 rather than 33 itself
        (TARGET // 2, 16, (1, Verdict.RESIZE)),  # files of 1/32 target: merge everything
        (3 * TARGET, 16, (4, Verdict.RESIZE)),  # a divisor of 16 rather than the ideal 3
        (TARGET // 100, 1, (1, Verdict.KEEP)),  # tiny, but no count can make its file bigger
        (50 * TARGET, None, (50, Verdict.RESIZE)),  # not bucketed yet: the ideal count
    ],
)
def test_a_partitions_count(size: int, current: int | None, expected: tuple[int, Verdict]) -> None:
    assert choose_buckets(size, current, POLICY) == expected


def test_bounds_win_over_the_target() -> None:
    bounded = SizingPolicy(TARGET, min_buckets=2, max_buckets=64)
    assert choose_buckets(1000 * TARGET, 16, bounded) == (64, Verdict.RESIZE)
    assert choose_buckets(1000 * TARGET, 64, bounded) == (64, Verdict.KEEP)  # the best the bounds allow
    assert choose_buckets(TARGET // 10, 1, bounded) == (2, Verdict.RESIZE)  # 1 is below min


@settings(max_examples=300)
@given(policy=policies, size=st.integers(0, 1 << 44), current=st.none() | st.integers(1, 5000))
def test_a_resized_partition_is_kept_by_the_next_plan(
    policy: SizingPolicy, size: int, current: int | None
) -> None:
    """No flapping: whatever count sizing picks, the same bytes at that count are left alone."""
    new, verdict = choose_buckets(size, current, policy)
    assert policy.min_buckets <= new <= policy.max_buckets
    if verdict is Verdict.KEEP:
        assert new == current
    else:
        assert new != current
        assert new == policy.ideal(size) or policy.fits(size, new, policy.tolerance)
    assert choose_buckets(size, new, policy) == (new, Verdict.KEEP)


@settings(max_examples=300)
@given(size=st.integers(1, 1 << 42), current=st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256]))
def test_a_power_of_two_grows_shuffle_free(size: int, current: int) -> None:
    """From a power of two, growing always finds a multiple within the square root of the tolerance."""
    new, verdict = choose_buckets(size, current, POLICY)
    if verdict is Verdict.RESIZE and new > current:
        assert new % current == 0


def test_measure_counts_the_latest_slice_and_its_logs() -> None:
    def base(file_id: str, instant: str, size: int) -> BaseFile:
        return BaseFile("p", f"{file_id}_0-1-0_{instant}.parquet", file_id, "0-1-0", instant, size)

    old = FileSlice("p", "a", "001", base("a", "001", 999))
    new = FileSlice(
        "p", "a", "002", base("a", "002", 100), (LogFile("p", ".a_002.log.1", "a", "002", 1, 30),)
    )
    other = FileSlice("p", "b", "002", base("b", "002", 50))
    size = measure("p", 2, [FileGroup("p", "a", (old, new)), FileGroup("p", "b", (other,))])
    assert size == PartitionSize("p", 2, 180, (50, 100))
    assert (size.smallest_file, size.largest_file) == (50, 100)


def test_policy_problems_are_named_together() -> None:
    with pytest.raises(SizingError) as raised:
        SizingPolicy(0, min_buckets=10, max_buckets=5, tolerance=1.0, partitions="(?P<x>a)").validate(PY)
    message = str(raised.value)
    for words in (
        "target file size 0",
        "min buckets 10 is above max buckets 5",
        "tolerance 1.0",
        "partitions",
    ):
        assert words in message


# --- the rules --------------------------------------------------------------------------------------


def test_one_rule_per_count_with_shared_prefixes_written_once() -> None:
    rules = rules_for(
        dict.fromkeys(days(1, 2, 13), 32) | dict.fromkeys(days(11), 64) | {"day=2025-12-01": 4}, 4
    )
    assert rules == (
        Rule(r"^day=2025-11-(?:0[12]|13)$", 32),
        Rule(r"^day=2025-11-11$", 64),
    )


def test_a_long_list_is_split_into_patterns_that_fit() -> None:
    paths = [
        f"day={year}-{month:02d}-{day:02d}"
        for year in (2024, 2025)
        for month in range(1, 13)
        for day in range(1, 29)
    ]
    rules = rules_for(dict.fromkeys(paths, 8), 4)
    assert len(rules) > 1
    assert all(len(r.pattern) <= MAX_PATTERN_LENGTH for r in rules)
    assert all(sum(PY.find(r.pattern, p) for r in rules) == 1 for p in paths)


def test_too_many_rules_is_refused_with_what_to_do() -> None:
    counts = {f"day={n}": n + 2 for n in range(20)}
    with pytest.raises(SizingError, match=r"needs 20 rules .* only 5 fit") as raised:
        rules_for(counts, 1, budget=5)
    assert "sizing.partitions" in raised.value.hint


def test_a_path_longer_than_a_pattern_is_refused() -> None:
    with pytest.raises(SizingError, match="too long"):
        rules_for({"x" * 600: 8}, 4)


@settings(max_examples=300)
@given(st.lists(PATHS, min_size=1, max_size=30, unique=True), st.lists(PATHS, max_size=10))
def test_an_exact_pattern_matches_its_paths_and_nothing_else(paths: list[str], others: list[str]) -> None:
    pattern = exact_pattern(sorted(paths))
    assert portability_problem(pattern) is None
    assert "," not in pattern
    assert ";" not in pattern
    for path in paths:
        assert PY.find(pattern, path)
    for other in others:
        assert PY.find(pattern, other) == (other in paths)
        # Nor anything that merely contains or is contained in one of them.
        assert not PY.find(pattern, other + paths[0] + "x")


@settings(max_examples=200, deadline=None)
@given(
    counts=st.dictionaries(PATHS, st.integers(1, 6), min_size=1, max_size=40),
    others=st.lists(PATHS, max_size=10),
    max_length=st.integers(40, 200),
)
def test_sizing_rules_route_every_sized_partition_and_no_other(
    counts: dict[str, int], others: list[str], max_length: int
) -> None:
    assume(all(len(exact_pattern([p])) <= max_length for p in counts))
    explicit = BucketRules((Rule("^z", 99),), 3)
    rules = BucketRules((*explicit.rules, *rules_for(counts, 3, max_length=max_length)), 3)
    rules.validate(PY)
    assert all(len(r.pattern) <= max_length for r in rules.rules[1:])
    for path, count in counts.items():
        expected = 99 if path.startswith("z") else count
        assert rules.buckets_for(path, PY) == expected
    for path in others:
        if path not in counts:
            assert rules.buckets_for(path, PY) == explicit.buckets_for(path, PY)


# --- the table ----------------------------------------------------------------------------------------


def sized(partition: str, buckets: int | None, size: int) -> PartitionSize:
    return PartitionSize(partition, buckets, size, (size // (buckets or 1),) * (buckets or 1))


def test_size_table_leaves_explicit_rules_and_out_of_scope_partitions_alone() -> None:
    explicit = BucketRules((Rule("-11-11$", 256),), 4)
    sizes = [
        sized("day=2025-11-11", 4, 1000 * TARGET),  # an explicit rule's: not sized
        sized("day=2025-11-10", 4, 40 * TARGET),  # resized to 40
        sized("day=2025-11-09", 4, 5 * TARGET),  # within tolerance, at the default: no rule needed
        sized("day=2025-11-08", 16, 20 * TARGET),  # within tolerance at 16: kept, so pinned by a rule
        sized("day=2025-11-07", 4, TARGET // 8),  # shrunk to 1
        PartitionSize("day=2025-11-06", 4, 0),  # empty: the default, like a new partition
        sized("hour=2025-11-11T01", 4, 40 * TARGET),  # outside `partitions`
    ]
    sizing = size_table(sizes, explicit, SizingPolicy(TARGET, partitions="^day="), PY)
    assert [(c.partition, c.new_buckets, c.verdict) for c in sizing.choices] == [
        ("day=2025-11-07", 1, Verdict.RESIZE),
        ("day=2025-11-08", 16, Verdict.KEEP),
        ("day=2025-11-09", 4, Verdict.KEEP),
        ("day=2025-11-10", 40, Verdict.RESIZE),
    ]
    assert sizing.desired.rules == (
        Rule("-11-11$", 256),
        Rule("^day=2025-11-07$", 1),
        Rule("^day=2025-11-08$", 16),
        Rule("^day=2025-11-10$", 40),
    )
    assert sizing.desired.default == 4
    assert sizing.reported().shuffle_free == 2
    for size in sizes:
        expected = {"day=2025-11-07": 1, "day=2025-11-08": 16, "day=2025-11-10": 40, "day=2025-11-11": 256}
        assert sizing.desired.buckets_for(size.partition, PY) == expected.get(size.partition, 4)


def test_sizing_rules_count_against_the_rule_limit_with_the_explicit_ones() -> None:
    explicit = BucketRules(tuple(Rule(f"^x{i}$", 2) for i in range(99)), 4)
    sizes = [sized(f"a{i}", 4, (i + 1) * 100 * TARGET) for i in range(2)]
    with pytest.raises(SizingError, match="only 1 fit"):
        size_table(sizes, explicit, SizingPolicy(TARGET, tolerance=1.1), PY)


def test_a_second_sizing_of_the_result_changes_nothing() -> None:
    explicit = BucketRules((Rule("^never$", 2),), 4)
    sizes = [sized(f"day={n:03d}", 4, n * n * TARGET // 7) for n in range(1, 60)]
    first = size_table(sizes, explicit, POLICY, PY)
    after = [sized(c.partition, c.new_buckets, c.bytes) for c in first.choices]
    second = size_table(after, first.desired, POLICY, PY)
    assert not second.resized
    # The first sizing's rules come back: the explicit rules plus one per count (the second run sees the
    # first's rules as explicit, so it sizes nothing and proposes the same rules).
    again = size_table(after, explicit, POLICY, PY)
    assert again.desired == first.desired


def test_too_many_counts_share_counts_rather_than_fail() -> None:
    # 300 days growing 1% a day from 100 times the target: one count each (the multiple of 4 nearest the
    # target) would need far more than 100 rules. Shared counts need few, and each day's files still
    # land near the target.
    explicit = BucketRules((Rule("^never$", 2),), 4)
    sizes = [sized(f"day={n:03d}", 4, int(TARGET * 100 * 1.01**n)) for n in range(300)]
    one_each = {choose_buckets(s.bytes, 4, POLICY)[0] for s in sizes}
    assert len(one_each) > 100

    sizing = size_table(sizes, explicit, POLICY, PY)

    assert len(sizing.desired.rules) <= 100
    print(f"{len(one_each)} counts shared as {len({c.new_buckets for c in sizing.choices})}")
    for choice in sizing.choices:
        assert choose_buckets(choice.bytes, choice.new_buckets, POLICY) == (choice.new_buckets, Verdict.KEEP)
        assert sizing.desired.buckets_for(choice.partition, PY) == choice.new_buckets
    assert sizing.reported().shuffle_free == len(sizing.resized)  # from 4, multiples and divisors suffice


@settings(max_examples=200, deadline=None)
@given(
    policy=policies,
    table=st.lists(st.tuples(st.integers(0, 1 << 44), st.integers(1, 300)), min_size=1, max_size=60),
)
def test_shared_counts_are_kept_by_the_next_plan(policy: SizingPolicy, table: list[tuple[int, int]]) -> None:
    choices = choose_all(
        [sized(f"p{i}", current, size) for i, (size, current) in enumerate(table)], NO_RULES, policy, PY
    )
    shared = fewer_counts(choices, policy, NO_RULES.default)
    for before, after in zip(choices, shared, strict=True):
        if before.verdict is Verdict.KEEP:
            assert after == before  # a kept partition is never rewritten to save a rule
        assert choose_buckets(after.bytes, after.new_buckets, policy) == (after.new_buckets, Verdict.KEEP)


def test_sizing_alone_writes_a_rule_that_changes_nothing_when_it_needs_none() -> None:
    # Hudi needs one rule at least: with no explicit rules and every partition at the default, sizing
    # writes one that gives the default, which changes nothing whatever it matches.
    sizing = size_table([sized("day=1", 4, 4 * TARGET)], BucketRules((), 4), POLICY, PY)
    assert sizing.desired == BucketRules((Rule("^$", 4),), 4)
    sizing.desired.validate(PY)
    resized = size_table([sized("day=1", 4, 40 * TARGET)], BucketRules((), 4), POLICY, PY)
    assert resized.desired == BucketRules((Rule("^day=1$", 40),), 4)

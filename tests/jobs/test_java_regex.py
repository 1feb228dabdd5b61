"""java.util.regex evaluates rules as Hudi's writers do, and Python's stand-in agrees where it accepts."""

from __future__ import annotations

import itertools
import re
import time
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_bucket.core.rules import (
    ADVERSARIAL_PATH_LENGTH,
    MAX_UNBOUNDED_REPETITIONS,
    BucketRules,
    PythonRegexMatcher,
    Rule,
    adversarial_paths,
    complexity_problem,
    portability_problem,
)
from hudi_bucket.core.sizing import exact_pattern
from hudi_bucket.errors import InvalidRuleError
from hudi_bucket.spark.java_regex import MAX_FIND_STEPS, MAX_GENERATED_PATH_STEPS, JavaRegexMatcher

pytestmark = pytest.mark.spark

# What a partition path may hold that means something to Hudi or to a regex engine.
SIZING_PATH_CHARS = st.sampled_from([*"abcz01239=/-_.,;:()[]{}|^$*+?\\ &#~'", "é", "日", "\t", "😀"])

PATHS = [
    "dt=2025-11-11",
    "dt=2025-06-17",
    "dt=2024-01-01",
    "a=1/b=2",
    "a=10/b=2/c=x",
    "2025-11-11",
    "2025/11/11",
    "region=EU/dt=2025-11-11",
    "",
]
TYPICAL_PATTERNS = [
    r"dt=2025-11-1[01]",
    r"\d{4}-(06-(01|17|18)|11-(01|10|11))",
    r"^2025",
    r"11$",
    r"^a=1/",
    r"b=\d+",
    r"(?i)REGION=eu",
    r"[^/]+/dt=2025",
    r"2025(?=-11)",
    r"(?<=dt=)2024",
    r"a=1\b",
    r"\w+=\w+/\w",
    r"x*",
    r"2025/1[0-2]/\d\d",
    r"dt=2025-(0[1-9]|1[0-2])-\d{2}",
]


@pytest.fixture(scope="module")
def java(jvm: object) -> JavaRegexMatcher:
    return JavaRegexMatcher(jvm)


@pytest.mark.parametrize("pattern", TYPICAL_PATTERNS)
def test_python_and_java_agree_on_typical_patterns(java: JavaRegexMatcher, pattern: str) -> None:
    python = PythonRegexMatcher()
    for path in PATHS:
        assert python.find(pattern, path) == java.find(pattern, path), path


def test_java_rules_route_partitions_like_hudi(java: JavaRegexMatcher) -> None:
    rules = BucketRules.parse(r"dt=2025-11-1[01],64;2025-11,32;b=2,16", 8)
    rules.validate(java)
    assert [rules.buckets_for(path, java) for path in PATHS[:6]] == [64, 8, 8, 16, 16, 32]


# Each of these means something else to Python's re than to java.util.regex: (pattern, text, Java's answer).
DIFFERENCES = [
    (r"[[:alpha:]]", "dt=a", True),  # Java: a union of ':', 'a', 'l', 'p', 'h'; Python: '[' class then ']'
    (r"[a[b]]", "b", True),  # Java: nested class; Python: class [a[b] followed by a literal ']'
    (r"dt\Z", "dt\n", True),  # Java: before a final line terminator too; Python: only at the end
    (r"\v", "\n", True),  # Java: any vertical whitespace; Python: only \x0b
    (r"\101", "A", False),  # Java: back-reference to group 1; Python: octal 'A'
    (r"dt={x}", "dt={x}", None),  # None: Java rejects it; Python reads the braces as literals
    (r"a{,3}", "a", None),  # Java rejects it; Python reads {0,3}
    (r"(?#note)a", "a", None),  # Java rejects it; Python skips a comment
    (r"(?x)[a b]", " ", False),  # Java's comments mode drops blanks inside classes; Python keeps them
]


def _java_answer(java: JavaRegexMatcher, pattern: str, text: str) -> bool | None:
    try:
        return java.find(pattern, text)
    except InvalidRuleError:
        return None


def _python_answer(pattern: str, text: str) -> bool:
    return re.compile(pattern, re.ASCII).search(text) is not None


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
@pytest.mark.parametrize(("pattern", "text", "java_answer"), DIFFERENCES)
def test_listed_differences_really_differ_and_python_refuses_them(
    java: JavaRegexMatcher, pattern: str, text: str, java_answer: bool | None
) -> None:
    assert _java_answer(java, pattern, text) == java_answer
    assert _python_answer(pattern, text) != java_answer
    assert portability_problem(pattern) is not None
    with pytest.raises(InvalidRuleError, match="may not mean the same in Java"):
        PythonRegexMatcher().compile(pattern)


@pytest.mark.parametrize("pattern", [r"\p{Alpha}", r"\Qa.b\E", r"(?<y>\d{4})", r"\h"])
def test_java_only_constructs_work_in_java_and_python_refuses_them(
    java: JavaRegexMatcher, pattern: str
) -> None:
    java.compile(pattern)
    with pytest.raises(InvalidRuleError, match="may not mean the same in Java"):
        PythonRegexMatcher().compile(pattern)


def test_java_syntax_errors_become_rule_errors_naming_the_rule(java: JavaRegexMatcher) -> None:
    rules = BucketRules((Rule("ok", 1), Rule("dt=(2025", 4)), 8)
    with pytest.raises(
        InvalidRuleError, match=r"rule 2 \('dt=\(2025' -> 4\): pattern .* does not compile in Java"
    ):
        rules.validate(java)
    with pytest.raises(InvalidRuleError, match=r"rule 2 \('dt=\(2025' -> 4\).*near index"):
        rules.buckets_for("x", java)


def test_compiled_patterns_are_reused(java: JavaRegexMatcher) -> None:
    java.compile("reuse-me")
    first = java._compiled["reuse-me"]
    assert java.find("reuse-me", "xreuse-mex")
    assert java._compiled["reuse-me"] is first


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(SIZING_PATH_CHARS, min_size=1, max_size=16), min_size=1, max_size=12, unique=True),
    st.lists(st.text(SIZING_PATH_CHARS, max_size=16), max_size=6),
)
def test_java_reads_sizing_patterns_literally(
    java: JavaRegexMatcher, paths: list[str], others: list[str]
) -> None:
    """The JVM is the oracle: sizing's exact patterns match exactly their paths in Java too."""
    pattern = exact_pattern(sorted(paths))
    java.compile(pattern)
    for path in [*paths, *others, paths[0] + "x", "x" + paths[0]]:
        assert java.find(pattern, path) == (path in paths), path


# --- a bound on the work of evaluating a pattern -------------------------------------------------------

# Accepted by the syntax check (no repeated group), yet java.util.regex tries 2**40 ways on 40 a's.
EXPONENTIAL = "a?" * 40 + "a" * 40


def test_a_pattern_that_backtracks_exponentially_is_stopped_naming_it_and_the_partition(
    java: JavaRegexMatcher,
) -> None:
    assert complexity_problem(EXPONENTIAL) is None
    rules = BucketRules((Rule("^b", 2), Rule(EXPONENTIAL, 4)), 8)
    rules.validate(java)
    started = time.monotonic()
    with pytest.raises(InvalidRuleError) as caught:
        rules.buckets_for("a" * 40, java)
    assert time.monotonic() - started < 30
    message = str(caught.value)
    assert message.startswith(f"rule 2 ({EXPONENTIAL!r} -> 4): pattern {EXPONENTIAL!r} takes more than ")
    assert f"{MAX_FIND_STEPS:,} steps on partition {'a' * 40!r}: Hudi's writers would hang on it" in message
    assert rules.buckets_for("b" + "a" * 40, java) == 2  # the rule before it matches: never evaluated
    assert rules.buckets_for("x" * 40, java) == 8  # a path it matches in no way or one is no trouble


def test_the_bounded_find_is_used_and_answers_as_javas_find(java: JavaRegexMatcher) -> None:
    assert java._bounded_find is not None  # the tests' session loads our JVM classes
    for pattern in TYPICAL_PATTERNS:
        compiled = java._pattern(pattern)
        for path in PATHS:
            assert java.find(pattern, path) == compiled.matcher(path).find(), (pattern, path)


def test_without_our_jvm_classes_find_is_javas_own_unbounded(jvm: Any) -> None:
    # Our jar is optional (HBO_JVM_JAR): a JVM without it has no io.hudibucket package.
    bare = JavaRegexMatcher(SimpleNamespace(java=jvm.java, io=jvm.hbo_no_such_package))
    assert bare._bounded_find is None
    python = PythonRegexMatcher()
    for pattern in TYPICAL_PATTERNS:
        for path in PATHS:
            assert bare.find(pattern, path) == python.find(pattern, path), (pattern, path)
    bare.compile(OVER_BUDGET[0])  # no bound to evaluate generated paths with: the static check alone


def test_a_pattern_the_syntax_check_refuses_never_reaches_java(java: JavaRegexMatcher) -> None:
    rules = BucketRules((Rule("((.|.)|(.|.))*x", 4),), 8)
    with pytest.raises(InvalidRuleError, match="a repeated group holds a repetition or an alternation"):
        rules.validate(java)
    assert "((.|.)|(.|.))*x" not in java._compiled


def test_a_pattern_too_deep_for_javas_compiler_is_a_rule_error(java: JavaRegexMatcher) -> None:
    # Java 9+ reports its stack overflow as a syntax error; Java 8 throws StackOverflowError (below).
    with pytest.raises(InvalidRuleError, match="does not compile in Java"):
        java.compile("(" * 5000 + ")" * 5000)


def test_any_other_error_java_throws_while_compiling_is_a_rule_error(jvm: Any) -> None:
    # Stands in for Java 8's StackOverflowError: a Java error PySpark does not translate, from a real JVM.
    regex = SimpleNamespace(Pattern=SimpleNamespace(compile=jvm.java.lang.Class.forName))
    failing = JavaRegexMatcher(SimpleNamespace(java=SimpleNamespace(util=SimpleNamespace(regex=regex))))
    with pytest.raises(
        InvalidRuleError,
        match=r"pattern 'no\.such\.Pattern' does not compile in Java: java\.lang\.ClassNotFoundException",
    ):
        failing.compile("no.such.Pattern")


# --- a step budget on generated paths, for what Hudi's writers evaluate with no bound ------------------

# The slowest shapes the static check admits (as in tests/core/test_rules.py): two unbounded repetitions
# over the same characters before an end the generated paths never have. Measured at most 8.62 million
# reads of one path ([^/]*[^/]*X$ on 'X' * 255 + '~'), about half the budget.
SLOW_REPEATS = [".*", ".+?", "[^/]*", r"\w+", "(?:ab)*"]
WORST_ADMITTED = [
    f"{first}{between}{second}{end}"
    for first, second in itertools.combinations_with_replacement(SLOW_REPEATS, MAX_UNBOUNDED_REPETITIONS)
    for between in ("", "(?:a|b)")
    for end in ("X$", "(?!.)X")
]
# Admitted by the static check, which counts no bounded part, yet over the budget on a generated path.
OVER_BUDGET = [
    "a?" * 20 + "a" * 20 + "X",  # 2**20 ways at every start of a run of a's
    r".*\d?\d?\d?.*X",  # three optional digits between two .* on a run of digits: 67 million reads
]


def test_the_slowest_admitted_shapes_stay_within_the_step_budget_on_every_generated_path(
    java: JavaRegexMatcher,
) -> None:
    for pattern in WORST_ADMITTED:
        assert complexity_problem(pattern) is None
        compiled = java._pattern(pattern)
        for path in adversarial_paths(pattern):
            assert java._bounded_find(compiled, path, MAX_GENERATED_PATH_STEPS) == 0, (pattern, path)


def test_one_unbounded_repetition_more_than_the_cap_would_break_the_budget(java: JavaRegexMatcher) -> None:
    # Why the cap is 2: three .* on a generated path read it some 550 million times.
    pattern = ".*" * (MAX_UNBOUNDED_REPETITIONS + 1) + "X"
    assert complexity_problem(pattern) is not None
    path = adversarial_paths(pattern)[1]
    assert path == "a" * (ADVERSARIAL_PATH_LENGTH - 1) + "~"
    assert java._bounded_find(java._pattern(pattern), path, MAX_GENERATED_PATH_STEPS) == -1


@pytest.mark.parametrize("pattern", OVER_BUDGET, ids=["optional-run", "optional-between-repetitions"])
def test_a_pattern_over_the_step_budget_is_refused_naming_the_budget(
    java: JavaRegexMatcher, pattern: str
) -> None:
    assert complexity_problem(pattern) is None
    rules = BucketRules((Rule("^b", 2), Rule(pattern, 4)), 8)
    with pytest.raises(InvalidRuleError) as caught:
        rules.validate(java)
    message = str(caught.value)
    assert (
        f"rule 2 ({pattern!r} -> 4): pattern {pattern!r} takes more than {MAX_GENERATED_PATH_STEPS:,} steps "
        f"on a generated path of {ADVERSARIAL_PATH_LENGTH} characters ("
    ) in message
    assert (
        "Hudi's writers, which evaluate it with no bound on every new partition, would hang on such a path; "
        "write it so that a path can match it in one way only"
    ) in message
    assert "rule 1" not in message
    # Reading a table whose rules hold it is another matter: find() evaluates today's partitions.
    assert rules.buckets_for("dt=2025-11-11", java) == 8


def test_the_issues_pattern_is_refused_before_java_evaluates_it(java: JavaRegexMatcher) -> None:
    # Before: 650 million reads (3.7 s) of a 14-character path; on 256 characters, beyond any wait.
    pattern = ".*" * 16 + "X"
    with pytest.raises(InvalidRuleError, match="more than 2 unbounded repetitions"):
        BucketRules((Rule(pattern, 4),), 8).validate(java)
    assert pattern not in java._compiled


def test_realistic_rules_pass_the_budget_at_little_cost(java: JavaRegexMatcher) -> None:
    patterns = [*TYPICAL_PATTERNS, r"^dt=.*-11-11$", r".*/day=2025-.*", r"[^/]+/day=\d+"]
    fresh = JavaRegexMatcher(java._jvm)
    started = time.monotonic()
    for pattern in patterns:
        fresh.compile(pattern)
    assert time.monotonic() - started < 0.5 * len(patterns)  # measured: some 10 ms each
    assert fresh._within_budget == set(patterns)

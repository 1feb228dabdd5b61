"""Bucket rules parse, fail and evaluate exactly as Hudi 1.1's RegexRuleEngine does."""

from __future__ import annotations

import contextlib
import itertools
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_bucket.core.rules import (
    ADVERSARIAL_PATH_LENGTH,
    MAX_BUCKETS,
    MAX_GROUP_DEPTH,
    MAX_PATTERN_LENGTH,
    MAX_UNBOUNDED_REPETITIONS,
    BucketRules,
    Matcher,
    PythonRegexMatcher,
    Rule,
    adversarial_paths,
    complexity_problem,
    portability_problem,
)
from hudi_bucket.core.sizing import rules_for
from hudi_bucket.errors import InvalidBucketCountError, InvalidRuleError

PY = PythonRegexMatcher()


@pytest.mark.parametrize(
    "expressions",
    [
        "dt=2025-11-1[01],64",
        r"\d{4}-(06-(01|17|18)|11-(01|10|11)),256;^a=1/b=2$,4;.*,1",
        r"dt=(2021\-01\-07|2021\-01\-08),2",
    ],
)
def test_canonical_expressions_round_trip(expressions: str) -> None:
    rules = BucketRules.parse(expressions, 8)
    assert rules.render() == expressions
    assert BucketRules.parse(rules.render(), 8) == rules


def test_parse_gives_rules_in_order_with_default_and_type() -> None:
    assert BucketRules.parse("a,2;b,3", 8, "regex") == BucketRules((Rule("a", 2), Rule("b", 3)), 8, "regex")


@pytest.mark.parametrize(
    ("expressions", "rules"),
    [
        ("a,1;", (Rule("a", 1),)),  # Java's split drops trailing empty segments...
        ("a,1;;;", (Rule("a", 1),)),
        (";", ()),  # ...so a lone ';' is an empty rule list, which Hudi's engine accepts
        (" a , 1 ", (Rule("a", 1),)),  # the rule and each part are trimmed
        ("a,1,", (Rule("a", 1),)),  # trailing empty parts vanish on ',' too
        ("a,1,,", (Rule("a", 1),)),
        (",1", (Rule("", 1),)),  # an empty pattern is accepted (it matches everything)
        ("a,+5", (Rule("a", 5),)),  # Integer.parseInt takes a sign...
        ("a,-1", (Rule("a", -1),)),
        ("a,05", (Rule("a", 5),)),
        ("a,\u0663", (Rule("a", 3),)),  # ...and any Unicode decimal digit
        ("\ta,1\x00;\x1fb,2", (Rule("a", 1), Rule("b", 2))),  # String.trim strips every char <= U+0020
        ("\u00a0a,1", (Rule("\u00a0a", 1),)),  # but not Unicode spaces
    ],
)
def test_parse_accepts_what_hudi_accepts(expressions: str, rules: tuple[Rule, ...]) -> None:
    assert BucketRules.parse(expressions, 8).rules == rules


@pytest.mark.parametrize(
    ("expressions", "message"),
    [
        ("", "rule 1 ''"),  # no separator: the whole (empty) text is one rule
        (";a,1", "rule 1 ''"),  # leading empty segments stay
        ("a,1;;b,2", "rule 2 ''"),
        ("a,1; ", "rule 2 ' '"),  # a blank segment is not trailing-empty before trimming
        ("a", "rule 1 'a'"),
        ("a,b,1", "rule 1 'a,b,1'"),
        ("a,,1", "rule 1 'a,,1'"),
        ("a,x", "bucket count 'x' is not an integer"),
        ("a,1_0", "bucket count '1_0'"),
        ("a,0x10", "bucket count '0x10'"),
        ("a,2147483648", "bucket count '2147483648'"),
        ("a,", "rule 1 'a,'"),
    ],
)
def test_parse_fails_where_hudi_fails(expressions: str, message: str) -> None:
    with pytest.raises(InvalidRuleError, match=message.replace("(", r"\(")):
        BucketRules.parse(expressions, 8)


@pytest.mark.parametrize("rule_type", ["regex", "REGEX", "Regex"])
def test_rule_type_is_read_case_insensitively_and_kept(rule_type: str) -> None:
    assert BucketRules.parse("a,1", 8, rule_type).rule_type == rule_type


def test_unknown_rule_type_is_refused() -> None:
    with pytest.raises(InvalidRuleError, match="unknown rule type 'glob'"):
        BucketRules.parse("a,1", 8, "glob")
    with pytest.raises(InvalidRuleError, match="unknown rule type 'glob'"):
        BucketRules((Rule("a", 1),), 8, "glob").validate(PY)


def test_valid_rules_pass_validation() -> None:
    BucketRules.parse(r"dt=2025-11-1[01],64;^a=1/,4;\d{4}-06,1", 8).validate(PY)
    BucketRules((Rule("x", MAX_BUCKETS),), 1).validate(PY)


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        (Rule("a,b", 2), "holds ','"),
        (Rule("a;b", 2), "holds ';'"),
        (Rule("", 2), "pattern is empty"),
        (Rule(" a", 2), "whitespace"),
        (Rule("a\t", 2), "whitespace"),
        (Rule("a", 0), "bucket count 0 is outside 1..100000"),
        (Rule("a", -1), "bucket count -1 is outside"),
        (Rule("a", MAX_BUCKETS + 1), "outside 1..100000"),
        (Rule("a", True), "bucket count True is not an integer"),
        (Rule("a", "4"), "bucket count '4' is not an integer"),  # type: ignore[arg-type]
        (Rule("dt=(2025", 2), "does not compile"),
        (Rule("[[:alpha:]]", 2), "may not mean the same in Java"),
    ],
)
def test_validation_names_the_rule_and_says_why(rule: Rule, reason: str) -> None:
    rules = BucketRules((Rule("ok", 1), rule), 8)
    with pytest.raises(InvalidRuleError) as caught:
        rules.validate(PY)
    message = str(caught.value)
    assert f"rule 2 ({rule.pattern!r} -> {rule.buckets!r})" in message
    assert reason in message
    assert "rule 1" not in message


def test_validation_lists_every_bad_rule() -> None:
    rules = BucketRules((Rule("a", 0), Rule("ok", 1), Rule("(", 2)), 8)
    with pytest.raises(InvalidRuleError, match=r"rule 1 .*outside.*rule 3 .*does not compile"):
        rules.validate(PY)


@pytest.mark.parametrize("default", [0, -4, MAX_BUCKETS + 1, True])
def test_default_bucket_number_must_be_in_range(default: int) -> None:
    with pytest.raises(InvalidBucketCountError, match="default bucket number"):
        BucketRules((Rule("a", 1),), default).validate(PY)


def test_empty_rule_list_is_refused() -> None:
    with pytest.raises(InvalidRuleError, match="no rules"):
        BucketRules.parse(";", 8).validate(PY)


RULES = BucketRules.parse(r"dt=2025-11-1[01],64;2025-11,32;b=2,16;^2024,4", 8)


@pytest.mark.parametrize(
    ("partition", "buckets"),
    [
        ("dt=2025-11-11", 64),  # first match wins although rule 2 matches too
        ("dt=2025-11-12", 32),  # find(): '2025-11' matches inside the path
        ("2025-11-12", 32),  # non-hive-style
        ("a=1/b=2", 16),  # nested: matched against the whole relative path
        ("a=1/b=20", 16),
        ("2024-01-01", 4),  # anchors work as in find()
        ("dt=2024-01-01", 8),  # '^2024' does not match mid-path: default
        ("", 8),
    ],
)
def test_first_matching_rule_wins_with_substring_search(partition: str, buckets: int) -> None:
    assert RULES.buckets_for(partition, PY) == buckets


def test_a_matched_count_of_minus_one_falls_to_the_default_as_in_hudi() -> None:
    rules = BucketRules.parse("a,-1;a,5", 8)
    assert rules.buckets_for("a", PY) == 8


def test_evaluating_an_uncompilable_rule_names_it() -> None:
    rules = BucketRules.parse("x,1;(,2", 8)
    assert rules.buckets_for("x", PY) == 1  # never reached rule 2
    with pytest.raises(InvalidRuleError, match=r"rule 2 \('\(' -> 2\): pattern '\(' does not compile"):
        rules.buckets_for("y", PY)


@pytest.mark.parametrize(
    "pattern",
    [
        r"dt=2025-11-1[01]",
        r"\d{4}-(06-(01|17|18)|11-(01|10|11))",
        r"^a=1/b=\d+$",
        r"(?i)DT=2025",
        r"(?i:dt)=(?:2024|2025)",
        r"[^/]+/b=[0-9]{1,3}",
        r"a++b",
        r"[]a]",
        r"[\[\]]",
        r"(?<=dt=)2025(?!-12)",
        r"\x41\u0042\t\.",
        r"\{x\}",
    ],
)
def test_portable_patterns_are_accepted(pattern: str) -> None:
    assert portability_problem(pattern) is None
    PY.compile(pattern)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"[[:alpha:]]", "nested class"),
        (r"[a[b]]", "nested class"),
        (r"[a-z&&[^aeiou]]", "intersection"),
        (r"dt\Z", r"\Z"),
        (r"\v", r"\v"),
        (r"\p{Alpha}", "Java-only"),
        (r"\Qa.b\E", "Java-only"),
        (r"a\z", "Java-only"),
        (r"\x{41}", "Java-only"),
        (r"\101", "digit"),
        (r"(a)\1", "digit"),
        (r"[\b]", "backspace"),
        (r"(?<year>\d{4})", "Java-only"),
        (r"(?P<year>\d{4})", "Python-only"),
        (r"(?#note)a", "Python-only"),
        (r"(?(1)a|b)", "Python-only"),
        (r"(?x)a b", "inline flag(s) x"),
        (r"(?u)\w", "inline flag(s) u"),
        (r"(?U)\w", "inline flag(s) U"),
        (r"(?-i)a", "turning flags off"),
        (r"dt={x}", "repetition"),
        (r"a{,3}", "repetition"),
        (r"\N{LATIN SMALL LETTER A}", "Java 9"),
    ],
)
def test_constructs_that_differ_between_java_and_python_are_refused(pattern: str, reason: str) -> None:
    problem = portability_problem(pattern)
    assert problem is not None
    assert reason in problem
    with pytest.raises(InvalidRuleError, match="may not mean the same in Java"):
        PY.compile(pattern)


def test_python_matcher_refuses_what_python_would_warn_about() -> None:
    with pytest.raises(InvalidRuleError, match="does not compile"):
        PY.compile("[a||b]")


def test_python_matcher_uses_ascii_classes_like_java() -> None:
    assert not PY.find(r"\d", "\u0663")
    assert not PY.find(r"\w", "é")
    assert PY.find(r"(?i)dt", "DT=1")


# --- patterns that could crash a regex engine or hang Hudi's writers ---------------------------------


class CompilesNothing:
    """A matcher that fails the test if anything reaches it."""

    def compile(self, pattern: str) -> None:
        raise AssertionError(f"compiled {pattern!r}")

    def find(self, pattern: str, text: str) -> bool:
        raise AssertionError(f"evaluated {pattern!r}")


def refusal(pattern: str, matcher: Matcher = PY) -> str:
    with pytest.raises(InvalidRuleError) as caught:
        BucketRules((Rule(pattern, 4),), 8).validate(matcher)
    return str(caught.value)


def test_a_pattern_nested_too_deep_is_refused_before_any_engine_compiles_it() -> None:
    # 510 '(' made Python's re.compile raise RecursionError, which crashed the operator's reconcile.
    for matcher in (PY, CompilesNothing()):
        message = refusal("(" * 510, matcher)
        assert f"groups are nested more than {MAX_GROUP_DEPTH} deep" in message
    assert complexity_problem("(" * MAX_GROUP_DEPTH + "a" + ")" * MAX_GROUP_DEPTH) is None
    assert complexity_problem("(" * (MAX_GROUP_DEPTH + 1) + "a" + ")" * (MAX_GROUP_DEPTH + 1)) is not None


@pytest.mark.parametrize(
    "pattern",
    [
        "((.|.)|(.|.))*x",  # the issue's: exponential in java.util.regex
        "(a+)+b",
        "(a|a){30}",
        "(a|b)+?",  # lazy
        "(a*)*+",  # possessive
        "(?:x?){2,}",
        "(?:x?){0,2}",
        "(?<y>a|b){2}",
        "((a|b)c)*",  # the choice may sit deeper in the repeated group
        "((?:ab)?c)+",
        "(?>a|b)*",
        "(a|b){" + "0" * 5000 + "2}",  # a count too long for int() is read all the same
    ],
)
def test_a_repeated_group_holding_a_repetition_or_an_alternation_is_refused(pattern: str) -> None:
    for matcher in (PY, CompilesNothing()):
        message = refusal(pattern, matcher)
        assert f"pattern {pattern!r} is unsafe to evaluate" in message
        assert "a repeated group holds a repetition or an alternation" in message
        assert "Java's regex may take exponential time" in message
        assert "repeat a character class instead ([ab]*)" in message


@pytest.mark.parametrize(
    "pattern",
    [
        "(?:a?|)" * 40 + "x",  # at the end of a path Java tries 2**40 ways to match nothing, reading nothing
        "(?:|)",
        "(?:a?)?",
        "(?:a|)?",
        "(?:|b)?",
        "(?=a)?",
        r"(?:\b|)",
        r"(a)\1?",
    ],
)
def test_a_group_that_may_match_the_empty_string_in_two_ways_is_refused(pattern: str) -> None:
    message = refusal(pattern, CompilesNothing())
    assert "may match the empty string in two ways" in message
    assert "let each part match the empty string one way only" in message


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:-\d+)?",  # '?' on a group holding a repetition: one more way, not exponentially many
        r"^day=2025-11-(?:0[1-9]|1[2-4])$",  # what sizing writes
        r"^day=20(?:24-(?:0[1-9]|1[0-2])|25-(?:0(?:1-(?:0[1-9]|1[0-2])|2-0[1-9])|1[12]-0[1-9]))$",
        r"day=\d{4}-11-11",
        r"\d{4}-(06-(01|17|18)|11-(01|10|11))",
        r"^day=",
        "11-11",
        "(a|b){1}",
        "(a|b){0,1}",
        "(a|b){1,1}",
        "(ab)*",
        r"(?:-\d)+",
        "(?:a|)",  # one empty alternative is one way to match nothing
        "a?" * 40 + "a" * 40,  # exponential, but every way reads the path: the jobs' step limit stops it
        r"(?i:a|b)c",
        "(?i)REGION=eu",
        r"(?<=dt=)2025(?!-12)",
        r"[^/]+/b=[0-9]{1,3}",
        "x*",
    ],
)
def test_patterns_whose_repetitions_cannot_explode_are_accepted(pattern: str) -> None:
    assert complexity_problem(pattern) is None
    PY.compile(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"\(a+\)+",  # escaped parentheses are literals
        r"\|+",
        r"a\*+",
        "[(|*]+",  # so is everything in a character class
        "[]|(]*",  # even after a leading ']'
        "[^](|]*",
        r"[\](|]+",
        r"\Q(a+)+\E",  # Java's quoting (refused as non-portable by the operator, accepted by the jobs)
        r"[\Q]\E(a+)+]",
        r"\p{Alpha}{2}",  # braces of an escape are no repetition
        r"(\x{41}|b)",
        r"\c(",  # a control character: '(' is its letter
    ],
)
def test_escapes_classes_and_quotes_do_not_confuse_the_scanner(pattern: str) -> None:
    assert complexity_problem(pattern) is None


@pytest.mark.parametrize("pattern", ["(?x)(a+) +b", "(?ix:a)", "(?-x)a"])
def test_the_comments_flag_is_refused_as_it_hides_where_a_repetition_applies(pattern: str) -> None:
    # In Java's comments mode "(a+) +b" is "(a+)+b"; Python's re reads the flag differently anyway.
    problem = complexity_problem(pattern)
    assert problem is not None
    assert "(?x)" in problem


# --- polynomial backtracking: a cap on unbounded repetitions ------------------------------------------

TOO_MANY_UNBOUNDED = (
    "more than 2 unbounded repetitions (*, +, {n,} or {n,m} with m - n >= 16) (.*a.*b.*c): Java's regex "
    "may take polynomial time on them, the path's length to the power of their number; use at most 2: "
    r"drop a leading or trailing .* (Hudi finds the pattern anywhere in the path) and give the others "
    r"exact counts (\d{4}, [a-z]{2})"
)


@pytest.mark.parametrize(
    "pattern",
    [
        ".*" * 16 + "X",  # the issue's: 6 s in Python, 24 s in Java on 14 characters
        ".*a.*b.*c",
        r"\w+=\w+/\w+",
        "a+b*c{2,}",
        ".{0,16}x.{1,17}y.{3,}",  # a range of 16 or more counts as unbounded
        "(?:ab)*(?:cd)+x*",
        "(?=.*a)(?=.*b).*c",  # wherever they are: in lookarounds too
        ".*|.*|.*",  # and in alternatives (a total is simpler than telling which may combine)
        "a*?b+?c*+",  # lazy or possessive
        "a{0," + "9" * 5000 + "}b*c*",  # a count too long for int() is read all the same
    ],
)
def test_more_unbounded_repetitions_than_the_cap_are_refused_saying_how_to_write_them(pattern: str) -> None:
    for matcher in (PY, CompilesNothing()):
        message = refusal(pattern, matcher)
        assert f"pattern {pattern!r} is unsafe to evaluate: {TOO_MANY_UNBOUNDED}" in message
    assert complexity_problem(pattern) == TOO_MANY_UNBOUNDED


@pytest.mark.parametrize(
    "pattern",
    [
        r"^dt=.*-11-11$",
        r".*/day=2025-.*",
        r"[^/]+/day=\d+",
        r"^region=[^/]+/dt=2025-11-\d{2}$",
        r"\w+=\w+/",
        r"(?i)^region=(?:eu|us)/.*",
        r"day=\d{4}-\d\d?-\d\d?",
        r"^(?:dt|day)=2025-(?:0[1-9]|1[0-2])-\d\d$",
        r"dt=2025-11-1[01]",
    ],
)
def test_realistic_partition_rules_stay_within_the_cap(pattern: str) -> None:
    assert complexity_problem(pattern) is None
    BucketRules((Rule(pattern, 4),), 8).validate(PY)


@pytest.mark.parametrize(
    "pattern",
    [
        r"^[a-z]{1,15}=[a-z0-9]{2,17}/.*",  # a range under 16 is bounded; 2..17 is not
        r"\d{1,4}-\d{1,4}-\d{1,4}/\d{1,4}.*.*",
    ],
)
def test_bounded_repetitions_of_a_narrow_range_do_not_count(pattern: str) -> None:
    # Only the sizing policy's pattern may hold them: Hudi splits rules on ','.
    assert complexity_problem(pattern) is None
    PY.compile(pattern)


# The slowest shapes the cap admits: two unbounded repetitions over the same characters, side by side or
# around a part the path's run matches too, before an end the path never has. Every generated path is a
# long run of one character, so each start of find() tries every way to split the run between the two.
SLOW_REPEATS = [".*", ".+?", "[^/]*", r"\w+", "(?:ab)*"]
WORST_ADMITTED = [
    f"{first}{between}{second}{end}"
    for first, second in itertools.combinations_with_replacement(SLOW_REPEATS, MAX_UNBOUNDED_REPETITIONS)
    for between in ("", "(?:a|b)")
    for end in ("X$", "(?!.)X")  # Java reads most on the first, Python spends most on the second
]
# Measured: 65 ms at most for one path (.{0,}.*(?!.)X on 'a' * 255 + '~'; three repetitions take 0.2-3 s).
# The bound leaves room for a loaded machine.
PYTHON_SECONDS_PER_PATH = 1.0


def test_python_evaluates_the_slowest_admitted_shapes_on_every_generated_path_within_a_bound() -> None:
    slowest = 0.0
    for pattern in WORST_ADMITTED:
        assert complexity_problem(pattern) is None
        compiled = re.compile(pattern, re.ASCII)
        for path in adversarial_paths(pattern):
            started = time.perf_counter()
            assert compiled.search(path) is None, (pattern, path)  # the path was made to fail
            slowest = max(slowest, time.perf_counter() - started)
    assert slowest < PYTHON_SECONDS_PER_PATH


def test_adversarial_paths_are_runs_of_what_the_pattern_names_ending_where_it_fails() -> None:
    paths = adversarial_paths(r"^dt=\w{4}[-/]x.*\.y+z")
    assert all(len(path) == ADVERSARIAL_PATH_LENGTH and path[-1] == "~" for path in paths)
    runs = {path[3:-1] for path in paths if path.startswith("dt=")}  # past the leading literal, always
    assert len(runs) == len(paths)
    for char in "-/x.yz" + "a0 _":  # literal characters (\. as '.'), a class's, and common path ones
        assert char * (ADVERSARIAL_PATH_LENGTH - 4) in runs, char
    assert "w" * (ADVERSARIAL_PATH_LENGTH - 4) not in runs  # \w names no 'w'
    assert ("dt=" * 100)[: ADVERSARIAL_PATH_LENGTH - 4] in runs  # and runs of literal text
    assert "4" * (ADVERSARIAL_PATH_LENGTH - 4) not in runs  # nor do counts


def test_adversarial_paths_end_in_a_character_the_pattern_does_not_name() -> None:
    assert {path[-1] for path in adversarial_paths("a~b!c")} == {"#"}
    assert {path[-1] for path in adversarial_paths(r"[~!#@]")} == {"~"}  # then it fails elsewhere, or not
    assert adversarial_paths("x", length=4)[0] == "xxx~"
    long_start = "a" * (ADVERSARIAL_PATH_LENGTH + 10)
    assert {len(path) for path in adversarial_paths(long_start)} == {ADVERSARIAL_PATH_LENGTH}


def test_a_sizing_pattern_is_refused_by_the_python_matcher_too() -> None:
    # The sizing policy compiles its pattern without BucketRules.validate: the matcher checks it too.
    with pytest.raises(InvalidRuleError, match="a repeated group holds a repetition"):
        PythonRegexMatcher().compile("((.|.)|(.|.))*x")


def test_python_matcher_turns_every_compile_failure_into_a_rule_error() -> None:
    # re.compile raises OverflowError here, not re.error.
    with pytest.raises(InvalidRuleError, match=r"pattern 'a\{99999999999\}' does not compile"):
        PythonRegexMatcher().compile("a{99999999999}")


def test_sizing_rules_of_paths_branching_at_every_character_stay_valid() -> None:
    # Sizing writes tries, one nested group per branching character: k=a, k=aa, k=aaa, ... give
    # ^k=a(?:a(?:a...)?)?$, the deepest nesting that fits a pattern's length. It must pass the bound.
    rules = rules_for(dict.fromkeys(["k=" + "a" * n for n in range(1, 100)], 8), 4)
    deepest = max(rule.pattern.count("(") for rule in rules)
    assert 80 < deepest <= MAX_GROUP_DEPTH
    BucketRules(rules, 4).validate(PY)


# Text of characters that mean something to a regex, and any other; and pieces of such text, deep nesting
# and huge counts, joined.
REGEX_CHARS = st.sampled_from([*r"()[]{}|*+?\^$.:=!<>-,0129aAbBQEkpxcPN", "\n", " "]) | st.characters()
PIECES = st.one_of(
    st.text(REGEX_CHARS, max_size=16),
    st.sampled_from(["(?:", "(?=", "(?<=", "(?i)", "(?x)", r"\Q", r"\E", "a?", "(a|)", "[^]"]),
    st.integers(1, MAX_PATTERN_LENGTH).map(lambda n: "(" * n),
    st.integers(0, 10**12).map(lambda n: f"{{{n}}}"),  # re.compile raised OverflowError on a{99999999999}
)
PATTERNS = st.text(REGEX_CHARS, max_size=MAX_PATTERN_LENGTH) | st.lists(PIECES, max_size=12).map(
    lambda pieces: "".join(pieces)[:MAX_PATTERN_LENGTH]
)


@settings(max_examples=1000, deadline=None)
@given(PATTERNS)
def test_validating_any_text_raises_nothing_but_a_rule_error(pattern: str) -> None:
    with contextlib.suppress(InvalidRuleError):
        BucketRules((Rule(pattern, 4),), 8).validate(PythonRegexMatcher())

"""Bucket rules parse, fail and evaluate exactly as Hudi 1.1's RegexRuleEngine does."""

from __future__ import annotations

import pytest

from hudi_bucket.core.rules import (
    MAX_BUCKETS,
    BucketRules,
    PythonRegexMatcher,
    Rule,
    portability_problem,
)
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


def test_add_rule_puts_the_new_rule_first() -> None:
    added = BucketRules.parse("a,2;b,3", 8).add_rule(Rule("c", 4))
    assert added.render() == "c,4;a,2;b,3"
    assert added.default == 8
    assert added.buckets_for("ab", PY) == 2
    assert added.add_rule(Rule("a", 9)).buckets_for("ab", PY) == 9


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

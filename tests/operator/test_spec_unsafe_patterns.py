"""parse_spec refuses a pattern that could crash the operator or hang Hudi's writers, saying how to write it,
and admission lets it through to parse_spec: only code can read a pattern's shape."""

from __future__ import annotations

import pytest

from hudi_bucket.core.rules import MAX_GROUP_DEPTH
from hudi_bucket_operator.errors import InvalidSpecError
from hudi_bucket_operator.resource.spec import parse_spec
from lib.hbt_admission import ADMISSION, SIZED, SMALL, rules_of, with_spec

DEEP = "(" * 510  # made Python's re.compile raise RecursionError, which crashed the reconcile
BACKTRACKING = "((.|.)|(.|.))*x"  # java.util.regex takes exponential time on it
POLYNOMIAL = ".*" * 16 + "X"  # 6 s in Python's re, 24 s in java.util.regex on a 14-character path


def refusal(manifest: dict[str, object]) -> str:
    with pytest.raises(InvalidSpecError) as caught:
        parse_spec(manifest["spec"])  # first: the admission model's own regex use would hide a crash
    assert ADMISSION.errors(manifest) == []
    return str(caught.value)


def test_a_rule_nested_too_deep_is_refused_not_a_crash() -> None:
    message = refusal(with_spec(SMALL, "buckets.rules", rules_of((DEEP, 8))))
    assert f"spec.buckets.rules[0] ({DEEP!r} -> 8): pattern {DEEP!r} is unsafe to evaluate" in message
    assert f"groups are nested more than {MAX_GROUP_DEPTH} deep" in message


def test_a_rule_that_backtracks_exponentially_is_refused_saying_how_to_write_it() -> None:
    message = refusal(with_spec(SMALL, "buckets.rules", rules_of(("^a$", 4), (BACKTRACKING, 8))))
    assert (
        f"spec.buckets.rules[1] ({BACKTRACKING!r} -> 8): pattern {BACKTRACKING!r} is unsafe to evaluate: "
        "a repeated group holds a repetition or an alternation ((a+)+, (a|b)*): Java's regex may take "
        "exponential time on it; repeat a character class instead ([ab]*)"
    ) in message
    assert "spec.buckets.rules[0]" not in message


def test_a_rule_that_backtracks_polynomially_is_refused_saying_how_to_write_it() -> None:
    message = refusal(with_spec(SMALL, "buckets.rules", rules_of(("^a$", 4), (POLYNOMIAL, 8))))
    assert (
        f"spec.buckets.rules[1] ({POLYNOMIAL!r} -> 8): pattern {POLYNOMIAL!r} is unsafe to evaluate: "
        "more than 2 unbounded repetitions (*, +, {n,} or {n,m} with m - n >= 16) (.*a.*b.*c): Java's regex "
        "may take polynomial time on them, the path's length to the power of their number; use at most 2: "
        "drop a leading or trailing .* (Hudi finds the pattern anywhere in the path) and give the others "
        r"exact counts (\d{4}, [a-z]{2})"
    ) in message
    assert "spec.buckets.rules[0]" not in message


def test_rules_with_as_many_unbounded_repetitions_as_real_ones_need_are_accepted() -> None:
    rules = rules_of((r"^dt=.*-11-11$", 4), (".*/day=2025-.*", 8), (r"[^/]+/day=\d+", 16))
    parse_spec(with_spec(SMALL, "buckets.rules", rules)["spec"])


@pytest.mark.parametrize(
    "pattern",
    [DEEP, BACKTRACKING, "(a+)+b", POLYNOMIAL],
    ids=["deep", "alternations", "nested-plus", "polynomial"],
)
def test_a_sizing_pattern_of_the_same_shapes_is_refused(pattern: str) -> None:
    message = refusal(with_spec(SIZED, "buckets.sizing.partitions", pattern))
    assert f"spec.buckets.sizing: invalid sizing policy: partitions: pattern {pattern!r} is unsafe" in message

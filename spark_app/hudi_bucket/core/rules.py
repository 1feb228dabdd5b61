"""Partition bucket rules (RFC-89): Hudi's expression string, parsed and evaluated exactly as Hudi does.

Hudi 1.1's ``RegexRuleEngine`` splits ``hoodie.bucket.index.partition.expressions`` with Java's
``String.split(";")`` (trailing empty segments dropped), trims each rule with ``String.trim()`` (every
char up to U+0020), splits it on ``,`` (trailing empty parts dropped again) into exactly two parts, and
reads the count with ``Integer.parseInt``. A partition path gets the count of the first rule whose Java
regex ``find()``s inside it (substring search), else the default.

``BucketRules.parse`` accepts exactly what Hudi accepts, so tables Hudi wrote read back faithfully;
``validate`` is stricter and guards what we write. Patterns are evaluated by a pluggable ``Matcher``:
the Spark jobs use ``java.util.regex`` itself, the operator uses Python's ``re`` and so refuses patterns
whose meaning may differ between the two engines (see ``portability_problem``).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, replace
from typing import Protocol

from hudi_bucket.errors import InvalidBucketCountError, InvalidRuleError

# File ids allow 8-digit bucket ids, but a partition with more than this many buckets is surely a typo.
MAX_BUCKETS = 100_000
# Limits of the rules we write, the CRD's for a spec's rules: sizing's rules stay within them too, so
# that they could be copied into a manifest as they are.
MAX_RULES = 100
MAX_PATTERN_LENGTH = 512
REGEX = "regex"  # the only rule type Hudi 1.1 knows (PartitionBucketIndexRule), matched case-insensitively

_JAVA_INT_MIN, _JAVA_INT_MAX = -(2**31), 2**31 - 1
# Integer.parseInt: an optional sign, then decimal digits (Character.digit accepts any Unicode Nd digit).
_JAVA_INT = re.compile(r"[+-]?\d+")
# What Java's String.trim() strips: every char from U+0000 to U+0020.
_JAVA_TRIMMED = "".join(chr(c) for c in range(0x21))


class Matcher(Protocol):
    """A regex engine: ``compile`` raises InvalidRuleError saying why a pattern is unusable."""

    def compile(self, pattern: str) -> None: ...

    def find(self, pattern: str, text: str) -> bool:
        """Whether ``pattern`` matches somewhere inside ``text`` (Java's ``Matcher.find()``)."""
        ...


@dataclass(frozen=True)
class Rule:
    pattern: str
    buckets: int

    def render(self) -> str:
        return f"{self.pattern},{self.buckets}"


@dataclass(frozen=True)
class BucketRules:
    rules: tuple[Rule, ...]
    default: int
    rule_type: str = REGEX

    @classmethod
    def parse(cls, expressions: str, default: int, rule_type: str = REGEX) -> BucketRules:
        """Read Hudi's ``regex,N;regex,N`` string, failing exactly where Hudi's rule engine fails."""
        _check_rule_type(rule_type)
        return cls(
            tuple(_parse_rule(i, text) for i, text in enumerate(_java_split(expressions, ";"), 1)),
            default,
            rule_type,
        )

    def render(self) -> str:
        """The expression string Hudi stores; ``parse(render())`` gives these rules back once valid."""
        return ";".join(rule.render() for rule in self.rules)

    def add_rule(self, rule: Rule) -> BucketRules:
        """What Hudi's ``add`` does: the new rule goes first, so it wins over every existing one."""
        return replace(self, rules=(rule, *self.rules))

    def validate(self, matcher: Matcher) -> None:
        """Refuse rules Hudi would reject, misread or fail on at write time, naming every bad rule."""
        _check_bucket_count(self.default, "the default bucket number")
        _check_rule_type(self.rule_type)
        if not self.rules:
            raise InvalidRuleError("no rules: Hudi's rule engine fails on an empty expression list")
        problems = [
            f"{_describe(position, rule)}: {problem}"
            for position, rule in enumerate(self.rules, 1)
            for problem in _rule_problems(rule, matcher)
        ]
        if problems:
            raise InvalidRuleError("invalid bucket rules: " + "; ".join(problems))

    def buckets_for(self, partition_path: str, matcher: Matcher) -> int:
        """The bucket count Hudi's writers use for ``partition_path`` (relative, e.g. ``dt=2025-11-11``)."""
        for position, rule in enumerate(self.rules, 1):
            try:
                found = matcher.find(rule.pattern, partition_path)
            except InvalidRuleError as error:
                raise InvalidRuleError(f"{_describe(position, rule)}: {error.args[0]}") from None
            if found:
                # Hudi's engine reports "no match" as -1, so a matched count of -1 also falls to the default.
                return self.default if rule.buckets == -1 else rule.buckets
        return self.default


class PythonRegexMatcher:
    """Python's ``re`` standing in for ``java.util.regex`` where no JVM runs (the operator).

    ``re.ASCII`` gives ``\\d \\w \\s \\b`` and case folding Java's default ASCII meaning. Patterns whose
    meaning may still differ are refused rather than warned about: the operator plans with this engine
    while Hudi's writers route records with Java's, and a silent disagreement puts records in buckets the
    table layout does not have.
    """

    def __init__(self) -> None:
        self._compiled: dict[str, re.Pattern[str]] = {}

    def compile(self, pattern: str) -> None:
        self._pattern(pattern)

    def find(self, pattern: str, text: str) -> bool:
        return self._pattern(pattern).search(text) is not None

    def _pattern(self, pattern: str) -> re.Pattern[str]:
        compiled = self._compiled.get(pattern)
        if compiled is None:
            problem = portability_problem(pattern)
            if problem is not None:
                raise InvalidRuleError(f"pattern {pattern!r} may not mean the same in Java: {problem}")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", FutureWarning)  # re warns where its meaning will change
                    compiled = re.compile(pattern, re.ASCII)
            except (re.error, FutureWarning) as error:
                raise InvalidRuleError(f"pattern {pattern!r} does not compile: {error}") from None
            self._compiled[pattern] = compiled
        return compiled


# Known differences between java.util.regex (Java 8+) and Python 3.11+ ``re`` with re.ASCII. The scanner
# below refuses every construct listed here. Not checkable from a pattern, and harmless for partition
# paths (which hold no line terminators): Java's ``.`` also excludes \r, U+0085, U+2028 and U+2029, and
# Java's ``$`` (and ``^``/``$`` under (?m)) also honour those terminators, where Python knows only \n.
_ESCAPE_PROBLEMS = {
    "Z": r"\Z also matches before a final line terminator in Java, only at the very end in Python",
    "v": r"\v is any vertical whitespace in Java, only the vertical tab in Python",
    "N": r"\N{name} needs Java 9 or later, and Hudi may run on Java 8",
    **{
        letter: f"\\{letter} is Java-only (Python's re has no such escape)"
        for letter in "pPQEhHRXGVezck"  # \p{..} classes, \Q..\E quoting, \h \R \X \G \e \z \cX \k<name> ...
    },
}
_DIGIT_ESCAPE = (
    r"\<digit> differs: Java reads back-references and needs \0 before octal, Python reads \NNN as octal"
)
_CLASS_BACKSPACE = r"[\b] is a backspace in Python and an error in Java"
_NESTED_CLASS = (
    "'[' inside a character class (e.g. [[:alpha:]]) is a nested class in Java, a literal '[' in Python"
)
_INTERSECTION = "'&&' inside a character class is an intersection in Java, two literal '&' in Python"
_BRACE = (
    r"Java reads '{' as a repetition {n}, {n,} or {n,m} and rejects anything else; write \{ for a literal"
)
_JAVA_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}", re.ASCII)
_GROUP_PROBLEMS = {
    "P": "(?P...) groups are Python-only; Java rejects them",
    "#": "(?#...) comments are Python-only; Java rejects them",
    "(": "(?(id)yes|no) conditionals are Python-only; Java rejects them",
}
_NAMED_GROUP = "(?<name>...) is Java-only (Python spells it (?P<name>...)); use a plain group (...)"
_SAME_FLAGS = frozenset("ims")  # inline flags that mean the same in both engines (with re.ASCII)
_INLINE_FLAGS = re.compile(r"[a-zA-Z-]+")


def portability_problem(pattern: str) -> str | None:
    """Why ``pattern`` may mean something else to Python's ``re`` than to ``java.util.regex``, or None."""
    position, in_class, class_body = 0, False, 0
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            problem = _escape_problem(pattern[position + 1 : position + 3], in_class)
            if problem:
                return problem
            position += 2
            continue
        if in_class:
            if char == "]" and position > class_body:  # a ']' first in the class is a literal in both
                in_class = False
            elif char == "[":
                return _NESTED_CLASS
            elif pattern.startswith("&&", position):
                return _INTERSECTION
        elif char == "[":
            in_class = True
            class_body = position + (2 if pattern.startswith("^", position + 1) else 1)
        elif char == "(" and pattern.startswith("?", position + 1):
            problem = _group_problem(pattern[position + 2 :])
            if problem:
                return problem
        elif char == "{" and not _JAVA_QUANTIFIER.match(pattern, position):
            return _BRACE
        position += 1
    return None


def _escape_problem(escaped: str, in_class: bool) -> str | None:
    letter = escaped[:1]
    if letter.isascii() and letter.isdigit():
        return _DIGIT_ESCAPE
    if escaped == "x{":
        return r"\x{h..h} is Java-only; write \xhh or \uhhhh"
    if letter == "b" and in_class:
        return _CLASS_BACKSPACE
    return _ESCAPE_PROBLEMS.get(letter)


def _group_problem(after: str) -> str | None:
    """``after`` follows ``(?``."""
    head = after[:1]
    if head in _GROUP_PROBLEMS:
        return _GROUP_PROBLEMS[head]
    if head == "<" and after[1:2] not in ("=", "!"):
        return _NAMED_GROUP
    flags = _INLINE_FLAGS.match(after)
    if flags is None:
        return None
    differing = sorted(set(flags.group()) - _SAME_FLAGS - {"-"})
    if differing:
        return f"inline flag(s) {''.join(differing)} differ between Java and Python; only i, m and s are portable"
    if "-" in flags.group() and after[flags.end() : flags.end() + 1] == ")":
        return "turning flags off with (?-x) is Java-only; Python needs the scoped form (?-x:...)"
    return None


def _java_split(text: str, separator: str) -> list[str]:
    """Java's ``String.split`` with a one-char separator: a text without it stays whole, even when
    empty; otherwise trailing empty parts are dropped."""
    parts = text.split(separator)
    if len(parts) == 1:
        return parts
    while parts and not parts[-1]:
        parts.pop()
    return parts


def _parse_rule(position: int, text: str) -> Rule:
    parts = _java_split(text.strip(_JAVA_TRIMMED), ",")
    if len(parts) != 2:
        raise InvalidRuleError(
            f"rule {position} {text!r}: expected 'pattern,buckets' (Hudi splits rules on ';' and each rule "
            f"on ',', so a pattern can hold neither)"
        )
    pattern, count = (part.strip(_JAVA_TRIMMED) for part in parts)
    buckets = _java_int(count)
    if buckets is None:
        raise InvalidRuleError(f"rule {position} {text!r}: bucket count {count!r} is not an integer")
    return Rule(pattern, buckets)


def _java_int(text: str) -> int | None:
    if not _JAVA_INT.fullmatch(text):
        return None
    try:
        value = int(text)
    except ValueError:  # more digits than Python converts by default: far beyond a Java int anyway
        return None
    return value if _JAVA_INT_MIN <= value <= _JAVA_INT_MAX else None


def _rule_problems(rule: Rule, matcher: Matcher) -> list[str]:
    pattern, problems = rule.pattern, []
    if not pattern:
        problems.append("the pattern is empty (it would match every partition)")
    elif pattern != pattern.strip(_JAVA_TRIMMED):
        problems.append("the pattern starts or ends with whitespace, which Hudi trims away")
    for separator, role in ((",", "a rule from its count"), (";", "rules")):
        if separator in pattern:
            problems.append(f"the pattern holds {separator!r}, which Hudi reads as separating {role}")
    if isinstance(rule.buckets, bool) or not isinstance(rule.buckets, int):
        problems.append(f"bucket count {rule.buckets!r} is not an integer")
    elif not 1 <= rule.buckets <= MAX_BUCKETS:
        problems.append(f"bucket count {rule.buckets} is outside 1..{MAX_BUCKETS}")
    if pattern:
        try:
            matcher.compile(pattern)
        except InvalidRuleError as error:
            problems.append(error.args[0])
    return problems


def _check_bucket_count(count: int, what: str) -> None:
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_BUCKETS:
        raise InvalidBucketCountError(f"{what} {count!r} is outside 1..{MAX_BUCKETS}")


def _check_rule_type(rule_type: str) -> None:
    if rule_type.upper() != REGEX.upper():
        raise InvalidRuleError(f"unknown rule type {rule_type!r}: Hudi 1.1 knows only {REGEX!r}")


def _describe(position: int, rule: Rule) -> str:
    return f"rule {position} ({rule.pattern!r} -> {rule.buckets!r})"

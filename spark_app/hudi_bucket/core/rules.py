"""Partition bucket rules (RFC-89): Hudi's expression string, parsed and evaluated exactly as Hudi does.

Hudi 1.1's ``RegexRuleEngine`` splits ``hoodie.bucket.index.partition.expressions`` with Java's
``String.split(";")`` (trailing empty segments dropped), trims each rule with ``String.trim()`` (every
char up to U+0020), splits it on ``,`` (trailing empty parts dropped again) into exactly two parts, and
reads the count with ``Integer.parseInt``. A partition path gets the count of the first rule whose Java
regex ``find()``s inside it (substring search), else the default.

``BucketRules.parse`` accepts exactly what Hudi accepts, so tables Hudi wrote read back faithfully;
``validate`` is stricter and guards what we write. Patterns are evaluated by a pluggable ``Matcher``:
the Spark jobs use ``java.util.regex`` itself, the operator uses Python's ``re`` and so refuses patterns
whose meaning may differ between the two engines (see ``portability_problem``). Both refuse patterns
that could crash a regex engine or take it exponential or high polynomial time (see
``complexity_problem``): Hudi's writers evaluate every pattern with ``java.util.regex`` and no time limit.
The jobs also evaluate a pattern, with a step budget, on paths made to be slow for it (see
``adversarial_paths``).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
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
            check_complexity(pattern)  # re backtracks without limit too, and sizing's pattern comes here
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", FutureWarning)  # re warns where its meaning will change
                    compiled = re.compile(pattern, re.ASCII)
            # Not only re.error: RecursionError on deep nesting, OverflowError on a{99999999999}, ...
            except Exception as error:
                reason = str(error) or type(error).__name__
                raise InvalidRuleError(f"pattern {pattern!r} does not compile: {reason}") from None
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


# Groups nested deeper than this are refused: engines recurse a level or more per group when they compile
# and match (Python's re gives up near 495 levels: 510 '(' crashed the operator). No hand-written rule
# needs ten, but sizing writes its rules as tries, one nested group per branching character of the paths:
# eight levels for a sparse pick of four-level paths, and up to 84 within MAX_PATTERN_LENGTH (six
# characters a level). So the bound is above what sizing may write, and far below what crashes.
MAX_GROUP_DEPTH = 100
_TOO_DEEP = (
    f"groups are nested more than {MAX_GROUP_DEPTH} deep, which may overflow a regex engine's stack; "
    "nest fewer groups"
)
_REPEATED_CHOICE = (
    "a repeated group holds a repetition or an alternation ((a+)+, (a|b)*): Java's regex may take "
    "exponential time on it; repeat a character class instead ([ab]*)"
)
_EMPTY_TWO_WAYS = (
    "a group may match the empty string in two ways ((a?|), (a?)?, (|b)?): Java's regex may take "
    "exponential time on a run of them; let each part match the empty string one way only (a?, (?:ab)?)"
)
_COMMENTS_MODE = (
    "the comments flag (?x) hides the pattern's shape from this check (blanks and #-comments between a "
    "group and its repetition); write the pattern without it"
)
# Unbounded repetitions a pattern may hold. Each one a path can be split across multiplies the ways a
# backtracking engine tries by up to the path's length: k of them cost about length**(k+1) (find() also
# tries every start). On a generated 256-character path (adversarial_paths) two cost at most 65 ms in
# Python's re and 8.6 million reads (10-40 ms) in java.util.regex; three cost up to 3 s and 550 million
# reads (1-2 s). Real rules need at most two (^dt=.*-11-11$, .*/day=2025-.*, [^/]+/day=\d+).
MAX_UNBOUNDED_REPETITIONS = 2
# A {n,m} whose m - n is this or more counts as unbounded: two of them multiply the ways by 256 or more,
# as much as one * on a 256-character path. Dates and codes need far less ({1,2}, {2,3}); and only the
# sizing policy's pattern can hold one, since Hudi splits its rules on ','.
WIDE_REPETITION_RANGE = 16
_TOO_MANY_UNBOUNDED = (
    f"more than {MAX_UNBOUNDED_REPETITIONS} unbounded repetitions (*, +, {{n,}} or {{n,m}} with m - n >= "
    f"{WIDE_REPETITION_RANGE}) (.*a.*b.*c): Java's regex may take polynomial time on them, the path's "
    f"length to the power of their number; use at most {MAX_UNBOUNDED_REPETITIONS}: drop a leading or "
    "trailing .* (Hudi finds the pattern anywhere in the path) and give the others exact counts (\\d{4}, "
    "[a-z]{2})"
)
# A repetition: ?, *, +, {n}, {n,} or {n,m}, then an optional lazy '?' or possessive '+'.
_REPETITION = re.compile(r"(?:(?P<symbol>[?*+])|\{(?P<low>\d+)(?:,(?P<high>\d*))?\})[?+]?", re.ASCII)
# How a group opens: (, (?:, (?>, (?<name>, (?i:, a lookaround (?= (?! (?<= (?<!, or (?i) alone.
_GROUP_HEAD = re.compile(
    r"\((?:\?(?:(?P<look>=|!|<=|<!)|>|:|<[a-zA-Z][a-zA-Z0-9]*>|(?P<flags>[a-zA-Z-]+)(?P<close>[:)])))?",
    re.ASCII,
)
# Zero-width escapes (boundaries, anchors) and back-references, which may match the empty string.
_EMPTY_ESCAPES = frozenset("bBAGzZk123456789")


@dataclass
class _Scope:
    """A group the scanner is in (or the whole pattern), as read so far."""

    zero_width: bool = False  # a lookaround: matches without consuming characters
    holds_choice: bool = False  # holds a repetition or an alternation, at any depth
    empty_branches: int = 0  # finished alternatives that may match the empty string
    empty_so_far: bool = True  # whether the current alternative may, so far


def complexity_problem(pattern: str) -> str | None:
    """Why ``pattern`` may crash a regex engine or take ``java.util.regex`` exponential or high
    polynomial time, or None.

    Backtracking explodes where one text can be matched in many ways: a repeated group whose body can
    itself vary ((a+)+, (a|b)*), or a run of parts that each match the empty string in two ways (the
    step limit of the jobs' matcher cannot see those: they read no character). It grows polynomially
    with unbounded repetitions the path can be split across (.*.*x): at most MAX_UNBOUNDED_REPETITIONS
    of them, wherever they are (counting them all is simpler than telling which may overlap, and real
    rules need few). A single pass that keeps one ``_Scope`` per open group; escapes, character classes
    and \\Q..\\E quotes are read as one atom.
    """
    scopes = [_Scope()]
    position, unbounded_repetitions = 0, 0
    while position < len(pattern):
        char, empty, choice = pattern[position], False, False  # of the atom ending at ``end``
        if char == "\\":
            end = _escape_end(pattern, position)
            empty = pattern[position + 1 : position + 2] in _EMPTY_ESCAPES
        elif char == "[":
            end = _class_end(pattern, position)
        elif char == "(":
            head = _GROUP_HEAD.match(pattern, position)
            assert head is not None  # it matches "(" at least
            if "x" in (head["flags"] or ""):
                return _COMMENTS_MODE
            if head["close"] == ")":  # (?i): no group, flags for the rest of the enclosing one
                end, empty = head.end(), True
            else:
                scopes.append(_Scope(zero_width=head["look"] is not None))
                if len(scopes) - 1 > MAX_GROUP_DEPTH:
                    return _TOO_DEEP
                position = head.end()
                continue
        elif char == "|":
            scope = scopes[-1]
            scope.holds_choice = True
            scope.empty_branches += scope.empty_so_far
            scope.empty_so_far = True
            position += 1
            continue
        elif char == ")" and len(scopes) > 1:
            group = scopes.pop()
            empty_ways = group.empty_branches + group.empty_so_far
            if empty_ways > 1:
                return _EMPTY_TWO_WAYS
            end, empty, choice = position + 1, group.zero_width or empty_ways == 1, group.holds_choice
        else:  # a literal, '.', or an anchor '^' '$' (empty)
            end, empty = position + 1, char in "^$"
        repetition = _repetition(pattern, end)
        if repetition is not None:
            end, optional, repeated, unbounded = repetition
            if choice and repeated:
                return _REPEATED_CHOICE
            if empty and optional:
                return _EMPTY_TWO_WAYS
            unbounded_repetitions += unbounded
            if unbounded_repetitions > MAX_UNBOUNDED_REPETITIONS:
                return _TOO_MANY_UNBOUNDED
            empty, choice = empty or optional, True
        scopes[-1].holds_choice |= choice
        scopes[-1].empty_so_far &= empty
        position = end
    return None


def check_complexity(pattern: str) -> None:
    """InvalidRuleError if ``complexity_problem`` finds one: before any engine compiles the pattern."""
    problem = complexity_problem(pattern)
    if problem is not None:
        raise InvalidRuleError(f"pattern {pattern!r} is unsafe to evaluate: {problem}")


# The longest partition path we plan for (Hudi's are a few dozen characters: region=eu/day=2025-11-11):
# the length of the paths adversarial_paths makes.
ADVERSARIAL_PATH_LENGTH = 256
# What most character classes admit (a letter, a digit, a blank) and the separators of partition paths.
_COMMON_PATH_CHARS = "a0 /=-_."
# Ends a generated path: characters rules seldom name, so that the match fails at the very end, after
# the engine has tried every way to match the run before it.
_FAILING_CHARS = "~!#@"
# Outside a class, characters that are regex syntax where an atom starts (a stray '{' fails to compile).
_NOT_LITERAL = frozenset("|)^$.*+?{")


def adversarial_paths(pattern: str, length: int = ADVERSARIAL_PATH_LENGTH) -> list[str]:
    """Paths of ``length`` characters on which a backtracking engine tries many ways to match ``pattern``
    before it fails: the literal text the pattern starts with (so that an anchored pattern gets past its
    start), then a run of one text the pattern names (each literal character, each run of them) or of a
    character most classes admit, then a character the pattern does not name. A heuristic for the jobs
    to evaluate a pattern on with a step budget: it finds what the static check cannot count (bounded
    repetitions or alternatives that overlap, a?a?a?aaa), not every slow path there is."""
    lead, texts = _literal_texts(pattern)
    units = dict.fromkeys([*"".join(texts), *_COMMON_PATH_CHARS, *(text for text in texts if len(text) > 1)])
    failing = next((char for char in _FAILING_CHARS if char not in pattern), _FAILING_CHARS[0])
    return list(dict.fromkeys((lead + unit * length)[: length - 1] + failing for unit in units))


def _literal_texts(pattern: str) -> tuple[str, list[str]]:
    """The literal text ``pattern`` starts with (after '^'), and the literal texts it names: runs of
    literal characters, each character a repetition applies to, each character a class names. Read as
    ``complexity_problem`` reads a pattern, one atom and its repetition at a time."""
    texts: list[str] = []
    lead: str | None = None
    run = ""  # the literal characters read since the last other atom
    position = 1 if pattern.startswith("^") else 0
    while position < len(pattern):
        char, literal, end = pattern[position], None, position + 1
        if char == "\\":
            end, literal = _escaped_literal(pattern, position)
        elif char == "[":
            end = _class_end(pattern, position)
            texts.extend(_class_members(pattern[position + 1 : end - 1]))
        elif char == "(":
            head = _GROUP_HEAD.match(pattern, position)
            assert head is not None  # it matches "(" at least
            end = head.end()
        elif char not in _NOT_LITERAL:
            literal = char
        repetition = _REPETITION.match(pattern, end)
        if literal is None or repetition is not None:  # the run of literal characters ends here
            lead = run if lead is None else lead
            texts.append(run)
            run = ""
            texts.append(literal or "")
        else:
            run += literal
        position = end if repetition is None else repetition.end()
    texts.append(run)
    return (run if lead is None else lead), [text for text in texts if text]


def _class_members(body: str) -> list[str]:
    """The characters a class's body names (ranges by their ends, escapes of punctuation by the
    character; a leading '^' too, which costs a path more and misses none)."""
    members: list[str] = []
    position = 0
    while position < len(body):
        if body[position] == "\\":
            position, literal = _escaped_literal(body, position)
            members.extend(literal or "")
        else:
            members.append(body[position])
            position += 1
    return members


def _escaped_literal(pattern: str, position: int) -> tuple[int, str | None]:
    """Where the escape at ``position`` ends, and the character it stands for if it escapes punctuation
    (\\. \\/ \\-); None for classes (\\d), character codes (\\x41) and the rest."""
    end = _escape_end(pattern, position)
    escaped = pattern[position + 1 : end]
    return end, escaped if len(escaped) == 1 and not escaped.isalnum() else None


def _repetition(pattern: str, position: int) -> tuple[int, bool, bool, bool] | None:
    """The repetition at ``position`` if there is one: where it ends, whether it may match zero times,
    whether more than once, and whether it counts as unbounded (no upper bound, or a wide range)."""
    found = _REPETITION.match(pattern, position)
    if found is None:
        return None
    symbol, low, high = found.group("symbol", "low", "high")  # high: None in {n}, "" in {n,}
    if symbol:
        return found.end(), symbol != "+", symbol != "?", symbol != "?"
    if high == "":
        return found.end(), _count(low) == 0, True, True
    upper = _count(low if high is None else high)
    return found.end(), _count(low) == 0, upper > 1, upper - _count(low) >= WIDE_REPETITION_RANGE


def _count(digits: str) -> int:
    """A repetition's count, capped at 10**12 (more than either engine compiles): it may be thousands of
    digits long, too many for int()."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= 12 else 10**12


def _escape_end(pattern: str, position: int) -> int:
    """Where the escape at ``position`` ends: \\Q..\\E quotes, \\p{..} \\x{..} \\N{..}, \\k<..>, \\cX too."""
    letter = pattern[position + 1 : position + 2]
    if letter == "Q":
        return _after(pattern, "\\E", position + 2)
    if letter in ("p", "P", "x", "N") and pattern.startswith("{", position + 2):
        return _after(pattern, "}", position + 3)
    if letter == "k" and pattern.startswith("<", position + 2):
        return _after(pattern, ">", position + 3)
    return position + (3 if letter == "c" else 2)


def _class_end(pattern: str, position: int) -> int:
    """Where the character class opened at ``position`` ends. A nested class (Java's [a[b]]) ends it
    early, which can only show the scanner more structure than there is, never hide some."""
    body = position + (2 if pattern.startswith("^", position + 1) else 1)
    position = body
    while position < len(pattern):
        if pattern[position] == "\\":
            position = _escape_end(pattern, position)
        elif pattern[position] == "]" and position > body:  # a ']' first in the class is a literal
            return position + 1
        else:
            position += 1
    return len(pattern)


def _after(pattern: str, closing: str, start: int) -> int:
    found = pattern.find(closing, start)
    return len(pattern) if found < 0 else found + len(closing)


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
            check_complexity(pattern)
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

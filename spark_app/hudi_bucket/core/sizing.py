"""Bucket counts from a target file size: measure each partition, pick its N, write rules Hudi accepts.

A bucket index writes one file group per bucket, so a partition's base files are about ``bytes / N``
each. Given a target file size, the natural count is ``ceil(bytes / target)``, clamped to the policy's
bounds. Rewriting a partition costs a full read and write of it, so a partition whose files are within
``tolerance`` (a factor) of the target is left alone. When one is rewritten, a multiple or a divisor
of its current count is preferred if one lands near the target, since that rewrite needs no shuffle.

The chosen counts become rules after the spec's explicit ones (so those win where both match), one
anchored alternation per count, which matches exactly the partitions given and nothing else; the
default still governs every partition no rule names, new ones included. No I/O: the plan job measures,
this module decides.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, TypeAlias

from pydantic import Field
from pydantic import dataclasses as pydantic_dataclasses

from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.report_json import REPORT_JSON, ReportJson
from hudi_bucket.core.rules import (
    MAX_BUCKETS,
    MAX_PATTERN_LENGTH,
    MAX_RULES,
    BucketRules,
    Matcher,
    Rule,
    check_complexity,
)
from hudi_bucket.errors import InvalidRuleError, SizingError, TooManyRulesError

DEFAULT_TOLERANCE = 2.0
NO_OP_PATTERN = "^$"  # the rule sizing writes when it needs none and the spec has none
MAX_TOLERANCE = 100.0


# A Kubernetes quantity as a size: a decimal number and a binary (Ki, Mi, ...) or decimal (k, M, ...) unit.
QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?")
_UNITS: dict[str, int] = {
    "": 1,
    **{unit: 1024 ** (power + 1) for power, unit in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
    **{unit: 1000 ** (power + 1) for power, unit in enumerate(("k", "M", "G", "T", "P", "E"))},
}
QUANTITY_FORMAT = "a size in bytes or a Kubernetes quantity such as 512Mi or 1Gi"


def parse_size(value: str | int) -> int:
    """Bytes from a Kubernetes quantity (``512Mi``, ``1.5Gi``, ``200M``) or a plain number; a fraction of
    a byte rounds up. ValueError for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = QUANTITY.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"{value!r} is not {QUANTITY_FORMAT}")
    return math.ceil(Decimal(match[1]) * _UNITS[match[2] or ""])


def format_size(size: int) -> str:
    """Bytes for people: 512.0 MiB, 3.2 GiB."""
    amount, unit = float(size), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if amount < 1024 or unit == "PiB":
            break
        amount /= 1024
    return f"{size} B" if unit == "B" else f"{amount:.1f} {unit}"


@dataclass(frozen=True)
class SizingPolicy:
    """How big each bucket's files should be, and which partitions sizing may touch.

    ``partitions`` is a Java regex found in the partition path, like a rule's pattern ("" = every
    partition). ``tolerance`` is a factor > 1: files between target / tolerance and target * tolerance
    are good enough, which keeps a partition that grows a little from being rewritten every day.
    """

    target_file_size: int
    min_buckets: int = 1
    max_buckets: int = MAX_BUCKETS
    partitions: str = ""
    tolerance: float = DEFAULT_TOLERANCE

    def validate(self, matcher: Matcher) -> None:
        problems = []
        if _not_int(self.target_file_size) or self.target_file_size < 1:
            problems.append(f"target file size {self.target_file_size!r} must be a positive number of bytes")
        bounds = (("min", self.min_buckets), ("max", self.max_buckets))
        bad = [f"{name} buckets {n!r} is outside 1..{MAX_BUCKETS}" for name, n in bounds if not _is_count(n)]
        problems += bad
        if not bad and self.min_buckets > self.max_buckets:
            problems.append(f"min buckets {self.min_buckets} is above max buckets {self.max_buckets}")
        if not isinstance(self.tolerance, int | float) or not 1 < self.tolerance <= MAX_TOLERANCE:
            problems.append(
                f"tolerance {self.tolerance!r} must be a factor above 1 and at most {MAX_TOLERANCE:g}"
            )
        if self.partitions:
            try:
                check_complexity(self.partitions)  # before either engine compiles it, as for a rule
                matcher.compile(self.partitions)
            except InvalidRuleError as error:
                problems.append(f"partitions: {error.args[0]}")
        if problems:
            raise SizingError("invalid sizing policy: " + "; ".join(problems))

    def covers(self, partition: str, matcher: Matcher) -> bool:
        return not self.partitions or matcher.find(self.partitions, partition)

    def ideal(self, size: int) -> int:
        """``ceil(bytes / target)`` within the policy's bounds."""
        return min(self.max_buckets, max(self.min_buckets, -(-size // self.target_file_size)))

    def fits(self, size: int, buckets: int, factor: float) -> bool:
        """Whether ``buckets`` files of ``size / buckets`` bytes are within ``factor`` of the target."""
        per_bucket = size / buckets
        return self.target_file_size / factor <= per_bucket <= self.target_file_size * factor

    def reported(self) -> ReportedPolicy:
        return ReportedPolicy(
            self.target_file_size, self.min_buckets, self.max_buckets, self.partitions, self.tolerance
        )


def _not_int(value: object) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)


def _is_count(value: object) -> bool:
    return not _not_int(value) and 1 <= value <= MAX_BUCKETS  # type: ignore[operator]


@dataclass(frozen=True)
class PartitionSize:
    """One partition as measured: its bucket count in force (None: not bucketed yet), the bytes of its
    live files (base files, plus log files on MERGE_ON_READ), and its base files' sizes."""

    partition: str
    buckets: int | None
    bytes: int
    base_file_sizes: tuple[int, ...] = ()

    @property
    def smallest_file(self) -> int | None:
        return min(self.base_file_sizes, default=None)

    @property
    def largest_file(self) -> int | None:
        return max(self.base_file_sizes, default=None)


def measure(partition: str, buckets: int | None, groups: Iterable[FileGroup]) -> PartitionSize:
    """A partition's size from its live file groups: each group's latest slice, base file and logs.

    Logs count because compaction folds them into the base file: a MERGE_ON_READ bucket's file grows
    to about its slice's size.
    """
    total, bases = 0, []
    for group in groups:
        latest = group.latest_slice()
        if latest is None:
            continue
        if latest.base_file is not None:
            bases.append(latest.base_file.size)
            total += latest.base_file.size
        total += sum(log.size for log in latest.log_files)
    return PartitionSize(partition, buckets, total, tuple(sorted(bases)))


class Verdict(StrEnum):
    KEEP = "keep"  # within tolerance (or already the best the bounds allow): not worth a rewrite
    RESIZE = "resize"  # rewritten to a count nearer the target


@dataclass(frozen=True)
class SizingChoice:
    partition: str
    bytes: int
    old_buckets: int | None
    new_buckets: int
    verdict: Verdict

    @property
    def shuffle_free(self) -> bool:
        """Whether the count change alone allows a rewrite without a shuffle (the plan also checks
        that the old layout is clean)."""
        return _divides(self.old_buckets, self.new_buckets)

    def reported(self) -> ReportedChoice:
        return ReportedChoice(self.partition, self.bytes, self.old_buckets, self.new_buckets, self.verdict)


def choose_buckets(size: int, current: int | None, policy: SizingPolicy) -> tuple[int, Verdict]:
    """The count one partition of ``size`` bytes should have, and whether that means a rewrite.

    The current count stays when its files are within tolerance of the target, or when it is already
    the count the bounds force. Otherwise a multiple or divisor of the current count is taken if its
    files land within the square root of the tolerance, else the ideal count. Choosing inside that
    narrower band leaves room for the files' sizes to move a little after the rewrite (Parquet's
    per-file overhead and compression) and still be within tolerance at the next plan: no flapping.
    """
    ideal = policy.ideal(size)
    if (
        current is not None
        and policy.min_buckets <= current <= policy.max_buckets
        and (current == ideal or policy.fits(size, current, policy.tolerance))
    ):
        return current, Verdict.KEEP
    if current is None:
        return ideal, Verdict.RESIZE
    near = math.sqrt(policy.tolerance)
    # Counts whose files are within ``near`` of the target lie in [size / (target * near), size * near
    # / target]; only multiples and divisors there are looked at (a count of 1 has 100,000 multiples).
    low = max(policy.min_buckets, math.floor(size / (policy.target_file_size * near)))
    high = min(policy.max_buckets, math.ceil(size * near / policy.target_file_size))
    candidates = [n for n in _multiples_and_divisors(current, low, high) if policy.fits(size, n, near)]
    if not candidates:
        return ideal, Verdict.RESIZE
    # Nearest the target on a log scale; between two equally near, the larger count (smaller files).
    target = policy.target_file_size
    best = min(candidates, key=lambda n: (abs(math.log(max(size, 1) / n / target)), -n))
    return best, Verdict.RESIZE


def _multiples_and_divisors(current: int, low: int, high: int) -> list[int]:
    """The multiples and divisors of ``current`` from ``low`` to ``high``."""
    divisors = {d for i in range(1, math.isqrt(current) + 1) if current % i == 0 for d in (i, current // i)}
    multiples = set(range(max(current, -(-low // current) * current), high + 1, current))
    return sorted(n for n in divisors | multiples if low <= n <= high)


@dataclass(frozen=True)
class Sizing:
    """What sizing decided: a choice per sized partition, the rules that carry the choices, and the
    rules to write (the explicit ones first, then these)."""

    policy: SizingPolicy
    choices: tuple[SizingChoice, ...]
    rules: tuple[Rule, ...]
    desired: BucketRules

    @property
    def resized(self) -> tuple[SizingChoice, ...]:
        return tuple(c for c in self.choices if c.verdict is Verdict.RESIZE)

    def reported(self, max_choices: int | None = None) -> ReportedSizing:
        """As a report shows it; with ``max_choices``, only that many choices (the rewrites first, the
        largest first) and how many were left out, as a report bound for a ConfigMap must be."""
        resized = self.resized
        choices = self.choices
        if max_choices is not None:
            ranked = sorted(choices, key=lambda c: (c.verdict is not Verdict.RESIZE, -c.bytes, c.partition))
            choices = tuple(sorted(ranked[:max_choices], key=lambda c: c.partition))
        return ReportedSizing(
            self.policy.reported(),
            len(self.choices),
            len(resized),
            sum(1 for c in resized if c.shuffle_free),
            tuple(ReportedRule(r.pattern, r.buckets) for r in self.rules),
            tuple(c.reported() for c in choices),
            len(self.choices) - len(choices),
        )


# --- as a report shows it (a plan's result, show's proposal) ----------------------------------------------


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ReportedPolicy:
    target_file_size: int
    min_buckets: int
    max_buckets: int
    partitions: str
    tolerance: float | int  # as given: 2 stays 2 in the JSON


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ReportedChoice:
    partition: str
    bytes: int
    old_buckets: int | None
    new_buckets: int
    verdict: Verdict


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ReportedRule:
    pattern: str
    buckets: int


@pydantic_dataclasses.dataclass(frozen=True, config=REPORT_JSON)
class ReportedSizing(ReportJson):
    """What sizing decided, bounded: the policy, how many partitions it sized, resized and resized
    without a shuffle, the rules it writes, and the choices (``omitted`` counts those left out)."""

    policy: ReportedPolicy
    sized_partitions: int
    resized: int
    shuffle_free: int
    rules: tuple[ReportedRule, ...] | None  # None: no rules can carry the choices (``problem`` says why)
    choices: tuple[ReportedChoice, ...]
    omitted: int
    problem: Annotated[str | None, Field(exclude_if=lambda problem: problem is None)] = None


def size_table(
    sizes: Iterable[PartitionSize], explicit: BucketRules, policy: SizingPolicy, matcher: Matcher
) -> Sizing:
    """Choose every sizable partition's count and the rules for them.

    A partition is sized when it has files, ``policy.partitions`` finds it, and no explicit rule matches
    it (those win). Each sized partition whose count differs from the default gets a rule, whether
    resized or kept: the rules are the whole truth, so a kept count survives the next config version.
    """
    choices = choose_all(sizes, explicit, policy, matcher)
    budget = MAX_RULES - len(explicit.rules)
    try:
        rules = rules_for({c.partition: c.new_buckets for c in choices}, explicit.default, budget)
    except TooManyRulesError:
        choices = fewer_counts(choices, policy, explicit.default)
        rules = rules_for({c.partition: c.new_buckets for c in choices}, explicit.default, budget)
    if not explicit.rules and not rules:
        # Hudi needs one rule at least; one that gives the default changes nothing, whatever it matches.
        rules = (Rule(NO_OP_PATTERN, explicit.default),)
    return Sizing(policy, choices, rules, BucketRules((*explicit.rules, *rules), explicit.default))


def fewer_counts(
    choices: Sequence[SizingChoice], policy: SizingPolicy, default: int
) -> tuple[SizingChoice, ...]:
    """The same choices with the partitions to rewrite sharing counts, for when one rule per count
    is more than the rule limit allows.

    The counts that suit a partition (its files within the square root of the tolerance, as in
    ``choose_buckets``, or its ideal count) form an interval. A partition takes a count already needed
    (the default, which needs no rule, or a kept partition's) when one is in its interval. The others
    share counts chosen greedily, taking intervals by their upper end (the classic greedy, which needs
    the fewest counts when it takes each upper end itself): the count is the largest multiple of the
    most common old count that still meets the first interval, so that most rewrites need no shuffle,
    and it serves every interval it falls in.
    """
    near = math.sqrt(policy.tolerance)
    intervals = {c.partition: _suiting(c.bytes, policy, near) for c in choices}
    taken = sorted({default} | {c.new_buckets for c in choices if c.verdict is Verdict.KEEP})
    decided: dict[str, int] = {}
    pending = []
    for choice in choices:
        if choice.verdict is not Verdict.RESIZE:
            continue
        low, high = intervals[choice.partition]
        fitting = taken[bisect_left(taken, low) : bisect_right(taken, high)]
        if fitting:
            decided[choice.partition] = _best(choice, fitting, policy)
        else:
            pending.append(choice)
    pending.sort(key=lambda c: (intervals[c.partition][1], c.partition))
    while pending:
        lower, upper = intervals[pending[0].partition]
        reach = [c for c in pending if intervals[c.partition][0] <= upper]
        count = _shared_count(reach, lower, upper)
        met = [c for c in reach if intervals[c.partition][0] <= count]
        decided |= dict.fromkeys((c.partition for c in met), count)
        pending = [c for c in pending if c.partition not in decided]
    return tuple(
        SizingChoice(c.partition, c.bytes, c.old_buckets, decided.get(c.partition, c.new_buckets), c.verdict)
        for c in choices
    )


def _suiting(size: int, policy: SizingPolicy, near: float) -> tuple[int, int]:
    """The counts whose files are within ``near`` of the target, with the ideal count, as an interval:
    the ideal is ``ceil(size / target)``, so at most one past the band's upper end."""
    ideal = policy.ideal(size)
    low = max(policy.min_buckets, math.ceil(size / (policy.target_file_size * near)))
    high = min(policy.max_buckets, math.floor(size * near / policy.target_file_size))
    return (ideal, ideal) if low > high else (min(low, ideal), max(high, ideal))


def _best(choice: SizingChoice, counts: Iterable[int], policy: SizingPolicy) -> int:
    """Of ``counts``, one without a shuffle first, then the nearest the target, then the smallest."""
    size = max(choice.bytes, 1)
    return min(
        counts,
        key=lambda n: (
            not _divides(choice.old_buckets, n),
            abs(math.log(size / n / policy.target_file_size)),
            n,
        ),
    )


def _shared_count(reach: Sequence[SizingChoice], lower: int, upper: int) -> int:
    """A count from ``lower`` to ``upper``: the largest multiple of the most common old count among
    ``reach`` that fits (so that most of them need no shuffle), else ``upper``."""
    common = Counter(c.old_buckets for c in reach if c.old_buckets)
    for old in sorted(common, key=lambda old: (-common[old], old)):
        multiple = upper // old * old
        if multiple >= max(lower, 1):
            return multiple
    return upper


def _divides(old: int | None, new: int) -> bool:
    """Whether going from ``old`` to ``new`` buckets can be done without a shuffle."""
    return old is not None and (new % old == 0 or old % new == 0)


def choose_all(
    sizes: Iterable[PartitionSize], explicit: BucketRules, policy: SizingPolicy, matcher: Matcher
) -> tuple[SizingChoice, ...]:
    """Every sizable partition's choice, by partition (see ``size_table``)."""
    policy.validate(matcher)
    choices = []
    for size in sorted(sizes, key=lambda s: s.partition):
        if not size.base_file_sizes and size.bytes == 0:
            continue  # an empty partition fits any count: the default, like a new one
        if not policy.covers(size.partition, matcher) or _matched(explicit, size.partition, matcher):
            continue
        new, verdict = choose_buckets(size.bytes, size.buckets, policy)
        choices.append(SizingChoice(size.partition, size.bytes, size.buckets, new, verdict))
    return tuple(choices)


def _matched(rules: BucketRules, partition: str, matcher: Matcher) -> bool:
    return any(matcher.find(rule.pattern, partition) for rule in rules.rules)


# --- rules from counts ---------------------------------------------------------------------------------


def rules_for(
    counts: Mapping[str, int], default: int, budget: int = MAX_RULES, max_length: int = MAX_PATTERN_LENGTH
) -> tuple[Rule, ...]:
    """As few rules as fit ``max_length`` per pattern, mapping each partition in ``counts`` to its count
    (partitions at ``default`` need none) and no other partition path to anything.

    Each count's partitions become one anchored alternation, ``^(?:a|b)$``, written as a trie so that
    shared prefixes (``day=2025-11-``) are written once, and split where a pattern would be too long.
    SizingError when more than ``budget`` rules would be needed.
    """
    by_count: dict[int, list[str]] = defaultdict(list)
    for partition, count in counts.items():
        if count != default:
            by_count[count].append(partition)
    rules = tuple(
        Rule(pattern, count)
        for count in sorted(by_count)
        for pattern in _patterns(sorted(by_count[count]), max_length)
    )
    if len(rules) > budget:
        raise TooManyRulesError(
            f"sizing needs {len(rules)} rules for {sum(map(len, by_count.values()))} partitions at "
            f"{len(by_count)} bucket counts, but only {budget} fit beside the explicit rules",
            hint="narrow spec.buckets.sizing.partitions, raise the tolerance, or set minBuckets/maxBuckets "
            "closer together",
        )
    return rules


def _patterns(paths: Sequence[str], max_length: int) -> list[str]:
    """Anchored patterns, each at most ``max_length`` long, together matching exactly ``paths``."""
    patterns, start = [], 0
    while start < len(paths):
        # The longest run of paths from ``start`` whose pattern fits: grow the run by doubling, then
        # bisect, so that long lists cost O(n log n) pattern renderings rather than O(n^2).
        fits, step = 0, 1
        while (
            start + fits < len(paths) and len(exact_pattern(paths[start : start + fits + step])) <= max_length
        ):
            fits += step
            step *= 2
        step //= 2
        while step >= 1:
            end = start + fits + step
            if end <= len(paths) and len(exact_pattern(paths[start:end])) <= max_length:
                fits += step
            step //= 2
        if fits == 0:
            raise SizingError(
                f"partition path {paths[start]!r} is too long for a rule pattern ({max_length} characters)",
                hint="exclude it from sizing with spec.buckets.sizing.partitions",
            )
        patterns.append(exact_pattern(paths[start : start + fits]))
        start += fits
    return patterns


def exact_pattern(paths: Sequence[str]) -> str:
    """A regex that, with Java's ``find()`` as Hudi uses it, matches exactly the given paths: anchored at
    both ends, every character taken literally. Python's ``re`` reads it the same way (re.ASCII)."""
    trie: _Trie = {}
    for path in paths:
        node = trie
        for char in path:
            node = node.setdefault(char, {})
        node[_END] = {}
    return f"^{_render(trie)}$"  # every alternation inside is grouped, so the anchors bind the whole


_END = ""  # a trie key no character equals: a path ends here
_Trie: TypeAlias = dict[str, "_Trie"]  # each character to the paths' rest after it


def _render(node: _Trie) -> str:
    """The alternation a trie node stands for: shared prefixes once, single characters as a class.
    Runs of single characters are walked, not recursed into, so a long path costs no stack."""
    run = []
    while len(node) == 1 and _END not in node:
        ((char, node),) = node.items()
        run.append(_literal(char))
    return "".join(run) + _branches(node)


def _branches(node: _Trie) -> str:
    optional = _END in node
    children = sorted((char, child) for char, child in node.items() if char != _END)
    if not children:
        return ""
    leaves = [char for char, child in children if child.keys() == {_END}]
    if len(children) > 1 and len(leaves) == len(children):
        body = _char_class(leaves)
        return body + "?" if optional else body
    branches = [_literal(char) + _render(child) for char, child in children]
    if len(branches) == 1:  # so optional (a path ends here, a longer one goes on), else _render walked it
        return branches[0] + "?" if children[0][1].keys() == {_END} else f"(?:{branches[0]})?"
    return "(?:" + "|".join(branches) + ")" + ("?" if optional else "")


def _char_class(chars: Sequence[str]) -> str:
    """A class of the given sorted characters; runs of three or more consecutive ASCII letters or
    digits as a range (``[1-9]``: a month of days stays short)."""
    parts, start = [], 0
    while start < len(chars):
        end = start
        while (
            end + 1 < len(chars)
            and _range_char(chars[end + 1])
            and ord(chars[end + 1]) == ord(chars[end]) + 1
        ):
            end += 1
        if _range_char(chars[start]) and end - start >= 2:
            parts.append(f"{chars[start]}-{chars[end]}")
        else:
            end = start
            parts.append("\\-" if chars[start] == "-" else _literal(chars[start]))
        start = end + 1
    return "[" + "".join(parts) + "]"


def _range_char(char: str) -> bool:
    return char.isascii() and char.isalnum()


# Characters Hudi or the two regex engines read specially never appear bare: ',' and ';' split Hudi's
# expression string, so they are hex escapes; other ASCII punctuation gets a backslash, which both Java
# and Python read as "this character, literally"; control characters and spaces (which Hudi trims at a
# pattern's ends) are hex escapes. Letters, digits and non-ASCII characters match themselves.
# '-' is plain outside a class only; a class escapes it.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=/:@%-")


def _literal(char: str) -> str:
    """``char`` taken literally, outside a character class or in one (where '-' needs the caller's
    backslash; the other characters special there are escaped anyway)."""
    if char in _PLAIN:
        return char
    if char in ",;" or ord(char) <= 0x20 or ord(char) == 0x7F:
        return f"\\x{ord(char):02x}"
    if ord(char) < 0x80:
        return "\\" + char
    return char

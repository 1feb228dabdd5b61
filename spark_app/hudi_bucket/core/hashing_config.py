"""One version of a table's partition bucket rules: Hudi's ``<instant>.hashing_config`` file.

Hudi writes the file with Jackson's default pretty printer over five fields in declaration order
(``PartitionBucketIndexHashingConfig``): two-space indent, ``"key" : value``, no final newline,
non-ASCII kept as UTF-8, control chars escaped with upper-case hex, and the JVM's line separator
(``\\n`` on the Linux hosts Hudi runs on). ``to_json`` produces those bytes exactly, so a Hudi reader
cannot tell our files from its own.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import InvalidHashingConfigError, InvalidRuleError

INITIAL_INSTANT = "00000000000000"  # HoodieTimeline.INIT_INSTANT_TS: the version made with the table
CURRENT_VERSION = 1

# (JSON name, Python type) in the order Jackson writes them; the ints are Java ints.
_FIELDS = (
    ("expressions", str),
    ("defaultBucketNumber", int),
    ("rule", str),
    ("version", int),
    ("instant", str),
)
_JSON_TYPE_NAMES = {str: "string", int: "32-bit integer"}
_JAVA_INT_RANGE = range(-(2**31), 2**31)
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


@dataclass(frozen=True)
class HashingConfig:
    expressions: str
    default_bucket_number: int
    rule: str
    version: int
    instant: str

    @classmethod
    def from_rules(cls, rules: BucketRules, instant: str) -> HashingConfig:
        return cls(rules.render(), rules.default, rules.rule_type, CURRENT_VERSION, instant)

    def to_rules(self) -> BucketRules:
        """The rules as Hudi's rule engine reads them; InvalidRuleError where Hudi's would fail."""
        return BucketRules.parse(self.expressions, self.default_bucket_number, self.rule)

    def to_json(self) -> bytes:
        values: tuple[str | int, ...] = (
            self.expressions, self.default_bucket_number, self.rule, self.version, self.instant
        )  # fmt: skip
        lines = [
            f"  {_jackson(name)} : {_jackson(value)}"
            for (name, _), value in zip(_FIELDS, values, strict=True)
        ]
        return ("{\n" + ",\n".join(lines) + "\n}").encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, source: str) -> HashingConfig:
        """Read what Hudi reads (fields in any order, unknown fields ignored); ``source`` names the file
        in errors. Stricter than Hudi's Jackson where it would coerce or default a value Hudi never writes."""
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InvalidHashingConfigError(f"{source}: not a UTF-8 JSON document ({error})") from None
        if not isinstance(document, dict):
            raise InvalidHashingConfigError(
                f"{source}: expected a JSON object, found {type(document).__name__}"
            )
        expressions, default, rule, version, instant = (
            _field(document, name, kind, source) for name, kind in _FIELDS
        )
        config = cls(str(expressions), int(default), str(rule), int(version), str(instant))
        if config.version != CURRENT_VERSION:
            raise InvalidHashingConfigError(
                f"{source}: version {config.version} is not {CURRENT_VERSION}, the only one Hudi 1.1 writes",
                hint="a newer Hudi wrote it; upgrade hudi-bucket-operator before managing this table",
            )
        try:
            config.to_rules()
        except InvalidRuleError as error:
            raise InvalidHashingConfigError(f"{source}: {error.args[0]}") from None
        return config


def select_in_force(instants: Iterable[str], pending_replacecommits: Collection[str]) -> str | None:
    """The version Hudi's writers load: the newest whose replacecommit is not pending.

    A version is saved while its replacecommit is pending and rollback deletes it first, so every listed
    version that is not pending belongs to a completed commit (or is the initial one).
    """
    committed = [instant for instant in sorted(instants) if instant not in pending_replacecommits]
    return committed[-1] if committed else None


def instants_to_archive(instants: Iterable[str], first_active_instant: str | None) -> list[str]:
    """Versions Hudi moves to the archive: all but the newest of those older than the first active commit.

    ``first_active_instant`` is the first instant of the active commits timeline in any state (pending
    replacecommits included, so their versions are never older than it); None when it is empty.
    """
    if first_active_instant is None:
        return []
    older = [instant for instant in sorted(instants) if instant < first_active_instant]
    return older[:-1]


def _field(document: dict[str, object], name: str, kind: type, source: str) -> str | int:
    if name not in document:
        raise InvalidHashingConfigError(f"{source}: field {name!r} is missing")
    value = document[name]
    if not _is_a(value, kind):
        raise InvalidHashingConfigError(
            f"{source}: field {name!r} is {json.dumps(value)}, expected a JSON {_JSON_TYPE_NAMES[kind]}"
        )
    assert isinstance(value, str | int)  # what _is_a let through
    return value


def _is_a(value: object, kind: type) -> bool:
    if isinstance(value, bool) or not isinstance(value, kind):  # JSON true is no integer
        return False
    return kind is not int or value in _JAVA_INT_RANGE


def _jackson(value: str | int) -> str:
    """One scalar as Jackson writes it."""
    if isinstance(value, int):
        return str(value)
    escaped = (_SHORT_ESCAPES.get(char) or (f"\\u{ord(char):04X}" if char < " " else char) for char in value)
    return '"' + "".join(escaped) + '"'

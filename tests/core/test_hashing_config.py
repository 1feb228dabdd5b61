"""hashing_config files are byte-identical to Hudi's, read as Hudi reads them, and versioned as Hudi does."""

from __future__ import annotations

import json

import pytest

from hudi_bucket.core.hashing_config import (
    INITIAL_INSTANT,
    HashingConfig,
    instants_to_archive,
    select_in_force,
)
from hudi_bucket.core.rules import BucketRules, Rule
from hudi_bucket.errors import InvalidHashingConfigError

CONFIG = HashingConfig(r"dt=2025-11-1[01],64;\d{4}-06,32", 8, "regex", 1, "20251111093000123")

# Jackson's DefaultPrettyPrinter over PartitionBucketIndexHashingConfig's fields, in declaration order.
GOLDEN = (
    b"{\n"
    b'  "expressions" : "dt=2025-11-1[01],64;\\\\d{4}-06,32",\n'
    b'  "defaultBucketNumber" : 8,\n'
    b'  "rule" : "regex",\n'
    b'  "version" : 1,\n'
    b'  "instant" : "20251111093000123"\n'
    b"}"
)


def test_json_bytes_are_what_hudi_writes() -> None:
    assert CONFIG.to_json() == GOLDEN


def test_strings_are_escaped_as_jackson_escapes_them() -> None:
    config = HashingConfig('é"\x01\x1f\t\n/\u2028\x7f,2', 8, "regex", 1, INITIAL_INSTANT)
    expected = '"expressions" : "é\\"\\u0001\\u001F\\t\\n/\u2028\x7f,2",\n'.encode()
    assert expected in config.to_json()


def test_json_round_trips() -> None:
    assert HashingConfig.from_json(CONFIG.to_json(), "x") == CONFIG


def test_reading_ignores_field_order_unknown_fields_and_layout() -> None:
    data = (
        b'{"instant":"20251111093000123","futureField":{"a":[1]},"version":1,\r\n'
        b'"rule":"regex","defaultBucketNumber":8,"expressions":"dt=2025-11-1[01],64;\\\\d{4}-06,32"}'
    )
    assert HashingConfig.from_json(data, "x") == CONFIG


def test_rules_convert_both_ways() -> None:
    rules = BucketRules((Rule("dt=2025-11-1[01]", 64), Rule(r"\d{4}-06", 32)), 8)
    config = HashingConfig.from_rules(rules, "20251111093000123")
    assert config == CONFIG
    assert config.to_rules() == rules


def _document(**changes: object) -> bytes:
    fields = json.loads(GOLDEN)
    fields.update(changes)
    return json.dumps({k: v for k, v in fields.items() if v is not ...}).encode()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "not a UTF-8 JSON document"),
        (b"\xff\xfe{}", "not a UTF-8 JSON document"),
        (b'{"expressions" : ', "not a UTF-8 JSON document"),
        (GOLDEN + b"}", "not a UTF-8 JSON document"),
        (b"[]", "expected a JSON object, found list"),
        (_document(expressions=...), "field 'expressions' is missing"),
        (_document(defaultBucketNumber=...), "field 'defaultBucketNumber' is missing"),
        (_document(rule=...), "field 'rule' is missing"),
        (_document(version=...), "field 'version' is missing"),
        (_document(instant=...), "field 'instant' is missing"),
        (_document(defaultBucketNumber="8"), "field 'defaultBucketNumber' is \"8\", expected a JSON 32-bit"),
        (_document(defaultBucketNumber=8.0), "field 'defaultBucketNumber' is 8.0"),
        (_document(defaultBucketNumber=True), "field 'defaultBucketNumber' is true"),
        (_document(defaultBucketNumber=2**31), "field 'defaultBucketNumber' is 2147483648"),
        (_document(expressions=None), "field 'expressions' is null, expected a JSON string"),
        (
            _document(instant=20251111093000123),
            "field 'instant' is 20251111093000123, expected a JSON string",
        ),
        (_document(version=2), "version 2 is not 1"),
        (_document(expressions="a,1;;b,2"), "rule 2 ''"),
        (_document(expressions=""), "rule 1 ''"),
        (_document(rule="glob"), "unknown rule type 'glob'"),
    ],
)
def test_malformed_content_is_refused_naming_the_file(data: bytes, reason: str) -> None:
    with pytest.raises(InvalidHashingConfigError) as caught:
        HashingConfig.from_json(data, "/t/.hoodie/x.hashing_config")
    message = str(caught.value)
    assert message.startswith("/t/.hoodie/x.hashing_config: ")
    assert reason in message


@pytest.mark.parametrize(
    ("instants", "pending", "in_force"),
    [
        ([], set(), None),
        ([INITIAL_INSTANT], set(), INITIAL_INSTANT),
        (["20251111093000123", INITIAL_INSTANT, "20250101000000000"], set(), "20251111093000123"),
        ([INITIAL_INSTANT, "20251111093000123"], {"20251111093000123"}, INITIAL_INSTANT),
        (["20251111093000123"], {"20251111093000123"}, None),
        (["2", "10"], set(), "2"),  # compared as strings, as Hudi sorts them
    ],
)
def test_version_in_force_is_the_newest_not_pending(
    instants: list[str], pending: set[str], in_force: str | None
) -> None:
    assert select_in_force(instants, pending) == in_force


@pytest.mark.parametrize(
    ("instants", "first_active", "archived"),
    [
        (["20250101000000000", INITIAL_INSTANT, "20250201000000000"], None, []),
        ([INITIAL_INSTANT], "20250101000000000", []),  # the only older version stays
        ([INITIAL_INSTANT, "20250301000000000"], "20250101000000000", []),
        (
            ["20250301000000000", INITIAL_INSTANT, "20250101000000000", "20250201000000000"],
            "20250215000000000",
            [INITIAL_INSTANT, "20250101000000000"],  # all but the newest of the older ones
        ),
        ([INITIAL_INSTANT, "20250101000000000"], "20250101000000000", []),  # equal is not older
    ],
)
def test_archive_keeps_the_newest_version_older_than_the_first_active_commit(
    instants: list[str], first_active: str | None, archived: list[str]
) -> None:
    assert instants_to_archive(instants, first_active) == archived


@pytest.mark.spark
@pytest.mark.parametrize(
    "config",
    [
        CONFIG,
        HashingConfig('é"\x01\x1f\t\n\\/\u2028\x7f😀,2', 2147483647, "REGEX", 1, INITIAL_INSTANT),
    ],
)
def test_json_bytes_equal_jacksons_pretty_printer(jvm: object, config: HashingConfig) -> None:
    mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()  # type: ignore[attr-defined]
    node = mapper.createObjectNode()
    node.put("expressions", config.expressions)
    node.put("defaultBucketNumber", config.default_bucket_number)
    node.put("rule", config.rule)
    node.put("version", config.version)
    node.put("instant", config.instant)
    expected = mapper.writerWithDefaultPrettyPrinter().writeValueAsString(node)
    assert config.to_json() == expected.encode("utf-8")

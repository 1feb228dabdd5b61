"""hoodie.properties: Java's properties dialect (the JVM is the oracle), Hudi's checksum, the typed view."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.errors import IllegalArgumentException

from hudi_bucket.core.properties import (
    HudiTableConfig,
    Properties,
    TableConfig,
    parse_properties,
    table_checksum,
    with_valid_checksum,
)
from hudi_bucket.errors import CorruptTableError
from lib.paths import ALL_TABLES
from lib.written_tables import TABLES

# What the fixture README says of each table: version, type, partition fields, hive-style, record key.
EXPECTED = {
    "cow_v6_complexkeygen_hivestyle": (6, "COPY_ON_WRITE", ("byteField", "shortField"), True, ("id", "name")),
    "cow_v6_empty": (6, "COPY_ON_WRITE", (), True, ("id",)),
    "cow_v6_nonpartitioned": (6, "COPY_ON_WRITE", (), True, ("id",)),
    "cow_v6_simplekeygen_nonhivestyle": (6, "COPY_ON_WRITE", ("byteField",), False, ("id",)),
    "cow_v6_simplekeygen_nonhivestyle_overwritetable": (6, "COPY_ON_WRITE", ("byteField",), False, ("id",)),
    "cow_v8_complexkeygen_hivestyle": (8, "COPY_ON_WRITE", ("byteField", "shortField"), True, ("id", "name")),
    "cow_v8_empty": (8, "COPY_ON_WRITE", (), True, ("id",)),
    "cow_v8_nonpartitioned": (8, "COPY_ON_WRITE", (), True, ("id",)),
    "cow_v8_simplekeygen_nonhivestyle": (8, "COPY_ON_WRITE", ("byteField",), False, ("id",)),
    "cow_v9_txns_nonpart_meta": (9, "COPY_ON_WRITE", (), True, ("txn_id",)),
    "cow_v9_txns_simple_meta": (9, "COPY_ON_WRITE", ("region",), True, ("txn_id",)),
    "cow_v9_txns_simple_overwrite": (9, "COPY_ON_WRITE", ("region",), False, ("txn_id",)),
    "mor_v9_txns_simple_meta": (9, "MERGE_ON_READ", ("region",), True, ("txn_id",)),
}

# Values whose escaping is easy to get wrong: separators, comment marks, blanks, controls, non-ASCII.
TRICKY = [
    ("plain.key", "plain value"),
    ("a:b=c#d!e", "x:y=z#w!v"),
    (" lead", " leading and trailing "),
    ("in side", "  two leading"),
    ("tab\tkey", "tab\tnew\nline\rret\fff"),
    ("back\\slash", "C:\\path\\to\\"),
    ("unicode", "é€😀 ß"),
    ("#hash", "!bang"),
    ("", ""),
    ("nul", "\x00\x1f\x7f\x80\xff"),
    ("json", '{"type":"record","fields":[{"name":"id"}]}'),
]


def fixture_property_files(root: Path) -> list[Path]:
    """The table's hoodie.properties and, when there is one, its metadata table's."""
    files = [
        root / ".hoodie" / "hoodie.properties",
        root / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties",
    ]
    return [f for f in files if f.exists()]


def java_load(jvm: Any, data: bytes | str) -> dict[str, str]:
    """What java.util.Properties.load reads: from a stream for bytes (as Hudi reads), else a reader."""
    props = jvm.java.util.Properties()
    if isinstance(data, bytes):
        props.load(jvm.java.io.ByteArrayInputStream(bytearray(data)))
    else:
        props.load(jvm.java.io.StringReader(data))
    return {name: props.getProperty(name) for name in props.stringPropertyNames()}


def java_store_lines(jvm: Any, entries: dict[str, str]) -> list[bytes]:
    """The entry lines Properties.store writes to a stream (as Hudi writes), without its date comment."""
    props = jvm.java.util.Properties()
    for key, value in entries.items():
        props.setProperty(key, value)
    out = jvm.java.io.ByteArrayOutputStream()
    props.store(out, None)
    date_line, *lines = bytes(out.toByteArray()).splitlines(keepends=True)
    assert date_line.startswith(b"#")
    return lines


# --- real fixtures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("table", ALL_TABLES)
def test_every_fixture_file_parses_and_renders_back_byte_for_byte(
    fixture_table: Callable[[str], Path], table: str
) -> None:
    for path in fixture_property_files(fixture_table(table)):
        data = path.read_bytes()
        props = parse_properties(data, source=str(path))
        assert props.header[0].startswith(("#Properties saved on ", "#Updated at "))
        assert props.render() == data
        assert parse_properties(props.render()) == props


@pytest.mark.parametrize("table", ALL_TABLES)
def test_checksums_equal_the_fixtures(fixture_table: Callable[[str], Path], table: str) -> None:
    files = fixture_property_files(fixture_table(table))
    assert len(files) == (2 if "_v9_" in table else 1)  # every v9 fixture has a metadata table
    for path in files:
        props = parse_properties(path.read_bytes(), source=str(path))
        assert table_checksum(props) == int(props[HudiTableConfig.CHECKSUM.key])
        assert with_valid_checksum(props).render() == props.render()


@pytest.mark.parametrize("table", ALL_TABLES)
def test_the_typed_view_reads_what_the_fixture_readme_says(
    fixture_table: Callable[[str], Path], table: str
) -> None:
    props = parse_properties((fixture_table(table) / ".hoodie" / "hoodie.properties").read_bytes())
    config = TableConfig(props)
    version, table_type, partition_fields, hive_style, record_key = EXPECTED[table]
    # Table names drop the cow_/mor_ prefix of the zip's name; the v9 ones carry it after "txns_".
    assert config.table_name == table.split("_", 1)[1].replace("txns_", f"txns_{table[:3]}_")
    assert config.database_name == "default"
    assert config.table_version == version
    assert config.timeline_layout_version == (1 if version == 6 else 2)
    assert config.table_type == table_type
    assert config.partition_fields == partition_fields
    assert config.hive_style_partitioning is hive_style
    assert config.record_key_fields == record_key
    assert config.url_encode_partitioning is False
    assert config.drop_partition_columns is False
    assert config.base_file_format == "PARQUET"
    assert config.timeline_path == "timeline"
    assert '"type":"record"' in (config.create_schema or "")
    assert ("files" in config.metadata_partitions) is ("_v9_" in table)
    assert config.metadata_partitions_inflight == ()
    assert (config.key_generator_class is None) is (version >= 8)
    assert (config.key_generator_type is None) is (version == 6)


def test_the_metadata_tables_own_file_reads_as_a_merge_on_read_hfile_table(
    fixture_table: Callable[[str], Path],
) -> None:
    root = fixture_table("cow_v9_txns_simple_meta")
    config = TableConfig(parse_properties(fixture_property_files(root)[1].read_bytes()))
    assert config.table_name == "v9_txns_cow_simple_meta_metadata"
    assert config.database_name is None
    assert config.table_type == "MERGE_ON_READ"
    assert config.base_file_format == "HFILE"
    assert config.record_key_fields == ("key",)


@pytest.mark.parametrize("table", list(TABLES))
def test_every_file_hudi_writes_reads_as_java_reads_it_and_renders_back_byte_for_byte(
    jvm: Any, written_table: Callable[[str], Path], table: str
) -> None:
    root = written_table(table)
    files = fixture_property_files(root)
    assert len(files) == (2 if TABLES[table].metadata_table else 1)
    for path in files:
        data = path.read_bytes()
        props = parse_properties(data, source=str(path))
        assert props.render() == data
        assert java_load(jvm, data) == dict(props)
        assert table_checksum(props) == int(props[HudiTableConfig.CHECKSUM.key])
    config, shape = TableConfig(parse_properties(files[0].read_bytes())), TABLES[table]
    assert config.table_name == table
    assert config.table_version == shape.version
    assert config.timeline_layout_version == (1 if shape.version == 6 else 2)
    assert config.table_type == ("MERGE_ON_READ" if shape.merge_on_read else "COPY_ON_WRITE")
    assert config.partition_fields == shape.partition_fields
    assert config.hive_style_partitioning is shape.hive_style
    assert config.record_key_fields == shape.record_key
    assert ("files" in config.metadata_partitions) is shape.metadata_table


# --- parsing ------------------------------------------------------------------------------------------


def test_separators_are_equals_colon_or_blanks() -> None:
    text = "a=1\nb:2\nc 3\nd \t = 4\ne\t:5\nf= =6\ng\nh=\n"
    assert dict(parse_properties(text)) == {
        "a": "1",
        "b": "2",
        "c": "3",
        "d": "4",
        "e": "5",
        "f": "=6",
        "g": "",
        "h": "",
    }


def test_comments_blank_lines_and_leading_blanks_are_skipped() -> None:
    text = "# one\n! two\n\n   \n  \t key = value \n   # indented comment\n"
    assert dict(parse_properties(text)) == {"key": "value "}


def test_escapes_in_keys_and_values() -> None:
    text = r"a\:b\=c\ d = \ x\ty\n\u00e9\u20AC\\ \q" + "\n"
    assert dict(parse_properties(text)) == {"a:b=c d": " x\ty\né€\\ q"}


def test_escaped_surrogate_pairs_make_one_character() -> None:
    assert parse_properties(r"k=\ud83d\ude00")["k"] == "😀"


def test_continuation_lines_join_without_their_leading_blanks() -> None:
    text = "long = first,\\\n     second,\\\n\tthird\nnext = \\\\\nlast=x"
    assert dict(parse_properties(text)) == {"long": "first,second,third", "next": "\\", "last": "x"}


def test_an_empty_continuation_line_ends_the_entry() -> None:
    assert dict(parse_properties("a=1\\\n\nb=2")) == {"a": "1", "b": "2"}


def test_crlf_and_cr_line_endings() -> None:
    assert dict(parse_properties("a=1\r\nb=2\rc=3\\\r\n  4")) == {"a": "1", "b": "2", "c": "34"}


def test_bytes_are_read_as_iso_8859_1_like_a_java_stream() -> None:
    assert parse_properties(b"k=caf\xe9")["k"] == "café"


def test_a_repeated_key_keeps_its_first_place_and_last_value() -> None:
    assert parse_properties("a=1\nb=2\na=3").entries == (("a", "3"), ("b", "2"))


def test_only_the_leading_comments_are_the_header() -> None:
    props = parse_properties("#saved\n! by hand\na=1\n# lost\nb=2\n")
    assert props.header == ("#saved", "! by hand")
    assert props.render() == b"#saved\n! by hand\na=1\nb=2\n"


@pytest.mark.parametrize("text", ["k=\\u12", "k=\\u00zz", "k=\\uXYZW", "\\u=v", "k=\\u١٢٣٤"])
def test_a_malformed_unicode_escape_is_a_corrupt_file(text: str) -> None:
    with pytest.raises(CorruptTableError, match=r"^/t/\.hoodie/hoodie\.properties, line 1: malformed"):
        parse_properties(f"{text}\n", source="/t/.hoodie/hoodie.properties")


def test_errors_without_a_source_still_say_where() -> None:
    with pytest.raises(CorruptTableError, match=r"^line 3: malformed \\uXXXX escape"):
        parse_properties("a=1\n\nb=\\u12")


# --- rendering and editing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "line"),
    [
        ("a:b=c#d!e", "x:y=z#w!v", r"a\:b\=c\#d\!e=x\:y\=z\#w\!v"),
        (" lead", " leading and trailing ", r"\ lead=\ leading and trailing "),
        ("in side", "a b", r"in\ side=a b"),
        ("ctl", "\t\n\r\f", r"ctl=\t\n\r\f"),
        ("back\\slash", "C:\\x\\", r"back\\slash=C\:\\x\\"),
        ("unicode", "é€😀", r"unicode=\u00E9\u20AC\uD83D\uDE00"),
    ],
)
def test_rendering_escapes_as_java_does(key: str, value: str, line: str) -> None:
    assert Properties(((key, value),)).render() == f"{line}\n".encode()


def test_set_replaces_in_place_and_appends_new_keys() -> None:
    props = parse_properties("#header\na=1\nb=2\n")
    edited = props.set("a", "x").set("c", "3")
    assert edited.render() == b"#header\na=x\nb=2\nc=3\n"
    assert props["a"] == "1"


def test_remove_drops_a_key_and_ignores_an_absent_one() -> None:
    props = parse_properties("#header\na=1\nb=2\n", source="hoodie.properties")
    edited = props.remove("a").remove("missing")
    assert edited.entries == (("b", "2"),)
    assert edited.header == ("#header",)
    assert edited.source == "hoodie.properties"


def test_properties_read_like_a_mapping() -> None:
    props = parse_properties("b=2\na=1\n")
    assert list(props) == ["b", "a"]
    assert list(props.items()) == [("b", "2"), ("a", "1")]
    assert len(props) == 2
    assert props.get("missing") is None
    assert "a" in props


def test_duplicate_keys_cannot_be_built() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        Properties((("a", "1"), ("a", "2")))


# --- checksum -------------------------------------------------------------------------------------------


def test_the_checksum_is_crc32_of_database_dot_table_name() -> None:
    props = parse_properties("hoodie.database.name=db\nhoodie.table.name=t\n")
    assert table_checksum(props) == zlib.crc32(b"db.t")
    assert table_checksum(props.remove("hoodie.database.name")) == zlib.crc32(b".t")
    assert table_checksum(props.set("hoodie.table.name", "café")) == zlib.crc32("db.café".encode())


def test_a_valid_checksum_stays_in_place_or_is_appended_last() -> None:
    props = parse_properties("hoodie.table.name=t\nhoodie.table.checksum=1\nhoodie.table.version=9\n")
    fixed = with_valid_checksum(props.set("hoodie.table.name", "renamed"))
    assert list(fixed) == ["hoodie.table.name", "hoodie.table.checksum", "hoodie.table.version"]
    assert fixed["hoodie.table.checksum"] == str(zlib.crc32(b".renamed"))
    appended = with_valid_checksum(props.remove("hoodie.table.checksum"))
    assert list(appended)[-1] == "hoodie.table.checksum"


def test_a_checksum_needs_a_table_name() -> None:
    with pytest.raises(
        CorruptTableError, match=r"^/t/\.hoodie/hoodie\.properties: hoodie\.table\.name is missing"
    ):
        table_checksum(parse_properties("hoodie.database.name=db\n", source="/t/.hoodie/hoodie.properties"))


# --- the typed view -------------------------------------------------------------------------------------


@pytest.mark.parametrize("attribute", ["table_name", "table_type", "table_version"])
def test_a_missing_required_key_is_a_corrupt_table(attribute: str) -> None:
    props = parse_properties("hoodie.database.name=db\n", source="/t/.hoodie/hoodie.properties")
    with pytest.raises(
        CorruptTableError, match=r"^/t/\.hoodie/hoodie\.properties: hoodie\.table\.\w+ is missing"
    ) as caught:
        getattr(TableConfig(props), attribute)
    assert "Hudi's own tools" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "attribute", "message"),
    [
        ("hoodie.table.version=nine", "table_version", "hoodie.table.version=nine is not a number"),
        ("hoodie.table.version=9 ", "table_version", "is not a number"),
        ("hoodie.timeline.layout.version=2.0", "timeline_layout_version", "is not a number"),
        ("hoodie.table.type=cow", "table_type", "hoodie.table.type=cow is not a Hudi table type"),
    ],
)
def test_values_hudi_could_not_parse_are_a_corrupt_table(text: str, attribute: str, message: str) -> None:
    with pytest.raises(CorruptTableError, match=message):
        getattr(TableConfig(parse_properties(text, source="hoodie.properties")), attribute)


def test_absent_optional_keys_take_hudis_defaults() -> None:
    config = TableConfig(parse_properties("hoodie.table.name=t\n"))
    assert config.timeline_path == "timeline"
    assert config.base_file_format == "PARQUET"
    assert config.hive_style_partitioning is False
    assert config.url_encode_partitioning is False
    assert config.drop_partition_columns is False
    assert config.partition_fields == ()
    assert config.record_key_fields == ()
    assert config.metadata_partitions == ()
    assert config.ordering_fields == ()
    assert config.index_definitions_path is None
    assert config.create_schema is None
    assert config.get(HudiTableConfig.TIMELINE_PATH) == "timeline"


@pytest.mark.parametrize(("version", "layout"), [("5", 1), ("6", 1), ("8", 2), ("9", 2)])
def test_an_absent_timeline_layout_follows_the_table_version(version: str, layout: int) -> None:
    props = parse_properties(f"hoodie.table.version={version}\n")
    assert TableConfig(props).timeline_layout_version == layout


def test_booleans_read_like_javas_parse_boolean() -> None:
    config = TableConfig(parse_properties("hoodie.datasource.write.hive_style_partitioning=TRUE\n"))
    assert config.hive_style_partitioning is True
    config = TableConfig(parse_properties("hoodie.datasource.write.hive_style_partitioning=yes\n"))
    assert config.hive_style_partitioning is False


def test_partition_fields_drop_custom_key_generator_types() -> None:
    text = "hoodie.table.partition.fields=region:SIMPLE,ts:TIMESTAMP,,plain\n"
    assert TableConfig(parse_properties(text)).partition_fields == ("region", "ts", "plain")


def test_ordering_fields_fall_back_to_the_pre_v9_precombine_key() -> None:
    old = TableConfig(parse_properties("hoodie.table.precombine.field=ts\n"))
    new = TableConfig(
        parse_properties("hoodie.table.ordering.fields=a,b\nhoodie.table.precombine.field=ts\n")
    )
    assert old.ordering_fields == ("ts",)
    assert new.ordering_fields == ("a", "b")


def test_the_key_enum_has_one_hoodie_key_per_member() -> None:
    keys = [member.key for member in HudiTableConfig]
    assert len(set(keys)) == len(keys)
    assert all(key.startswith("hoodie.") for key in keys)


# --- the JVM as oracle ----------------------------------------------------------------------------------

# Pieces that exercise every rule of the format; joined at random they make hostile properties text.
PIECES = [
    *"ab =:\t\f\\#!u0",
    "\n",
    "\r",
    "\r\n",
    "\\\n",
    "\\u0041",
    "\\u00e9",
    "\\u20AC",
    "\\u00",
    "é",
    "€",
]


@pytest.mark.spark
@pytest.mark.parametrize(("key", "value"), TRICKY)
def test_rendering_is_byte_equal_to_javas_store(jvm: Any, key: str, value: str) -> None:
    assert Properties(((key, value),)).render().splitlines(keepends=True) == java_store_lines(
        jvm, {key: value}
    )


@pytest.mark.spark
def test_java_loads_our_rendering_back_to_the_same_map(jvm: Any) -> None:
    props = Properties(tuple(TRICKY), header=("#edited by hudi-bucket-operator",))
    assert java_load(jvm, props.render()) == dict(TRICKY)


@pytest.mark.spark
@settings(max_examples=150, deadline=None)
@given(entries=st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=5))
def test_random_entries_render_as_java_stores_them_and_load_back(jvm: Any, entries: dict[str, str]) -> None:
    rendered = Properties(tuple(entries.items())).render()
    assert sorted(rendered.splitlines(keepends=True)) == sorted(java_store_lines(jvm, entries))
    assert java_load(jvm, rendered) == entries
    assert dict(parse_properties(rendered)) == entries


@pytest.mark.spark
@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=24).map("".join))
def test_parsing_agrees_with_java_on_hostile_text(jvm: Any, text: str) -> None:
    try:
        expected: dict[str, str] | None = java_load(jvm, text)
    except IllegalArgumentException:
        expected = None  # Java rejects a malformed \uXXXX escape
    if expected is None:
        with pytest.raises(CorruptTableError):
            parse_properties(text)
    else:
        assert dict(parse_properties(text)) == expected


@pytest.mark.spark
def test_java_reads_every_byte_value_as_we_do(jvm: Any) -> None:
    data = b"k=" + bytes(b for b in range(32, 256) if b != ord("\\")) + b"\n"
    assert java_load(jvm, data) == dict(parse_properties(data))


@pytest.mark.spark
@pytest.mark.parametrize("table", ALL_TABLES)
def test_java_reads_every_fixture_file_as_we_do(
    jvm: Any, fixture_table: Callable[[str], Path], table: str
) -> None:
    for path in fixture_property_files(fixture_table(table)):
        data = path.read_bytes()
        assert java_load(jvm, data) == dict(parse_properties(data))

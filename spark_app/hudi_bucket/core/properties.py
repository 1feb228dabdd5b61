"""``hoodie.properties``: Java properties syntax, Hudi's table checksum and the keys this project reads.

Hudi reads and writes the file with ``java.util.Properties`` over byte streams: ISO-8859-1 text, every
character outside printable ASCII written as ``\\uXXXX``. We parse and render exactly that dialect, keeping
key order and the comment header, so an edited file differs from Hudi's only where we changed it.
No I/O here: callers pass the bytes in and write the rendered bytes out.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum

from hudi_bucket.errors import CorruptTableError

_BLANKS = " \t\f"  # what Java counts as white space in a properties line
_NEWLINE = re.compile(r"\r\n|\r|\n")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_CONTROL_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WRITTEN_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "\\": "\\\\"}
_ESCAPED_PUNCTUATION = frozenset("=:#!")


@dataclass(frozen=True)
class Properties(Mapping[str, str]):
    """An ordered, immutable properties file: its leading comment lines and its entries (a Mapping too).

    Comments after the first entry are dropped (Java never writes any). ``source`` names the file in
    errors and takes no part in equality.
    """

    entries: tuple[tuple[str, str], ...] = ()
    header: tuple[str, ...] = ()
    source: str | None = field(default=None, compare=False)
    _values: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = dict(self.entries)
        if len(values) != len(self.entries):
            raise ValueError("duplicate keys in properties entries")
        object.__setattr__(self, "_values", values)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def set(self, key: str, value: str) -> Properties:
        """A copy with ``key`` set: in place when present (as Java keeps it), else appended."""
        if key in self._values:
            entries = tuple((k, value if k == key else v) for k, v in self.entries)
        else:
            entries = (*self.entries, (key, value))
        return Properties(entries, self.header, self.source)

    def remove(self, key: str) -> Properties:
        """A copy without ``key``; removing an absent key is not an error."""
        return Properties(tuple(kv for kv in self.entries if kv[0] != key), self.header, self.source)

    def render(self) -> bytes:
        """The file as ``Properties.store`` writes it to a stream, under our header instead of a date."""
        lines = [_escape_comment(comment) for comment in self.header]
        lines += [
            f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}" for key, value in self.entries
        ]
        return "".join(f"{line}\n" for line in lines).encode("latin-1")

    def corrupt(self, message: str) -> CorruptTableError:
        """An error about this file, naming it when its source is known."""
        return CorruptTableError(f"{self.source}: {message}" if self.source else message)


def parse_properties(data: bytes | str, source: str | None = None) -> Properties:
    """Parse properties text as ``Properties.load`` does (bytes are ISO-8859-1, as Java reads a stream).

    A repeated key keeps its first position and its last value. A malformed ``\\uXXXX`` escape raises
    CorruptTableError naming ``source``.
    """
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    header: list[str] = []
    values: dict[str, str] = {}
    for number, line, is_comment in _logical_lines(text):
        if is_comment:
            if not values:
                header.append(line)
            continue
        raw_key, raw_value = _split_entry(line)
        try:
            values[_unescape(raw_key)] = _unescape(raw_value)
        except ValueError as exc:
            where = f"{source}, line {number}" if source else f"line {number}"
            raise CorruptTableError(f"{where}: {exc}") from None
    return Properties(tuple(values.items()), tuple(header), source)


def _logical_lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(first line number, text, is comment) per logical line, leading blanks removed.

    A line ending in an odd number of backslashes continues on the next line, whose leading blanks are
    dropped; an empty continuation ends it. Comments start a logical line and never continue. Java's
    corner cases are kept: an entry that is only a backslash vanishes before an empty or comment line,
    and is an empty key when it ends the file (unless CRLF follows).
    """
    lines = _NEWLINE.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the text ends with a line break, not with an empty line
    index = 0
    while index < len(lines):
        number = index + 1
        line = lines[index].lstrip(_BLANKS)
        index += 1
        if not line:
            continue
        if line[0] in "#!":
            yield number, line, True
            continue
        vanished = False
        while _ends_in_escape(line):
            line = line[:-1]
            if index == len(lines):
                vanished = not line and text.endswith("\r\n")
                break
            following = lines[index].lstrip(_BLANKS)
            index += 1
            if not following or (not line and following[0] in "#!"):
                vanished = not line
                break
            line += following
        if not vanished:
            yield number, line, False


def _ends_in_escape(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split_entry(line: str) -> tuple[str, str]:
    """Split at the first unescaped ``=``, ``:`` or blank; a blank separator may be followed by one
    ``=`` or ``:``. Both parts are still escaped."""
    escaped = False
    for index, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "=:":
            return line[:index], line[index + 1 :].lstrip(_BLANKS)
        elif char in _BLANKS:
            value = line[index + 1 :].lstrip(_BLANKS)
            if value[:1] in ("=", ":"):
                value = value[1:].lstrip(_BLANKS)
            return line[:index], value
    return line, ""


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        escaped = next(chars, "")
        if escaped == "u":
            digits = "".join(next(chars, "") for _ in range(4))
            if len(digits) < 4 or not _HEX_DIGITS.issuperset(digits):
                raise ValueError(f"malformed \\uXXXX escape '\\u{digits}'")
            out.append(chr(int(digits, 16)))
        else:
            out.append(_CONTROL_ESCAPES.get(escaped, escaped))
    # \u escapes are UTF-16 code units: join surrogate pairs into the characters they encode.
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _escape(text: str, *, is_key: bool) -> str:
    """Escape as Java writes: specials backslashed, spaces only leading (or anywhere in a key),
    anything outside printable ASCII as ``\\uXXXX`` per UTF-16 code unit."""
    out: list[str] = []
    for index, char in enumerate(text):
        if char in _WRITTEN_ESCAPES:
            out.append(_WRITTEN_ESCAPES[char])
        elif char == " ":
            out.append("\\ " if is_key or index == 0 else " ")
        elif char in _ESCAPED_PUNCTUATION:
            out.append("\\" + char)
        elif " " < char <= "~":
            out.append(char)
        else:
            out.append(_utf16_escape(char))
    return "".join(out)


def _escape_comment(comment: str) -> str:
    """A comment line as Java writes one: ISO-8859-1 as is, anything beyond as ``\\uXXXX``."""
    return "".join(char if char <= "\xff" else _utf16_escape(char) for char in comment)


def _utf16_escape(char: str) -> str:
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))


class HudiTableConfig(Enum):
    """The ``hoodie.properties`` keys this project reads, each with Hudi's default (None: no default).

    Name, type and version have none here: Hudi writes them when it creates a table, so a file without
    them is corrupt.
    """

    DATABASE_NAME = ("hoodie.database.name", None)
    TABLE_NAME = ("hoodie.table.name", None)
    TABLE_TYPE = ("hoodie.table.type", None)
    TABLE_VERSION = ("hoodie.table.version", None)
    TIMELINE_LAYOUT_VERSION = ("hoodie.timeline.layout.version", None)
    TIMELINE_PATH = ("hoodie.timeline.path", "timeline")
    RECORD_KEY_FIELDS = ("hoodie.table.recordkey.fields", None)
    PARTITION_FIELDS = ("hoodie.table.partition.fields", None)
    KEY_GENERATOR_CLASS = ("hoodie.table.keygenerator.class", None)
    KEY_GENERATOR_TYPE = ("hoodie.table.keygenerator.type", None)
    HIVE_STYLE_PARTITIONING = ("hoodie.datasource.write.hive_style_partitioning", "false")
    URL_ENCODE_PARTITIONING = ("hoodie.datasource.write.partitionpath.urlencode", "false")
    DROP_PARTITION_COLUMNS = ("hoodie.datasource.write.drop.partition.columns", "false")
    POPULATE_META_FIELDS = ("hoodie.populate.meta.fields", "true")
    METADATA_PARTITIONS = ("hoodie.table.metadata.partitions", None)
    METADATA_PARTITIONS_INFLIGHT = ("hoodie.table.metadata.partitions.inflight", None)
    BASE_FILE_FORMAT = ("hoodie.table.base.file.format", "PARQUET")
    ORDERING_FIELDS = ("hoodie.table.ordering.fields", None)  # table version 9 on
    PRECOMBINE_FIELD = ("hoodie.table.precombine.field", None)  # its name before version 9
    INDEX_DEFINITIONS_PATH = ("hoodie.table.index.defs.path", None)
    CREATE_SCHEMA = ("hoodie.table.create.schema", None)
    BOOTSTRAP_BASE_PATH = ("hoodie.bootstrap.base.path", None)  # set by an RFC-12 bootstrap
    CHECKSUM = ("hoodie.table.checksum", None)

    def __init__(self, key: str, default: str | None) -> None:
        self.key = key
        self.default = default


_TABLE_TYPES = frozenset({"COPY_ON_WRITE", "MERGE_ON_READ"})


def table_checksum(props: Properties) -> int:
    """Hudi's ``hoodie.table.checksum``: CRC-32 of the UTF-8 text ``<database>.<table name>``, the
    database being empty when absent. It guards against a half-written file, not against edits."""
    database = props.get(HudiTableConfig.DATABASE_NAME.key, "")
    name = TableConfig(props).table_name
    return zlib.crc32(f"{database}.{name}".encode())


def with_valid_checksum(props: Properties) -> Properties:
    """A copy whose checksum matches its database and table name (kept in place, else appended last)."""
    return props.set(HudiTableConfig.CHECKSUM.key, str(table_checksum(props)))


@dataclass(frozen=True)
class TableConfig:
    """A typed, read-only view of ``hoodie.properties``; reading a missing required key or a value Hudi
    could not parse raises CorruptTableError naming the file."""

    props: Properties

    def get(self, key: HudiTableConfig) -> str | None:
        return self.props.get(key.key, key.default)

    @property
    def table_name(self) -> str:
        return self._required(HudiTableConfig.TABLE_NAME)

    @property
    def database_name(self) -> str | None:
        return self.get(HudiTableConfig.DATABASE_NAME)

    @property
    def table_type(self) -> str:
        value = self._required(HudiTableConfig.TABLE_TYPE)
        if value not in _TABLE_TYPES:
            raise self.props.corrupt(f"{HudiTableConfig.TABLE_TYPE.key}={value} is not a Hudi table type")
        return value

    @property
    def table_version(self) -> int:
        return self._int(HudiTableConfig.TABLE_VERSION, self._required(HudiTableConfig.TABLE_VERSION))

    @property
    def timeline_layout_version(self) -> int:
        """As written; when absent, the layout the table version implies (1 up to version 6, then 2)."""
        value = self.get(HudiTableConfig.TIMELINE_LAYOUT_VERSION)
        if value is None:
            return 2 if self.table_version >= 8 else 1
        return self._int(HudiTableConfig.TIMELINE_LAYOUT_VERSION, value)

    @property
    def timeline_path(self) -> str:
        return self._required(HudiTableConfig.TIMELINE_PATH)

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return self._list(HudiTableConfig.RECORD_KEY_FIELDS)

    @property
    def partition_fields(self) -> tuple[str, ...]:
        """Field names only: CustomKeyGenerator tables append ``:SIMPLE``/``:TIMESTAMP`` to each."""
        return tuple(f.split(":", 1)[0] for f in self._list(HudiTableConfig.PARTITION_FIELDS))

    @property
    def key_generator_class(self) -> str | None:
        return self.get(HudiTableConfig.KEY_GENERATOR_CLASS)

    @property
    def key_generator_type(self) -> str | None:
        return self.get(HudiTableConfig.KEY_GENERATOR_TYPE)

    @property
    def hive_style_partitioning(self) -> bool:
        return self._bool(HudiTableConfig.HIVE_STYLE_PARTITIONING)

    @property
    def url_encode_partitioning(self) -> bool:
        return self._bool(HudiTableConfig.URL_ENCODE_PARTITIONING)

    @property
    def drop_partition_columns(self) -> bool:
        return self._bool(HudiTableConfig.DROP_PARTITION_COLUMNS)

    @property
    def populate_meta_fields(self) -> bool:
        """False for "virtual keys": base files hold no record key or partition path (Hudi writes the meta
        columns null), so both come from the record's fields and its file's folder."""
        return self._bool(HudiTableConfig.POPULATE_META_FIELDS)

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        return self._list(HudiTableConfig.METADATA_PARTITIONS)

    @property
    def metadata_partitions_inflight(self) -> tuple[str, ...]:
        return self._list(HudiTableConfig.METADATA_PARTITIONS_INFLIGHT)

    @property
    def base_file_format(self) -> str:
        return self._required(HudiTableConfig.BASE_FILE_FORMAT).upper()

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        return self._list(HudiTableConfig.ORDERING_FIELDS) or self._list(HudiTableConfig.PRECOMBINE_FIELD)

    @property
    def index_definitions_path(self) -> str | None:
        return self.get(HudiTableConfig.INDEX_DEFINITIONS_PATH)

    @property
    def create_schema(self) -> str | None:
        """The Avro schema (JSON) the table was created with."""
        return self.get(HudiTableConfig.CREATE_SCHEMA)

    @property
    def bootstrap_base_path(self) -> str | None:
        """Where the source files of a bootstrapped table (RFC-12) are; None for a table never bootstrapped."""
        return self.get(HudiTableConfig.BOOTSTRAP_BASE_PATH) or None

    def _required(self, key: HudiTableConfig) -> str:
        value = self.get(key)
        if value is None:
            raise self.props.corrupt(f"{key.key} is missing")
        return value

    def _int(self, key: HudiTableConfig, value: str) -> int:
        if not _JAVA_INT.fullmatch(value):  # Java's Integer.parseInt takes no blanks or underscores
            raise self.props.corrupt(f"{key.key}={value} is not a number")
        return int(value)

    def _bool(self, key: HudiTableConfig) -> bool:
        # Java's Boolean.parseBoolean, as Hudi reads it: anything but "true" (any case) is false.
        return (self.get(key) or "").lower() == "true"

    def _list(self, key: HudiTableConfig) -> tuple[str, ...]:
        return tuple(item for item in (self.get(key) or "").split(",") if item)

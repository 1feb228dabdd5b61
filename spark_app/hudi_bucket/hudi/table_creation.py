"""Creating a new, empty COPY_ON_WRITE table (table version 8 or 9) as Hudi 1.x creates one.

``hoodie.properties`` holds what Hudi's ``TableBuilder`` writes for a Spark datasource table (checked
key by key against the v8 and v9 fixtures), without a metadata table, plus the bucket count of a plain
bucket index (``hoodie.bucket.index.num.buckets``): Hudi keeps that in the writer's options only, so a
table we create records it for later writes to follow. The folders are those of Hudi's
``createTableLayoutOnStorage``; ``hoodie.properties`` is written last and create-only, so a crash leaves
empty folders that a retry reuses, and two creators cannot both win.

The merge-mode keys written here are read back by ``merge_mode`` as Hudi 1.x infers them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from hudi_bucket.core.buckets import check_num_buckets
from hudi_bucket.core.filegroups import PARTITION_METAFILE
from hudi_bucket.core.properties import HudiTableConfig, Properties, TableConfig, with_valid_checksum
from hudi_bucket.errors import InvalidTableDefinitionError, StorageError, UnsupportedTableError
from hudi_bucket.hudi.table import COPY_ON_WRITE, HudiTable, load_table
from hudi_bucket.hudi.table_properties import BACKUP_FILE, PROPERTIES_FILE
from hudi_bucket.storage.base import Storage, join

TABLE_VERSIONS = (8, 9)

# Keys our table model does not read but a created table must carry.
INITIAL_VERSION = "hoodie.table.initial.version"
TIMELINE_HISTORY_PATH = "hoodie.timeline.history.path"
ARCHIVELOG_FOLDER = "hoodie.archivelog.folder"  # layout 1's archive; Hudi still writes it
TABLE_FORMAT = "hoodie.table.format"  # table version 9 on
RECORD_MERGE_MODE = "hoodie.record.merge.mode"
RECORD_MERGE_STRATEGY_ID = "hoodie.record.merge.strategy.id"  # table version 8 only
PAYLOAD_CLASS = "hoodie.compaction.payload.class"  # table version 8 only
NUM_BUCKETS = "hoodie.bucket.index.num.buckets"  # a plain bucket index's bucket count, recorded by us

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM = "CUSTOM"
# Hudi's HoodieRecordMerger strategy ids and the payload class version 8 pairs with each merge mode.
_MERGE_STRATEGY_IDS = {
    EVENT_TIME_ORDERING: "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
    COMMIT_TIME_ORDERING: "ce9acb64-bde0-424c-9b91-f6ebba25356d",
}
_PAYLOAD_CLASSES = {
    EVENT_TIME_ORDERING: "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    COMMIT_TIME_ORDERING: "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
}

SCHEMA_FOLDER = ".hoodie/.schema"
TEMP_FOLDER = ".hoodie/.temp"
BOOTSTRAP_PARTITIONS_FOLDER = ".hoodie/.aux/.bootstrap/.partitions"
BOOTSTRAP_FILE_IDS_FOLDER = ".hoodie/.aux/.bootstrap/.fileids"
_FOLDER_MARKER = ".hoodie_bucket_operator_mkdir"


def key_generator_type(record_key_fields: Sequence[str], partition_fields: Sequence[str]) -> str:
    """Hudi's inference (``KeyGenUtils.inferKeyGeneratorType``): no partition field is NON_PARTITION,
    one record key and one partition field SIMPLE, anything more COMPLEX."""
    if not partition_fields:
        return "NON_PARTITION"
    if len(partition_fields) == 1 and len(record_key_fields) == 1:
        return "SIMPLE"
    return "COMPLEX"


def new_table_properties(
    *,
    table_name: str,
    table_version: int,
    record_key_fields: Sequence[str],
    partition_fields: Sequence[str],
    hive_style: bool,
    url_encode: bool = False,
    ordering_fields: tuple[str, ...] = (),
    create_schema: str,
    database_name: str | None = None,
    num_buckets: int | None = None,
) -> Properties:
    """``hoodie.properties`` of a new COPY_ON_WRITE table without a metadata table.

    With ordering fields the merge mode is EVENT_TIME_ORDERING, else COMMIT_TIME_ORDERING, as Hudi
    infers it. Version 8 names the ordering fields ``precombine.field`` and also records a merge strategy
    id and payload class; version 9 names them ``ordering.fields`` and adds ``table.format``.
    ``num_buckets`` (a plain bucket index's count) is recorded when given.
    """
    _check_new_table(table_name, table_version, record_key_fields, partition_fields, ordering_fields)
    _check_create_schema(create_schema)
    if num_buckets is not None:
        check_num_buckets(num_buckets)
    merge_mode = EVENT_TIME_ORDERING if ordering_fields else COMMIT_TIME_ORDERING
    keys = HudiTableConfig
    entries: list[tuple[str, str]] = []
    if database_name:
        entries.append((keys.DATABASE_NAME.key, database_name))
    entries += [
        (keys.TABLE_NAME.key, table_name),
        (keys.TABLE_TYPE.key, COPY_ON_WRITE),
        (keys.TABLE_VERSION.key, str(table_version)),
        (INITIAL_VERSION, str(table_version)),
        (keys.TIMELINE_LAYOUT_VERSION.key, "2"),
        (keys.TIMELINE_PATH.key, "timeline"),
        (TIMELINE_HISTORY_PATH, "history"),
        (ARCHIVELOG_FOLDER, "archived"),
    ]
    if table_version >= 9:
        entries.append((TABLE_FORMAT, "native"))
    entries += [
        (keys.BASE_FILE_FORMAT.key, "PARQUET"),
        (keys.RECORD_KEY_FIELDS.key, ",".join(record_key_fields)),
    ]
    if partition_fields:
        entries.append((keys.PARTITION_FIELDS.key, ",".join(partition_fields)))
    entries += [
        (keys.KEY_GENERATOR_TYPE.key, key_generator_type(record_key_fields, partition_fields)),
        (keys.HIVE_STYLE_PARTITIONING.key, _java_bool(hive_style)),
        (keys.URL_ENCODE_PARTITIONING.key, _java_bool(url_encode)),
        (keys.DROP_PARTITION_COLUMNS.key, "false"),
        (RECORD_MERGE_MODE, merge_mode),
    ]
    if table_version == 8:
        entries += [
            (PAYLOAD_CLASS, _PAYLOAD_CLASSES[merge_mode]),
            (RECORD_MERGE_STRATEGY_ID, _MERGE_STRATEGY_IDS[merge_mode]),
        ]
    if ordering_fields:
        key = keys.PRECOMBINE_FIELD if table_version == 8 else keys.ORDERING_FIELDS
        entries.append((key.key, ",".join(ordering_fields)))
    if num_buckets is not None:
        entries.append((NUM_BUCKETS, str(num_buckets)))
    entries += [
        (keys.METADATA_PARTITIONS.key, ""),
        (keys.METADATA_PARTITIONS_INFLIGHT.key, ""),
        (keys.CREATE_SCHEMA.key, create_schema),
    ]
    now = datetime.now(UTC)
    header = (f"#Properties saved on {now.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}", _java_date_comment(now))
    return with_valid_checksum(Properties(tuple(entries), header))


def create_table(storage: Storage, props: Properties) -> HudiTable:
    """Lay out a new table at the storage root and return it as loaded from storage.

    Refuses, touching nothing, when a table (``hoodie.properties`` or its backup) is already there.
    """
    for path in (PROPERTIES_FILE, BACKUP_FILE):
        if storage.exists(path):
            raise StorageError(
                f"{storage.uri} already holds a Hudi table ({path}); refusing to create one over it",
                hint="pick a new location, or manage the existing table",
            )
    config = TableConfig(props)
    if config.table_version not in TABLE_VERSIONS or config.timeline_layout_version != 2:
        raise UnsupportedTableError(
            f"we create tables of version 8 or 9 (timeline layout 2), not version {config.table_version}",
            hint="build the properties with new_table_properties",
        )
    timeline = join(".hoodie", config.timeline_path)
    history = join(timeline, props.get(TIMELINE_HISTORY_PATH, "history"))
    for folder in (
        SCHEMA_FOLDER,
        history,
        TEMP_FOLDER,
        BOOTSTRAP_PARTITIONS_FOLDER,
        BOOTSTRAP_FILE_IDS_FOLDER,
    ):
        _make_folder(storage, folder)
    storage.write(PROPERTIES_FILE, with_valid_checksum(props).render())
    return load_table(storage)


def merge_mode(config: TableConfig) -> str:
    """How the table merges an incoming record with a stored one, as Hudi 1.x infers it: the merge mode
    written; else the one the payload class or merge strategy id stands for (CUSTOM for any other); else
    EVENT_TIME_ORDERING when the table has ordering fields, COMMIT_TIME_ORDERING when not."""
    props = config.props
    if props.get(RECORD_MERGE_MODE):
        return props[RECORD_MERGE_MODE]
    for key, known in ((PAYLOAD_CLASS, _PAYLOAD_CLASSES), (RECORD_MERGE_STRATEGY_ID, _MERGE_STRATEGY_IDS)):
        if props.get(key):
            return next((mode for mode, value in known.items() if value == props[key]), CUSTOM)
    return EVENT_TIME_ORDERING if config.ordering_fields else COMMIT_TIME_ORDERING


def recorded_num_buckets(config: TableConfig) -> int | None:
    """The plain bucket index's count a table records (tables we create without rules), else None."""
    value = config.props.get(NUM_BUCKETS)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise config.props.corrupt(f"{NUM_BUCKETS}={value} is not a bucket count")
    return int(value)


def write_partition_metadata(storage: Storage, partition: str, commit_time: str, depth: int) -> bool:
    """Write the partition's ``.hoodie_partition_metadata`` as Hudi does, unless one is there already.

    ``depth`` is the partition path's number of folders (0 for a non-partitioned table's root): readers
    walk up that many folders to find the table. Returns whether a file was written.
    """
    folders = len(partition.split("/")) if partition else 0
    if depth != folders:
        raise ValueError(f"partition {partition!r} is {folders} folder(s) deep, not {depth}")
    path = join(partition, PARTITION_METAFILE)
    if storage.exists(path):
        return False
    entries = (("commitTime", commit_time), ("partitionDepth", str(depth)))
    metadata = Properties(entries, ("#partition metadata", _java_date_comment(datetime.now(UTC))))
    try:
        storage.write(path, metadata.render())
    except StorageError:
        if storage.exists(path):  # another writer created it first: theirs is as good as ours
            return False
        raise
    return True


def _check_new_table(
    table_name: str,
    table_version: int,
    record_key_fields: Sequence[str],
    partition_fields: Sequence[str],
    ordering_fields: Sequence[str],
) -> None:
    if table_version not in TABLE_VERSIONS:
        raise InvalidTableDefinitionError(
            f"table version {table_version}: we create tables of version 8 or 9"
        )
    if not table_name:
        raise InvalidTableDefinitionError("a table needs a name")
    if not record_key_fields:
        raise InvalidTableDefinitionError("a bucket-indexed table needs record key fields")
    for field in (*record_key_fields, *partition_fields, *ordering_fields):
        if not field or "," in field:
            raise InvalidTableDefinitionError(f"field name {field!r}: Hudi lists fields comma-separated")


def _check_create_schema(create_schema: str) -> None:
    try:
        schema = json.loads(create_schema)
    except ValueError:
        schema = None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise InvalidTableDefinitionError(
            "create_schema must be an Avro record schema (JSON), as to_avro_json writes it"
        )


def _make_folder(storage: Storage, folder: str) -> None:
    """Create an empty folder (and its parents) through a storage contract that has no mkdir: write a
    marker file, then delete it. Local and HDFS folders stay; S3A and GCS keep a directory marker."""
    if storage.exists(folder):
        return
    marker = join(folder, _FOLDER_MARKER)
    storage.write(marker, b"", overwrite=True)
    storage.delete(marker)


def _java_bool(value: bool) -> str:
    return "true" if value else "false"


def _java_date_comment(moment: datetime) -> str:
    """The date comment ``java.util.Properties.store`` writes (``Date.toString``), in UTC."""
    return moment.astimezone(UTC).strftime("#%a %b %d %H:%M:%S UTC %Y")

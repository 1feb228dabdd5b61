"""A Hudi table as found on storage: its configuration, timeline and schema (its files: ``fs_view``)."""

from __future__ import annotations

from dataclasses import dataclass

from hudi_bucket.core import properties as props
from hudi_bucket.core.metadata_indexes import MetadataIndexes, record_index_partitioned
from hudi_bucket.core.preflight import TableFacts
from hudi_bucket.core.timeline import WRITE_ACTIONS, Timeline, TimelineLayout
from hudi_bucket.errors import UnsupportedTableError
from hudi_bucket.hudi.table_properties import PROPERTIES_FILE, read_table_properties, write_table_properties
from hudi_bucket.hudi.timeline_io import TimelineStore
from hudi_bucket.storage.base import Storage, join

METADATA_TABLE_FOLDER = ".hoodie/metadata"
SUPPORTED_VERSIONS = (6, 8, 9)
COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"


@dataclass(frozen=True)
class HudiTable:
    """What we need to know of a table, read once from ``hoodie.properties`` and the timeline."""

    uri: str
    config: props.TableConfig
    timeline: Timeline
    metadata_table_exists: bool
    record_index_partitioned: bool = False  # from the index definitions: ``metadata_indexes``

    @property
    def name(self) -> str:
        return self.config.table_name

    @property
    def version(self) -> int:
        return self.config.table_version

    @property
    def layout(self) -> TimelineLayout:
        return TimelineLayout(self.config.timeline_layout_version)

    @property
    def timeline_folder(self) -> str:
        if self.layout is TimelineLayout.V1:
            return ".hoodie"
        return join(".hoodie", self.config.timeline_path)

    @property
    def is_merge_on_read(self) -> bool:
        return self.config.table_type == MERGE_ON_READ

    @property
    def metadata_table_live(self) -> bool:
        """Readers list files from the metadata table (not storage) when its `files` partition is on."""
        return "files" in self.config.metadata_partitions

    @property
    def metadata_indexes(self) -> MetadataIndexes:
        return MetadataIndexes(self.config.metadata_partitions, self.record_index_partitioned)

    def facts(self) -> TableFacts:
        """What preflight checks, read off this table."""
        return TableFacts(
            table_version=self.version,
            metadata_table_live=self.metadata_table_live,
            drop_partition_columns=self.config.drop_partition_columns,
            pending=self.timeline.pending(),
            base_file_format=self.config.base_file_format,
            secondary_indexes=tuple(
                p.removeprefix(SECONDARY_INDEX_PREFIX)
                for p in self.config.metadata_partitions
                if p.startswith(SECONDARY_INDEX_PREFIX)
            ),
            record_index_partitioned=self.record_index_partitioned,
        )


# A secondary index's partition in the metadata table: secondary_index_<index name>.
SECONDARY_INDEX_PREFIX = "secondary_index_"


def timeline_store(storage: Storage, table: HudiTable) -> TimelineStore:
    return TimelineStore(storage, table.layout, table.timeline_folder)


def load_table(storage: Storage) -> HudiTable:
    config = props.TableConfig(read_table_properties(storage))
    if config.table_version not in SUPPORTED_VERSIONS:
        raise UnsupportedTableError(
            f"{storage.uri}: table version {config.table_version} is not supported",
            hint=f"supported table versions: {', '.join(map(str, SUPPORTED_VERSIONS))}",
        )
    table = HudiTable(
        uri=storage.uri,
        config=config,
        timeline=Timeline(()),
        metadata_table_exists=storage.exists(join(METADATA_TABLE_FOLDER, PROPERTIES_FILE)),
    )
    return HudiTable(
        table.uri,
        config,
        timeline_store(storage, table).load(),
        table.metadata_table_exists,
        _record_index_partitioned(storage, config),
    )


def _record_index_partitioned(storage: Storage, config: props.TableConfig) -> bool:
    """The record index's kind, where the table has one (Hudi 1.1+ records it in its index definitions;
    an older table's record index is global)."""
    path = config.index_definitions_path
    if not MetadataIndexes(config.metadata_partitions).record_index or not path:
        return False
    if ".hoodie/" in path:  # Hudi 1.0 wrote the path whole, 1.1 relative to the table
        path = path[path.index(".hoodie/") :]
    return storage.exists(path) and record_index_partitioned(storage.read(path))


def commit_schemas(storage: Storage, table: HudiTable) -> dict[str, str]:
    """The writer schema (Avro JSON) each completed write on the active timeline recorded, by instant:
    the schema of the base files it wrote."""
    store = timeline_store(storage, table)
    schemas = {}
    for instant in table.timeline.completed():
        if instant.action in WRITE_ACTIONS:
            schema = store.read_commit_metadata(instant).extra_metadata.get("schema")
            if schema:
                schemas[instant.timestamp] = schema
    return schemas


def latest_table_schema(storage: Storage, table: HudiTable) -> str | None:
    """The writer schema (Avro JSON, without meta fields) of the newest completed write, as Hudi
    records it in ``extraMetadata.schema``; readers take the table schema from there."""
    store = timeline_store(storage, table)
    for instant in reversed(table.timeline.completed()):
        if instant.action in WRITE_ACTIONS:
            schema = store.read_commit_metadata(instant).extra_metadata.get("schema")
            if schema:
                return schema
    return table.config.create_schema


def disable_metadata_table(storage: Storage, table: HudiTable) -> HudiTable:
    """Turn the metadata table off the way Hudi does, so that readers list files from storage again.

    ``hoodie.properties`` changes first (no metadata partitions), then ``.hoodie/metadata`` goes: a crash
    in between leaves an unused folder, never readers pointed at a missing one.
    """
    updated = table.config.props.set(props.HudiTableConfig.METADATA_PARTITIONS.key, "").set(
        props.HudiTableConfig.METADATA_PARTITIONS_INFLIGHT.key, ""
    )
    write_table_properties(storage, updated)
    storage.delete(METADATA_TABLE_FOLDER, recursive=True)
    return load_table(storage)

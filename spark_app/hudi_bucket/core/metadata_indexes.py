"""The indexes a table's metadata table holds, and the write settings that keep exactly those.

A Hudi writer builds an index its settings enable and the table lacks, and deletes one they do not
enable; so whoever writes the table (our metadata writer, Hudi's procedure) is told the table's own.
The record index comes in two kinds that share one metadata partition (``record_index``): global (a
key is unique in the table) and partitioned (unique in its partition: its entries are grouped by data
partition). ``hoodie.properties`` names the partition only; the kind is in the table's index
definitions (``hoodie.table.index.defs.path``, ``isPartitioned``), and a writer told the other kind
files every entry where readers of the table's kind do not look.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hudi_bucket.errors import UnsupportedTableError

RECORD_INDEX = "record_index"
# Each index's metadata partition and the write setting that enables it.
_SETTINGS = {
    "column_stats": "hoodie.metadata.index.column.stats.enable",
    "partition_stats": "hoodie.metadata.index.partition.stats.enable",
    "bloom_filters": "hoodie.metadata.index.bloom.filter.enable",
}
GLOBAL_RECORD_INDEX = "hoodie.metadata.global.record.level.index.enable"
PARTITIONED_RECORD_INDEX = "hoodie.metadata.record.level.index.enable"


class _IndexDefinition(BaseModel):
    model_config = ConfigDict(extra="ignore")
    options: dict[str, str] = Field(default_factory=dict, alias="indexOptions")


class _IndexDefinitions(BaseModel):
    """Hudi's index definitions file (JSON), as far as we read it."""

    model_config = ConfigDict(extra="ignore")
    definitions: dict[str, _IndexDefinition] = Field(default_factory=dict, alias="indexDefinitions")


def record_index_partitioned(index_definitions: bytes) -> bool:
    """Whether the index definitions file (its bytes) defines the record index as partitioned."""
    try:
        found = _IndexDefinitions.model_validate(json.loads(index_definitions))
    except (ValueError, ValidationError) as e:
        raise UnsupportedTableError(
            f"the table's index definitions cannot be read: {e}",
            hint="Hudi writes them as JSON under .hoodie/.index_defs; see which writer changed them",
        ) from e
    definition = found.definitions.get(RECORD_INDEX)
    return definition is not None and definition.options.get("isPartitioned", "").lower() == "true"


@dataclass(frozen=True)
class MetadataIndexes:
    """The metadata partitions a table has (``hoodie.table.metadata.partitions``) and its record index's
    kind."""

    partitions: tuple[str, ...]
    record_index_partitioned: bool = False

    @property
    def record_index(self) -> bool:
        return RECORD_INDEX in self.partitions

    def settings(self) -> dict[str, bool]:
        """Each index's write setting, on exactly where the table has that index."""
        record_index = self.record_index
        return {
            **{setting: name in self.partitions for name, setting in _SETTINGS.items()},
            GLOBAL_RECORD_INDEX: record_index and not self.record_index_partitioned,
            PARTITIONED_RECORD_INDEX: record_index and self.record_index_partitioned,
        }

"""What every command works on: the session, the table's storage and model, and how keys hash."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hudi_bucket.core.heartbeat import Liveness
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.hudi.table import HudiTable, load_table
from hudi_bucket.spark.java_regex import JavaRegexMatcher
from hudi_bucket.storage import Storage, storage_for


@dataclass(frozen=True)
class TableContext:
    spark: Any
    storage: Storage
    table: HudiTable
    hash_fields: tuple[str, ...]
    key_style: KeyStyle
    liveness: Liveness = field(
        default_factory=Liveness
    )  # the heartbeat settings of the table's writers (Hudi's defaults)

    @classmethod
    def open(
        cls,
        spark: Any,
        uri: str,
        *,
        hash_fields: tuple[str, ...] = (),
        key_style: KeyStyle | None = None,
    ) -> TableContext:
        storage = storage_for(uri, spark)
        table = load_table(storage)
        return cls(
            spark=spark,
            storage=storage,
            table=table,
            hash_fields=hash_fields or table.config.record_key_fields,
            key_style=key_style or default_key_style(table),
        )

    def reload(self) -> TableContext:
        return replace(self, table=load_table(self.storage))

    @property
    def matcher(self) -> JavaRegexMatcher:
        """Rules evaluate with Java's regex in the JVM, exactly as Hudi's writers evaluate them."""
        return JavaRegexMatcher(self.spark._jvm)


def default_key_style(table: HudiTable) -> KeyStyle:
    """Tables at version 6 were written by Hudi 0.x (naive key split); 8 and 9 by Hudi 1.x."""
    return KeyStyle.HUDI_0X if table.version < 8 else KeyStyle.HUDI_1X

"""Apache Hudi itself in the tests' Spark session (its bundle is on the classpath, see conftest): Hudi's
own Spark datasource writes and reads tables, and its SQL procedures run on them.

Hudi 1.2.0 keeps one ``PartitionBucketIndexCalculator`` per JVM for each expressions string, in a plain
HashMap: two tasks creating one at once fail (ConcurrentModificationException), and a second table with
the same expressions but another default bucket count would get the first table's. Every Hudi call here
first empties that cache and creates the calculator of the table's rules on the driver (local mode:
the executors share the driver's JVM).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from hudi_bucket.core.metafields import META_COLUMNS
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.table import load_table
from hudi_bucket.storage import LocalStorage
from lib.hudi_rs import snapshot

HUDI_FORMAT = "hudi"


def hudi_version(spark: Any) -> str:
    return str(spark.sparkContext._jvm.org.apache.hudi.common.util.HoodieVersion.get())


def bucket_options(
    *,
    record_key: str,
    partition_field: str,
    ordering_field: str,
    table_version: int,
    buckets: int,
    **more: str,
) -> dict[str, str]:
    """A copy-on-write table with Hudi's simple bucket index, as a user writes it."""
    return {
        "hoodie.datasource.write.recordkey.field": record_key,
        "hoodie.datasource.write.partitionpath.field": partition_field,
        "hoodie.datasource.write.precombine.field": ordering_field,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.write.table.version": str(table_version),
        "hoodie.metadata.enable": "false",
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": str(buckets),
        **more,
    }


def hudi_write(spark: Any, path: Path, rows: Any, options: dict[str, str], operation: str = "upsert") -> None:
    """One Hudi write (a commit) of ``rows``; the table is created on the first."""
    reset_bucket_calculator(spark, path, options)
    exists = (path / ".hoodie").exists()
    name = load_table(LocalStorage(path)).name if exists else path.name.replace("-", "_")
    (
        rows.write.format(HUDI_FORMAT)
        .options(**{"hoodie.table.name": name, **options})
        .option("hoodie.datasource.write.operation", operation)
        .mode("append")
        .save(str(path))
    )


def hudi_read(spark: Any, path: Path, **options: str) -> Any:
    """Hudi's snapshot read of the table."""
    reset_bucket_calculator(spark, path, options)
    return spark.read.format(HUDI_FORMAT).options(**options).load(str(path))


def metadata_table_listing(spark: Any, path: Path | str) -> dict[str, set[str]]:
    """The files each partition holds, as the metadata table's files partition lists them (what Hudi's
    readers and writers take instead of listing storage). The metadata table is a Hudi table itself (no
    bucket table: ``hudi_read``'s calculator needs no reset). ``path``: a folder or a URI."""
    files_partition = 2  # the record type of a partition's file list (MetadataPartitionType.FILES)
    metadata = spark.read.format(HUDI_FORMAT).load(f"{path}/.hoodie/metadata")
    records = metadata.where(f"type = {files_partition}")
    return {
        r.key: {name for name, meta in (r.filesystemMetadata or {}).items() if not meta.isDeleted}
        for r in records.select("key", "filesystemMetadata").collect()
    }


def record_index(spark: Any, path: Path, partitioned: bool = False) -> dict[str, str]:
    """Where the table's record index says each record lives (its file group), for every key a snapshot
    read finds, through Hudi's own reader of the metadata table; keys it does not know are left out. A
    ``partitioned`` record index is asked partition by partition, as its readers must."""
    jvm = spark.sparkContext._jvm
    hudi = jvm.org.apache.hudi
    metadata = _metadata_reader(spark, path)
    keys: dict[str | None, Any] = {}
    for key, partition in (
        hudi_read(spark, path).select("_hoodie_record_key", "_hoodie_partition_path").collect()
    ):
        keys.setdefault(partition if partitioned else None, jvm.java.util.ArrayList()).add(key)
    found = {}
    try:
        for partition, some in keys.items():
            where = hudi.common.util.Option.ofNullable(partition)
            pairs = metadata.readRecordIndexLocationsWithKeys(
                hudi.common.data.HoodieListData.eager(some), where
            )
            found.update({pair.getKey(): pair.getValue().getFileId() for pair in pairs.collectAsList()})
        return found
    finally:
        metadata.close()


def keys_the_bloom_filters_miss(spark: Any, path: Path) -> list[str]:
    """The keys whose file has no bloom filter in the metadata table's bloom_filters partition, or one
    that does not find them, through Hudi's own reader (every file a snapshot read reads)."""
    metadata = _metadata_reader(spark, path)
    rows = hudi_read(spark, path).select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
    missed = []
    try:
        filters: dict[tuple[str, str], Any] = {}
        for key, partition, name in rows.collect():
            if (partition, name) not in filters:
                found = metadata.getBloomFilter(partition, name)
                filters[partition, name] = found.get() if found.isPresent() else None
            bloom = filters[partition, name]
            if bloom is None or not bloom.mightContain(key):
                missed.append(key)
        return missed
    finally:
        metadata.close()


def column_stats_entries(spark: Any, path: Path, column: str) -> dict[str, int]:
    """How many live column-stats entries of ``column`` the metadata table holds for each file of a snapshot
    read: one per index that covers the column (the column_stats partition, each expression index on it)."""
    column_stats = 3  # the record type of column stats, expression indexes' too (MetadataPartitionType)
    entries = hudi_read(spark, path / ".hoodie" / "metadata").where(f"type = {column_stats}")
    stats = entries.select("ColumnStatsMetadata.*").where(f"columnName = '{column}' AND NOT isDeleted")
    counts = Counter(row.fileName for row in stats.collect())
    files = {row[0] for row in hudi_read(spark, path).select("_hoodie_file_name").collect()}
    return {name: counts[name] for name in files}


def _metadata_reader(spark: Any, path: Path) -> Any:
    """Hudi's reader of the table's metadata table (close it)."""
    hudi = spark.sparkContext._jvm.org.apache.hudi
    engine = hudi.client.common.HoodieSparkEngineContext(spark.sparkContext._jsc)
    storage = hudi.storage.HoodieStorageUtils.getStorage(str(path), engine.getStorageConf())
    config = hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).build()
    return hudi.metadata.HoodieBackedTableMetadata(engine, storage, config, str(path))


def record_file_groups(spark: Any, path: Path) -> dict[str, str]:
    """The file group each record is in, as a snapshot read finds it (the file id of its file's name)."""
    rows = hudi_read(spark, path).select("_hoodie_record_key", "_hoodie_file_name").collect()
    return {key: name.lstrip(".").split("_")[0] for key, name in rows}


def storage_listing(path: Path) -> dict[str, set[str]]:
    """The data files each partition folder holds on storage: base files and log files (hidden, as Hudi
    names them), other hidden files aside."""
    return {
        folder.name: {f.name for f in folder.iterdir() if is_data_file(f.name)}
        for folder in path.iterdir()
        if folder.is_dir() and not folder.name.startswith(".")
    }


def is_data_file(name: str) -> bool:
    """A base file or a log file (hidden, as Hudi names them), not another hidden file or a checksum."""
    return (not name.startswith(".") or ".log." in name) and not name.endswith(".crc")


def data_rows(frame: Any) -> list[tuple]:
    """The rows Hudi reads, data columns only (sorted by name), in a stable order."""
    columns = sorted(c for c in frame.columns if c not in META_COLUMNS)
    return sorted((tuple(r) for r in frame.select(*columns).collect()), key=repr)


def hudi_rs_rows(root: Path) -> list[tuple]:
    """The rows hudi-rs (an independent reader) reads, as ``data_rows`` lays them out."""
    table = snapshot(root)
    columns = sorted(c for c in table.column_names if c not in META_COLUMNS)
    return sorted((tuple(r.values()) for r in table.select(columns).to_pylist()), key=repr)


def hudi_sql(spark: Any, path: Path, statement: str) -> list[Any]:
    """A Hudi SQL statement (``{table}`` names the table at ``path``, registered on first use under a
    name of its own: tests in one session may use the same folder names)."""
    name = "t_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING hudi LOCATION '{path}'")
    reset_bucket_calculator(spark, path, {})
    return spark.sql(statement.format(table=name)).collect()


def reset_bucket_calculator(spark: Any, path: Path, options: dict[str, str]) -> None:
    calculator = spark.sparkContext._jvm.org.apache.hudi.index.bucket.partition.PartitionBucketIndexCalculator
    calculator.getInstance("hbo-reset,1", "regex", 1).cleanCache()
    in_force = None
    if (path / ".hoodie").exists():
        storage = LocalStorage(path)
        in_force = config_store.load_in_force(
            storage, load_table(storage).timeline.pending_replace_timestamps()
        )
    if in_force is not None:
        calculator.getInstance(in_force.expressions, in_force.rule, in_force.default_bucket_number)
    elif options.get("hoodie.bucket.index.partition.expressions"):
        calculator.getInstance(
            options["hoodie.bucket.index.partition.expressions"],
            options.get("hoodie.bucket.index.partition.rule.type", "regex"),
            int(options["hoodie.bucket.index.num.buckets"]),
        )

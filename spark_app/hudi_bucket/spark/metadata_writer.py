"""The table's metadata table kept by our rewrite, in the same instant: Apache Hudi's own metadata writer
(its Spark bundle, from the job's session) applies our replacecommit to it while the instant is pending,
as Hudi's write client does for its own replacecommits.

The writer reads what it records from the commit and the files it names: the files partition (the new
files; the replaced groups are hidden by the replacecommit, and cleaned later), column and partition
stats (from the new files' footers), bloom filters (from the footers, which carry Hudi's entries:
``writing.bucket_files``) and the record index (every key of the new files at its new file group: we
hand it those entries, as Hudi's own writes do, see ``_update_streaming_the_record_index``). It
writes one delta commit in the metadata table at our instant's time, which readers ignore while the data
instant is pending, and trust once it completes (or once it is gone: ``roll_back`` first).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.core.commits import CommitMetadata
from hudi_bucket.errors import TableBusyError
from hudi_bucket.hudi.table import METADATA_TABLE_FOLDER
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.session import on_classpath, scoped_conf
from hudi_bucket.spark.spark_paths import spark_root

WRITER_FACTORY = "org.apache.hudi.metadata.SparkMetadataWriterFactory"
RECORD_INDEX_UPDATE = "io.hudibucket.spark.RecordIndexUpdate"  # ours (spark_app/jvm)
STREAMING_FROM_VERSION = 8
CLUSTER = "CLUSTER"  # Hudi's WriteOperationType of a clustering


def available(spark: Any) -> bool:
    """Whether Hudi's metadata writer is on the session (its bundle loaded)."""
    return on_classpath(spark, WRITER_FACTORY)


def update(ctx: TableContext, instant: str, metadata: CommitMetadata) -> None:
    """Apply our pending replacecommit ``instant`` (``metadata``, as it will complete) to the metadata
    table: one delta commit there at the same time, complete when this returns."""
    jvm = ctx.spark._jvm
    # To the metadata writer our rewrite is what it is, a clustering: records move between file groups,
    # none changes or goes (every record read is written: ``core.completeness``). So the record index
    # moves every key of the new files and deletes none, and secondary indexes (record keys by secondary
    # key, no location) stay as they are, where an INSERT_OVERWRITE would have them refused.
    as_clustering = replace(metadata, operation_type=CLUSTER)
    replace_metadata = jvm.org.apache.hudi.common.model.HoodieReplaceCommitMetadata
    commit = replace_metadata.fromJsonString(
        as_clustering.to_json(replace=True).decode(), replace_metadata._java_lang_class
    )
    if _streams_the_record_index(ctx, metadata):
        _update_streaming_the_record_index(ctx, instant, metadata, commit)
        return
    engine = _engine(ctx)
    writer = jvm.org.apache.hudi.metadata.SparkMetadataWriterFactory.create(
        engine.getStorageConf(),
        _write_config(ctx),
        engine,
        jvm.org.apache.hudi.common.util.Option.of(instant),
        _meta_client(ctx, engine, spark_root(ctx.storage)).getTableConfig(),
    )
    try:
        writer.update(commit, instant)
    finally:
        writer.close()


def _streams_the_record_index(ctx: TableContext, metadata: CommitMetadata) -> bool:
    """Whether we hand the record index its entries ourselves: the table has one, its files carry the
    record key and partition (meta fields), and the commit writes base files only; Hudi's streaming
    writer is of table version 8 and later (version 6 has a writer of its own)."""
    stats = [s for stats in metadata.write_stats.values() for s in stats]
    return (
        ctx.table.version >= STREAMING_FROM_VERSION
        and ctx.table.metadata_indexes.record_index
        and not ctx.table.metadata_indexes.record_index_partitioned
        and ctx.table.config.populate_meta_fields
        and on_classpath(ctx.spark, RECORD_INDEX_UPDATE)
        and bool(stats)  # a commit of no files (a first hashing_config) has no entries to give
        and all(s.path.endswith(".parquet") for s in stats)
    )


def _update_streaming_the_record_index(
    ctx: TableContext, instant: str, metadata: CommitMetadata, commit: Any
) -> None:
    """Hudi's metadata writer in its streaming mode, as Hudi's own Spark writes use it: the record
    index entries handed over (each key of our new files at its file group, read from their meta
    columns), then the other partitions from the commit, in one delta commit.

    Handed the commit alone, the writer reads every new file's keys, then shuffles them all to drop
    duplicates a clustering cannot have, before its own upsert: two thirds of its time on a table with
    a record index."""
    jvm = ctx.spark._jvm
    hudi = jvm.org.apache.hudi
    engine = _engine(ctx)
    config = _write_config(ctx, streaming=True)
    root = spark_root(ctx.storage)
    stats = [s for stats in metadata.write_stats.values() for s in stats]
    # A task per file: Spark would pack these small reads into a task or two per core, where making
    # the entries, on the task that reads their keys, is most of the work. A file that "costs" as much
    # as the largest one to open fills a task alone.
    one_per_task = {
        "spark.sql.files.openCostInBytes": str(max(s.file_size_in_bytes for s in stats)),
        "spark.sql.files.minPartitionNum": str(len(stats)),
    }
    with scoped_conf(ctx.spark, one_per_task):  # the files are split when the RDD is made
        keys = (
            ctx.spark.read.parquet(*(f"{root}/{s.path}" for s in stats))
            .select(
                "_hoodie_record_key",
                "_hoodie_partition_path",
                F.substring_index(F.substring_index(F.input_file_name(), "/", -1), "_", 1),
            )
            ._jdf.javaRDD()
        )
    update = jvm.io.hudibucket.spark.RecordIndexUpdate(instant, config.getWritesFileIdEncoding())
    entries = hudi.data.HoodieJavaRDD.of(keys.map(update))
    partitions = jvm.java.util.HashSet()
    for partition in metadata.write_stats:
        partitions.add(partition)
    writer = hudi.metadata.SparkMetadataWriterFactory.createWithStreamingWrites(
        engine.getStorageConf(),
        config,
        hudi.common.model.HoodieFailedWritesCleaningPolicy.EAGER,
        engine,
        hudi.common.util.Option.of(instant),
    )
    try:
        writer.startCommit(instant)
        written = writer.streamWriteToMetadataPartitions(entries, partitions, instant)
        partial = jvm.java.util.ArrayList()
        for status in hudi.data.HoodieJavaRDD.getJavaRDD(written).collect():
            partial.add(status.getStat())
        writer.completeStreamingCommit(instant, engine, partial, commit)
    finally:
        writer.close()


def roll_back(ctx: TableContext, instant: str) -> bool:
    """Roll back the metadata table's delta commit at ``instant``, if it has one, with Hudi's write
    client of the metadata table (as Hudi's metadata writer does before it writes an instant again).
    Returns whether there was one. Call before the data instant leaves the timeline."""
    if not _has_delta_commit(ctx, instant):
        return False
    if not available(ctx.spark):
        raise TableBusyError(
            f"the metadata table has a delta commit of our instant {instant}, and Hudi's bundle, whose "
            "rollback undoes it, is not on the job's classpath",
            hint="run the job where Hudi's Spark bundle is loaded (the job image; locally HBO_HUDI_BUNDLE)",
        )
    jvm = ctx.spark._jvm
    engine = _engine(ctx)
    metadata_client = _meta_client(ctx, engine, f"{spark_root(ctx.storage)}/{METADATA_TABLE_FOLDER}")
    hudi = jvm.org.apache.hudi
    config = hudi.metadata.HoodieMetadataWriteUtils.createMetadataWriteConfig(
        _write_config(ctx),
        hudi.common.model.HoodieFailedWritesCleaningPolicy.EAGER,
        metadata_client.getTableConfig().getTableVersion(),
    )
    client = hudi.client.SparkRDDWriteClient(engine, config)
    try:
        client.rollback(instant)
    finally:
        client.close()
    return True


def _has_delta_commit(ctx: TableContext, instant: str) -> bool:
    """Whether the metadata table's timeline holds a delta commit of ``instant`` in any state (its
    folder by table version: layout 1 in ``.hoodie``, 2 in ``.hoodie/timeline``)."""
    folders = (f"{METADATA_TABLE_FOLDER}/.hoodie/timeline", f"{METADATA_TABLE_FOLDER}/.hoodie")
    names = (info.path.rpartition("/")[2] for folder in folders for info in ctx.storage.list(folder))
    return any(name.startswith(instant) and ".deltacommit" in name for name in names)


def _engine(ctx: TableContext) -> Any:
    return ctx.spark._jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(ctx.spark._jsc)


def _meta_client(ctx: TableContext, engine: Any, root: str) -> Any:
    builder = ctx.spark._jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder()
    return builder.setConf(engine.getStorageConf()).setBasePath(root).build()


def _write_config(ctx: TableContext, streaming: bool = False) -> Any:
    """A write config of the table as it is: the indexes it has (so that the writer builds none the table
    lacks, as Spark's would column stats, and updates those it has), its version (no upgrade)."""
    settings = {
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.streaming.write.enabled": str(streaming).lower(),
        "hoodie.metadata.index.async": "true",  # build no partition the table lacks
        **{key: str(on).lower() for key, on in ctx.table.metadata_indexes.settings().items()},
        "hoodie.write.table.version": str(ctx.table.version),
        "hoodie.write.auto.upgrade": "false",
    }
    builder = ctx.spark._jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder()
    return builder.withPath(spark_root(ctx.storage)).forTable(ctx.table.name).withProps(settings).build()

"""`write`: insert or upsert a dataset into a bucket-indexed COW table, laid out by the rules in force.

With ``create`` it makes the table first (table version 8 or 9, no metadata table, an initial
hashing_config when rules are given): that is also how an existing plain Parquet dataset is onboarded
(bootstrap, RFC-12's full-record mode). Records get Hudi's record key and partition path; each bucket a
record lands in is rewritten as one new base file of its file group (copy-on-write), holding the group's
old records too; an upsert replaces old records that share a key. One commit instant, rolled back on
any failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hudi_bucket.core.buckets import bucket_id_from_file_id, is_bucket_file_id
from hudi_bucket.core.commits import INSERT, UPSERT, CommitMetadata
from hudi_bucket.core.filegroups import FileGroup
from hudi_bucket.core.recordkeys import EMPTY_PLACEHOLDER, NULL_PLACEHOLDER
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.timeline import Action
from hudi_bucket.errors import HudiBucketError, NotAHudiTableError, NotBucketIndexedError
from hudi_bucket.hudi import config_store
from hudi_bucket.hudi.rollback import rollback
from hudi_bucket.hudi.table import load_file_groups, timeline_store
from hudi_bucket.hudi.table_creation import create_table, new_table_properties, write_partition_metadata
from hudi_bucket.jobs.avro_schema import to_avro_json
from hudi_bucket.jobs.bucket_files import (
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
    ExistingGroup,
    write_bucket_files,
)
from hudi_bucket.jobs.bucketing import bucket_id_column, num_buckets_column
from hudi_bucket.jobs.context import TableContext
from hudi_bucket.jobs.preconditions import check_table, roll_back_our_leftovers
from hudi_bucket.storage import storage_for

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Hudi's path for a null or empty partition value


class SourceSchemaError(HudiBucketError):
    """The dataset's columns do not match the table's."""

    hint = "select the table's columns (same names) from the dataset; schema evolution is not supported here"


@dataclass(frozen=True)
class WriteRequest:
    source: str
    format: str = "parquet"
    operation: str = "upsert"
    record_key: tuple[str, ...] = ()
    partition_fields: tuple[str, ...] = ()
    ordering_field: str = ""
    create: bool = False
    table_name: str | None = None
    table_version: int = 9
    hive_style: bool = False
    expressions: str = ""
    default_buckets: int = 4


@dataclass(frozen=True)
class WriteResult:
    instant: str
    created: bool
    files_written: int
    rows_written: int
    partitions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "instant": self.instant,
            "created": self.created,
            "filesWritten": self.files_written,
            "rowsWritten": self.rows_written,
            "partitions": self.partitions,
        }


def read_source(spark: Any, request: WriteRequest) -> Any:
    reader = spark.read.format(request.format)
    if request.format == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(request.source)


def write(spark: Any, uri: str, request: WriteRequest, *, rows: Any = None) -> WriteResult:
    """Write ``rows`` (a DataFrame; read from ``request.source`` when None) into the table at ``uri``."""
    rows = read_source(spark, request) if rows is None else rows
    rows = rows.drop(*[c for c in rows.columns if c in META_COLUMNS])
    created = False
    try:
        ctx = TableContext.open(spark, uri)
    except NotAHudiTableError:
        if not request.create:
            raise
        _create(spark, uri, request, rows)
        ctx, created = TableContext.open(spark, uri), True
    ctx, _ = roll_back_our_leftovers(ctx)
    check_table(ctx)
    config = ctx.table.config
    keyed = _with_keys(
        rows,
        config.record_key_fields,
        config.partition_fields,
        config.hive_style_partitioning,
        config.key_generator_type or "",
    )
    if request.operation == UPSERT.lower() or request.ordering_field:
        keyed = _deduplicate(keyed, request.ordering_field)
    return _commit(ctx, keyed, request, created)


def _create(spark: Any, uri: str, request: WriteRequest, rows: Any) -> None:
    name = request.table_name or uri.rstrip("/").rsplit("/", 1)[-1]
    missing = [f for f in (*request.record_key, *request.partition_fields) if f not in rows.columns]
    if not request.record_key or missing:
        raise SourceSchemaError(
            f"record key / partition fields {missing or '(none given)'} not in the dataset"
        )
    props = new_table_properties(
        table_name=name,
        table_version=request.table_version,
        record_key_fields=request.record_key,
        partition_fields=request.partition_fields,
        hive_style=request.hive_style,
        ordering_fields=(request.ordering_field,) if request.ordering_field else (),
        create_schema=to_avro_json(rows.schema, name, for_commit=False),
    )
    storage = storage_for(uri, spark)
    create_table(storage, props)
    if request.expressions:
        config_store.create_initial_config(
            storage, BucketRules.parse(request.expressions, request.default_buckets)
        )


def _with_keys(rows: Any, keys: tuple[str, ...], parts: tuple[str, ...], hive: bool, keygen: str) -> Any:
    """Hudi's record key and partition path for each row, as its key generators build them."""
    from pyspark.sql import functions as F  # noqa: N812

    def text(field: str) -> Any:
        return F.col(field).cast("string")

    if len(keys) == 1 and keygen != "COMPLEX":
        key = text(keys[0])
    else:
        key = F.concat_ws(
            ",",
            *(
                F.concat(
                    F.lit(f"{k}:"),
                    F.when(text(k).isNull(), NULL_PLACEHOLDER)
                    .when(text(k) == "", EMPTY_PLACEHOLDER)
                    .otherwise(text(k)),
                )
                for k in keys
            ),
        )
    segments = [
        F.concat(
            F.lit(f"{p}=" if hive else ""),
            F.when(text(p).isNull() | (text(p) == ""), DEFAULT_PARTITION).otherwise(text(p)),
        )
        for p in parts
    ]
    path = F.concat_ws("/", *segments) if segments else F.lit("")
    return rows.withColumn(RECORD_KEY, key).withColumn(PARTITION_PATH, path)


def _deduplicate(rows: Any, ordering_field: str) -> Any:
    """One record per key: the one with the greatest ordering value (any one without an ordering field)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    if not ordering_field:
        return rows.dropDuplicates([PARTITION_PATH, RECORD_KEY])
    window = Window.partitionBy(PARTITION_PATH, RECORD_KEY).orderBy(F.col(ordering_field).desc_nulls_last())
    return (
        rows.withColumn("__hbo_rank", F.row_number().over(window)).filter("__hbo_rank = 1").drop("__hbo_rank")
    )


def _commit(ctx: TableContext, rows: Any, request: WriteRequest, created: bool) -> WriteResult:
    from pyspark.sql import functions as F  # noqa: N812

    storage, table, spark = ctx.storage, ctx.table, ctx.spark
    empty_keys = rows.filter(F.col(RECORD_KEY).isNull() | (F.col(RECORD_KEY) == "")).limit(1).count()
    if empty_keys:
        raise SourceSchemaError(
            f"the dataset has records whose key {list(table.config.record_key_fields)} is null or empty"
        )
    in_force = config_store.load_in_force(storage, table.timeline.pending_replace_timestamps())
    rules = in_force.to_rules() if in_force else None
    groups = load_file_groups(storage, table)
    incoming_partitions = [r[0] for r in rows.select(PARTITION_PATH).distinct().collect()]
    buckets = {
        p: rules.buckets_for(p, ctx.matcher) if rules else request.default_buckets
        for p in incoming_partitions
    }
    existing = _existing_groups(groups, buckets)
    with_bucket = rows.withColumn(
        "__hbo_b",
        bucket_id_column(
            F.col(RECORD_KEY),
            num_buckets_column(F.col(PARTITION_PATH), buckets, 1),
            ctx.hash_fields,
            ctx.key_style,
        ),
    )
    touched = {(r[0], r[1]) for r in with_bucket.select(PARTITION_PATH, "__hbo_b").distinct().collect()}
    rewritten = {k: g for k, g in existing.items() if k in touched}
    columns = _table_columns(spark, storage, groups, rows)
    merged = _merge(
        spark,
        storage,
        rows.select(*columns, RECORD_KEY, PARTITION_PATH),
        rewritten=rewritten,
        columns=columns,
        request=request,
    )

    store = timeline_store(storage, table)
    instant = store.new_instant_time()
    operation = UPSERT if request.operation == "upsert" else INSERT
    requested = store.request(instant, Action.COMMIT)
    try:
        inflight = store.start(requested, CommitMetadata(operation, dict.fromkeys(incoming_partitions, ())))
        for partition in incoming_partitions:
            write_partition_metadata(
                storage, partition, instant, partition.count("/") + 1 if partition else 0
            )
        stats = write_bucket_files(
            spark,
            storage,
            merged,
            instant=instant,
            buckets=buckets,
            hash_fields=ctx.hash_fields,
            key_style=ctx.key_style,
            data_columns=columns,
            existing={k: ExistingGroup(g.file_id, g.latest_base_file.instant) for k, g in rewritten.items()},
        )
        by_partition: dict[str, tuple] = dict.fromkeys(incoming_partitions, ())
        for stat in stats:
            by_partition[stat.partition_path] += (stat,)
        schema = to_avro_json(merged.select(*columns).schema, table.name, for_commit=True)
        store.complete(inflight, CommitMetadata(operation, by_partition, extra_metadata={"schema": schema}))
    except BaseException:
        rollback(storage, ctx.reload().table, instant)
        raise
    return WriteResult(
        instant, created, len(stats), sum(s.num_writes for s in stats), len(incoming_partitions)
    )


def _existing_groups(
    groups: dict[str, tuple[FileGroup, ...]], buckets: dict[str, int]
) -> dict[tuple[str, int], FileGroup]:
    existing: dict[tuple[str, int], FileGroup] = {}
    for partition, count in buckets.items():
        for group in groups.get(partition, ()):
            if not is_bucket_file_id(group.file_id):
                raise NotBucketIndexedError(
                    f"partition {partition or '(table)'} holds file group {group.file_id}, which is not a bucket file group"
                )
            bucket = bucket_id_from_file_id(group.file_id)
            if bucket >= count or (partition, bucket) in existing:
                raise NotBucketIndexedError(
                    f"partition {partition or '(table)'} does not match its {count} buckets",
                    hint="run `verify`, then `apply` the rules to repair the layout before writing",
                )
            existing[(partition, bucket)] = group
    return existing


def _table_columns(
    spark: Any, storage: Any, groups: dict[str, tuple[FileGroup, ...]], rows: Any
) -> tuple[str, ...]:
    """The table's data columns, in its order (the dataset's own for a table without files yet)."""
    sample = next((g.latest_base_file for gs in groups.values() for g in gs if g.latest_base_file), None)
    if sample is None:
        return tuple(c for c in rows.columns if c not in META_COLUMNS)
    existing = [
        c
        for c in spark.read.parquet(f"{storage.uri.rstrip('/')}/{sample.path}").columns
        if c not in META_COLUMNS
    ]
    incoming = [c for c in rows.columns if c not in META_COLUMNS]
    if sorted(existing) != sorted(incoming):
        raise SourceSchemaError(
            f"the dataset's columns differ from the table's: missing {sorted(set(existing) - set(incoming))}, "
            f"extra {sorted(set(incoming) - set(existing))}"
        )
    return tuple(existing)


def _merge(
    spark: Any,
    storage: Any,
    incoming: Any,
    *,
    rewritten: dict[tuple[str, int], FileGroup],
    columns: tuple[str, ...],
    request: WriteRequest,
) -> Any:
    """Incoming records plus the old records of every file group they land in (copy-on-write); an upsert
    drops old records whose key comes in again."""
    if not rewritten:
        return incoming
    uri = storage.uri.rstrip("/")
    paths = [f"{uri}/{g.latest_base_file.path}" for g in rewritten.values()]
    old = spark.read.parquet(*paths).select(*columns, RECORD_KEY, PARTITION_PATH)
    if request.operation == "upsert":
        old = old.join(incoming.select(PARTITION_PATH, RECORD_KEY), [PARTITION_PATH, RECORD_KEY], "left_anti")
    return old.unionByName(incoming.select(*old.columns))

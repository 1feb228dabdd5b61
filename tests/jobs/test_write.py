"""`write` creates bucket-indexed tables and inserts/upserts into them as Hudi's bucket index would: an
independent reader (hudi-rs) reads exactly the rows written, every record sits in its bucket, upserts
rewrite only the buckets they touch, and a refused or failed write leaves the table as it was."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_bucket.checks.layout_check import verify_table
from hudi_bucket.cli import EXIT_OK, main
from hudi_bucket.commands import write as write_module
from hudi_bucket.commands.apply import apply
from hudi_bucket.commands.write import write
from hudi_bucket.contract.reports import JobReport, Outcome
from hudi_bucket.contract.requests import ApplyOptions, JobKind, WriteOptions
from hudi_bucket.core.buckets import record_key_bucket_id
from hudi_bucket.core.metafields import META_COLUMNS
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.errors import (
    HudiBucketError,
    NotAHudiTableError,
    NotBucketIndexedError,
    SourceSchemaError,
    TableMismatchError,
)
from hudi_bucket.hudi.table_properties import read_table_properties, write_table_properties
from hudi_bucket.spark.context import TableContext
from hudi_bucket.storage import LocalStorage
from lib.hudi_rs import ordered, records

pytestmark = pytest.mark.spark

MakeTable = Callable[[str], Path]
CONFIGS = Path(".hoodie/.bucket_index/partition_bucket_index_meta/configs")
INITIAL_CONFIG = CONFIGS / "00000000000000.hashing_config"
PARTITION_METAFILE = ".hoodie_partition_metadata"
TIMELINE = Path(".hoodie/timeline")

SCHEMA = "id string, seq string, region string, day string, ts long, amount double"
Row = dict[str, Any]


def source_rows(count: int = 24) -> list[Row]:
    """Small, deterministic records: three regions, two days, two sequence values."""
    return [
        {
            "id": f"k{i:02d}",
            "seq": f"s{i % 2}",
            "region": ("eu", "us", "apac")[i % 3],
            "day": ("01", "02")[i % 2],
            "ts": 1,
            "amount": float(i),
        }
        for i in range(count)
    ]


def frame(spark: Any, rows: list[Row], schema: str = SCHEMA) -> Any:
    names = [part.split()[0] for part in schema.split(",")]
    return spark.createDataFrame([tuple(row[n] for n in names) for row in rows], schema)


def listing(root: Path) -> dict[str, str | None]:
    """Every folder and file below ``root`` with a digest of its bytes: equal listings, unchanged table."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


def latest_base_files(root: Path, partition: str) -> dict[str, str]:
    """File id -> name of its newest base file, read straight from the partition folder."""
    latest: dict[str, str] = {}
    for path in (root / partition).glob("*.parquet"):
        file_id, instant = path.name.split("_")[0], path.stem.split("_")[-1]
        if file_id not in latest or latest[file_id].split("_")[-1] < f"{instant}.parquet":
            latest[file_id] = path.name
    return latest


def pending_instants(root: Path) -> set[str]:
    """Timestamps with a requested or inflight file but no completed one (layout 2)."""
    names = [p.name for p in (root / TIMELINE).iterdir() if p.is_file()]
    started = {n.split(".")[0] for n in names if n.endswith((".requested", ".inflight"))}
    completed = {n.split("_")[0] for n in names if "_" in n.split(".")[0]}
    return started - completed


def verify(spark: Any, root: Path, buckets: Callable[[str], int]) -> dict[str, Any]:
    """The verify job's report for ``root`` checked against ``buckets`` (partition path -> N)."""
    ctx = TableContext.open(spark, str(root))
    result = verify_table(
        spark,
        ctx.storage,
        ctx.table,
        rules_for_partition=buckets,
        hash_fields=ctx.hash_fields,
        key_style=ctx.key_style,
    )
    return result.to_dict()


def table_property(root: Path, key: str) -> str | None:
    for line in (root / ".hoodie" / "hoodie.properties").read_text().splitlines():
        if line.startswith(f"{key}="):
            return line.split("=", 1)[1]
    return None


@dataclass(frozen=True)
class Layout:
    """One way to create a table, and the bucket count each of its partitions must get."""

    table_version: int
    hive_style: bool
    partition_fields: tuple[str, ...]
    record_key: tuple[str, ...]
    expressions: str
    default: int
    buckets: Callable[[str], int]
    bigger: str = ""  # a partition a rule gives more than ``default`` buckets

    def partition_of(self, row: Row) -> str:
        return "/".join(f"{f}={row[f]}" if self.hive_style else str(row[f]) for f in self.partition_fields)

    def request(self, **options: Any) -> WriteOptions:
        fields: dict[str, Any] = {
            "source": "",
            "record_key": self.record_key,
            "partition_fields": self.partition_fields,
            "ordering_field": "ts",
            "create": True,
            "table_version": self.table_version,
            "hive_style": self.hive_style,
            "expressions": self.expressions,
            "default_buckets": self.default,
        }
        return WriteOptions(**{**fields, **options})


LAYOUTS = {
    "v8-hive-single-key-rules": Layout(
        8, True, ("region",), ("id",), "region=eu,6", 2, lambda p: 6 if p == "region=eu" else 2, "region=eu"
    ),
    "v9-plain-single-key-no-rules": Layout(9, False, ("region",), ("id",), "", 3, lambda _: 3),
    "v9-nested-hive-complex-key-rules": Layout(
        9,
        True,
        ("region", "day"),
        ("id", "seq"),
        "day=02,5",
        2,
        lambda p: 5 if p.endswith("day=02") else 2,
        "region=eu/day=02",
    ),
    "v8-nested-plain-complex-key-no-rules": Layout(
        8, False, ("region", "day"), ("id", "seq"), "", 2, lambda _: 2
    ),
    "v9-nonpartitioned-rules": Layout(9, True, (), ("id",), "^$,5", 2, lambda _: 5, ""),
    "v8-nonpartitioned-complex-key-no-rules": Layout(8, True, (), ("id", "seq"), "", 3, lambda _: 3),
}


@pytest.mark.parametrize("layout", list(LAYOUTS.values()), ids=list(LAYOUTS))
def test_a_created_table_reads_back_exactly_and_verifies_against_its_bucket_counts(
    spark: Any, tmp_path: Path, layout: Layout
) -> None:
    root = tmp_path / "table"
    rows = source_rows()

    result = write(spark, str(root), layout.request(), rows=frame(spark, rows))

    assert result.created
    assert result.rows_written == len(rows)
    assert records(root) == ordered(rows)
    report = verify(spark, root, layout.buckets)
    assert report["ok"], report
    assert report["checkedRows"] == len(rows)
    assert table_property(root, "hoodie.table.version") == str(layout.table_version)

    partitions = {layout.partition_of(r) for r in rows}
    assert report["checkedPartitions"] == len(partitions)
    for partition in partitions:
        assert (root / partition / PARTITION_METAFILE).is_file()

    if layout.expressions:
        config = json.loads((root / INITIAL_CONFIG).read_text())
        assert (config["expressions"], config["defaultBucketNumber"]) == (layout.expressions, layout.default)
        # The rule is in force: the bigger partition uses bucket ids a default partition cannot have.
        bucket_ids = {int(file_id[:8]) for file_id in latest_base_files(root, layout.bigger)}
        assert max(bucket_ids) >= layout.default
    else:
        # Hudi treats a table as partition-level as soon as the configs folder exists.
        assert not (root / CONFIGS).exists()


UPSERT_TABLE = LAYOUTS["v8-hive-single-key-rules"]


@pytest.fixture
def table(spark: Any, tmp_path: Path) -> Path:
    """A v8 hive-style table of 24 records (ordering value 1): region=eu has 6 buckets, the others 2."""
    root = tmp_path / "table"
    write(spark, str(root), UPSERT_TABLE.request(), rows=frame(spark, source_rows()))
    return root


def test_an_upsert_replaces_records_by_key_inserts_new_ones_and_rewrites_only_touched_buckets(
    spark: Any, table: Path
) -> None:
    old = {r["id"]: r for r in source_rows()}
    eu = [key for key, r in old.items() if r["region"] == "eu"]
    updates = [
        {**old[eu[0]], "ts": 3, "amount": 300.0},
        {**old[eu[0]], "ts": 2, "amount": 200.0},  # an older duplicate in the input: collapsed away
        {**old[eu[1]], "ts": 2, "amount": 100.0},
        {**old[eu[0]], "id": "k99", "ts": 1, "amount": 99.0},  # a new key in region=eu
        {**old[eu[0]], "id": "k98", "region": "latam", "ts": 1, "amount": 98.0},  # a new partition
    ]
    before = {p: latest_base_files(table, p) for p in ("region=eu", "region=us", "region=apac")}

    result = write(spark, str(table), UPSERT_TABLE.request(), rows=frame(spark, updates))

    expected = {**old, eu[0]: updates[0], eu[1]: updates[2], "k99": updates[3], "k98": updates[4]}
    assert records(table) == ordered(list(expected.values()))
    report = verify(spark, table, UPSERT_TABLE.buckets)
    assert report["ok"], report

    # Only the buckets the incoming keys hash to got a new base file; every other file group kept its file.
    touched = {record_key_bucket_id(key, ("id",), 6) for key in (eu[0], eu[1], "k99")}
    after_eu = latest_base_files(table, "region=eu")
    rewritten = {int(fid[:8]) for fid, name in after_eu.items() if result.instant in name}
    assert rewritten == touched
    assert {fid: n for fid, n in after_eu.items() if int(fid[:8]) not in touched} == {
        fid: n for fid, n in before["region=eu"].items() if int(fid[:8]) not in touched
    }
    assert latest_base_files(table, "region=us") == before["region=us"]
    assert latest_base_files(table, "region=apac") == before["region=apac"]
    assert (table / "region=latam" / PARTITION_METAFILE).is_file()


def test_an_insert_keeps_the_old_record_beside_the_new_one(spark: Any, table: Path) -> None:
    old = source_rows()
    again = {**old[0], "ts": 5, "amount": 500.0}

    write(spark, str(table), UPSERT_TABLE.request(operation="insert"), rows=frame(spark, [again]))

    assert records(table) == ordered([*old, again])


def test_a_stored_record_with_a_greater_ordering_value_survives_an_upsert(spark: Any, table: Path) -> None:
    old = source_rows()  # stored with ordering value 1

    write(spark, str(table), UPSERT_TABLE.request(), rows=frame(spark, [{**old[0], "ts": 0, "amount": -1.0}]))

    assert records(table) == ordered(old)


def test_an_upsert_with_another_bucket_count_never_duplicates_a_key(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    plain = LAYOUTS["v9-plain-single-key-no-rules"]
    old = source_rows()
    write(spark, str(root), plain.request(default_buckets=2), rows=frame(spark, old))
    updates = [{**r, "ts": 2} for r in old[:6]]

    try:
        write(spark, str(root), plain.request(default_buckets=5), rows=frame(spark, updates))
    except HudiBucketError:
        return  # refusing is fine too
    keys = [r["id"] for r in records(root)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("ordering_field", "ts"), [("ts", 1), ("", 0)], ids=["event-time-tie", "commit-time"]
)
def test_the_incoming_record_wins_a_tie_and_always_under_commit_time_ordering(
    spark: Any, tmp_path: Path, ordering_field: str, ts: int
) -> None:
    root = tmp_path / "table"
    request = UPSERT_TABLE.request(ordering_field=ordering_field)
    old = source_rows(6)  # stored with ordering value 1
    write(spark, str(root), request, rows=frame(spark, old))
    update = {**old[0], "ts": ts, "amount": -1.0}

    write(spark, str(root), request, rows=frame(spark, [update]))

    assert records(root) == ordered([update, *old[1:]])
    mode = "EVENT_TIME_ORDERING" if ordering_field else "COMMIT_TIME_ORDERING"
    assert table_property(root, "hoodie.record.merge.mode") == mode


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_bootstrap_creates_a_bucket_table_from_a_plain_dataset_on_disk(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    rows = [{k: r[k] for k in ("id", "region", "ts", "amount")} for r in source_rows(12)]
    source = tmp_path / "source"
    source.mkdir()
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), source / "part-0.parquet")
    elif fmt == "csv":
        lines = ["id,region,ts,amount", *(f"{r['id']},{r['region']},{r['ts']},{r['amount']}" for r in rows)]
        (source / "part-0.csv").write_text("\n".join(lines) + "\n")
    else:
        (source / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    root, report = tmp_path / "table", tmp_path / "report.json"

    code = main(
        [
            "write",
            "--table",
            str(root),
            "--source",
            str(source),
            "--format",
            fmt,
            "--record-key",
            "id",
            "--partition-field",
            "region",
            "--ordering-field",
            "ts",
            "--create",
            "--hive-style",
            "--expressions",
            "region=eu,4",
            "--default",
            "2",
            "--report",
            str(report),
        ]
    )

    spark.sparkContext.setLogLevel("ERROR")  # main's session is the shared one; it turned logging up
    assert code == EXIT_OK
    written = JobReport.from_json(report.read_bytes())
    assert (written.command, written.outcome) == (JobKind.WRITE, Outcome.SUCCEEDED)
    assert written.result["created"] is True
    assert (written.result["rowsWritten"], written.result["partitions"]) == (12, 3)
    assert records(root) == ordered(rows)
    assert verify(spark, root, lambda p: 4 if p == "region=eu" else 2)["ok"]


# Refusals and failures: a clear error, and nothing written.


def test_writing_to_a_missing_table_without_create_is_refused(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "absent"
    with pytest.raises(NotAHudiTableError, match="not a Hudi table"):
        write(spark, str(root), UPSERT_TABLE.request(create=False), rows=frame(spark, source_rows(3)))
    assert listing(root) == {}


@pytest.mark.parametrize(
    ("schema", "complaint"),
    [
        (f"{SCHEMA}, note string", r"extra \['note'\]"),
        ("id string, seq string, region string, day string, ts long", r"missing \['amount'\]"),
    ],
    ids=["extra-column", "missing-column"],
)
def test_a_dataset_whose_columns_differ_from_the_table_is_refused(
    spark: Any, table: Path, schema: str, complaint: str
) -> None:
    before = listing(table)
    rows = [{**r, "note": "x"} for r in source_rows(3)]
    with pytest.raises(SourceSchemaError, match=complaint):
        write(spark, str(table), UPSERT_TABLE.request(), rows=frame(spark, rows, schema))
    assert listing(table) == before


@pytest.mark.parametrize("key", [None, ""], ids=["null-key", "empty-key"])
def test_records_without_a_key_are_refused(spark: Any, table: Path, key: str | None) -> None:
    before = listing(table)
    rows = [*source_rows(2), {**source_rows(1)[0], "id": key}]
    with pytest.raises(SourceSchemaError, match="null or empty"):
        write(spark, str(table), UPSERT_TABLE.request(), rows=frame(spark, rows))
    assert listing(table) == before


def test_a_refused_create_leaves_no_table_behind(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "table"
    rows = [{**source_rows(1)[0], "id": None}]
    with pytest.raises(SourceSchemaError):
        write(spark, str(root), UPSERT_TABLE.request(), rows=frame(spark, rows))
    assert listing(root) == {}


def test_a_complex_key_with_every_field_null_is_refused(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "table"
    layout = LAYOUTS["v9-nested-hive-complex-key-rules"]
    write(spark, str(root), layout.request(), rows=frame(spark, source_rows(4)))
    before = listing(root)
    rows = [{**source_rows(1)[0], "id": None, "seq": None}]
    with pytest.raises(SourceSchemaError, match="null or empty"):
        write(spark, str(root), layout.request(), rows=frame(spark, rows))
    assert listing(root) == before


@pytest.mark.parametrize(
    "into_new_partition",
    [
        False,
        True,
    ],
    ids=["existing-partition", "new-partition"],
)
def test_writing_to_a_table_that_is_not_bucket_indexed_is_refused(
    spark: Any, written_table: MakeTable, into_new_partition: bool
) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    root = written_table("cow_v8")
    before, old = listing(root), records(root)
    rows = spark.read.parquet(str(next((root / "10").glob("*.parquet")))).drop(*META_COLUMNS)
    if into_new_partition:
        rows = rows.withColumn("part", F.lit(99))
    request = WriteOptions(source="", record_key=("id",), partition_fields=("part",))

    with pytest.raises(NotBucketIndexedError, match="not a bucket file group"):
        write(spark, str(root), request, rows=rows)

    assert listing(root) == before
    assert records(root) == old


def test_a_dataset_whose_column_types_differ_from_the_table_is_refused(spark: Any, table: Path) -> None:
    before = listing(table)
    rows = [{**source_rows(1)[0], "id": "k77", "region": "latam", "ts": "late"}]  # a new partition
    with pytest.raises(SourceSchemaError):
        write(
            spark,
            str(table),
            UPSERT_TABLE.request(),
            rows=frame(spark, rows, SCHEMA.replace("ts long", "ts string")),
        )
    assert listing(table) == before


@pytest.mark.parametrize(
    ("option", "complaint", "hint"),
    [
        ({"default_buckets": 5}, "has 3 buckets", "--default 3"),
        ({"ordering_field": "amount"}, r"orders records by \['ts'\]", "--ordering-field"),
    ],
    ids=["bucket-count", "ordering-field"],
)
def test_options_that_contradict_the_table_are_refused(
    spark: Any, tmp_path: Path, option: dict[str, Any], complaint: str, hint: str
) -> None:
    root = tmp_path / "plain"
    plain = LAYOUTS["v9-plain-single-key-no-rules"]
    write(spark, str(root), plain.request(), rows=frame(spark, source_rows(6)))
    assert table_property(root, "hoodie.bucket.index.num.buckets") == "3"
    before = listing(root)

    with pytest.raises(TableMismatchError, match=complaint) as refused:
        write(spark, str(root), plain.request(**option), rows=frame(spark, source_rows(6)))

    assert hint in refused.value.hint
    assert listing(root) == before


def test_a_bucket_count_the_records_contradict_is_refused(spark: Any, tmp_path: Path) -> None:
    """A table Hudi made records no bucket count: the old records of the buckets written give it away."""
    root = tmp_path / "plain"
    plain = LAYOUTS["v9-plain-single-key-no-rules"]
    old = source_rows()
    write(spark, str(root), plain.request(default_buckets=2), rows=frame(spark, old))
    storage = LocalStorage(root)
    write_table_properties(storage, read_table_properties(storage).remove("hoodie.bucket.index.num.buckets"))
    before = listing(root)

    with pytest.raises(NotBucketIndexedError, match="hashes to bucket"):
        write(spark, str(root), plain.request(default_buckets=4), rows=frame(spark, old))

    assert listing(root) == before


def test_a_table_without_files_takes_its_column_types_from_its_schema(
    spark: Any, written_table: MakeTable
) -> None:
    root = written_table("cow_v8_empty")  # made by Hudi's SQL: create schema id int, name string, ts long
    request = WriteOptions(source="", record_key=("id",), default_buckets=2)
    rows = [{"id": 1, "name": "a", "ts": 5}, {"id": 2, "name": None, "ts": 6}]
    before = listing(root)
    with pytest.raises(SourceSchemaError, match="id is long, not int"):
        write(spark, str(root), request, rows=frame(spark, rows, "id long, name string, ts long"))
    assert listing(root) == before

    write(spark, str(root), request, rows=frame(spark, rows, "id int, name string, ts long"))

    assert records(root) == ordered(rows)


@pytest.fixture
def failing_write(monkeypatch: pytest.MonkeyPatch, table: Path) -> None:
    """From now on (``table`` is made first) bucket files get written, then the job dies before the
    commit completes."""
    real = write_module.write_bucket_files

    def write_then_fail(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise RuntimeError("executor lost")

    monkeypatch.setattr(write_module, "write_bucket_files", write_then_fail)


@pytest.mark.usefixtures("failing_write")
def test_a_failure_mid_write_rolls_back_to_the_old_table(spark: Any, table: Path) -> None:
    before, old = listing(table), records(table)
    updates = [{**r, "ts": 2, "amount": -r["amount"]} for r in source_rows(6)]
    with pytest.raises(RuntimeError, match="executor lost"):
        write(spark, str(table), UPSERT_TABLE.request(), rows=frame(spark, updates))

    assert pending_instants(table) == set()
    assert listing(table) == before
    assert records(table) == old


@pytest.mark.usefixtures("failing_write")
def test_a_failure_mid_write_leaves_no_new_partition_behind(spark: Any, table: Path) -> None:
    before = listing(table)
    with pytest.raises(RuntimeError, match="executor lost"):
        write(
            spark,
            str(table),
            UPSERT_TABLE.request(),
            rows=frame(spark, [{**source_rows(1)[0], "region": "latam"}]),
        )

    assert listing(table) == before


def test_partition_values_with_glob_characters_are_read_as_they_are(spark: Any, tmp_path: Path) -> None:
    """Spark globs every path it reads: ``region=e*`` would read every partition, ``region={a,p}`` none."""
    regions = {"eu": "e*", "us": "u[s]", "apac": "{a,p}"}
    layout = Layout(9, True, ("region",), ("id",), r"region=e\*,4", 2, lambda _: 2)
    root = tmp_path / "table"
    rows = [{**r, "region": regions[r["region"]]} for r in source_rows()]
    write(spark, str(root), layout.request(), rows=frame(spark, rows))
    update = {**rows[0], "ts": 2, "amount": -1.0}

    write(spark, str(root), layout.request(create=False), rows=frame(spark, [update]))

    expected = ordered([update, *rows[1:]])
    assert records(root) == expected
    result = apply(TableContext.open(spark, str(root)), ApplyOptions(BucketRules.parse(r"region=e\*,8", 4)))
    assert result.shuffle_free
    assert records(root) == expected
    report = verify(spark, root, lambda p: 8 if p == "region=e*" else 4)
    assert report["ok"], report
    assert report["checkedRows"] == len(rows)


def test_keys_hudi_would_split_are_bucketed_as_hudi_splits_them(spark: Any, tmp_path: Path) -> None:
    """A single-field key that looks like a complex key (``id:7,x:1``) is split by Hudi 1.x and hashed
    as ``["7"]``: such keys, incoming or stored, keep bucket ids off the JVM's whole-key path."""
    layout = Layout(9, True, ("region",), ("id",), "region=eu,3", 2, lambda p: 3 if p == "region=eu" else 2)
    root = tmp_path / "table"
    rows = source_rows()
    lookalikes = [{**r, "id": f"id:{i},x:{i}"} for i, r in enumerate(rows[:6])]
    write(spark, str(root), layout.request(), rows=frame(spark, rows[6:] + lookalikes))
    assert verify(spark, root, layout.buckets)["ok"]
    updates = [{**r, "ts": 2, "amount": -r["amount"]} for r in rows[6:]]  # keys taken whole only

    write(spark, str(root), layout.request(create=False), rows=frame(spark, updates))

    assert records(root) == ordered(updates + lookalikes)
    report = verify(spark, root, layout.buckets)
    assert report["ok"], report
    assert report["checkedRows"] == len(rows)

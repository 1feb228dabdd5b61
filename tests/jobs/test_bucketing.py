"""Bucket ids computed as a Spark column equal, row for row, the scalar core function's."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.errors import PythonException
from pyspark.sql import functions as F  # noqa: N812

from hudi_bucket.bucketing.bucket_ids import (
    bucket_id_column,
    is_split_key_failure,
    key_taken_whole,
    num_buckets_column,
)
from hudi_bucket.core.buckets import bucket_id, record_key_bucket_id
from hudi_bucket.core.recordkeys import KeyStyle, is_single_value_key
from hudi_bucket.errors import HudiBucketError, InvalidBucketCountError
from hudi_bucket.spark.session import STRING_HASH_FUNCTION, configure

pytestmark = pytest.mark.spark

ROWS = 3000
COUNTS = [1, 2, 8, 97, 256, 99_999_999]
POOL = "abcXYZ0189 -_.é中\U0001f600\U0010ffff"


@pytest.fixture
def small_arrow_batches(spark: Any) -> Iterator[None]:
    """Several Arrow batches per task, so batch boundaries (sliced arrays) are exercised."""
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    previous = spark.conf.get(key)
    spark.conf.set(key, "257")
    yield
    spark.conf.set(key, previous)


def random_key(rng: random.Random) -> str:
    """A simple key, a complex key (values may hold ',' and ':', placeholders included), or a bare pair."""

    def text(separators: str = ",:") -> str:
        return "".join(rng.choice(POOL + separators) for _ in range(rng.randrange(0, 16)))

    kind = rng.randrange(4)
    if kind == 0:
        return text(separators="")
    if kind == 1:
        return text()
    if kind == 2:
        return f"id:{text()},name:{rng.choice(['__null__', '__empty__', text(separators=',')])}"
    return f"id:{text(separators='')}"


def scalar_bucket(key: str, hash_fields: list[str], n: int, style: KeyStyle) -> int | None:
    """The core function's bucket; None for a key it refuses (no Hudi writer can have bucketed it)."""
    try:
        return record_key_bucket_id(key, hash_fields, n, style)
    except HudiBucketError:
        return None


@pytest.mark.usefixtures("small_arrow_batches")
@pytest.mark.parametrize("style", list(KeyStyle))
@pytest.mark.parametrize("hash_fields", [["id", "name"], ["name"]])
def test_column_equals_the_scalar_function_on_random_keys(
    spark: Any, style: KeyStyle, hash_fields: list[str]
) -> None:
    rng = random.Random(f"{style.value}{hash_fields}")
    rows = [(i, random_key(rng), rng.choice(COUNTS)) for i in range(ROWS)]
    expected = {i: scalar_bucket(key, hash_fields, n, style) for i, key, n in rows}
    keys = spark.createDataFrame([r for r in rows if expected[r[0]] is not None], "i int, key string, n int")

    result = keys.select("i", bucket_id_column("key", "n", hash_fields, style).alias("bucket")).collect()

    assert len(result) > ROWS * 0.9
    assert {r.i: r.bucket for r in result} == {i: b for i, b in expected.items() if b is not None}


@pytest.fixture(params=["our function", "reflect"])
def string_hash(request: pytest.FixtureRequest, spark: Any) -> Iterator[str]:
    """The JVM path hashes keys by our JVM function, or, on a Spark without our JVM classes, by
    Spark's ``reflect``."""
    if request.param == "reflect":
        spark.sql(f"DROP TEMPORARY FUNCTION {STRING_HASH_FUNCTION}")
    try:
        yield request.param
    finally:
        configure(spark)


def test_our_jvm_function_is_compiled_into_the_stage_code(spark: Any) -> None:
    keys = spark.createDataFrame([("a",)], "key string")
    bucket = bucket_id_column("key", 8, ["id"], every_key_whole=True).alias("b")
    plan = keys.select(bucket)._jdf.queryExecution().executedPlan().toString()
    # Whole-stage code generation marks each operator it compiles with "*(<stage>)".
    project = next(line for line in plan.splitlines() if "Project" in line)
    assert project.lstrip(" +-").startswith("*("), plan


@pytest.mark.parametrize("style", list(KeyStyle))
def test_the_jvm_path_equals_the_scalar_function_on_keys_taken_whole(
    spark: Any, style: KeyStyle, string_hash: str
) -> None:
    rng = random.Random(f"whole{style.value}")
    rows = [(i, random_key(rng), rng.choice(COUNTS)) for i in range(ROWS)]
    keys = spark.createDataFrame(rows, "i int, key string, n int")
    whole = {r.i for r in keys.filter(key_taken_whole("key", style)).select("i").collect()}
    assert whole == {i for i, key, _ in rows if is_single_value_key(key, style)}

    jvm = bucket_id_column("key", "n", ["id"], style, every_key_whole=True)
    result = keys.filter(key_taken_whole("key", style)).select("i", jvm.alias("bucket")).collect()

    assert len(result) > ROWS * 0.4
    assert {r.i: r.bucket for r in result} == {
        i: record_key_bucket_id(key, ["id"], n, style) for i, key, n in rows if i in whole
    }


def test_a_null_key_is_never_taken_whole_and_fails_the_jvm_path(spark: Any) -> None:
    keys = spark.createDataFrame([("a",), (None,)], "key string")
    assert [r.w for r in keys.select(key_taken_whole("key", KeyStyle.HUDI_1X).alias("w")).collect()] == [
        True,
        False,
    ]
    with pytest.raises(Exception, match="a record key is null"):
        keys.select(bucket_id_column("key", 8, ["id"], every_key_whole=True)).collect()


def test_hudi_check_vectors_and_key_styles(spark: Any) -> None:
    keys = spark.createDataFrame([("TXN-102",), ("id:1,name:a1,1",)], "key string")
    by_style = {
        style: [
            r.b for r in keys.select(bucket_id_column("key", 8, ["id", "name"], style).alias("b")).collect()
        ]
        for style in KeyStyle
    }
    assert by_style[KeyStyle.HUDI_1X] == [7, 5]
    # Hudi 0.x cut the value "a1,1" at its comma.
    assert by_style[KeyStyle.HUDI_0X] == [7, bucket_id(["1", "a1", "1"], 8)]


def test_each_row_is_bucketed_under_its_partitions_count(spark: Any) -> None:
    rows = spark.createDataFrame(
        [("k1", "dt=2025-11-11"), ("k1", "dt=2025-11-12"), ("k1", "other"), ("k1", None)],
        "key string, partition string",
    )
    counts = {"dt=2025-11-11": 97, "dt=2025-11-12": 3}
    n = num_buckets_column("partition", counts, default=5)

    result = rows.select(n.alias("n"), bucket_id_column("key", n, ["id"]).alias("b")).collect()

    assert [(r.n, r.b) for r in result] == [(c, bucket_id(["k1"], c)) for c in (97, 3, 5, 5)]


def test_no_partition_counts_means_the_default_everywhere(spark: Any) -> None:
    result = spark.range(2).select(num_buckets_column(F.lit("p"), {}, default=4).alias("n")).collect()
    assert [r.n for r in result] == [4, 4]


@pytest.mark.parametrize("bad", [0, -1, 100_000_001])
def test_impossible_bucket_counts_are_refused_before_any_task_runs(bad: int) -> None:
    with pytest.raises(InvalidBucketCountError):
        num_buckets_column("partition", {"p": bad}, default=4)
    with pytest.raises(InvalidBucketCountError):
        num_buckets_column("partition", {}, default=bad)
    with pytest.raises(InvalidBucketCountError):
        bucket_id_column("key", bad, ["id"])


def test_a_null_record_key_fails_the_job_as_hudi_has_no_bucket_for_it(spark: Any) -> None:
    keys = spark.createDataFrame([("a",), (None,)], "key string")
    with pytest.raises(PythonException, match=r"CorruptTableError: 1 record key\(s\) are null"):
        keys.select(bucket_id_column("key", 8, ["id"])).collect()


def test_the_jvm_path_fails_on_a_key_it_cannot_take_whole(spark: Any) -> None:
    keys = spark.createDataFrame([("a",), ("id:1,name:x",)], "key string")
    with pytest.raises(Exception, match="a record key holds several fields") as failure:
        keys.select(bucket_id_column("key", 8, ["id"], every_key_whole=True)).collect()
    assert is_split_key_failure(failure.value)

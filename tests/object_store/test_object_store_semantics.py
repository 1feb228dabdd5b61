"""What an object store changes, handled on purpose: partition values that need encoding in a key, a
crash in the middle of an apply (moves on S3 are copies, made in parallel), and throttling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from object_store.conftest import UploadTable
from object_store.faults import SlowDownProxy
from object_store.s3_tables import expected_rows, hudi_rs_rows, hudi_spark_rows, ok, put_parquet
from object_store.server import S3Server
from pyarrow import fs as pafs

from hudi_bucket.commands.apply import apply
from hudi_bucket.contract.requests import ApplyOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.spark.context import TableContext
from lib.cli_runs import run
from lib.crashes import Crash, crash

# Spaces, a percent sign (an escape to URIs), non-ASCII letters and a colon (a scheme separator to
# Hadoop's Path): all legal in S3 keys. Hudi writes values raw by default, and escapes them Hive's way
# when the table URL-encodes (hoodie.datasource.write.partitionpath.urlencode).
# Apache Hudi's Spark reader takes a partition's value from its path and decodes %XX there, so a raw
# value that looks escaped ("a%20b") reads back decoded, whoever wrote it: such values need URL encoding
# too.
RAW_VALUES = ["2025 11 11", "São Paulo", "100%", "東京"]
ENCODED_VALUES = [*RAW_VALUES, "a%20b", "2025-11-11 10:00:00"]
WRITE = ["--record-key", "id", "--partition-field", "place", "--ordering-field", "ts", "--hive-style"]


@pytest.mark.parametrize(
    ("values", "url_encode", "folders"),
    [
        (RAW_VALUES, [], RAW_VALUES),
        (ENCODED_VALUES, ["--url-encode-partitions"], [*RAW_VALUES[:2], "100%25", "東京", "a%2520b", "2025-11-11 10%3A00%3A00"]),
    ],
    ids=["raw", "url-encoded"],
)  # fmt: skip
def test_partition_values_needing_encoding_round_trip_through_every_reader(
    spark: Any, s3: S3Server, s3_prefix: str, capsys: pytest.CaptureFixture[str],
    values: list[str], url_encode: list[str], folders: list[str],
) -> None:  # fmt: skip
    table = s3.uri(f"{s3_prefix}/events")
    rows = [{"id": i, "place": values[i % len(values)], "ts": 1} for i in range(6 * len(values))]
    source = put_parquet(s3, f"{s3_prefix}/in", rows)
    ok(capsys, "write", "--table", table, "--source", source, *WRITE, *url_encode, "--create", "--expressions", "Paulo,4", "--default", "2")  # fmt: skip

    shown = ok(capsys, "show", "--table", table, "--format", "json")
    assert sorted(p["partition"] for p in shown["result"]["partitions"]) == sorted(
        f"place={f}" for f in folders
    )
    assert (
        s3.filesystem().get_file_info(f"{s3.bucket}/{s3_prefix}/events/place={folders[-1]}").type.name
        == "Directory"
    )
    applied = ok(capsys, "apply", "--table", table, "--expressions", "Paulo,4;%,8;東,3", "--default", "2")
    assert len(applied["result"]["plan"]["changes"]) == len(values) - 2  # all but Paulo and 2025 11 11
    assert ok(capsys, "verify", "--table", table)["result"]["ok"] is True
    assert hudi_rs_rows(s3, table) == expected_rows(rows)
    assert hudi_spark_rows(spark, table) == expected_rows(rows)


def test_a_colon_in_a_raw_partition_value_is_refused_before_anything_is_written(
    s3: S3Server, s3_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = s3.uri(f"{s3_prefix}/events")
    source = put_parquet(s3, f"{s3_prefix}/in", [{"id": 1, "place": "10:00", "ts": 1}])
    refused = run(capsys, "write", "--table", table, "--source", source, *WRITE, "--create")
    assert refused.code == 1
    assert "colon" in refused.err
    assert "--url-encode-partitions" in refused.err
    assert s3.filesystem().get_file_info(f"{s3.bucket}/{s3_prefix}/events").type.name == "NotFound"


def test_a_crash_mid_apply_on_s3_leaves_the_table_readable_and_the_next_apply_converges(
    spark: Any, s3: S3Server, s3_prefix: str, upload_table: UploadTable, written_table: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    table = upload_table(written_table("cow_v6"), s3_prefix)
    before, before_in_hudi = hudi_rs_rows(s3, table), hudi_spark_rows(spark, table)
    request = ApplyOptions(BucketRules.parse("^10$,4", 2), convert=True)
    ctx = TableContext.open(spark, table)
    with monkeypatch.context() as crashing:
        crash(crashing, "mid-data, after some files were written")
        with pytest.raises(Crash):
            apply(ctx, request)

    pending = ctx.reload().table.timeline.pending()
    assert len(pending) == 1
    assert hudi_rs_rows(s3, table) == before  # readers never see a half-done rescale
    assert hudi_spark_rows(spark, table) == before_in_hudi

    result = apply(ctx.reload(), request)
    assert f"rolled back our unfinished rescale {pending[0].timestamp}" in result.notes
    assert ctx.reload().table.timeline.pending() == ()
    assert hudi_rs_rows(s3, table) == before
    assert hudi_spark_rows(spark, table) == before_in_hudi
    assert ok(capsys, "verify", "--table", table)["result"]["ok"] is True


def test_throttling_is_retried_and_the_apply_completes(
    spark: Any,
    s3: S3Server,
    s3_prefix: str,
    written_table: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every twentieth request answered 503 SlowDown, as S3 answers a prefix over its request rate: S3A
    retries them (its throttle retries, with backoff), and the jobs see no failure."""
    bucket = "throttled"
    s3.filesystem().create_dir(bucket)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    with SlowDownProxy(s3.port, every=20) as proxy:
        # This bucket only, through the proxy. Both retry layers stay on: the AWS SDK's (S3A 3.3.4
        # reopens a read stream once, counting on them) and S3A's own, from a short first interval.
        conf.set(f"fs.s3a.bucket.{bucket}.endpoint", proxy.endpoint)
        conf.set(f"fs.s3a.bucket.{bucket}.retry.throttle.interval", "20ms")
        local = written_table("cow_v8")
        pafs.copy_files(str(local), f"{bucket}/{s3_prefix}", destination_filesystem=s3.filesystem())
        table = f"s3a://{bucket}/{s3_prefix}"
        before = hudi_rs_rows(s3, table)

        applied = ok(
            capsys, "apply", "--table", table, "--expressions", "^10$,4", "--default", "2", "--convert"
        )
        assert ok(capsys, "verify", "--table", table)["result"]["ok"] is True
    assert applied["outcome"] == "Succeeded"
    assert proxy.throttled >= 5
    assert hudi_rs_rows(s3, table) == before

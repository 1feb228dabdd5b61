"""The files a rescale writes are the table's own in kind: written with the codec of the files Hudi wrote,
and carrying the footer entries Hudi's writers record in every base file (the minimum and maximum record
key, and a bloom filter of the keys that Hudi's own filter class reads back and finds every key in)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_bucket.commands.apply import apply
from hudi_bucket.contract.requests import ApplyOptions
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.spark.context import TableContext
from hudi_bucket.spark.parquet_footers import footer
from lib.hudi_tables import HudiBucketTables

pytestmark = pytest.mark.spark


def codec(spark: Any, file: Path) -> str:
    return str(footer(spark, f"file:{file}").getBlocks()[0].getColumns()[0].getCodec().name())


@pytest.mark.parametrize("full_shuffle", [False, True])
def test_a_rescaled_file_has_the_tables_codec_and_hudis_footer_entries(
    spark: Any, hudi_tables: HudiBucketTables, tmp_path: Path, full_shuffle: bool
) -> None:
    root = tmp_path / "orders"
    hudi_tables.copy(root, 9)
    hudis = sorted(root.glob("day=*/*.parquet"))
    ctx = TableContext.open(spark, str(root))

    result = apply(
        ctx,
        ApplyOptions(BucketRules.parse("day=2025-11-11,8;day=2025-11-12,1", 2), full_shuffle=full_shuffle),
    )

    ours = sorted(root.glob(f"day=*/*_{result.instant}.parquet"))
    assert len(ours) == 9
    assert {codec(spark, f) for f in hudis} == {"GZIP"}  # Hudi 1.2.0's default
    bloom_filters = spark.sparkContext._jvm.org.apache.hudi.common.bloom.BloomFilterFactory
    for file in ours:
        assert codec(spark, file) == "GZIP"
        entries = footer(spark, f"file:{file}").getFileMetaData().getKeyValueMetaData()
        keys = sorted(r[0] for r in spark.read.parquet(f"file:{file}").select("_hoodie_record_key").collect())
        assert (entries["hoodie_min_record_key"], entries["hoodie_max_record_key"]) == (keys[0], keys[-1])
        assert entries["hoodie_bloom_filter_type_code"] == "DYNAMIC_V0"
        bloom = bloom_filters.fromString(entries["org.apache.hudi.bloomfilter"], "DYNAMIC_V0")
        assert all(bloom.mightContain(key) for key in keys)
        assert not any(bloom.mightContain(f"not-{key}") for key in keys)

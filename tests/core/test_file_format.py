"""The settings a table's new files are written with: the table's own where it says, else what its files
show, else Apache Hudi's writer defaults."""

from __future__ import annotations

from hudi_bucket.core.file_format import (
    BLOOM_FILTER_FOOTER,
    BLOOM_TYPE_FOOTER,
    BloomFilter,
    FileFormat,
    SampleFile,
)

HUDI_BLOOM = BloomFilter(type_code="DYNAMIC_V0", entries=60000, fpp="0.000000001", max_entries=100000)


def test_a_table_that_says_nothing_and_has_no_files_is_written_as_hudi_writes_by_default() -> None:
    assert FileFormat.of_table({}, None) == FileFormat(
        codec="gzip", block_size=120 * 1024 * 1024, page_size=1024 * 1024, dictionary=True, bloom=HUDI_BLOOM
    )


def test_the_codec_and_the_bloom_filter_follow_the_tables_files() -> None:
    snappy_simple = SampleFile("SNAPPY", {BLOOM_FILTER_FOOTER: ""})
    assert FileFormat.of_table({}, snappy_simple).codec == "snappy"
    assert FileFormat.of_table({}, snappy_simple).bloom == BloomFilter("SIMPLE", 60000, "0.000000001", 100000)
    dynamic = SampleFile("ZSTD", {BLOOM_FILTER_FOOTER: "", BLOOM_TYPE_FOOTER: "DYNAMIC_V0"})
    assert FileFormat.of_table({}, dynamic).bloom == HUDI_BLOOM
    assert FileFormat.of_table({}, SampleFile("LZ4_RAW", {})).codec == "lz4raw"
    assert FileFormat.of_table({}, SampleFile(None, {})).codec == "gzip"  # a file of no rows shows none


def test_what_the_table_properties_say_comes_first() -> None:
    properties = {
        "hoodie.parquet.compression.codec": "ZSTD",
        "hoodie.parquet.block.size": "1048576",
        "hoodie.parquet.page.size": "65536",
        "hoodie.parquet.dictionary.enabled": "false",
        "hoodie.bloom.index.filter.type": "SIMPLE",
        "hoodie.index.bloom.num_entries": "1000",
        "hoodie.index.bloom.fpp": "0.01",
    }
    sample = SampleFile("GZIP", {BLOOM_FILTER_FOOTER: "", BLOOM_TYPE_FOOTER: "DYNAMIC_V0"})
    assert FileFormat.of_table(properties, sample) == FileFormat(
        codec="zstd",
        block_size=1048576,
        page_size=65536,
        dictionary=False,
        bloom=BloomFilter("SIMPLE", 1000, "0.01", 100000),
    )
    assert FileFormat.of_table({"hoodie.parquet.bloom.filter.enabled": "false"}, sample).bloom is None

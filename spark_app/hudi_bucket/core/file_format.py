"""How a table's base files are written, so that a file we write is one of its own: the codec, Parquet's
row group, page and dictionary settings, and the bloom filter Hudi's writers record in every footer.

Hudi keeps its writers' settings nowhere in the table (``hoodie.properties`` holds them only when a user
put them there), so each is taken from, in order: ``hoodie.properties``; a base file of the table (its
codec, and whether and which bloom filter its footer carries); Apache Hudi 1.2.0's writer defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

CODEC = "hoodie.parquet.compression.codec"
BLOCK_SIZE = "hoodie.parquet.block.size"
PAGE_SIZE = "hoodie.parquet.page.size"
DICTIONARY = "hoodie.parquet.dictionary.enabled"
BLOOM_ENABLED = "hoodie.parquet.bloom.filter.enabled"
BLOOM_TYPE = "hoodie.bloom.index.filter.type"
BLOOM_ENTRIES = "hoodie.index.bloom.num_entries"
BLOOM_FPP = "hoodie.index.bloom.fpp"
BLOOM_MAX_ENTRIES = "hoodie.bloom.index.filter.dynamic.max.entries"

# Apache Hudi 1.2.0's defaults for the settings above.
HUDI_DEFAULTS = {
    CODEC: "gzip",
    BLOCK_SIZE: str(120 * 1024 * 1024),
    PAGE_SIZE: str(1024 * 1024),
    DICTIONARY: "true",
    BLOOM_ENABLED: "true",
    BLOOM_TYPE: "DYNAMIC_V0",
    BLOOM_ENTRIES: "60000",
    BLOOM_FPP: "0.000000001",
    BLOOM_MAX_ENTRIES: "100000",
}

# Hudi's footer entries (its HoodieBloomFilterWriteSupport).
BLOOM_FILTER_FOOTER = "org.apache.hudi.bloomfilter"
BLOOM_TYPE_FOOTER = "hoodie_bloom_filter_type_code"
MIN_KEY_FOOTER = "hoodie_min_record_key"
MAX_KEY_FOOTER = "hoodie_max_record_key"

# Parquet's codec names (as a footer records them) by the name Spark's ``compression`` takes.
_SPARK_CODECS = {
    "UNCOMPRESSED": "uncompressed",
    "SNAPPY": "snappy",
    "GZIP": "gzip",
    "LZO": "lzo",
    "BROTLI": "brotli",
    "LZ4": "lz4",
    "LZ4_RAW": "lz4raw",
    "ZSTD": "zstd",
}


@dataclass(frozen=True)
class SampleFile:
    """What one of the table's base files shows of how it was written: its codec (Parquet's name, as its
    first column chunk records it; None in a file of no rows) and its footer's key-value entries (those
    named above, the bloom filter's value left out)."""

    codec: str | None
    footer: Mapping[str, str]


@dataclass(frozen=True)
class BloomFilter:
    type_code: str  # Hudi's BloomFilterTypeCode: DYNAMIC_V0 or SIMPLE
    entries: int
    fpp: str  # as written, passed on as it is
    max_entries: int


@dataclass(frozen=True)
class FileFormat:
    codec: str  # Spark's name for it
    block_size: int
    page_size: int
    dictionary: bool
    bloom: BloomFilter | None  # None: Hudi's writer would record none

    @classmethod
    def of_table(cls, properties: Mapping[str, str], sample: SampleFile | None) -> FileFormat:
        def setting(key: str) -> str:
            return properties.get(key, HUDI_DEFAULTS[key])

        codec = properties.get(CODEC) or (
            _SPARK_CODECS.get(sample.codec) if sample and sample.codec else None
        )
        bloom = None
        if setting(BLOOM_ENABLED).lower() == "true":
            bloom = BloomFilter(
                type_code=_bloom_type(properties, sample),
                entries=int(setting(BLOOM_ENTRIES)),
                fpp=setting(BLOOM_FPP),
                max_entries=int(setting(BLOOM_MAX_ENTRIES)),
            )
        return cls(
            codec=(codec or HUDI_DEFAULTS[CODEC]).lower(),
            block_size=int(setting(BLOCK_SIZE)),
            page_size=int(setting(PAGE_SIZE)),
            dictionary=setting(DICTIONARY).lower() == "true",
            bloom=bloom,
        )


def _bloom_type(properties: Mapping[str, str], sample: SampleFile | None) -> str:
    """The table's setting, else the type of the sample's filter (Hudi names only a dynamic one), else
    Hudi's default."""
    if BLOOM_TYPE in properties:
        return properties[BLOOM_TYPE]
    if sample and BLOOM_FILTER_FOOTER in sample.footer:
        return sample.footer.get(BLOOM_TYPE_FOOTER, "SIMPLE")
    return HUDI_DEFAULTS[BLOOM_TYPE]

"""Partition values in a URL-encoding table's paths are escaped exactly as Apache Hudi escapes them (its
own PartitionPathEncodeUtils, in the JVM, is the oracle)."""

from __future__ import annotations

from typing import Any

import pytest

from hudi_bucket.core.partition_paths import escape_path_name

VALUES = [
    "2025-11-11 10:00:00",
    "São Paulo",
    "100%",
    "a%20b",
    "東京",
    "q\"#'*/:=?\\{[]^",
    "tab\there\x7fdel\x01",
    "plain-value_1.2",
]


@pytest.mark.spark
@pytest.mark.parametrize("value", VALUES)
def test_escaping_matches_hudis(jvm: Any, value: str) -> None:
    hudi = jvm.org.apache.hudi.common.util.PartitionPathEncodeUtils
    assert escape_path_name(value) == hudi.escapePathName(value)


def test_spaces_and_non_ascii_letters_stay_and_a_colon_is_escaped() -> None:
    assert escape_path_name("São Paulo 10:00") == "São Paulo 10%3A00"

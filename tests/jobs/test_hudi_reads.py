"""Hudi's reader failing says so: which partitions, Hudi's own words, and for a bootstrapped table why."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pyspark.errors import PySparkException

from hudi_bucket.errors import HudiReadError
from hudi_bucket.reading.hudi_reads import hudi_read_failures


def context(bootstrap_base_path: str | None) -> Any:
    return SimpleNamespace(
        table=SimpleNamespace(config=SimpleNamespace(bootstrap_base_path=bootstrap_base_path))
    )


@pytest.mark.parametrize("bootstrapped", [False, True])
def test_a_failure_of_hudis_reader_names_the_partitions_and_hudis_words(bootstrapped: bool) -> None:
    ctx = context("/data/source" if bootstrapped else None)
    with pytest.raises(HudiReadError) as failed, hudi_read_failures(ctx, ["day=1", "day=2"]):
        raise PySparkException("java.lang.AssertionError: assertion failed\n\tat somewhere")

    said = str(failed.value)
    assert "Apache Hudi's reader failed on partition(s) 'day=1', 'day=2': " in said
    assert "java.lang.AssertionError: assertion failed" in said
    assert "nothing was committed" in said
    assert ("spark.emptyDataFrame" in said) is bootstrapped


def test_without_partitions_read_by_hudi_a_failure_is_left_as_it_is() -> None:
    with pytest.raises(PySparkException), hudi_read_failures(context(None), []):
        raise PySparkException("not Hudi's")

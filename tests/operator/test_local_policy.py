"""The local mode judges a spec by the same policy as the operator in a cluster, read from the same
settings in its environment: what a cluster would refuse is refused before any job starts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hudi_bucket_operator.runtime.local import apply_locally


def manifest(uri: Path | str, spark: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "hudi.bucketops.io/v1alpha1",
        "kind": "HudiBucketTable",
        "metadata": {"name": "orders", "namespace": "lake"},
        "spec": {
            "table": {"uri": str(uri)},
            "buckets": {"default": 2, "rules": [{"pattern": "11-11", "buckets": 6}]},
            "spark": spark,
        },
    }


@pytest.mark.parametrize(
    ("uri", "settings", "reason"),
    [
        ("/data/orders", {"sparkConf": {"spark.kubernetes.driver.volumes.hostPath.h.mount.path": "/"}},
         "SettingNotAllowed"),
        ("/data/orders", {"envFromSecrets": [{"name": "db-admin"}]}, "SecretNotAllowed"),
        ("/data/orders", {"hadoopConf": {"fs.s3a.connection.maximum": "${env.PASSWORD}"}}, "SettingNotAllowed"),
        ("/data/orders", {"driver": {"memory": "99999999g"}}, "ResourcesNotAllowed"),
        ("http://169.254.169.254/latest/meta-data", {}, "TableUriNotAllowed"),
    ],
)  # fmt: skip
def test_a_spec_a_cluster_would_refuse_is_refused_locally_before_any_job(
    tmp_path: Path, uri: str, settings: dict[str, Any], reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (not "spark": a test using a parameter of that name is taken for one needing the Spark session)
    monkeypatch.setenv("HBO_ALLOWED_TABLE_URIS", '{"*": ["/data/"]}')
    lines: list[str] = []
    [body] = asyncio.run(apply_locally([manifest(uri, settings)], tmp_path / "state", lines.append))
    stalled = next(c for c in body["status"]["conditions"] if c["type"] == "Stalled")
    assert (body["status"]["phase"], stalled["reason"]) == ("Stalled", reason)
    assert not any("started" in line for line in lines)  # no job
    assert not (tmp_path / "state" / "jobs").exists() or not any(
        (tmp_path / "state" / "jobs").rglob("*.json")
    )


def test_the_local_policy_is_the_admins_settings_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HBO_ALLOWED_TABLE_URIS", '{"*": ["/lake/"]}')
    [body] = asyncio.run(apply_locally([manifest(tmp_path / "orders", {})], tmp_path / "state", print))
    stalled = next(c for c in body["status"]["conditions"] if c["type"] == "Stalled")
    assert stalled["reason"] == "TableUriNotAllowed"
    assert "the admins allow them under ['/lake/']" in stalled["message"]


def test_locally_too_no_table_is_allowed_until_its_location_is_named(tmp_path: Path) -> None:
    lines: list[str] = []
    [body] = asyncio.run(apply_locally([manifest(tmp_path / "orders", {})], tmp_path / "state", lines.append))
    stalled = next(c for c in body["status"]["conditions"] if c["type"] == "Stalled")
    assert stalled["reason"] == "TableUriNotAllowed"
    assert "HBO_ALLOWED_TABLE_URIS" in stalled["message"]
    assert not any("started" in line for line in lines)

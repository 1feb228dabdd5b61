"""The SQL a job builds holds a table author's text (the table's URI in ``CREATE TABLE ... LOCATION``, its
rule patterns in Hudi's ``CALL``), and Spark would put the job's environment variables (its credentials)
in place of a ``${env:NAME}`` in it: the job runs that SQL as written. The jobs run as the operator runs
them, in a process of their own, with a variable planted in their environment."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV
from lib.hudi_tables import HudiBucketTables
from lib.paths import hudi_bundle, jvm_jar

PLANTED = "plantedsecretvalue"  # letters only: in a rule's character class it matches no day's digit
REFERENCE = "${env:HBO_PLANTED}"
RULES = "day=2025-11-1[23],6"  # days 12 and 13; the table has 2 buckets, and day 11 has 4


def hudi_engine_apply(
    table: Path, expressions: str, folder: Path
) -> tuple[subprocess.CompletedProcess[str], str]:
    """``hudi-bucket-job apply --engine Hudi`` with HBO_PLANTED in its environment and ``folder`` as its
    working folder; returns the process and the report it wrote."""
    report = folder / "report.json"
    environ = {
        **os.environ,
        "HBO_PLANTED": PLANTED,
        HUDI_BUNDLE_ENV: str(hudi_bundle()),
        JVM_JAR_ENV: str(jvm_jar()),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hudi_bucket",
            "apply",
            "--table",
            str(table),
            "--engine",
            "Hudi",
            "--expressions",
            expressions,
            "--default",
            "2",
            "--report",
            str(report),
        ],
        env=environ,
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    return done, report.read_text()


def listing(root: Path) -> dict[str, str | None]:
    """Every folder and file below ``root`` with a digest of its bytes: equal listings, untouched."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


def everything_below(folder: Path) -> str:
    """The paths of the files and folders below ``folder``, and what the files hold."""
    paths = sorted(folder.rglob("*"))
    return "\n".join(
        [str(p) for p in paths] + [p.read_bytes().decode("latin-1") for p in paths if p.is_file()]
    )


def test_a_reference_in_the_tables_uri_is_not_replaced_by_the_jobs_environment(
    hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "team-a" / REFERENCE
    hudi_tables.copy(root, 9)
    # Where the URI would lead with the variable's value in it: a table the job must not touch.
    decoy = tmp_path / "team-a" / PLANTED
    hudi_tables.copy(decoy, 9)
    decoy_before = listing(decoy)
    work = tmp_path / "job"
    work.mkdir()

    done, report = hudi_engine_apply(root, RULES, work)

    # Hudi's catalog does not find a table in a folder whose name holds braces (the job fails, saying
    # so): what matters here is where the job looked and what it said.
    assert PLANTED not in done.stdout + done.stderr + report
    assert listing(decoy) == decoy_before
    assert PLANTED not in everything_below(root) + everything_below(work)


def test_a_reference_in_a_rules_pattern_is_not_replaced_by_the_jobs_environment(
    hudi_tables: HudiBucketTables, tmp_path: Path
) -> None:
    root = tmp_path / "team-a" / "orders"
    hudi_tables.copy(root, 9)

    done, report = hudi_engine_apply(root, f"day=2025-11-1[23{REFERENCE}],6", tmp_path)

    assert PLANTED not in done.stdout + done.stderr
    assert PLANTED not in everything_below(tmp_path)  # the report, the table's files (its rules), paths
    assert done.returncode == 0, done.stderr
    assert json.loads(report)["outcome"] == "Succeeded"
    configs = root / ".hoodie" / ".bucket_index" / "partition_bucket_index_meta" / "configs"
    latest = max(configs.glob("*.hashing_config"))
    assert f"1[23{REFERENCE}],6" in latest.read_text()  # Hudi keeps the pattern as written

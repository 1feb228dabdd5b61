"""A job's error text can hold its environment: why the operator refuses ``${`` in a table's settings
and copies a job's words into the table's status only redacted (operator/hudi_bucket_operator/decide/redaction.py).

Hadoop replaces ``${env.NAME}`` in any setting it reads with the JVM's environment, where a job keeps the
Secrets named in spec.spark.envFromSecrets; a value it then cannot parse is echoed in the job's error.
Here the environment variable is PATH, standing in for a Secret's key: the job's report holds its value,
and the operator's redaction takes it out.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hudi_bucket.cli import EXIT_FAILED
from hudi_bucket_operator.decide.redaction import REDACTED, job_words
from lib.cli_runs import run

pytestmark = pytest.mark.spark

KEY = "fs.s3a.connection.maximum"  # an integer setting a table may set


@pytest.fixture
def expanded_setting(spark: Any) -> Iterator[str]:
    """The session's Hadoop configuration with KEY set to ``${env.PATH}``; the JVM's PATH."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    before = hadoop.getRaw(KEY)
    hadoop.set(KEY, "${env.PATH}")
    try:
        yield str(spark.sparkContext._jvm.java.lang.System.getenv("PATH"))
    finally:
        hadoop.unset(KEY) if before is None else hadoop.set(KEY, before)


def test_a_setting_holding_an_environment_variable_puts_its_value_in_the_jobs_error(
    capsys: pytest.CaptureFixture[str], expanded_setting: str, tmp_path: Any
) -> None:
    bucket = f"never-reached-{uuid.uuid4().hex[:8]}"  # a new S3A client, which reads the setting
    report = tmp_path / "report.json"
    done = run(capsys, "plan", "--table", f"s3a://{bucket}/t", "--expressions", "x,4", "--default", "2",
               "--report", str(report))  # fmt: skip
    assert done.code == EXIT_FAILED
    said = json.loads(report.read_text())["error"]["message"]  # what the operator reads
    assert f'For input string: "{expanded_setting}"' in said  # the environment, in the report
    words = job_words(said, ())
    assert expanded_setting not in words
    assert f"For input string: {REDACTED}" in words

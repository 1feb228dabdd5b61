"""A job's words as the table's author reads them in its status and events: redacted and bounded."""

from __future__ import annotations

import pytest

from hudi_bucket_operator.decide.redaction import MAX_JOB_WORDS, REDACTED, job_words

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    "words",
    [
        f'java.lang.NumberFormatException: For input string: "{SECRET}"',
        f"spark.sql.shuffle.partitions should be int, but was {SECRET}",
        f"No enum constant org.apache.hadoop.fs.s3a.S3AInputPolicy.{SECRET}",
        f"fs.s3a.secret.key={SECRET} was refused",
        f"password: '{SECRET}'",
        f"AWS_SECRET_ACCESS_KEY = {SECRET}",
        f"s3a://AKIAEXAMPLE:{SECRET}@lake/orders: Hadoop cannot open this location",
        f"token={SECRET}\n\tat org.apache.hadoop.conf.Configuration.getInt(Configuration.java:1)",
    ],
)
def test_what_parsers_echo_and_what_follows_a_credentials_name_is_redacted(words: str) -> None:
    said = job_words(words, ())
    assert SECRET not in said
    assert REDACTED in said
    assert "\n" not in said


def test_each_value_of_the_specs_own_settings_is_redacted_but_not_every_short_one() -> None:
    words = "s3a://lake/t: http://minio.lake:9000 refused the connection after 64 attempts: true"
    said = job_words(words, ("http://minio.lake:9000", "64", "true"))
    assert said == f"s3a://lake/t: {REDACTED} refused the connection after 64 attempts: true"


def test_a_jobs_words_keep_what_helps_and_are_bounded() -> None:
    words = "pending instant 20261121093000123 of another writer in day=2025-11-11 (roll it back)"
    assert job_words(words, ()) == words
    long = job_words("x" * 100_000, ())
    assert len(long) == MAX_JOB_WORDS
    assert long.endswith("more characters: see the job's driver log)")

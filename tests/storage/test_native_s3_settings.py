"""The native S3 client reaches the store as S3A is set up to, or S3A lists: the settings carried over."""

from __future__ import annotations

import pytest

from hudi_bucket.storage.native_s3 import ClientSettings, NotCarriedOverError, client_settings

S3_COMPATIBLE = {"fs.s3a.endpoint": "http://minio.lake:9000", "fs.s3a.path.style.access": "true"}


def test_an_s3_compatible_store_is_reached_at_its_endpoint_path_style_with_s3a_timeouts_and_retries() -> None:
    given = {
        **S3_COMPATIBLE,
        "fs.s3a.endpoint.region": "lake-1",
        "fs.s3a.attempts.maximum": "7",
        "fs.s3a.retry.throttle.limit": "5",
        "fs.s3a.connection.establish.timeout": "2500",
        "fs.s3a.connection.timeout": "60000",
    }
    assert client_settings(given) == ClientSettings(
        scheme="http",
        endpoint="minio.lake:9000",
        region="lake-1",
        virtual_hosted=False,
        max_attempts=12,
        connect_timeout_s=2.5,
        request_timeout_s=60.0,
    )


def test_s3a_defaults_carry_over() -> None:
    settings = client_settings({"fs.s3a.endpoint": "s3.eu-west-1.amazonaws.com"})
    assert (settings.scheme, settings.region, settings.virtual_hosted) == ("https", "eu-west-1", True)
    assert (settings.max_attempts, settings.connect_timeout_s, settings.request_timeout_s) == (40, 5.0, 200.0)


@pytest.mark.parametrize(
    ("ssl", "scheme"), [("false", "http"), ("FALSE", "http"), ("true", "https"), (None, "https")]
)
def test_an_endpoint_without_a_scheme_takes_it_from_the_ssl_setting(ssl: str | None, scheme: str) -> None:
    given = {"fs.s3a.endpoint": "store:9000", "fs.s3a.connection.ssl.enabled": ssl}
    assert client_settings(given).scheme == scheme


@pytest.mark.parametrize(
    ("endpoint", "region"),
    [
        ("s3.us-west-2.amazonaws.com", "us-west-2"),
        ("s3-eu-central-1.amazonaws.com", "eu-central-1"),
        ("https://s3.dualstack.ap-south-1.amazonaws.com", "ap-south-1"),
        ("s3.cn-north-1.amazonaws.com.cn", "cn-north-1"),
        ("http://10.0.0.5:9000", "us-east-1"),  # another store: what the AWS SDK signs for
    ],
)
def test_a_region_not_set_is_the_one_s3a_signs_for(endpoint: str, region: str) -> None:
    assert client_settings({"fs.s3a.endpoint": endpoint}).region == region


@pytest.mark.parametrize("endpoint", [None, "", "s3.amazonaws.com"])
def test_aws_global_endpoint_without_a_region_is_left_to_s3a(endpoint: str | None) -> None:
    with pytest.raises(NotCarriedOverError, match=r"region is not set \(fs.s3a.endpoint.region\)"):
        client_settings({"fs.s3a.endpoint": endpoint})


def test_a_region_set_wins_over_the_endpoint_name() -> None:
    given = {"fs.s3a.endpoint": "s3.us-west-2.amazonaws.com", "fs.s3a.endpoint.region": "eu-west-1"}
    assert client_settings(given).region == "eu-west-1"


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [
        ("fs.s3a.proxy.host", "proxy.corp", "a proxy"),
        ("fs.s3a.signing-algorithm", "S3SignerType", "a custom signer"),
        ("fs.s3a.custom.signers", "MySigner:com.corp.Signer", "a custom signer"),
        ("fs.s3a.accesspoint.arn", "arn:aws:s3:eu-west-1:1:accesspoint/lake", "an access point"),
        ("fs.s3a.requester.pays.enabled", "TRUE", "requester pays"),
        ("fs.s3a.list.version", "1", "ListObjects version 1"),
    ],
)
def test_what_the_native_client_does_not_copy_leaves_listing_to_s3a(key: str, value: str, what: str) -> None:
    with pytest.raises(NotCarriedOverError, match=f"S3A is set up with {what} \\({key}\\)"):
        client_settings({**S3_COMPATIBLE, key: value})


@pytest.mark.parametrize(
    ("key", "value"),
    [("fs.s3a.requester.pays.enabled", "false"), ("fs.s3a.list.version", "2"), ("fs.s3a.proxy.host", " ")],
)
def test_those_settings_at_their_defaults_change_nothing(key: str, value: str) -> None:
    assert client_settings({**S3_COMPATIBLE, key: value}) == client_settings(S3_COMPATIBLE)

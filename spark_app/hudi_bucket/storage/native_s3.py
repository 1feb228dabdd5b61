"""Listing ``s3a://`` folders with a native S3 client (pyarrow's: the AWS SDK for C++) instead of S3A.

Why: S3A and the AWS SDK for Java spend about 50 µs of the JVM's CPU on each key they list (parsing the
answer, building statuses), more while the JVM is young. On 10,000 files in 20 partitions that was
0.45 s in a warm JVM and about a second in a job's new one, most of a plan; pyarrow's client lists
them in 0.2 s against the same server (tests/bench/bench_s3.py).

It is S3A in all but the HTTP code. It takes its settings from the S3A filesystem's own configuration
(per-bucket options applied), and signs with the credentials S3A's own provider chain resolves (keys,
environment, web identity, instance profile...), asked again each minute so rotated credentials carry
over. A setting it does not carry over keeps listings in S3A (``client_settings`` says which), and so
does any failure: HadoopStorage then lists through S3A for the rest of the job, so a listing S3A can
make never fails here. ``spark.hudibucket.s3.nativeListing=false`` turns it off.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from py4j.java_gateway import is_instance_of
from py4j.protocol import Py4JError
from pyarrow import fs as pafs

# The Spark setting that turns native listing off ("false").
SWITCH = "spark.hudibucket.s3.nativeListing"

# S3A's settings that shape a listing request, read from the filesystem's configuration. Timeouts are
# read in milliseconds (Hadoop parses "30s" and the like).
ENDPOINT = "fs.s3a.endpoint"
REGION = "fs.s3a.endpoint.region"
SSL = "fs.s3a.connection.ssl.enabled"
PATH_STYLE = "fs.s3a.path.style.access"
ATTEMPTS = "fs.s3a.attempts.maximum"  # the AWS SDK's retries of a request
THROTTLE_RETRIES = "fs.s3a.retry.throttle.limit"  # S3A's own retries of a throttled one, on top
CONNECT_TIMEOUT = "fs.s3a.connection.establish.timeout"
REQUEST_TIMEOUT = "fs.s3a.connection.timeout"
TIMEOUTS_MS = {CONNECT_TIMEOUT: 5_000, REQUEST_TIMEOUT: 200_000}  # S3A 3.3's defaults

# Settings that change how S3A reaches the store in ways the native client does not copy: when one is
# set (to the value shown, or to anything for None), S3A lists.
NOT_CARRIED = {
    "fs.s3a.proxy.host": (None, "a proxy"),
    "fs.s3a.signing-algorithm": (None, "a custom signer"),
    "fs.s3a.s3.signing-algorithm": (None, "a custom signer"),
    "fs.s3a.custom.signers": (None, "a custom signer"),
    "fs.s3a.accesspoint.arn": (None, "an access point"),
    "fs.s3a.requester.pays.enabled": ("true", "requester pays"),
    "fs.s3a.endpoint.fips": ("true", "a FIPS endpoint"),
    "fs.s3a.list.version": ("1", "ListObjects version 1"),
}
SETTINGS = (ENDPOINT, REGION, SSL, PATH_STYLE, ATTEMPTS, THROTTLE_RETRIES, *TIMEOUTS_MS, *NOT_CARRIED)

_AWS_REGIONAL_HOST = re.compile(r"^s3[.-](?:dualstack\.)?(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_AWS_HOST = re.compile(r"(^|\.)amazonaws\.com(\.cn)?$")


class NotCarriedOverError(Exception):
    """The S3A filesystem is set up in a way the native client does not copy; S3A lists instead."""


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the store, as S3A does (credentials apart)."""

    scheme: str
    endpoint: str | None  # host[:port]; None for AWS's own endpoint of the region
    region: str
    virtual_hosted: bool  # bucket.host/key rather than host/bucket/key
    max_attempts: int  # as many as S3A makes of a throttled request: the SDK's, then S3A's own
    connect_timeout_s: float
    request_timeout_s: float


def client_settings(s3a: Mapping[str, str | None]) -> ClientSettings:
    """The native client's settings equivalent to S3A's (``SETTINGS``, unset ones None); raises
    NotCarriedOverError when S3A uses something the client does not copy."""
    for key, (value, what) in NOT_CARRIED.items():
        given = (s3a.get(key) or "").strip()
        if given and (value is None or given.lower() == value):
            raise NotCarriedOverError(f"S3A is set up with {what} ({key})")
    endpoint = (s3a.get(ENDPOINT) or "").strip().rstrip("/")
    scheme, _, host = endpoint.rpartition("://")
    if not scheme:
        scheme = "http" if (s3a.get(SSL) or "").strip().lower() == "false" else "https"
    region = (s3a.get(REGION) or "").strip() or _region_of(host)
    if not region:
        raise NotCarriedOverError(f"the bucket's region is not set ({REGION})")
    return ClientSettings(
        scheme=scheme,
        endpoint=host or None,
        region=region,
        virtual_hosted=(s3a.get(PATH_STYLE) or "").strip().lower() != "true",
        max_attempts=max(1, int(s3a.get(ATTEMPTS) or 20)) + max(0, int(s3a.get(THROTTLE_RETRIES) or 20)),
        connect_timeout_s=int(s3a.get(CONNECT_TIMEOUT) or TIMEOUTS_MS[CONNECT_TIMEOUT]) / 1000,
        request_timeout_s=int(s3a.get(REQUEST_TIMEOUT) or TIMEOUTS_MS[REQUEST_TIMEOUT]) / 1000,
    )


def _region_of(host: str) -> str | None:
    """The region S3A signs for when none is set: the one in an AWS host's name; for another store's
    host, us-east-1 (the AWS SDK's default); none for AWS's global endpoint, which S3A only reaches
    through redirects."""
    regional = _AWS_REGIONAL_HOST.match(host)
    if regional:
        return regional["region"]
    if not host or _AWS_HOST.search(host):
        return None
    return "us-east-1"


@dataclass(frozen=True)
class Credentials:
    access_key: str | None  # None: anonymous
    secret_key: str | None = None
    session_token: str | None = None


def filesystem(settings: ClientSettings, credentials: Credentials) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(
        access_key=credentials.access_key,
        secret_key=credentials.secret_key,
        session_token=credentials.session_token,
        anonymous=credentials.access_key is None,
        region=settings.region,
        scheme=settings.scheme,
        endpoint_override=settings.endpoint,
        force_virtual_addressing=settings.virtual_hosted and settings.endpoint is not None,
        connect_timeout=settings.connect_timeout_s,
        request_timeout=settings.request_timeout_s,
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=settings.max_attempts),
    )


# (name, is_dir, size, modified_ms): what HadoopStorage makes a FileInfo of
Child = tuple[str, bool, int, int]

_REFRESH_S = 60.0  # how old resolved credentials may get before S3A's providers are asked again


class NativeS3Lister:
    """Lists folders of one bucket as S3A's ``listStatus`` does, through pyarrow's client."""

    def __init__(self, s3a_filesystem: Any, gateway: Any) -> None:
        """Raises NotCarriedOverError when the filesystem's setup is not one the client copies, or cannot
        be read (an S3A without ``shareCredentials``, a setting that is not a number)."""
        try:
            conf = s3a_filesystem.getConf()
            milliseconds = gateway.jvm.java.util.concurrent.TimeUnit.MILLISECONDS
            s3a = {key: _string(conf.get(key)) for key in SETTINGS}
            s3a |= {key: str(conf.getTimeDuration(key, ms, milliseconds)) for key, ms in TIMEOUTS_MS.items()}
            self._settings = client_settings(s3a)
            self._bucket = str(s3a_filesystem.getBucket())
            self._providers = s3a_filesystem.shareCredentials("hudi-bucket listing")
        except (Py4JError, ValueError) as exc:
            raise NotCarriedOverError(f"S3A's settings could not be read: {exc}") from exc
        self._gateway = gateway
        self._lock = threading.Lock()
        self._client: tuple[Credentials, pafs.S3FileSystem] | None = None
        self._resolved_at = 0.0
        self._current()  # credentials S3A cannot give the client fail here, not at the first listing

    def list(self, key: str) -> list[Child]:
        """The children of the folder at ``key`` (no leading or trailing slash; "" for the bucket): files
        and folders, with no entry for the folder's own marker; empty when nothing is below it, or it is
        a file."""
        folder = f"{self._bucket}/{key}" if key else self._bucket
        infos = self._current().get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        return [_child(info) for info in infos]

    def _current(self) -> pafs.S3FileSystem:
        with self._lock:
            if self._client is None or time.monotonic() - self._resolved_at > _REFRESH_S:
                credentials = self._resolve()
                if self._client is None or self._client[0] != credentials:
                    self._client = (credentials, filesystem(self._settings, credentials))
                self._resolved_at = time.monotonic()
            return self._client[1]

    def _resolve(self) -> Credentials:
        """What S3A's credential providers give now (AWS SDK for Java v1, as in Hadoop 3.3)."""
        try:
            given = self._providers.getCredentials()
            token = None
            if is_instance_of(self._gateway, given, "com.amazonaws.auth.AWSSessionCredentials"):
                token = _string(given.getSessionToken())
            return Credentials(_string(given.getAWSAccessKeyId()), _string(given.getAWSSecretKey()), token)
        except Py4JError as exc:  # none to be had (S3A will say why), or another SDK's providers
            raise NotCarriedOverError(
                f"S3A's credential providers gave no AWS SDK v1 credentials: {exc}"
            ) from exc


def _child(info: pafs.FileInfo) -> Child:
    if info.type == pafs.FileType.Directory:
        return info.base_name, True, 0, 0
    return info.base_name, False, int(info.size or 0), int((info.mtime_ns or 0) // 1_000_000)


def _string(value: Any) -> str | None:
    return None if value is None else str(value)

"""A real S3-compatible server on loopback for the object-store tests: Versity's S3 gateway (versitygw)
with its posix backend, built from source once per version by ``build.sh`` beside this file.

A real server, not a mock: S3A, hudi-rs and pyarrow speak the S3 protocol to it (signatures, paginated
ListObjectsV2, multipart uploads, CopyObject), and each keeps its own client-side quirks.
"""

from __future__ import annotations

import http.client
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from e2e.control_plane.processes import ManagedProcess, wait_until

BUILD_SCRIPT = Path(__file__).with_name("build.sh")
ACCESS_KEY = "hbo-test-access"
SECRET_KEY = "hbo-test-secret-key"  # a test server's, on loopback only
REGION = "us-east-1"
BUCKET = "lake"


def ensure_binary() -> Path:
    """The versitygw binary: ``$HBO_S3_SERVER_BIN`` (set by ``./dev test``), else built by build.sh."""
    given = os.environ.get("HBO_S3_SERVER_BIN")
    if given:
        return Path(given) / "versitygw"
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{BUILD_SCRIPT} exited {result.returncode} (its messages are above)")
    return Path(result.stdout.strip().splitlines()[-1]) / "versitygw"


def _free_port(host: str) -> int:
    with socket.socket() as held:
        held.bind((host, 0))
        return int(held.getsockname()[1])


class S3Server:
    """One gateway over a private folder, with one bucket; ``start()`` then ``stop()``. On loopback,
    unless given another of the machine's addresses (the node's, for pods)."""

    def __init__(self, binary: Path, host: str = "127.0.0.1", bucket: str = BUCKET) -> None:
        self.binary = binary
        self.work_dir = Path(tempfile.mkdtemp(prefix="hbo-s3-"))
        self.data_dir = self.work_dir / "data"
        self.data_dir.mkdir()
        self.host = host
        self.port = _free_port(host)
        self.endpoint = f"http://{host}:{self.port}"
        self.bucket = bucket
        self._prefixes = itertools.count()
        self._process = ManagedProcess(
            "versitygw",
            [
                str(binary),
                "--port", f"{host}:{self.port}",
                "--access", ACCESS_KEY,
                "--secret", SECRET_KEY,
                "--region", REGION,
                "--quiet",
                "posix", str(self.data_dir),
            ],
            self.work_dir / "versitygw.log",
        )  # fmt: skip

    def start(self) -> None:
        self._process.start()
        wait_until(self._answers, 30, [self._process], f"versitygw answers on {self.endpoint}")
        self.filesystem().create_dir(self.bucket)  # a real CreateBucket

    def stop(self) -> None:
        self._process.stop()
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def _answers(self) -> bool:
        """Any HTTP answer (an unsigned request gets 403) means the server is up."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=2)
        try:
            connection.request("GET", "/")
            connection.getresponse().read()
            return True
        except OSError:
            return False
        finally:
            connection.close()

    def uri(self, key: str, scheme: str = "s3a") -> str:
        return f"{scheme}://{self.bucket}/{key.strip('/')}"

    def fresh_prefix(self, name: str) -> str:
        """A key prefix nothing else in this run uses (the bucket lives for the whole run)."""
        return f"t{next(self._prefixes):04d}-{name}"

    def hadoop_conf(self) -> dict[str, str]:
        """What S3A needs to reach this server: its settings, and the credentials as static keys."""
        return {
            **self.settings(),
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "fs.s3a.access.key": ACCESS_KEY,
            "fs.s3a.secret.key": SECRET_KEY,
        }

    def bucket_hadoop_conf(self) -> dict[str, str]:
        """``hadoop_conf()`` for this server's bucket only (S3A's per-bucket settings): a session already
        pointed at another server reaches this one too."""
        prefix = f"fs.s3a.bucket.{self.bucket}."
        return {prefix + key.removeprefix("fs.s3a."): value for key, value in self.hadoop_conf().items()}

    def credentials_env(self) -> dict[str, str]:
        """The credentials as S3A's default chain reads them from the environment (a Secret's keys)."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}

    def settings(self) -> dict[str, str]:
        """S3A's settings for this server without credentials: a path-style endpoint without TLS."""
        return {
            "fs.s3a.endpoint": self.endpoint,
            "fs.s3a.endpoint.region": REGION,
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            # The posix backend keeps a "folder/" marker as the folder itself and refuses to delete it
            # while it holds files, where S3 would drop just the marker: S3A's default (delete the
            # parents' markers after each write) then retries each write for seconds. Keeping markers
            # is also what S3A advises for speed on S3 itself.
            "fs.s3a.directory.marker.retention": "keep",
            # Fail fast when something is wrong instead of retrying for minutes.
            "fs.s3a.attempts.maximum": "3",
            "fs.s3a.retry.limit": "3",
        }

    def storage_options(self) -> dict[str, str]:
        """The same for hudi-rs (its object_store options)."""
        return {
            "aws_endpoint_url": self.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION,
            "aws_allow_http": "true",
        }

    def filesystem(self) -> Any:
        """A pyarrow S3 filesystem on this server (the tests' own uploads and inspections)."""
        from pyarrow import fs

        return fs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            endpoint_override=self.endpoint,
            scheme="http",
            region=REGION,
            allow_bucket_creation=True,
        )

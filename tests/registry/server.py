"""A real OCI registry on loopback: go-containerregistry's ``crane registry serve`` over a private folder,
built from source once per version by ``build.sh`` beside this file. The release tests push the release's
images and chart to it (``crane push``, ``helm push``), and the test node pulls the images by digest, as
a cluster pulls from any registry.

Plain HTTP on 127.0.0.1: crane and helm are told so (``--insecure``, ``--plain-http``), containerd by its
hosts.toml (tests/e2e/node/containerd.py)."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from e2e.control_plane.processes import ManagedProcess, wait_until
from object_store.server import _free_port

from lib.helm_chart import helm

BUILD_SCRIPT = Path(__file__).with_name("build.sh")


def ensure_crane() -> Path:
    """The crane binary, built by build.sh once (its progress on stderr)."""
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{BUILD_SCRIPT} exited {result.returncode} (its messages are above)")
    return Path(result.stdout.strip().splitlines()[-1]) / "crane"


class Registry:
    """One registry over a private folder; ``start()`` then ``stop()``. ``host`` is what image names
    begin with (127.0.0.1:PORT)."""

    def __init__(self, crane: Path) -> None:
        self.crane = crane
        self.work_dir = Path(tempfile.mkdtemp(prefix="hbo-registry-"))
        self.port = _free_port("127.0.0.1")
        self.host = f"127.0.0.1:{self.port}"
        (self.work_dir / "blobs").mkdir()  # crane writes its uploads there, and makes no folder
        self._process = ManagedProcess(
            "registry",
            [str(crane), "registry", "serve", "--address", self.host, "--disk", str(self.work_dir / "blobs")],
            self.work_dir / "registry.log",
        )

    def start(self) -> None:
        self._process.start()
        wait_until(self._answers, 30, [self._process], f"the registry answers on {self.host}")

    def stop(self) -> None:
        self._process.stop()
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def _answers(self) -> bool:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            connection.request("GET", "/v2/")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def run_crane(self, *args: str) -> str:
        result = subprocess.run(
            [str(self.crane), "--insecure", *args], capture_output=True, text=True, check=False, timeout=600
        )
        if result.returncode != 0:
            raise RuntimeError(f"crane {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout.strip()

    def push_archive(self, archive: Path, repository: str, tag: str) -> str:
        """An OCI archive (one image) as REPOSITORY:TAG here; returns the digest the registry names it by."""
        with tempfile.TemporaryDirectory(dir=self.work_dir) as layout:
            with tarfile.open(archive) as tar:
                tar.extractall(layout, filter="data")
            reference = f"{self.host}/{repository}:{tag}"
            self.run_crane("push", layout, reference)
        return self.digest(reference)

    def digest(self, reference: str) -> str:
        return self.run_crane("digest", reference)

    def manifest(self, reference: str) -> dict[str, object]:
        loaded: dict[str, object] = json.loads(self.run_crane("manifest", reference))
        return loaded

    def push_chart(self, package: Path) -> str:
        """A packaged chart under oci://HOST/charts; returns the reference helm installs from."""
        helm("push", str(package), f"oci://{self.host}/charts", "--plain-http")
        return f"oci://{self.host}/charts/{package.name.rsplit('-', 1)[0]}"

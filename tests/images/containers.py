"""The images that images/build.sh builds, unpacked and run with runc as a container runtime would run
them: their own user, entrypoint, environment and working folder, a read-only root, /tmp in memory, the
folders a test mounts. No node yet: the host's network, and an /etc/hosts naming the container, as the
kubelet writes one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from lib.paths import REPO

BUILD_SCRIPT = REPO / "images" / "build.sh"
CACHE = Path(
    os.environ.get("HBO_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hudi-bucket-operator"
)
BUNDLES = CACHE / "images" / "bundles"
TOOLS = ("runc", "umoci")  # Debian packages of the same names


def missing() -> str:
    """What the machine lacks to build and run the images, in one line ('' when nothing)."""
    if os.geteuid() != 0:
        return "the image tests need root (mmdebstrap, buildah and runc as root)"
    said = subprocess.run(["bash", str(BUILD_SCRIPT), "--check"], capture_output=True, text=True, check=False)
    tools = [tool for tool in TOOLS if shutil.which(tool) is None]
    extra = (
        f"{' '.join(tools)} not found: the image tests run them (apt-get install {' '.join(tools)})"
        if tools
        else ""
    )
    return "; ".join(line for line in (said.stdout.strip(), extra) if line)


def install_tools() -> None:
    """runc and umoci from Debian when they are missing and we may (build.sh installs its own)."""
    tools = [tool for tool in TOOLS if shutil.which(tool) is None]
    if tools and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", *tools],
            check=True,
            capture_output=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )


def build() -> dict[str, str]:
    """Both images, built once (minutes) and then found in the cache: {name: 'oci:LAYOUT:TAG'}."""
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{BUILD_SCRIPT} exited {result.returncode} (its messages are above)")
    return dict(line.split(" ", 1) for line in result.stdout.strip().splitlines())


@dataclass(frozen=True)
class Image:
    """One built image, unpacked once per tag into the cache (the rootfs is never written: read-only)."""

    reference: str  # oci:LAYOUT:TAG

    @property
    def tag(self) -> str:
        return self.reference.rsplit(":", 1)[1]

    @property
    def bundle(self) -> Path:
        return BUNDLES / self.tag

    def unpack(self) -> Image:
        if (self.bundle / "config.json").exists():
            return self
        BUNDLES.mkdir(parents=True, exist_ok=True)
        name = self.tag.split("-", 1)[0]
        for old in BUNDLES.glob(f"{name}-*"):  # an earlier build's
            shutil.rmtree(old)
        partial = BUNDLES / f".{self.tag}.{uuid.uuid4().hex[:8]}"
        layout_and_tag = self.reference.removeprefix("oci:")
        subprocess.run(
            ["umoci", "unpack", "--image", layout_and_tag, partial], check=True, capture_output=True
        )
        partial.rename(self.bundle)
        return self

    def config(self) -> dict:
        """The runtime config umoci made from the image's own config (user, entrypoint, env, cwd)."""
        return json.loads((self.bundle / "config.json").read_text())

    def run(
        self,
        args: list[str],
        workdir: Path,
        mounts: dict[str, Path] | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 300,
        entrypoint: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """The image's entrypoint with ``args`` (as a pod's args), or ``args`` alone (as a pod's command),
        as the image's user."""
        config = self.config()
        process = config["process"]
        process["terminal"] = False
        process["args"] = [*process["args"], *args] if entrypoint else args
        process["env"] = [*process["env"], *(f"{k}={v}" for k, v in (env or {}).items())]
        config["root"] = {"path": str(self.bundle / "rootfs"), "readonly": True}
        config["hostname"] = "hbo-test"
        config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"] if n["type"] != "network"]
        hosts = workdir / "hosts"
        hosts.write_text("127.0.0.1 localhost hbo-test\n")
        config["mounts"] += [
            {
                "destination": "/tmp",
                "type": "tmpfs",
                "source": "tmpfs",
                "options": ["nosuid", "nodev", "mode=1777"],
            },
            {"destination": "/etc/hosts", "type": "bind", "source": str(hosts), "options": ["rbind", "ro"]},
            *(
                {"destination": target, "type": "bind", "source": str(source), "options": ["rbind", "rw"]}
                for target, source in (mounts or {}).items()
            ),
        ]
        bundle = workdir / "bundle"
        bundle.mkdir()
        (bundle / "config.json").write_text(json.dumps(config))
        name = f"hbo-{uuid.uuid4().hex[:12]}"
        try:
            return subprocess.run(
                ["runc", "--root", str(workdir / "runc"), "run", "--bundle", str(bundle), name],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        finally:
            subprocess.run(
                ["runc", "--root", str(workdir / "runc"), "delete", "--force", name],
                capture_output=True,
                check=False,
            )

"""Images for the node, as OCI layouts: the pause image every pod's sandbox runs (packed here from the
pause binary build.sh compiles), and ours, built by images/build.sh."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

from lib.paths import REPO

IMAGES_BUILD = REPO / "images" / "build.sh"
PAUSE_USER = "65535:65535"  # as Kubernetes' own pause image: nobody needs root to sleep
ARCHITECTURE = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def pack_pause_image(pause_binary: Path, folder: Path, tag: str) -> str:
    """An OCI layout in ``folder`` holding one image, ``/pause`` as its entrypoint: returns LAYOUT:TAG."""
    image = f"{folder / 'layout'}:{tag}"
    bundle = folder / "bundle"

    def umoci(*args: str) -> None:
        subprocess.run(["umoci", *args], capture_output=True, check=True)

    umoci("init", "--layout", str(folder / "layout"))
    umoci("new", "--image", image)
    umoci("unpack", "--image", image, str(bundle))
    (bundle / "rootfs" / "pause").write_bytes(pause_binary.read_bytes())
    (bundle / "rootfs" / "pause").chmod(0o755)
    umoci("repack", "--image", image, str(bundle))
    umoci(
        "config", "--image", image, "--config.entrypoint=/pause", f"--config.user={PAUSE_USER}",
        "--os=linux", f"--architecture={ARCHITECTURE}",
    )  # fmt: skip
    return image


def build_our_images() -> dict[str, str]:
    """Both images, built once (minutes) and then found in the cache: {name: 'LAYOUT:TAG'}.

    build.sh's progress goes to stderr, which pytest shows for a failing fixture.
    """
    result = subprocess.run(["bash", str(IMAGES_BUILD)], stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{IMAGES_BUILD} exited {result.returncode} (its messages are above)")
    built = dict(line.split(" ", 1) for line in result.stdout.strip().splitlines())
    return {name: reference.removeprefix("oci:") for name, reference in built.items()}

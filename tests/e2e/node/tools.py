"""What a node needs from the machine: root, and Debian's packages (installed when we are root)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# A command (or file) and the Debian package that has it.
NEEDED = {
    "containerd": "containerd",
    "ctr": "containerd",
    "runc": "runc",
    "umoci": "umoci",
    "ip": "iproute2",
    "nft": "nftables",  # kube-proxy writes its rules with it
    "/usr/lib/cni/bridge": "containernetworking-plugins",
}


def _missing_packages() -> list[str]:
    lacking = {
        package
        for command, package in NEEDED.items()
        if not (Path(command).exists() if command.startswith("/") else shutil.which(command))
    }
    return sorted(lacking)


def missing_tools() -> str:
    """What the machine lacks to run a node, in one line ('' when nothing)."""
    if os.geteuid() != 0:
        return "a node needs root (kubelet, containerd, network links, cgroups)"
    packages = _missing_packages()
    return f"not installed: {' '.join(packages)} (apt-get install {' '.join(packages)})" if packages else ""


def install_tools() -> None:
    """The missing packages from Debian, when we may."""
    packages = _missing_packages()
    if packages and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", *packages],
            check=True,
            capture_output=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )

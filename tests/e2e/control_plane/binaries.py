"""The control plane's binaries: built once per version by build.sh into a cache folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

BUILD_SCRIPT = Path(__file__).with_name("build.sh")


def ensure_binaries() -> Path:
    """The bin folder, after building what is missing (about 6 minutes the first time, then nothing).

    The build's progress goes to stderr, which pytest shows for a failing fixture.
    """
    result = subprocess.run(["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{BUILD_SCRIPT} exited {result.returncode} (its messages are above)")
    return Path(result.stdout.strip().splitlines()[-1])

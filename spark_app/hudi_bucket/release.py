"""This build's release: its version, declared once (pyproject.toml's) and read from the installed package's
metadata, which the images install and a checkout installs editable. The chart's version and appVersion,
the GitOps pins and the changelog's newest release must say the same (tests/install/test_release.py)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "hudi-bucket-operator"


def release_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # sources run without being installed
        return "0+unknown"


VERSION = release_version()

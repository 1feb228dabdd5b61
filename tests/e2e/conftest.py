"""End-to-end tests against a real control plane (etcd, kube-apiserver, kube-controller-manager).

The binaries are built from source once per version (tests/e2e/control_plane/build.sh, about 6 minutes
the first time; `./dev setup` does it too). ``$HBO_KUBE_BIN`` names a folder of prebuilt ones instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_plane import ControlPlane, ensure_binaries

E2E_DIR = Path(__file__).parent


def _bin_dir() -> Path:
    prebuilt = os.environ.get("HBO_KUBE_BIN")
    return Path(prebuilt) if prebuilt else ensure_binaries()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Builds before the first test, so a first build's minutes count against no test's timeout."""
    if session.config.option.collectonly or os.environ.get("HBO_KUBE_BIN"):
        return
    if any(item.get_closest_marker("e2e") for item in session.items):
        capture = session.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():  # show build.sh's progress lines as they come
            ensure_binaries()


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """One control plane for the whole session; its logs stay in pytest's temp folder afterwards."""
    plane = ControlPlane(_bin_dir(), tmp_path_factory.mktemp("control-plane"))
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def namespace(control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards (without waiting for it to go)."""
    name = f"e2e-{uuid.uuid4().hex[:10]}"
    control_plane.kubectl("create", "namespace", name)
    yield name
    control_plane.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")

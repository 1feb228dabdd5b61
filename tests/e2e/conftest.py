"""End-to-end tests against a real control plane (etcd, kube-apiserver, kube-controller-manager).

The binaries are built from source once per version (tests/e2e/control_plane/build.sh, about 6 minutes
the first time; `./dev setup` does it too). ``$HBO_KUBE_BIN`` names a folder of prebuilt ones instead.

Tests that run pods use the ``node`` fixture (a real kubelet and containerd, as root; marked ``node``):
only they start one, and they get our images built by images/build.sh.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from control_plane import ControlPlane, ensure_binaries
from lib.paths import REPO
from node import Node, install_tools, missing_tools
from node.images import build_our_images
from registry import last_release
from registry.release import PushedRelease, make_release, push_release
from registry.server import Registry

E2E_DIR = Path(__file__).parent
_our_images: dict[str, str] = {}
_last_release_build: list[Future[dict[str, str]]] = []  # started once the session's tests are known


def _build_last_release() -> dict[str, str]:
    return last_release.build_images(last_release.source(last_release.last_release()))


def _bin_dir() -> Path:
    prebuilt = os.environ.get("HBO_KUBE_BIN")
    return Path(prebuilt) if prebuilt else ensure_binaries()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)
            if "node" in item.fixturenames:  # type: ignore[attr-defined]
                item.add_marker(pytest.mark.node)
    # The session's node starts with the first test that uses it and runs to the end: the tests that
    # need the machine without a node (test_node_cleanup.py) go before all of those, whatever their names.
    items.sort(key=lambda item: item.get_closest_marker("node") is not None and "node" in item.fixturenames)  # type: ignore[attr-defined]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Builds before the first test, so a first build's minutes count against no test's timeout."""
    if session.config.option.collectonly:
        return
    capture = session.config.pluginmanager.getplugin("capturemanager")
    if not os.environ.get("HBO_KUBE_BIN") and any(item.get_closest_marker("e2e") for item in session.items):
        with capture.global_and_fixture_disabled():  # show build.sh's progress lines as they come
            ensure_binaries()
    if os.geteuid() == 0 and any(item.get_closest_marker("node") for item in session.items):
        with capture.global_and_fixture_disabled():
            install_tools()
            _our_images.update(build_our_images())
    if os.geteuid() == 0 and any("last_released" in item.fixturenames for item in session.items):  # type: ignore[attr-defined]
        # The last release's images, built while the tests before the upgrade run (about a minute of
        # the machine, which they leave idle in part: they wait on pods, windows and Spark's one core);
        # ours kept young, which its build.sh would drop once a day old.
        last_release.keep_young(_our_images)
        _last_release_build.append(ThreadPoolExecutor(1, "last-release").submit(_build_last_release))


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """One control plane for the whole session; its logs stay in pytest's temp folder afterwards."""
    plane = ControlPlane(_bin_dir(), tmp_path_factory.mktemp("control-plane"))
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def kube_bin_dir() -> Path:
    """The folder of the binaries build.sh built (or ``$HBO_KUBE_BIN``)."""
    return _bin_dir()


@pytest.fixture(scope="session")
def node(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    """One node for the session, started by the first test that asks for it; its logs stay in pytest's
    temp folder, and nothing else of it stays on the machine."""
    lacking = missing_tools()
    if lacking:
        pytest.skip(lacking)
    started = Node(control_plane, _bin_dir(), tmp_path_factory.mktemp("node"))
    started.start()
    try:
        yield started
    finally:
        started.stop()
        print(f"node stopped and the machine put back in {started.stop_seconds:.1f} s")


@pytest.fixture(scope="session")
def our_images() -> dict[str, str]:
    """Both images as OCI layouts, {name: 'LAYOUT:TAG'} (built before the first test)."""
    return _our_images or build_our_images()


@pytest.fixture(scope="session")
def released(
    our_images: dict[str, str], registry: Registry, tmp_path_factory: pytest.TempPathFactory
) -> PushedRelease:
    """This commit's release (release/make.py) pushed to a registry on loopback, as a platform team
    installs one: the chart from its OCI reference, the images pulled by the digests it pins."""
    return _pushed(our_images, REPO, registry, tmp_path_factory)


@pytest.fixture(scope="session")
def last_released(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> PushedRelease:
    """The last release (CHANGELOG.md's newest released version), made from its commit as this one is
    made (its chart, CRDs and images built by its own images/build.sh), pushed to the same registry."""
    images = _last_release_build[0].result() if _last_release_build else _build_last_release()
    return _pushed(images, last_release.source(last_release.last_release()), registry, tmp_path_factory)


def _pushed(
    images: dict[str, str], tree: Path, registry: Registry, tmp_path_factory: pytest.TempPathFactory
) -> PushedRelease:
    release = tmp_path_factory.mktemp("release") / "release"
    make_release(release, images, tree)
    pushed = push_release(release, registry)
    shutil.rmtree(release / "images")  # the registry holds them now: a gigabyte less on the disk
    return pushed


@pytest.fixture
def namespace(control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards (without waiting for it to go)."""
    name = f"e2e-{uuid.uuid4().hex[:10]}"
    control_plane.kubectl("create", "namespace", name)
    yield name
    control_plane.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")

"""The two images, built by images/build.sh (buildah, no Docker: minutes once per machine, then nothing)
and run with runc. They need root and Debian's buildah, mmdebstrap, runc and umoci (installed here when
we are root): marked ``images``, left out by the fast loop."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import containers

IMAGES_DIR = Path(__file__).parent
_built: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if IMAGES_DIR in item.path.parents:
            item.add_marker(pytest.mark.images)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Builds before the first test, so a first build's minutes count against no test's timeout."""
    if session.config.option.collectonly or not any(
        item.get_closest_marker("images") for item in session.items
    ):
        return
    if os.geteuid() != 0:
        return  # said by the fixture, as a skip
    capture = session.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():  # show build.sh's progress lines as they come
        containers.install_tools()
        _built.update(containers.build())


@pytest.fixture(scope="session")
def built_images() -> dict[str, str]:
    """Both images as images/build.sh leaves them: {name: 'oci:LAYOUT:TAG'}."""
    lacking = containers.missing()
    if lacking:
        pytest.skip(lacking)
    return _built or containers.build()


@pytest.fixture(scope="session")
def images(built_images: dict[str, str]) -> dict[str, containers.Image]:
    return {name: containers.Image(reference).unpack() for name, reference in built_images.items()}

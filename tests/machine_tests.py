"""How `./dev test` runs the tests that use the machine itself (the control plane, the node, the image
builds): one after another on one xdist worker, while the other worker runs the rest beside them. They
wait on processes and pods far more than they compute, and they share the machine's one node.

xdist's own ``--dist loadgroup`` cannot group them here: it names a test's group by changing its node id,
which pytest 9.2 no longer lets a plugin do. So ``--dist loadgroup`` gets the scheduler below, which
groups them by folder."""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

MACHINE_FOLDERS = ("tests/e2e/", "tests/images/")  # node ids are relative to the repository
# In a worker, the first test given the images or the node builds them (minutes on a fresh machine; see
# tests/e2e/conftest.py): those tests have the time for it.
BUILDING_FIXTURES = frozenset({"images", "our_images", "node"})
BUILDING_TIMEOUT = pytest.mark.timeout(1800)


class MachineTestsTogether(LoadScopeScheduling):
    """The machine's tests are one unit of work, every other module one unit each; the largest unit (the
    machine's) is handed out first, so that they start at once, and the other worker takes the rest."""

    def _split_scope(self, nodeid: str) -> str:
        return "machine" if nodeid.startswith(MACHINE_FOLDERS) else super()._split_scope(nodeid)


def give_build_time(item: pytest.Item) -> None:
    if BUILDING_FIXTURES & set(item.fixturenames):  # type: ignore[attr-defined]
        item.add_marker(BUILDING_TIMEOUT)

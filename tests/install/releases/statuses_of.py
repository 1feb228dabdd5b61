"""The statuses a release writes, made by that release's own code, for tests/install/test_release.py:

    git worktree add /tmp/release-old <its commit>
    .venv/bin/python tests/install/releases/statuses_of.py /tmp/release-old > tests/install/releases/<version>/statuses.json

Its decide and its tests' scenarios make them: planning, awaiting approval, applying, Ready after an apply,
Stalled, and writers held paused during an apply. Not run by the tests.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

root = sys.argv[1]
sys.path[:0] = [f"{root}/operator", f"{root}/spark_app", f"{root}/tests", f"{root}/tests/operator"]

import hudi_bucket_operator  # noqa: E402

assert hudi_bucket_operator.__file__.startswith(root), hudi_bucket_operator.__file__  # its code, not ours

from test_controller import PAUSED  # noqa: E402
from test_crd import operator_statuses  # noqa: E402

from hudi_bucket_operator.decide.decisions import Observed  # noqa: E402
from hudi_bucket_operator.decide.reconcile import decide  # noqa: E402
from hudi_bucket_operator.resource.table_status import TableStatus  # noqa: E402
from lib.hbt_resources import SPEC  # noqa: E402

day = datetime(2026, 11, 28, tzinfo=UTC)
made = dict(operator_statuses())
made["writers-paused"] = PAUSED
refused = {**SPEC, "spark": {"image": "docker.io/someone/miner:1"}}
made["stalled"] = decide(Observed(refused, 1, {}, TableStatus(), ()), day).status.to_api()
made["planning"] = decide(Observed(SPEC, 1, {}, TableStatus(), ()), day).status.to_api()
print(json.dumps(made, indent=1, sort_keys=True))

"""`hudi-bucket-job ARGS` as users run it (a process of its own), with timers around its steps: where a
fresh process's seconds go. The timers wrap the job's own functions and change nothing they do.

Run: python tests/bench/phased_job.py apply --table T ... ; the last line of its output is
``PHASES {json}``: seconds from the process's launch (``BENCH_LAUNCHED``, the launcher's clock, or this
script's first line) to each mark, and the seconds spent in each wrapped step (nested steps count in
their parent too)."""

from __future__ import annotations

import time

FIRST_LINE = time.time()  # the interpreter has started (before any import of ours)

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from hudi_bucket import cli  # noqa: E402
from hudi_bucket.commands import apply as apply_module  # noqa: E402
from hudi_bucket.writing import direct_write  # noqa: E402
from hudi_bucket.writing import rescale as rescale_module  # noqa: E402

IMPORTED = time.time()

# (label, module, attribute): each looked up where the caller looks it up.
STEPS = (
    ("session: JVM and SparkSession", cli, "_session"),
    ("table: properties, timeline", cli, "_context"),
    ("our leftovers rolled back", apply_module, "roll_back_our_leftovers"),
    ("plan: config, listing, commits", apply_module, "sized_plan"),
    ("rewrite: read and write", apply_module, "rewrite_partitions"),
    ("  write_bucket_files", rescale_module, "write_bucket_files"),
    ("    Spark writes, footers read back", direct_write, "write"),
    ("checks before the commit", apply_module, "refuse_if_taken_away"),
    ("checks before the commit", apply_module, "_refuse_concurrent_writes"),
    ("hashing_config written", apply_module.config_store, "write_config"),
    ("old configs archived", apply_module.config_store, "archive_old_versions"),
)


def main() -> int:
    seconds: dict[str, float] = defaultdict(float)

    def timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - start

        return run

    for label, module, name in STEPS:
        setattr(module, name, timed(label, getattr(module, name)))
    launched = float(os.environ.get("BENCH_LAUNCHED", FIRST_LINE))
    main_started = time.time()
    code = cli.main(sys.argv[1:])
    marks = {
        "interpreter started": FIRST_LINE - launched,
        "imports done": IMPORTED - launched,
        "job done": time.time() - launched,
        "job": time.time() - main_started,
    }
    print("PHASES " + json.dumps({"marks": marks, "steps": dict(seconds)}), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())

"""Contenders timed as users run them: each run a new process (interpreter and JVM start included) on a
fresh copy of the same table, the contenders interleaved round by round so that none is favoured by the
machine's drift, each figure the best and the median of its rounds."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# A contender's command for one run: given the run's copy of the table and a folder for its output.
Command = Callable[[Path, Path], list[str]]


@dataclass
class Timings:
    seconds: dict[str, list[float]] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)  # each run's stdout

    def best(self, name: str) -> float:
        return min(self.seconds[name])

    def median(self, name: str) -> float:
        return statistics.median(self.seconds[name])


def run_once(name: str, command: list[str], env: Mapping[str, str]) -> tuple[float, str]:
    """One run's wall seconds and its stdout; a failed run stops the benchmark, saying why."""
    launched = {**env, "BENCH_LAUNCHED": repr(time.time())}  # phased_job.py's marks count from here
    started = time.perf_counter()
    done = subprocess.run(command, env=launched, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def interleaved(
    template: Path,
    work: Path,
    contenders: Mapping[str, Command],
    rounds: int,
    env: Mapping[str, str],
    check: Callable[[str, Path], None] = lambda name, table: None,
) -> Timings:
    """Each round runs every contender once, each on its own copy of ``template`` (copied, not timed);
    ``check`` looks at the table a run left before it is deleted."""
    timings = Timings({name: [] for name in contenders}, {name: [] for name in contenders})
    for round_ in range(rounds):
        for name, command in contenders.items():
            table, out = work / "run" / "table", work / "run" / "out"
            shutil.rmtree(table.parent, ignore_errors=True)
            shutil.copytree(template, table)
            seconds, stdout = run_once(name, command(table, out), env)
            timings.seconds[name].append(seconds)
            timings.outputs[name].append(stdout)
            check(name, table)
            shutil.rmtree(table.parent)
        print(
            f"  round {round_ + 1}: " + ", ".join(f"{n} {s[-1]:.1f} s" for n, s in timings.seconds.items()),
            flush=True,
        )
    return timings

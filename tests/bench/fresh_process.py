"""Contenders timed as users run them: each run a new process (interpreter and JVM start included) on a
fresh copy of the same table, the contenders interleaved round by round (each round starting with the next
one, so that none always runs first or after the same neighbour) so that none is favoured by the
machine's drift, each figure the best and the median of its rounds. Beside the wall time, each run's task
CPU from Spark's event log: steadier than the wall time on a noisy machine."""

from __future__ import annotations

import json
import os
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
    cpu: dict[str, list[float]] = field(default_factory=dict)  # each run's task CPU seconds

    def best(self, name: str) -> float:
        return min(self.seconds[name])

    def median(self, name: str) -> float:
        return statistics.median(self.seconds[name])

    def median_cpu(self, name: str) -> float:
        return statistics.median(self.cpu[name])


def run_once(name: str, command: list[str], env: Mapping[str, str]) -> tuple[float, str]:
    """One run's wall seconds and its stdout; a failed run stops the benchmark, saying why."""
    launched = {**env, "BENCH_LAUNCHED": repr(time.time())}  # phased_job.py's marks count from here
    started = time.perf_counter()
    done = subprocess.run(command, env=launched, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def with_event_log(env: Mapping[str, str], events: Path) -> dict[str, str]:
    """``env`` with Spark's event log written into ``events`` by every session the run starts."""
    events.mkdir(parents=True, exist_ok=True)
    submit = env.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
    logged = f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file:{events} {submit}"
    return {**env, "PYSPARK_SUBMIT_ARGS": logged}


def task_cpu_seconds(events: Path) -> float:
    """The executor CPU time of every task in the event logs under ``events``."""
    nanoseconds = 0
    for log in events.iterdir():
        with log.open() as lines:
            for line in lines:
                if line.startswith('{"Event":"SparkListenerTaskEnd"'):
                    nanoseconds += json.loads(line).get("Task Metrics", {}).get("Executor CPU Time", 0)
    return nanoseconds / 1e9


def interleaved(
    template: Path,
    work: Path,
    contenders: Mapping[str, Command],
    rounds: int,
    env: Mapping[str, str],
    check: Callable[[str, Path], None] = lambda name, table: None,
) -> Timings:
    """Each round runs every contender once, each on its own copy of ``template`` (copied, not timed);
    ``check`` looks at the table a run left before it is deleted (not timed either)."""
    names = list(contenders)
    timings = Timings({n: [] for n in names}, {n: [] for n in names}, {n: [] for n in names})
    for round_ in range(rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            run = work / "run"
            table, out, events = run / "table", run / "out", run / "events"
            shutil.rmtree(run, ignore_errors=True)
            shutil.copytree(template, table)
            seconds, stdout = run_once(name, contenders[name](table, out), with_event_log(env, events))
            timings.seconds[name].append(seconds)
            timings.outputs[name].append(stdout)
            timings.cpu[name].append(task_cpu_seconds(events))
            check(name, table)
            shutil.rmtree(run)
        print(
            f"  round {round_ + 1} (load {os.getloadavg()[0]:.1f}): "
            + ", ".join(f"{n} {timings.seconds[n][-1]:.1f} s (CPU {timings.cpu[n][-1]:.1f})" for n in order),
            flush=True,
        )
    return timings

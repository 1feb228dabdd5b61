"""A server process that cannot outlive the test session: its own process group, its log in a file.

Three layers, so no path leaves an orphan behind: ``stop()`` from the fixture's teardown (also on
Ctrl-C), an ``atexit`` hook for an interpreter that exits without teardown, and the kernel's parent-death
signal for a test session that is killed outright. That signal follows the *thread* that started the
process, so start servers from the main thread (a session fixture does), not from a worker thread.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL it when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class ManagedProcess:
    """``cgroup_procs``, a cgroup's ``cgroup.procs`` file, puts the process (and so all it forks) in that
    cgroup before it runs: a daemon whose children outlive it (containerd's shims) can then be found."""

    def __init__(
        self, name: str, argv: Sequence[str], log_path: Path, cgroup_procs: Path | None = None
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.cgroup_procs = cgroup_procs
        self._process: subprocess.Popen[bytes] | None = None

    def _before_exec(self) -> None:
        _die_with_parent()
        if self.cgroup_procs is not None:
            self.cgroup_procs.write_text(str(os.getpid()))

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: a terminal's Ctrl-C reaches only pytest
                preexec_fn=self._before_exec,  # noqa: PLW1509 (no threads are started by then)
            )
        atexit.register(self.stop)

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def exit_code(self) -> int | None:
        """None while it runs (or before it started)."""
        return None if self._process is None else self._process.poll()

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM to its process group, SIGKILL after ``timeout`` seconds; safe to call twice.

        Returns its exit code (negative: the signal that ended it), None when it was not running."""
        process = self._process
        if process is None:
            return None
        atexit.unregister(self.stop)
        if process.poll() is None:
            self._signal_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(process.pid, signal.SIGKILL)
                process.wait(timeout)
        self._process = None
        return process.returncode

    @staticmethod
    def _signal_group(pid: int, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):  # it is gone already
            os.killpg(pid, sig)  # the group id is the pid: start_new_session made it the leader

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def failure(self, what: str) -> RuntimeError:
        """An error for a start that went wrong, carrying the end of this process's log."""
        code = self.exit_code()
        state = "still running" if code is None else f"exited with code {code}"
        return RuntimeError(
            f"{self.name}: {what} ({state}); the last lines of {self.log_path}:\n{self.log_tail()}"
        )


def wait_until(
    condition: Callable[[], bool],
    timeout: float,
    watched: Sequence[ManagedProcess],
    what: str,
    interval: float = 0.1,
) -> None:
    """Polls ``condition()`` until it is true; fails early, with the log, if a watched process exits.
    ``watched`` is not empty: the last one's log goes with a timeout."""
    deadline = time.monotonic() + timeout
    while True:
        for process in watched:
            if process.exit_code() is not None:
                raise process.failure(f"exited while waiting until {what}")
        if condition():
            return
        if time.monotonic() > deadline:
            raise watched[-1].failure(f"timed out after {timeout:.0f} s waiting until {what}")
        time.sleep(interval)

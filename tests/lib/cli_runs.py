"""`hudi-bucket-job` run in the test process (it gets the shared session through getOrCreate), with what
it printed and its exit code."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from hudi_bucket.cli import main


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.out)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    """``hudi-bucket-job ARGV``."""
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)

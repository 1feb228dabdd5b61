"""What the scenarios showed, for people to read in the run's log: the plugin's output on real tables,
the alerts a real Prometheus fired and what each dashboard panel returned. Tests assert on these; this
keeps them too, and pytest prints them at the end of the run (tests/conftest.py)."""

from __future__ import annotations

SHOWN: dict[str, str] = {}


def show(title: str, text: str) -> None:
    """Keep ``text`` under ``title`` (a later one of the same title replaces it)."""
    SHOWN[title] = text.rstrip("\n")

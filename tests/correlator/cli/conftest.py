"""The CLI tests run two hours east of UTC, so that local times are told from UTC ones."""

import time
from datetime import datetime, timedelta, timezone

import pytest

ZONE = "FAB-2"
"""POSIX TZ for UTC+02:00 (no tzdata needed): 1767229200 is 2026-01-01T03:00:00+02:00."""


@pytest.fixture(autouse=True)
def local_zone(monkeypatch):
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def iso(epoch: float) -> str:
    """The local time the CLI prints for ``epoch`` in this zone, by the standard library
    alone: ``2026-01-01T03:00:00+02:00`` for 1767229200."""
    return datetime.fromtimestamp(round(epoch), timezone(timedelta(hours=2))).isoformat()

"""The CLI tests run two hours east of UTC, so that local times are told from UTC ones."""

import time

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

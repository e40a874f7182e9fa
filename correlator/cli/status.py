"""Exit statuses of the ``fabcorr`` command."""

from enum import IntEnum


class ExitStatus(IntEnum):
    """What the shell sees: 0 done, 1 the thing asked for does not exist (or, for checks,
    a difference was found), 2 bad usage or input, 3 done in part (some switches failed)."""

    OK = 0
    NOT_FOUND = 1
    DIFFERS = 1  # a check found a difference (same code as NOT_FOUND)
    USAGE = 2
    PARTIAL = 3

"""Exit statuses of the ``fabcorr`` command."""

from enum import IntEnum


class ExitStatus(IntEnum):
    """What the shell sees: 0 done, 1 the thing asked for does not exist, 2 bad usage/input."""

    OK = 0
    NOT_FOUND = 1
    USAGE = 2

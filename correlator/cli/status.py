"""Exit statuses of the ``fabcorr`` command, and the error that carries one."""

from enum import IntEnum

from inventory.errors import FabcorrError


class ExitStatus(IntEnum):
    """What the shell sees: 0 done, 1 the thing asked for does not exist (or, for checks,
    a difference was found), 2 bad input or environment, 3 done in part (some switches,
    datagrams or samples rejected, or some shards of --server did not answer); 130
    interrupted (Ctrl-C)."""

    OK = 0
    NOT_FOUND = 1
    DIFFERS = 1  # a check found a difference (same code as NOT_FOUND)
    USAGE = 2
    PARTIAL = 3
    INTERRUPTED = 130


class Refused(FabcorrError):
    """A question the API (a server's, or the one answering from files) would not answer:
    the message is its error, ``status`` the exit status it means."""

    def __init__(self, message: str, status: ExitStatus) -> None:
        super().__init__(message)
        self.status = status

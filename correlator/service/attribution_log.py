"""The attribution log: one JSON line per attributed interval (or correction), appended
to a file; lines that cannot be written are held and written, in order, once the file
can be written again.

A line is ``{"attribution": ..., "received": ...}`` (:func:`~correlator.data.to_data` of
the interval's :class:`~correlator.attribution.attribute.Attribution` and of what was
received in it). The lines held are bounded by :data:`HELD_BYTES`; past it the oldest are
let go, and counted.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from pathlib import Path

from correlator.attribution.attribute import Attribution
from correlator.data import to_data
from correlator.sflow.accounting import Totals

HELD_BYTES = 256 << 20
"""The most bytes of unwritten lines held while the file cannot be written."""

_log = logging.getLogger(__name__)


class AttributionLog:
    """Appends lines to ``path``; :attr:`failing` says why the last write failed (empty
    while writing works), :attr:`lost` how many lines were let go unwritten."""

    def __init__(self, path: str, held_bytes: int = HELD_BYTES) -> None:
        self.path, self.held_bytes = Path(path), held_bytes
        self.failing, self.lost = "", 0
        self._held: deque[bytes] = deque()
        self._size = 0
        self._lock = threading.Lock()

    def append(self, result: Attribution, received: Totals) -> bool:
        """Add the interval's line and write every line held; whether they were written."""
        line = json.dumps({"attribution": to_data(result), "received": to_data(received)},
                          separators=(",", ":")).encode() + b"\n"
        with self._lock:
            self._held.append(line)
            self._size += len(line)
            while self._size > self.held_bytes and len(self._held) > 1:
                self._size -= len(self._held.popleft())
                self.lost += 1
            return self._write()

    def _write(self) -> bool:
        try:
            with self.path.open("ab") as log:
                log.write(b"".join(self._held))
        except OSError as exc:
            if not self.failing:
                _log.error("attribution log %s cannot be written, lines held until it can: "
                           "%s", self.path, exc.strerror or exc)
            self.failing = str(exc.strerror or exc)
            return False
        if self.failing:
            _log.warning("attribution log %s written again: %d held lines%s", self.path,
                         len(self._held), f", {self.lost} let go" if self.lost else "")
        self.failing = ""
        self._held.clear()
        self._size = 0
        return True

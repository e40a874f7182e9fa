"""sFlow v5 datagrams to :mod:`~correlator.sflow.records`, one at a time, through the Rust
decoder (:func:`correlator._wire.decode`): for tools that print or inspect records
(``fabcorr sflow decode``) and tests. The receive path never builds records: it hands
datagrams to the Rust core in batches (:mod:`~correlator.sflow.receiver`).

The decoder never raises on input: a datagram it cannot trust is rejected and counted by
reason in :attr:`Decoder.rejects` (``short-datagram``, ``bad-version``, ``bad-agent-type``,
``unknown-agent``, ``spoofed-source``, ``truncated-sample``, ``truncated-record``,
``bad-record``, ``internal-error``); unknown sample and record formats are skipped and
counted in :attr:`Decoder.skipped` (the latest ``FORMATS_KEPT``).
"""

from __future__ import annotations

from collections import Counter

from correlator import _wire
from correlator.sflow import native
from correlator.sflow.admission import Admission
from correlator.sflow.records import Datagram
from correlator.sflow.tables import LruTable

__all__ = ["FORMATS_KEPT", "Decoder"]

FORMATS_KEPT: int = _wire.FORMATS_KEPT
"""Unknown formats counted in :attr:`Decoder.skipped` at most (the least recent go)."""


class Decoder:
    """Decodes datagrams, counting what it rejects and skips.

    >>> from simulator import sflow_wire
    >>> d = Decoder()
    >>> d.decode(sflow_wire.Datagram("192.0.2.1", 0, 7, 1000, []).encode())
    Datagram(agent=b'\\xc0\\x00\\x02\\x01', sub_agent=0, seq=7, uptime_ms=1000, samples=[])
    >>> d.decode(b"short"), dict(d.rejects), d.datagrams
    (None, {'short-datagram': 1}, 1)
    """

    __slots__ = ("admission", "datagrams", "rejects", "samples", "skipped")

    def __init__(self, admission: Admission | None = None) -> None:
        self.admission = admission  # None: every agent is believed (a capture, a test)
        self.datagrams = 0
        self.samples: Counter[str] = Counter()  # accepted: flow, counters, discard
        self.rejects: Counter[str] = Counter()
        # unknown formats, by "sample/e:n" "record/e:n"
        self.skipped: LruTable[str, int] = LruTable(FORMATS_KEPT)

    def decode(self, data: bytes, source: str = "") -> Datagram | None:
        """The datagram in ``data`` from UDP ``source``, or ``None`` (counted in
        :attr:`rejects`)."""
        datagram, counts = native.decode(data)
        if datagram is not None and self.admission is not None:
            refused = self.admission.check(datagram.agent, source)
            if refused is not None:  # before its samples: nothing else of it counts
                self.rejects[refused] += 1
                return None
        self.datagrams += counts["datagrams"]  # type: ignore[operator]
        self.samples.update(counts["samples"])  # type: ignore[arg-type]
        self.rejects.update(counts["rejects"])  # type: ignore[arg-type]
        for key, n in counts["skipped"].items():  # type: ignore[attr-defined]
            self.skipped.put(key, self.skipped.pop(key, 0) + n)
        return datagram

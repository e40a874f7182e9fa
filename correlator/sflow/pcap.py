"""UDP payloads (sFlow datagrams) from captures, recognised by their first bytes whatever
the file is called: classic libpcap (tcpdump, ``tshark -F pcap``: either byte order, micro-
or nanosecond timestamps) and pcapng (dumpcap, tshark and Wireshark's default: sections in
either byte order, several interfaces each with its own link type, snap length and timestamp
resolution, enhanced and simple packet blocks). Links: Ethernet (802.1Q/QinQ tags), Linux
cooked (SLL, SLL2: ``-i any``) or raw IP.

The Rust core reads the file (:class:`correlator._wire.Capture`): a replay hands its
datagrams to a receiver's collector without a Python object per datagram
(:meth:`Capture.feed`); :func:`read_udp_payloads` gives them one by one.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from correlator import _wire

if TYPE_CHECKING:
    from correlator.sflow.receiver import Worker

Datagram = tuple[float, str, int, int, bytes]
"""(timestamp, source IP text, source port, destination port, UDP payload)."""


class Capture:
    """The UDP datagrams of a capture file (only those to ``port``, when given), in file
    order. Packets that are not IP (``not_ip``), not UDP (``not_udp``), IP fragments
    (``fragment``), cut short by the snap length (``truncated``) or of a link type not
    read (``unsupported_link``) are skipped and counted in :meth:`skipped`; a file that
    ends inside a record counts ``cut_short`` (once) and ends there. A file of neither
    kind, or a pcap of a link type not read, is a ValueError naming ``path``."""

    __slots__ = ("_core",)

    def __init__(self, path: str | Path, port: int | None = None) -> None:
        try:
            self._core = _wire.Capture(str(path), port)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    def peek(self) -> float | None:
        """When the next datagram arrived (None after the last), without taking it."""
        return self._core.peek()

    def feed(self, worker: Worker, until: float) -> float | None:
        """Hand the datagrams that arrived before ``until`` to ``worker``; when the next
        one arrived (None after the last)."""
        worker.handle_capture(self._core, until)
        return self._core.peek()

    def __iter__(self) -> Iterator[Datagram]:
        for at, source, sport, dport, payload in self._core:
            family = socket.AF_INET if len(source) == 4 else socket.AF_INET6
            yield at, socket.inet_ntop(family, source), sport, dport, payload

    def skipped(self) -> Counter[str]:
        """Packets skipped so far, by reason."""
        return Counter(self._core.skipped())


def read_udp_payloads(path: str | Path, skipped: Counter[str] | None = None,
                      ) -> Iterator[Datagram]:
    """Every UDP datagram of the capture in file order (see :class:`Capture`); what was
    skipped is added to ``skipped`` once the capture is read."""
    capture = Capture(path)
    yield from capture
    if skipped is not None:
        skipped.update(capture.skipped())

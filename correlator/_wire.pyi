"""fabcorr's sFlow v5 wire path in Rust (the crate in wire/): decode to the RoCEv2 BTH and
accumulate per interval, with the records, traffic classes and reject reasons of
:mod:`correlator.sflow.decode`. :mod:`correlator.sflow.native` turns what it returns into
the records and intervals the rest of fabcorr reads.

Nothing here raises on input: a datagram or sample that cannot be trusted is counted
under its reason (``REJECTS``); a panic inside is counted as ``internal-error``.
"""

from collections.abc import Iterable

ROW_FORMAT: str
"""struct format of one flow-table row (little-endian): agent index, ifIndex, sampling
rate, source address index, destination address index, direction index (``DIRECTIONS``),
traffic index (``TRAFFIC``), samples, sum of frame lengths, sum of their squares as low
and high 64 bits."""
TRAFFIC: list[str]
"""Traffic class names by index: the packet classes of correlator.sflow.packet, then
``no-header``."""
DIRECTIONS: list[str]
"""``["in", "out"]``."""
REJECTS: list[str]
"""Every reject reason: the decoder's six, then ``internal-error``."""

Counts = dict[str, object]
"""``{"datagrams": int, "samples": {"flow"|"counters"|"discard": int},
"rejects": {reason: int}, "skipped": {"sample/E:N"|"record/E:N"|"other": int}}``; only
non-zero entries. ``skipped`` holds at most 256 formats, the rest under ``other``."""

PacketTuple = tuple[str, int, int, bytes, bytes, int, int, int, int, int, int, int, int, bool]
"""The fields of :class:`correlator.sflow.records.Packet`, in order."""
SampleTuple = tuple[str, tuple[object, ...]]
"""``("flow" | "counters" | "discard", fields)``: the fields of FlowSample (packet as a
PacketTuple or None), CounterSample (interface as a 19-tuple or None, ethernet a
13-tuple or None) or DiscardSample, in order."""
DatagramTuple = tuple[bytes, int, int, int, list[SampleTuple]]
"""agent, sub-agent, sequence number, uptime (ms), samples."""
CounterTuple = tuple[int, int, int, tuple[int, ...] | None, tuple[int, ...] | None]
SegmentTuple = tuple[float, list[bytes], list[bytes], bytes]
"""start, agents (index 0 is ``b""``, then every agent seen in the segment, in order),
addresses (index 0 is ``b""``: no address), flow-table rows (``ROW_FORMAT`` each)."""
IntervalTuple = tuple[float, float, list[SegmentTuple],
                      list[tuple[bytes, int, float, int, CounterTuple]],
                      list[tuple[bytes, int, int, bytes, bytes, int]], dict[str, int]]
"""start, end, segments, counter samples as (agent, sub-agent, received at, the agent's
uptime in ms, sample), discard counts
as (agent, port, reason, source, destination, samples), and the samples that found a
full table (``{"flows", "counters", "discards"}``)."""


def decode(data: bytes) -> tuple[DatagramTuple | None, Counts]:
    """One datagram and what decoding it counted (None when it is rejected whole).
    Builds objects per sample: for tests and tools, not for the receive path."""


class Accumulator:
    """Decodes datagrams and sums their samples into the current interval, keyed as
    :class:`correlator.attribution.accumulate.Accumulator`; each table holds at most its
    ``max_*`` entries per interval (the rest is counted in the interval's overflow)."""

    def __init__(self, start: float, max_flows: int = ..., max_counters: int = ...,
                 max_discards: int = ...) -> None: ...

    def add(self, data: bytes, at: float) -> bool:
        """Decode and add one datagram received at ``at``; whether it was accepted."""

    def add_many(self, datagrams: Iterable[tuple[float, bytes]]) -> int:
        """:meth:`add` each ``(at, data)``; how many were accepted."""

    def cut(self, at: float) -> None:
        """Start a new segment at ``at`` (an address changed owner)."""

    def take(self, end: float) -> IntervalTuple:
        """The interval up to ``end``; a new one starts there."""

    def take_counts(self) -> Counts:
        """What was decoded, rejected and skipped since the last call."""

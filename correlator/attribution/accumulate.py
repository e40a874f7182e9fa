"""Per-interval sums of sFlow samples: the hot path, before anything is resolved.

A flow sample adds one sample, its frame length and the length squared to its key: agent,
port and direction (:func:`data_source`), source and destination IP, traffic class,
sampling rate; estimated bytes (frame lengths x rate), packets (samples x rate) and the
estimate's variance (squared lengths x rate squared) are made when the interval is read
(:meth:`Segment.flows`).
Counter samples are kept as they come, with their agent's uptime (they are dated by it
later); discard samples are counted. Who owns the addresses is
decided later, by the Rust core's join (:mod:`correlator.attribution.attribute`); a
:meth:`cut` starts a new segment so addresses that change owner inside an interval
resolve on each side of the change.

A segment's sums are packed tables (:class:`FlowTable`), as the Rust core
(:mod:`correlator._wire`) hands them over and the join reads them: one row per key, not
one object. This module's :class:`Accumulator`, which sums decoded records, packs its
sums the same way when it hands them over.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from correlator import _wire
from correlator.sflow.records import CounterSample, Datagram, DiscardSample, FlowSample

IN, OUT = "in", "out"
NO_HEADER = "no-header"  # traffic class of a flow sample without a sampled header
_INDEX = 0x3FFFFFFF  # format 0 interface value mask (the format bits must be 0 too)

FlowKey = tuple[bytes, int, str, bytes, bytes, str]
"""(agent, data source ifIndex, direction, source IP, destination IP, traffic class)."""


_ROW = struct.Struct(_wire.ROW_FORMAT)
_TRAFFIC = tuple(_wire.TRAFFIC)
_DIRECTIONS = tuple(_wire.DIRECTIONS)
_TRAFFIC_INDEX = {name: i for i, name in enumerate(_TRAFFIC)}
_DIRECTION_INDEX = {name: i for i, name in enumerate(_DIRECTIONS)}

Sums = dict[bytes, dict[tuple[int, str, bytes, bytes, str, int], list[int]]]
"""agent -> (ifIndex, direction, source IP, destination IP, traffic class, sampling rate)
-> [samples, sum of frame lengths, sum of their squares]."""


class FlowTable(NamedTuple):
    """Sums of flow samples, packed: ``agents`` and ``addresses`` (index 0 is ``b""``)
    and rows of :data:`correlator._wire.ROW_FORMAT` that name them by index, in pieces
    (the core makes a piece of each agent's table and frees the table, so that an
    interval's tables and rows are never all held at once)."""

    agents: list[bytes]
    addresses: list[bytes]
    rows: list[bytes]

    def flows(self) -> Iterator[tuple[FlowKey, tuple[int, int, int, int]]]:
        """Flow key -> (samples, estimated bytes, estimated packets, variance of the
        estimated bytes); a key comes once per sampling rate it was sampled at."""
        agents, addresses = self.agents, self.addresses
        for (agent, ifindex, rate, src, dst, direction, traffic, count, length, low,
             high) in (row for piece in self.rows for row in _ROW.iter_unpack(piece)):
            squares = high << 64 | low
            yield (agents[agent], ifindex, _DIRECTIONS[direction], addresses[src],
                   addresses[dst], _TRAFFIC[traffic]), (
                count, length * rate, count * rate, squares * rate * rate)


def pack(by_agent: Sums) -> FlowTable:
    """The table of sums kept as dicts (this module's :class:`Accumulator`).

    >>> table = pack({b"\\xc0\\x00\\x02\\x01": {(5, "in", b"\\x0a\\x00\\x00\\x01", b"",
    ...                                         "roce-write", 100): [2, 3000, 4500000]}})
    >>> next(table.flows())[1]
    (2, 300000, 200, 45000000000)
    """
    agents, addresses = [b"", *by_agent], {b"": 0}
    rows = bytearray()
    for number, table in enumerate(by_agent.values(), 1):
        for (ifindex, direction, src, dst, traffic, rate), (count, length, squares) \
                in table.items():
            src_index = addresses.setdefault(src, len(addresses))
            dst_index = addresses.setdefault(dst, len(addresses))
            rows += _ROW.pack(number, ifindex, rate, src_index, dst_index,
                              _DIRECTION_INDEX[direction], _TRAFFIC_INDEX[traffic], count,
                              length, squares & (1 << 64) - 1, squares >> 64)
    return FlowTable(agents, list(addresses), [bytes(rows)])


@dataclass(slots=True)
class Segment:
    """Sums from ``start`` on, in one or more tables (one per receiver that took part)."""

    start: float
    tables: list[FlowTable] = field(default_factory=list)

    def flows(self) -> Iterator[tuple[FlowKey, tuple[int, int, int, int]]]:
        """Every table's :meth:`FlowTable.flows` (a key may come once per table)."""
        for table in self.tables:
            yield from table.flows()


class CounterArrival(NamedTuple):
    """A counter sample as it came: its agent, when it was received, the agent's uptime in
    its datagram (an :class:`Accumulator` collects them; an interval keeps them in the
    core, :class:`~correlator._wire.CounterArrivals`)."""

    agent: bytes
    sub_agent: int
    received: float
    uptime_ms: int
    sample: CounterSample


@dataclass(slots=True)
class Interval:
    """Everything sampled between ``start`` and ``end``."""

    start: float
    end: float
    segments: list[Segment]
    counters: _wire.CounterArrivals
    discards: dict[tuple[bytes, int, int, bytes, bytes], int]  # (agent, ifIndex, reason,
    # source IP, destination IP) -> samples

    @property
    def seconds(self) -> float:
        return self.end - self.start


def data_source(source: int, input: int, output: int) -> tuple[int, str]:
    """The ifIndex and direction a flow sample counts for.

    The data source is the port: ``in`` when it is the sample's input interface (ingress
    sampling, the default everywhere), ``out`` when it is the output. A data source that is
    neither, while the input is known, is an agent that does not name its ports (pmacct's
    sfprobe always says 0:1): the input port, inbound.

    >>> data_source(5, 5, 9), data_source(9, 5, 9), data_source(1, 5, 0x3FFFFFFF)
    ((5, 'in'), (9, 'out'), (5, 'in'))
    """
    if source == input or (source != output and not 0 < input < _INDEX):
        return source, IN
    if source == output:
        return source, OUT
    return input, IN


class Accumulator:
    """Sums samples into the current interval; :meth:`take` hands it over."""

    __slots__ = ("_counters", "_discards", "_flows", "_segments", "_start")
    _flows: Sums

    def __init__(self, start: float) -> None:
        self._reset(start)

    def _reset(self, start: float) -> None:
        self._start = start
        self._segments = [Segment(start)]
        self._flows = {}
        self._counters: list[CounterArrival] = []
        self._discards: dict[tuple[bytes, int, int, bytes, bytes], int] = {}

    def add(self, datagram: Datagram, at: float) -> None:
        """Add every sample of ``datagram``, received at ``at``."""
        agent = datagram.agent
        table = self._flows.get(agent)
        if table is None:
            table = self._flows[agent] = {}
        get = table.get
        for sample in datagram.samples:
            if sample.__class__ is FlowSample:
                _, _, source, rate, _, _, inp, out, length, _, packet, _, _ = sample
                if source == inp:
                    direction = IN
                elif source == out:
                    direction = OUT
                else:
                    source, direction = data_source(source, inp, out)
                if packet is None:
                    key = (source, direction, b"", b"", NO_HEADER, rate)
                else:  # Packet fields 3 src_ip, 4 dst_ip, 0 traffic, by position: hot path
                    key = (source, direction, packet[3], packet[4], packet[0], rate)
                sums = get(key)
                if sums is None:
                    table[key] = [1, length, length * length]
                else:
                    sums[0] += 1
                    sums[1] += length
                    sums[2] += length * length
            elif sample.__class__ is CounterSample:
                self._counters.append(CounterArrival(agent, datagram.sub_agent, at,
                                                     datagram.uptime_ms, sample))
            elif sample.__class__ is DiscardSample:
                packet = sample.packet
                port = sample.input & _INDEX if sample.input >> 30 == 0 else 0
                key2 = (agent, port or sample.source_index, sample.reason,
                        packet.src_ip if packet else b"", packet.dst_ip if packet else b"")
                self._discards[key2] = self._discards.get(key2, 0) + 1

    def cut(self, at: float) -> None:
        """Start a new segment at ``at``: an address changed owner."""
        if self._flows:
            self._segments[-1].tables.append(pack(self._flows))
            self._segments.append(Segment(at))
            self._flows = {}
        else:
            self._segments[-1].start = at

    def take(self, end: float) -> Interval:
        """The interval up to ``end``; a new one starts there."""
        if self._flows:
            self._segments[-1].tables.append(pack(self._flows))
        interval = Interval(self._start, end, self._segments,
                            _wire.CounterArrivals(self._counters), self._discards)
        self._reset(end)
        return interval


def merge(intervals: list[Interval]) -> Interval:
    """One interval from those of several receivers over the same span: the tables of
    segments that start at the same moment make one segment."""
    segments: dict[float, Segment] = {}
    discards: dict[tuple[bytes, int, int, bytes, bytes], int] = {}
    for interval in intervals:
        for segment in interval.segments:
            segments.setdefault(segment.start, Segment(segment.start)).tables.extend(
                segment.tables)
        for key2, count in interval.discards.items():
            discards[key2] = discards.get(key2, 0) + count
    start = min(i.start for i in intervals)
    return Interval(start, max(i.end for i in intervals),
                    [segments[at] for at in sorted(segments)] or [Segment(start)],
                    _wire.CounterArrivals.joined([i.counters for i in intervals]), discards)

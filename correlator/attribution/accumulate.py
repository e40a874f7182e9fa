"""Per-interval sums of sFlow samples: the hot path, before anything is resolved.

A flow sample adds one sample, its frame length and the length squared to its key: agent,
port and direction (:func:`data_source`), source and destination IP, traffic class,
sampling rate; estimated bytes (frame lengths x rate), packets (samples x rate) and the
estimate's variance (squared lengths x rate squared) are made when the interval is read
(:meth:`Segment.flows`).
Counter samples are kept as they come, with their agent's uptime (they are dated by it
later); discard samples are counted. Who owns the addresses is
decided later, once per key (:mod:`correlator.attribution.attribute`); a :meth:`cut`
starts a new segment so addresses that change owner inside an interval resolve on each
side of the change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from correlator.sflow.records import CounterSample, Datagram, DiscardSample, FlowSample

IN, OUT = "in", "out"
NO_HEADER = "no-header"  # traffic class of a flow sample without a sampled header
_INDEX = 0x3FFFFFFF  # format 0 interface value mask (the format bits must be 0 too)

FlowKey = tuple[bytes, int, str, bytes, bytes, str]
"""(agent, data source ifIndex, direction, source IP, destination IP, traffic class)."""


@dataclass(slots=True)
class Segment:
    """Sums from ``start`` on: agent -> (ifIndex, direction, source IP, destination IP,
    traffic class, sampling rate) -> [samples, sum of frame lengths, sum of their squares]."""

    start: float
    by_agent: dict[bytes, dict[tuple[int, str, bytes, bytes, str, int], list[int]]] = field(
        default_factory=dict)

    def flows(self) -> Iterator[tuple[FlowKey, tuple[int, int, int, int]]]:
        """Flow key -> (samples, estimated bytes, estimated packets, variance of the
        estimated bytes); a key comes once per sampling rate it was sampled at."""
        for agent, table in self.by_agent.items():
            for (source, direction, src, dst, traffic, rate), (count, length, squares) \
                    in table.items():
                yield (agent, source, direction, src, dst, traffic), (
                    count, length * rate, count * rate, squares * rate * rate)


class CounterArrival(NamedTuple):
    """A counter sample as it came: its agent, when it was received, the agent's uptime in
    its datagram."""

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
    counters: list[CounterArrival]
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

    def __init__(self, start: float) -> None:
        self._reset(start)

    def _reset(self, start: float) -> None:
        self._start = start
        self._segments = [Segment(start)]
        self._flows = self._segments[0].by_agent
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
            self._segments.append(Segment(at))
            self._flows = self._segments[-1].by_agent
        else:
            self._segments[-1].start = at

    def take(self, end: float) -> Interval:
        """The interval up to ``end``; a new one starts there."""
        interval = Interval(self._start, end, self._segments, self._counters, self._discards)
        self._reset(end)
        return interval


def merge(intervals: list[Interval]) -> Interval:
    """One interval from those of several receivers over the same span: segments that
    start at the same moment are summed."""
    segments: dict[float, Segment] = {}
    counters: list[CounterArrival] = []
    discards: dict[tuple[bytes, int, int, bytes, bytes], int] = {}
    for interval in intervals:
        for segment in interval.segments:
            merged = segments.setdefault(segment.start, Segment(segment.start)).by_agent
            for agent, table in segment.by_agent.items():
                mine = merged.setdefault(agent, {})
                for key, (count, length, squares) in table.items():
                    sums = mine.setdefault(key, [0, 0, 0])
                    sums[0] += count
                    sums[1] += length
                    sums[2] += squares
        counters += interval.counters
        for key2, count in interval.discards.items():
            discards[key2] = discards.get(key2, 0) + count
    start = min(i.start for i in intervals)
    return Interval(start, max(i.end for i in intervals),
                    [segments[at] for at in sorted(segments)] or [Segment(start)],
                    counters, discards)

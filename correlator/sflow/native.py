"""The Rust wire path (:mod:`correlator._wire`) in the shapes the rest of fabcorr reads:
records of :mod:`~correlator.sflow.records`, intervals of
:mod:`~correlator.attribution.accumulate`.

Per-sample objects are only made by :func:`decode` (tests, tools); an interval's flow
tables stay packed rows (:class:`~correlator.attribution.accumulate.FlowTable`), read by
the join in the Rust core.
"""

from __future__ import annotations

from correlator import _wire
from correlator.attribution.accumulate import FlowTable, Interval, Segment
from correlator.sflow.records import (
    CounterSample,
    Datagram,
    DiscardSample,
    FlowSample,
    InterfaceCounters,
    Packet,
    Sample,
)

__all__ = ["decode", "interval", "to_datagram"]


def _packet(fields: _wire.PacketTuple | None) -> Packet | None:
    return None if fields is None else Packet(*fields)


def _counters(fields: _wire.CounterTuple) -> CounterSample:
    seq, source_type, source_index, interface, ethernet = fields
    return CounterSample(seq, source_type, source_index,
                         None if interface is None else InterfaceCounters(*interface), ethernet)


def _sample(kind: str, fields: tuple) -> Sample:
    if kind == "flow":
        return FlowSample(*fields[:10], _packet(fields[10]), *fields[11:])
    if kind == "counters":
        return _counters(fields)  # type: ignore[arg-type]
    return DiscardSample(*fields[:8], _packet(fields[8]))


def to_datagram(raw: _wire.DatagramTuple) -> Datagram:
    """The :class:`~correlator.sflow.records.Datagram` of a decoded datagram tuple."""
    agent, sub_agent, seq, uptime_ms, samples = raw
    return Datagram(agent, sub_agent, seq, uptime_ms, [_sample(k, f) for k, f in samples])


def decode(data: bytes) -> tuple[Datagram | None, _wire.Counts]:
    """One datagram through the Rust decoder, and what it counted."""
    raw, counts = _wire.decode(data)
    return (None if raw is None else to_datagram(raw)), counts


def interval(raw: _wire.IntervalTuple) -> tuple[Interval, dict[str, int]]:
    """The :class:`~correlator.attribution.accumulate.Interval` of an accumulator's
    :meth:`~correlator._wire.Accumulator.take`, and its overflow counts."""
    start, end, raw_segments, counters, raw_discards, overflow = raw
    segments = [Segment(at, [FlowTable(agents, addresses, pieces)] if len(agents) > 1 else [])
                for at, agents, addresses, pieces in raw_segments]
    discards = {(agent, port, reason, src, dst): n
                for agent, port, reason, src, dst, n in raw_discards}
    return Interval(start, end, segments, counters, discards), overflow

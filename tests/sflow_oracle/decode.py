"""sFlow v5 datagrams to :mod:`~correlator.sflow.records` (REFERENCE §6).

The decoder never raises on input: a datagram it cannot trust is rejected and counted by
reason in :attr:`Decoder.rejects`; a sample whose length runs past the datagram ends the
datagram (what follows cannot be located); a sample too short for its own fixed fields, or
with a record whose length runs past the sample, is rejected alone: every read is bounded
by the sample's declared length, never by the next sample's bytes. Unknown sample and
record formats are skipped by their length and counted in :attr:`Decoder.skipped` (the
latest ``FORMATS_KEPT`` formats: a new one in every datagram must not grow it). Only
samples of enterprise 0 are read.

With an :attr:`Decoder.admission`, a datagram of an agent it does not admit from its UDP
source is rejected before its samples are read (:mod:`~correlator.sflow.admission`).

Reject reasons: ``short-datagram``, ``bad-version``, ``bad-agent-type``, ``unknown-agent``,
``spoofed-source``, ``truncated-sample``, ``truncated-record``, ``bad-record``.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator

from correlator.sflow.admission import Admission
from correlator.sflow.records import (
    CounterSample,
    Datagram,
    DiscardSample,
    FlowSample,
    InterfaceCounters,
    Packet,
    Sample,
)
from correlator.sflow.tables import LruTable
from tests.sflow_oracle.packet import PARSERS, parse_ethernet

__all__ = ["Decoder"]

_HEAD4 = struct.Struct("!II4sIIII")  # version, agent type, agent, sub-agent, seq, uptime, n
_HEAD6 = struct.Struct("!II16sIIII")
_PAIR = struct.Struct("!II").unpack_from  # format, length
_FLOW = struct.Struct("!IIIIIIII").unpack_from  # seq, source, rate, pool, drops, in, out, n
_FLOW_X = struct.Struct("!11I").unpack_from  # expanded: type and index split
_HEADER = struct.Struct("!IIII").unpack_from  # protocol, frame length, stripped, length
_FIRST = struct.Struct("!IIIIII").unpack_from  # a record's format and length, then _HEADER
_FLOW_FIRST = struct.Struct("!14I").unpack_from  # _FLOW, then _FIRST
_SWITCH = struct.Struct("!IIII").unpack_from  # src vlan, src priority, dst vlan, dst priority
_COUNTERS = struct.Struct("!III").unpack_from  # seq, source, n
_COUNTERS_X = struct.Struct("!IIII").unpack_from
_IF_COUNTERS = struct.Struct("!IIQIIQIIIIIIQIIIIII").unpack_from
_ETHERNET = struct.Struct("!13I").unpack_from
_DISCARD = struct.Struct("!IIIIIIII").unpack_from  # seq, type, index, drops, in, out, reason, n
_new = tuple.__new__  # a tuple subclass without the Python-level __new__ call
_MAX_ITEMS = 1 << 12  # more samples or records than this in one datagram is nonsense
FORMATS_KEPT = 256
"""Unknown formats counted in :attr:`Decoder.skipped` at most (the least recent go)."""


class _BadRecord(Exception):
    """A record is shorter than its format requires."""


class _ShortSample(Exception):
    """A sample's declared length is shorter than its own fixed fields."""


class Decoder:
    """Decodes datagrams, counting what it rejects and skips; one per receiving thread."""

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
        size = len(data)
        if size < 28:
            self.rejects["short-datagram"] += 1
            return None
        version, agent_type = _PAIR(data, 0)
        if version != 5:
            self.rejects["bad-version"] += 1
            return None
        if agent_type == 1:
            head = _HEAD4
        elif agent_type == 2:
            head = _HEAD6
            if size < head.size:
                self.rejects["short-datagram"] += 1
                return None
        else:
            self.rejects["bad-agent-type"] += 1
            return None
        _, _, agent, sub_agent, seq, uptime, count = head.unpack_from(data, 0)
        if self.admission is not None:
            refused = self.admission.check(agent, source)
            if refused is not None:
                self.rejects[refused] += 1
                return None
        self.datagrams += 1
        samples: list[Sample] = []
        counted, at, flows = self.samples, head.size, 0
        for _ in range(min(count, _MAX_ITEMS)):
            if at + 8 > size:
                self.rejects["truncated-sample"] += 1
                break
            kind, length = _PAIR(data, at)
            body, end = at + 8, at + 8 + length
            if end > size:
                self.rejects["truncated-sample"] += 1
                break
            at = (end + 3) & ~3
            try:
                if kind == 1 or kind == 3:
                    samples.append(self._flow(data, body, end, kind == 3))
                    flows += 1
                elif kind == 2 or kind == 4:
                    samples.append(self._counters(data, body, end, kind == 4))
                    counted["counters"] += 1
                elif kind == 5:
                    samples.append(self._discard(data, body, end))
                    counted["discard"] += 1
                else:
                    self._skip("sample", kind)
                    continue
            except _BadRecord:
                self.rejects["bad-record"] += 1
                continue
            except _ShortSample:
                self.rejects["truncated-sample"] += 1
                continue
            except (struct.error, IndexError):
                self.rejects["truncated-record"] += 1
                continue
        if flows:
            counted["flow"] += flows
        return Datagram(agent, sub_agent, seq, uptime, samples)

    def _skip(self, what: str, kind: int) -> None:
        key = f"{what}/{kind >> 12}:{kind & 0xFFF}"
        self.skipped.put(key, self.skipped.pop(key, 0) + 1)

    def _flow(self, data: bytes, at: int, end: int, expanded: bool) -> FlowSample:
        if expanded:  # sFlow v5 flow_sample_expanded: 11 words, then the records
            if at + 44 > end:
                raise _ShortSample
            (seq, source_type, source_index, rate, pool, drops, in_format, in_value,
             out_format, out_value, count) = _FLOW_X(data, at)
            inp, out = in_format << 30 | in_value, out_format << 30 | out_value
            at += 44
            kind = length = 0
        elif at + 56 <= end:  # and the first record, a sampled header as agents send: one unpack
            (seq, source, rate, pool, drops, inp, out, count, kind, length, protocol,
             frame_length, stripped, header_length) = _FLOW_FIRST(data, at)
            source_type, source_index = source >> 24, source & 0xFFFFFF
            at += 32
        else:
            if at + 32 > end:
                raise _ShortSample
            seq, source, rate, pool, drops, inp, out, count = _FLOW(data, at)
            source_type, source_index = source >> 24, source & 0xFFFFFF
            at += 32
            kind = length = 0
        packet: Packet | None = None
        src_vlan = dst_vlan = -1
        if count > _MAX_ITEMS:
            count = _MAX_ITEMS
        if count and kind == 0 and at + 24 <= end:
            kind, length, protocol, frame_length, stripped, header_length = _FIRST(data, at)
        if count and kind == 1 and length >= 16 and \
                at + 24 + header_length <= at + 8 + length <= end:
            if protocol == 1:
                packet = parse_ethernet(data, at + 24, at + 24 + header_length)
            elif protocol in PARSERS:
                packet = PARSERS[protocol](data, at + 24, at + 24 + header_length)
            at = (at + 11 + length) & ~3
            count -= 1
        else:  # no sampled header first: the loop below reads the records
            frame_length = stripped = 0
        for kind, body, stop in _records(data, at, end, count):
            if kind == 1:
                frame_length, stripped, packet = _sampled_header(data, body, stop)
            elif kind == 1001:
                if stop - body < 16:
                    raise _BadRecord
                src_vlan, _, dst_vlan, _ = _SWITCH(data, body)
            else:
                self._skip("record", kind)
        return _new(FlowSample, (seq, source_type, source_index, rate, pool, drops, inp, out,
                                 frame_length, stripped, packet, src_vlan, dst_vlan))

    def _counters(self, data: bytes, at: int, end: int, expanded: bool) -> CounterSample:
        if expanded:  # sFlow v5 counters_sample_expanded: 4 words, then the records
            if at + 16 > end:
                raise _ShortSample
            seq, source_type, source_index, count = _COUNTERS_X(data, at)
            at += 16
        else:
            if at + 12 > end:
                raise _ShortSample
            seq, source, count = _COUNTERS(data, at)
            source_type, source_index = source >> 24, source & 0xFFFFFF
            at += 12
        interface: InterfaceCounters | None = None
        ethernet: tuple[int, ...] | None = None
        for kind, body, stop in _records(data, at, end, count):
            if kind == 1:
                if stop - body < 88:
                    raise _BadRecord
                interface = InterfaceCounters(*_IF_COUNTERS(data, body))
            elif kind == 2:
                if stop - body < 52:
                    raise _BadRecord
                ethernet = _ETHERNET(data, body)
            else:
                self._skip("record", kind)
        return CounterSample(seq, source_type, source_index, interface, ethernet)

    def _discard(self, data: bytes, at: int, end: int) -> DiscardSample:
        if at + 32 > end:
            raise _ShortSample
        seq, source_type, source_index, drops, inp, out, reason, count = _DISCARD(data, at)
        at += 32
        frame_length = 0
        packet: Packet | None = None
        for kind, body, stop in _records(data, at, end, count):
            if kind == 1:
                frame_length, _, packet = _sampled_header(data, body, stop)
            else:
                self._skip("record", kind)
        return DiscardSample(seq, source_type, source_index, drops, inp, out, reason,
                             frame_length, packet)


def _records(data: bytes, at: int, end: int, count: int) -> Iterator[tuple[int, int, int]]:
    """(format, body start, body end) of ``count`` records from ``at``; struct.error when
    one runs past ``end``, the end of its sample."""
    for _ in range(min(count, _MAX_ITEMS)):
        if at + 8 > end:
            raise struct.error
        kind, length = _PAIR(data, at)
        body, stop = at + 8, at + 8 + length
        if stop > end:
            raise struct.error
        yield kind, body, stop
        at = (stop + 3) & ~3


def _sampled_header(data: bytes, at: int, end: int) -> tuple[int, int, Packet | None]:
    """Frame length, bytes stripped, and the packet of a sampled-header record."""
    if at + 16 > end:
        raise _BadRecord
    protocol, frame_length, stripped, length = _HEADER(data, at)
    if at + 16 + length > end:
        raise _BadRecord
    parser = PARSERS.get(protocol)
    return frame_length, stripped, (parser(data, at + 16, at + 16 + length) if parser else None)

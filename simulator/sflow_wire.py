"""sFlow v5 datagrams on the wire (REFERENCE §6; sflow.org sflow_version_5.txt, sflow_drops.txt).

Pure encoding: XDR, big-endian, every opaque padded to 4 bytes. fabcorr's decoder
(``correlator/sflow``) is written separately and tested against what this module encodes,
with tshark as the referee.

>>> sample = FlowSample(seq=1, source_index=7, sampling_rate=1000, sample_pool=1000, drops=0,
...                     input=ifindex(7), output=UNKNOWN, header=bytes(14), frame_length=64)
>>> data = Datagram("192.0.2.1", sub_agent=0, seq=1, uptime_ms=5, samples=[sample]).encode()
>>> len(data), data[:8].hex()
(108, '0000000500000001')
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Sequence
from dataclasses import dataclass

UNKNOWN = 0x3FFFFFFF
"""Format-0 interface value of an unknown (or internal) interface."""

ETHERNET, IPV4, IPV6 = 1, 11, 12
"""Sampled-header protocols."""

SAMPLED_HEADER, EXTENDED_SWITCH, EGRESS_QUEUE = 1, 1001, 1036
IF_COUNTERS, ETHERNET_COUNTERS = 1, 2
FLOW, COUNTERS, FLOW_EXPANDED, COUNTERS_EXPANDED, DISCARD = 1, 2, 3, 4, 5


def data_format(enterprise: int, number: int) -> int:
    """The 32-bit ``data_format`` of a sample or record: ``enterprise << 12 | number``."""
    return enterprise << 12 | number


def ifindex(n: int) -> int:
    """The interface value of ifIndex ``n`` (format 0)."""
    return _interface(0, n)


def dropped(reason: int) -> int:
    """The output value of a packet dropped for ``reason`` (format 1)."""
    return _interface(1, reason)


def multiple(count: int) -> int:
    """The output value of a packet sent to ``count`` interfaces (format 2; 0 = unknown)."""
    return _interface(2, count)


def _interface(fmt: int, value: int) -> int:
    if not 0 <= value <= UNKNOWN:
        raise ValueError(f"interface value {value} does not fit in 30 bits")
    return fmt << 30 | value


def opaque(data: bytes) -> bytes:
    """XDR variable-length opaque: length, data, zero padding to 4 bytes."""
    return struct.pack("!I", len(data)) + data + bytes(-len(data) % 4)


def record(fmt: int, body: bytes) -> bytes:
    """A sample or record: ``data_format`` then the body as an opaque."""
    return struct.pack("!I", fmt) + opaque(body)


def _records(parts: Sequence[bytes]) -> bytes:
    return struct.pack("!I", len(parts)) + b"".join(parts)


@dataclass(frozen=True)
class Raw:
    """A sample or record of any format (e.g. one a decoder must skip): ``body`` is sent
    as the opaque after ``format`` (see :func:`data_format`)."""

    format: int
    body: bytes

    def encode(self) -> bytes:
        return record(self.format, self.body)


def _sampled_header(protocol: int, frame_length: int, stripped: int, header: bytes) -> bytes:
    return record(SAMPLED_HEADER,
                  struct.pack("!III", protocol, frame_length, stripped) + opaque(header))


def _with_extra(known: list[bytes], extra: Sequence[Raw], extra_first: bool) -> list[bytes]:
    raw = [r.encode() for r in extra]
    return raw + known if extra_first else known + raw


@dataclass(frozen=True)
class FlowSample:
    """A packet sample: compact (0,1), or expanded (0,3) when ``expanded``.

    Records: sampled header (0,1), extended switch (0,1001) if given, egress queue (0,1036)
    if given, then ``extra_records`` (first instead when ``extra_first``). tshark 4.0
    misreads records after one it does not know (1036), hence that order.
    ``input``/``output`` are raw interface values (:func:`ifindex`, :func:`dropped`,
    :func:`multiple`, :data:`UNKNOWN`).
    """

    seq: int
    source_index: int
    sampling_rate: int
    sample_pool: int
    drops: int
    input: int
    output: int
    header: bytes
    frame_length: int
    stripped: int = 4
    header_protocol: int = ETHERNET
    source_type: int = 0
    expanded: bool = False
    extended_switch: tuple[int, int, int, int] | None = None
    egress_queue: int | None = None
    extra_records: tuple[Raw, ...] = ()
    extra_first: bool = False

    def encode(self) -> bytes:
        """The sample record: format, then the sample as an opaque."""
        known = [_sampled_header(self.header_protocol, self.frame_length, self.stripped,
                                 self.header)]
        if self.extended_switch is not None:
            known.append(record(EXTENDED_SWITCH, struct.pack("!4I", *self.extended_switch)))
        if self.egress_queue is not None:
            known.append(record(EGRESS_QUEUE, struct.pack("!I", self.egress_queue)))
        records = _records(_with_extra(known, self.extra_records, self.extra_first))
        counts = (self.sampling_rate, self.sample_pool, self.drops)
        if self.expanded:
            body = struct.pack("!10I", self.seq, self.source_type, self.source_index, *counts,
                               self.input >> 30, self.input & UNKNOWN,
                               self.output >> 30, self.output & UNKNOWN)
            return record(FLOW_EXPANDED, body + records)
        body = struct.pack("!7I", self.seq, _source_id(self.source_type, self.source_index),
                           *counts, self.input, self.output)
        return record(FLOW, body + records)


@dataclass(frozen=True)
class IfCounters:
    """The generic interface counters record (0,1), 88 bytes; ``status`` bit 0 admin up,
    bit 1 oper up; the octet counters and ``speed`` are 64-bit, the rest 32-bit."""

    ifindex: int
    if_type: int = 6
    speed: int = 0
    direction: int = 1
    status: int = 3
    in_octets: int = 0
    in_ucast: int = 0
    in_mcast: int = 0
    in_bcast: int = 0
    in_discards: int = 0
    in_errors: int = 0
    in_unknown: int = 0
    out_octets: int = 0
    out_ucast: int = 0
    out_mcast: int = 0
    out_bcast: int = 0
    out_discards: int = 0
    out_errors: int = 0
    promiscuous: int = 0

    def encode(self) -> bytes:
        return record(IF_COUNTERS, struct.pack(
            "!IIQIIQ6IQ6I", self.ifindex, self.if_type, self.speed, self.direction,
            self.status, self.in_octets, self.in_ucast, self.in_mcast, self.in_bcast,
            self.in_discards, self.in_errors, self.in_unknown, self.out_octets, self.out_ucast,
            self.out_mcast, self.out_bcast, self.out_discards, self.out_errors,
            self.promiscuous))


@dataclass(frozen=True)
class CounterSample:
    """A counters sample: compact (0,2), or expanded (0,4) when ``expanded``; records:
    if_counters (0,1), ethernet (0,2: the 13 dot3Stats counters), then ``extra_records``."""

    seq: int
    source_index: int
    if_counters: IfCounters | None = None
    ethernet: tuple[int, ...] | None = None
    source_type: int = 0
    expanded: bool = False
    extra_records: tuple[Raw, ...] = ()
    extra_first: bool = False

    def encode(self) -> bytes:
        known = [] if self.if_counters is None else [self.if_counters.encode()]
        if self.ethernet is not None:
            if len(self.ethernet) != 13:
                raise ValueError("ethernet counters are 13 values")
            known.append(record(ETHERNET_COUNTERS, struct.pack("!13I", *self.ethernet)))
        records = _records(_with_extra(known, self.extra_records, self.extra_first))
        if self.expanded:
            head = struct.pack("!3I", self.seq, self.source_type, self.source_index)
            return record(COUNTERS_EXPANDED, head + records)
        head = struct.pack("!2I", self.seq, _source_id(self.source_type, self.source_index))
        return record(COUNTERS, head + records)


@dataclass(frozen=True)
class DiscardSample:
    """A discarded-packet sample (0,5) per sflow_drops.txt: ``input``/``output`` are plain
    ifIndexes (0 = unknown); records: sampled header, then ``extra_records``."""

    seq: int
    source_index: int
    drops: int
    input: int
    output: int
    reason: int
    header: bytes
    frame_length: int
    source_type: int = 0
    stripped: int = 4
    header_protocol: int = ETHERNET
    extra_records: tuple[Raw, ...] = ()
    extra_first: bool = False

    def encode(self) -> bytes:
        known = [_sampled_header(self.header_protocol, self.frame_length, self.stripped,
                                 self.header)]
        records = _records(_with_extra(known, self.extra_records, self.extra_first))
        head = struct.pack("!7I", self.seq, self.source_type, self.source_index, self.drops,
                           self.input, self.output, self.reason)
        return record(DISCARD, head + records)


Sample = FlowSample | CounterSample | DiscardSample | Raw


@dataclass(frozen=True)
class Datagram:
    """One sFlow v5 datagram from ``agent`` (IPv4 or IPv6 text). ``samples`` may also hold
    already-encoded sample records (``bytes`` from a sample's ``encode()``)."""

    agent: str
    sub_agent: int
    seq: int
    uptime_ms: int
    samples: Sequence[Sample | bytes]

    def encode(self) -> bytes:
        return datagram_header(self.agent, self.sub_agent, self.seq, self.uptime_ms,
                               len(self.samples)) + b"".join(
            s if isinstance(s, bytes) else s.encode() for s in self.samples)


def datagram_header(agent: str, sub_agent: int, seq: int, uptime_ms: int, count: int) -> bytes:
    """The datagram's fixed part, up to and including the sample count."""
    address = ipaddress.ip_address(agent)
    return struct.pack("!II", 5, 1 if address.version == 4 else 2) + address.packed + \
        struct.pack("!4I", sub_agent, seq, uptime_ms & 0xFFFFFFFF, count)


def agent_of(datagram: bytes) -> str:
    """The agent address a datagram's header names (the inverse of
    :func:`datagram_header`'s).

    >>> agent_of(datagram_header("127.1.0.5", 0, 1, 5, 0)), agent_of(
    ...     datagram_header("2001:db8::1", 0, 1, 5, 0))
    ('127.1.0.5', '2001:db8::1')
    """
    size = 4 if struct.unpack_from("!I", datagram, 4)[0] == 1 else 16
    return str(ipaddress.ip_address(datagram[8:8 + size]))


def _source_id(source_type: int, index: int) -> int:
    if not 0 <= index < 1 << 24 or not 0 <= source_type < 256:
        raise ValueError(f"source {source_type}:{index} needs an expanded sample")
    return source_type << 24 | index

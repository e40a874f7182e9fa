"""What an sFlow v5 datagram says, as plain tuples (REFERENCE §6).

Interfaces keep their raw 32-bit sFlow value (format in the top two bits): use
:func:`ifindex` for the index of a format-0 value.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

UNKNOWN_INTERFACE = 0x3FFFFFFF
"""Format-0 value of an interface the agent does not know (also "internal")."""


def ifindex(value: int) -> int:
    """The ifIndex of a raw interface value, 0 when it names none (unknown, internal,
    dropped, or several outputs)."""
    index = value & UNKNOWN_INTERFACE
    return index if value >> 30 == 0 and index != UNKNOWN_INTERFACE else 0


def address_text(packed: bytes) -> str:
    """``192.0.2.1`` / ``2001:db8::1`` for 4 / 16 packed bytes, ``""`` for none."""
    return str(ipaddress.ip_address(packed)) if packed else ""


class Packet(NamedTuple):
    """The parts of a sampled header fabcorr uses.

    ``ip_version`` is 0 for a non-IP frame (addresses are then ``b""``); ``opcode`` is -1
    unless the packet is RoCEv2 (UDP 4791 with a whole BTH); ``vlan`` -1 when untagged (the
    outer tag of a QinQ frame otherwise).
    """

    traffic: str
    vlan: int
    ip_version: int
    src_ip: bytes
    dst_ip: bytes
    dscp: int
    ecn: int
    protocol: int
    src_port: int
    dst_port: int
    opcode: int
    dest_qp: int
    psn: int
    becn: bool


class FlowSample(NamedTuple):
    """A packet sample, compact (0,1) or expanded (0,3); ``packet`` is ``None`` when the
    sample carries no sampled-header record."""

    seq: int
    source_type: int
    source_index: int
    sampling_rate: int
    sample_pool: int
    drops: int
    input: int
    output: int
    frame_length: int
    stripped: int
    packet: Packet | None
    src_vlan: int = -1
    dst_vlan: int = -1


class InterfaceCounters(NamedTuple):
    """The generic interface counters record (0,1)."""

    ifindex: int
    if_type: int
    speed: int
    direction: int
    status: int
    in_octets: int
    in_ucast: int
    in_mcast: int
    in_bcast: int
    in_discards: int
    in_errors: int
    in_unknown: int
    out_octets: int
    out_ucast: int
    out_mcast: int
    out_bcast: int
    out_discards: int
    out_errors: int
    promiscuous: int

    @property
    def oper_up(self) -> bool:
        return bool(self.status & 2)


class CounterSample(NamedTuple):
    """A counters sample (0,2) or expanded (0,4); records it does not carry are ``None``."""

    seq: int
    source_type: int
    source_index: int
    interface: InterfaceCounters | None
    ethernet: tuple[int, ...] | None


class DiscardSample(NamedTuple):
    """A discarded-packet sample (0,5): ``reason`` per sflow_drops.txt."""

    seq: int
    source_type: int
    source_index: int
    drops: int
    input: int
    output: int
    reason: int
    frame_length: int
    packet: Packet | None


Sample = FlowSample | CounterSample | DiscardSample


class Datagram(NamedTuple):
    """One sFlow v5 datagram: ``agent`` is the packed agent address (4 or 16 bytes)."""

    agent: bytes
    sub_agent: int
    seq: int
    uptime_ms: int
    samples: list[Sample]


DISCARD_REASONS = {
    0: "net_unreachable", 1: "host_unreachable", 2: "protocol_unreachable",
    3: "port_unreachable", 4: "frag_needed", 5: "src_route_failed", 6: "dst_net_unknown",
    7: "dst_host_unknown", 8: "src_host_isolated", 9: "dst_net_prohibited",
    10: "dst_host_prohibited", 11: "dst_net_tos_unreachable", 12: "dst_host_tos_unreachable",
    13: "comm_admin_prohibited", 14: "host_precedence_violation", 15: "precedence_cutoff",
    256: "unknown", 257: "ttl_exceeded", 258: "acl", 259: "no_buffer_space", 260: "red",
    262: "pkt_too_big", 269: "blackhole_route", 287: "unknown_buffer",
}
"""The sflow_drops.txt reason codes fabcorr names (0-15: ICMP unreachable codes)."""


def discard_reason(code: int) -> str:
    """The name of a discard reason code, ``code_<n>`` for one without a name here."""
    return DISCARD_REASONS.get(code) or f"code_{code}"

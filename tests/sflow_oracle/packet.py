"""Sampled headers: Ethernet (802.1Q / QinQ) / IPv4 or IPv6 / UDP or TCP / RoCEv2 BTH.

A header is what the switch copied of a packet, cut anywhere: whatever is missing is
left at its "absent" value, never guessed. Every packet gets a ``traffic`` class:
RoCEv2 by BTH opcode (``roce-send``, ``roce-write``, ``roce-read-request``,
``roce-read-response``, ``roce-ack``, ``roce-atomic``, ``roce-cnp``, ``roce-other``),
else ``udp``, ``tcp``, ``icmp``, ``ip-other`` or ``non-ip``.

>>> from simulator import roce
>>> frame = roce.frame(bytes(6), bytes(6), bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]),
...                    roce.payload(roce.CNP, 0x1234, 0), vlan=7, dscp=48)
>>> p = parse_ethernet(frame)
>>> p.traffic, p.vlan, p.dscp, p.ecn, p.dst_port, hex(p.dest_qp), p.becn
('roce-cnp', 7, 48, 2, 4791, '0x1234', True)
"""

from __future__ import annotations

import struct

from correlator.sflow.packet import OPCODE_CLASS  # the table the Rust core mirrors
from correlator.sflow.records import Packet

ROCE_PORT = 4791
# Ethernet / IPv4 (20 B) / UDP / BTH: ethertype, version+IHL, TOS, flags+fragment offset,
# protocol, source, destination, ports, BTH opcode, BECN byte, dest QP, PSN
_ROCE_IPV4 = struct.Struct("!12xHBB4xHxB2x4s4sHH4xBx2xBBHxBH").unpack_from
_new = tuple.__new__  # a tuple subclass without the Python-level __new__ call
_TAGS = frozenset({0x8100, 0x88A8, 0x9100})
_IP_CLASS = {17: "udp", 6: "tcp", 1: "icmp", 58: "icmp"}


NON_IP = Packet("non-ip", -1, 0, b"", b"", 0, 0, 0, 0, 0, -1, 0, 0, False)


def parse_ethernet(h: bytes, at: int = 0, end: int | None = None) -> Packet:
    """Parse an Ethernet header (header_protocol 1) in ``h[at:end]``."""
    n = len(h) if end is None else end
    if n >= at + 54:  # the common case first, in one unpack: untagged IPv4 RoCEv2
        (ethertype, version_ihl, tos, fragment, protocol, src, dst, sport, dport, opcode,
         flags, qp_high, qp_low, psn_high, psn_low) = _ROCE_IPV4(h, at)
        if (ethertype == 0x0800 and version_ihl == 0x45 and protocol == 17
                and dport == ROCE_PORT and not fragment & 0x1FFF):
            return _new(Packet, (OPCODE_CLASS[opcode], -1, 4, src, dst, tos >> 2, tos & 3, 17,
                                 sport, dport, opcode, qp_high << 16 | qp_low,
                                 psn_high << 16 | psn_low, bool(flags & 0x40)))
    if n < at + 14:
        return NON_IP
    ethertype, at, vlan = h[at + 12] << 8 | h[at + 13], at + 14, -1
    while ethertype in _TAGS and n >= at + 4:
        if vlan < 0:
            vlan = (h[at] << 8 | h[at + 1]) & 0xFFF
        ethertype, at = h[at + 2] << 8 | h[at + 3], at + 4
    if ethertype == 0x0800:
        return parse_ipv4(h, at, n, vlan)
    if ethertype == 0x86DD:
        return parse_ipv6(h, at, n, vlan)
    return NON_IP if vlan < 0 else NON_IP._replace(vlan=vlan)


def parse_ipv4(h: bytes, at: int = 0, end: int | None = None, vlan: int = -1) -> Packet:
    """Parse an IPv4 header (header_protocol 11) in ``h[at:end]``."""
    end = len(h) if end is None else end
    if end < at + 20 or h[at] >> 4 != 4:
        return NON_IP if vlan < 0 else NON_IP._replace(vlan=vlan)
    tos, protocol = h[at + 1], h[at + 9]
    src, dst = h[at + 12:at + 16], h[at + 16:at + 20]
    if (h[at + 6] & 0x1F) or h[at + 7]:  # a later fragment: no transport header
        return Packet("ip-other", vlan, 4, src, dst, tos >> 2, tos & 3, protocol,
                      0, 0, -1, 0, 0, False)
    return _transport(h, at + (h[at] & 0xF) * 4, end, vlan, 4, src, dst, tos, protocol)


def parse_ipv6(h: bytes, at: int = 0, end: int | None = None, vlan: int = -1) -> Packet:
    """Parse an IPv6 header (header_protocol 12) in ``h[at:end]``; extension headers are
    not followed (RoCEv2 sends none)."""
    end = len(h) if end is None else end
    if end < at + 40 or h[at] >> 4 != 6:
        return NON_IP if vlan < 0 else NON_IP._replace(vlan=vlan)
    tc = (h[at] & 0xF) << 4 | h[at + 1] >> 4
    return _transport(h, at + 40, end, vlan, 6, h[at + 8:at + 24], h[at + 24:at + 40], tc,
                      h[at + 6])


def _transport(h: bytes, at: int, end: int, vlan: int, version: int, src: bytes, dst: bytes,
               tos: int, protocol: int) -> Packet:
    traffic = _IP_CLASS.get(protocol, "ip-other")
    if protocol not in (6, 17) or end < at + 4:
        return Packet(traffic, vlan, version, src, dst, tos >> 2, tos & 3, protocol,
                      0, 0, -1, 0, 0, False)
    sport, dport = h[at] << 8 | h[at + 1], h[at + 2] << 8 | h[at + 3]
    b = at + 8
    if protocol == 17 and dport == ROCE_PORT and end >= b + 12:
        opcode = h[b]
        return Packet(OPCODE_CLASS[opcode], vlan, version, src, dst, tos >> 2, tos & 3, 17,
                      sport, dport, opcode, h[b + 5] << 16 | h[b + 6] << 8 | h[b + 7],
                      h[b + 9] << 16 | h[b + 10] << 8 | h[b + 11], bool(h[b + 4] & 0x40))
    return Packet(traffic, vlan, version, src, dst, tos >> 2, tos & 3, protocol,
                  sport, dport, -1, 0, 0, False)


PARSERS = {1: parse_ethernet, 11: parse_ipv4, 12: parse_ipv6}
"""header_protocol -> parser; other protocols (e.g. 802.11) give no packet."""

"""RoCEv2 packets as NICs send them: InfiniBand transport headers on UDP 4791, and whole
Ethernet frames around them (REFERENCE §7).

The emulated fabric, the sFlow agents and the lab's traffic generator build their packets
here; fabcorr's decoder (``correlator/sflow``) is written separately, so each checks the
other.
"""

from __future__ import annotations

import struct
import zlib

ROCE_PORT = 4791
SEND_ONLY, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 0x04, 0x06, 0x07, 0x08, 0x0A
READ_REQUEST, READ_RESPONSE_ONLY, ACK, CNP = 0x0C, 0x10, 0x11, 0x81
_RETH = frozenset({WRITE_FIRST, WRITE_ONLY, 0x0B, READ_REQUEST})  # + remote address, key, length
_AETH = frozenset({0x0D, 0x0F, READ_RESPONSE_ONLY, ACK, 0x12})
ROCE_DSCP, CNP_DSCP = 26, 48
ECT0 = 0b10


def bth(opcode: int, dest_qp: int, psn: int, *, becn: bool = False, ack_req: bool = False,
        pad: int = 0) -> bytes:
    """The 12-byte Base Transport Header (P_Key 0xFFFF, TVer 0)."""
    return struct.pack("!BBHBBHBBH", opcode, (pad & 3) << 4, 0xFFFF,
                       0x40 if becn else 0, dest_qp >> 16 & 0xFF, dest_qp & 0xFFFF,
                       0x80 if ack_req else 0, psn >> 16 & 0xFF, psn & 0xFFFF)


def payload(opcode: int, dest_qp: int, psn: int, length: int = 0) -> bytes:
    """The UDP payload of one RoCEv2 packet: BTH, its extension headers, ``length`` bytes
    of data and the 4-byte ICRC (over the payload only: a stand-in, no switch checks it).

    A CNP carries BECN and 16 reserved bytes and no data; a READ REQUEST asks for
    ``length`` bytes in its RETH and carries no data.
    """
    if opcode == CNP:
        body = bth(CNP, dest_qp, 0, becn=True) + bytes(16)
    else:
        body = bth(opcode, dest_qp, psn, ack_req=opcode in (WRITE_LAST, WRITE_ONLY))
        if opcode in _RETH:
            body += struct.pack("!QII", 0x7F00_0000_0000 + psn * 4096, 0x1234, length)
        if opcode in _AETH:
            body += struct.pack("!I", psn & 0xFFFFFF)
        if opcode != READ_REQUEST:
            body += bytes(length)
    return body + struct.pack("<I", zlib.crc32(body))


def frame(src_mac: bytes, dst_mac: bytes, src_ip: bytes, dst_ip: bytes, udp_payload: bytes, *,
          sport: int = 49152, dport: int = ROCE_PORT, dscp: int = ROCE_DSCP, ecn: int = ECT0,
          vlan: int | None = None, priority: int = 3, udp_checksum: bool = False) -> bytes:
    """An Ethernet frame (without FCS) carrying ``udp_payload`` between two IPv4 (4-byte) or
    IPv6 (16-byte) addresses, optionally 802.1Q-tagged. The UDP checksum is 0 (as RoCEv2
    NICs send it) unless ``udp_checksum``."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(udp_payload), 0) + udp_payload
    if udp_checksum:
        pseudo = src_ip + dst_ip + struct.pack("!IxxxB", len(udp), 17)
        udp = udp[:6] + struct.pack("!H", _checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    if len(src_ip) == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2 | ecn, 20 + len(udp), 0, 0x4000, 64,
                         17, 0, src_ip, dst_ip)
        ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
        ethertype = 0x0800
    else:
        ip = struct.pack("!IHBB16s16s", 6 << 28 | (dscp << 2 | ecn) << 20, len(udp), 17, 64,
                         src_ip, dst_ip)
        ethertype = 0x86DD
    tag = b"" if vlan is None else struct.pack("!HH", 0x8100, priority << 13 | vlan)
    return dst_mac + src_mac + tag + struct.pack("!H", ethertype) + ip + udp


def _checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``, zero-padded to an even length."""
    data += bytes(len(data) % 2)
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF

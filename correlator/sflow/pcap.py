"""UDP payloads (sFlow datagrams) from classic libpcap captures, as tcpdump or
``tshark -F pcap`` write them: either byte order, micro- or nanosecond timestamps;
Ethernet (802.1Q/QinQ tags), Linux cooked (SLL, SLL2: ``-i any``) or raw IP links.
pcapng is refused (convert it: ``editcap -F pcap in.pcapng out.pcap``).
"""

from __future__ import annotations

import socket
import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

_MAGICS = {  # magic as read little-endian -> (byte order, ticks per second)
    0xA1B2C3D4: ("<", 1_000_000), 0xD4C3B2A1: (">", 1_000_000),
    0xA1B23C4D: ("<", 1_000_000_000), 0x4D3CB2A1: (">", 1_000_000_000),
}
_PCAPNG = 0x0A0D0D0A
EN10MB, RAW, LINUX_SLL, LINUX_SLL2 = 1, 101, 113, 276
_IPV4, _IPV6, _VLAN_TAGS = 0x0800, 0x86DD, frozenset({0x8100, 0x88A8, 0x9100})
_IPV6_EXTENSIONS = frozenset({0, 43, 60})  # hop-by-hop, routing, destination options
_UDP, _IPV6_FRAGMENT = 17, 44
_BLOCK = 1 << 22

Datagram = tuple[float, str, int, int, bytes]
"""(timestamp, source IP text, source port, destination port, UDP payload)."""


def read_udp_payloads(path: str | Path, skipped: Counter[str] | None = None,
                      ) -> Iterator[Datagram]:
    """Every UDP datagram of the capture in file order. Packets that are not IP
    (``not_ip``), not UDP (``not_udp``), IP fragments (``fragment``) or cut short by the
    snap length (``truncated``) are skipped and counted in ``skipped``."""
    skipped = Counter() if skipped is None else skipped
    with open(path, "rb") as stream:
        head = stream.read(24)
        if len(head) < 24:
            raise ValueError(f"{path}: not a pcap file (too short)")
        magic = struct.unpack("<I", head[:4])[0]
        if magic == _PCAPNG:
            raise ValueError(f"{path}: pcapng; convert it with editcap -F pcap")
        if magic not in _MAGICS:
            raise ValueError(f"{path}: not a pcap file (magic {magic:#010x})")
        order, ticks = _MAGICS[magic]
        link = struct.unpack(order + "I", head[20:24])[0] & 0xFFFF
        if link not in (EN10MB, RAW, LINUX_SLL, LINUX_SLL2):
            raise ValueError(f"{path}: unsupported link type {link}")
        record = struct.Struct(order + "IIII").unpack_from
        block, at = b"", 0  # read in large blocks: one read per packet costs more
        while True:
            if len(block) - at < 16 or len(block) - at < 16 + record(block, at)[2]:
                more = stream.read(_BLOCK)
                if not more:
                    break
                block, at = block[at:] + more, 0
                continue
            seconds, fraction, captured, _ = record(block, at)
            data, at = block[at + 16:at + 16 + captured], at + 16 + captured
            found = _udp(link, data)
            if isinstance(found, str):
                skipped[found] += 1
            else:
                yield (seconds + fraction / ticks, *found)
        if len(block) - at >= 16:  # the capture ends mid-packet
            skipped["truncated"] += 1


def _udp(link: int, data: bytes) -> tuple[str, int, int, bytes] | str:
    """The UDP datagram in a link-layer frame, or why there is none."""
    ethertype, offset = _network(link, data)
    if ethertype == _IPV4 and len(data) >= offset + 20:
        ihl = (data[offset] & 0x0F) * 4
        total, _, flags_fragment = struct.unpack_from("!HHH", data, offset + 2)
        if flags_fragment & 0x3FFF:  # more fragments, or an offset
            return "fragment"
        if data[offset + 9] != _UDP:
            return "not_udp"
        source = socket.inet_ntop(socket.AF_INET, data[offset + 12:offset + 16])
        end, offset = offset + total, offset + ihl
    elif ethertype == _IPV6 and len(data) >= offset + 40:
        source = socket.inet_ntop(socket.AF_INET6, data[offset + 8:offset + 24])
        end = offset + 40 + struct.unpack_from("!H", data, offset + 4)[0]
        after, offset = data[offset + 6], offset + 40
        while after in _IPV6_EXTENSIONS and len(data) >= offset + 8:
            after, offset = data[offset], offset + (data[offset + 1] + 1) * 8
        if after == _IPV6_FRAGMENT:
            return "fragment"
        if after != _UDP:
            return "not_udp"
    else:
        return "not_ip"
    if len(data) < offset + 8:
        return "truncated"
    sport, dport, length = struct.unpack_from("!HHH", data, offset)
    if length < 8 or offset + length > min(end, len(data)):
        return "truncated"
    return source, sport, dport, data[offset + 8:offset + length]


def _network(link: int, data: bytes) -> tuple[int, int]:
    """(ethertype, offset) of the network-layer packet; ethertype 0 when unknown."""
    if link == RAW:
        version = data[0] >> 4 if data else 0
        return {4: _IPV4, 6: _IPV6}.get(version, 0), 0
    if link == LINUX_SLL:
        return (struct.unpack_from("!H", data, 14)[0], 16) if len(data) >= 16 else (0, 0)
    if link == LINUX_SLL2:
        return (struct.unpack_from("!H", data, 0)[0], 20) if len(data) >= 20 else (0, 0)
    offset = 12
    while len(data) >= offset + 2:
        ethertype = struct.unpack_from("!H", data, offset)[0]
        if ethertype not in _VLAN_TAGS:
            return ethertype, offset + 2
        offset += 4
    return 0, 0

"""UDP payloads (sFlow datagrams) from captures, recognised by their first bytes whatever
the file is called: classic libpcap (tcpdump, ``tshark -F pcap``: either byte order, micro-
or nanosecond timestamps) and pcapng (dumpcap, tshark and Wireshark's default: sections in
either byte order, several interfaces each with its own link type, snap length and timestamp
resolution, enhanced and simple packet blocks). Links: Ethernet (802.1Q/QinQ tags), Linux
cooked (SLL, SLL2: ``-i any``) or raw IP.
"""

from __future__ import annotations

import socket
import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_MAGICS = {  # magic as read little-endian -> (byte order, ticks per second)
    0xA1B2C3D4: ("<", 1_000_000), 0xD4C3B2A1: (">", 1_000_000),
    0xA1B23C4D: ("<", 1_000_000_000), 0x4D3CB2A1: (">", 1_000_000_000),
}
_SECTION, _INTERFACE, _SIMPLE, _ENHANCED = 0x0A0D0D0A, 1, 3, 6  # pcapng block types
_BYTE_ORDER_MAGIC = 0x1A2B3C4D
_TSRESOL, _TSOFFSET = 9, 14  # interface description options
EN10MB, RAW, LINUX_SLL, LINUX_SLL2 = 1, 101, 113, 276
_LINKS = frozenset({EN10MB, RAW, LINUX_SLL, LINUX_SLL2})
_IPV4, _IPV6, _VLAN_TAGS = 0x0800, 0x86DD, frozenset({0x8100, 0x88A8, 0x9100})
_IPV6_EXTENSIONS = frozenset({0, 43, 60})  # hop-by-hop, routing, destination options
_UDP, _IPV6_FRAGMENT = 17, 44
_BLOCK = 1 << 22

Datagram = tuple[float, str, int, int, bytes]
"""(timestamp, source IP text, source port, destination port, UDP payload)."""
Frame = tuple[float, int, bytes]
"""(timestamp, link type, captured bytes) of one packet record."""


def read_udp_payloads(path: str | Path, skipped: Counter[str] | None = None,
                      ) -> Iterator[Datagram]:
    """Every UDP datagram of the capture in file order. Packets that are not IP
    (``not_ip``), not UDP (``not_udp``), IP fragments (``fragment``), cut short by the
    snap length (``truncated``) or of a link type not read (``unsupported_link``) are
    skipped and counted in ``skipped``; a file that ends inside a record counts
    ``cut_short`` (once) and ends there."""
    skipped = Counter() if skipped is None else skipped
    for at, link, data in read_frames(path, skipped):
        found = _udp(link, data)
        if isinstance(found, str):
            skipped[found] += 1
        else:
            yield (at, *found)


def read_frames(path: str | Path, skipped: Counter[str]) -> Iterator[Frame]:
    """The packet records of a pcap or pcapng file; a file of neither kind, or a pcap of a
    link type not read, is a ValueError naming ``path``."""
    with open(path, "rb") as stream:
        head = stream.read(4)
        if len(head) < 4:
            raise ValueError(f"{path}: not a pcap or pcapng file (too short)")
        magic = struct.unpack("<I", head)[0]
        if magic == _SECTION:
            yield from _pcapng(stream, skipped)
        elif magic in _MAGICS:
            yield from _pcap(path, stream, magic, skipped)
        else:
            raise ValueError(f"{path}: not a pcap or pcapng file (magic {magic:#010x})")


def _pcap(path: str | Path, stream: BinaryIO, magic: int, skipped: Counter[str]
          ) -> Iterator[Frame]:
    order, ticks = _MAGICS[magic]
    head = stream.read(20)
    if len(head) < 20:
        skipped["cut_short"] += 1
        return
    link = struct.unpack(order + "I", head[16:20])[0] & 0xFFFF
    if link not in _LINKS:
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
        yield seconds + fraction / ticks, link, data
    if len(block) > at:  # the capture ends inside a record
        skipped["cut_short"] += 1


class _Interface:
    """What a pcapng interface description says about its packets."""

    def __init__(self, link: int, snaplen: int, options: dict[int, bytes], order: str) -> None:
        self.link, self.snaplen = link, snaplen
        resolution = options.get(_TSRESOL, b"\x06")[0]
        self.ticks = 2 ** (resolution & 0x7F) if resolution & 0x80 else 10 ** resolution
        offset = options.get(_TSOFFSET)
        self.offset = struct.unpack(order + "q", offset)[0] if offset and len(offset) == 8 else 0


def _pcapng(stream: BinaryIO, skipped: Counter[str]) -> Iterator[Frame]:
    """The packet records of a pcapng file whose section header magic has been read."""
    order, interfaces, last = "<", list[_Interface](), 0.0
    block_type = _SECTION
    while True:
        if block_type == _SECTION:  # the byte order is the section's: read it first
            head = stream.read(8)
            if len(head) < 8:
                skipped["cut_short"] += 1
                return
            order = "<" if struct.unpack("<I", head[4:])[0] == _BYTE_ORDER_MAGIC else ">"
            length = struct.unpack(order + "I", head[:4])[0]
            body = head[4:] + stream.read(length - 16) if length >= 16 else b""
            interfaces = []
        else:
            raw = stream.read(4)
            if len(raw) < 4:
                skipped["cut_short"] += 1
                return
            length = struct.unpack(order + "I", raw)[0]
            body = stream.read(length - 12) if length >= 12 else b""
        trailer = stream.read(4)
        if length < 12 or len(body) < length - 12 or len(trailer) < 4:
            skipped["cut_short"] += 1
            return
        if block_type == _INTERFACE and len(body) >= 8:
            link, _, snaplen = struct.unpack_from(order + "HHI", body)
            interfaces.append(_Interface(link, snaplen, _options(body[8:], order), order))
        elif block_type == _ENHANCED and len(body) >= 20:
            index, high, low, captured, _ = struct.unpack_from(order + "IIIII", body)
            if index < len(interfaces):
                interface = interfaces[index]
                last = (high << 32 | low) / interface.ticks + interface.offset
                frame = _frame(interface, body[20:20 + captured], skipped)
                if frame is not None:
                    yield last, interface.link, frame
        elif block_type == _SIMPLE and len(body) >= 4 and interfaces:
            # no timestamp: the previous packet's; captured is the rest, up to the snap length
            interface, original = interfaces[0], struct.unpack_from(order + "I", body)[0]
            frame = _frame(interface, body[4:4 + min(original, interface.snaplen or original)],
                           skipped)
            if frame is not None:
                yield last, interface.link, frame
        raw = stream.read(4)
        if not raw:
            return
        if len(raw) < 4:
            skipped["cut_short"] += 1
            return
        block_type = struct.unpack(order + "I", raw)[0]


def _frame(interface: _Interface, data: bytes, skipped: Counter[str]) -> bytes | None:
    if interface.link in _LINKS:
        return data
    skipped["unsupported_link"] += 1
    return None


def _options(raw: bytes, order: str) -> dict[int, bytes]:
    """A block's options (code -> value), up to opt_endofopt."""
    found, offset = {}, 0
    while offset + 4 <= len(raw):
        code, length = struct.unpack_from(order + "HH", raw, offset)
        if code == 0:
            break
        found[code] = raw[offset + 4:offset + 4 + length]
        offset += 4 + (length + 3) // 4 * 4
    return found


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

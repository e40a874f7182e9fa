"""Classic libpcap files of UDP datagrams (sFlow as a collector would capture it), for tshark
and for fabcorr's pcap reader (``correlator/sflow/pcap.py``)."""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Iterable
from pathlib import Path

from simulator.roce import frame

SFLOW_PORT = 6343
AGENT_PORT = 50343
"""UDP source port of the datagrams (agents send from an ephemeral port)."""
_AGENT_MAC, _COLLECTOR_MAC = bytes.fromhex("020000000a01"), bytes.fromhex("020000000c01")
_MAGIC, _SNAPLEN, _DLT_EN10MB = 0xA1B2C3D4, 262144, 1


def write_pcap(path: str | Path, packets: Iterable[tuple[float, bytes, str, str, int]],
               *, sport: int = AGENT_PORT) -> int:
    """Write ``(timestamp, udp_payload, src_ip, dst_ip, dst_port)`` packets as Ethernet /
    IPv4 or IPv6 / UDP (checksummed) frames, microsecond timestamps; returns the count."""
    count = 0
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", _MAGIC, 2, 4, 0, 0, _SNAPLEN, _DLT_EN10MB))
        for timestamp, payload, src, dst, dport in packets:
            data = frame(_AGENT_MAC, _COLLECTOR_MAC, ipaddress.ip_address(src).packed,
                         ipaddress.ip_address(dst).packed, payload, sport=sport, dport=dport,
                         dscp=0, ecn=0, udp_checksum=True)
            seconds, micros = divmod(round(timestamp * 1_000_000), 1_000_000)
            out.write(struct.pack("<IIII", seconds, micros, len(data), len(data)) + data)
            count += 1
    return count

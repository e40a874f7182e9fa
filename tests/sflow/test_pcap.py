"""pcap files: the simulator's writer and fabcorr's reader (correlator/sflow/pcap.py);
pcapng in test_pcapng.py.

``data/tshark-any-sll*.pcap`` are real ``tshark -i any -y LINUX_SLL[2] -F pcap`` captures
of two UDP datagrams to 127.0.0.1:6343 (8 and 3000 bytes), one to [::1]:6343 and a
refused TCP connection (SYN, RST).
"""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import pytest

from correlator.sflow.pcap import read_udp_payloads
from simulator.pcap import write_pcap
from simulator.roce import frame

DATA = Path(__file__).parent / "data"
MAC = bytes(6)
V4A, V4B = bytes([192, 0, 2, 1]), bytes([192, 0, 2, 9])
V6A, V6B = bytes.fromhex("20010db8" + "0" * 23 + "1"), bytes.fromhex("20010db8" + "0" * 23 + "9")


def _sum16(data: bytes) -> int:
    data += bytes(len(data) % 2)
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def _pcap(path: Path, link: int, frames: list[bytes], *, order: str = "<",
          nanos: bool = False, captured: int | None = None) -> Path:
    magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
    with open(path, "wb") as out:
        out.write(struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, link))
        for i, data in enumerate(frames):
            cut = data[:captured] if captured is not None else data
            out.write(struct.pack(order + "IIII", 100 + i, 250_000_000 if nanos else 250_000,
                                  len(cut), len(data)) + cut)
    return path


def _read(path: Path) -> tuple[list[tuple], Counter]:
    skipped: Counter = Counter()
    return list(read_udp_payloads(path, skipped)), skipped


def test_written_frames_read_back_with_valid_checksums(tmp_path):
    path = tmp_path / "w.pcap"
    assert write_pcap(path, [(1_700_000_000.123456, b"sflow-v4", "192.0.2.1", "192.0.2.9", 6343),
                             (1_700_000_001.5, b"sflow-v6!", "2001:db8::1", "2001:db8::9", 9999)],
                      ) == 2
    raw = path.read_bytes()
    assert raw[:24] == struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)
    assert _read(path) == ([(1_700_000_000.123456, "192.0.2.1", 50343, 6343, b"sflow-v4"),
                            (1_700_000_001.5, "2001:db8::1", 50343, 9999, b"sflow-v6!")],
                           Counter())
    first = raw[24 + 16:24 + 16 + 14 + 20 + 8 + 8]
    ip, udp = first[14:34], first[34:]
    assert _sum16(ip) == 0xFFFF
    assert _sum16(ip[12:20] + struct.pack("!BBH", 0, 17, len(udp)) + udp) == 0xFFFF
    second = raw[24 + 16 + len(first) + 16:]
    ip6, udp6 = second[14:54], second[54:]
    assert len(udp6) == 8 + 9
    assert _sum16(ip6[8:40] + struct.pack("!IxxxB", len(udp6), 17) + udp6) == 0xFFFF


@pytest.mark.parametrize(("order", "nanos"), [("<", False), (">", False), ("<", True),
                                              (">", True)])
def test_either_byte_order_and_timestamp_resolution(tmp_path, order, nanos):
    data = frame(MAC, MAC, V4A, V4B, b"payload", sport=1111, dport=6343, udp_checksum=True)
    path = _pcap(tmp_path / "o.pcap", 1, [data], order=order, nanos=nanos)
    assert _read(path) == ([(100.25, "192.0.2.1", 1111, 6343, b"payload")], Counter())


def test_vlan_tags_raw_ip_and_cooked_headers(tmp_path):
    tagged = frame(MAC, MAC, V6A, V6B, b"in-vlan", sport=1, dport=6343, vlan=30)
    qinq = tagged[:12] + struct.pack("!HH", 0x88A8, 5) + tagged[12:]
    ip_packet = frame(MAC, MAC, V4A, V4B, b"cooked", sport=2, dport=6343)[14:]
    sll = struct.pack("!HHH8sH", 0, 772, 6, bytes(8), 0x0800) + ip_packet
    sll2 = struct.pack("!HHIHBB8s", 0x0800, 0, 1, 772, 0, 6, bytes(8)) + ip_packet
    assert _read(_pcap(tmp_path / "e.pcap", 1, [tagged, qinq]))[0] == [
        (100.25, "2001:db8::1", 1, 6343, b"in-vlan"), (101.25, "2001:db8::1", 1, 6343, b"in-vlan")]
    for link, packet in ((101, ip_packet), (113, sll), (276, sll2)):
        assert _read(_pcap(tmp_path / f"{link}.pcap", link, [packet]))[0] == [
            (100.25, "192.0.2.1", 2, 6343, b"cooked")]


def test_real_tshark_cooked_captures():
    for name, (v4_port, v6_port) in {"tshark-any-sll.pcap": (47671, 52074),
                                     "tshark-any-sll2.pcap": (59663, 47576)}.items():
        got, skipped = _read(DATA / name)
        assert [(src, sport, dport, payload[:8], len(payload))
                for _, src, sport, dport, payload in got] == [
            ("127.0.0.1", v4_port, 6343, b"hello-v4", 8),
            ("::1", v6_port, 6343, b"hello-v6", 8),
            ("127.0.0.1", v4_port, 6343, b"x" * 8, 3000),
        ]
        assert skipped == Counter(not_udp=2)


def test_fragments_non_udp_non_ip_and_truncated_packets_are_counted(tmp_path):
    good = frame(MAC, MAC, V4A, V4B, b"ok", sport=3, dport=6343)
    more_fragments = good[:20] + b"\x20\x00" + good[22:]  # MF set, offset 0
    later_fragment = good[:20] + b"\x00\x10" + good[22:]  # offset 16 bytes
    v6 = frame(MAC, MAC, V6A, V6B, b"frag", sport=3, dport=6343)
    v6_fragment = (v6[:20] + b"\x2c" + v6[21:54]  # next header 44
                   + struct.pack("!BBHI", 17, 0, 1, 7) + v6[54:])
    tcp = good[:23] + b"\x06" + good[24:]
    arp = MAC + MAC + b"\x08\x06" + bytes(28)
    path = _pcap(tmp_path / "s.pcap", 1,
                 [more_fragments, later_fragment, v6_fragment, tcp, arp, good])
    assert _read(path) == ([(105.25, "192.0.2.1", 3, 6343, b"ok")],
                           Counter(fragment=3, not_udp=1, not_ip=1))
    short = _pcap(tmp_path / "t.pcap", 1, [good], captured=len(good) - 1)
    assert _read(short) == ([], Counter(truncated=1))


def test_ipv6_extension_headers_are_walked(tmp_path):
    v6 = frame(MAC, MAC, V6A, V6B, b"hop", sport=4, dport=6343)
    hop_by_hop = struct.pack("!BB6x", 17, 0)
    payload_length = struct.unpack("!H", v6[18:20])[0] + 8
    packet = (v6[:18] + struct.pack("!H", payload_length) + b"\x00" + v6[21:54]
              + hop_by_hop + v6[54:])
    assert _read(_pcap(tmp_path / "h.pcap", 1, [packet]))[0] == [
        (100.25, "2001:db8::1", 4, 6343, b"hop")]


def test_unknown_link_types_are_refused_and_a_cut_section_header_counted(tmp_path):
    pcapng = tmp_path / "f.pcapng"  # a section header block whose length runs past the end
    pcapng.write_bytes(struct.pack("<III", 0x0A0D0D0A, 28, 0x1A2B3C4D) + bytes(8))
    assert _read(pcapng) == ([], Counter(cut_short=1))
    with pytest.raises(ValueError, match="link type 105"):
        list(read_udp_payloads(_pcap(tmp_path / "wifi.pcap", 105, [])))

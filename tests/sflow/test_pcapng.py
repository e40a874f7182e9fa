"""pcapng read natively (correlator/sflow/pcap.py), checked against tshark's reading of the
same files: captures written by dumpcap, editcap and mergecap (several interfaces of
different link types, nanosecond timestamps), and hand-built blocks for what those tools do
not write on this machine (a big-endian section, simple packet blocks), which tshark reads
too. Files are told apart by their contents, never by their names."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from correlator.sflow.pcap import read_udp_payloads
from simulator.roce import frame
from tests.tools import require

DATA = Path(__file__).parent / "data"
SLL, SLL2 = DATA / "tshark-any-sll.pcap", DATA / "tshark-any-sll2.pcap"
MAC = bytes(6)


def ours(path: Path) -> tuple[list[tuple[float, str, int, int, bytes]], Counter]:
    skipped: Counter = Counter()
    return list(read_udp_payloads(path, skipped)), skipped


def tsharks(path: Path) -> list[tuple[float | None, str, int, int, bytes]]:
    """The UDP datagrams of ``path`` as tshark reads them (time None: a packet without)."""
    done = subprocess.run(
        [require("tshark", "tshark"), "-n", "-r", str(path), "-Y", "udp", "-T", "fields",
         "-E", "separator=|", "-e", "frame.time_epoch", "-e", "ip.src", "-e", "ipv6.src",
         "-e", "udp.srcport", "-e", "udp.dstport", "-e", "udp.payload"],
        capture_output=True, text=True, check=True, timeout=120)
    found = []
    for line in done.stdout.splitlines():
        at, v4, v6, sport, dport, payload = line.split("|")
        found.append((float(at) if at else None, v4 or v6, int(sport), int(dport),
                      bytes.fromhex(payload)))
    return found


def tool(name: str, *args: str) -> None:
    subprocess.run([require(name, "tshark"), *args], check=True, capture_output=True,
                   timeout=120)


def same(got: list[tuple], expected: list[tuple]) -> None:
    assert [g[1:] for g in got] == [e[1:] for e in expected]
    assert [g[0] for g in got] == pytest.approx([e[0] for e in expected], abs=1e-6, rel=0)


def test_editcap_pcapng_reads_as_its_pcap_and_as_tshark_reads_it(tmp_path):
    for source in (SLL, SLL2):
        converted = tmp_path / f"{source.stem}.pcapng"
        tool("editcap", "-F", "pcapng", str(source), str(converted))
        assert converted.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
        got, skipped = ours(converted)
        assert (got, skipped) == ours(source)
        assert len(got) == 3 and skipped == Counter(not_udp=2)
        same(got, tsharks(converted))


def test_several_interfaces_of_different_link_types(tmp_path):
    merged = tmp_path / "merged.pcapng"  # mergecap: one interface per input file
    tool("mergecap", "-F", "pcapng", "-w", str(merged), str(SLL), str(SLL2))
    got, skipped = ours(merged)
    assert len(got) == 6 and skipped == Counter(not_udp=4)
    assert got == sorted(ours(SLL)[0] + ours(SLL2)[0])
    same(got, tsharks(merged))


def test_nanosecond_timestamps(tmp_path):
    nanos, converted = tmp_path / "n.pcap", tmp_path / "n.pcapng"
    tool("editcap", "-F", "nsecpcap", str(SLL), str(nanos))
    tool("editcap", "-F", "pcapng", str(nanos), str(converted))
    got, _ = ours(converted)
    same(got, tsharks(converted))
    assert [g[0] for g in got] == [g[0] for g in ours(SLL)[0]]


def test_recognised_by_contents_whatever_the_file_is_called(tmp_path):
    disguised = tmp_path / "capture.pcap"
    tool("editcap", "-F", "pcapng", str(SLL), str(disguised))
    classic = tmp_path / "capture.pcapng"
    classic.write_bytes(SLL.read_bytes())
    assert ours(disguised) == ours(classic) == ours(SLL)
    other = tmp_path / "notes.pcapng"
    other.write_text("hello, not a capture\n")
    with pytest.raises(ValueError, match=r"notes.pcapng: not a pcap or pcapng file \(magic "
                       r"0x6c6c6568\)"):
        list(read_udp_payloads(other))


def _block(order: str, kind: int, body: bytes) -> bytes:
    body += bytes(-len(body) % 4)
    return struct.pack(order + "II", kind, len(body) + 12) + body + struct.pack(
        order + "I", len(body) + 12)


def _section(order: str, interfaces: list[tuple[int, int, bytes]], packets: list[bytes]
             ) -> bytes:
    """A pcapng section in byte order ``order``: interfaces (link, snap length, options)
    and packet blocks already built."""
    out = _block(order, 0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    for link, snaplen, options in interfaces:
        out += _block(order, 1, struct.pack(order + "HHI", link, 0, snaplen) + options)
    return out + b"".join(packets)


def _option(order: str, code: int, value: bytes) -> bytes:
    return struct.pack(order + "HH", code, len(value)) + value + bytes(-len(value) % 4)


def _enhanced(order: str, interface: int, ticks: int, data: bytes) -> bytes:
    return _block(order, 6, struct.pack(order + "IIIII", interface, ticks >> 32,
                                        ticks & 0xFFFFFFFF, len(data), len(data)) + data)


def test_big_endian_sections_and_simple_packet_blocks(tmp_path):
    v4 = frame(MAC, MAC, bytes([192, 0, 2, 1]), bytes([192, 0, 2, 9]), b"big-endian", sport=7,
               dport=6343, udp_checksum=True)
    raw = frame(MAC, MAC, bytes([192, 0, 2, 2]), bytes([192, 0, 2, 9]), b"raw-ip", sport=8,
                dport=6343, udp_checksum=True)[14:]
    millis = _option(">", 9, b"\x03") + _option(">", 0, b"")
    big = _section(">", [(1, 0, b""), (101, 65535, millis)], [
        _enhanced(">", 1, 1_700_000_000_250, raw),  # interface 1: raw IP, milliseconds
        _block(">", 3, struct.pack(">I", len(v4)) + v4),  # simple: interface 0, no time
        _enhanced(">", 0, 1_700_000_001_500_000, v4)])  # Ethernet, microseconds
    little = _section("<", [(1, 65535, b"")], [_enhanced("<", 0, 1_700_000_002_000_000, v4)])
    path = tmp_path / "mixed.pcapng"
    path.write_bytes(big + little)
    got, skipped = ours(path)
    assert skipped == Counter()
    assert [g[1:] for g in got] == [("192.0.2.2", 8, 6343, b"raw-ip"),
                                    *[("192.0.2.1", 7, 6343, b"big-endian")] * 3]
    # the simple packet block has no time of its own: the packet before it gives it one
    assert [g[0] for g in got] == [1_700_000_000.25, 1_700_000_000.25, 1_700_000_001.5,
                                   1_700_000_002.0]
    expected = tsharks(path)  # tshark gives the simple block no time: compare the rest
    assert [e[1:] for e in expected] == [g[1:] for g in got]
    assert [e[0] for e in expected[:1] + expected[2:]] == pytest.approx(
        [got[0][0], *[g[0] for g in got[2:]]], abs=1e-6, rel=0)


def test_a_capture_cut_short_counts_once_and_keeps_what_came_before(tmp_path):
    converted = tmp_path / "c.pcapng"
    tool("editcap", "-F", "pcapng", str(SLL), str(converted))
    whole = converted.read_bytes()
    full, _ = ours(converted)
    for cut, kept in ((3, 3), (3200, 2)):  # a cut in the last block, then in the third
        short = tmp_path / f"short{cut}.pcapng"
        short.write_bytes(whole[:-cut])
        got, skipped = ours(short)
        assert skipped["cut_short"] == 1
        assert got == full[:kept]
    classic = tmp_path / "short.pcap"
    classic.write_bytes(SLL.read_bytes()[:-5])
    got, skipped = ours(classic)
    assert skipped["cut_short"] == 1 and got == ours(SLL)[0][:len(got)]


def test_dumpcap_writes_pcapng_that_reads_as_tshark_reads_it(tmp_path):
    dumpcap = require("dumpcap", "tshark")
    if os.geteuid() != 0:
        print("skipped: dumpcap on lo needs root")
        pytest.skip("dumpcap on lo needs root")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
        sink.bind(("127.0.0.1", 0))
        port = sink.getsockname()[1]
        path = tmp_path / "live"  # no suffix: dumpcap writes pcapng by default
        capture = subprocess.Popen(
            [dumpcap, "-q", "-i", "lo", "-f", f"udp dst port {port}", "-c", "3", "-w",
             str(path)], stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
                number = 0
                while capture.poll() is None and time.monotonic() < deadline:
                    sender.sendto(f"datagram-{number}".encode(), ("127.0.0.1", port))
                    number += 1
                    time.sleep(0.05)  # pacing only: dumpcap's exit ends the loop
            assert capture.wait(30) == 0, capture.stderr.read()
        finally:
            if capture.poll() is None:
                capture.kill()
                capture.wait()
    assert path.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    got, skipped = ours(path)
    assert len(got) == 3 and skipped == Counter()
    assert all(g[1:3] != ("", 0) and g[3] == port for g in got)
    same(got, tsharks(path))

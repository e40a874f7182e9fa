"""The sFlow v5 encoder byte by byte, at the offsets of REFERENCE §6."""

from __future__ import annotations

import struct

import pytest

from simulator import sflow_wire as w


def _words(data: bytes) -> list[int]:
    return list(struct.unpack(f"!{len(data) // 4}I", data))


def test_interface_values_carry_the_format_in_the_top_two_bits():
    assert (w.ifindex(5), w.dropped(259), w.multiple(3), w.UNKNOWN) == (
        5, 0x40000103, 0x80000003, 0x3FFFFFFF)
    with pytest.raises(ValueError, match="30 bits"):
        w.ifindex(1 << 30)


def test_opaques_are_padded_to_four_bytes():
    assert w.opaque(b"abc") == bytes.fromhex("00000003 61626300")
    assert w.opaque(b"") == bytes(4)
    assert w.Raw(w.data_format(4413, 5), b"\x01").encode() == bytes.fromhex(
        "0113d005 00000001 01000000")


def test_datagram_header_for_ipv4_and_ipv6_agents():
    v4 = w.Datagram("192.0.2.1", 3, 0xFFFFFFFF, 1 << 32 | 7, []).encode()
    assert v4 == bytes.fromhex("00000005 00000001 c0000201 00000003 ffffffff 00000007 00000000")
    v6 = w.Datagram("2001:db8::1", 0, 2, 9, [b"\x00\x00\x00\x63\x00\x00\x00\x00"]).encode()
    assert v6 == bytes.fromhex(
        "00000005 00000002 20010db8000000000000000000000001 00000000 00000002 00000009"
        "00000001 00000063 00000000")


def test_compact_flow_sample_layout():
    sample = w.FlowSample(seq=9, source_index=7, sampling_rate=4096, sample_pool=40960,
                          drops=2, input=w.ifindex(7), output=w.dropped(259),
                          header=b"\xaa" * 6, frame_length=64, source_type=1,
                          extended_switch=(100, 3, 200, 5), egress_queue=6).encode()
    assert _words(sample) == [
        1, len(sample) - 8,
        9, 1 << 24 | 7, 4096, 40960, 2, 7, 0x40000103, 3,  # @0 ... @28 n
        1, 24, 1, 64, 4, 6, 0xAAAAAAAA, 0xAAAA0000,  # sampled header, padded
        1001, 16, 100, 3, 200, 5,
        1036, 4, 6,
    ]


def test_expanded_flow_sample_splits_source_and_interfaces():
    sample = w.FlowSample(seq=1, source_index=1 << 25, sampling_rate=1, sample_pool=1,
                          drops=0, input=w.UNKNOWN, output=w.multiple(4), header=b"",
                          frame_length=64, stripped=0, header_protocol=w.IPV4,
                          expanded=True).encode()
    assert _words(sample) == [3, len(sample) - 8, 1, 0, 1 << 25, 1, 1, 0, 0, 0x3FFFFFFF, 2, 4,
                              1, 1, 16, 11, 64, 0, 0]


def test_compact_samples_refuse_sources_beyond_24_bits():
    with pytest.raises(ValueError, match="expanded"):
        w.FlowSample(1, 1 << 24, 1, 1, 0, 0, 0, b"", 64).encode()
    with pytest.raises(ValueError, match="expanded"):
        w.CounterSample(1, 1 << 24).encode()


def test_extra_records_go_last_or_first():
    extra = (w.Raw(1999, b"wxyz"),)
    last = w.FlowSample(1, 1, 1, 1, 0, 0, 0, b"", 64, extra_records=extra).encode()
    first = w.FlowSample(1, 1, 1, 1, 0, 0, 0, b"", 64, extra_records=extra,
                         extra_first=True).encode()
    header_record = struct.pack("!6I", 1, 16, 1, 64, 4, 0)
    unknown = bytes.fromhex("000007cf 00000004") + b"wxyz"
    assert last[36:] == struct.pack("!I", 2) + header_record + unknown
    assert first[36:] == struct.pack("!I", 2) + unknown + header_record


def test_if_counters_record_is_88_bytes_at_the_reference_offsets():
    counters = w.IfCounters(ifindex=7, if_type=6, speed=400 * 10**9, direction=1, status=3,
                            in_octets=1 << 40, in_ucast=1, in_mcast=2, in_bcast=3,
                            in_discards=4, in_errors=5, in_unknown=6, out_octets=(1 << 63) + 1,
                            out_ucast=7, out_mcast=8, out_bcast=9, out_discards=10,
                            out_errors=11, promiscuous=1).encode()
    assert counters[:8] == bytes.fromhex("00000001 00000058")
    body = counters[8:]
    assert len(body) == 88
    assert struct.unpack_from("!IIQII", body, 0) == (7, 6, 400 * 10**9, 1, 3)
    assert struct.unpack_from("!Q6I", body, 24) == (1 << 40, 1, 2, 3, 4, 5, 6)
    assert struct.unpack_from("!Q6I", body, 56) == ((1 << 63) + 1, 7, 8, 9, 10, 11, 1)


def test_counter_samples_compact_and_expanded():
    ethernet = tuple(range(1, 14))
    compact = w.CounterSample(4, 7, None, ethernet, source_type=0).encode()
    assert _words(compact) == [2, len(compact) - 8, 4, 7, 1, 2, 52, *ethernet]
    expanded = w.CounterSample(4, 1 << 25, w.IfCounters(7), None, expanded=True).encode()
    assert _words(expanded)[:7] == [4, len(expanded) - 8, 4, 0, 1 << 25, 1, 1]
    assert len(expanded) == 8 + 16 + 8 + 88
    with pytest.raises(ValueError, match="13"):
        w.CounterSample(1, 1, None, (1, 2)).encode()


def test_discard_sample_layout_per_sflow_drops():
    sample = w.DiscardSample(seq=5, source_index=7, drops=1, input=7, output=0, reason=259,
                             header=b"\x01\x02\x03\x04", frame_length=68, source_type=0).encode()
    assert _words(sample) == [
        5, len(sample) - 8,
        5, 0, 7, 1, 7, 0, 259, 1,  # @0 seq @4 src_type @8 src_index @12 drops ... @28 n
        1, 20, 1, 68, 4, 4, 0x01020304,
    ]

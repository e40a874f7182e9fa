"""The decoder against the simulator's independent encoder, and every reject reason."""

import ipaddress
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.sflow.decode import Decoder
from correlator.sflow.records import (
    CounterSample,
    DiscardSample,
    FlowSample,
    InterfaceCounters,
    discard_reason,
    ifindex,
)
from simulator import roce, sflow_wire
from simulator.sflow_wire import UNKNOWN, Datagram, IfCounters, Raw

SRC, DST = ipaddress.ip_address("10.101.0.2").packed, ipaddress.ip_address("10.101.0.3").packed
MAC = bytes.fromhex("020000000001")


def _frame(opcode=roce.WRITE_ONLY, qp=0x12345, psn=77, vlan=None, src=SRC, dst=DST):
    return roce.frame(MAC, MAC, src, dst, roce.payload(opcode, qp, psn, 4096), vlan=vlan)


def _flow(seq=1, frame=None, **fields):
    frame = frame if frame is not None else _frame()
    values = {"seq": seq, "source_index": 5, "sampling_rate": 4000, "sample_pool": 4000 * seq,
              "drops": 0, "input": sflow_wire.ifindex(5), "output": sflow_wire.ifindex(9),
              "header": frame[:128], "frame_length": len(frame) + 4, **fields}
    return sflow_wire.FlowSample(**values)


def _decode(*samples, agent="192.0.2.10"):
    decoder = Decoder()
    return decoder, decoder.decode(Datagram(agent, 3, 41, 123456, list(samples)).encode())


def test_a_compact_flow_sample_of_a_roce_write():
    decoder, datagram = _decode(_flow(extended_switch=(100, 3, 200, 3)))
    assert (datagram.agent, datagram.sub_agent, datagram.seq, datagram.uptime_ms) == (
        bytes([192, 0, 2, 10]), 3, 41, 123456)
    (sample,) = datagram.samples
    assert (sample.seq, sample.source_type, sample.source_index, sample.sampling_rate,
            sample.sample_pool, ifindex(sample.input), ifindex(sample.output),
            sample.frame_length, sample.stripped, sample.src_vlan, sample.dst_vlan) == (
        1, 0, 5, 4000, 4000, 5, 9, 4096 + 14 + 20 + 8 + 12 + 16 + 4 + 4, 4, 100, 200)
    p = sample.packet
    assert (p.traffic, p.ip_version, p.src_ip, p.dst_ip, p.dscp, p.ecn, p.src_port,
            p.dst_port, p.opcode, p.dest_qp, p.psn, p.becn, p.vlan) == (
        "roce-write", 4, SRC, DST, 26, 2, 49152, 4791, 0x0A, 0x12345, 77, False, -1)
    assert decoder.rejects == {} and decoder.samples == {"flow": 1}


@pytest.mark.parametrize(("opcode", "traffic"), [
    (roce.SEND_ONLY, "roce-send"), (roce.WRITE_FIRST, "roce-write"),
    (roce.READ_REQUEST, "roce-read-request"), (roce.READ_RESPONSE_ONLY, "roce-read-response"),
    (roce.ACK, "roce-ack"), (roce.CNP, "roce-cnp"), (0x64, "roce-send"),
    (0x2A, "roce-write")])
def test_bth_opcodes_give_the_traffic_class(opcode, traffic):
    _, datagram = _decode(_flow(frame=_frame(opcode)))
    packet = datagram.samples[0].packet
    assert (packet.traffic, packet.opcode) == (traffic, opcode)
    assert packet.becn is (opcode == roce.CNP)


def test_expanded_samples_vlan_tags_ipv6_agent_and_ipv6_packets():
    src6, dst6 = (ipaddress.ip_address(a).packed for a in ("fd00::2", "fd00::3"))
    frame = _frame(vlan=301, src=src6, dst=dst6)
    _, datagram = _decode(_flow(frame=frame, expanded=True, source_index=1 << 25,
                                input=UNKNOWN, output=sflow_wire.multiple(3)), agent="fd00::1")
    assert datagram.agent == ipaddress.ip_address("fd00::1").packed
    (sample,) = datagram.samples
    assert (sample.source_index, ifindex(sample.input), sample.output >> 30,
            sample.output & UNKNOWN) == (1 << 25, 0, 2, 3)
    p = sample.packet
    assert (p.ip_version, p.src_ip, p.dst_ip, p.vlan, p.dest_qp) == (6, src6, dst6, 301, 0x12345)


def test_non_roce_traffic_is_classified_too():
    udp = roce.frame(MAC, MAC, SRC, DST, b"x" * 40, dport=53)
    tcp = udp[:23] + b"\x06" + udp[24:]
    arp = MAC + MAC + b"\x08\x06" + bytes(28)
    _, datagram = _decode(*(_flow(frame=f) for f in (udp, tcp, arp)))
    assert [s.packet.traffic for s in datagram.samples] == ["udp", "tcp", "non-ip"]


def test_counter_and_discard_samples():
    counters = IfCounters(ifindex=5, if_type=6, speed=400_000_000_000, direction=1, status=3,
                          in_octets=1 << 40, in_ucast=7, in_mcast=0, in_bcast=0,
                          in_discards=2, in_errors=0, in_unknown=0, out_octets=99,
                          out_ucast=1, out_mcast=0, out_bcast=0, out_discards=4,
                          out_errors=0, promiscuous=0)
    _, datagram = _decode(
        sflow_wire.CounterSample(7, 5, counters, tuple(range(13))),
        sflow_wire.DiscardSample(8, 5, 2, sflow_wire.ifindex(5), sflow_wire.dropped(259),
                                 259, _frame()[:128], 4178))
    ctr, drop = datagram.samples
    assert isinstance(ctr, CounterSample) and isinstance(drop, DiscardSample)
    assert ctr.interface == InterfaceCounters(5, 6, 400_000_000_000, 1, 3, 1 << 40, 7, 0, 0,
                                              2, 0, 0, 99, 1, 0, 0, 4, 0, 0)
    assert ctr.interface.oper_up and ctr.ethernet == tuple(range(13))
    assert (drop.reason, discard_reason(drop.reason), drop.frame_length, drop.drops) == (
        259, "no_buffer_space", 4178, 2)
    assert drop.packet.traffic == "roce-write"


def test_unknown_formats_are_skipped_by_length_and_counted():
    decoder, datagram = _decode(
        Raw(sflow_wire.data_format(4413, 7), b"\x01" * 12),
        _flow(extra_records=(Raw(sflow_wire.data_format(0, 1036), struct.pack("!I", 3)),),
              extra_first=True))
    assert [type(s) for s in datagram.samples] == [FlowSample]
    assert datagram.samples[0].packet.dest_qp == 0x12345
    assert decoder.skipped == {"sample/4413:7": 1, "record/0:1036": 1}


def _good():
    return Datagram("192.0.2.10", 0, 1, 1, [_flow(), _flow(2)]).encode()


@pytest.mark.parametrize(("data", "reason"), [
    (b"\x00\x00\x00\x05" * 3, "short-datagram"),
    (b"\x00\x00\x00\x04" + _good()[4:], "bad-version"),
    (_good()[:4] + b"\x00\x00\x00\x07" + _good()[8:], "bad-agent-type"),
    (_good()[:4] + b"\x00\x00\x00\x02" + _good()[8:36], "short-datagram"),
    (_good()[:-9], "truncated-sample"),
])
def test_a_datagram_that_cannot_be_trusted_is_rejected_with_its_reason(data, reason):
    decoder = Decoder()
    result = decoder.decode(data)
    assert decoder.rejects == {reason: 1}
    assert result is None or len(result.samples) == 1  # a truncation keeps what came before


def test_a_record_running_past_its_sample_rejects_the_sample_only():
    good = _flow().encode()
    body_length = struct.unpack_from("!I", good, 4)[0]
    # the sampled-header record claims 8 bytes more than the sample holds
    at = 8 + 32
    record_length = struct.unpack_from("!I", good, at + 4)[0]
    bad = good[:at + 4] + struct.pack("!I", record_length + 8) + good[at + 8:]
    assert len(bad) == 8 + body_length
    decoder = Decoder()
    datagram = decoder.decode(Datagram("192.0.2.10", 0, 1, 1, [bad, _flow(2)]).encode())
    assert [s.seq for s in datagram.samples] == [2]
    assert decoder.rejects == {"truncated-record": 1}


def test_a_record_shorter_than_its_format_is_a_bad_record():
    short_switch = Raw(sflow_wire.data_format(0, 1001), b"\x00" * 8)
    decoder, datagram = _decode(_flow(extra_records=(short_switch,)))
    assert datagram.samples == [] and decoder.rejects == {"bad-record": 1}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(1, 2**24 - 1),
                          st.integers(1, 2**32 - 1), st.integers(0, 2**32 - 1),
                          st.integers(0, 0xFF), st.integers(0, 2**24 - 1),
                          st.integers(0, 2**24 - 1), st.booleans(),
                          st.one_of(st.none(), st.integers(1, 4094))), min_size=1, max_size=8))
def test_round_trip_through_the_encoder(samples):
    encoded = [_flow(seq, source_index=source, sampling_rate=rate, sample_pool=pool,
                     frame=_frame(opcode, qp, psn, vlan=vlan), expanded=expanded)
               for seq, source, rate, pool, opcode, qp, psn, expanded, vlan in samples]
    decoder, datagram = _decode(*encoded)
    assert decoder.rejects == {}
    assert [(s.seq, s.source_index, s.sampling_rate, s.sample_pool, s.packet.opcode,
             s.packet.dest_qp, s.packet.psn, s.packet.vlan) for s in datagram.samples] == [
        (seq, source, rate, pool, opcode, qp, 0 if opcode == roce.CNP else psn,
         -1 if vlan is None else vlan)
        for seq, source, rate, pool, opcode, qp, psn, _, vlan in samples]


def _sample(fmt: int, body: bytes) -> bytes:
    """A sample record of ``fmt`` around ``body`` as is (lengths the caller's to break)."""
    return struct.pack("!II", fmt, len(body)) + body


ZERO_RECORDS = {  # flow samples that carry no record at all: valid, if useless
    "expanded": _sample(sflow_wire.FLOW_EXPANDED,
                        struct.pack("!11I", 4, 0, 5, 100, 800, 0, 0, 5, 0, 9, 0)),
    "compact": _sample(sflow_wire.FLOW, struct.pack("!8I", 4, 5, 100, 800, 0, 5, 9, 0)),
}


@pytest.mark.parametrize("kind", sorted(ZERO_RECORDS))
def test_a_flow_sample_with_zero_records_is_accepted_and_its_truncated_copy_rejected(kind):
    whole = ZERO_RECORDS[kind]
    decoder, datagram = _decode(whole, _flow(9))
    assert [(s.seq, s.sampling_rate, s.sample_pool, ifindex(s.input), s.packet is None)
            for s in datagram.samples] == [(4, 100, 800, 5, True), (9, 4000, 36000, 5, False)]
    assert decoder.rejects == {} and decoder.samples == {"flow": 2}
    # the same bytes, declared one word shorter: the sample ends before its own fields do
    cut = struct.pack("!II", struct.unpack_from("!I", whole)[0], len(whole) - 12) + whole[8:-4]
    decoder, datagram = _decode(cut, _flow(9))
    assert [s.seq for s in datagram.samples] == [9]
    assert decoder.rejects == {"truncated-sample": 1} and decoder.samples == {"flow": 1}


COUNTERS = IfCounters(ifindex=5, speed=10**9, in_octets=1234, out_octets=99)


@pytest.mark.parametrize("expanded", [False, True], ids=["compact", "expanded"])
def test_a_counters_sample_shorter_than_its_fields_is_not_read_from_the_next_sample(expanded):
    whole = sflow_wire.CounterSample(7, 5, COUNTERS, expanded=expanded).encode()
    fmt = sflow_wire.COUNTERS_EXPANDED if expanded else sflow_wire.COUNTERS
    # seq and source only: the record count would be the next sample's format word
    short = _sample(fmt, whole[8:16])
    decoder, datagram = _decode(short, sflow_wire.CounterSample(8, 6, COUNTERS,
                                                                expanded=expanded))
    assert [(s.seq, s.interface.in_octets) for s in datagram.samples] == [(8, 1234)]
    assert decoder.rejects == {"truncated-sample": 1} and decoder.samples == {"counters": 1}
    # the whole sample decodes; cut inside its if_counters record, the record runs past it
    decoder, datagram = _decode(whole)
    assert [s.interface for s in datagram.samples] == [InterfaceCounters(
        5, 6, 10**9, 1, 3, 1234, 0, 0, 0, 0, 0, 0, 99, 0, 0, 0, 0, 0, 0)]
    decoder, datagram = _decode(_sample(fmt, whole[8:-8]), _flow(9))
    assert [s.seq for s in datagram.samples] == [9]
    assert decoder.rejects == {"truncated-record": 1}

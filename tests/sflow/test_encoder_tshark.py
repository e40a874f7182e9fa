"""The sFlow encoder (simulator/sflow_wire.py) checked field by field against tshark 4.0."""

from __future__ import annotations

import ipaddress
import struct
from typing import Any

import pytest

from simulator import roce
from simulator import sflow_wire as w
from simulator.pcap import write_pcap
from simulator.sflow_agent import SflowAgent
from tests.sflow.tshark import decode

MAC_A, MAC_B = bytes.fromhex("b26f1d045a11"), bytes.fromhex("7a03e19c4402")


def _packed(address: str) -> bytes:
    return ipaddress.ip_address(address).packed


def _roce(opcode: int, src: str, dst: str, qp: int, psn: int, length: int = 0, *,
          sport: int = 49152, dscp: int = roce.ROCE_DSCP, ecn: int = roce.ECT0,
          vlan: int | None = None, priority: int = 3) -> tuple[bytes, dict[str, Any]]:
    """A RoCEv2 frame and what tshark should read in its sampled header."""
    data = roce.frame(MAC_A, MAC_B, _packed(src), _packed(dst),
                      roce.payload(opcode, qp, psn, length), sport=sport, dscp=dscp, ecn=ecn,
                      vlan=vlan, priority=priority)
    return data, {"src_ip": src, "dst_ip": dst, "ip_protocol": 17, "src_port": sport,
                  "dst_port": roce.ROCE_PORT, "dscp": dscp, "ecn": ecn, "vlan": vlan,
                  "priority": None if vlan is None else priority,
                  "opcode": opcode, "dest_qp": qp, "psn": 0 if opcode == roce.CNP else psn}


def _udp(src: str, dst: str, dport: int) -> tuple[bytes, dict[str, Any]]:
    data = roce.frame(MAC_A, MAC_B, _packed(src), _packed(dst), b"not rdma" * 4, sport=40001,
                      dport=dport, dscp=0, ecn=0, vlan=20, priority=0)
    return data, {"src_ip": src, "dst_ip": dst, "ip_protocol": 17, "src_port": 40001,
                  "dst_port": dport, "dscp": 0, "ecn": 0, "vlan": 20, "priority": 0,
                  "opcode": None, "dest_qp": None, "psn": None}


def _tcp(src: str, dst: str) -> tuple[bytes, dict[str, Any]]:
    """An IPv4 TCP SYN (checksums left 0: tshark does not check them by default)."""
    tcp = struct.pack("!HHIIBBHHH", 51000, 22, 1000, 0, 5 << 4, 0x02, 64240, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0x10, 20 + len(tcp), 1, 0x4000, 64, 6, 0,
                     _packed(src), _packed(dst))
    data = MAC_B + MAC_A + b"\x08\x00" + ip + tcp
    return data, {"src_ip": src, "dst_ip": dst, "ip_protocol": 6, "src_port": 51000,
                  "dst_port": 22, "dscp": 4, "ecn": 0, "vlan": None, "priority": None,
                  "opcode": None, "dest_qp": None, "psn": None}


def _flow(seq: int, packet: tuple[bytes, dict[str, Any]], **fields: Any,
          ) -> tuple[w.FlowSample, dict[str, Any]]:
    """A flow sample of ``packet`` and every value tshark should decode from it."""
    data, header = packet
    sample = w.FlowSample(seq=seq, source_index=fields.pop("source_index", 7),
                          sampling_rate=fields.pop("sampling_rate", 4096),
                          sample_pool=fields.pop("sample_pool", seq * 4096),
                          drops=fields.pop("drops", 0), input=fields.pop("input", w.ifindex(7)),
                          output=fields.pop("output", w.ifindex(12)), header=data[:128],
                          frame_length=len(data) + 4, **fields)
    records = [(0, 1)] + [(0, 1001)] * (sample.extended_switch is not None) + \
        [(0, 1036)] * (sample.egress_queue is not None)
    expected = {
        "expanded": sample.expanded, "seq": seq, "source_type": sample.source_type,
        "source_index": sample.source_index, "sampling_rate": sample.sampling_rate,
        "sample_pool": sample.sample_pool, "drops": sample.drops,
        "input": (sample.input >> 30, sample.input & w.UNKNOWN),
        "output": (sample.output >> 30, sample.output & w.UNKNOWN), "records": records,
        "header_protocol": 1, "frame_length": len(data) + 4, "stripped": 4,
        "header_length": min(len(data), 128), "header": data[:128], **header,
    }
    if sample.extended_switch is not None:
        expected["extended_switch"] = sample.extended_switch
    return sample, expected


def _datagram(agent: str, sub_agent: int, seq: int, uptime: int,
              samples: list[tuple[Any, dict[str, Any] | None]]) -> tuple[bytes, list[dict]]:
    context = {"agent": agent, "sub_agent": sub_agent, "datagram_seq": seq, "uptime_ms": uptime}
    data = w.Datagram(agent, sub_agent, seq, uptime, [s for s, _ in samples]).encode()
    return data, [context | e for _, e in samples if e is not None]


IF_COUNTERS = w.IfCounters(
    ifindex=7, if_type=6, speed=400_000_000_000, direction=1, status=3,
    in_octets=(1 << 40) + 5, in_ucast=4_000_000_001, in_mcast=2, in_bcast=3, in_discards=4,
    in_errors=5, in_unknown=6, out_octets=(1 << 63) + 9, out_ucast=7, out_mcast=8, out_bcast=9,
    out_discards=10, out_errors=11, promiscuous=1)
ETHERNET = tuple(range(101, 114))


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[dict], list[dict]]:
    v4a, v4b, v6a, v6b = "172.16.11.23", "172.16.12.23", "fd00:11::17", "fd00:12::17"
    dg1, flows1 = _datagram("192.0.2.11", 0, 1, 60_000, [
        _flow(1, _roce(roce.SEND_ONLY, v4a, v4b, 0x000011, 100, 64)),
        _flow(2, _roce(roce.WRITE_ONLY, v4a, v4b, 0x00ABCD, 0xFFFFFF, 4096, vlan=100),
              extended_switch=(100, 3, 200, 5), egress_queue=3, drops=9),
        _flow(3, _roce(roce.READ_REQUEST, v6a, v6b, 0xFFFFFF, 7, 65536, sport=65535),
              expanded=True, source_index=1 << 25, source_type=2,
              input=w.ifindex(1 << 25), output=w.UNKNOWN),
        (w.CounterSample(1, 7, IF_COUNTERS, ETHERNET), None),
    ])
    dg2, flows2 = _datagram("2001:db8::11", 3, 0xFFFFFFFF, 0xFFFFFFFF, [
        _flow(9, _roce(roce.ACK, v6b, v6a, 0x123456, 42, vlan=4094, priority=7)),
        _flow(10, _roce(roce.CNP, v4b, v4a, 0x0ABCDE, 0, dscp=roce.CNP_DSCP, ecn=3),
              expanded=True, output=w.dropped(259)),
        (w.Raw(w.data_format(0, 99), bytes(range(8))), None),
        (w.DiscardSample(5, 7, 1, 7, 0, 259, bytes(60), 64), None),
        _flow(11, _udp(v4a, v4b, 40000), input=w.UNKNOWN, output=w.multiple(3)),
        _flow(12, _tcp(v4a, v4b), sample_pool=0xFFFFFFFF, sampling_rate=1),
        (w.CounterSample(2, 7, w.IfCounters(ifindex=7, status=1), None, expanded=True), None),
        (w.Raw(w.data_format(0, 4000), b""), None),  # tshark 4.0 breaks on enterprise != 0
    ])
    pcap = tmp_path_factory.mktemp("sflow") / "varied.pcap"
    write_pcap(pcap, [(1_700_000_000.0, dg1, "192.0.2.11", "198.51.100.5", 6343),
                      (1_700_000_000.5, dg2, "2001:db8::11", "2001:db8::5", 6343)])
    return decode(pcap), flows1 + flows2, []


def test_tshark_decodes_every_flow_sample_field(capture):
    decoded, expected, _ = capture
    assert decoded.malformed == []
    assert len(decoded.flows) == len(expected)
    for got, want in zip(decoded.flows, expected, strict=True):
        assert {k: got.get(k) for k in want} == want
        assert set(got) - set(want) <= {"extended_switch"}


def test_tshark_decodes_counter_samples(capture):
    decoded, _, _ = capture
    context1 = {"agent": "192.0.2.11", "sub_agent": 0, "datagram_seq": 1, "uptime_ms": 60_000}
    context2 = {"agent": "2001:db8::11", "sub_agent": 3, "datagram_seq": 0xFFFFFFFF,
                "uptime_ms": 0xFFFFFFFF}
    zero = dict.fromkeys(w.IfCounters.__dataclass_fields__, 0)
    assert decoded.counters == [
        context1 | {"expanded": False, "seq": 1, "source_type": 0, "source_index": 7,
                    "records": [(0, 1), (0, 2)], "if_counters": vars(IF_COUNTERS),
                    "ethernet": ETHERNET},
        context2 | {"expanded": True, "seq": 2, "source_type": 0, "source_index": 7,
                    "records": [(0, 1)], "ethernet": None,
                    "if_counters": zero | {"ifindex": 7, "if_type": 6, "direction": 1,
                                           "status": 1}},
    ]


def test_tshark_skips_samples_it_does_not_know_by_their_length(capture):
    decoded, _, _ = capture
    context = {"agent": "2001:db8::11", "sub_agent": 3, "datagram_seq": 0xFFFFFFFF,
               "uptime_ms": 0xFFFFFFFF}
    discard = len(w.DiscardSample(5, 7, 1, 7, 0, 259, bytes(60), 64).encode()) - 8
    assert decoded.others == [
        context | {"enterprise": 0, "format": 99, "length": 8},
        context | {"enterprise": 0, "format": 5, "length": discard},
        context | {"enterprise": 0, "format": 4000, "length": 0},
    ]


def test_agent_datagrams_decode_in_tshark(tmp_path):
    agent = SflowAgent("10.0.0.1", 1, sub_agent=1, max_datagram=600, clock=lambda: 0.0)
    data, _ = _roce(roce.WRITE_ONLY, "172.16.11.23", "172.16.12.23", 0x77, 5, 4096)
    agent.offer(3, w.ifindex(3), w.ifindex(4), data, count=2)
    agent.counters(3, w.IfCounters(3))
    agent.offer(4, w.ifindex(4), w.ifindex(3), data, count=2)
    agent.flush()
    datagrams = agent.datagrams()
    write_pcap(tmp_path / "agent.pcap", [(1.0, d, "10.0.0.1", "10.0.0.2", 6343)
                                         for d in datagrams])
    decoded = decode(tmp_path / "agent.pcap")
    assert decoded.malformed == [] and decoded.others == []
    assert [(f["datagram_seq"], f["source_index"], f["seq"], f["sample_pool"], f["frame_length"],
             f["header_length"], f["input"], f["dest_qp"]) for f in decoded.flows] == [
        (1, 3, 1, 1, 4174, 128, (0, 3), 0x77), (1, 3, 2, 2, 4174, 128, (0, 3), 0x77),
        (2, 4, 1, 1, 4174, 128, (0, 4), 0x77), (2, 4, 2, 2, 4174, 128, (0, 4), 0x77)]
    assert [(c["datagram_seq"], c["seq"], c["if_counters"]["ifindex"])
            for c in decoded.counters] == [(1, 1, 3)]

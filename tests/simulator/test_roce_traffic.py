"""The RoCEv2 traffic sender reports exactly what it sent (here over loopback, no root)."""

import socket
import time
from collections import Counter

from simulator import roce
from simulator.roce_traffic import FRAME_OVERHEAD, MIX, Stream, _send, totals


def test_the_report_is_what_arrived_and_volumes_follow_the_weights():
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.2", roce.ROCE_PORT))
    sink.settimeout(60)
    streams = [Stream("A", "127.0.0.1", "127.0.0.2", 0x11, weight=3),
               Stream("C", "127.0.0.3", "127.0.0.2", 0x222, weight=1)]
    flows = _send(streams, rounds=3, pps=[1e6], seed=7)
    arrived = Counter()
    for _ in range(len(MIX) * (3 + 1) * 3):
        data, (src, _) = sink.recvfrom(65535)
        arrived[src, data[0], int.from_bytes(data[5:8]), len(data) + FRAME_OVERHEAD] += 1
    sink.close()
    assert arrived == {(f.src, f.opcode, f.dest_qp, f.bytes // f.packets): f.packets
                       for f in flows}
    assert {f.opcode for f in flows} == {roce.WRITE_ONLY, roce.SEND_ONLY, roce.ACK, roce.CNP}
    by_tenant = totals(flows, lambda f: f.tenant)
    assert by_tenant["A"] == (36, 3 * by_tenant["C"][1])
    assert [(f.opcode, f.dscp) for f in flows if f.opcode == roce.CNP] == [
        (roce.CNP, roce.CNP_DSCP)] * 2


def test_several_rates_pace_equal_parts_of_the_packets_in_turn():
    streams = [Stream("A", "127.0.0.1", "127.0.0.4", 0x11, weight=3),
               Stream("C", "127.0.0.3", "127.0.0.4", 0x222, weight=1)]
    began = time.monotonic()
    flows = _send(streams, rounds=8, pps=[1e6, 200], seed=7)  # 128 packets, 64 at 200/s
    assert time.monotonic() - began >= 64 / 200
    assert sum(f.packets for f in flows) == 128

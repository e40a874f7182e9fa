"""The frame mix of the emulated flows: the segments of a message by hand, and what the
fabric's sFlow agents sample of it as tshark (an external decoder) reads it."""

import zlib
from collections import Counter

import pytest

from simulator import roce
from simulator.fabric_run import run
from simulator.flow_frames import default_message, flow_mix
from simulator.pcap import write_pcap
from simulator.scenario import Message, scenario_from
from simulator.traffic import TrafficModel
from tests.sflow.tshark import decode

AROUND = 62  # Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4
RETH, AETH = 16, 4


@pytest.mark.parametrize(("message", "frames"), [
    # 10,000 bytes: FIRST 4096 (+RETH), MIDDLE 4096, LAST 1808; two SENDs of 100
    (Message(10_000, 2, 100), [(roce.WRITE_FIRST, AROUND + RETH + 4096, 1),
                               (roce.WRITE_MIDDLE, AROUND + 4096, 1),
                               (roce.WRITE_LAST, AROUND + 1808, 1),
                               (roce.SEND_ONLY, AROUND + 100, 2)]),
    # exactly 3 MTUs: the LAST is full
    (Message(3 * 4096), [(roce.WRITE_FIRST, AROUND + RETH + 4096, 1),
                         (roce.WRITE_MIDDLE, AROUND + 4096, 1),
                         (roce.WRITE_LAST, AROUND + 4096, 1)]),
    (Message(700, 1, 64), [(roce.WRITE_ONLY, AROUND + RETH + 700, 1),
                           (roce.SEND_ONLY, AROUND + 64, 1)]),
])
def test_a_message_is_cut_at_the_mtu(message, frames):
    mix = flow_mix(message, bytes(6), bytes(4), bytes(4), 0x100, 49152)
    got = [(f[42], len(f) + 4, n) for f, n in mix.frames]  # the BTH opcode after 42 bytes
    assert got == frames
    assert mix.octets == sum(size * n for _, size, n in frames)
    assert mix.packets == sum(n for _, _, n in frames)
    assert mix.wire_bytes == mix.octets + 20 * mix.packets
    assert mix.acks == 1 + message.sends


def test_default_messages_follow_the_documented_draw():
    """CRC-32 of "seed/tenant/name" = h: write 4096 x (4 + h mod 29) + 1 + (h >> 5) mod
    4096, (h >> 17) mod 4 SENDs of 64 << ((h >> 19) mod 5)."""
    for seed, tenant, name in ((7, "team-a", "llm-pretrain"), (0, "b", "x"), (3, "c", "y")):
        h = zlib.crc32(f"{seed}/{tenant}/{name}".encode())
        expected = Message(4096 * (4 + h % 29) + 1 + (h >> 5) % 4096, (h >> 17) % 4,
                           64 << (h >> 19) % 5)
        got = default_message(seed, tenant, name)
        assert got == expected
        assert 4 * 4096 < got.write_bytes <= 33 * 4096 and 64 <= got.send_bytes <= 1024


def test_sampled_frames_are_the_mix_in_proportion(tmp_path):
    """Two pods at 20G, a 10,000-byte WRITE and two 100-byte SENDs per unit, sampled
    1-in-1000 for 2 s: tshark decodes every flow sample as one of the mix's frames (or an
    ACK of 66 bytes), and each kind is sampled in proportion to the frames sent of it:
    per unit 1 FIRST, 1 MIDDLE, 1 LAST, 2 SENDs and 3 ACKs, within 5 binomial sigmas."""
    model = TrafficModel(scenario_from({
        "fabric": {"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2, "vfs_per_pf": 2},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 20,
                  "message": {"write_bytes": 10_000, "sends": 2, "send_bytes": 100}}],
        "sampling_rate": 1000, "seconds": 2, "counter_every_s": 1}))
    result = run(model)
    pcap = tmp_path / "mix.pcap"
    write_pcap(pcap, [(at, data, agent, "192.0.2.10", 6343)
                      for at, data, agent in result.datagrams])
    flows = decode(pcap).flows
    assert len(flows) == result.samples > 10_000
    kinds = Counter((f["opcode"], f["frame_length"]) for f in flows)
    per_unit = {(roce.WRITE_FIRST, AROUND + RETH + 4096): 1, (roce.WRITE_MIDDLE, AROUND + 4096): 1,
                (roce.WRITE_LAST, AROUND + 1808): 1, (roce.SEND_ONLY, AROUND + 100): 2,
                (roce.ACK, AROUND + AETH): 3}
    assert set(kinds) == set(per_unit)
    total = sum(kinds.values())
    for kind, n in per_unit.items():
        p = n / sum(per_unit.values())
        assert abs(kinds[kind] - total * p) < 5 * (total * p * (1 - p)) ** 0.5, kind
    assert run(TrafficModel(model.scenario)).datagrams == result.datagrams  # same seed

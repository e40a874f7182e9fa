"""Per-hop ECMP: the documented hash, known paths for chosen source ports, an even and
deterministic spread, switches that do not polarize, and failed cables left out."""

import ipaddress
import struct
import zlib
from collections import Counter

import pytest

from simulator.cabling import Cabling, Hop
from simulator.ecmp import Ecmp, ecmp_hash, five_tuple, switch_seed
from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology.build import build_graph
from topology.paths import interface_paths

SRC, DST = ipaddress.ip_address("10.101.0.2").packed, ipaddress.ip_address("10.101.0.3").packed


def _facts(uplinks: int = 0):
    """gpu01 on leaf01 Ethernet1, gpu02 on leaf02 Ethernet1; leaf01 Ethernet2 -> spine01,
    Ethernet3 -> spine02 (with 4 uplinks: two cables to each spine)."""
    return generate_facts(FabricSpec(
        nodes=2, rails=1, leaves_per_rail=2, spines=2, vfs_per_pf=2, uplinks_per_leaf=uplinks,
        jobs=(JobSpec("a", "llm", pods=2),)))


def _fabric(uplinks: int = 0) -> Cabling:
    return Cabling(_facts(uplinks))


def _bucket_by_hand(sport: int, switch: str, seed: int, choices: int) -> int:
    """The documented hash, written out: CRC-32 of the packed 5-tuple, XOR the switch
    seed (CRC-32 of "seed/switch"), times 0x9E3779B1 mod 2^32, top 16 bits, mod choices."""
    crc = zlib.crc32(SRC + DST + struct.pack("!HHB", sport, 4791, 17))
    mixed = (crc ^ zlib.crc32(f"{seed}/{switch}".encode())) * 0x9E3779B1 & 0xFFFFFFFF
    return (mixed >> 16) % choices


def test_hash_is_the_documented_one():
    for sport in (49152, 50000, 65535):
        key = five_tuple(SRC, DST, sport)
        assert ecmp_hash(key, switch_seed(4, "leaf01")) % 2 == \
            _bucket_by_hand(sport, "leaf01", 4, 2)


@pytest.mark.parametrize(("sport", "spine", "uplink", "downlink"), [
    (49152, "spine01", "Ethernet2", "Ethernet2"),   # hash bucket 0 at leaf01
    (49156, "spine02", "Ethernet3", "Ethernet3"),   # hash bucket 1 at leaf01
])
def test_chosen_source_ports_take_known_paths(sport, spine, uplink, downlink):
    assert _bucket_by_hand(sport, "leaf01", 0, 2) == (0 if spine == "spine01" else 1)
    path = Ecmp(_fabric(), 0).path("leaf01", "Ethernet1", "leaf02", "Ethernet1",
                                   five_tuple(SRC, DST, sport))
    assert path == (Hop("leaf01", "Ethernet1", uplink), Hop(spine, "Ethernet1", "Ethernet2"),
                    Hop("leaf02", downlink, "Ethernet1"))
    # cross-checked with the inventory's own path enumeration over its graph
    listed = interface_paths(build_graph(_facts()), "podif:a/llm-worker-0/net1",
                             "podif:a/llm-worker-1/net1")
    assert path in [tuple((h.switch, h.ingress, h.egress) for h in p) for p in listed.paths]


def test_same_leaf_is_one_hop():
    path = Ecmp(_fabric(), 0).path("leaf01", "Ethernet1", "leaf01", "Ethernet7", b"k")
    assert path == (Hop("leaf01", "Ethernet1", "Ethernet7"),)


def _spread(ecmp: Ecmp, flows: int = 4096) -> list[tuple[str, str]]:
    """(leaf01 uplink, spine downlink) of flows with distinct source ports."""
    paths = [ecmp.path("leaf01", "Ethernet1", "leaf02", "Ethernet1",
                       five_tuple(SRC, DST, 49152 + n)) for n in range(flows)]
    return [(p[0].egress, p[1].switch + ":" + p[1].egress) for p in paths]


def test_flows_spread_evenly_and_switches_do_not_polarize():
    chosen = _spread(Ecmp(_fabric(uplinks=4), 0))  # 2 spines x 2 parallel cables each way
    uplinks = Counter(up for up, _ in chosen)
    assert len(uplinks) == 4 and all(abs(n - 1024) < 1024 * 0.1 for n in uplinks.values())
    # At the spine, the choice between its two cables down to leaf02 does not follow the
    # leaf's choice of uplink: every combination is about as frequent.
    pairs = Counter(chosen)
    assert len(pairs) == 8 and all(abs(n - 512) < 512 * 0.15 for n in pairs.values())


def test_spread_is_deterministic_and_seeded():
    fabric = _fabric(uplinks=4)
    assert _spread(Ecmp(fabric, 0), 512) == _spread(Ecmp(fabric, 0), 512)
    moved = sum(a != b for a, b in zip(_spread(Ecmp(fabric, 0), 512),
                                       _spread(Ecmp(fabric, 1), 512), strict=True))
    assert moved > 512 * 0.5


def test_failed_cable_is_left_out():
    fabric = _fabric(uplinks=4)
    ecmp = Ecmp(fabric, 0)
    before = _spread(ecmp, 1024)
    ecmp.fail("leaf01", "Ethernet2")  # leaf01 -> spine01, first cable
    assert ecmp.is_down("leaf01", "Ethernet2") and ecmp.is_down("spine01", "Ethernet1")
    after = _spread(ecmp, 1024)
    assert sum(up == "Ethernet2" for up, _ in before) > 200
    assert Counter(up for up, _ in after).keys() == {"Ethernet3", "Ethernet4", "Ethernet5"}


def test_no_route_left_or_host_port_down():
    ecmp = Ecmp(_fabric(), 0)
    key = five_tuple(SRC, DST, 49152)
    ecmp.fail("spine01", "Ethernet2")
    ecmp.fail("leaf02", "Ethernet3")
    assert ecmp.path("leaf01", "Ethernet1", "leaf02", "Ethernet1", key) is None
    ecmp = Ecmp(_fabric(), 0)
    ecmp.fail("leaf02", "Ethernet1")
    assert ecmp.path("leaf01", "Ethernet1", "leaf02", "Ethernet1", key) is None

"""Hot-path indexes: time-aware IP ownership, sFlow (agent, ifIndex) -> port, MAC -> NIC."""

import dataclasses
import random

import pytest

from inventory.facts import PodInterfaceFact
from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology.build import build_graph
from topology.indexes import IpIndex, _mac_keys, ip_key

T1 = 1_767_300_000.0
A = PodInterfaceFact("team-a", "w-0", "net1", ipv4="10.1.0.5/24", valid_from=100.0,
                     valid_until=T1)
B = PodInterfaceFact("team-b", "job-7", "net1", ipv4="10.1.0.5/24", ipv6="fd00::5/64",
                     valid_from=T1)


@pytest.mark.parametrize(("at", "owner"), [
    (99.0, None),
    (100.0, "podif:team-a/w-0/net1"),
    (T1 - 0.001, "podif:team-a/w-0/net1"),
    (T1, "podif:team-b/job-7/net1"),  # the boundary belongs to the new owner
    (T1 + 3600, "podif:team-b/job-7/net1"),
    (None, "podif:team-b/job-7/net1"),  # no time: the current owner
])
def test_reused_fixed_ip_answers_the_owner_at_each_time(at, owner):
    index, problems = IpIndex.from_facts([B, A])
    assert index.lookup("10.1.0.5", at) == owner
    assert index.lookup(ip_key("10.1.0.5"), at) == owner  # packed bytes, as sFlow gives
    assert problems == []


def test_ipv6_and_history():
    index, _ = IpIndex.from_facts([A, B])
    assert index.lookup("fd00::5") == "podif:team-b/job-7/net1"
    assert index.lookup("fd00::5", 150.0) is None
    assert [o.interface for o in index.history("10.1.0.5")] == [
        "podif:team-a/w-0/net1", "podif:team-b/job-7/net1"]
    assert len(index) == 2


def test_released_ip_has_no_current_owner():
    index, _ = IpIndex.from_facts([A])
    assert index.lookup("10.1.0.5") is None
    assert index.lookup("10.1.0.5", 200.0) == "podif:team-a/w-0/net1"


def test_two_live_pods_claiming_one_ip_is_a_problem_and_the_later_wins():
    still_live = dataclasses.replace(A, valid_until=None)
    index, problems = IpIndex.from_facts([still_live, B])
    assert [(p.kind, p.subject) for p in problems] == [("ip-conflict", "10.1.0.5")]
    assert index.lookup("10.1.0.5") == "podif:team-b/job-7/net1"
    assert index.lookup("10.1.0.5", 200.0) == "podif:team-a/w-0/net1"


def test_port_and_mac_indexes_on_a_generated_fabric():
    fabric = build_graph(generate_facts(FabricSpec(
        nodes=2, rails=1, spines=1, vfs_per_pf=2, jobs=(JobSpec("a", "j", pods=1),))))
    indexes = fabric.indexes
    # leaf01 is the first switch (agent 127.1.0.1); its host ports are Ethernet1..2, ifIndex
    # 1001..1002, so ifIndex and port number differ on purpose.
    assert indexes.port_for_sample("127.1.0.1", 1002) == "port:leaf01/Ethernet2"
    assert indexes.port_for_sample(ip_key("127.1.0.2"), 1001) == "port:spine01/Ethernet1"
    assert indexes.port_for_sample("127.1.0.1", 2) is None
    assert indexes.ports_by_ifindex[("leaf01", 1003)] == "port:leaf01/Ethernet3"
    assert indexes.port_named("leaf01", "Ethernet3") == "port:leaf01/Ethernet3"
    assert indexes.by_mac["b8:3f:d2:00:01:00"] == "pf:gpu02/ens1f0np0"
    assert indexes.by_mac["02:00:00:01:00:01"] == "vf:gpu02/0000:1a:00.3"
    assert indexes.ips.lookup("10.101.0.2") == "podif:a/j-worker-0/net1"


def test_a_mac_seen_twice_is_a_conflict_and_the_first_owner_keeps_it():
    """A PF, a used VF (graph nodes) and unused VFs (the VF table only) that share MACs,
    as a mis-provisioned host could: one Problem per later holder, in the order seen."""
    facts = generate_facts(FabricSpec(nodes=2, rails=1, spines=1, vfs_per_pf=3,
                                      jobs=(JobSpec("a", "j", pods=1),)))
    pf = facts.pfs[0]
    vfs = list(facts.vfs)
    vfs[2] = dataclasses.replace(vfs[2], mac=pf.mac.upper())  # unused, same MAC as the PF
    vfs[5] = dataclasses.replace(vfs[5], mac="not-a-mac")
    vfs[4] = dataclasses.replace(vfs[4], mac="not-a-mac")
    fabric = build_graph(dataclasses.replace(facts, vfs=tuple(vfs)))
    conflicts = [(p.subject, p.detail) for p in fabric.problems if p.kind == "mac-conflict"]
    assert conflicts == [
        (pf.mac, f"pf:{pf.node}/{pf.name} and vf:{vfs[2].node}/{vfs[2].pci_address}"),
        ("not-a-mac", f"vf:{vfs[4].node}/{vfs[4].pci_address} and "
                      f"vf:{vfs[5].node}/{vfs[5].pci_address}"),
    ]
    assert fabric.indexes.by_mac[pf.mac] == f"pf:{pf.node}/{pf.name}"
    assert fabric.indexes.by_mac["not-a-mac"] == f"vf:{vfs[4].node}/{vfs[4].pci_address}"
    assert fabric.indexes.by_mac.get(pf.mac.upper()) is None  # keys are MACs as normalized
    assert len(fabric.indexes.by_mac) == 2 + 2 * 3 - 2


def test_mac_keys_parse_canonical_macs_at_once_and_refuse_any_other():
    rng = random.Random(5)
    macs = [":".join(f"{rng.randrange(256):02x}" for _ in range(6)) for _ in range(2000)]
    assert list(_mac_keys(macs)) == [int(mac.replace(":", ""), 16) for mac in macs]
    for other in ("02:00:00:00:00:0A", "02:00:00:00:00: a", "02-00-00-00-00-0a",
                  "02:00:00:00:00:0", "02:00:00:00:00:0aa", "02:00:00:00:00:0g"):
        assert _mac_keys([*macs[:3], other]) is None, other

"""ECMP paths: parallel cables, three tiers, down ports, listing limits."""

import dataclasses

from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology.build import build_graph
from topology.paths import Hop, interface_paths
from topology.queries import paths

TWO_PODS = (JobSpec("a", "llm", pods=2),)


def test_parallel_cables_multiply_paths_and_limit_cuts_the_listing():
    spec = FabricSpec(nodes=2, rails=1, vfs_per_pf=1, leaves_per_rail=2, spines=2,
                      uplinks_per_leaf=4, jobs=TWO_PODS)
    fabric = build_graph(generate_facts(spec))
    [found] = paths(fabric, "a/llm-worker-0", "a/llm-worker-1", limit=3)
    assert found.count == 8  # 2 spines x 2 cables up x 2 cables down
    assert len(found.paths) == 3
    assert found.paths[0] == (Hop("leaf01", "Ethernet1", "Ethernet2"),
                              Hop("spine01", "Ethernet1", "Ethernet3"),
                              Hop("leaf02", "Ethernet2", "Ethernet1"))


def test_three_tier_path_crosses_the_super_spines():
    spec = FabricSpec(nodes=4, rails=1, vfs_per_pf=1, leaves_per_rail=2, spines=2,
                      leaves_per_pod=1, super_spines=2,
                      jobs=(JobSpec("a", "llm", pods=4),))
    fabric = build_graph(generate_facts(spec))
    # Interleaved placement: worker-0 on gpu01 (leaf01), worker-1 on gpu03 (leaf02).
    [found] = paths(fabric, "a/llm-worker-0", "a/llm-worker-1")
    assert found.count == 2
    assert [[h.switch for h in p] for p in found.paths] == [
        ["leaf01", "spine01", "superspine01", "spine03", "leaf02"],
        ["leaf01", "spine02", "superspine02", "spine04", "leaf02"],
    ]


def test_a_down_port_takes_its_paths_away():
    spec = FabricSpec(nodes=2, rails=1, vfs_per_pf=1, leaves_per_rail=2, spines=2,
                      jobs=TWO_PODS)
    facts = generate_facts(spec)
    down = tuple(dataclasses.replace(i, oper_status="down")
                 if (i.switch, i.name) == ("spine02", "Ethernet2") else i
                 for i in facts.interfaces)
    fabric = build_graph(dataclasses.replace(facts, interfaces=down))
    [found] = paths(fabric, "a/llm-worker-0", "a/llm-worker-1")
    assert found.count == 1
    assert [h.switch for h in found.paths[0]] == ["leaf01", "spine01", "leaf02"]


def test_unplugged_interface_has_no_path():
    fabric = build_graph(generate_facts(FabricSpec(nodes=2, rails=1, vfs_per_pf=1, spines=1,
                                                   jobs=TWO_PODS)))
    found = interface_paths(fabric, "podif:a/llm-worker-0/net1", "podif:a/nope/net1")
    assert (found.count, found.paths) == (0, ())

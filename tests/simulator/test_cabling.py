"""The emulator's own cabling, cross-checked with the inventory's graph of the same facts
(built independently by topology/): cables, tiers, where each pod interface plugs in."""

import pytest

from simulator.cabling import Cabling, podif_key
from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology.build import build_graph
from topology.footprint import plugs
from topology.schema import TIER, NodeKind, switch_id

SPECS = {
    "two-tier": FabricSpec(nodes=4, rails=2, leaves_per_rail=2, spines=2, vfs_per_pf=2,
                           jobs=(JobSpec("a", "llm", pods=4),)),
    "three-tier": FabricSpec(nodes=8, rails=1, leaves_per_rail=4, spines=2, leaves_per_pod=2,
                             super_spines=2, vfs_per_pf=2, jobs=(JobSpec("a", "x", pods=8),)),
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_cabling_agrees_with_the_inventory_graph(name):
    facts = generate_facts(SPECS[name])
    cabling, graph = Cabling(facts), build_graph(facts)
    nodes = graph.graph.nodes
    expected = {}
    for port in graph.nodes_of(NodeKind.PORT):
        far = graph.peer(port)
        if far is not None and nodes[far]["kind"] == NodeKind.PORT:
            expected[(nodes[port]["switch"], nodes[port]["name"])] = (
                nodes[far]["switch"], nodes[far]["name"])
    assert cabling.peer == expected
    assert cabling.tier == {s.name: nodes[switch_id(s.name)][TIER] for s in facts.switches}
    table = plugs(graph)
    assert {k: (p.leaf, p.port, p.rail) for k, p in cabling.plugs.items()} == {
        k: (nodes[p.leaf_port]["switch"], nodes[p.leaf_port]["name"], p.rail)
        for k, p in table.items()}


def test_by_hand():
    """gpu01's two NICs: rail 1 on leaf01 Ethernet1, rail 2 on leaf03 Ethernet1; leaf01's
    uplinks Ethernet3 -> spine01 Ethernet1 and Ethernet4 -> spine02 Ethernet1."""
    facts = generate_facts(SPECS["two-tier"])
    cabling = Cabling(facts)
    assert cabling.links("leaf01") == [("Ethernet3", "spine01", "Ethernet1"),
                                       ("Ethernet4", "spine02", "Ethernet1")]
    pod = next(p for p in facts.pods if p.node == "gpu01")
    plugged = [cabling.plugs[podif_key(pod.namespace, pod.name, i)] for i in ("net1", "net2")]
    assert [(p.leaf, p.port, p.rail) for p in plugged] == [("leaf01", "Ethernet1", 1),
                                                          ("leaf03", "Ethernet1", 2)]
    assert cabling.tier["leaf01"] == 1 and cabling.tier["spine02"] == 2

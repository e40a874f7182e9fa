"""Building the graph: node/edge kinds, inferred roles, rails, tiers, and build problems."""

import dataclasses

from inventory.facts import (
    FactSet,
    IdSubtype,
    InterfaceFact,
    JobFact,
    LldpNeighborFact,
    PodFact,
    PodInterfaceFact,
    Reporter,
    SwitchFact,
    VfFact,
)
from simulator.generator import FabricSpec, JobSpec, generate_facts
from topology.build import build_graph
from topology.footprint import owners, plugs
from topology.queries import summary
from topology.schema import ELSEWHERE, KIND, EdgeKind, NodeKind

THREE_TIER = FabricSpec(nodes=4, rails=2, vfs_per_pf=2, leaves_per_rail=2, spines=2,
                        leaves_per_pod=2, super_spines=2,
                        jobs=(JobSpec("a", "llm", pods=2), JobSpec("b", "db", "StatefulSet", 2, 1)))


def test_three_tier_roles_rails_and_tiers():
    fabric = build_graph(generate_facts(THREE_TIER))
    nodes = fabric.graph.nodes
    roles = {n: (nodes[n]["role"], nodes[n].get("tier"), nodes[n].get("rails"))
             for n in fabric.nodes_of(NodeKind.SWITCH)}
    assert roles == {
        "switch:leaf01": ("leaf", 1, "1"), "switch:leaf02": ("leaf", 1, "1"),
        "switch:leaf03": ("leaf", 1, "2"), "switch:leaf04": ("leaf", 1, "2"),
        "switch:spine01": ("spine", 2, None), "switch:spine02": ("spine", 2, None),
        "switch:spine03": ("spine", 2, None), "switch:spine04": ("spine", 2, None),
        "switch:superspine01": ("super-spine", 3, None),
        "switch:superspine02": ("super-spine", 3, None),
    }
    assert summary(fabric).links == {"host": {"confirmed": 8}, "leaf-spine": {"confirmed": 8},
                                     "spine-super-spine": {"confirmed": 4}}
    assert nodes["pf:gpu03/ens2f0np0"]["nic_index"] == 2
    assert nodes["port:leaf01/Ethernet1"]["role"] == "host"
    assert nodes["port:leaf01/Ethernet3"]["role"] == "fabric"


def test_every_node_and_edge_has_a_kind_of_the_schema():
    fabric = build_graph(generate_facts(THREE_TIER))
    assert {k for _, k in fabric.graph.nodes(data=KIND)} == {k.value for k in NodeKind}
    assert {k for _, _, k in fabric.graph.edges(data=KIND)} == {k.value for k in EdgeKind}


def test_role_hint_wins_and_a_bad_hint_is_reported():
    facts = generate_facts(FabricSpec(nodes=2, rails=1, spines=2, vfs_per_pf=1))
    switches = tuple(
        dataclasses.replace(s, role_hint={"spine01": "super-spine", "spine02": "core"}.get(
            s.name, "")) for s in facts.switches)
    fabric = build_graph(dataclasses.replace(facts, switches=switches))
    assert fabric.attrs("switch:spine01")["role"] == "super-spine"
    assert fabric.attrs("switch:spine02")["role"] == "spine"
    assert [(p.kind, p.subject) for p in fabric.problems] == [("bad-role-hint", "spine02")]


def test_unjoinable_facts_are_kept_out_and_reported():
    facts = generate_facts(FabricSpec(nodes=1, rails=1, spines=1, vfs_per_pf=1,
                                      jobs=(JobSpec("a", "j", pods=1),)))
    extra = FactSet(
        switches=(SwitchFact("leaf09"),),
        interfaces=(InterfaceFact("ghost", "Ethernet1"),),
        vfs=(VfFact("gpu01", "0000:99:00.2", "ens9f0np0", 0),),
        jobs=(JobFact("a", "orphan", "Job", tenant="nobody"),),
        pods=(PodFact("a", "p", node="gpu77", job_name="missing"),),
        pod_interfaces=(PodInterfaceFact("a", "p", "net1", node="gpu01", vf_pci="0000:00:00.9"),
                        PodInterfaceFact("a", "gone", "net1")),
    )
    fabric = build_graph(facts.merge(extra))
    assert sorted((p.kind, p.subject) for p in fabric.problems) == [
        ("podif-unattached", "podif:a/p/net1"),
        ("unknown-job", "job:a/missing"),
        ("unknown-node", "gpu77"),
        ("unknown-pod", "pod:a/gone"),
        ("unknown-switch", "ghost"),
        ("unknown-tenant", "nobody"),
        ("vf-unknown-pf", "vf:gpu01/0000:99:00.2"),
    ]
    assert fabric.attrs("switch:leaf09")["role"] == "unknown"
    assert "podif:a/p/net1" in fabric.graph and "vf:gpu01/0000:99:00.2" not in fabric.graph


def test_a_restarted_pod_keeps_its_latest_incarnation_in_the_graph():
    first = PodInterfaceFact("a", "db-0", "net1", node="gpu01", ipv4="10.1.0.9/24",
                             vf_pci="0000:1a:00.2", fixed=True, valid_from=10.0, valid_until=20.0)
    second = dataclasses.replace(first, node="gpu02", valid_from=20.0, valid_until=None)
    facts = generate_facts(FabricSpec(nodes=2, rails=1, spines=1, vfs_per_pf=1))
    facts = facts.merge(FactSet(jobs=(JobFact("a", "db", "StatefulSet"),),
                                pods=(PodFact("a", "db-0", "gpu02", job_kind="StatefulSet",
                                              job_name="db"),),
                                pod_interfaces=(second, first)))
    fabric = build_graph(facts)
    assert fabric.attrs("podif:a/db-0/net1")["node"] == "gpu02"
    assert fabric.indexes.ips.owner("10.1.0.9", 15.0).fact.node == "gpu01"


def test_a_neighbour_on_a_switch_elsewhere_is_a_stand_in_its_cable_unflagged():
    """A shard's build: the far ends on switches another process discovers are stand-ins
    named by their LLDP port id (by the description when the id is a MAC), with the role
    the configuration hints; any other unknown neighbour stays a problem."""
    def heard(port: str, far: str, port_id: str, subtype: IdSubtype, description: str = ""):
        return LldpNeighborFact(Reporter.SWITCH, "leaf01", port, "02:00:00:00:00:09",
                                IdSubtype.MAC, port_id, subtype, far, description)

    facts = FactSet(
        switches=(SwitchFact("leaf01"),),
        interfaces=tuple(InterfaceFact("leaf01", f"Ethernet{i}") for i in (1, 2, 3)),
        neighbors=(heard("Ethernet1", "spine01", "Ethernet7", IdSubtype.IFNAME),
                   heard("Ethernet2", "spine02", "0c:42:a1:00:00:02", IdSubtype.MAC,
                         "Ethernet8"),
                   heard("Ethernet3", "mgmt-sw", "Gi0/1", IdSubtype.IFNAME)))
    alone = build_graph(facts)
    assert [(p.kind, p.subject) for p in alone.problems] == [
        ("lldp-unresolved", f"port:leaf01/Ethernet{i}") for i in (1, 2, 3)]
    shard = build_graph(facts, {"spine01": "", "spine02": "spine"})
    assert [(p.kind, p.subject) for p in shard.problems] == [
        ("lldp-unresolved", "port:leaf01/Ethernet3")]
    assert [shard.attrs(f"switch:spine0{i}")["role"] for i in (1, 2)] == [
        "unknown", "spine"]  # no hosts here: only a hint gives a role
    assert {n: {k: v for k, v in a.items() if k not in ("role", "tier")}
            for n, a in shard.graph.nodes(data=True) if a.get(ELSEWHERE)} == {
        "switch:spine01": {KIND: "switch", "name": "spine01", ELSEWHERE: True},
        "port:spine01/Ethernet7": {KIND: "port", "switch": "spine01", "name": "Ethernet7",
                                   ELSEWHERE: True},
        "switch:spine02": {KIND: "switch", "name": "spine02", "role_hint": "spine",
                           ELSEWHERE: True},
        "port:spine02/Ethernet8": {KIND: "port", "switch": "spine02", "name": "Ethernet8",
                                   ELSEWHERE: True}}
    assert [(shard.peer(f"port:leaf01/Ethernet{i}"), shard.graph.edges[
        f"port:leaf01/Ethernet{i}", f"port:spine0{i}/Ethernet{6 + i}"]["status"])
        for i in (1, 2)] == [("port:spine01/Ethernet7", "one-sided"),
                             ("port:spine02/Ethernet8", "one-sided")]


def test_a_hinted_role_seeds_the_roles_above_it_and_no_other_does():
    """No switch is cabled to a host: a leaf hinted as one still makes its spine a spine;
    a leaf cabled to hosts but hinted a spine is one, and makes no switch a spine."""
    facts = generate_facts(FabricSpec(nodes=2, rails=1, spines=1, vfs_per_pf=1))
    switches_only = facts.of_switches()
    hinted = dataclasses.replace(switches_only, switches=tuple(
        dataclasses.replace(s, role_hint="leaf" if s.name == "leaf01" else "")
        for s in switches_only.switches))
    roles = {n: a["role"] for n, a in build_graph(hinted).graph.nodes(data=True)
             if a[KIND] == "switch"}
    assert roles == {"switch:leaf01": "leaf", "switch:spine01": "spine"}
    assert {build_graph(switches_only).attrs(s)["role"] for s in roles} == {"unknown"}
    misled = dataclasses.replace(facts, switches=tuple(
        dataclasses.replace(s, role_hint="spine" if s.name == "leaf01" else "")
        for s in facts.switches))
    fabric = build_graph(misled)
    assert (fabric.attrs("switch:leaf01")["role"], fabric.attrs("switch:spine01")["role"]) == (
        "spine", "unknown")


def test_a_shard_keeps_the_nics_cabled_to_its_switches():
    """A shard's build leaves out each PF its host hears on a switch elsewhere, with its
    VFs and that report, and the pod interfaces on them, with the pods that have no other
    (the owners table keeps them all: their traffic is attributed); the switch,
    a stand-in when one of the shard's switches hears it, is a leaf with those PFs' rails;
    the NICs kept keep the NIC indexes (rails) they have in the whole fabric."""
    facts = generate_facts(THREE_TIER)
    whole = build_graph(facts)
    leaf = {pf: whole.attrs(whole.peer(pf))["switch"] for pf in whole.nodes_of(NodeKind.PF)}
    mine = {"leaf01", "leaf03", "spine01", "spine02", "superspine01", "superspine02"}
    others = {s.name: "" for s in facts.switches if s.name not in mine}
    shard = build_graph(facts.of_switches(mine).merge(facts.inventory()), others)
    kept = {pf for pf, switch in leaf.items() if switch in mine}
    assert set(shard.nodes_of(NodeKind.PF)) == kept and 0 < len(kept) < len(leaf)
    assert {pf: shard.attrs(pf)["nic_index"] for pf in kept} == {
        pf: whole.attrs(pf)["nic_index"] for pf in kept}
    assert {(v.node, v.pf) for v in shard.facts.vfs} == {
        (whole.attrs(pf)["node"], whole.attrs(pf)["name"]) for pf in kept}
    assert {n.local_port for n in shard.facts.neighbors if n.reporter == "host"} == {
        whole.attrs(pf)["name"] for pf in kept}
    away = {p for p, plug in plugs(whole).items() if leaf[plug.pf] not in mine}
    interfaces = set(whole.nodes_of(NodeKind.POD_INTERFACE))
    assert set(shard.nodes_of(NodeKind.POD_INTERFACE)) == interfaces - away
    table = owners(whole)
    gone = {table[p].pod for p in away} - {table[p].pod for p in interfaces - away}
    assert gone == {"pod:a/llm-worker-1", "pod:b/db-1"}
    assert set(shard.nodes_of(NodeKind.POD)) == set(whole.nodes_of(NodeKind.POD)) - gone
    assert owners(shard) == table
    assert [p for p in shard.problems if p.kind == "podif-unattached"] == []
    stand_in_leaves = {"leaf02", "leaf04"} & {shard.attrs(n)["name"]
                                              for n in shard.nodes_of(NodeKind.SWITCH)}
    assert stand_in_leaves
    for far in stand_in_leaves:
        assert (shard.attrs(f"switch:{far}")["role"], shard.attrs(f"switch:{far}")["rails"]
                ) == ("leaf", whole.attrs(f"switch:{far}")["rails"])
    assert {s: shard.attrs(s)["role"] for s in shard.nodes_of(NodeKind.SWITCH)} == {
        s: whole.attrs(s)["role"] for s in shard.nodes_of(NodeKind.SWITCH)}

"""Roles inferred from the cabling: switch tiers, port roles, link tiers, NIC indexes, rails.

A switch cabled to a host PF is a leaf; otherwise its role is its hop distance from the
nearest leaf over usable switch-to-switch cables (1 spine, 2 super-spine). A switch's
``role_hint`` fact wins over inference. A PF's NIC index is its rank by PCI address
within its node (1-based); a leaf's rails are the NIC indexes of the PFs cabled to it.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import networkx as nx

from topology.graph import cables_of
from topology.schema import (
    KIND,
    NIC_INDEX,
    RAILS,
    ROLE,
    STATUS,
    TIER,
    USABLE_LINK,
    NodeKind,
    PortRole,
    SwitchRole,
    switch_id,
)

_ROLE_BY_DISTANCE = (SwitchRole.LEAF, SwitchRole.SPINE, SwitchRole.SUPER_SPINE)
TIER_OF_ROLE = {SwitchRole.LEAF: 1, SwitchRole.SPINE: 2, SwitchRole.SUPER_SPINE: 3}


def assign_roles(graph: nx.Graph) -> None:
    """Set ``nic_index`` on PFs, ``role``/``tier``/``rails`` on switches, ``role`` on ports
    and ``tier`` on cables, in place."""
    nodes = graph.nodes
    _assign_nic_indexes(graph)
    switch_links: nx.Graph = nx.Graph()
    rails: dict[str, set[int]] = defaultdict(set)
    port_roles: dict[str, PortRole] = {}
    cables = cables_of(graph)
    for a, b, edge in cables:
        if edge[STATUS] not in USABLE_LINK:
            continue
        for port, other in ((a, b), (b, a)):
            if nodes[port][KIND] != NodeKind.PORT:
                continue
            switch = switch_id(nodes[port]["switch"])
            if nodes[other][KIND] == NodeKind.PF:
                port_roles[port] = PortRole.HOST
                rails[switch].add(nodes[other][NIC_INDEX])
            else:
                port_roles[port] = PortRole.FABRIC
                switch_links.add_edge(switch, switch_id(nodes[other]["switch"]))

    switches = [n for n, k in nodes(data=KIND) if k == NodeKind.SWITCH]
    leaves = [s for s in rails if s in switch_links]
    distance = nx.multi_source_dijkstra_path_length(switch_links, leaves) if leaves else {}
    for switch in switches:
        attrs = nodes[switch]
        if attrs.get("role_hint") in SwitchRole.__members__.values():
            role = SwitchRole(attrs["role_hint"])
        elif switch in rails:
            role = SwitchRole.LEAF
        else:
            hops = distance.get(switch)
            role = _ROLE_BY_DISTANCE[hops] if hops is not None and hops < 3 else SwitchRole.UNKNOWN
        attrs[ROLE] = role.value
        if role in TIER_OF_ROLE:
            attrs[TIER] = TIER_OF_ROLE[role]
        if rails.get(switch):
            attrs[RAILS] = ",".join(str(r) for r in sorted(rails[switch]))

    for node, kind in nodes(data=KIND):
        if kind == NodeKind.PORT:
            nodes[node][ROLE] = port_roles.get(node, PortRole.UNUSED).value
    for a, b, edge in cables:
        ends = nodes[a], nodes[b]
        if NodeKind.PF in (ends[0][KIND], ends[1][KIND]):
            edge[TIER] = "host"
        else:
            edge[TIER] = _link_tier(*(nodes[switch_id(end["switch"])][ROLE] for end in ends))


@cache
def _link_tier(a: str, b: str) -> str:
    """The tier of a cable between switches of roles ``a`` and ``b``: the two roles, lower
    tier first (a port-PF cable is ``host``)."""
    return "-".join(sorted((a, b), key=lambda r: TIER_OF_ROLE.get(SwitchRole(r), 9)))


def _assign_nic_indexes(graph: nx.Graph) -> None:
    by_node: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for node, attrs in graph.nodes(data=True):
        if attrs[KIND] == NodeKind.PF:
            by_node[attrs["node"]].append((attrs["pci_address"], node))
    for pfs in by_node.values():
        for index, (_, pf) in enumerate(sorted(pfs), start=1):
            graph.nodes[pf][NIC_INDEX] = index

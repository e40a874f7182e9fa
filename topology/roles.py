"""Roles inferred from the cabling: switch tiers, port roles, link tiers, NIC indexes, rails.

A switch cabled to a host PF is a leaf; otherwise its role is its hop distance from the
nearest leaf over usable switch-to-switch cables (1 spine, 2 super-spine). A switch's
``role_hint`` fact wins over inference, for the distances too: a switch hinted a leaf is
one, cabled to hosts or not, and one hinted otherwise is not. A PF's NIC index is its rank
by PCI address within its node (1-based, :func:`nic_indexes`, set as the PF nodes are
made); a leaf's rails are the NIC indexes of the PFs cabled to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from typing import Any

import networkx as nx

from inventory.facts import PfFact
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


def assign_roles(graph: nx.Graph, cables: list[tuple[str, str, dict[str, Any]]]
                 ) -> None:
    """Set ``role``/``tier``/``rails`` on switches (a switch's ``rails`` kept when no PF
    in the graph is cabled to it), ``role`` on ports and ``tier`` on ``cables`` (the
    graph's, as :func:`~topology.graph.cables_of` finds them), in place."""
    nodes = graph._node  # networkx's own node dict: no view per lookup
    port, pf, usable = NodeKind.PORT.value, NodeKind.PF.value, USABLE_LINK
    host, fabric = PortRole.HOST.value, PortRole.FABRIC.value
    joined: set[tuple[str, str]] = set()  # switches joined by a usable cable
    rails: dict[str, set[int]] = defaultdict(set)
    port_roles: dict[str, str] = {}
    for a, b, edge in cables:
        if edge[STATUS] not in usable:
            continue
        for end, other in ((a, b), (b, a)):
            attrs = nodes[end]
            if attrs[KIND] != port:
                continue
            far = nodes[other]
            if far[KIND] == pf:
                port_roles[end] = host
                rails[switch_id(attrs["switch"])].add(far[NIC_INDEX])
            else:
                port_roles[end] = fabric
                joined.add((attrs["switch"], far["switch"]))
    switch_links = nx.Graph((switch_id(s), switch_id(t)) for s, t in joined)

    switches = [n for n, attrs in nodes.items() if attrs[KIND] == NodeKind.SWITCH]
    known: dict[str, SwitchRole] = {}  # a valid hint first, then a cable to a host
    for switch in switches:
        hint = nodes[switch].get("role_hint")
        if hint in SwitchRole.__members__.values():
            known[switch] = SwitchRole(hint)
        elif switch in rails:
            known[switch] = SwitchRole.LEAF
    leaves = [s for s, role in known.items() if role == SwitchRole.LEAF and s in switch_links]
    distance = nx.multi_source_dijkstra_path_length(switch_links, leaves) if leaves else {}
    for switch in switches:
        attrs = nodes[switch]
        role, hops = known.get(switch), distance.get(switch)
        if role is None:
            role = _ROLE_BY_DISTANCE[hops] if hops is not None and hops < 3 else SwitchRole.UNKNOWN
        attrs[ROLE] = role.value
        if role in TIER_OF_ROLE:
            attrs[TIER] = TIER_OF_ROLE[role]
        if rails.get(switch):
            attrs[RAILS] = ",".join(str(r) for r in sorted(rails[switch]))

    unused = PortRole.UNUSED.value
    for node, attrs in nodes.items():
        if attrs[KIND] == port:
            attrs[ROLE] = port_roles.get(node, unused)
    role_of = {nodes[s]["name"]: nodes[s][ROLE] for s in switches}
    for a, b, edge in cables:
        ends = nodes[a], nodes[b]
        if ends[0][KIND] == pf or ends[1][KIND] == pf:
            edge[TIER] = "host"
        else:
            edge[TIER] = _link_tier(role_of[ends[0]["switch"]], role_of[ends[1]["switch"]])


@cache
def _link_tier(a: str, b: str) -> str:
    """The tier of a cable between switches of roles ``a`` and ``b``: the two roles, lower
    tier first (a port-PF cable is ``host``)."""
    return "-".join(sorted((a, b), key=lambda r: TIER_OF_ROLE.get(SwitchRole(r), 9)))


def nic_indexes(pfs: Iterable[PfFact]) -> dict[tuple[str, str], int]:
    """(node, PF name) -> the PF's NIC index: its rank by PCI address within its node.

    >>> nic_indexes([PfFact("gpu01", "eth1", "0000:02:00.0"),
    ...              PfFact("gpu01", "eth0", "0000:01:00.0"), PfFact("gpu02", "eth0", "a")])
    {('gpu01', 'eth0'): 1, ('gpu01', 'eth1'): 2, ('gpu02', 'eth0'): 1}
    """
    by_node: dict[str, dict[str, str]] = defaultdict(dict)
    for pf in pfs:
        by_node[pf.node][pf.name] = pf.pci_address
    return {(node, name): index for node, named in by_node.items()
            for index, (_, name) in enumerate(sorted((pci, name) for name, pci in
                                                     named.items()), start=1)}

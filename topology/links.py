"""LLDP reconciliation: neighbour reports -> cables, each confirmed, one-sided or in conflict.

A cable joins two endpoints: switch ports, or a switch port and a host PF. It is
*confirmed* when both ends report each other, *one-sided* when only one does (kept and
flagged: a host without lldpd, a stale entry; not flagged when the silent end is a
stand-in, whose reports another process holds), and in *conflict* when an endpoint is
claimed by several different cables and no single confirmed one explains it. Nothing is
resolved silently: every unresolved report and every conflict becomes a Problem.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

import networkx as nx

from inventory.facts import IdSubtype, LldpNeighborFact, Reporter, normalize_mac
from inventory.problems import Problem
from topology.schema import (
    ELSEWHERE,
    KIND,
    LinkStatus,
    NodeKind,
    node_id,
    pf_id,
    port_id,
    switch_id,
)


class Link(NamedTuple):
    """A cable between endpoints ``a`` < ``b`` (node IDs) and the endpoints that reported it
    (a tuple: a large fabric makes hundreds of thousands)."""

    a: str
    b: str
    status: LinkStatus
    reported_by: tuple[str, ...]


class EndpointResolver:
    """Turns the ids an LLDP neighbour sends into graph node IDs of switches, ports and PFs."""

    def __init__(self, graph: nx.Graph) -> None:
        self._devices: dict[str, str] = {}  # chassis MAC or system name -> switch/node ID
        self._ports: dict[tuple[str, str], str] = {}  # (device ID, port name/alias) -> ID
        self._pf_by_mac: dict[str, str] = {}
        self._found: dict[tuple[str, str, str], str | None] = {}  # chassis -> device ID
        for node, attrs in graph.nodes(data=True):
            kind = attrs[KIND]
            if kind in (NodeKind.SWITCH, NodeKind.NODE):
                self._devices[attrs["name"]] = node
                if attrs.get("chassis_id"):
                    self._devices.setdefault(normalize_mac(attrs["chassis_id"]), node)
            elif kind == NodeKind.PORT:
                device = switch_id(attrs["switch"])
                self._ports[(device, attrs["name"])] = node
                if attrs.get("alias"):
                    self._ports.setdefault((device, attrs["alias"]), node)
            elif kind == NodeKind.PF:
                device = node_id(attrs["node"])
                self._ports[(device, attrs["name"])] = node
                if attrs.get("mac"):
                    self._pf_by_mac[attrs["mac"]] = node

    def local(self, fact: LldpNeighborFact) -> str:
        """The node ID of the reporting end (which may not exist in the graph)."""
        if fact.reporter == Reporter.SWITCH:
            return port_id(fact.local_device, fact.local_port)
        return pf_id(fact.local_device, fact.local_port)

    def remote(self, fact: LldpNeighborFact) -> str | None:
        """The node ID of the far end, or None when the report names nothing we know."""
        if fact.port_id_subtype == IdSubtype.MAC:
            pf = self._pf_by_mac.get(normalize_mac(fact.port_id))
            if pf is not None:
                return pf
        device = self._device(fact)
        if device is None:
            return None
        for name in (fact.port_id, fact.port_description):
            found = self._ports.get((device, name))
            if found is not None:
                return found
        return None

    def _device(self, fact: LldpNeighborFact) -> str | None:
        """The device a report's chassis names (found once per chassis: every port of a
        device reports the same)."""
        key = (fact.chassis_id_subtype, fact.chassis_id, fact.system_name)
        if key not in self._found:
            self._found[key] = self._find_device(fact)
        return self._found[key]

    def _find_device(self, fact: LldpNeighborFact) -> str | None:
        if fact.chassis_id_subtype == IdSubtype.MAC:
            found = self._devices.get(normalize_mac(fact.chassis_id))
            if found is not None:
                return found
        return self._devices.get(fact.system_name) or self._devices.get(fact.chassis_id)


def reconcile_links(
    neighbors: Iterable[LldpNeighborFact], resolver: EndpointResolver, known: nx.Graph
) -> tuple[list[Link], list[Problem]]:
    """Turn neighbour reports into links, with a Problem for everything not explained.

    ``known`` is the graph being built: a reporting endpoint it does not hold is a problem.
    """
    claims: dict[tuple[str, str], set[str]] = defaultdict(set)
    problems: list[Problem] = []
    nodes = known._node  # networkx's node dict: membership without a call
    for fact in neighbors:
        local = resolver.local(fact)
        if local not in nodes:
            problems.append(Problem("lldp-unknown-local", local, "reporting port is not known"))
            continue
        remote = resolver.remote(fact)
        if remote is None:
            problems.append(Problem(
                "lldp-unresolved", local,
                f"neighbour {fact.system_name or fact.chassis_id} port {fact.port_id} "
                f"({fact.port_id_subtype}) matches no known switch port or PF",
            ))
        elif remote == local:
            problems.append(Problem("lldp-loop", local, "port reports itself as neighbour"))
        else:
            claims[(min(local, remote), max(local, remote))].add(local)

    by_endpoint: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pair in claims:
        for end in pair:
            by_endpoint[end].append(pair)

    links = []
    for (a, b), reporters in sorted(claims.items()):
        status = LinkStatus.CONFIRMED if len(reporters) == 2 else LinkStatus.ONE_SIDED
        rivals = () if len(by_endpoint[a]) + len(by_endpoint[b]) == 2 else \
            {pair for end in (a, b) for pair in by_endpoint[end]} - {(a, b)}
        if rivals and (status != LinkStatus.CONFIRMED or _any_confirmed(rivals, claims)):
            status = LinkStatus.CONFLICT
        if status == LinkStatus.CONFLICT:
            others = ", ".join(f"{x}-{y}" for x, y in sorted(rivals))
            problems.append(Problem("link-conflict", f"{a}-{b}", f"competes with {others}"))
        elif status == LinkStatus.ONE_SIDED and not any(
                nodes[end].get(ELSEWHERE) for end in (a, b)):  # the far end reports elsewhere
            only = min(reporters)
            problems.append(Problem("link-one-sided", f"{a}-{b}", f"only {only} reports it"))
        links.append(Link(a, b, status, tuple(sorted(reporters))))
    return links, problems


def _any_confirmed(pairs: set[tuple[str, str]], claims: dict[tuple[str, str], set[str]]) -> bool:
    return any(len(claims[pair]) == 2 for pair in pairs)

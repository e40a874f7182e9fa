"""FabricGraph: the built fabric graph with its facts, problems and hot-path indexes."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar

import networkx as nx

from inventory.facts import FactSet, SwitchFact
from inventory.problems import Problem
from topology.indexes import Indexes, build_indexes
from topology.schema import (
    ELSEWHERE,
    KIND,
    STATUS,
    USABLE_LINK,
    EdgeKind,
    NodeKind,
    is_up,
    pf_id,
    switch_id,
)
from topology.vfs import VfTable

T = TypeVar("T")


class FabricGraph:
    """A built fabric: the graph, the facts it came from, the problems found, and indexes.

    Built once (by :func:`topology.build.build_graph` or from a snapshot) and never mutated
    afterwards; a refresh builds a new one and swaps it in, so a reader always sees one
    consistent fabric. ``vfs`` holds every configured VF whose PF is in the graph (the
    graph only those a pod interface uses); ``vfs`` and ``indexes`` are derived from
    ``facts`` when not given: a snapshot gives them, from the few fact sections they need,
    and parses its facts lazily.
    """

    def __init__(self, graph: nx.Graph, facts: FactSet | Callable[[], FactSet],
                 problems: tuple[Problem, ...], indexes: Indexes | None = None,
                 vfs: VfTable | None = None,
                 cables: list[tuple[str, str, dict[str, Any]]] | None = None) -> None:
        self.graph = graph
        if cables is not None:  # as :func:`cables_of` found them: the cached property's value
            vars(self)["cables"] = cables
        # networkx's own node and adjacency dicts: lookups without its read-only views
        self._node: dict[str, dict[str, Any]] = graph._node
        self._adj: dict[str, dict[str, dict[str, Any]]] = graph._adj
        self._facts = facts
        self.problems = problems
        self._memo: dict[Callable[[FabricGraph], Any], Any] = {}
        self.vfs = vfs if vfs is not None else VfTable.from_rows(
            (v.node, v.pci_address, v.pf, v.vf_index, v.mac) for v in self.facts.vfs
            if pf_id(v.node, v.pf) in self._node)
        self.indexes = indexes if indexes is not None else build_indexes(graph, self.facts,
                                                                         self.vfs)

    def cached(self, derive: Callable[[FabricGraph], T]) -> T:
        """``derive(self)``, computed once per fabric (derived lookups for queries)."""
        if derive not in self._memo:
            self._memo[derive] = derive(self)
        return self._memo[derive]

    def remember(self, derive: Callable[[FabricGraph], T], value: T) -> None:
        """Take ``value`` as ``derive(self)`` (a table a packed snapshot kept as derived)."""
        self._memo[derive] = value

    def remember_switch_links(self, links: dict[str, dict[str, tuple[tuple[str, str], ...]]]
                              ) -> None:
        """Take ``links`` as :attr:`switch_links` (as a packed snapshot kept them)."""
        vars(self)["switch_links"] = links  # where the cached property keeps its value

    @property
    def facts(self) -> FactSet:
        """The facts the graph was built from (parsed on first use when given lazily)."""
        if callable(self._facts):
            self._facts = self._facts()
        return self._facts

    def kind(self, node: str) -> str:
        return self._node[node][KIND]

    def attrs(self, node: str) -> dict[str, Any]:
        return self._node[node]

    def nodes_of(self, kind: NodeKind) -> list[str]:
        """Node IDs of one kind, in insertion order."""
        return [n for n, attrs in self._node.items() if attrs[KIND] == kind]

    def switches(self) -> list[SwitchFact]:
        """The switches discovered (stand-ins left out), as facts made from their nodes,
        which carry the same fields: a snapshot's facts are parsed whole on first use
        (17 s of CPU at x-large)."""
        fields = SwitchFact.__dataclass_fields__
        return [SwitchFact(**{k: v for k, v in attrs.items() if k in fields})
                for attrs in self._node.values()
                if attrs[KIND] == NodeKind.SWITCH and not attrs.get(ELSEWHERE)]

    def neighbors_by(self, node: str, edge_kind: EdgeKind, node_kind: NodeKind) -> list[str]:
        """Neighbours of ``node`` over edges of ``edge_kind`` that are of ``node_kind``."""
        nodes = self._node
        return [
            other
            for other, edge in self._adj[node].items()
            if edge[KIND] == edge_kind and nodes[other][KIND] == node_kind
        ]

    def first_neighbor(self, node: str, edge_kind: EdgeKind, node_kind: NodeKind) -> str | None:
        found = self.neighbors_by(node, edge_kind, node_kind)
        return found[0] if found else None

    def peer(self, endpoint: str) -> str | None:
        """The far end of the usable cable at a port or PF, if there is one."""
        for other, edge in self._adj[endpoint].items():
            if edge[KIND] == EdgeKind.CABLED and edge[STATUS] in USABLE_LINK:
                return other
        return None

    @cached_property
    def cables(self) -> list[tuple[str, str, dict[str, Any]]]:
        """Every cable as (end, end, edge attributes), in the graph's edge order."""
        return cables_of(self.graph)

    @cached_property
    def switch_links(self) -> dict[str, dict[str, tuple[tuple[str, str], ...]]]:
        """Switch ID (every switch, in the graph's order) -> each switch joined to it by a
        usable cable whose ports are up -> the (own port, far port) IDs of every such cable,
        in the graph's cable order."""
        nodes = self._node
        links: dict[str, dict[str, list[tuple[str, str]]]] = {
            s: {} for s in self.nodes_of(NodeKind.SWITCH)}
        for a, b, edge in self.cables:
            if edge[STATUS] not in USABLE_LINK:
                continue
            ends = nodes[a], nodes[b]
            if ends[0][KIND] != NodeKind.PORT or ends[1][KIND] != NodeKind.PORT:
                continue
            if is_up(ends[0]) and is_up(ends[1]):
                sa, sb = switch_id(ends[0]["switch"]), switch_id(ends[1]["switch"])
                links[sa].setdefault(sb, []).append((a, b))
                if sa != sb:
                    links[sb].setdefault(sa, []).append((b, a))
        return {s: {far: tuple(found) for far, found in near.items()}
                for s, near in links.items()}


def cables_of(graph: nx.Graph) -> list[tuple[str, str, dict[str, Any]]]:
    """The ``cabled`` edges of ``graph`` as ``graph.edges(data=True)`` lists them (one walk
    of the adjacency dicts, a third faster than the edge view's)."""
    found, seen, cabled = [], set(), EdgeKind.CABLED.value
    for node, neighbours in graph._adj.items():
        for other, edge in neighbours.items():
            if edge[KIND] == cabled and other not in seen:
                found.append((node, other, edge))
        seen.add(node)
    return found

"""Equal-cost paths between pod interfaces, as the ordered switch ports each path crosses.

A path leaves the source PF into its leaf's host port, climbs and descends the Clos over
usable cables whose ports are up, and leaves the destination leaf by the destination's
host port. Parallel cables between two switches are distinct paths, as ECMP hashes over
them. Counting is exact; listing stops at ``limit`` paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice, pairwise, product
from math import prod

import networkx as nx

from topology.footprint import Plug, distances_from, plugs
from topology.graph import FabricGraph
from topology.schema import id_name


@dataclass(frozen=True, slots=True)
class Hop:
    """One switch on a path, with the ports the traffic enters and leaves it by."""

    switch: str
    ingress: str
    egress: str


@dataclass(frozen=True, slots=True)
class InterfacePaths:
    """Every equal-cost path from one pod interface to another (``count`` may exceed the
    listed ``paths`` when ``limit`` cut the listing)."""

    source: str
    destination: str
    count: int
    paths: tuple[tuple[Hop, ...], ...]


def interface_paths(fabric: FabricGraph, source: str, destination: str,
                    limit: int = 256) -> InterfacePaths:
    """Equal-cost paths between two pod interface IDs (empty when either is not plugged in
    or no usable path exists).

    Examples
    --------
    >>> found = interface_paths(example_fabric, "podif:a/llm-worker-0/net1",
    ...                         "podif:a/llm-worker-1/net1")
    >>> found.count, [h.switch for h in found.paths[0]]
    (2, ['leaf01', 'spine01', 'leaf02'])
    """
    table = plugs(fabric)
    src, dst = table.get(source), table.get(destination)
    if src is None or dst is None or not src.leaf or not dst.leaf:
        return InterfacePaths(source, destination, 0, ())
    if src.leaf == dst.leaf:
        hop = Hop(id_name(src.leaf), _port_name(fabric, src), _port_name(fabric, dst))
        return InterfacePaths(source, destination, 1, ((hop,),))
    count, routes = _leaf_routes(fabric, src.leaf, dst.leaf)
    first, last = _port_name(fabric, src), _port_name(fabric, dst)
    listed = tuple(islice(_expand(routes, first, last), limit))
    return InterfacePaths(source, destination, count, listed)


Route = tuple[tuple[str, ...], list[list[tuple[str, str]]]]
"""Switch names along a route, and per hop between two of them the (out, in) port names
of every parallel cable."""

_ROUTE_CACHE_SIZE = 4096


def _leaf_routes(fabric: FabricGraph, a: str, b: str) -> tuple[int, list[Route]]:
    """Path count and routes between two leaves, memoized per fabric (bounded)."""
    table: dict[tuple[str, str], tuple[int, list[Route]]] = fabric.cached(_route_table)
    found = table.get((a, b))
    if found is None:
        if len(table) >= _ROUTE_CACHE_SIZE:
            table.clear()
        found = table[(a, b)] = _routes_between(fabric, a, b)
    return found


def _route_table(fabric: FabricGraph) -> dict[tuple[str, str], tuple[int, list[Route]]]:
    return {}


def _routes_between(fabric: FabricGraph, a: str, b: str) -> tuple[int, list[Route]]:
    graph, nodes = fabric.switch_graph, fabric.graph.nodes
    from_a, to_b = distances_from(fabric, a), distances_from(fabric, b)
    if b not in from_a:
        return 0, []
    routes = [
        (tuple(id_name(s) for s in route),
         [[(nodes[c["ends"][x]]["name"], nodes[c["ends"][y]]["name"])
           for c in graph.get_edge_data(x, y).values()]
          for x, y in pairwise(route)])
        for route in _shortest_routes(graph, a, b, from_a, to_b)
    ]
    return sum(prod(len(hop) for hop in cables) for _, cables in routes), routes


def _shortest_routes(graph: nx.MultiGraph, a: str, b: str, from_a: dict[str, int],
                     to_b: dict[str, int]) -> list[list[str]]:
    """Every shortest switch sequence from ``a`` to ``b``.

    A switch ``v`` lies ``k`` hops along some shortest route when ``from_a[v] == k`` and
    ``to_b[v] == d - k``; routes are chains of adjacent switches through those layers.
    Distances are memoized per fabric, so no graph search runs per query.
    """
    length = from_a[b]
    layers: list[list[str]] = [[] for _ in range(length + 1)]
    for switch, k in from_a.items():
        if to_b.get(switch) == length - k:
            layers[k].append(switch)
    routes = [[a]]
    for layer in layers[1:]:
        layer.sort()
        routes = [[*route, nxt] for route in routes for nxt in layer
                  if nxt in graph.adj[route[-1]]]
    return routes


def _expand(routes: list[Route], first: str, last: str) -> Iterator[tuple[Hop, ...]]:
    for switches, cables in routes:
        for chosen in product(*cables):
            ports = [first, *(p for cable in chosen for p in cable), last]
            yield tuple(Hop(switch, ports[2 * i], ports[2 * i + 1])
                        for i, switch in enumerate(switches))


def _port_name(fabric: FabricGraph, plug: Plug) -> str:
    return fabric.attrs(plug.leaf_port)["name"]

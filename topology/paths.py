"""Equal-cost paths between pod interfaces, as the ordered switch ports each path crosses.

A path leaves the source PF into its leaf's host port, climbs and descends the Clos over
usable cables whose ports are up (the up-down routes of :mod:`topology.tiers`), and
leaves the destination leaf by the destination's host port. Parallel cables between two
switches are distinct paths, as ECMP hashes over them. Counting is exact and costs the
switches where the routes meet (:func:`topology.tiers.routes`); listing stops at ``limit``
paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import NamedTuple

from topology.footprint import Plug, plugs
from topology.graph import FabricGraph
from topology.schema import id_name
from topology.tiers import Links, cables, routes, tier_links


class Hop(NamedTuple):
    """One switch on a path, with the ports the traffic enters and leaves it by (a tuple:
    a query lists thousands)."""

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
    count, layers = routes(fabric, src.leaf, dst.leaf)
    first, last = _port_name(fabric, src), _port_name(fabric, dst)
    listed = tuple(islice(_expand(fabric, layers, first, last), limit)) if count else ()
    return InterfacePaths(source, destination, count, listed)


def _next(links: tuple[Links, Links], switch: str, layer: set[str]) -> list[str]:
    """The switches of ``layer`` cabled to ``switch``, in ID order."""
    up, down = links[0].get(switch, _NONE), links[1].get(switch, _NONE)
    return sorted(layer.intersection(up).union(layer.intersection(down)))


_NONE: dict[str, tuple[tuple[str, str], ...]] = {}


def _expand(fabric: FabricGraph, layers: list[list[str]], first: str, last: str
            ) -> Iterator[tuple[Hop, ...]]:
    """Every route through ``layers``: switch sequences in ID order (depth first), and for
    each its choices of parallel cables, the first cable's choice varying slowest.

    The hops before each switch are made once for every route that shares them (one
    list per switch on the walk, of each cable choice so far and the port it arrives by),
    and the last hop once per cable into it, so a path costs one hop and one tuple.
    """
    links = tier_links(fabric)
    hop, name = cache(Hop), cache(id_name)
    sets = [set(layer) for layer in layers]

    @cache
    def steps(switch: str, depth: int) -> list[str]:
        return _next(links, switch, sets[depth])

    def extend(ways: _Ways, switch: str, to: str) -> _Ways:
        label = name(switch)
        return [((*hops, hop(label, ingress, egress)), far)
                for hops, ingress in ways for egress, far in cables(links, switch, to)]

    start = layers[0][0]
    route, ways, choices = [start], [[((), first)]], [iter(steps(start, 1))]
    while choices:
        switch = next(choices[-1], None)
        if switch is None:
            choices.pop()
            route.pop()
            ways.pop()
            continue
        if len(route) + 1 < len(layers):
            ways.append(extend(ways[-1], route[-1], switch))
            route.append(switch)
            choices.append(iter(steps(switch, len(route))))
            continue
        label, end, between = name(route[-1]), name(switch), cables(links, route[-1], switch)
        tails = [(egress, hop(end, far, last)) for egress, far in between]
        for hops, ingress in ways[-1]:
            for egress, tail in tails:
                yield (*hops, hop(label, ingress, egress), tail)


_Ways = list[tuple[tuple[Hop, ...], str]]
"""The hops so far of each choice of cables, with the port the last cable arrives by."""


def _port_name(fabric: FabricGraph, plug: Plug) -> str:
    return fabric.attrs(plug.leaf_port)["name"]

"""Up-down routes between two leaves of a tiered Clos, layer by layer.

In a leaf-spine (or leaf-spine-super-spine) fabric every shortest route between two leaves
climbs to the lowest tier where switches above both leaves meet, then descends: ECMP hashes
over the switches of each layer and the parallel cables between them. The layers come from
the switches' tiers (see :mod:`topology.roles`) and the usable cables between them, so a
route needs no search over the whole graph: its cost is the size of the layers.
"""

from __future__ import annotations

from collections import defaultdict

from topology.graph import FabricGraph
from topology.schema import TIER

Links = dict[str, dict[str, tuple[tuple[str, str], ...]]]
"""Switch ID -> each switch one tier away -> the (own port, far port) names of every usable
cable between them whose ports are up."""


def tier_links(fabric: FabricGraph) -> tuple[Links, Links]:
    """The fabric's :data:`Links` one tier up, and one tier down."""
    return fabric.cached(_tier_links)


def cables(links: tuple[Links, Links], a: str, b: str) -> tuple[tuple[str, str], ...]:
    """The (port on ``a``, port on ``b``) names of the cables between two adjacent tiers."""
    up, down = links
    return up.get(a, {}).get(b) or down.get(a, {}).get(b, ())


def route_layers(fabric: FabricGraph, a: str, b: str) -> list[list[str]]:
    """The switches at each step of the shortest up-down routes from leaf ``a`` to leaf
    ``b``, each layer sorted by ID; empty when none exists (or ``a`` is ``b``).

    Examples
    --------
    >>> route_layers(example_fabric, "switch:leaf01", "switch:leaf02")
    [['switch:leaf01'], ['switch:spine01', 'switch:spine02'], ['switch:leaf02']]
    """
    up = tier_links(fabric)[0]
    climb_a: list[set[str]] = [{a}]
    climb_b: list[set[str]] = [{b}]
    while a != b and climb_a[-1] and climb_b[-1]:
        if len(climb_a) > 1 and climb_a[-1] & climb_b[-1]:
            return _layers(climb_a, climb_b, up)
        climb_a.append({u for v in climb_a[-1] for u in up.get(v, ())})
        climb_b.append({u for v in climb_b[-1] for u in up.get(v, ())})
    return []


def _layers(climb_a: list[set[str]], climb_b: list[set[str]], up: Links
            ) -> list[list[str]]:
    """Keep, on each side, the switches that lead to where both climbs meet."""
    meet = climb_a[-1] & climb_b[-1]
    sides = []
    for climb in (climb_a, climb_b):
        kept = [meet]
        for level in reversed(climb[:-1]):
            kept.append({v for v in level if not kept[-1].isdisjoint(up.get(v, ()))})
        sides.append(kept[::-1])
    ascent, descent = sides
    return [sorted(layer) for layer in ascent + descent[-2::-1]]


def _tier_links(fabric: FabricGraph) -> tuple[Links, Links]:
    nodes, graph = fabric.graph.nodes, fabric.switch_graph
    up: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    down: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for a, b, edge in graph.edges(data=True):
        low, high = sorted((a, b), key=lambda s: nodes[s].get(TIER) or 0)
        tier = nodes[low].get(TIER)
        if tier and nodes[high].get(TIER) == tier + 1:
            ports = edge["ends"]
            low_port, high_port = nodes[ports[low]]["name"], nodes[ports[high]]["name"]
            up[low][high].append((low_port, high_port))
            down[high][low].append((high_port, low_port))
    return _frozen(up), _frozen(down)


def _frozen(table: dict[str, dict[str, list[tuple[str, str]]]]) -> Links:
    return {switch: {far: tuple(found) for far, found in links.items()}
            for switch, links in table.items()}

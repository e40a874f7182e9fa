"""Up-down routes between two leaves of a tiered Clos, layer by layer.

In a leaf-spine (or leaf-spine-super-spine) fabric every shortest route between two leaves
climbs to the lowest tier where switches above both leaves meet, then descends: ECMP hashes
over the switches of each layer and the parallel cables between them. The layers come from
the switches' tiers (see :mod:`topology.roles`) and the usable cables between them, so a
route needs no search over the whole graph: its cost is the size of the layers.
"""

from __future__ import annotations

from collections import defaultdict
from operator import mul

from topology.graph import FabricGraph
from topology.schema import TIER

Links = dict[str, dict[str, tuple[tuple[str, str], ...]]]
"""Switch ID -> each switch one tier away -> the (own port, far port) names of every usable
cable between them whose ports are up."""


def tier_links(fabric: FabricGraph) -> tuple[Links, Links]:
    """The fabric's :data:`Links` one tier up, and one tier down."""
    return fabric.cached(_tier_links)


def remember_tier_links(fabric: FabricGraph, links: tuple[Links, Links]) -> None:
    """Take ``links`` as the fabric's :func:`tier_links` (as a packed snapshot kept them)."""
    fabric.remember(_tier_links, links)


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
    return routes(fabric, a, b)[1]


def routes(fabric: FabricGraph, a: str, b: str) -> tuple[int, list[list[str]]]:
    """The number of cable-level up-down routes from leaf ``a`` to leaf ``b`` and their
    :func:`route_layers`: (0, []) when none exists (or ``a`` is ``b``).

    Both climb to the lowest tier where switches above both leaves meet; a route is a way
    up from ``a`` to a meeting switch and a way down from it to ``b``, so the count is the
    sum over the meeting switches of the product of the leaves' ways up to it. Leaves with
    the same cables up (the leaves of one Clos pod) have the same routes but for their
    ends, so both are found once per pair of such groups and fabric.

    >>> routes(example_fabric, "switch:leaf01", "switch:leaf02")[0]
    2
    """
    if a == b:
        return 0, []
    group = fabric.cached(_groups)
    key = (group[a], group[b])
    memo = fabric.cached(_route_memo)
    found = memo.get(key)
    if found is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        found = memo[key] = _routes(fabric, a, b)
    count, inner = found
    return (count, [[a], *inner, [b]]) if count else (0, [])


_MEMO_LIMIT = 4096
"""Pairs of groups whose routes a fabric remembers (a clean Clos has pods squared)."""


def _route_memo(fabric: FabricGraph) -> dict[tuple[frozenset, frozenset],
                                             tuple[int, list[list[str]]]]:
    return {}


def _routes(fabric: FabricGraph, a: str, b: str) -> tuple[int, list[list[str]]]:
    """The count of routes from ``a`` to ``b`` and the layers between their ends."""
    climb_a, climb_b = climb(fabric, a), climb(fabric, b)
    for depth in range(1, min(len(climb_a), len(climb_b))):
        ways_a, ways_b = climb_a[depth], climb_b[depth]
        meet = [m for m in ways_a if m in ways_b]
        if meet:
            count = sum(map(mul, map(ways_a.__getitem__, meet), map(ways_b.__getitem__, meet)))
            up = tier_links(fabric)[0]
            return count, _layers(climb_a[:depth], climb_b[:depth], meet, up)[1:-1]
    return 0, []


def climb(fabric: FabricGraph, switch: str) -> list[dict[str, int]]:
    """The switches above ``switch``, tier by tier (the first: the switch itself), each with
    its number of cable-level ways up from ``switch``, in ID order.

    Switches with the same cables up climb alike above their own tier, so that part is
    found once per fabric for each such group.
    """
    up = tier_links(fabric)[0]
    climbs = fabric.cached(_climbs)
    key = fabric.cached(_groups)[switch]
    higher = climbs.get(key)
    if higher is None:
        higher = climbs[key] = []
        ways = dict(sorted(key))
        while ways:
            higher.append(ways)
            reached: dict[str, int] = defaultdict(int)
            for v, n in ways.items():
                for u, found in up.get(v, _NOTHING).items():
                    reached[u] += n * len(found)
            ways = dict(sorted(reached.items()))
    return [{switch: 1}, *higher]


_NOTHING: dict[str, tuple[tuple[str, str], ...]] = {}


def _groups(fabric: FabricGraph) -> defaultdict[str, frozenset[tuple[str, int]]]:
    """Switch ID -> its group: the switches a tier above it and its number of cables to
    each (empty for a switch with none)."""
    up = tier_links(fabric)[0]
    table: defaultdict[str, frozenset[tuple[str, int]]] = defaultdict(frozenset)
    table.update((switch, frozenset((v, len(found)) for v, found in above.items()))
                 for switch, above in up.items())
    return table


def _climbs(fabric: FabricGraph) -> dict[frozenset[tuple[str, int]], list[dict[str, int]]]:
    """A group (see :func:`_groups`) -> its climb above its own tier."""
    return {}


def _layers(climb_a: list[dict[str, int]], climb_b: list[dict[str, int]], meet: list[str],
            up: Links) -> list[list[str]]:
    """Keep, on each side, the switches that lead to where both climbs meet (in the climbs'
    ID order)."""
    sides = []
    for climb_side in (climb_a, climb_b):
        kept, above = [meet], set(meet)
        for level in reversed(climb_side):
            kept.append([v for v in level if not above.isdisjoint(up.get(v, ()))])
            above = set(kept[-1])
        sides.append(kept[::-1])
    ascent, descent = sides
    return [*ascent, *descent[-2::-1]]


def _tier_links(fabric: FabricGraph) -> tuple[Links, Links]:
    nodes = fabric.graph.nodes
    up: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    down: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for low, near in fabric.switch_links.items():
        tier = nodes[low].get(TIER)
        for high, found in near.items():
            if tier and nodes[high].get(TIER) == tier + 1:
                for low_port, high_port in found:
                    names = nodes[low_port]["name"], nodes[high_port]["name"]
                    up[low][high].append(names)
                    down[high][low].append(names[::-1])
    return _frozen(up), _frozen(down)


def _frozen(table: dict[str, dict[str, list[tuple[str, str]]]]) -> Links:
    return {switch: {far: tuple(found) for far, found in links.items()}
            for switch, links in table.items()}

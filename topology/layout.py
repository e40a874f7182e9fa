"""Where the fabric map draws each switch, host and cable: layers, orders and coordinates.

Rows from the top: super-spines, spines, leaves, then the hosts. Leaves are grouped by
rail (their lowest rail, from :mod:`topology.roles`); each host NIC (PF) sits under the
leaf it is cabled to, labelled with its node, so host cables never cross. A fabric with
more than ``collapse_over`` host NICs draws one box per leaf for the hosts below it
instead. Within the switch rows, barycentre sweeps order each row by the mean position of
its neighbours in the row above or below (leaves only within their rail), and the order
with the fewest cable crossings wins. Pure: a :class:`FabricGraph` in, a :class:`Layout`
out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from topology.graph import FabricGraph
from topology.schema import KIND, RAILS, ROLE, STATUS, NodeKind, SwitchRole, switch_id

__all__ = ["BANDS", "Box", "Cable", "Layout", "band", "crossings", "drawn_rows", "layout",
           "naive_rows", "order_rows"]

ROWS = tuple(r.value for r in (SwitchRole.UNKNOWN, SwitchRole.SUPER_SPINE, SwitchRole.SPINE,
                               SwitchRole.LEAF))
"""The switch rows, top to bottom (switches of unknown role on their own row on top)."""
LEAF = SwitchRole.LEAF.value
HOSTS = "hosts"
"""The row below the leaves: host NICs, or per-leaf host boxes when collapsed."""
COLLAPSE_OVER = 256
SLOT = 18.0
"""Width of a host NIC's slot (px)."""
SWITCH_SLOT = 64.0
"""The least width of a switch's slot (px)."""
ROW_GAP = 150.0
MARGIN = 40.0
SWEEPS = 6
HOT_COLOUR = "#b03a2e"
BANDS: tuple[tuple[float | None, str, str], ...] = (
    (0.25, "#b8c4cf", "≤25%"), (0.5, "#7fb3a6", "≤50%"), (0.75, "#3f9a8a", "≤75%"),
    (0.9, "#e0a43a", "≤90%"), (1.0, "#d9661f", "≤100%"), (None, HOT_COLOUR, "over 100%"))
"""How a cable is coloured by its utilisation: up to each bound (None: any), a colour (a
calm grey-teal, warming past 75 %) and its legend."""


@dataclass(frozen=True, slots=True)
class Box:
    """Something drawn: a switch (``id`` its node ID), a host NIC (its PF's ID) or the
    collapsed hosts of a leaf (``hosts:LEAF``); ``x``, ``y`` its centre."""

    id: str
    label: str
    row: str
    x: float
    y: float
    rail: int = 0
    count: int = 1


@dataclass(frozen=True, slots=True)
class Cable:
    """A cable: ``a`` the port of the lower end (``leaf01:Ethernet9``), ``b`` the far end
    (a port or a PF, ``spine01:Ethernet1``, ``gpu01:ens1f0np0``), the boxes they are drawn
    from, its tier and its LLDP status."""

    a: str
    b: str
    a_box: str
    b_box: str
    tier: str
    status: str


@dataclass(frozen=True, slots=True)
class Layout:
    """The whole picture: its size, every box and cable, whether hosts are collapsed, and
    each rail's span of the leaf row (rail, left x, right x)."""

    width: float
    height: float
    boxes: tuple[Box, ...]
    cables: tuple[Cable, ...]
    collapsed: bool
    rails: tuple[tuple[int, float, float], ...]


def layout(fabric: FabricGraph, collapse_over: int = COLLAPSE_OVER) -> Layout:
    """The map's layout of ``fabric`` (see the module docstring).

    Examples
    --------
    >>> [b.label for b in layout(example_fabric).boxes if b.row == "spine"]
    ['spine01', 'spine02']
    """
    graph = fabric.graph
    role = {s: graph.nodes[s].get(ROLE, SwitchRole.UNKNOWN) for s in
            fabric.nodes_of(NodeKind.SWITCH)}
    rail = {s: _rail(graph.nodes[s].get(RAILS, "")) for s in role}
    rows = {r: sorted(s for s in role if role[s] == r) for r in ROWS}
    rows[LEAF].sort(key=lambda s: (rail[s], s))
    links = [(switch_id(graph.nodes[a]["switch"]), switch_id(graph.nodes[b]["switch"]))
             for a, b, _ in _switch_cables(fabric)]
    ordered = order_rows([rows[r] for r in ROWS], links, rail)
    hosts = _hosts(fabric)
    collapsed = sum(len(pfs) for pfs in hosts.values()) > collapse_over
    return _place(fabric, dict(zip(ROWS, ordered, strict=True)), hosts, rail, collapsed)


def naive_rows(fabric: FabricGraph) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """The rows and cables of the naive picture to compare with: switches of each role and
    nodes each in name order, a node drawn once with a cable to each of its leaves."""
    graph = fabric.graph
    rows = [sorted(s for s in fabric.nodes_of(NodeKind.SWITCH)
                   if graph.nodes[s].get(ROLE, SwitchRole.UNKNOWN) == r) for r in ROWS]
    cables = [(switch_id(graph.nodes[a]["switch"]), switch_id(graph.nodes[b]["switch"]))
              for a, b, _ in _switch_cables(fabric)]
    nodes: set[str] = set()
    for port, pf, _ in _host_cables(fabric):
        node = "node:" + graph.nodes[pf]["node"]
        nodes.add(node)
        cables.append((switch_id(graph.nodes[port]["switch"]), node))
    return [*rows, sorted(nodes)], cables


def band(utilization: float) -> str:
    """The colour of a utilisation (:data:`BANDS`).

    >>> band(0.1), band(0.87654), band(1.2)
    ('#b8c4cf', '#e0a43a', '#b03a2e')
    """
    return next(c for bound, c, _ in BANDS if bound is None or utilization <= bound)


def drawn_rows(drawn: Layout) -> tuple[list[list[str]], list[tuple[str, str]]]:
    """The rows (box IDs, left to right) and cables (box to box) of a layout, to count
    its :func:`crossings`."""
    rows: dict[str, list[Box]] = defaultdict(list)
    for box in drawn.boxes:
        rows[box.row].append(box)
    ordered = [sorted(rows[r], key=lambda b: b.x) for r in (*ROWS, HOSTS) if rows[r]]
    return [[b.id for b in row] for row in ordered], [(c.a_box, c.b_box) for c in drawn.cables]


def crossings(rows: Sequence[Sequence[str]], cables: Sequence[tuple[str, str]]) -> int:
    """How many pairs of cables cross, drawn straight between adjacent rows in the given
    orders (cables between rows that are not adjacent, or within a row, are not counted).

    >>> crossings([["a", "b"], ["c", "d"]], [("a", "d"), ("b", "c"), ("a", "c")])
    1
    """
    where = {item: (row, i) for row, items in enumerate(rows) for i, item in enumerate(items)}
    between: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b in cables:
        (ra, ia), (rb, ib) = where[a], where[b]
        if abs(ra - rb) == 1:
            upper, lower = ((ia, ib), (ib, ia))[ra > rb]
            between[min(ra, rb)].append((upper, lower))
    return sum(_inversions(sorted(pairs)) for pairs in between.values())


def _inversions(pairs: list[tuple[int, int]]) -> int:
    """Pairs i < j with ``pairs[i][1] > pairs[j][1]``: crossings of cables sorted by their
    upper end (a Fenwick tree over the lower ends)."""
    size = max((lower for _, lower in pairs), default=0) + 1
    tree = [0] * (size + 1)
    found = 0
    for seen, (_, lower) in enumerate(pairs):
        i, not_above = lower + 1, 0
        while i > 0:
            not_above += tree[i]
            i -= i & -i
        found += seen - not_above
        i = lower + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
    return found


def _rail(rails: str) -> int:
    return min((int(r) for r in rails.split(",") if r), default=0)


def _switch_cables(fabric: FabricGraph) -> list[tuple[str, str, dict]]:
    nodes = fabric.graph.nodes
    return [(a, b, edge) for a, b, edge in fabric.cables
            if nodes[a][KIND] == NodeKind.PORT and nodes[b][KIND] == NodeKind.PORT]


def _host_cables(fabric: FabricGraph) -> list[tuple[str, str, dict]]:
    """Port-PF cables as (port, PF, edge)."""
    nodes, found = fabric.graph.nodes, []
    for a, b, edge in fabric.cables:
        kinds = nodes[a][KIND], nodes[b][KIND]
        if kinds == (NodeKind.PORT, NodeKind.PF):
            found.append((a, b, edge))
        elif kinds == (NodeKind.PF, NodeKind.PORT):
            found.append((b, a, edge))
    return found


def _hosts(fabric: FabricGraph) -> dict[str, list[tuple[str, str, dict]]]:
    """Leaf -> its host cables (port, PF, edge), by node then PF name."""
    nodes = fabric.graph.nodes
    found: dict[str, list[tuple[str, str, dict]]] = defaultdict(list)
    for port, pf, edge in _host_cables(fabric):
        found[switch_id(nodes[port]["switch"])].append((port, pf, edge))
    for cables in found.values():
        cables.sort(key=lambda c: (nodes[c[1]]["node"], nodes[c[1]]["name"]))
    return found


def order_rows(rows: list[list[str]], links: list[tuple[str, str]], rail: dict[str, int]
           ) -> list[list[str]]:
    """Barycentre sweeps down and up the rows; the orders with the fewest crossings."""
    neighbours: dict[str, list[str]] = defaultdict(list)
    for a, b in links:
        neighbours[a].append(b)
        neighbours[b].append(a)
    best, fewest = [list(r) for r in rows], crossings(rows, links)
    current = [list(r) for r in rows]
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        for i in (range(1, len(current)) if down else range(len(current) - 2, -1, -1)):
            fixed = current[i - 1] if down else current[i + 1]
            current[i] = _by_barycentre(current[i], fixed, neighbours, rail)
        found = crossings(current, links)
        if found < fewest:
            best, fewest = [list(r) for r in current], found
    return best


def _by_barycentre(row: list[str], fixed: list[str], neighbours: dict[str, list[str]],
                   rail: dict[str, int]) -> list[str]:
    """``row`` sorted by the mean position of each switch's neighbours in ``fixed``
    (keeping its place when it has none there), within its rail."""
    at = {s: i for i, s in enumerate(fixed)}
    scale = len(fixed) / max(len(row), 1)

    def key(item: tuple[int, str]) -> tuple[int, float, int]:
        i, switch = item
        found = [at[n] for n in neighbours[switch] if n in at]
        centre = sum(found) / len(found) if found else i * scale
        return rail.get(switch, 0), centre, i

    return [s for _, s in sorted(enumerate(row), key=key)]


def _place(fabric: FabricGraph, rows: dict[str, list[str]],
           hosts: dict[str, list[tuple[str, str, dict]]], rail: dict[str, int],
           collapsed: bool) -> Layout:
    nodes = fabric.graph.nodes
    used = [r for r in ROWS if rows[r]]
    y = {r: MARGIN + 20 + n * ROW_GAP for n, r in enumerate([*used, HOSTS])}
    leaves = rows[LEAF]
    widths = [SWITCH_SLOT if collapsed else max(SWITCH_SLOT, SLOT * len(hosts.get(s, ())))
              for s in leaves]
    width = max([sum(widths)] + [SWITCH_SLOT * len(rows[r]) for r in used]) + 2 * MARGIN
    boxes: list[Box] = []
    cables: list[Cable] = []
    spans: dict[int, list[float]] = {}
    left = (width - sum(widths)) / 2
    for leaf, slot in zip(leaves, widths, strict=True):
        centre = left + slot / 2
        boxes.append(Box(leaf, nodes[leaf]["name"], LEAF, centre,
                         y[LEAF], rail[leaf]))
        span = spans.setdefault(rail[leaf], [left, left + slot])
        span[1] = left + slot
        below = hosts.get(leaf, [])
        if collapsed and below:
            group = "hosts:" + nodes[leaf]["name"]
            boxes.append(Box(group, f"{len(below)} NICs", HOSTS, centre, y[HOSTS], rail[leaf],
                             len(below)))
        for k, (port, pf, edge) in enumerate(below):
            box = group if collapsed else pf
            if not collapsed:
                boxes.append(Box(pf, nodes[pf]["node"], HOSTS,
                                 centre + (k - (len(below) - 1) / 2) * SLOT, y[HOSTS],
                                 nodes[pf].get("nic_index", 0)))
            cables.append(Cable(_label(nodes[port]), _label(nodes[pf]), leaf, box, "host",
                                edge[STATUS]))
        left += slot
    for r in used:
        if r == LEAF:
            continue
        step = (width - 2 * MARGIN) / len(rows[r])
        boxes += [Box(s, nodes[s]["name"], r, MARGIN + (i + 0.5) * step, y[r])
                  for i, s in enumerate(rows[r])]
    row_of = {b.id: used.index(b.row) for b in boxes if b.row in used}
    for a, b, edge in _switch_cables(fabric):
        sa, sb = (switch_id(nodes[p]["switch"]) for p in (a, b))
        if row_of.get(sa, 0) < row_of.get(sb, 0):
            a, b, sa, sb = b, a, sb, sa
        cables.append(Cable(_label(nodes[a]), _label(nodes[b]), sa, sb,
                            edge.get("tier", ""), edge[STATUS]))
    cables.sort(key=lambda c: (c.tier != "host", _natural(c.a)))
    height = y[HOSTS] + (MARGIN + 60 if not collapsed else MARGIN + 20)
    return Layout(round(width, 1), height, tuple(boxes), tuple(cables), collapsed,
                  tuple((r, s[0], s[1]) for r, s in sorted(spans.items())))


def _label(attrs: dict) -> str:
    """``leaf01:Ethernet9`` for a port, ``gpu01:ens1f0np0`` for a PF."""
    return f"{attrs.get('switch') or attrs.get('node')}:{attrs['name']}"


def _natural(text: str) -> tuple[str | int, ...]:
    """A sort key reading digit runs as numbers (``Ethernet9`` before ``Ethernet10``)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))

"""Graph export: GraphML, GEXF, node-link JSON, DOT and Cytoscape.js JSON.

Optionally only some node kinds, and with the heat of an interval: each cable's
``utilization`` (of its busier direction) and ``hotspot`` (its severity) as edge
attributes, which DOT draws as colours (:data:`topology.layout.BANDS`) and hot labels.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path

import networkx as nx

from inventory.files import replace_file
from topology.graph import FabricGraph
from topology.layout import HOT_COLOUR, band
from topology.schema import (
    KIND,
    ROLE,
    STATUS,
    EdgeKind,
    LinkStatus,
    NodeKind,
    SwitchRole,
    id_name,
    switch_id,
)

# DOT layers, top to bottom: switch roles first, then the other node kinds. Ports are not a
# layer: they sort just below their switch and Graphviz ranks them from their cables.
_LAYERS: tuple[str, ...] = (
    SwitchRole.SUPER_SPINE, SwitchRole.SPINE, SwitchRole.LEAF, NodeKind.NODE, NodeKind.PF,
    NodeKind.VF, NodeKind.POD_INTERFACE, NodeKind.POD, NodeKind.JOB, NodeKind.TENANT,
)
_NODE_STYLE = {
    NodeKind.SWITCH: 'shape=box, style="rounded,filled", fillcolor="#9ecae1"',
    NodeKind.PORT: 'shape=ellipse, style=filled, fillcolor="#deebf7", fontsize=8',
    NodeKind.NODE: 'shape=box3d, style=filled, fillcolor="#c7e9c0"',
    NodeKind.PF: 'shape=hexagon, style=filled, fillcolor="#a1d99b"',
    NodeKind.VF: 'shape=ellipse, style=filled, fillcolor="#e5f5e0", fontsize=8',
    NodeKind.POD_INTERFACE: 'shape=ellipse, style=filled, fillcolor="#fee6ce", fontsize=8',
    NodeKind.POD: 'shape=component, style=filled, fillcolor="#fdae6b"',
    NodeKind.JOB: 'shape=folder, style=filled, fillcolor="#dadaeb"',
    NodeKind.TENANT: 'shape=house, style=filled, fillcolor="#bcbddc"',
}
_CABLE_STYLE = {
    LinkStatus.CONFIRMED: "style=bold",
    LinkStatus.ONE_SIDED: 'style="bold,dashed"',
    LinkStatus.CONFLICT: "style=bold, color=red",
}
_OTHER_EDGE_STYLE = "style=dotted, color=gray"
UTILIZATION, HOTSPOT = "utilization", "hotspot"
"""The edge attributes a cable gets from the heat of an interval."""
Heat = Mapping[frozenset[str], tuple[float | None, str]]
"""A cable's two ends (node IDs) -> the utilisation of its busier direction (None: not
measured) and the severity of its hotspot ("" when it is not hot)."""


def render(fabric: FabricGraph, fmt: str, kinds: frozenset[str] | None = None,
           heat: Heat | None = None) -> bytes:
    """Render the fabric graph in one export format.

    Parameters
    ----------
    fabric : FabricGraph
        The built fabric: its graph, with every configured VF (those no pod interface
        uses are added from ``fabric.vfs`` with their ``vf-of`` edges).
    fmt : str
        One of :data:`FORMATS`.
    kinds : frozenset of str, optional
        Only the nodes of these kinds (:class:`NodeKind` values) and the edges between
        them; default every node.
    heat : Heat, optional
        An interval's cables: their edges get ``utilization`` and ``hotspot``.

    Returns
    -------
    bytes
        The document, UTF-8 encoded.

    Raises
    ------
    ValueError
        If ``fmt`` is not one of :data:`FORMATS`.
    """
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}") from None
    graph = whole_graph(fabric)
    if kinds is not None:
        graph = graph.subgraph([n for n, kind in graph.nodes(data=KIND) if kind in kinds])
    if heat:
        graph = graph.copy()
        for cable, (utilization, severity) in heat.items():
            a, b = cable
            if graph.has_edge(a, b):
                edge = graph.edges[a, b]
                if utilization is not None:
                    edge[UTILIZATION] = round(utilization, 4)
                if severity:
                    edge[HOTSPOT] = severity
    return renderer(graph)


def node_kinds(text: str) -> frozenset[str]:
    """Node kinds from a comma-separated list (``switch,port``).

    >>> sorted(node_kinds("switch, port"))
    ['port', 'switch']
    >>> node_kinds("switches")
    Traceback (most recent call last):
    ...
    ValueError: unknown node kind 'switches' (kinds: tenant, job, pod, ..., switch, port)
    """
    found = frozenset(k.strip() for k in text.split(",") if k.strip())
    for kind in sorted(found):
        if kind not in NodeKind.__members__.values():
            raise ValueError(f"unknown node kind {kind!r} (kinds: "
                             f"{', '.join(NodeKind.__members__.values())})")
    if not found:
        raise ValueError("no node kind given")
    return found


def whole_graph(fabric: FabricGraph) -> nx.Graph:
    """The fabric graph with every configured VF as a node: a new graph when some VFs live
    in the VF table only, else the fabric's own."""
    vfs, graph = fabric.vfs, fabric.graph
    unused = [row for row in range(len(vfs)) if vfs.node_id(row) not in graph]
    if not unused:
        return graph
    whole = graph.copy()
    whole.add_nodes_from((vfs.node_id(row), vfs.attrs(row)) for row in unused)
    whole.add_edges_from((vfs.node_id(row), vfs.pf_id(row), {KIND: EdgeKind.VF_OF.value})
                         for row in unused)
    return whole


def export_graph(fabric: FabricGraph, fmt: str, path: str | Path,
                 kinds: frozenset[str] | None = None, heat: Heat | None = None) -> None:
    """Write the fabric graph to ``path`` in one export format.

    Parameters
    ----------
    fabric : FabricGraph
        The built fabric, exported as :func:`render` does.
    fmt : str
        One of :data:`FORMATS`.
    path : str or Path
        The file to write (replaced if it exists).
    kinds : frozenset of str, optional
        Only the nodes of these kinds, as for :func:`render`.
    heat : Heat, optional
        An interval's cables, as for :func:`render`.

    Raises
    ------
    ValueError
        If ``fmt`` is not one of :data:`FORMATS`; nothing is written then.
    WriteError
        If ``path`` cannot be written (a missing folder, a directory, no permission).
    """
    replace_file(path, render(fabric, fmt, kinds, heat))


def _graphml(graph: nx.Graph) -> bytes:
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)  # ints as "long", floats as "double": read back as is
    return buffer.getvalue()


def _gexf(graph: nx.Graph) -> bytes:
    buffer = io.BytesIO()
    nx.write_gexf(graph, buffer)
    return buffer.getvalue()


def _node_link(graph: nx.Graph) -> bytes:
    return json.dumps(nx.node_link_data(graph, edges="edges"), separators=(",", ":")).encode()


def _cytoscape(graph: nx.Graph) -> bytes:
    data = nx.cytoscape_data(graph)
    for element in data["elements"]["nodes"]:
        attrs = graph.nodes[element["data"]["value"]]
        classes = [attrs[KIND]] + ([attrs[ROLE]] if attrs[KIND] == NodeKind.SWITCH else [])
        element["classes"] = " ".join(classes)
    return json.dumps(data, separators=(",", ":")).encode()


def _dot(graph: nx.Graph) -> bytes:
    layer = {n: _layer(graph, n) for n in graph}
    lines = ["graph fabric {", "  rankdir=TB; nodesep=0.1;"]
    lines += [f"  {_quote(n)} [label={_quote(_dot_label(graph, n))}, "
              f"{_NODE_STYLE.get(kind, '')}];" for n, kind in graph.nodes(data=KIND)]
    for index in range(len(_LAYERS)):
        members = " ".join(_quote(n) + ";" for n in graph if layer[n] == index)
        if members:
            lines.append(f"  {{ rank=same; {members} }}")
    for a, b, edge in graph.edges(data=True):
        a, b = sorted((a, b), key=layer.__getitem__)  # Graphviz ranks an edge's tail higher
        style = (_cable_style(edge) if edge[KIND] == EdgeKind.CABLED else _OTHER_EDGE_STYLE)
        lines.append(f"  {_quote(a)} -- {_quote(b)} [{style}];")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode()


def _cable_style(edge: dict) -> str:
    """A cable by its LLDP status; with heat, coloured by utilisation, a hot one red and
    labelled with its severity."""
    style = _CABLE_STYLE.get(edge.get(STATUS), "style=bold")
    if HOTSPOT in edge:
        return (f'{style}, color="{HOT_COLOUR}", penwidth=4, label="hot: {edge[HOTSPOT]}", '
                f'fontcolor="{HOT_COLOUR}"')
    if UTILIZATION in edge:
        width = 1 + 3 * min(1.0, edge[UTILIZATION])
        return f'{style}, color="{band(edge[UTILIZATION])}", penwidth={width:.1f}'
    return style


def _dot_label(graph: nx.Graph, node: str) -> str:
    """The node's readable ID; a port, drawn just below its switch, only its own name."""
    attrs = graph.nodes[node]
    return attrs.get("name") or id_name(node) if attrs[KIND] == NodeKind.PORT else id_name(node)


def _layer(graph: nx.Graph, node: str) -> float:
    """The node's index in ``_LAYERS``; a port gets its switch's index plus one half."""
    attrs = graph.nodes[node]
    if attrs[KIND] == NodeKind.PORT:
        switch = switch_id(attrs.get("switch", ""))
        return _layer(graph, switch) + 0.5 if switch in graph else len(_LAYERS)
    if attrs[KIND] == NodeKind.SWITCH:
        role = attrs.get(ROLE)
        return _LAYERS.index(role) if role in _LAYERS else _LAYERS.index(SwitchRole.LEAF)
    return _LAYERS.index(attrs[KIND]) if attrs[KIND] in _LAYERS else len(_LAYERS)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_RENDERERS: dict[str, Callable[[nx.Graph], bytes]] = {
    "graphml": _graphml,
    "gexf": _gexf,
    "json": _node_link,
    "dot": _dot,
    "cytoscape": _cytoscape,
}
FORMATS: tuple[str, ...] = tuple(_RENDERERS)

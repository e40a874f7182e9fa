"""Cabling plan check: the cables a plan lists against the cables LLDP discovered.

A plan is a YAML list of cables, each two endpoints ``DEVICE:PORT``: a switch port
(``leaf01:Ethernet49``) or a host NIC port (``gpu01:ens1f0np0``)::

    - [leaf01:Ethernet49, spine01:Ethernet1]
    - [gpu01:ens1f0np0, leaf01:Ethernet1]

Each planned cable is found as planned, *missing* (neither end is cabled), or *miswired*
(an end is cabled to something else: one record per such end). A discovered cable that
touches no planned endpoint is *unexpected*. Every discovered cable counts, whatever its
LLDP status, and is reported with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import yaml

from inventory.errors import ConfigError
from topology.graph import FabricGraph
from topology.schema import (
    KIND,
    STATUS,
    TIER,
    EdgeKind,
    NodeKind,
    node_id,
    pf_id,
    port_id,
    switch_id,
)

__all__ = ["MissingCable", "Miswire", "PlanReport", "PlannedCable", "UnexpectedCable",
           "check_plan", "parse_plan"]


@dataclass(frozen=True, slots=True)
class PlannedCable:
    """One plan entry (``entry`` counts from 0): endpoints ``a`` and ``b`` as DEVICE:PORT."""

    a: str
    b: str
    entry: int


@dataclass(frozen=True, slots=True)
class MissingCable:
    """A planned cable with neither end cabled; ``note`` names ends the fabric lacks."""

    a: str
    b: str
    entry: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class Miswire:
    """A planned endpoint cabled to something other than its planned peer."""

    port: str
    planned_peer: str
    actual_peer: str
    status: str
    entry: int


@dataclass(frozen=True, slots=True)
class UnexpectedCable:
    """A discovered cable the plan does not list and that touches no planned endpoint."""

    a: str
    b: str
    status: str
    tier: str


@dataclass(frozen=True, slots=True)
class PlanReport:
    """How the discovered fabric differs from the plan; ``ok`` when it does not."""

    planned: int
    as_planned: int
    missing: tuple[MissingCable, ...]
    miswired: tuple[Miswire, ...]
    unexpected: tuple[UnexpectedCable, ...]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.miswired or self.unexpected)


def parse_plan(text: str, origin: str) -> tuple[PlannedCable, ...]:
    """The cables of a plan document; ``origin`` (the file name) goes into errors.

    Raises
    ------
    ConfigError
        Naming ``origin``, the entry and its line, and the reason: not YAML, not a list,
        an entry that is not two ``DEVICE:PORT`` strings, a cable from a port to itself,
        or a port planned twice.

    Examples
    --------
    >>> parse_plan("- [leaf01:Ethernet2, spine01:Ethernet1]", "plan.yaml")
    (PlannedCable(a='leaf01:Ethernet2', b='spine01:Ethernet1', entry=0),)
    >>> parse_plan("- [leaf01:Ethernet2, spine01:Ethernet1]\\n- [leaf01, spine02:Ethernet1]",
    ...            "plan.yaml")
    Traceback (most recent call last):
    ...
    inventory.errors.ConfigError: plan.yaml: entry 1 (line 2): 'leaf01' is not DEVICE:PORT
    """
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        document = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        raise ConfigError(origin, "", f"not YAML: {exc}") from exc
    finally:
        loader.dispose()
    if not isinstance(document, list) or not document:
        raise ConfigError(origin, "", "expected a non-empty list of cables, "
                          "each [DEVICE:PORT, DEVICE:PORT]")
    cables: list[PlannedCable] = []
    seen: dict[str, int] = {}
    for entry, (item, node) in enumerate(zip(document, root.value, strict=True)):
        where = f"entry {entry} (line {node.start_mark.line + 1})"
        if not isinstance(item, list) or len(item) != 2:
            raise ConfigError(origin, where, "expected a list of two endpoints "
                              f"[DEVICE:PORT, DEVICE:PORT], got {item!r}")
        if item[0] == item[1]:
            raise ConfigError(origin, where, f"a cable from {item[0]} to itself")
        for end in item:
            device, _, port = end.partition(":") if isinstance(end, str) else ("", "", "")
            if not device.strip() or not port.strip():
                raise ConfigError(origin, where, f"{end!r} is not DEVICE:PORT")
            if end in seen:
                raise ConfigError(origin, where, f"{end} is already planned in entry "
                                  f"{seen[end]}")
            seen[end] = entry
        cables.append(PlannedCable(item[0], item[1], entry))
    return tuple(cables)


def check_plan(fabric: FabricGraph, plan: tuple[PlannedCable, ...],
               hosts: bool = False) -> PlanReport:
    """Compare the cables of ``fabric`` with ``plan``.

    Unexpected cables are those between switches, and with ``hosts`` also those between a
    switch and a host; cables the plan lists are checked either way.

    Examples
    --------
    >>> plan = parse_plan('''
    ... - [leaf01:Ethernet2, spine01:Ethernet1]
    ... - [leaf01:Ethernet3, spine02:Ethernet2]
    ... - [leaf02:Ethernet2, spine01:Ethernet2]
    ... ''', "plan.yaml")
    >>> report = check_plan(example_fabric, plan)
    >>> report.as_planned, report.missing
    (2, ())
    >>> [(m.port, m.planned_peer, m.actual_peer) for m in report.miswired]
    [('leaf01:Ethernet3', 'spine02:Ethernet2', 'spine02:Ethernet1'),
     ('spine02:Ethernet2', 'leaf01:Ethernet3', 'leaf02:Ethernet3')]
    >>> report.unexpected
    ()
    """
    graph = fabric.graph
    planned_ids = {end: _endpoint_id(graph, end) for cable in plan for end in (cable.a, cable.b)}
    missing: list[MissingCable] = []
    miswired: list[Miswire] = []
    as_planned = 0
    for cable in plan:
        a, b = planned_ids[cable.a], planned_ids[cable.b]
        found = graph.has_edge(a, b) and graph.edges[a, b][KIND] == EdgeKind.CABLED
        as_planned += found
        wrong = [Miswire(_label(graph, end), _label(graph, peer), _label(graph, other),
                         edge[STATUS], cable.entry)
                 for end, peer in ((a, b), (b, a))
                 for other, edge in _cables(graph, end) if other != peer]
        miswired += wrong
        if not wrong and not found:
            unknown = [end for end in (cable.a, cable.b) if planned_ids[end] not in graph]
            note = f"not in the fabric: {', '.join(unknown)}" if unknown else ""
            missing.append(MissingCable(cable.a, cable.b, cable.entry, note))
    planned = set(planned_ids.values())
    unexpected = [
        UnexpectedCable(*sorted((_label(graph, a), _label(graph, b))), edge[STATUS],
                        edge.get(TIER, ""))
        for a, b, edge in graph.edges(data=True)
        if edge[KIND] == EdgeKind.CABLED and a not in planned and b not in planned
        and (hosts or graph.nodes[a][KIND] == graph.nodes[b][KIND] == NodeKind.PORT)
    ]
    return PlanReport(len(plan), as_planned, tuple(missing), tuple(miswired),
                      tuple(sorted(unexpected, key=lambda u: (u.a, u.b))))


def _endpoint_id(graph: nx.Graph, endpoint: str) -> str:
    """The node ID of ``DEVICE:PORT``: a host's PF when DEVICE is a known host, else a port."""
    device, _, name = endpoint.partition(":")
    if node_id(device) in graph and switch_id(device) not in graph:
        return pf_id(device, name)
    return port_id(device, name)


def _cables(graph: nx.Graph, endpoint: str) -> list[tuple[str, dict]]:
    if endpoint not in graph:
        return []
    return sorted(((other, edge) for other, edge in graph.adj[endpoint].items()
                   if edge[KIND] == EdgeKind.CABLED), key=lambda cable: cable[0])


def _label(graph: nx.Graph, node: str) -> str:
    """``leaf01:Ethernet1`` or ``gpu01:ens1f0np0``, also for a node the graph lacks."""
    attrs = graph.nodes.get(node)
    if attrs and "name" in attrs:
        return f"{attrs.get('switch') or attrs.get('node')}:{attrs['name']}"
    device, _, name = node.partition(":")[2].partition("/")
    return f"{device}:{name}"

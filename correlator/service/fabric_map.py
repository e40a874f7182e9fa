"""The fabric map's two JSON documents, from a :class:`View`: pure, no I/O.

- :func:`layout_data`: where every switch, host and cable is drawn
  (:mod:`topology.layout`); changes only with the fabric.
- :func:`state_data`: the last interval on that picture: each cable's utilisation (the
  busier direction's) and both directions' tenants and jobs with their shares and 95 %
  intervals, the active hotspots with culprits and victims, and a timeline of the
  hotspots over the last intervals. A cable is named by its ``a`` end (``leaf01:Ethernet9``);
  a direction, a hotspot and a link by their sending end.

A share is ``[name, share, low, high, samples]`` (share and bounds as fractions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from correlator.attribution.accumulate import IN, OUT
from correlator.attribution.attribute import LinkTraffic
from correlator.attribution.estimate import Share
from correlator.attribution.hotspots import Hotspot, traffic_of
from correlator.collect.rates import Rates
from correlator.service.traffic import label, plain
from correlator.view import View
from topology.graph import FabricGraph
from topology.layout import BANDS, Cable, Layout, layout
from topology.schema import NodeKind, pf_id, port_id

TIMELINE_INTERVALS = 12
"""Intervals the hotspot timeline spans, up to the last one."""


def fabric_layout(fabric: FabricGraph) -> Layout:
    """The fabric's layout, computed once per fabric."""
    return fabric.cached(layout)


def layout_data(fabric: FabricGraph) -> dict[str, Any]:
    """The layout as JSON data: size, rails, boxes and cables."""
    return fabric.cached(_layout_data)


def _layout_data(fabric: FabricGraph) -> dict[str, Any]:
    found = fabric_layout(fabric)
    return {
        "width": found.width, "height": found.height, "collapsed": found.collapsed,
        "bands": [list(b) for b in BANDS],
        "rails": [list(r) for r in found.rails],
        "boxes": [{"id": b.id, "label": b.label, "row": b.row, "x": round(b.x, 1),
                   "y": b.y, "rail": b.rail, "count": b.count} for b in found.boxes],
        "cables": [{"a": c.a, "b": c.b, "from": c.a_box, "to": c.b_box, "tier": c.tier,
                    "status": c.status} for c in found.cables],
        "tenants": sorted(plain(t) for t in fabric.nodes_of(NodeKind.TENANT)),
        "jobs": sorted(plain(j) for j in fabric.nodes_of(NodeKind.JOB)),
    }


_last: tuple[View, int, dict[str, Any]] | None = None
"""The last view's state: every client asking within an interval shares it (megabytes on
a medium fabric)."""


def state_data(view: View, intervals: int = TIMELINE_INTERVALS) -> dict[str, Any]:
    """The last interval on the map (``start`` None and no cables before the first);
    computed once per view."""
    global _last
    last = _last
    if last is not None and last[0] is view and last[1] == intervals:
        return last[2]
    found = _state(view, intervals)
    _last = (view, intervals, found)
    return found


def _state(view: View, intervals: int) -> dict[str, Any]:
    fabric, attribution = view.fabric, view.attribution
    hotspots = [*view.hotspots, *view.ended]
    if attribution is None:
        return {"start": None, "seconds": None, "cables": {},
                "hotspots": [_hotspot(fabric, h) for h in view.hotspots],
                "timeline": {"from": None, "to": None, "bars": []}}
    table = {(link.port, link.direction): link for link in attribution.links}
    cables = {}
    for cable in fabric_layout(fabric).cables:
        near, far = ends(cable)
        directions = [_direction(traffic_of(table, near, OUT, far), cable.a,
                                 view.rates.get(near), OUT),
                      _direction(traffic_of(table, near, IN, far), cable.b,
                                 view.rates.get(near), IN)]
        known = [d for d in directions if d is not None]
        if known:
            cables[cable.a] = {"utilization": max(d["utilization"] or 0.0 for d in known),
                               "directions": known}
    end = attribution.start + attribution.seconds
    start = end - intervals * attribution.seconds
    bars = [{"link": _sender(fabric, h), "severity": h.severity, "start": max(h.start, start),
             "end": h.end} for h in hotspots if h.end is None or h.end > start]
    return {"start": attribution.start, "seconds": attribution.seconds, "cables": cables,
            "hotspots": [_hotspot(fabric, h) for h in view.hotspots],
            "timeline": {"from": start, "to": end, "bars": bars}}


def ends(cable: Cable) -> tuple[str, str]:
    """The node IDs of a cable's ``a`` end (a port) and ``b`` end (a port or a PF)."""
    far = pf_id if cable.tier == "host" else port_id
    return port_id(*cable.a.split(":", 1)), far(*cable.b.split(":", 1))


def cable_heat(view: View) -> dict[frozenset[str], tuple[float | None, str]]:
    """Each cable with traffic in the last interval, by its ends' node IDs: the utilisation
    of its busier direction and the severity of its hotspot ("" when not hot), as
    :func:`topology.export.render` colours them."""
    state = state_data(view)
    hot = {h["link"]: h["severity"] for h in state["hotspots"]}
    found = {}
    for cable in fabric_layout(view.fabric).cables:
        traffic = state["cables"].get(cable.a)
        severity = hot.get(cable.a) or hot.get(cable.b, "")
        if traffic is not None or severity:
            found[frozenset(ends(cable))] = (
                traffic["utilization"] if traffic is not None else None, severity)
    return found


def _direction(traffic: LinkTraffic | None, sender: str, rates: Rates | None,
               direction: str) -> dict[str, Any] | None:
    """One direction of a cable, sent by ``sender``; ``rates`` are the near end's."""
    utilization = traffic.utilization if traffic is not None else None
    if utilization is None and rates is not None:
        utilization = rates.out_utilization if direction == OUT else rates.in_utilization
    if traffic is None and utilization is None:
        return None
    return {"from": sender, "utilization": utilization,
            "samples": traffic.samples if traffic is not None else 0,
            "tenants": _shares(traffic.tenants if traffic is not None else ()),
            "jobs": _shares(traffic.jobs if traffic is not None else ())}


def _shares(shares: tuple[Share, ...]) -> list[list[Any]]:
    return [[plain(s.name), round(s.share, 4), round(s.share_low, 4), round(s.share_high, 4),
             s.samples] for s in shares]


def _sender(fabric: FabricGraph, hotspot: Hotspot) -> str:
    """The sending end of a hotspot's link direction: the port for ``out``, else its
    peer."""
    end = hotspot.port if hotspot.direction == OUT or not hotspot.peer else hotspot.peer
    return label(fabric, end) if end in fabric.graph else end


def _hotspot(fabric: FabricGraph, hotspot: Hotspot) -> Mapping[str, Any]:
    return {"link": _sender(fabric, hotspot), "severity": hotspot.severity,
            "kinds": list(hotspot.kinds), "start": hotspot.start, "end": hotspot.end,
            "signals": hotspot.signals, "culprits": _shares(hotspot.culprits),
            "culprit_jobs": _shares(hotspot.culprit_jobs),
            "victims": _shares(hotspot.victims), "victim_jobs": _shares(hotspot.victim_jobs),
            "noisy_neighbour": hotspot.noisy_neighbour}

"""Questions about the last attributed interval, answered as plain (JSON-ready) data.

A link is named ``SWITCH:PORT``; both of its directions are read from whichever end of the
cable sampled them (:func:`~correlator.attribution.hotspots.traffic_of`). Fabric-wide
figures are bytes/s summed over the sampled link directions of one tier (``host``,
``leaf-spine``, ``spine-super-spine``), as the exporter's fabric totals: a flow counts once
on every tier it crosses, so tiers are never added up. Tenants, jobs and pods are named
without their ID prefix (``team-a``, ``team-a/llm``); ``unattributed``, ``no-job`` and
``other`` stay as they are; pods are each direction's top K, the rest summed as ``other``.
Link directions and hotspots keep their fields as they are.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from correlator.attribution.accumulate import IN, OUT
from correlator.attribution.attribute import Attribution, LinkTraffic
from correlator.attribution.hotspots import traffic_of
from correlator.data import to_data
from correlator.view import View
from topology.graph import FabricGraph
from topology.resolve import resolve
from topology.schema import KIND, TIER, EdgeKind, NodeKind, id_name

GROUPS = ("tenants", "jobs", "pods")
"""What ``top`` ranks: the :class:`LinkTraffic` share lists of those names."""


def tiers(fabric: FabricGraph) -> dict[str, str]:
    """Port ID -> the tier of its cable ("" if none), for every switch port."""
    graph = fabric.graph
    return {port: next((edge.get(TIER, "") for edge in graph.adj[port].values()
                        if edge[KIND] == EdgeKind.CABLED), "")
            for port in fabric.nodes_of(NodeKind.PORT)}


def fabric_totals(fabric: FabricGraph, attribution: Attribution, group: str
                  ) -> dict[tuple[str, str], float]:
    """(group name as in the shares, tier) -> bytes/s over the tier's sampled directions."""
    return group_totals(fabric, attribution, (group,))[group]


def group_totals(fabric: FabricGraph, attribution: Attribution, groups: tuple[str, ...]
                 ) -> dict[str, dict[tuple[str, str], float]]:
    """:func:`fabric_totals` of several groups, in one pass over the link directions (each
    total summed in the order of the links, its keys in no particular order)."""
    tier_of, seconds = fabric.cached(tiers), attribution.seconds or 1.0
    found: dict[str, dict[str, dict[str, float]]] = {group: {} for group in groups}
    for link in attribution.links:
        tier = tier_of.get(link.port)
        if tier is None or not link.samples:
            continue
        for group in groups:
            totals = found[group].setdefault(tier, {})
            for share in getattr(link, group):
                name = share.name
                totals[name] = totals.get(name, 0.0) + share.bytes / seconds
    return {group: {(name, tier): rate for tier, totals in by_tier.items()
                    for name, rate in totals.items()} for group, by_tier in found.items()}


def plain(name: str) -> str:
    """``tenant:a`` -> ``a``; group names that are no node ID stay as they are."""
    return id_name(name) if ":" in name else name


def label(fabric: FabricGraph, port: str) -> str:
    """``leaf01:Ethernet1`` for a port ID, ``gpu01:ens1f0np0`` for a PF ID."""
    attrs = fabric.attrs(port)
    return f"{attrs.get('switch') or attrs.get('node')}:{attrs['name']}"


def links(attribution: Attribution) -> Any:
    """Every link direction of the interval, with the interval and what was not placed."""
    return to_data(attribution)


def who(fabric: FabricGraph, attribution: Attribution, ref: str) -> dict[str, Any]:
    """Both directions of the link ``ref`` (``SWITCH:PORT``): ``in`` is what the port
    receives, ``out`` what it sends, each ``None`` when nobody sampled or counted it."""
    port, found = _directions(fabric, attribution, ref)
    peer = fabric.peer(port)
    return {"link": label(fabric, port), "peer": label(fabric, peer) if peer else "",
            "start": attribution.start, "seconds": attribution.seconds,
            **{direction: to_data(traffic) for direction, traffic in found.items()}}


def top(fabric: FabricGraph, attribution: Attribution, group: str, ref: str | None,
        limit: int) -> dict[str, Any]:
    """The ``limit`` biggest senders of ``group``: per tier fabric-wide, or per direction
    of the link ``ref`` (their shares with 95 % intervals)."""
    seconds = attribution.seconds or 1.0
    rows: list[dict[str, Any]] = []
    if ref is None:
        by_tier: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for (name, tier), rate in fabric_totals(fabric, attribution, group).items():
            by_tier[tier].append((-rate, plain(name)))
        for tier, ranked in sorted(by_tier.items()):
            rows += [{"tier": tier, "name": name, "bytes_per_second": -rate}
                     for rate, name in sorted(ranked)[:limit]]
        link = None
    else:
        port, found = _directions(fabric, attribution, ref)
        for direction, traffic in found.items():
            shares = getattr(traffic, group) if traffic is not None else ()
            rows += [{"direction": direction, **to_data(share), "name": plain(share.name),
                      "bytes_per_second": share.bytes / seconds} for share in shares[:limit]]
        link = label(fabric, port)
    return {"link": link, "start": attribution.start, "seconds": attribution.seconds,
            "rows": rows}


def jobs(fabric: FabricGraph, attribution: Attribution) -> dict[str, Any]:
    """Every job of the fabric and every job name seen in traffic: kind, tenant, and
    bytes/s by tier."""
    graph, rates = fabric.graph, _by_name(fabric_totals(fabric, attribution, "jobs"))
    rows = []
    for job in _names(fabric, NodeKind.JOB, rates):
        attrs = graph.nodes[job] if job in graph else {}
        rows.append({"job": plain(job), "kind": attrs.get("job_kind", ""),
                     "tenant": attrs.get("tenant", ""), "bytes_per_second": rates.get(job, {})})
    return {"start": attribution.start, "seconds": attribution.seconds, "jobs": rows}


def tenants(fabric: FabricGraph, attribution: Attribution) -> dict[str, Any]:
    """Every tenant of the fabric and every tenant name seen in traffic: its jobs, and
    bytes/s by tier."""
    rates = _by_name(fabric_totals(fabric, attribution, "tenants"))
    rows = []
    for tenant in _names(fabric, NodeKind.TENANT, rates):
        owned = fabric.neighbors_by(tenant, EdgeKind.OWNED_BY, NodeKind.JOB) \
            if tenant in fabric.graph else []
        rows.append({"tenant": plain(tenant), "jobs": sorted(plain(j) for j in owned),
                     "bytes_per_second": rates.get(tenant, {})})
    return {"start": attribution.start, "seconds": attribution.seconds, "tenants": rows}


def hotspots(view: View) -> list[Any]:
    """The active hotspots, then the ended ones, most recently ended first."""
    return to_data([*view.hotspots, *reversed(view.ended)])


def status(view: View) -> dict[str, Any]:
    """Readiness, the last interval, hotspot counts, sFlow totals, collector health."""
    attribution = view.attribution
    interval = None if attribution is None else {
        "start": attribution.start, "seconds": attribution.seconds,
        "provisional": attribution.provisional, "link_directions": len(attribution.links),
        "samples": sum(link.samples for link in attribution.links),
        "unattributed_samples": attribution.unattributed_samples,
        "unknown_port_samples": sum(attribution.unknown_ports.values()),
        "attribution_seconds": view.attribution_s}
    return {"ready": view.ready, "started": view.started, "interval": interval,
            "ports_with_rates": len(view.rates),
            "hotspots": {"active": len(view.hotspots), "ended": len(view.ended),
                         "judged_until": view.judged_until},
            "sflow": to_data(view.sflow),
            "collectors": {name: to_data(view.health[name]) for name in sorted(view.health)}}


def _directions(fabric: FabricGraph, attribution: Attribution, ref: str
                ) -> tuple[str, dict[str, LinkTraffic | None]]:
    port = resolve(fabric, ref, (NodeKind.PORT,))
    table = {(link.port, link.direction): link for link in attribution.links}
    peer = fabric.peer(port) or ""
    return port, {d: traffic_of(table, port, d, peer) for d in (IN, OUT)}


def _by_name(totals: dict[tuple[str, str], float]) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = defaultdict(dict)
    for (name, tier), rate in sorted(totals.items()):
        found[name][tier] = rate
    return found


def _names(fabric: FabricGraph, kind: NodeKind, seen: dict[str, Any]) -> list[str]:
    """The fabric's nodes of ``kind``, then the other names seen in traffic, each sorted."""
    known = sorted(fabric.nodes_of(kind))
    return known + sorted(set(seen) - set(known))

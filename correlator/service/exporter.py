"""Prometheus metrics of a :class:`~correlator.view.View`: a custom collector.

Every metric has the ``fabcorr_`` prefix, base units, ``_total`` for counters and
``_info`` for join metrics. Label sets are bounded by the fabric, not by traffic: link
directions x tenants / jobs / top-K pods, never pod pairs (:data:`METRICS` lists them
with their labels). A link is ``switch`` + ``port``, ``direction`` ``in`` (what the port
receives) or ``out`` (what it sends); the traffic of a cable between two switches is
named by its sender's ``out``, wherever it was sampled, as hotspots are. The cable's
``tier`` (``host``, ``leaf-spine``, ``spine-super-spine``) and peer are labels of
``fabcorr_link_speed_bytes_per_second`` only, to join on: every label costs on every
scrape. Congestion rates that are 0 are left out, and share ratios are only given where
several groups share a direction.

A shard of several (``fabcorr run --shard``) adds the label ``shard`` (its index) to every
series, and exposes each series of the fabric once across the shards: its switches'
ports (line rates, counters, traffic, the hotspots it judges, collector health), the pod
interfaces of its leaves, and the jobs (and pod interfaces without a leaf) whose name
the shard hash gives it. So sums over the shards are the single process's, and joins on
the fabric's series find one series each. A single process has no ``shard`` label.

The exposition of a view is rendered once and served to every scrape until the next
interval replaces the view (:class:`Exposition`); a series' label string is rendered
once and kept while the series lasts (:mod:`~correlator.service.series_text`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from typing import TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from correlator.attribution.attribute import OUTSIDE
from correlator.attribution.hotspots import cable_direction
from correlator.collect.rates import Rates
from correlator.gc_pause import collection_paused
from correlator.service.series_text import Family, Labels, SeriesText
from correlator.service.traffic import group_totals, plain
from correlator.shards import Shard, owner
from correlator.view import View
from inventory.counters import PFC_RX, PFC_TX, QUEUE_DROPPED, QUEUE_ECN
from topology.footprint import owners, plugs
from topology.graph import FabricGraph
from topology.schema import KIND, TIER, EdgeKind, NodeKind, id_name

LINK = ("switch", "port", "direction")
METRICS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "fabcorr_link_bytes_per_second": ("gauge", LINK, "bytes/s from the counters"),
    "fabcorr_link_utilization_ratio": ("gauge", LINK, "bytes/s over line rate"),
    "fabcorr_link_pfc_pause_frames_per_second": (
        "gauge", (*LINK, "priority"),
        "PFC pause frames/s that stopped the direction: received by the port for out, sent "
        "by it for in; absent when 0"),
    "fabcorr_link_ecn_marked_packets_per_second": (
        "gauge", (*LINK, "queue"),
        "ECN-marked packets/s in the port's egress queue (out); absent when 0"),
    "fabcorr_link_discarded_packets_per_second": (
        "gauge", LINK,
        "discarded packets/s (in: in_discards; out: out_discards + queue drops); absent when 0"),
    "fabcorr_link_samples": ("gauge", LINK, "sFlow samples of the direction, last interval"),
    "fabcorr_link_bytes_mismatch": (
        "gauge", LINK,
        "1 when the direction's counter bytes lay outside the sampled estimate's 95% bound "
        "last interval (its bytes are then the estimate), 0 when inside; absent when not "
        "checked (no counters, or under 30 samples)"),
    "fabcorr_link_tenant_bytes_per_second": (
        "gauge", (*LINK, "tenant"), "bytes/s of the tenant's senders, apportioned"),
    "fabcorr_link_tenant_share_ratio": (
        "gauge", (*LINK, "tenant"),
        "the tenant's share of the direction's bytes, on directions several groups share"),
    "fabcorr_link_tenant_share_lower_ratio": (
        "gauge", (*LINK, "tenant"), "lower 95% bound of the share"),
    "fabcorr_link_tenant_share_upper_ratio": (
        "gauge", (*LINK, "tenant"), "upper 95% bound of the share"),
    "fabcorr_link_job_bytes_per_second": (
        "gauge", (*LINK, "namespace", "job"), "bytes/s of the job's senders"),
    "fabcorr_link_pod_bytes_per_second": (
        "gauge", (*LINK, "namespace", "pod"), "bytes/s of the top-K pods, the rest as other"),
    "fabcorr_tenant_fabric_bytes_per_second": (
        "gauge", ("tenant", "tier"), "the tenant's bytes/s summed over the links of a tier"),
    "fabcorr_job_fabric_bytes_per_second": (
        "gauge", ("namespace", "job", "tenant", "tier"), "the job's bytes/s over a tier"),
    "fabcorr_hotspot_active": (
        "gauge", (*LINK, "kinds", "severity"), "1 for every active hotspot"),
    "fabcorr_hotspot_start_timestamp_seconds": ("gauge", LINK, "when the hotspot began"),
    "fabcorr_hotspot_culprit_share_ratio": (
        "gauge", (*LINK, "tenant"), "share of a culprit tenant on an active hotspot"),
    "fabcorr_hotspot_victim_share_ratio": (
        "gauge", (*LINK, "tenant"), "share of a victim tenant on an active hotspot"),
    "fabcorr_hotspot_noisy_neighbour": (
        "gauge", (*LINK, "tenant"), "1 when the tenant dominates a link others need"),
    "fabcorr_pod_interface_info": (
        "gauge", ("namespace", "pod", "interface", "ip", "node", "pf", "vf", "leaf",
                  "leaf_port", "job", "tenant"), "joins pods, IPs, VFs, PFs and leaf ports"),
    "fabcorr_job_info": ("gauge", ("namespace", "job", "kind", "tenant"), "jobs"),
    "fabcorr_link_speed_bytes_per_second": (
        "gauge", ("switch", "port", "peer_switch", "peer_port", "tier"),
        "line rate of every cabled switch port; its labels join a link to its peer and tier"),
    "fabcorr_collector_up": ("gauge", ("switch", "protocol"), "1 when telemetry flows"),
    "fabcorr_collector_errors_total": ("counter", ("switch", "kind"), "telemetry errors"),
    "fabcorr_collector_last_success_timestamp_seconds": (
        "gauge", ("switch",), "last counter update"),
    "fabcorr_sflow_datagrams_total": ("counter", (), "sFlow datagrams decoded"),
    "fabcorr_sflow_bytes_total": ("counter", (), "bytes of the datagrams decoded"),
    "fabcorr_sflow_samples_total": ("counter", ("type",), "samples by type"),
    "fabcorr_sflow_rejects_total": ("counter", ("reason",), "rejected datagrams and samples"),
    "fabcorr_sflow_lost_datagrams_total": ("counter", (), "datagrams lost (sequence gaps)"),
    "fabcorr_sflow_agent_restarts_total": ("counter", (), "agents seen restarting"),
    "fabcorr_sflow_agent_dropped_samples_total": ("counter", (), "samples agents shed"),
    "fabcorr_sflow_interleaved_datagrams_total": (
        "counter", (), "datagrams switching between sequences of one agent and sub-agent"),
    "fabcorr_sflow_table_evictions_total": (
        "counter", ("table",), "entries evicted from the bounded sFlow tables, or samples a "
        "full interval table (flows, counters, discards) could not take"),
    "fabcorr_attribution_duration_seconds": ("gauge", (), "time to attribute the interval"),
    "fabcorr_attribution_interval_end_timestamp_seconds": ("gauge", (), "its end"),
    "fabcorr_attribution_unattributed_samples": (
        "gauge", (), "samples of addresses no pod owned, last interval"),
    "fabcorr_attribution_unknown_port_samples": (
        "gauge", (), "samples of ports the topology does not know, last interval"),
    "fabcorr_ready": ("gauge", (), "1 once inventory and discovery are done"),
    "fabcorr_component_up": (
        "gauge", ("component",), "1 while the service's component runs, 0 while it waits "
        "to be restarted after a failure"),
}
"""Name -> (type, labels, help). Counters are listed with their ``_total`` name."""
FABRIC_FAMILIES = ("fabcorr_pod_interface_info", "fabcorr_job_info",
                   "fabcorr_link_speed_bytes_per_second")
"""The families of the fabric alone, whose series change only with it."""
Columns = tuple[list[Labels], list[float]]
"""A family's series as built: their keys (label values) and their values, in order."""
T = TypeVar("T")
EVICTING_TABLES = ("sequences", "sources", "formats", "flows", "counters", "discards")
"""The bounded sFlow tables: loss accounting's and the decoder's (entries evicted), and an
interval's (samples a full one could not take)."""


class ViewCollector:
    """A prometheus-client collector over ``view()``, the service's current view."""

    def __init__(self, view: Callable[[], View]) -> None:
        self._view = view

    def describe(self) -> list[Metric]:
        return []  # families are only known from a view; nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        for family in families(self._view()):
            yield _metric(family)


class Exposition:
    """The text exposition of the current view, rendered once per view: the text
    :func:`~prometheus_client.generate_latest` makes of :attr:`registry`, with every
    series' label string kept from one view to the next (:class:`SeriesText`)."""

    def __init__(self, view: Callable[[], View]) -> None:
        self._view = view
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(ViewCollector(view))
        self._text = SeriesText()
        self._lock = threading.Lock()
        self._rendered: tuple[View | None, bytes] = (None, b"")

    def render(self) -> bytes:
        """The exposition (Prometheus text format 0.0.4) of the current view."""
        view = self._view()
        with self._lock:
            if self._rendered[0] is not view:
                with collection_paused():
                    self._rendered = (view, self._text.render(families(view)))
            return self._rendered[1]


def families(view: View) -> list[Family]:
    """Every family of :data:`METRICS`, in its order, with its series for ``view``
    (a shard's with its ``shard`` label)."""
    columns: dict[str, Columns] = {name: ([], []) for name in METRICS}
    _fill(view, columns)
    if view.shard.count > 1:
        return _labelled(view.shard, columns)
    return [Family(name, kind, labels, text, *columns[name], name in FABRIC_FAMILIES)
            for name, (kind, labels, text) in METRICS.items()]


def _labelled(shard: Shard, columns: dict[str, Columns]) -> list[Family]:
    """The families with the label ``shard`` on every series (the fabric's families
    are series kept per fabric: labelled once, by :func:`_fabric_series`)."""
    index = str(shard.index)
    return [Family(name, kind, (*labels, "shard"), text,
                   columns[name][0] if name in FABRIC_FAMILIES
                   else [(*values, index) for values in columns[name][0]],
                   columns[name][1], name in FABRIC_FAMILIES)
            for name, (kind, labels, text) in METRICS.items()]


def _metric(family: Family) -> Metric:
    metric: Metric
    if family.kind == "counter":
        metric = CounterMetricFamily(family.name.removesuffix("_total"), family.help,
                                     labels=family.labels)
    else:
        metric = GaugeMetricFamily(family.name, family.help, labels=family.labels)
    for labels, value in family.rows:
        metric.add_metric(labels, value)
    return metric


def _add(f: dict[str, Columns], name: str, labels: Labels, value: float) -> None:
    keys, values = f[name]
    keys.append(labels)
    values.append(value)


def _fill(view: View, f: dict[str, Columns]) -> None:
    fabric = view.fabric
    places, links = fabric.cached(_places), fabric.cached(_links)
    _info(fabric, view.shard, f)
    _counters(links, view.rates, f)
    if view.attribution is not None:
        _attribution(fabric, view, f)
    for hotspot in view.hotspots:
        link = places.get(hotspot.port)
        if link is None:
            continue
        labels = (link[0], link[1], hotspot.direction)
        _add(f, "fabcorr_hotspot_active",
             (*labels, ",".join(hotspot.kinds), hotspot.severity), 1)
        _add(f, "fabcorr_hotspot_start_timestamp_seconds", labels, hotspot.start)
        for share in hotspot.culprits:
            _add(f, "fabcorr_hotspot_culprit_share_ratio", (*labels, plain(share.name)),
                 share.share)
        for share in hotspot.victims:
            _add(f, "fabcorr_hotspot_victim_share_ratio", (*labels, plain(share.name)),
                 share.share)
        if hotspot.noisy_neighbour and hotspot.culprits:
            _add(f, "fabcorr_hotspot_noisy_neighbour",
                 (*labels, plain(hotspot.culprits[0].name)), 1)
    _health(view, f)


def _counters(links: dict[str, tuple[Labels, Labels]], rates: dict[str, Rates],
              f: dict[str, Columns]) -> None:
    octets, octet_values = _appends(f, "fabcorr_link_bytes_per_second")
    utilizations, utilization_values = _appends(f, "fabcorr_link_utilization_ratio")
    for port, port_rates in rates.items():
        both = links.get(port)
        if both is None:
            continue
        per_second = port_rates.per_second
        if "in_octets" in per_second:
            octets(both[0])
            octet_values(per_second["in_octets"])
        if port_rates.in_utilization is not None:
            utilizations(both[0])
            utilization_values(port_rates.in_utilization)
        if "out_octets" in per_second:
            octets(both[1])
            octet_values(per_second["out_octets"])
        if port_rates.out_utilization is not None:
            utilizations(both[1])
            utilization_values(port_rates.out_utilization)
        _congested(both, per_second, f)


def _congested(links: tuple[Labels, Labels], per_second: dict[str, float],
               f: dict[str, Columns]) -> None:
    discards: dict[str, float] = {}
    for counter, value in per_second.items():
        if not value:  # quiet ports stay out of the exposition: most are, most of the time
            continue
        congestion = _congestion(counter)
        if congestion is None:
            continue
        family, direction, key = congestion
        labels = links[direction == "out"]
        if family:
            _add(f, family, (*labels, key), value)
        else:
            discards[direction] = discards.get(direction, 0.0) + value
    for direction in sorted(discards):
        _add(f, "fabcorr_link_discarded_packets_per_second", links[direction == "out"],
             discards[direction])


@lru_cache(maxsize=1 << 10)
def _congestion(counter: str) -> tuple[str, str, str] | None:
    """(family, direction, priority or queue) of a congestion counter, family "" for the
    discards summed per direction; None for the other counters."""
    family, _, key = counter.partition("/")
    if family in (PFC_RX, PFC_TX):
        return ("fabcorr_link_pfc_pause_frames_per_second",
                "out" if family == PFC_RX else "in", key)
    if family == QUEUE_ECN:
        return "fabcorr_link_ecn_marked_packets_per_second", "out", key
    if family in ("in_discards", "out_discards", QUEUE_DROPPED):
        return "", "in" if family == "in_discards" else "out", ""
    return None


def _attribution(fabric: FabricGraph, view: View, f: dict[str, Columns]) -> None:
    attribution = view.attribution
    assert attribution is not None
    seconds = attribution.seconds or 1.0
    labels_of = fabric.cached(_directions)
    samples, sample_values = _appends(f, "fabcorr_link_samples")
    mismatch, mismatch_values = _appends(f, "fabcorr_link_bytes_mismatch")
    jobs, job_values = _appends(f, "fabcorr_link_job_bytes_per_second")
    pods, pod_values = _appends(f, "fabcorr_link_pod_bytes_per_second")
    tenants, tenant_values = _appends(f, "fabcorr_link_tenant_bytes_per_second")
    # the three share families have the same series: one list of keys
    shared_keys = f["fabcorr_link_tenant_share_ratio"][0]
    for name in ("fabcorr_link_tenant_share_lower_ratio", "fabcorr_link_tenant_share_upper_ratio"):
        f[name] = (shared_keys, f[name][1])
    shares, share_values = shared_keys.append, f["fabcorr_link_tenant_share_ratio"][1].append
    lows = f["fabcorr_link_tenant_share_lower_ratio"][1].append
    highs = f["fabcorr_link_tenant_share_upper_ratio"][1].append
    for link in attribution.links:
        if not link.samples:
            continue
        labels = labels_of.get((link.port, link.direction))
        if labels is None:
            continue
        samples(labels)
        sample_values(link.samples)
        if link.counter_check:
            mismatch(labels)
            mismatch_values(1.0 if link.counter_check == OUTSIDE else 0.0)
        shared = len(link.tenants) > 1  # shares only where several groups share
        for share in link.tenants:
            tenant = (*labels, _PLAIN[share.name])
            tenants(tenant)
            tenant_values(share.bytes / seconds)
            if shared:
                shares(tenant)
                share_values(share.share)
                lows(share.share_low)
                highs(share.share_high)
        for share in link.jobs:
            jobs((*labels, *_NAMESPACED[share.name]))
            job_values(share.bytes / seconds)
        for share in link.pods:
            pods((*labels, *_NAMESPACED[share.name]))
            pod_values(share.bytes / seconds)
    totals = group_totals(fabric, attribution, ("tenants", "jobs"))
    for (tenant, tier), rate in sorted(totals["tenants"].items()):
        _add(f, "fabcorr_tenant_fabric_bytes_per_second", (plain(tenant), tier), rate)
    tenant_of_job = fabric.cached(_job_tenants)
    for (job, tier), rate in sorted(totals["jobs"].items()):
        _add(f, "fabcorr_job_fabric_bytes_per_second",
             (*_NAMESPACED[job], tenant_of_job.get(job, ""), tier), rate)
    _add(f, "fabcorr_attribution_unattributed_samples", (), attribution.unattributed_samples)
    _add(f, "fabcorr_attribution_unknown_port_samples", (),
         sum(attribution.unknown_ports.values()))
    _add(f, "fabcorr_attribution_interval_end_timestamp_seconds", (),
         attribution.start + attribution.seconds)
    _add(f, "fabcorr_attribution_duration_seconds", (), view.attribution_s)


def _appends(f: dict[str, Columns], name: str) -> tuple[Callable[[Labels], None],
                                                         Callable[[float], None]]:
    """The ``append`` of the family's keys and of its values."""
    keys, values = f[name]
    return keys.append, values.append


def _info(fabric: FabricGraph, shard: Shard, f: dict[str, Columns]) -> None:
    """The fabric's own series (a shard's share, labelled): lists the fabric keeps, the
    same from one view to the next while the fabric is."""
    for name, series in zip(FABRIC_FAMILIES, (_interface_series, _job_series, _link_series),
                            strict=True):
        f[name] = fabric.cached(series if shard.count == 1 else _fabric_series(series, shard))


@cache
def _fabric_series(series: Callable[[FabricGraph], Columns], shard: Shard
                   ) -> Callable[[FabricGraph], Columns]:
    """``series`` of the fabric that ``shard`` exposes, labelled with it: a port's by its
    switch's shard, a pod interface's by its leaf's (by its pod's name without one), a
    job's by its name's."""
    name, index = _OWNED_BY[series], str(shard.index)

    def share(fabric: FabricGraph) -> Columns:
        keys, values = fabric.cached(series)
        owned = [at for at, labels in enumerate(keys)
                 if owner(name(labels), shard.count) == shard.index]
        return [(*keys[at], index) for at in owned], [values[at] for at in owned]
    return share


def _health(view: View, f: dict[str, Columns]) -> None:
    for name, health in sorted(view.health.items()):
        _add(f, "fabcorr_collector_up", (name, health.protocol), 1 if health.up else 0)
        for kind, count in sorted(health.errors.items()):
            _add(f, "fabcorr_collector_errors_total", (name, kind), count)
        if health.last_success is not None:
            _add(f, "fabcorr_collector_last_success_timestamp_seconds", (name,),
                 health.last_success)
    totals = view.sflow
    _add(f, "fabcorr_sflow_datagrams_total", (), totals.datagrams)
    _add(f, "fabcorr_sflow_bytes_total", (), totals.bytes)
    for kind in ("flow", "counters", "discard"):
        _add(f, "fabcorr_sflow_samples_total", (kind,), totals.samples.get(kind, 0))
    for reason, count in sorted(totals.rejects.items()):
        _add(f, "fabcorr_sflow_rejects_total", (reason,), count)
    _add(f, "fabcorr_sflow_lost_datagrams_total", (), totals.lost_datagrams)
    _add(f, "fabcorr_sflow_agent_restarts_total", (), totals.agent_restarts)
    _add(f, "fabcorr_sflow_agent_dropped_samples_total", (), totals.agent_drops)
    _add(f, "fabcorr_sflow_interleaved_datagrams_total", (), totals.interleaved)
    for table in EVICTING_TABLES:
        _add(f, "fabcorr_sflow_table_evictions_total", (table,),
             totals.evictions.get(table, 0))
    _add(f, "fabcorr_ready", (), 1 if view.ready else 0)
    for component, up in sorted(view.components.items()):
        _add(f, "fabcorr_component_up", (component,), 1 if up else 0)


class _Names(dict[str, T]):
    """Share name -> ``make(name)``, made once per name (at most ``limit`` kept: past it,
    all are forgotten): a dict's lookup on every link direction, no call."""

    def __init__(self, make: Callable[[str], T], limit: int) -> None:
        super().__init__()
        self._make, self._limit = make, limit

    def __missing__(self, name: str) -> T:
        if len(self) >= self._limit:
            self.clear()
        made = self[name] = self._make(name)
        return made


def _namespaced(name: str) -> tuple[str, str]:
    """(namespace, name) of a job or pod ID; ("", name) for a group name."""
    namespace, _, rest = plain(name).rpartition("/")
    return namespace, rest


_NAMESPACED = _Names(_namespaced, 1 << 16)
_PLAIN = _Names(plain, 1 << 12)


def _places(fabric: FabricGraph) -> dict[str, tuple[str, str, str, int]]:
    """Port ID -> (switch, port name, tier of its cable, speed), for every switch port."""
    graph, found = fabric.graph, {}
    for port in fabric.nodes_of(NodeKind.PORT):
        attrs = graph.nodes[port]
        tier = next((edge.get(TIER, "") for edge in graph.adj[port].values()
                     if edge[KIND] == EdgeKind.CABLED), "")
        found[port] = (attrs["switch"], attrs["name"], tier, attrs.get("speed_bps") or 0)
    return found


def _links(fabric: FabricGraph) -> dict[str, tuple[Labels, Labels]]:
    """Port ID -> the labels of its in and out directions, for every switch port: the
    same tuples in every view."""
    return {port: ((switch, name, "in"), (switch, name, "out"))
            for port, (switch, name, _, _) in fabric.cached(_places).items()}


def _directions(fabric: FabricGraph) -> dict[tuple[str, str], Labels]:
    """(port ID, direction) -> the labels its traffic is exposed under, for both directions
    of every switch port: the cable's sender's ``out`` (:func:`cable_direction`)."""
    links, peers, found = fabric.cached(_links), fabric.cached(_switch_peers), {}
    for port in links:
        for direction in ("in", "out"):
            named, named_direction = cable_direction(peers, port, direction)
            both = links.get(named)
            if both is not None:
                found[(port, direction)] = both[named_direction == "out"]
    return found


def _switch_peers(fabric: FabricGraph) -> dict[str, str]:
    """Switch port -> the switch port at the far end of its cable."""
    found = {}
    for port in fabric.nodes_of(NodeKind.PORT):
        peer = fabric.peer(port)
        if peer is not None and fabric.kind(peer) == NodeKind.PORT:
            found[port] = peer
    return found


def _interface_series(fabric: FabricGraph) -> Columns:
    graph, table, where = fabric.graph, owners(fabric), plugs(fabric)
    keys = []
    for podif in fabric.nodes_of(NodeKind.POD_INTERFACE):
        attrs, owner, plug = graph.nodes[podif], table.get(podif), where.get(podif)
        ip = (attrs.get("ipv4") or attrs.get("ipv6") or "").split("/")[0]
        leaf_port = graph.nodes[plug.leaf_port] if plug and plug.leaf_port else {}
        keys.append((attrs["namespace"], attrs["pod"], attrs["interface"], ip,
                     attrs.get("node", ""), id_name(plug.pf).partition("/")[2] if plug else "",
                     attrs.get("vf_pci", ""),
                     leaf_port.get("switch", ""),
                     leaf_port.get("name", ""),
                     id_name(owner.job).partition("/")[2] if owner and owner.job else "",
                     id_name(owner.tenant) if owner and owner.tenant else ""))
    return keys, [1.0] * len(keys)


def _job_series(fabric: FabricGraph) -> Columns:
    graph = fabric.graph
    keys = [(a["namespace"], a["name"], a.get("job_kind", ""), a.get("tenant", ""))
            for a in (graph.nodes[j] for j in fabric.nodes_of(NodeKind.JOB))]
    return keys, [1.0] * len(keys)


def _job_tenants(fabric: FabricGraph) -> dict[str, str]:
    graph = fabric.graph
    return {j: graph.nodes[j].get("tenant", "") for j in fabric.nodes_of(NodeKind.JOB)}


def _link_series(fabric: FabricGraph) -> Columns:
    graph, places = fabric.graph, fabric.cached(_places)
    keys: list[Labels] = []
    values: list[float] = []
    for port, (switch, name, tier, speed) in places.items():
        peer = fabric.peer(port)
        if not tier or not speed:  # not cabled, or a speed nobody reported
            continue
        peer_attrs = graph.nodes[peer] if peer else {}
        peer_switch = peer_attrs.get("switch") or peer_attrs.get("node", "")
        keys.append((switch, name, peer_switch, peer_attrs.get("name", ""), tier))
        values.append(speed / 8)
    return keys, values


_OWNED_BY: dict[Callable[[FabricGraph], Columns], Callable[[Labels], str]] = {
    _interface_series: lambda labels: labels[7] or f"{labels[0]}/{labels[1]}",  # leaf, pod
    _job_series: lambda labels: f"{labels[0]}/{labels[1]}",  # namespace/job
    _link_series: lambda labels: labels[0],  # switch
}
"""Per fabric family, the name whose shard exposes a series (:func:`_fabric_series`)."""

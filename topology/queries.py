"""Topology queries: where, path, link, job, tenant, summary. Plain data in, plain data out.

Results name things by their readable names (``leaf01``, ``team-a/w-3``, ``Ethernet1``),
not node IDs; a name that matches nothing raises NotFound with close matches.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from topology.footprint import (
    NOBODY,
    Plug,
    crowd_behind,
    crowd_below,
    leaves_of,
    owners,
    plug_of_vf,
    plugs,
    switches_used,
)
from topology.graph import FabricGraph
from topology.paths import InterfacePaths, interface_paths
from topology.resolve import is_ip, resolve
from topology.schema import (
    KIND,
    NIC_INDEX,
    ROLE,
    STATUS,
    TIER,
    USABLE_LINK,
    EdgeKind,
    NodeKind,
    SwitchRole,
    id_name,
    switch_id,
)


@dataclass(frozen=True, slots=True)
class Attachment:
    """One NIC path of a node: PF, rail, leaf port, VF, and the pod interface using it
    (``valid_until``: when an ended pod gave up its addresses)."""

    node: str
    pf: str
    rail: int
    leaf: str
    leaf_port: str
    vf: str = ""
    pod: str = ""
    interface: str = ""
    ipv4: str = ""
    ipv6: str = ""
    job: str = ""
    tenant: str = ""
    valid_until: float | None = None


@dataclass(frozen=True, slots=True)
class LinkReport:
    """A switch port, the cable on it, and the workloads whose traffic can cross it.

    For a host port these are the pod interfaces on the PF's VFs; for a fabric cable, the
    pod interfaces below its lower end (every flow crossing it has one end there).
    """

    port: str
    role: str
    speed_bps: int
    oper_status: str
    ifindex: int
    peer: str
    peer_kind: str
    status: str
    tier: str
    conflicts: tuple[str, ...]
    interfaces: tuple[str, ...]
    pods: tuple[str, ...]
    jobs: tuple[str, ...]
    tenants: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Footprint:
    """The fabric a set of pods can use: nodes, leaves and their host ports, upper tiers."""

    nodes: tuple[str, ...]
    leaves: tuple[str, ...]
    leaf_ports: tuple[str, ...]
    spines: tuple[str, ...]
    super_spines: tuple[str, ...]
    neighbours: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JobReport:
    """An AI job, its pods and footprint, and the other tenants on its leaves."""

    job: str
    kind: str
    tenant: str
    pods: tuple[str, ...]
    footprint: Footprint


@dataclass(frozen=True, slots=True)
class TenantReport:
    """A tenant, its jobs and pods, and the fabric they use."""

    tenant: str
    jobs: tuple[str, ...]
    pods: tuple[str, ...]
    footprint: Footprint


@dataclass(frozen=True, slots=True)
class Summary:
    """Counts: graph nodes by kind, switches by role, cables by tier and status, problems."""

    nodes: dict[str, int]
    switches: dict[str, int]
    links: dict[str, dict[str, int]]
    problems: dict[str, int]


_WHERE_KINDS = (NodeKind.POD_INTERFACE, NodeKind.POD, NodeKind.NODE, NodeKind.VF, NodeKind.PF)
_ENDPOINT_KINDS = (NodeKind.POD_INTERFACE, NodeKind.POD)


def where(fabric: FabricGraph, ref: str, at: float | None = None) -> list[Attachment]:
    """Where a pod, pod interface, IP (owner at ``at``), VF, PF or node plugs into the fabric.

    >>> [(a.pod, a.interface, a.leaf, a.leaf_port) for a in where(example_fabric, "10.101.0.3")]
    [('a/llm-worker-1', 'net1', 'leaf02', 'Ethernet1')]
    """
    if is_ip(ref):
        owner = fabric.indexes.ips.owner(ref, at)
        if owner is not None:
            return [_attachment(fabric, dataclasses.asdict(owner.fact))]
    node = resolve(fabric, ref, _WHERE_KINDS, at)
    graph = fabric.graph
    if node not in graph:  # a VF no pod interface uses: it lives in the VF table only
        row = fabric.vfs.find_id(node)
        return [] if row is None else [
            _bare(fabric, fabric.vfs.pf_id(row), fabric.vfs.attrs(row)["pci_address"])]
    kind = fabric.kind(node)
    if kind in _ENDPOINT_KINDS:
        return [_attachment(fabric, graph.nodes[i]) for i in _interfaces_of(fabric, node)]
    if kind == NodeKind.VF:
        return _vf_rows(fabric, node)
    pfs = [node] if kind == NodeKind.PF else fabric.neighbors_by(node, EdgeKind.HAS_PORT,
                                                                  NodeKind.PF)
    rows = []
    for pf in sorted(pfs, key=lambda p: graph.nodes[p].get(NIC_INDEX, 0)):
        vfs = sorted(fabric.neighbors_by(pf, EdgeKind.VF_OF, NodeKind.VF),
                     key=lambda v: graph.nodes[v]["vf_index"])
        used = [row for vf in vfs for row in _vf_rows(fabric, vf) if row.pod]
        rows += used or [_bare(fabric, pf)]
    return rows


def paths(fabric: FabricGraph, a: str, b: str, at: float | None = None,
          limit: int = 256) -> list[InterfacePaths]:
    """Equal-cost paths between two pods, pod interfaces or IPs.

    Pods are paired interface by interface on the same rail (``net1`` to ``net1`` on a
    rail-optimized fabric); when no rail is shared, every pair is listed.

    >>> [(id_name(p.source), id_name(p.destination), p.count)
    ...  for p in paths(example_fabric, "a/llm-worker-0", "a/llm-worker-1")]
    [('a/llm-worker-0/net1', 'a/llm-worker-1/net1', 2)]
    """
    sources = _interfaces_of(fabric, resolve(fabric, a, _ENDPOINT_KINDS, at))
    targets = _interfaces_of(fabric, resolve(fabric, b, _ENDPOINT_KINDS, at))
    table = plugs(fabric)
    rail = {i: table[i].rail if i in table else 0 for i in sources + targets}
    pairs = [(s, t) for s in sources for t in targets if rail[s] == rail[t] and s != t]
    if not pairs:
        pairs = [(s, t) for s in sources for t in targets if s != t]
    return [interface_paths(fabric, s, t, limit) for s, t in pairs]


def link(fabric: FabricGraph, ref: str) -> LinkReport:
    """A switch port (``leaf01:Ethernet1``), its cable, and whose traffic can cross it.

    >>> report = link(example_fabric, "spine01:Ethernet1")
    >>> report.peer, report.tier, report.pods, report.tenants
    ('leaf01:Ethernet2', 'leaf-spine', ('a/llm-worker-0',), ('a',))
    """
    port = resolve(fabric, ref, (NodeKind.PORT,))
    graph = fabric.graph
    attrs = graph.nodes[port]
    cables = [(other, edge) for other, edge in graph.adj[port].items()
              if edge[KIND] == EdgeKind.CABLED]
    cables.sort(key=lambda c: c[1][STATUS] not in USABLE_LINK)
    peer, edge = cables[0] if cables else ("", {})
    if not peer:
        crowd = NOBODY
    elif fabric.kind(peer) == NodeKind.PF:
        crowd = crowd_behind(fabric, port)
    else:
        ends = [switch_id(graph.nodes[p]["switch"]) for p in (port, peer)]
        crowd = crowd_below(fabric, min(ends, key=lambda s: graph.nodes[s].get(TIER, 9)))
    return LinkReport(
        port=_port_label(fabric, port), role=attrs.get(ROLE, ""),
        speed_bps=attrs.get("speed_bps", 0), oper_status=attrs.get("oper_status", ""),
        ifindex=attrs.get("ifindex", 0),
        peer=_endpoint_label(fabric, peer) if peer else "",
        peer_kind=fabric.kind(peer) if peer else "", status=edge.get(STATUS, ""),
        tier=edge.get(TIER, ""), conflicts=tuple(_endpoint_label(fabric, o) for o, _ in cables[1:]),
        interfaces=crowd.interfaces, pods=crowd.pods, jobs=crowd.jobs, tenants=crowd.tenants,
    )


def job(fabric: FabricGraph, ref: str) -> JobReport:
    """An AI job (``NAMESPACE/NAME``): pods, footprint, tenants sharing its leaves.

    >>> report = job(example_fabric, "a/llm")
    >>> report.pods, report.footprint.leaves, report.footprint.spines
    (('a/llm-worker-0', 'a/llm-worker-1'), ('leaf01', 'leaf02'), ('spine01', 'spine02'))
    """
    node = resolve(fabric, ref, (NodeKind.JOB,))
    attrs = fabric.attrs(node)
    pods = sorted(fabric.neighbors_by(node, EdgeKind.MEMBER_OF, NodeKind.POD))
    return JobReport(
        job=id_name(node), kind=attrs.get("job_kind", ""), tenant=attrs.get("tenant", ""),
        pods=tuple(id_name(p) for p in pods),
        footprint=_footprint(fabric, pods, attrs.get("tenant", "")),
    )


def tenant(fabric: FabricGraph, ref: str) -> TenantReport:
    """A tenant: its jobs, pods and footprint, and the tenants sharing its leaves."""
    node = resolve(fabric, ref, (NodeKind.TENANT,))
    jobs = sorted(fabric.neighbors_by(node, EdgeKind.OWNED_BY, NodeKind.JOB))
    pods = sorted({p for j in jobs for p in fabric.neighbors_by(j, EdgeKind.MEMBER_OF,
                                                                  NodeKind.POD)}
                  | set(fabric.neighbors_by(node, EdgeKind.OWNED_BY, NodeKind.POD)))
    return TenantReport(
        tenant=id_name(node), jobs=tuple(id_name(j) for j in jobs),
        pods=tuple(id_name(p) for p in pods), footprint=_footprint(fabric, pods, id_name(node)),
    )


def summary(fabric: FabricGraph) -> Summary:
    """Counts of everything in the fabric graph."""
    graph = fabric.graph
    kinds = Counter(kind for _, kind in graph.nodes(data=KIND))
    kinds[NodeKind.VF.value] = len(fabric.vfs)
    roles = Counter(graph.nodes[s].get(ROLE, "") for s in fabric.nodes_of(NodeKind.SWITCH))
    links: dict[str, Counter[str]] = defaultdict(Counter)
    for _, _, edge in graph.edges(data=True):
        if edge[KIND] == EdgeKind.CABLED:
            links[edge.get(TIER, "")][edge[STATUS]] += 1
    return Summary(
        nodes={k.value: kinds[k.value] for k in NodeKind},
        switches={r.value: roles[r.value] for r in SwitchRole if roles[r.value]},
        links={tier: dict(sorted(c.items())) for tier, c in sorted(links.items())},
        problems=dict(sorted(Counter(p.kind for p in fabric.problems).items())),
    )


def _interfaces_of(fabric: FabricGraph, node: str) -> list[str]:
    if fabric.kind(node) == NodeKind.POD_INTERFACE:
        return [node]
    return sorted(fabric.neighbors_by(node, EdgeKind.HAS_INTERFACE, NodeKind.POD_INTERFACE))


def _footprint(fabric: FabricGraph, pods: list[str], own_tenant: str) -> Footprint:
    interfaces = [i for p in pods for i in _interfaces_of(fabric, p)]
    table = plugs(fabric)
    leaves = leaves_of(fabric, interfaces)
    used = switches_used(fabric, leaves)
    by_role: dict[str, list[str]] = defaultdict(list)
    for switch in sorted(used):
        by_role[fabric.attrs(switch).get(ROLE, "")].append(id_name(switch))
    neighbours = {t for leaf in leaves for t in crowd_below(fabric, leaf).tenants}
    return Footprint(
        nodes=tuple(sorted({fabric.attrs(p).get("node", "") for p in pods} - {""})),
        leaves=tuple(id_name(leaf) for leaf in leaves),
        leaf_ports=tuple(sorted({_port_label(fabric, table[i].leaf_port)
                                 for i in interfaces if i in table and table[i].leaf_port})),
        spines=tuple(by_role[SwitchRole.SPINE]),
        super_spines=tuple(by_role[SwitchRole.SUPER_SPINE]),
        neighbours=tuple(sorted(neighbours - {own_tenant})),
    )


def _attachment(fabric: FabricGraph, record: dict[str, Any]) -> Attachment:
    """The attachment row of a pod interface, given its graph attributes or fact fields."""
    plug = plug_of_vf(fabric, record.get("node", ""), record.get("vf_pci", ""))
    podif = f"podif:{record['namespace']}/{record['pod']}/{record['interface']}"
    owner = owners(fabric).get(podif)
    return Attachment(
        **_plug_fields(fabric, record.get("node", ""), plug),
        pod=f"{record['namespace']}/{record['pod']}", interface=record["interface"],
        ipv4=record.get("ipv4") or "", ipv6=record.get("ipv6") or "",
        job=id_name(owner.job) if owner and owner.job else "",
        tenant=id_name(owner.tenant) if owner and owner.tenant else "",
        valid_until=record.get("valid_until"),
    )


def _vf_rows(fabric: FabricGraph, vf: str) -> list[Attachment]:
    """The pod interface using VF ``vf``, or a bare row for the VF when none does."""
    used = fabric.neighbors_by(vf, EdgeKind.ATTACHED, NodeKind.POD_INTERFACE)
    if used:
        return [_attachment(fabric, fabric.attrs(i)) for i in used]
    pf = fabric.first_neighbor(vf, EdgeKind.VF_OF, NodeKind.PF)
    return [_bare(fabric, pf, fabric.attrs(vf)["pci_address"])] if pf else []


def _bare(fabric: FabricGraph, pf: str, vf: str = "") -> Attachment:
    """An attachment row of a PF (or one VF of it) that no pod interface uses."""
    attrs = fabric.attrs(pf)
    port = fabric.peer(pf)
    return Attachment(
        node=attrs["node"], pf=attrs["name"], rail=attrs.get(NIC_INDEX, 0),
        leaf=fabric.attrs(port)["switch"] if port else "",
        leaf_port=fabric.attrs(port)["name"] if port else "", vf=vf,
    )


def _plug_fields(fabric: FabricGraph, node: str, plug: Plug | None) -> dict[str, Any]:
    if plug is None:
        return {"node": node, "pf": "", "rail": 0, "leaf": "", "leaf_port": ""}
    attrs = fabric.graph.nodes
    return {
        "node": node, "pf": attrs[plug.pf]["name"], "rail": plug.rail,
        "leaf": id_name(plug.leaf) if plug.leaf else "",
        "leaf_port": attrs[plug.leaf_port]["name"] if plug.leaf_port else "",
        "vf": attrs[plug.vf]["pci_address"],
    }


def _port_label(fabric: FabricGraph, port: str) -> str:
    attrs = fabric.attrs(port)
    return f"{attrs['switch']}:{attrs['name']}"


def _endpoint_label(fabric: FabricGraph, node: str) -> str:
    attrs = fabric.attrs(node)
    return f"{attrs.get('switch') or attrs.get('node')}:{attrs['name']}"

"""Where workloads sit on the fabric: each pod interface's leaf port, who is below a
switch or behind a host port, and the switches a set of leaves can use (the ECMP footprint).

Every function takes a FabricGraph first and memoizes its derived tables on it;
:func:`prepare` derives them all at once, when a fabric is built or loaded, so that no
query pays for them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from inventory.facts import FactSet, latest_interfaces
from topology.graph import FabricGraph
from topology.schema import (
    NIC_INDEX,
    ROLE,
    TIER,
    EdgeKind,
    NodeKind,
    SwitchRole,
    id_name,
    job_id,
    pod_id,
    podif_id,
    switch_id,
    tenant_id,
    vf_id,
)
from topology.tiers import remember_tier_links, route_layers, tier_links


@dataclass(frozen=True, slots=True)
class Plug:
    """The NIC path of a pod interface: VF, PF, the leaf port its PF is cabled to."""

    vf: str
    pf: str
    rail: int
    leaf_port: str
    leaf: str


@dataclass(frozen=True, slots=True)
class Crowd:
    """The pod interfaces behind a port or below a switch, and their pods, jobs and
    tenants: readable names, each sorted."""

    interfaces: tuple[str, ...]
    pods: tuple[str, ...]
    jobs: tuple[str, ...]
    tenants: tuple[str, ...]


NOBODY = Crowd((), (), (), ())


@dataclass(frozen=True, slots=True)
class Owner:
    """Who a pod interface belongs to (node IDs; job is empty for a job-less pod)."""

    pod: str
    job: str
    tenant: str


def plug_of_vf(fabric: FabricGraph, node: str, pci: str) -> Plug | None:
    """The plug of VF ``pci`` on ``node``; the leaf is empty when its PF is not cabled."""
    vf = vf_id(node, pci)
    if vf in fabric.graph:
        pf = fabric.first_neighbor(vf, EdgeKind.VF_OF, NodeKind.PF)
    else:
        row = fabric.vfs.find(node, pci)
        pf = fabric.vfs.pf_id(row) if row is not None else None
    if pf is None:
        return None
    port = fabric.peer(pf) or ""
    leaf = switch_id(fabric.attrs(port)["switch"]) if port else ""
    return Plug(vf, pf, fabric.attrs(pf).get(NIC_INDEX, 0), port, leaf)


def plugs(fabric: FabricGraph) -> dict[str, Plug]:
    """Pod interface ID -> its plug, for every attached pod interface in the graph."""
    return fabric.cached(_plugs)


def owners(fabric: FabricGraph) -> dict[str, Owner]:
    """Pod interface ID -> the pod, job and tenant it belongs to."""
    return fabric.cached(_owners)


def prepare(fabric: FabricGraph, tables: dict[str, Any] | None = None) -> FabricGraph:
    """Derive every table the queries read, now, or take them from ``tables``, what
    :func:`prepared_tables` gave for the same fabric (a packed snapshot keeps them);
    ``fabric`` itself is returned."""
    if tables is not None:
        _restore(fabric, tables)
    for derive in (_plugs, _owners, _names, _crowds_below, _behind, _groups):
        fabric.cached(derive)
    tier_links(fabric)
    return fabric


def prepared_tables(fabric: FabricGraph) -> dict[str, Any]:
    """The tables :func:`prepare` derives, as plain data (dicts, tuples, strings): each
    distinct crowd once, by its position."""
    crowds = fabric.cached(_crowds_below)
    distinct = {id(crowd): crowd for crowd in crowds.values()}
    position = {key: i for i, key in enumerate(distinct)}
    return {
        "switch_links": fabric.switch_links,
        "tier_links": tier_links(fabric),
        "plugs": {i: (p.vf, p.pf, p.rail, p.leaf_port, p.leaf) for i, p in plugs(fabric).items()},
        "owners": {i: (o.pod, o.job, o.tenant) for i, o in owners(fabric).items()},
        "names": fabric.cached(_names),
        "crowds": ([(c.interfaces, c.pods, c.jobs, c.tenants) for c in distinct.values()],
                   {switch: position[id(crowd)] for switch, crowd in crowds.items()}),
        "behind": dict(fabric.cached(_behind)),
        "groups": fabric.cached(_groups),
    }


def _restore(fabric: FabricGraph, tables: dict[str, Any]) -> None:
    """Remember the tables of :func:`prepared_tables` as ``fabric``'s derived ones."""
    distinct, crowd_of = tables["crowds"]
    crowds = [Crowd(*crowd) for crowd in distinct]
    fabric.remember(_plugs, {i: Plug(*plug) for i, plug in tables["plugs"].items()})
    fabric.remember(_owners, {i: Owner(*owner) for i, owner in tables["owners"].items()})
    fabric.remember(_names, tables["names"])
    fabric.remember(_crowds_below, {switch: crowds[i] for switch, i in crowd_of.items()})
    fabric.remember(_behind, tables["behind"])
    fabric.remember(_groups, tables["groups"])
    remember_tier_links(fabric, tables["tier_links"])
    fabric.remember_switch_links(tables["switch_links"])


def crowd_below(fabric: FabricGraph, switch: str) -> Crowd:
    """Who is plugged into the leaves at or below ``switch`` (by tier)."""
    return fabric.cached(_crowds_below).get(switch, NOBODY)


def crowd_behind(fabric: FabricGraph, port: str) -> Crowd:
    """Who uses the VFs of the PF cabled to the host port ``port`` (made when asked: a
    host port has a NIC's few pod interfaces behind it, a large fabric a hundred thousand
    such ports)."""
    found = fabric.cached(_behind).get(port)
    return _crowd(fabric, found) if found else NOBODY


def leaves_of(fabric: FabricGraph, interfaces: list[str]) -> list[str]:
    """The leaves the given pod interfaces plug into, sorted."""
    table = plugs(fabric)
    return sorted({table[i].leaf for i in interfaces if i in table and table[i].leaf})


def switches_used(fabric: FabricGraph, leaves: list[str]) -> set[str]:
    """Every switch on some up-down route between two of ``leaves``, the leaves included.

    Leaves with the same neighbours (one Clos pod) share the switches between them and
    another such group, so those are found once per pair of groups and fabric (a route
    search between one leaf of each), which keeps a job spanning hundreds of leaves cheap.
    """
    group_of = fabric.cached(_groups)
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for leaf in leaves:
        if leaf in group_of:
            groups[group_of[leaf]].append(leaf)
    between = fabric.cached(_between)
    used = set(leaves)
    pairs = [(g, g) for g, members in groups.items() if len(members) > 1]
    pairs += combinations(groups, 2)
    for pair in pairs:
        inner = between.get(pair)
        if inner is None:
            a, b = groups[pair[0]][0], groups[pair[1]][-1]
            inner = between[pair] = frozenset(
                v for layer in route_layers(fabric, a, b)[1:-1] for v in layer)
        used |= inner
    return used


def _groups(fabric: FabricGraph) -> dict[str, frozenset[str]]:
    """Switch ID -> its neighbours over usable cables (leaves alike in them form a group)."""
    return {switch: frozenset(near) for switch, near in fabric.switch_links.items()}


def _between(fabric: FabricGraph) -> dict[tuple[frozenset[str], frozenset[str]],
                                          frozenset[str]]:
    """The switches between two leaf groups, memoized per fabric as queries ask."""
    return {}


def _plugs(fabric: FabricGraph) -> dict[str, Plug]:
    table = {}
    for podif in fabric.nodes_of(NodeKind.POD_INTERFACE):
        attrs = fabric.attrs(podif)
        plug = plug_of_vf(fabric, attrs.get("node", ""), attrs.get("vf_pci", ""))
        if plug is not None:
            table[podif] = plug
    return table


def _owners(fabric: FabricGraph) -> dict[str, Owner]:
    return owners_of(fabric.facts)


def owners_of(facts: FactSet) -> dict[str, Owner]:
    """:func:`owners` from the facts alone (pod interfaces, pods and jobs), not the graph:
    a shard's leaves out the pod interfaces on the other shards' NICs, whose traffic it
    attributes all the same. The interfaces of a pod share its Owner."""
    jobs = {(job.namespace, job.name): job for job in facts.jobs}
    job_ids = {key: job_id(*key) for key in jobs}
    tenant_ids: dict[str, str] = {}
    by_pod = {}
    for pod in facts.pods:
        key = (pod.namespace, pod.job_name)
        job = jobs.get(key) if pod.job_name else None
        tenant = pod.tenant or (job.tenant if job else "")
        if tenant not in tenant_ids:
            tenant_ids[tenant] = tenant_id(tenant) if tenant else ""
        by_pod[pod.namespace, pod.name] = Owner(
            pod_id(pod.namespace, pod.name), job_ids[key] if job else "", tenant_ids[tenant])
    return {podif_id(i.namespace, i.pod, i.interface): by_pod[i.namespace, i.pod]
            for i in latest_interfaces(facts.pod_interfaces) if (i.namespace, i.pod) in by_pod}


def know_owners(fabric: FabricGraph, facts: FactSet) -> None:
    """Take :func:`owners` from ``facts``, the fabric's pod interfaces, pods and jobs (a
    snapshot's load reads those sections at once, and leaves the others to be read when
    asked for)."""
    fabric.remember(_owners, owners_of(facts))


def _crowds_below(fabric: FabricGraph) -> dict[str, Crowd]:
    """Switch ID -> who is under it: a leaf's own, then downward by tier.

    Switches above the same leaves (the spines of one Clos pod, the super-spines of every
    plane) share one Crowd, so the table stays as small as the distinct leaf sets.
    """
    by_leaf: dict[str, list[str]] = defaultdict(list)
    for podif, plug in plugs(fabric).items():
        if plug.leaf:
            by_leaf[plug.leaf].append(podif)
    graph, links = fabric.graph, fabric.switch_links
    tiers = {s: graph.nodes[s].get(TIER, 0) for s in links}
    leaves: dict[str, frozenset[str]] = {}
    for switch in sorted(links, key=tiers.__getitem__):
        if graph.nodes[switch].get(ROLE) == SwitchRole.LEAF:
            leaves[switch] = frozenset((switch,))
            continue
        lower = [n for n in links[switch] if 0 < tiers[n] < tiers[switch]]
        leaves[switch] = frozenset().union(*(leaves[n] for n in lower))
    shared: dict[frozenset[str], Crowd] = {}
    for below in leaves.values():
        if below not in shared:
            shared[below] = _crowd(fabric, [i for leaf in below for i in by_leaf.get(leaf, ())])
    return {switch: shared[below] for switch, below in leaves.items()}


def _behind(fabric: FabricGraph) -> dict[str, list[str]]:
    """Host port ID -> the pod interfaces on the VFs of the PF cabled to it."""
    by_port: dict[str, list[str]] = defaultdict(list)
    for podif, plug in plugs(fabric).items():
        if plug.leaf_port:
            by_port[plug.leaf_port].append(podif)
    return by_port


def _crowd(fabric: FabricGraph, interfaces: list[str]) -> Crowd:
    table = fabric.cached(_names)
    found = [table.get(i) or (id_name(i), "", "", "") for i in interfaces]
    names, pods, jobs, tenants = zip(*found, strict=True) if found else ((),) * 4
    return Crowd(tuple(sorted(names)),
                 *(tuple(sorted(set(column) - {""})) for column in (pods, jobs, tenants)))


def _names(fabric: FabricGraph) -> dict[str, tuple[str, str, str, str]]:
    """Pod interface ID -> the readable names of it, its pod, job and tenant ('' for none):
    made once, so the crowds of every tier share the strings."""
    return {i: (id_name(i), id_name(o.pod), id_name(o.job) if o.job else "",
                id_name(o.tenant) if o.tenant else "") for i, o in owners(fabric).items()}

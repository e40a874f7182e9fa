"""build_graph: a FactSet in, a FabricGraph out (nodes, edges, reconciled cables, roles)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Container, Iterable, Mapping
from functools import cache
from operator import attrgetter
from typing import Any

import networkx as nx

from inventory.bulk import gc_paused
from inventory.facts import (
    FactSet,
    PodInterfaceFact,
    Reporter,
    latest_interfaces,
    normalize_mac,
)
from inventory.problems import Problem
from topology.elsewhere import HostsHere, add_stand_ins, hosts_here
from topology.footprint import prepare
from topology.graph import FabricGraph, cables_of
from topology.links import EndpointResolver, reconcile_links
from topology.roles import assign_roles
from topology.schema import (
    KIND,
    NIC_INDEX,
    REPORTS,
    SPEED,
    STATUS,
    EdgeKind,
    NodeKind,
    SwitchRole,
    job_id,
    node_id,
    pf_id,
    pod_id,
    podif_id,
    port_id,
    switch_id,
    tenant_id,
    vf_id,
)

_MAC_FIELDS = frozenset({"mac", "chassis_id"})


def build_graph(facts: FactSet, elsewhere: Mapping[str, str] | None = None) -> FabricGraph:
    """Build the fabric graph of ``facts``; everything that does not fit is a Problem.

    ``elsewhere`` names the switches another process discovers (a shard's: the other
    shards'), each with its role hint (or ""), and the graph is that shard's
    (:mod:`topology.elsewhere`): an LLDP neighbour that is one of them, not in ``facts``,
    becomes a stand-in switch and port (attribute ``elsewhere``), so the cable to it is
    made; a PF its host hears on one is left out with its VFs (the facts the fabric keeps
    lack them) and the pod interfaces on them, with the pods that have no other (the
    facts keep them: the owners table and the IP index name them all); and
    the tables :func:`~topology.footprint.prepare` derives are derived on first use. The
    fabric of a shard keeps copies of the facts it keeps: pass ``facts`` as a temporary (no
    name of the caller's holding it) for the memory of the others to go back at once.

    Examples
    --------
    >>> from simulator.generator import FabricSpec, generate_facts
    >>> fabric = build_graph(generate_facts(FabricSpec(nodes=2, rails=1, leaves_per_rail=1,
    ...                                                 spines=1, vfs_per_pf=1)))
    >>> fabric.attrs("switch:leaf01")["role"], fabric.attrs("switch:spine01")["role"]
    ('leaf', 'spine')
    """
    with gc_paused():
        here = hosts_here(facts, elsewhere or {})
        del facts  # a shard's copies are kept: what it leaves out goes when the caller's do
        return _build(here, elsewhere or {})


def _build(here: HostsHere, elsewhere: Mapping[str, str]) -> FabricGraph:
    graph = nx.Graph()
    problems: list[Problem] = []
    facts = here.facts
    _add_switches(graph, facts, problems)
    _add_hosts(graph, facts, here.nics, problems)
    add_stand_ins(graph, facts, elsewhere, here.leaves)
    _add_workloads(graph, facts, here.away, problems)
    links, link_problems = reconcile_links(facts.neighbors, EndpointResolver(graph), graph)
    problems.extend(link_problems)
    nodes, adj, cabled = graph._node, graph._adj, EdgeKind.CABLED.value
    for link in links:  # between nodes in the graph, each pair once
        known = [s for s in (nodes[link.a].get(SPEED), nodes[link.b].get(SPEED)) if s]
        edge = {KIND: cabled, STATUS: link.status.value, REPORTS: len(link.reported_by)}
        if known:
            edge[SPEED] = min(known)
        adj[link.a][link.b] = adj[link.b][link.a] = edge
    cables = cables_of(graph)
    assign_roles(graph, cables)
    fabric = FabricGraph(graph, facts, tuple(problems), cables=cables)
    fabric.problems += fabric.indexes.problems
    # a shard's tables are derived on first use: most are for topology questions, which
    # the whole fabric answers (the CLI builds it from the shards' facts)
    return fabric if elsewhere else prepare(fabric)


def _add(graph: nx.Graph, node: str, kind: NodeKind, fact: Any, **extra: Any) -> None:
    attrs = _scalars(fact, kind.value)
    attrs.update(extra)
    graph.add_node(node, **attrs)


def _scalars(fact: Any, kind: str) -> dict[str, Any]:
    """A node's attributes: its ``kind``, then its fact's fields, None and empty strings
    left out, MACs normalized."""
    names, values, macs = _fields(type(fact))
    attrs = {name: value for name, value in zip(names, (kind, *values(fact)), strict=True)
             if value is not None and value != ""}
    for name in macs:
        if name in attrs:
            attrs[name] = normalize_mac(attrs[name]) or attrs[name]
    return attrs


@cache
def _fields(cls: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]],
                                tuple[str, ...]]:
    """``kind`` and a fact class's field names, a function reading the fields from a fact at
    once, and the names of its MAC fields."""
    names = tuple(field.name for field in dataclasses.fields(cls))
    values = attrgetter(*names) if len(names) > 1 else lambda fact: (getattr(fact, names[0]),)
    return (KIND, *names), values, tuple(_MAC_FIELDS.intersection(names))


def _add_all(graph: nx.Graph, kind: NodeKind, facts: Iterable[tuple[str, Any]]) -> None:
    """Add (or update, as :func:`_add` does) a node of ``kind`` for each (ID, fact),
    straight into networkx's node and adjacency dicts (``add_nodes_from`` copies each
    attribute dict once more)."""
    nodes, adj, value = graph._node, graph._adj, kind.value
    for node, fact in facts:
        attrs = _scalars(fact, value)
        if node in nodes:
            nodes[node].update(attrs)
        else:
            nodes[node], adj[node] = attrs, {}


def _link_all(graph: nx.Graph, kind: EdgeKind, pairs: Iterable[tuple[str, str]]) -> None:
    """Join each pair of existing nodes by an edge of ``kind``, straight into networkx's
    adjacency dicts; every such edge shares one attribute dict (edges other than cables
    hold their kind alone and are never changed)."""
    adj, edge = graph._adj, {KIND: kind.value}
    for a, b in pairs:
        adj[a][b] = adj[b][a] = edge


def _link(graph: nx.Graph, a: str, b: str, kind: EdgeKind) -> None:
    graph.add_edge(a, b, **{KIND: kind.value})


def _add_switches(graph: nx.Graph, facts: FactSet, problems: list[Problem]) -> None:
    for switch in facts.switches:
        _add(graph, switch_id(switch.name), NodeKind.SWITCH, switch)
        if switch.role_hint and switch.role_hint not in SwitchRole.__members__.values():
            problems.append(Problem("bad-role-hint", switch.name, f"{switch.role_hint!r} ignored"))
    ports, nodes = [], graph._node  # networkx's node dict: membership without a call
    for port in facts.interfaces:
        switch = switch_id(port.switch)
        if switch in nodes:
            ports.append((switch, port_id(port.switch, port.name), port))
        else:
            problems.append(Problem("unknown-switch", port.switch, f"interface {port.name}"))
    _add_all(graph, NodeKind.PORT, ((node, port) for _, node, port in ports))
    _link_all(graph, EdgeKind.HAS_PORT, ((switch, node) for switch, node, _ in ports))
    for report in facts.neighbors:
        node = port_id(report.local_device, report.local_port)
        if report.reporter == Reporter.SWITCH and node not in graph \
                and switch_id(report.local_device) in graph:
            problems.append(Problem("port-unlisted", node, "seen in LLDP, not in interfaces"))
            graph.add_node(node, **{KIND: NodeKind.PORT.value, "switch": report.local_device,
                                    "name": report.local_port})
            _link(graph, switch_id(report.local_device), node, EdgeKind.HAS_PORT)


def _add_hosts(graph: nx.Graph, facts: FactSet, nics: Mapping[tuple[str, str], int],
               problems: list[Problem]) -> None:
    _add_all(graph, NodeKind.NODE, ((node_id(host.name), host) for host in facts.nodes))
    pfs, nodes = [], graph._node
    for pf in facts.pfs:
        host = node_id(pf.node)
        if host in nodes:
            pfs.append((host, pf_id(pf.node, pf.name), pf))
        else:
            problems.append(Problem("unknown-node", pf.node, f"PF {pf.name}"))
    _add_all(graph, NodeKind.PF, ((node, pf) for _, node, pf in pfs))
    for _, node, pf in pfs:
        nodes[node][NIC_INDEX] = nics[pf.node, pf.name]
    _link_all(graph, EdgeKind.HAS_PORT, ((host, node) for host, node, _ in pfs))
    used = {(i.node, i.vf_pci) for i in facts.pod_interfaces}
    vfs = []
    for vf in facts.vfs:
        parent = pf_id(vf.node, vf.pf)
        if parent not in nodes:
            problems.append(Problem("vf-unknown-pf", vf_id(vf.node, vf.pci_address), parent))
        elif (vf.node, vf.pci_address) in used:  # the others live in the VfTable only
            vfs.append((vf_id(vf.node, vf.pci_address), parent, vf))
    _add_all(graph, NodeKind.VF, ((node, vf) for node, _, vf in vfs))
    _link_all(graph, EdgeKind.VF_OF, ((node, parent) for node, parent, _ in vfs))


def _add_workloads(graph: nx.Graph, facts: FactSet, away: Container[tuple[str, str]],
                   problems: list[Problem]) -> None:
    for tenant in facts.tenants:
        _add(graph, tenant_id(tenant.name), NodeKind.TENANT, tenant)
    for job in facts.jobs:
        node = job_id(job.namespace, job.name)
        _add(graph, node, NodeKind.JOB, dataclasses.replace(job, kind=""), job_kind=job.kind)
        _owned_by_tenant(graph, node, job.tenant, problems)
    interfaces = latest_interfaces(facts.pod_interfaces)
    gone = _pods_away(interfaces, away)
    for pod in facts.pods:
        if (pod.namespace, pod.name) in gone:
            continue
        node = pod_id(pod.namespace, pod.name)
        _add(graph, node, NodeKind.POD, pod)
        if pod.node:
            if node_id(pod.node) in graph:
                _link(graph, node, node_id(pod.node), EdgeKind.RUNS_ON)
            else:
                problems.append(Problem("unknown-node", pod.node, f"pod {node}"))
        if pod.job_name:
            job = job_id(pod.namespace, pod.job_name)
            if job in graph:
                _link(graph, node, job, EdgeKind.MEMBER_OF)
            else:
                problems.append(Problem("unknown-job", job, f"pod {node}"))
        else:
            _owned_by_tenant(graph, node, pod.tenant, problems)
    for fact in interfaces:
        if (fact.node, fact.vf_pci) in away:
            continue
        node = podif_id(fact.namespace, fact.pod, fact.interface)
        pod = pod_id(fact.namespace, fact.pod)
        if pod not in graph:
            problems.append(Problem("unknown-pod", pod, f"interface {fact.interface}"))
            continue
        _add(graph, node, NodeKind.POD_INTERFACE, fact)
        _link(graph, pod, node, EdgeKind.HAS_INTERFACE)
        vf = vf_id(fact.node, fact.vf_pci)
        if fact.vf_pci and vf in graph:
            _link(graph, node, vf, EdgeKind.ATTACHED)
        else:
            problems.append(Problem("podif-unattached", node,
                                    f"no VF {fact.vf_pci or '(no PCI address)'} on {fact.node}"))


def _pods_away(interfaces: list[PodInterfaceFact], away: Container[tuple[str, str]]
               ) -> set[tuple[str, str]]:
    """(namespace, name) of each pod whose every interface is on a NIC another shard
    keeps: the graph leaves it out with them (the facts and the owners table keep them)."""
    here, there = set(), set()
    for fact in interfaces:
        (there if (fact.node, fact.vf_pci) in away else here).add((fact.namespace, fact.pod))
    return there - here


def _owned_by_tenant(graph: nx.Graph, node: str, tenant: str, problems: list[Problem]) -> None:
    if not tenant:
        return
    if tenant_id(tenant) not in graph:
        problems.append(Problem("unknown-tenant", tenant, node))
        return
    _link(graph, node, tenant_id(tenant), EdgeKind.OWNED_BY)


"""build_graph: a FactSet in, a FabricGraph out (nodes, edges, reconciled cables, roles)."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import networkx as nx

from inventory.bulk import gc_paused
from inventory.facts import FactSet, PodInterfaceFact, Reporter, normalize_mac
from inventory.problems import Problem
from topology.footprint import prepare
from topology.graph import FabricGraph
from topology.links import EndpointResolver, reconcile_links
from topology.roles import assign_roles
from topology.schema import (
    KIND,
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


def build_graph(facts: FactSet) -> FabricGraph:
    """Build the fabric graph of ``facts``; everything that does not fit is a Problem.

    Examples
    --------
    >>> from simulator.generator import FabricSpec, generate_facts
    >>> fabric = build_graph(generate_facts(FabricSpec(nodes=2, rails=1, leaves_per_rail=1,
    ...                                                 spines=1, vfs_per_pf=1)))
    >>> fabric.attrs("switch:leaf01")["role"], fabric.attrs("switch:spine01")["role"]
    ('leaf', 'spine')
    """
    with gc_paused():
        return _build(facts)


def _build(facts: FactSet) -> FabricGraph:
    graph = nx.Graph()
    problems: list[Problem] = []
    _add_switches(graph, facts, problems)
    _add_hosts(graph, facts, problems)
    _add_workloads(graph, facts, problems)
    links, link_problems = reconcile_links(facts.neighbors, EndpointResolver(graph), graph)
    problems.extend(link_problems)
    for link in links:
        speeds = [graph.nodes[end].get(SPEED) for end in (link.a, link.b)]
        known = [s for s in speeds if s]
        edge = {KIND: EdgeKind.CABLED.value, STATUS: link.status.value,
                REPORTS: len(link.reported_by)}
        if known:
            edge[SPEED] = min(known)
        graph.add_edge(link.a, link.b, **edge)
    assign_roles(graph)
    fabric = FabricGraph(graph, facts, tuple(problems))
    fabric.problems += fabric.indexes.problems
    return prepare(fabric)


def _add(graph: nx.Graph, node: str, kind: NodeKind, fact: Any, **extra: Any) -> None:
    graph.add_node(node, **{KIND: kind.value, **_scalars(fact), **extra})


def _scalars(fact: Any) -> dict[str, Any]:
    """A fact's fields as graph attributes: None and empty strings left out, MACs normalized."""
    attrs = {}
    for name in _field_names(type(fact)):
        value = getattr(fact, name)
        if value is None or value == "":
            continue
        if name in _MAC_FIELDS:
            value = normalize_mac(value) or value
        attrs[name] = value
    return attrs


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


def _link(graph: nx.Graph, a: str, b: str, kind: EdgeKind) -> None:
    graph.add_edge(a, b, **{KIND: kind.value})


def _add_switches(graph: nx.Graph, facts: FactSet, problems: list[Problem]) -> None:
    for switch in facts.switches:
        _add(graph, switch_id(switch.name), NodeKind.SWITCH, switch)
        if switch.role_hint and switch.role_hint not in SwitchRole.__members__.values():
            problems.append(Problem("bad-role-hint", switch.name, f"{switch.role_hint!r} ignored"))
    for port in facts.interfaces:
        if switch_id(port.switch) not in graph:
            problems.append(Problem("unknown-switch", port.switch, f"interface {port.name}"))
            continue
        node = port_id(port.switch, port.name)
        _add(graph, node, NodeKind.PORT, port)
        _link(graph, switch_id(port.switch), node, EdgeKind.HAS_PORT)
    for report in facts.neighbors:
        node = port_id(report.local_device, report.local_port)
        if report.reporter == Reporter.SWITCH and node not in graph \
                and switch_id(report.local_device) in graph:
            problems.append(Problem("port-unlisted", node, "seen in LLDP, not in interfaces"))
            graph.add_node(node, **{KIND: NodeKind.PORT.value, "switch": report.local_device,
                                    "name": report.local_port})
            _link(graph, switch_id(report.local_device), node, EdgeKind.HAS_PORT)


def _add_hosts(graph: nx.Graph, facts: FactSet, problems: list[Problem]) -> None:
    for host in facts.nodes:
        _add(graph, node_id(host.name), NodeKind.NODE, host)
    for pf in facts.pfs:
        if node_id(pf.node) not in graph:
            problems.append(Problem("unknown-node", pf.node, f"PF {pf.name}"))
            continue
        _add(graph, pf_id(pf.node, pf.name), NodeKind.PF, pf)
        _link(graph, node_id(pf.node), pf_id(pf.node, pf.name), EdgeKind.HAS_PORT)
    used = {(i.node, i.vf_pci) for i in facts.pod_interfaces}
    for vf in facts.vfs:
        parent = pf_id(vf.node, vf.pf)
        if parent not in graph:
            problems.append(Problem("vf-unknown-pf", vf_id(vf.node, vf.pci_address), parent))
        elif (vf.node, vf.pci_address) in used:  # the others live in the VfTable only
            _add(graph, vf_id(vf.node, vf.pci_address), NodeKind.VF, vf)
            _link(graph, vf_id(vf.node, vf.pci_address), parent, EdgeKind.VF_OF)


def _add_workloads(graph: nx.Graph, facts: FactSet, problems: list[Problem]) -> None:
    for tenant in facts.tenants:
        _add(graph, tenant_id(tenant.name), NodeKind.TENANT, tenant)
    for job in facts.jobs:
        node = job_id(job.namespace, job.name)
        _add(graph, node, NodeKind.JOB, dataclasses.replace(job, kind=""), job_kind=job.kind)
        _owned_by_tenant(graph, node, job.tenant, problems)
    for pod in facts.pods:
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
    for fact in _latest_incarnations(facts.pod_interfaces):
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


def _owned_by_tenant(graph: nx.Graph, node: str, tenant: str, problems: list[Problem]) -> None:
    if not tenant:
        return
    if tenant_id(tenant) not in graph:
        problems.append(Problem("unknown-tenant", tenant, node))
        return
    _link(graph, node, tenant_id(tenant), EdgeKind.OWNED_BY)


def _latest_incarnations(interfaces: tuple[PodInterfaceFact, ...]) -> list[PodInterfaceFact]:
    """One fact per pod interface ID: the latest; earlier ones live on in the IP index."""
    latest: dict[tuple[str, str, str], PodInterfaceFact] = {}
    for fact in interfaces:
        key = (fact.namespace, fact.pod, fact.interface)
        if key not in latest or fact.valid_from >= latest[key].valid_from:
            latest[key] = fact
    return list(latest.values())

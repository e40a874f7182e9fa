"""Every topology answer on the small and medium ladder fabrics equals a slow reference's.

The reference below reads the facts alone (LLDP as the switches report it, VFs, pods) and
answers with plain networkx and numpy: no code of ``topology`` beyond the result types.
It was checked against the answers of the graph-of-everything implementation (one node per
configured VF, all-shortest-paths over the whole graph) before that was replaced, so these
tests pin those answers for the compact graph, its indexes and its structural paths. The
queries cover every kind a user can name: pods (whole-node and half-node), pod interfaces,
IPs, used and unused VFs, PFs, nodes; paths under one leaf, across leaves of one rail,
across rails and across Clos pods; host and fabric ports of every tier; jobs and tenants;
the summary, the export, and the same through ``fabcorr topology ... -o json``.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter, defaultdict
from functools import cache, cached_property
from itertools import combinations, islice, pairwise, product
from math import prod

import networkx as nx
import pytest

from correlator.cli.main import main
from inventory.facts import FactSet, Reporter
from simulator.generator import FabricSpec, JobSpec, generate_facts
from simulator.ladder import ladder_spec
from topology import queries
from topology.build import build_graph
from topology.export import render
from topology.paths import Hop, InterfacePaths
from topology.queries import Attachment, Footprint, JobReport, LinkReport, TenantReport
from topology.snapshot import load_snapshot, save_snapshot

THREE_TIER = FabricSpec(
    nodes=32, rails=2, leaves_per_rail=4, spines=2, uplinks_per_leaf=4, leaves_per_pod=2,
    super_spines=4, uplinks_per_spine=2, vfs_per_pf=4,
    jobs=(JobSpec("t1", "big", pods=10), JobSpec("t2", "half", pods=24, nics_per_pod=1),
          JobSpec("t1", "one", pods=1)),
)
"""Four Clos pods of two leaves (a rail spans two) under four super-spines: paths of five
switches between the pods of one rail."""

FABRICS = {"small": lambda: ladder_spec("small"), "medium": lambda: ladder_spec("medium"),
           "three-tier": lambda: THREE_TIER}
SAMPLES = {"small": 400, "medium": 60, "three-tier": 400}


class Reference:
    """Answers of the topology queries from the facts of a clean generated fabric."""

    def __init__(self, facts: FactSet) -> None:
        self.facts = facts
        switch_by_chassis = {s.chassis_id: s.name for s in facts.switches}
        pf_by_mac = {p.mac: p for p in facts.pfs}
        self.ports = {(i.switch, i.name): i for i in facts.interfaces}
        self.pfs = {(p.node, p.name): p for p in facts.pfs}
        self.vfs = {(v.node, v.pci_address): v for v in facts.vfs}
        self.vfs_of = defaultdict(list)
        for v in facts.vfs:
            self.vfs_of[(v.node, v.pf)].append(v)
        self.rail = {}
        for node in {p.node for p in facts.pfs}:
            ranked = sorted((p.pci_address, p.name) for p in facts.pfs if p.node == node)
            self.rail.update({(node, name): k for k, (_, name) in enumerate(ranked, start=1)})
        self.host_port = {}  # (node, pf) -> (leaf, port)
        self.pf_on_port = {}  # (leaf, port) -> (node, pf)
        self.peer_port = {}  # (switch, port) -> (switch, port)
        self.switch_graph = nx.MultiGraph()
        self.switch_graph.add_nodes_from(s.name for s in facts.switches)
        for n in facts.neighbors:
            if n.reporter != Reporter.SWITCH:
                continue
            if n.chassis_id in switch_by_chassis:
                far = (switch_by_chassis[n.chassis_id], n.port_id)
                if far not in self.peer_port:
                    self.switch_graph.add_edge(n.local_device, far[0],
                                               ports={n.local_device: n.local_port,
                                                      far[0]: far[1]})
                self.peer_port[(n.local_device, n.local_port)] = far
            else:
                pf = pf_by_mac[n.port_id]
                self.host_port[(pf.node, pf.name)] = (n.local_device, n.local_port)
                self.pf_on_port[(n.local_device, n.local_port)] = (pf.node, pf.name)
        self.leaves = sorted({leaf for leaf, _ in self.host_port.values()})
        hops = nx.multi_source_dijkstra_path_length(self.switch_graph, self.leaves)
        self.tier = {s: hops[s] + 1 for s in self.switch_graph}
        self.role = {s: ("leaf", "spine", "super-spine")[self.tier[s] - 1]
                     for s in self.switch_graph}
        self.pods = {(p.namespace, p.name): p for p in facts.pods}
        self.jobs = {(j.namespace, j.name): j for j in facts.jobs}
        self.interfaces = {(i.namespace, i.pod, i.interface): i for i in facts.pod_interfaces}
        self.user = {(i.node, i.vf_pci): i for i in self.interfaces.values()}
        self.on_pf = defaultdict(list)
        self.of_pod = defaultdict(list)
        for i in self.interfaces.values():
            self.on_pf[(i.node, self.vfs[(i.node, i.vf_pci)].pf)].append(i)
            self.of_pod[(i.namespace, i.pod)].append(i)

    # -- who and where ---------------------------------------------------------------
    def tenant_of(self, pod) -> str:
        job = self.jobs.get((pod.namespace, pod.job_name))
        return pod.tenant or (job.tenant if job else "")

    def job_of(self, pod) -> str:
        has_job = (pod.namespace, pod.job_name) in self.jobs
        return f"{pod.namespace}/{pod.job_name}" if has_job else ""

    def leaf_of(self, interface) -> str:
        vf = self.vfs[(interface.node, interface.vf_pci)]
        return self.host_port[(vf.node, vf.pf)][0]

    def row(self, interface) -> Attachment:
        vf = self.vfs[(interface.node, interface.vf_pci)]
        leaf, port = self.host_port[(vf.node, vf.pf)]
        pod = self.pods[(interface.namespace, interface.pod)]
        return Attachment(vf.node, vf.pf, self.rail[(vf.node, vf.pf)], leaf, port,
                          vf.pci_address, f"{pod.namespace}/{pod.name}", interface.interface,
                          interface.ipv4, interface.ipv6, self.job_of(pod), self.tenant_of(pod))

    def pf_rows(self, node: str, pf: str) -> list[Attachment]:
        vfs = sorted(self.vfs_of[(node, pf)], key=lambda v: v.vf_index)
        used = [self.row(self.user[(node, v.pci_address)]) for v in vfs
                if (node, v.pci_address) in self.user]
        leaf, port = self.host_port[(node, pf)]
        return used or [Attachment(node, pf, self.rail[(node, pf)], leaf, port)]

    def vf_rows(self, node: str, pci: str) -> list[Attachment]:
        if (node, pci) in self.user:
            return [self.row(self.user[(node, pci)])]
        vf = self.vfs[(node, pci)]
        leaf, port = self.host_port[(node, vf.pf)]
        return [Attachment(node, vf.pf, self.rail[(node, vf.pf)], leaf, port, pci)]

    def pod_interfaces(self, namespace: str, pod: str) -> list:
        return sorted(self.of_pod[(namespace, pod)], key=lambda i: i.interface)

    def where(self, kind: str, key: tuple[str, ...]) -> list[Attachment]:
        if kind == "pod":
            return [self.row(i) for i in self.pod_interfaces(*key)]
        if kind in ("interface", "ip"):
            return [self.row(self.interfaces[key])]
        if kind == "vf":
            return self.vf_rows(*key)
        if kind == "pf":
            return self.pf_rows(*key)
        pfs = sorted((p for p in self.pfs.values() if p.node == key[0]),
                     key=lambda p: self.rail[(p.node, p.name)])
        return [r for p in pfs for r in self.pf_rows(p.node, p.name)]

    # -- paths ---------------------------------------------------------------------
    def paths(self, a: tuple[str, str], b: tuple[str, str], limit: int = 256
              ) -> list[InterfacePaths]:
        sources, targets = self.pod_interfaces(*a), self.pod_interfaces(*b)

        def rail(i) -> int:
            return self.rail[(i.node, self.vfs[(i.node, i.vf_pci)].pf)]

        pairs = [(s, t) for s in sources for t in targets if rail(s) == rail(t) and s != t]
        pairs = pairs or [(s, t) for s in sources for t in targets if s != t]
        return [self.pair_paths(s, t, limit) for s, t in pairs]

    def pair_paths(self, s, t, limit: int) -> InterfacePaths:
        name = f"podif:{s.namespace}/{s.pod}/{s.interface}", \
            f"podif:{t.namespace}/{t.pod}/{t.interface}"
        (la, pa), (lb, pb) = (self.host_port[(i.node, self.vfs[(i.node, i.vf_pci)].pf)]
                              for i in (s, t))
        if la == lb:
            return InterfacePaths(*name, 1, ((Hop(la, pa, pb),),))
        routes = sorted(nx.all_shortest_paths(self.simple_graph, la, lb))
        count, listed = 0, []
        for route in routes:
            cables = [[(c["ports"][x], c["ports"][y])
                       for c in self.switch_graph.get_edge_data(x, y).values()]
                      for x, y in pairwise(route)]
            count += prod(len(c) for c in cables)
            for chosen in islice(product(*cables), max(0, limit - len(listed))):
                ports = [pa, *(p for cable in chosen for p in cable), pb]
                listed.append(tuple(Hop(sw, ports[2 * k], ports[2 * k + 1])
                                    for k, sw in enumerate(route)))
        return InterfacePaths(*name, count, tuple(listed))

    # -- links, jobs, tenants ----------------------------------------------------------
    @cached_property
    def below(self) -> dict[str, list]:
        """Switch -> the pod interfaces on the leaves at or below it."""
        on_leaf = defaultdict(list)
        for i in self.interfaces.values():
            on_leaf[self.leaf_of(i)].append(i)
        below = {s: on_leaf.get(s, []) for s in self.switch_graph}
        for s in sorted(self.switch_graph, key=self.tier.__getitem__):
            if self.tier[s] > 1:
                lower = {n for n in self.switch_graph.adj[s] if self.tier[n] < self.tier[s]}
                below[s] = [i for n in lower for i in below[n]]
        return below

    def owned(self, interfaces) -> tuple[tuple[str, ...], ...]:
        pods = [self.pods[(i.namespace, i.pod)] for i in interfaces]
        return (tuple(sorted({f"{p.namespace}/{p.name}" for p in pods})),
                tuple(sorted({self.job_of(p) for p in pods} - {""})),
                tuple(sorted({self.tenant_of(p) for p in pods} - {""})))

    def port_role_tier(self, switch: str, port: str) -> tuple[str, str]:
        if (switch, port) in self.pf_on_port:
            return "host", "host"
        if (switch, port) in self.peer_port:
            far = self.peer_port[(switch, port)][0]
            return "fabric", "-".join(sorted((self.role[switch], self.role[far]),
                                             key=("leaf", "spine", "super-spine").index))
        return "unused", ""

    def link(self, switch: str, port: str) -> LinkReport:
        fact = self.ports[(switch, port)]
        role, tier = self.port_role_tier(switch, port)
        if role == "host":
            node, pf = self.pf_on_port[(switch, port)]
            interfaces, peer, peer_kind = self.on_pf[(node, pf)], f"{node}:{pf}", "pf"
        elif role == "fabric":
            far, far_port = self.peer_port[(switch, port)]
            interfaces = self.below[min((switch, far), key=self.tier.__getitem__)]
            peer, peer_kind = f"{far}:{far_port}", "port"
        else:
            interfaces, peer, peer_kind = [], "", ""
        return LinkReport(
            f"{switch}:{port}", role, fact.speed_bps, fact.oper_status, fact.ifindex, peer,
            peer_kind, "confirmed" if peer else "", tier, (),
            tuple(sorted(f"{i.namespace}/{i.pod}/{i.interface}" for i in interfaces)),
            *self.owned(interfaces))

    @cached_property
    def simple_graph(self) -> nx.Graph:
        return nx.Graph(self.switch_graph)

    @cached_property
    def distances(self) -> dict[str, dict[str, int]]:
        return dict(nx.all_pairs_shortest_path_length(self.switch_graph))

    def footprint(self, pods: list, own_tenant: str) -> Footprint:
        interfaces = [i for p in pods for i in self.pod_interfaces(p.namespace, p.name)]
        leaves = sorted({self.leaf_of(i) for i in interfaces})
        d = self.distances
        used = set(leaves)
        for a, b in combinations(leaves, 2):
            used.update(v for v in self.switch_graph if d[a][v] + d[b][v] == d[a][b])
        tenants = {self.tenant_of(self.pods[(i.namespace, i.pod)])
                   for leaf in leaves for i in self.below[leaf]}
        return Footprint(
            nodes=tuple(sorted({p.node for p in pods})), leaves=tuple(leaves),
            leaf_ports=tuple(sorted({":".join(self.host_port[(i.node, self.vfs[(
                i.node, i.vf_pci)].pf)]) for i in interfaces})),
            spines=tuple(sorted(s for s in used if self.role[s] == "spine")),
            super_spines=tuple(sorted(s for s in used if self.role[s] == "super-spine")),
            neighbours=tuple(sorted(tenants - {"", own_tenant})))

    def job(self, namespace: str, name: str) -> JobReport:
        job = self.jobs[(namespace, name)]
        pods = sorted((p for p in self.pods.values()
                       if (p.namespace, p.job_name) == (namespace, name)),
                      key=lambda p: f"{p.namespace}/{p.name}")
        return JobReport(f"{namespace}/{name}", job.kind, job.tenant,
                         tuple(f"{p.namespace}/{p.name}" for p in pods),
                         self.footprint(pods, job.tenant))

    def tenant(self, name: str) -> TenantReport:
        jobs = sorted(f"{j.namespace}/{j.name}" for j in self.jobs.values() if j.tenant == name)
        pods = sorted((p for p in self.pods.values()
                       if self.job_of(p) in jobs or (not p.job_name and p.tenant == name)),
                      key=lambda p: f"{p.namespace}/{p.name}")
        return TenantReport(name, tuple(jobs), tuple(f"{p.namespace}/{p.name}" for p in pods),
                            self.footprint(pods, name))

    def summary_nodes(self) -> dict[str, int]:
        f = self.facts
        return {"tenant": len(f.tenants), "job": len(f.jobs), "pod": len(f.pods),
                "pod-interface": len(self.interfaces), "vf": len(f.vfs), "pf": len(f.pfs),
                "node": len(f.nodes), "switch": len(f.switches), "port": len(f.interfaces)}

    def summary_links(self) -> dict[str, dict[str, int]]:
        tiers = Counter(self.port_role_tier(*key)[1] for key in self.ports)
        return {t: {"confirmed": n // (1 if t == "host" else 2)}
                for t, n in sorted(tiers.items()) if t}


@cache
def _case(size: str) -> tuple[FactSet, Reference, object]:
    facts = generate_facts(FABRICS[size]())
    return facts, Reference(facts), build_graph(facts)


@cache
def _loaded(size: str, folder: str, suffix: str) -> object:
    path = f"{folder}/{size}{suffix}"
    save_snapshot(_case(size)[2], path)
    return load_snapshot(path)


@pytest.fixture(scope="module", params=list(FABRICS))
def size(request):
    return request.param


@pytest.fixture(scope="module", params=["built", "loaded", "loaded-packed"])
def case(request, size, tmp_path_factory):
    facts, reference, fabric = _case(size)
    if request.param != "built":
        fabric = _loaded(size, str(tmp_path_factory.getbasetemp()),
                         ".json" if request.param == "loaded" else ".packed")
    return facts, reference, fabric


def _sample(items, size: str, salt: str) -> list:
    items = sorted(items)
    return random.Random(f"{size}-{salt}").sample(items, min(len(items), SAMPLES[size]))


def _refs(facts: FactSet, reference: Reference, size: str) -> list[tuple[str, str, tuple]]:
    """(what the user types, the kind it names, its key in the reference) to ask about."""
    pods = _sample(reference.pods, size, "pods")
    interfaces = _sample(reference.interfaces, size, "interfaces")
    used = [k for k in _sample(reference.vfs, size, "vfs") if k in reference.user]
    unused = [k for k in _sample(reference.vfs, size, "vfs") if k not in reference.user]
    nodes = _sample({(n.name,) for n in facts.nodes}, size, "nodes")[:20]
    return [
        *((f"{ns}/{name}", "pod", (ns, name)) for ns, name in pods),
        *(("/".join(k), "interface", k) for k in interfaces[:50]),
        *((reference.interfaces[k].ipv4.partition("/")[0], "ip", k) for k in interfaces),
        *(("/".join(k), "vf", k) for k in used[:50] + unused[:50]),
        *(("/".join(k), "pf", k) for k in _sample(reference.pfs, size, "pfs")[:30]),
        *((n[0], "node", n) for n in nodes),
    ]


def test_where(case, size):
    facts, reference, fabric = case
    refs = _refs(facts, reference, size)
    assert {kind for _, kind, _ in refs} == {"pod", "interface", "ip", "vf", "pf", "node"}
    for text, kind, key in refs:
        assert queries.where(fabric, text) == reference.where(kind, key), text


def test_where_unused_vf_names_only_the_vf(case, size):
    _, reference, fabric = case
    node, pci = next(k for k in sorted(reference.vfs) if k not in reference.user)
    [row] = queries.where(fabric, f"{node}/{pci}")
    assert (row.node, row.vf, row.pod, row.interface) == (node, pci, "", "")


def _pod_pairs(reference: Reference, size: str) -> dict[str, list]:
    """Six pairs of pods per way their interfaces meet: under one leaf, across leaves of
    one rail, across Clos pods (five switches), with no rail in common."""
    rng = random.Random(f"{size}-pairs")
    pods = sorted(reference.pods)
    found: dict[str, list] = {}
    for _ in range(3000):
        a, b = rng.sample(pods, 2)
        leaves = [{reference.rail[(i.node, reference.vfs[(i.node, i.vf_pci)].pf)]:
                   reference.leaf_of(i) for i in reference.pod_interfaces(*pod)}
                  for pod in (a, b)]
        hops = {reference.distances[leaves[0][r]][leaves[1][r]]
                for r in leaves[0].keys() & leaves[1].keys()}
        kind = ("other-rail" if not hops else "one-leaf" if 0 in hops
                else "other-pod" if 4 in hops else "one-rail")
        if len(found.setdefault(kind, [])) < 6:
            found[kind].append((a, b))
    return found


def test_paths(case, size):
    _, reference, fabric = case
    kinds = {"one-leaf", "one-rail", "other-rail"} | ({"other-pod"} if size == "three-tier"
                                                      else set())
    pairs_by_kind = _pod_pairs(reference, size)
    assert {k: len(v) for k, v in pairs_by_kind.items()} == dict.fromkeys(kinds, 6)
    for pairs in pairs_by_kind.values():
        for a, b in pairs:
            for limit in (256, 3):
                assert queries.paths(fabric, "/".join(a), "/".join(b), limit=limit) == \
                    reference.paths(a, b, limit), (a, b, limit)


def test_links(case, size):
    _, reference, fabric = case
    by_kind = defaultdict(list)
    for key in sorted(reference.ports):
        by_kind[(*reference.port_role_tier(*key), reference.role[key[0]])].append(key)
    assert {k[1] for k in by_kind} >= {"host", "leaf-spine"}
    for keys in by_kind.values():
        for switch, port in _sample(keys, size, "ports")[:12]:
            assert queries.link(fabric, f"{switch}:{port}") == reference.link(switch, port)


def test_jobs_and_tenants(case, size):
    facts, reference, fabric = case
    for job in _sample({(j.namespace, j.name) for j in facts.jobs}, size, "jobs")[:12]:
        assert queries.job(fabric, "/".join(job)) == reference.job(*job), job
    for tenant in _sample({t.name for t in facts.tenants}, size, "tenants")[:4]:
        assert queries.tenant(fabric, tenant) == reference.tenant(tenant), tenant


def test_summary(case):
    _, reference, fabric = case
    found = queries.summary(fabric)
    assert found.nodes == reference.summary_nodes()
    assert found.links == reference.summary_links()
    assert found.switches == dict(Counter(reference.role.values()))
    assert found.problems == {}


@pytest.mark.parametrize("size", ["small", "three-tier"])
def test_export_holds_every_vf(size):
    """The node-link export has every configured VF with its fact's fields and its PF."""
    facts, reference, fabric = _case(size)
    data = json.loads(render(fabric, "json"))
    nodes = {n["id"]: n for n in data["nodes"]}
    assert Counter(n["kind"] for n in nodes.values()) == Counter(
        {k: v for k, v in reference.summary_nodes().items()})
    for vf in facts.vfs:
        assert nodes[f"vf:{vf.node}/{vf.pci_address}"] == {
            "id": f"vf:{vf.node}/{vf.pci_address}", "kind": "vf", "node": vf.node,
            "pci_address": vf.pci_address, "pf": vf.pf, "vf_index": vf.vf_index,
            "mac": vf.mac}
    edges = Counter((e["source"], e["target"], e["kind"]) for e in data["edges"])
    for vf in facts.vfs:
        assert edges[(f"vf:{vf.node}/{vf.pci_address}", f"pf:{vf.node}/{vf.pf}", "vf-of")] \
            + edges[(f"pf:{vf.node}/{vf.pf}", f"vf:{vf.node}/{vf.pci_address}", "vf-of")] == 1
    for i in reference.interfaces.values():
        podif, vf = f"podif:{i.namespace}/{i.pod}/{i.interface}", f"vf:{i.node}/{i.vf_pci}"
        assert edges[(podif, vf, "attached")] + edges[(vf, podif, "attached")] == 1
    assert len(data["edges"]) == (
        len(facts.vfs) + len(facts.interfaces) + len(facts.pfs) + len(reference.interfaces)
        * 2 + len(facts.pods) * 2 + len(facts.jobs)
        + sum(reference.summary_links().get(t, {}).get("confirmed", 0)
              for t in reference.summary_links()))


def _cli(capsys, *argv: str):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _data(value):
    """The JSON the CLI prints for a reference answer (dataclasses and named tuples as
    objects), made here rather than by the code under test."""
    if dataclasses.is_dataclass(value):
        return {f.name: _data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: _data(member) for name, member in zip(value._fields, value, strict=True)}
    if isinstance(value, list | tuple):
        return [_data(member) for member in value]
    return json.loads(json.dumps(value))


def test_cli_answers(capsys, tmp_path):
    _, reference, fabric = _case("small")
    snapshot = tmp_path / "topology.json"
    save_snapshot(fabric, snapshot)
    source = ("--snapshot", str(snapshot), "-o", "json")
    interface = sorted(reference.interfaces)[5]
    unused = next(k for k in sorted(reference.vfs) if k not in reference.user)
    for text, kind, key in [("/".join(interface[:2]), "pod", interface[:2]),
                            (reference.interfaces[interface].ipv4.split("/")[0], "ip",
                             interface),
                            ("/".join(unused), "vf", unused), ("gpu0007", "node", ("gpu0007",))]:
        assert _cli(capsys, "topology", "where", text, *source) == \
            _data(reference.where(kind, key))
    pods = sorted(reference.pods)
    assert _cli(capsys, "topology", "path", "/".join(pods[0]), "/".join(pods[-1]),
                "--limit", "5", *source) == _data(reference.paths(pods[0], pods[-1], 5))
    assert _cli(capsys, "topology", "link", "spine03:Ethernet9", *source) == \
        _data(reference.link("spine03", "Ethernet9"))
    job = sorted(reference.jobs)[3]
    assert _cli(capsys, "topology", "job", "/".join(job), *source) == \
        _data(reference.job(*job))
    exported = tmp_path / "fabric.json"
    assert main(["topology", "export", "--snapshot", str(snapshot), "-o", "json",
                 "--out", str(exported)]) == 0
    assert json.loads(exported.read_bytes()) == json.loads(render(fabric, "json"))

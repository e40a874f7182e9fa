"""A shard discovers only its own switches, over gNMI from emulated switches, and still
sees every cable that decides what it attributes, judges and reads.

Each shard runs with every other switch's gNMI target stalled (it accepts and never
answers): asking one would time out and be logged. The oracle is one process discovering
every switch (no stand-ins): each shard's scope in its own graph must be its scope in
that whole graph, port for port, and every cable end it holds must meet the same far end."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging

import pytest

from correlator.cli import merge
from correlator.scope import scope_of
from correlator.service.api import handle
from correlator.service.config import service_config_from
from correlator.service.exporter import FABRIC_FAMILIES, families
from correlator.service.service import Service
from correlator.shards import ALONE, Shard
from correlator.view import View
from inventory.factfile import read_facts, write_facts
from inventory.facts import FactSet, merge_all
from simulator.emulator import EmulatedFabric
from simulator.kube_objects import cluster_objects
from simulator.scenario import scenario_from
from simulator.traffic import TrafficModel
from topology.build import build_graph
from topology.footprint import owners, plugs
from topology.graph import FabricGraph
from topology.schema import ELSEWHERE, NodeKind, id_name, pf_id

SHARDS = 3
PASSWORD = "FABCORR_TEST_PASSWORD"
HOSTS_LLDP, KUBERNETES, ROLES = "hosts' LLDP", "hosts' LLDP, Kubernetes", "switch roles"


@pytest.fixture(scope="module", params=[HOSTS_LLDP, KUBERNETES, ROLES])
def emulated(request, tmp_path_factory):
    """The emulated fabric (targets started) and a configuration reaching it: with the
    hosts' LLDP in the inventory (the rest of it from the same facts, or from kubectl
    dumps of the cluster's objects), or without it and each switch's role configured."""
    model = TrafficModel(scenario_from({
        "fabric": {"nodes": 8, "rails": 2, "leaves_per_rail": 2, "spines": 3,
                   "vfs_per_pf": 1},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 4, "gbps": 20}],
        "sampling_rate": 100_000, "counter_every_s": 1, "seconds": 1}), start=1.8e9)
    fabric = EmulatedFabric(model, password="secret").start()
    folder = tmp_path_factory.mktemp("cluster")
    facts, dumps = folder / "cluster.yaml", folder / "objects.json"
    switches, source = fabric.switch_config(PASSWORD), []
    cluster = model.inventory_facts().inventory()
    if request.param == HOSTS_LLDP:
        fabric.write_cluster_facts(facts)
    elif request.param == KUBERNETES:
        write_facts(FactSet(neighbors=cluster.neighbors), facts)
        dumps.write_text(json.dumps({"kind": "List", "items": cluster_objects(cluster)}))
        source = [str(dumps)]
    else:
        write_facts(dataclasses.replace(cluster, neighbors=()), facts)
        switches = [{**s, "role": s["name"].rstrip("0123456789")} for s in switches]
    config = service_config_from({
        "switches": switches,
        "topology": {"facts": [str(facts)], "discover_every_s": 0, "deadline_s": 5},
        "kubernetes": {"source": source},
        "shards": {"count": SHARDS}}, "f.yaml", {PASSWORD: "secret"})
    yield fabric, config
    fabric.stop()


def _discovered(emulated, shard: Shard) -> tuple[Service, FabricGraph]:
    """``shard``'s service, discovered and built with the other switches' targets
    stalled."""
    fabric, config = emulated
    others = [t for name, t in fabric.targets.items() if not shard.owns(name)]
    for target in others:
        target.stall = True
    try:
        service = Service(dataclasses.replace(config, shard=shard))
        asyncio.run(service._discover())
        return service, service._build()
    finally:
        for target in others:
            target.stall = False


@pytest.fixture(scope="module")
def whole(emulated):
    return _discovered(emulated, ALONE)[1]


@pytest.mark.parametrize("index", range(SHARDS))
def test_a_shard_discovers_only_its_switches_and_sees_its_cables(emulated, whole, index,
                                                                  caplog):
    shard, config = Shard(index, SHARDS), emulated[1]
    caplog.set_level(logging.WARNING, "correlator.service.service")
    service, fabric = _discovered(emulated, shard)
    assert [r.getMessage() for r in caplog.records] == []  # no other switch was asked
    names = sorted(s.name for s in whole.facts.switches)
    own = [name for name in names if shard.owns(name)]
    assert sorted(s.name for s in fabric.facts.switches) == own
    assert {i.switch for i in fabric.facts.interfaces} == set(own)
    mine, truth = scope_of(shard)(fabric), scope_of(shard)(whole)
    assert (mine.switches, mine.ports, mine.peers, mine.agents) == (
        truth.switches, truth.ports, truth.peers, truth.agents)
    assert dict(mine.cables) == dict(truth.cables)
    assert truth.peers  # the fabric has cables across shards
    stand_ins = {n for n in fabric.graph if fabric.attrs(n).get(ELSEWHERE)}
    assert {id_name(n) for n in stand_ins if fabric.kind(n) == NodeKind.SWITCH} <= {
        name for name in names if not shard.owns(name)}
    assert truth.peers <= stand_ins
    ends = [n for n in fabric.graph if not fabric.attrs(n).get(ELSEWHERE)
            and fabric.kind(n) in (NodeKind.PORT, NodeKind.PF)]
    hosts_heard = not config.switches[0].role  # else a PF's far end is known on its leaf
    expected = {n: whole.peer(n) if hosts_heard or fabric.kind(n) == NodeKind.PORT
                or shard.owns(whole.attrs(whole.peer(n))["switch"]) else None for n in ends}
    assert {n: fabric.peer(n) for n in ends} == expected
    assert {n for n in stand_ins if fabric.kind(n) == NodeKind.PORT} == set(
        expected.values()) - set(ends) - {None}
    assert {p.kind for p in fabric.problems} <= {p.kind for p in whole.problems}
    read, ports = service._read_switches(fabric)
    truth_read, truth_ports = service._read_switches(whole)
    assert ([s.name for s in read], ports) == ([s.name for s in truth_read], truth_ports)


@pytest.fixture(scope="module")
def shards(emulated):
    return [_discovered(emulated, Shard(i, SHARDS)) for i in range(SHARDS)]


def test_the_shards_together_discover_what_one_process_does(shards, whole):
    parts = [service._discovered for service, _ in shards]
    union = merge_all(parts)
    for section in ("switches", "interfaces", "neighbors"):
        assert sorted(map(repr, getattr(union, section))) == sorted(
            map(repr, (f for f in getattr(whole.facts, section)
                       if section != "neighbors" or f.reporter == "switch")))
    assert sum(len(p.switches) for p in parts) == len(whole.facts.switches)


@pytest.mark.parametrize("built", ["by the CLI", "from fact files"])
def test_topology_answers_built_from_the_shards_facts_are_the_whole_fabrics(
        shards, whole, built, tmp_path):
    """What ``fabcorr topology ... --server`` with the shards answers: the whole fabric,
    built from every shard's switches' and hosts' ``/api/v1/topology/facts`` and one's
    workloads,
    answers as one process's; so does ``fabcorr topology build --facts`` of the shards'
    whole documents saved as files."""
    def facts(fabric: FabricGraph, **part: str) -> dict:
        status, document = handle(View(fabric), "GET", "/api/v1/topology/facts",
                                  {k: [v] for k, v in part.items()})
        assert status == 200
        return document

    if built == "by the CLI":
        merged = merge.fabric(facts(shards[-1][1], part="workloads"),
                              [(facts(fabric, part="switches"), facts(fabric, part="hosts"))
                               for _, fabric in shards])
    else:
        files = [tmp_path / f"{index}.json" for index in range(SHARDS)]
        for file, (_, fabric) in zip(files, shards, strict=True):
            file.write_text(json.dumps(facts(fabric)))
        merged = build_graph(read_facts(files))
    first, last = whole.facts.pods[0], whole.facts.pods[-1]
    job = whole.facts.jobs[0]
    spine_port = next(p for p in whole.nodes_of(NodeKind.PORT)
                      if whole.attrs(p)["switch"].startswith("spine") and whole.peer(p))
    asked = {"topology/summary": {}, "topology/problems": {},
             "topology/path": {"a": [f"{first.namespace}/{first.name}"],
                               "b": [f"{last.namespace}/{last.name}"]},
             "topology/where": {"q": [whole.facts.pod_interfaces[-1].ipv4.partition("/")[0]]},
             "topology/link": {"port": [id_name(spine_port)]},
             "topology/job": {"name": [f"{job.namespace}/{job.name}"]}}
    for endpoint, query in asked.items():
        answer = handle(View(merged), "GET", "/api/v1/" + endpoint, query)
        assert answer == handle(View(whole), "GET", "/api/v1/" + endpoint, query), endpoint
        assert answer[0] == 200 and (answer[1] or endpoint.endswith("problems")), endpoint
    path = asked["topology/path"]
    assert [handle(View(fabric), "GET", "/api/v1/topology/path", path)
            for _, fabric in shards].count(handle(View(whole), "GET", "/api/v1/topology/path",
                                                  path)) == 0  # no one shard answers it


def test_a_shard_keeps_the_nics_cabled_to_its_switches(emulated, shards, whole):
    """With the hosts' LLDP a shard keeps no PF its host hears on another shard's switch,
    nor its VFs, nor the pod interfaces on them (not flagged unattached: its owners table
    names them all, their traffic is attributed). Without it a shard cannot tell where a PF
    is cabled, and keeps them all."""
    hosts_heard = not emulated[1].switches[0].role
    cabled = {pf: whole.attrs(whole.peer(pf))["switch"]
              for pf in whole.nodes_of(NodeKind.PF) if whole.peer(pf)}
    for index, (service, fabric) in enumerate(shards):
        shard = Shard(index, SHARDS)
        kept = {pf for pf in whole.nodes_of(NodeKind.PF)
                if not hosts_heard or pf not in cabled or shard.owns(cabled[pf])}
        assert set(fabric.nodes_of(NodeKind.PF)) == kept
        assert {(vf.node, vf.pf) for vf in fabric.facts.vfs} == {
            (whole.attrs(pf)["node"], whole.attrs(pf)["name"]) for pf in kept}
        if emulated[1].kubernetes.source:  # the inventory makes no fact of the others' VFs
            read = service._known_facts()
            assert {(vf.node, vf.pci_address) for vf in read.vfs} == {
                (vf.node, vf.pci_address) for vf in whole.facts.vfs
                if pf_id(vf.node, vf.pf) in kept} | {
                (i.node, i.vf_pci) for i in whole.facts.pod_interfaces} < {
                (vf.node, vf.pci_address) for vf in whole.facts.vfs}
        away = {podif for podif, plug in plugs(whole).items()
                if not shard.owns(cabled[plug.pf])}
        assert set(fabric.nodes_of(NodeKind.POD_INTERFACE)) == set(
            whole.nodes_of(NodeKind.POD_INTERFACE)) - (away if hosts_heard else set())
        assert len(away) >= 4  # each shard's pods are mostly on the others' leaves
        assert owners(fabric) == owners(whole)
        assert {p for p in fabric.problems if p.kind == "podif-unattached"} == set()


def test_the_shards_fabric_series_are_one_processs(emulated, shards, whole):
    """Each series of the fabric (pod interfaces with their leaf ports, jobs, link speeds)
    is exposed by exactly one discovered shard, with the labels one process gives it.
    Without the hosts' LLDP a shard cannot tell a pod interface on another shard's leaf
    from one on no leaf: the shard of its pod's name also exposes it, leafless."""
    def series(view: View) -> dict[str, list[tuple]]:
        return {f.name: [(*key, value) for key, value in zip(f.keys, f.values, strict=True)]
                for f in families(view) if f.name in FABRIC_FAMILIES}

    alone = series(View(whole))
    together: dict[str, list[tuple]] = {name: [] for name in FABRIC_FAMILIES}
    for index, (_, fabric) in enumerate(shards):
        for name, found in series(View(fabric, shard=Shard(index, SHARDS))).items():
            assert {labels[-2] for labels in found} <= {str(index)}  # the shard label
            together[name] += [(*labels[:-2], labels[-1]) for labels in found]
    if emulated[1].switches[0].role:  # no hosts' LLDP
        interfaces = "fabcorr_pod_interface_info"
        extra = sorted(set(together.pop(interfaces)) - set(alone[interfaces]))
        on_leaves = alone.pop(interfaces)
        assert extra and {labels[7:9] for labels in extra} == {("", "")}
        assert {labels[:7] for labels in extra} <= {labels[:7] for labels in on_leaves}
    assert {name: sorted(found) for name, found in together.items()} == {
        name: sorted(found) for name, found in alone.items()}
    assert all(alone.values())


def test_a_shards_map_lays_out_its_share(shards):
    """A shard's page draws what it holds: its switches and the stand-ins at the far ends
    of their cables, each cable once."""
    for index, (_, fabric) in enumerate(shards):
        status, layout = handle(View(fabric, shard=Shard(index, SHARDS)), "GET",
                                "/api/v1/map/layout", {})
        assert status == 200
        labels = {box["label"] for box in layout["boxes"]}
        switches = {fabric.attrs(n)["name"] for n in fabric.nodes_of(NodeKind.SWITCH)}
        assert switches <= labels
        ends = [(cable["a"], cable["b"]) for cable in layout["cables"]]
        assert len(ends) == len(set(ends)) > 0

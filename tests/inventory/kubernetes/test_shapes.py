"""Live mode's cache keeps of each object what the inventory reads: the same inventory
(facts, problems, counts) from the shaped objects as from the whole ones, in a fraction
of the bytes. The oracle is the inventory itself, on objects nobody shaped: the example
cluster's kubectl dumps and the simulator's rendering of a generated fabric (every job
kind it renders); a live source's inventory equals the dumps' (``test_live.py``). What
they hold is measured as Python holds it (every object reachable, once)."""

from __future__ import annotations

import copy
import gc
import json
import sys
from pathlib import Path

import pytest

from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.mapping import sriov_nics
from inventory.kubernetes.objects import ClusterObjects, sort_objects
from inventory.kubernetes.shapes import shaped
from inventory.kubernetes.snapshot import read_cluster_objects
from simulator.generator import FabricSpec, generate_facts
from simulator.kube_objects import cluster_objects
from simulator.ladder import synthetic_jobs

RESOURCE = "sriovnetworknodestates"
EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small" / "kubernetes"
SHAPED = {"sriovnetworknodestates": 0.3, "pods": 0.75, "spiderendpoints": 0.7, "nodes": 0.5}
"""The resources shaped, and the most of their memory they keep here."""


def _held(value: object) -> int:
    """The bytes of every object reachable from ``value``, each once."""
    seen, total, pending = set(), 0, [value]
    while pending:
        item = pending.pop()
        if id(item) in seen or isinstance(item, type):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        pending.extend(gc.get_referents(item))
    return total


def _clusters() -> dict[str, ClusterObjects]:
    resources, others = sort_objects(cluster_objects(generate_facts(FabricSpec(
        nodes=16, rails=2, leaves_per_rail=2, spines=2, vfs_per_pf=8,
        jobs=synthetic_jobs(16, 2, 12, 3)))))
    return {"example dumps": read_cluster_objects([EXAMPLE]),
            "simulator": ClusterObjects({k: tuple(v) for k, v in resources.items()},
                                        tuple(others))}


def _states() -> list[dict]:
    dumped, rendered = (cluster.get(RESOURCE) for cluster in _clusters().values())
    assert len(dumped) >= 2 and len(rendered) == 16
    return [*dumped, *rendered]


@pytest.mark.parametrize("name", ["example dumps", "simulator"])
def test_the_inventory_of_shaped_objects_is_the_whole_objects(name):
    whole = _clusters()[name]
    kept = ClusterObjects({resource: tuple(shaped(resource, copy.deepcopy(o)) for o in found)
                           for resource, found in whole.resources.items()},
                          whole.others, whole.unreadable)
    assert all(whole.get(resource) for resource in SHAPED)
    assert build_inventory(kept) == build_inventory(whole)
    assert build_inventory(whole).facts.pod_interfaces
    for resource, most in SHAPED.items():
        assert _held(kept.get(resource)) < _held(whole.get(resource)) * most, resource


@pytest.mark.parametrize("state", _states(), ids=lambda s: s["metadata"]["name"])
def test_a_shaped_state_maps_to_the_same_nics_in_under_a_third_of_the_memory(state):
    whole = copy.deepcopy(state)
    kept = shaped(RESOURCE, state)
    assert sriov_nics(kept) == sriov_nics(whole)
    assert sriov_nics(kept)[1]  # it has VFs
    assert {k: kept["metadata"][k] for k in ("name", "namespace")} == {
        k: whole["metadata"][k] for k in ("name", "namespace")}
    assert _held(kept) < _held(whole) / 3


def _malformed() -> list[dict]:
    good = {"name": "ens1f0np0", "pciAddress": "0000:1a:00.0", "mac": "B8:3F:D2:00:00:01",
            "linkSpeed": "400000 Mb/s", "driver": "mlx5_core",
            "Vfs": [{"pciAddress": "0000:1a:00.2", "vfID": 0, "mtu": 9000}]}
    return [
        {"metadata": {"name": "gpu01"}},  # no status
        {"metadata": {"name": "gpu01"}, "status": {"interfaces": None}},
        {"metadata": {"name": "gpu01"}, "status": {"interfaces": [{"pciAddress": "x"}]}},
        {"metadata": {"name": "gpu01"}, "status": {"interfaces": [
            good, {**good, "name": "ens2", "Vfs": [{"pciAddress": "0000:3d:00.2"},
                                                   {"vfID": 3}]}]}},
        {"metadata": {"name": "gpu01"}, "status": {"interfaces": [  # kept as a list
            {**good, "Vfs": [{"pciAddress": "0000:1a:00.2", "vfID": True}]},
            {**good, "Vfs": [{"pciAddress": "0000:1a:00.2", "vfID": "3"}]},
            {**good, "Vfs": [{"pciAddress": "0000:1a:00.2\t", "vfID": 1, "mac": None}]},
            {**good, "Vfs": [{"pciAddress": "0000:1a:00.2", "vfID": 2}, "odd", None]},
            {**good, "Vfs": {"pciAddress": "0000:1a:00.2", "vfID": 2}}]}},
    ]


@pytest.mark.parametrize("state", _malformed())
def test_a_malformed_state_keeps_what_the_inventory_reports(state):
    whole = copy.deepcopy(state)
    assert sriov_nics(shaped(RESOURCE, state)) == sriov_nics(whole)


def test_other_resources_are_kept_whole():
    namespace = {"metadata": {"name": "t1", "labels": {"a": "b"}}, "spec": {"finalizers": []}}
    assert shaped("namespaces", copy.deepcopy(namespace)) == namespace


def test_malformed_pods_and_endpoints_report_alike():
    """Sections that are not objects, missing or odd fields: the inventory (facts,
    problems, counts) of the shaped objects is the whole objects'."""
    status = json.dumps([{"name": "default/sriov", "interface": "net1", "ips": ["10.0.0.5"],
                          "mac": "02:00:00:00:00:01", "device-info": {"type": "pci"}}])
    pods = [
        {"metadata": {"name": "a", "namespace": "ns", "uid": "u1", "annotations": {
            "k8s.v1.cni.cncf.io/network-status": status, "other": "x" * 100}},
         "spec": {"nodeName": "gpu01", "containers": [{"name": "c"}]}},
        {"metadata": {"name": "b", "namespace": "ns", "annotations": {
            "k8s.v1.cni.cncf.io/networks-status": "not json"}}, "spec": None},
        {"metadata": {"name": "c", "namespace": "ns", "annotations": "odd"}, "status": None},
        {"metadata": {"name": "d", "namespace": "ns", "annotations": None}},
    ]
    endpoints = [
        {"metadata": {"name": "a", "namespace": "ns", "ownerReferences": []},
         "status": {"current": {"uid": "u1", "node": "gpu01", "ips": [
             {"interface": "net1", "ipv4": "10.0.0.5/24", "vlan": "7", "extra": 1}, "odd"]},
             "ownerControllerType": "StatefulSet"}},
        {"metadata": {"name": "b", "namespace": "ns"}, "status": {"current": {"ips": None}}},
        {"metadata": {"name": "c", "namespace": "ns"}, "status": {"current": None}},
        {"metadata": {"name": "d", "namespace": "ns"}, "status": []},
    ]
    whole = ClusterObjects({"nodes": ({"metadata": {"name": "gpu01"}},), "pods": tuple(pods),
                            "spiderendpoints": tuple(endpoints)})
    kept = ClusterObjects({name: tuple(shaped(name, copy.deepcopy(o)) for o in found)
                           for name, found in whole.resources.items()})
    assert build_inventory(kept) == build_inventory(whole)
    assert {p.kind for p in build_inventory(whole).problems} >= {"network-status-malformed"}

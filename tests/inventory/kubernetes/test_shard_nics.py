"""A shard's Kubernetes inventory makes facts of the VFs of the NICs it keeps and of those
pod interfaces use, and nothing else differs: the oracle is the whole inventory of the
same objects (the example cluster's kubectl dumps, the simulator's rendering of a
generated fabric; that rendering with no pod's VF PCI address, so that pods are joined to
their VFs by MAC, and with no VF's MAC, so that they are joined by PCI address only), its
VFs filtered by what the shard keeps."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable

import pytest

from inventory.kubernetes.inventory import Inventory, build_inventory
from inventory.kubernetes.netstatus import ANNOTATIONS
from inventory.kubernetes.objects import ClusterObjects
from tests.inventory.kubernetes.test_shapes import _clusters

RULES: dict[str, Callable[[str, str], bool]] = {
    "no NIC": lambda node, pf: False,
    "every NIC": lambda node, pf: True,
    "a third of the PFs": lambda node, pf: sum(map(ord, node + pf)) % 3 == 0,
    "half the nodes": lambda node, pf: sum(map(ord, node)) % 2 == 0,
}


def _objects(name: str) -> ClusterObjects:
    if name not in ("joined by MAC", "VFs without a MAC"):
        return _clusters()[name]
    rendered = _clusters()["simulator"]
    if name == "VFs without a MAC":
        states = copy.deepcopy(rendered.get("sriovnetworknodestates"))
        for state in states:
            for interface in state["status"]["interfaces"]:
                for vf in interface["Vfs"]:
                    del vf["mac"]
        return dataclasses.replace(rendered, resources={
            **rendered.resources, "sriovnetworknodestates": states})
    pods = copy.deepcopy(rendered.get("pods"))
    for pod in pods:
        annotations = pod["metadata"]["annotations"]
        status = json.loads(annotations[ANNOTATIONS[0]])
        for entry in status:
            entry.pop("device-info", None)
        annotations[ANNOTATIONS[0]] = json.dumps(status)
    return dataclasses.replace(rendered, resources={**rendered.resources, "pods": pods})


def _kept(whole: Inventory, keeps: Callable[[str, str], bool]) -> Inventory:
    joined = {(i.node, i.vf_pci) for i in whole.facts.pod_interfaces}
    vfs = tuple(vf for vf in whole.facts.vfs
                if keeps(vf.node, vf.pf) or (vf.node, vf.pci_address) in joined)
    return dataclasses.replace(whole, facts=dataclasses.replace(whole.facts, vfs=vfs))


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["example dumps", "simulator", "joined by MAC",
                                  "VFs without a MAC"])
def test_a_shards_inventory_is_the_whole_one_with_its_vfs(name, rule):
    objects = _objects(name)
    whole = build_inventory(objects)
    shards = build_inventory(objects, keeps=RULES[rule])
    assert shards == _kept(whole, RULES[rule])
    kept = len(shards.facts.vfs)
    joined = len({(i.node, i.vf_pci) for i in whole.facts.pod_interfaces})
    if name == "joined by MAC":
        assert {p.kind for p in whole.problems} == {"device-info-missing"}
    if rule == "no NIC":
        assert kept < len(whole.facts.vfs)
        assert len(shards.facts.pod_interfaces) >= joined > 0
    if rule == "every NIC":
        assert kept == len(whole.facts.vfs) == whole.counts["vfs"]

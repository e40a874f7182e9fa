"""``fabcorr simulate generate --size``: the ladder's small fabric, its facts and its
Kubernetes objects, counted against REFERENCE §8 and the ladder's own arithmetic."""

import json

import pytest

from correlator.cli.main import main
from inventory.factfile import read_facts

# REFERENCE §8, tier "small": 128 nodes of 8 GPUs and 8 x 400G NICs, one VF per GPU and 8
# configured per PF, 16 leaves, 8 spines, 2,048 links; 24 jobs of 6 tenants (4-8, 16-32).
NODES, RAILS, VFS_PER_PF, LEAVES, SPINES, LINKS, JOBS, TENANTS = 128, 8, 8, 16, 8, 2048, 24, 6
GPUS = NODES * RAILS
# half the nodes run one whole-node pod, the other half two half-node pods (~192 pods)
PODS = NODES // 2 + NODES // 2 * 2
LEAF_DOWN = NODES // (LEAVES // RAILS)  # 64 nodes per leaf of a rail
LEAF_UP = SPINES * 8  # 64 up: the 51.2T switch's other half, 8 cables to each spine


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    code = main(["simulate", "generate", "--size", "small", "--facts-out",
                 str(folder / "facts.yaml"), "--kube-out", str(folder / "kubernetes"),
                 "--out", str(folder / "topology.json")])
    assert code == 0
    return folder


def _cli_json(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def test_the_snapshot_has_the_small_tier_counts(capsys, small):
    summary, _ = _cli_json(capsys, "topology", "summary", "-o", "json", "--snapshot",
                           str(small / "topology.json"))
    assert summary["nodes"] == {
        "tenant": TENANTS, "job": JOBS, "pod": PODS, "pod-interface": GPUS,
        "vf": GPUS * VFS_PER_PF, "pf": GPUS, "node": NODES, "switch": LEAVES + SPINES,
        "port": LEAVES * (LEAF_DOWN + LEAF_UP) + SPINES * LEAVES * 8}
    assert summary["switches"] == {"leaf": LEAVES, "spine": SPINES}
    host, fabric = GPUS, LEAVES * LEAF_UP
    assert host + fabric == LINKS
    assert summary["links"] == {"host": {"confirmed": host}, "leaf-spine": {"confirmed": fabric}}
    assert summary["problems"] == {}


def test_the_facts_file_holds_the_same_fabric(small):
    facts = read_facts([small / "facts.yaml"])
    assert (len(facts.switches), len(facts.nodes), len(facts.pfs), len(facts.vfs),
            len(facts.pods), len(facts.pod_interfaces), len(facts.jobs), len(facts.tenants)) == (
        LEAVES + SPINES, NODES, GPUS, GPUS * VFS_PER_PF, PODS, GPUS, JOBS, TENANTS)
    assert sorted(t.name for t in facts.tenants) == [f"tenant-{n:02d}" for n in range(1, 7)]
    whole = [p for p in facts.pods if sum(i.pod == p.name and i.namespace == p.namespace
                                          for i in facts.pod_interfaces) == RAILS]
    assert len(whole) == NODES // 2


def test_the_kubernetes_objects_are_kubectl_lists_an_inventory_reads(capsys, small):
    folder = small / "kubernetes"

    def items(name):
        document = json.loads((folder / f"{name}.json").read_text())
        assert document["kind"] == "List"
        return document["items"]

    assert len(items("pods")) == len(items("spiderendpoints")) == PODS
    assert len(items("nodes")) == len(items("sriovnetworknodestates")) == NODES
    assert sorted(n["metadata"]["name"] for n in items("namespaces")) == [
        "spiderpool", "sriov-network-operator", *(f"tenant-{n:02d}" for n in range(1, 7))]
    states = items("sriovnetworknodestates")
    assert sum(i["numVfs"] for s in states for i in s["status"]["interfaces"]) == \
        GPUS * VFS_PER_PF
    attachments = [a for p in items("pods") for a in json.loads(
        p["metadata"]["annotations"]["k8s.v1.cni.cncf.io/network-status"]) if not a.get("default")]
    assert len(attachments) == GPUS
    code = main(["inventory", "tenants", "--from", str(folder), "-o", "json"])
    assert code == 0
    assert capsys.readouterr().err == (
        f"{PODS:,} pods ({PODS:,} with RDMA interfaces), {GPUS:,} interfaces ({GPUS:,} joined to "
        f"a VF), {JOBS:,} jobs, {TENANTS:,} tenants, 0 problems\n")


def test_sizes_are_the_four_tiers(capsys):
    assert main(["simulate", "generate", "--size", "huge"]) == 2
    assert capsys.readouterr().err == ("fabcorr: --size: invalid choice: 'huge' (choose from "
                                       "'small', 'medium', 'large', 'x-large')\n")

"""``fabcorr inventory``: from kubectl dumps and from a live API server, and into topology."""

import dataclasses
import json
from pathlib import Path

import pytest

from correlator.cli.main import main
from inventory.factfile import read_facts, write_facts
from simulator.kube_api import FakeKubeApi
from simulator.kube_objects import cluster_objects

EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small"
DUMPS = str(EXAMPLE / "kubernetes")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_interfaces_from_dumps_as_json(capsys):
    code, out, err = run(capsys, "inventory", "interfaces", "--from", DUMPS, "-o", "json")
    rows = json.loads(out)
    assert code == 0
    assert err == ("10 pods (10 with RDMA interfaces), 20 interfaces (20 joined to a VF), "
                   "3 jobs, 2 tenants, 0 problems\n")
    eval_0 = [r for r in rows if r["pod"] == "eval-0"]
    assert [(r["interface"], r["ipv4"], r["vf_pci"], r["fixed"]) for r in eval_0] == [
        ("net1", "10.101.0.10/16", "0000:1a:00.3", True),
        ("net2", "10.102.0.10/16", "0000:3d:00.3", True)]


def test_jobs_table(capsys):
    code, out, _ = run(capsys, "inventory", "jobs", "--from", DUMPS)
    assert (code, out.splitlines()) == (0, [
        "NAMESPACE  NAME          KIND         TENANT",
        "team-a     llm-pretrain  PyTorchJob   team-a",
        "team-b     bert-large    MPIJob       team-b",
        "team-a     eval          StatefulSet  team-a",
    ])


def test_kubernetes_dumps_feed_the_topology(capsys, tmp_path):
    # Switch and host LLDP facts alone, plus what Kubernetes says: the same fabric.
    facts = read_facts([EXAMPLE / "facts.yaml"])
    network_only = dataclasses.replace(facts, pfs=(), vfs=(), pods=(), pod_interfaces=(),
                                       jobs=(), tenants=())
    write_facts(network_only, tmp_path / "network.yaml")
    snapshot = tmp_path / "t.json"
    assert main(["topology", "build", "--facts", str(tmp_path / "network.yaml"),
                 "--kubernetes", DUMPS, "-o", str(snapshot)]) == 0
    code, out, _ = run(capsys, "topology", "link", "spine01:Ethernet1", "-o", "json",
                       "--snapshot", str(snapshot))
    assert code == 0
    assert json.loads(out)["tenants"] == ["team-a", "team-b"]
    code, out, _ = run(capsys, "topology", "summary", "-o", "json", "--snapshot", str(snapshot))
    summary = json.loads(out)
    assert summary["problems"] == {}
    assert summary["nodes"]["pod-interface"] == 20 and summary["nodes"]["vf"] == 64


def test_facts_needs_a_file(capsys):
    code, _, err = run(capsys, "inventory", "facts", "--from", DUMPS)
    assert code == 2 and "needs -o FILE" in err


def test_live_cluster_through_a_kubeconfig(capsys, tmp_path):
    objects = cluster_objects(read_facts([EXAMPLE / "facts.yaml"]))
    with FakeKubeApi(objects) as api:
        kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
        code, out, err = run(capsys, "inventory", "pods", "--kubeconfig", kubeconfig,
                             "--context", "fake", "-o", "json", "--timeout", "10")
    assert code == 0, err
    assert len(json.loads(out)) == 10
    assert "listing Kubernetes resources..." in err


def test_unreachable_cluster_times_out_with_exit_2(capsys, tmp_path):
    with FakeKubeApi([]) as api:
        kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    code, _, err = run(capsys, "inventory", "pods", "--kubeconfig", kubeconfig,
                       "--timeout", "1")
    assert code == 2
    assert "initial lists not done after 1s" in err


@pytest.mark.parametrize("argv", [["inventory", "pods", "--from", "/nonexistent"]])
def test_missing_dump_exits_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2 and "no such file or directory" in err

"""``fabcorr inventory``: from kubectl dumps and from a live API server, and into topology."""

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

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
                 "--kubernetes", DUMPS, "--out", str(snapshot)]) == 0
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
    assert (code, err.splitlines()[-1]) == (
        2, "fabcorr: --out: 'inventory facts' needs --out FILE (.yaml or .json, '-' for "
           "standard output)")


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


def _dumps_copy(tmp_path, change):
    """The example dumps copied into ``tmp_path``, ``change(name, document)`` applied to
    each file's parsed JSON."""
    folder = tmp_path / "kubernetes"
    folder.mkdir()
    for path in sorted((EXAMPLE / "kubernetes").glob("*.json")):
        document = json.loads(path.read_text())
        change(path.stem, document)
        (folder / path.name).write_text(json.dumps(document))
    return folder


def _item(document, name):
    (found,) = [i for i in document["items"] if i["metadata"]["name"] == name]
    return found


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml"])
def test_tenants_in_every_format(capsys, fmt):
    code, out, _ = run(capsys, "inventory", "tenants", "--from", DUMPS, "-o", fmt)
    assert code == 0
    # both namespaces carry the label tenant=<their name> (examples/.../namespaces.json)
    rows = [{"name": "team-a", "source": "label:tenant"},
            {"name": "team-b", "source": "label:tenant"}]
    if fmt in ("json", "yaml"):
        assert (json.loads(out) if fmt == "json" else yaml.safe_load(out)) == rows
    else:
        assert out.splitlines() == ["NAME    SOURCE", "team-a  label:tenant",
                                    "team-b  label:tenant"]


def _relabelled(name, document):
    """team-a labelled org=acme, team-b's tenant label removed; bert-large (team-b) queued
    on a LocalQueue whose ClusterQueue is in the cohort 'research'."""
    if name == "namespaces":
        _item(document, "team-a")["metadata"]["labels"]["org"] = "acme"
        del _item(document, "team-b")["metadata"]["labels"]["tenant"]
    if name == "mpijobs":
        _item(document, "bert-large")["metadata"].setdefault("labels", {})[
            "kueue.x-k8s.io/queue-name"] = "gpus"


def _queues(folder):
    (folder / "localqueues.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
        "items": [{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                   "metadata": {"name": "gpus", "namespace": "team-b"},
                   "spec": {"clusterQueue": "shared-a100"}}]}))
    (folder / "clusterqueues.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
        "items": [{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
                   "metadata": {"name": "shared-a100"}, "spec": {"cohort": "research"}}]}))


@pytest.mark.parametrize(("rules", "team_a", "team_b"), [
    ([], ("team-a", "label:tenant"), ("research", "kueue")),  # the default rules, in order
    (["namespace"], ("team-a", "namespace"), ("team-b", "namespace")),
    (["label:org", "namespace"], ("acme", "label:org"), ("team-b", "namespace")),
    (["kueue", "label:org", "namespace"], ("acme", "label:org"), ("research", "kueue")),
    (["label:tenant", "namespace"], ("team-a", "label:tenant"), ("team-b", "namespace")),
])
def test_tenant_rules_apply_in_the_order_given(capsys, tmp_path, rules, team_a, team_b):
    folder = _dumps_copy(tmp_path, _relabelled)
    _queues(folder)
    argv = [x for rule in rules for x in ("--tenant-rule", rule)]
    code, out, _ = run(capsys, "inventory", "tenants", "--from", str(folder), *argv, "-o",
                       "json")
    assert code == 0
    assert sorted((t["name"], t["source"]) for t in json.loads(out)) == sorted([team_a,
                                                                               team_b])
    code, out, _ = run(capsys, "inventory", "jobs", "--from", str(folder), *argv, "-o", "json")
    assert code == 0
    assert {j["name"]: j["tenant"] for j in json.loads(out)} == {
        "llm-pretrain": team_a[0], "eval": team_a[0], "bert-large": team_b[0]}


def test_a_bad_tenant_rule_exits_2_naming_it(capsys):
    code, _, err = run(capsys, "inventory", "tenants", "--from", DUMPS, "--tenant-rule",
                       "label:")
    assert (code, err) == (2, "fabcorr: tenant rules: label:: a rule is label:<key>, kueue "
                           "or namespace\n")


def _stale_endpoint(name, document):
    """llm-pretrain-worker-0's SpiderEndpoint names another pod's uid."""
    if name == "spiderendpoints":
        _item(document, "llm-pretrain-worker-0")["status"]["current"]["uid"] = "uid-gone"


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml"])
def test_problems_in_every_format(capsys, tmp_path, fmt):
    folder = _dumps_copy(tmp_path, _stale_endpoint)
    code, out, err = run(capsys, "inventory", "problems", "--from", str(folder), "-o", fmt)
    assert code == 0
    assert err.endswith(", 3 problems\n")
    # the stale endpoint is not used, so both interfaces take their prefix from the pool
    subject = "podif:team-a/llm-pretrain-worker-0/"
    rows = [{"kind": "spiderendpoint-stale", "subject": "pod:team-a/llm-pretrain-worker-0",
             "detail": "endpoint is for pod uid uid-gone"},
            *({"kind": "spiderendpoint-missing", "subject": subject + net,
               "detail": "no SpiderEndpoint entry: prefix from the pool"}
              for net in ("net1", "net2"))]
    if fmt in ("json", "yaml"):
        assert (json.loads(out) if fmt == "json" else yaml.safe_load(out)) == rows
    else:
        width = len("spiderendpoint-missing") + 2
        assert out.splitlines() == [
            "KIND".ljust(width) + "SUBJECT".ljust(len(subject + "net1") + 2) + "DETAIL",
            *(r["kind"].ljust(width) + r["subject"].ljust(len(subject + "net1") + 2)
              + r["detail"] for r in rows)]


def test_problems_of_a_clean_cluster_are_none(capsys):
    code, out, _ = run(capsys, "inventory", "problems", "--from", DUMPS, "-o", "json")
    assert (code, json.loads(out)) == (0, [])


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_facts_are_written_for_topology_build(capsys, tmp_path, suffix):
    out_file = tmp_path / f"k8s{suffix}"
    code, out, _ = run(capsys, "inventory", "facts", "--from", DUMPS, "--out", str(out_file))
    assert (code, out) == (0, "")
    facts = read_facts([out_file])
    endpoints = json.loads((EXAMPLE / "kubernetes" / "spiderendpoints.json").read_text())
    expected = {(e["metadata"]["namespace"], e["metadata"]["name"], ip["interface"], ip["ipv4"])
                for e in endpoints["items"] for ip in e["status"]["current"]["ips"]}
    assert len(expected) == 20
    assert {(i.namespace, i.pod, i.interface, i.ipv4) for i in facts.pod_interfaces} == expected
    pods = json.loads((EXAMPLE / "kubernetes" / "pods.json").read_text())["items"]
    assert sorted((p.namespace, p.name, p.node) for p in facts.pods) == sorted(
        (p["metadata"]["namespace"], p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods)
    assert sorted((t.name, t.source) for t in facts.tenants) == [
        ("team-a", "label:tenant"), ("team-b", "label:tenant")]
    assert sorted((j.namespace, j.name, j.kind) for j in facts.jobs) == [
        ("team-a", "eval", "StatefulSet"), ("team-a", "llm-pretrain", "PyTorchJob"),
        ("team-b", "bert-large", "MPIJob")]
    assert facts.switches == facts.neighbors == ()  # Kubernetes knows no switches


def test_facts_follow_the_tenant_rules(capsys, tmp_path):
    out_file = tmp_path / "k8s.yaml"
    assert run(capsys, "inventory", "facts", "--from", DUMPS, "--tenant-rule", "namespace",
               "--out", str(out_file))[0] == 0
    facts = read_facts([out_file])
    assert sorted((t.name, t.source) for t in facts.tenants) == [
        ("team-a", "namespace"), ("team-b", "namespace")]


@pytest.mark.parametrize("view", ["tenants", "problems"])
def test_an_unknown_format_exits_2_listing_the_formats(capsys, view):
    code, out, err = run(capsys, "inventory", view, "--from", DUMPS, "-o", "xml")
    assert (code, out) == (2, "")
    assert err == ("fabcorr: --output: invalid choice: 'xml' (choose from 'table', 'wide', "
                   "'json', 'yaml', 'jsonl')\n")


@pytest.mark.parametrize(("suffix", "fmt"), [(".yaml", "table"), (".yaml", "yaml"),
                                             (".json", "json")])
def test_facts_out_dash_writes_standard_output(capsys, tmp_path, suffix, fmt):
    out_file = tmp_path / f"k8s{suffix}"
    assert run(capsys, "inventory", "facts", "--from", DUMPS, "--out", str(out_file))[0] == 0
    code, out, _ = run(capsys, "inventory", "facts", "--from", DUMPS, "--out", "-", "-o", fmt)
    assert (code, out) == (0, out_file.read_text())
    assert not (tmp_path / "-").exists()


def test_out_is_only_for_facts(capsys):
    assert run(capsys, "inventory", "pods", "--from", DUMPS, "--out", "x.yaml")[::2] == (
        2, "10 pods (10 with RDMA interfaces), 20 interfaces (20 joined to a VF), 3 jobs, 2 "
           "tenants, 0 problems\nfabcorr: --out: only for 'inventory facts', not 'pods'\n")

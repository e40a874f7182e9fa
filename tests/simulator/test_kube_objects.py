"""Rendering a FactSet as the Kubernetes objects of a Spiderpool + Multus + SR-IOV cluster."""

import dataclasses
import json
from collections import Counter

import pytest

from simulator.generator import FabricSpec, JobSpec, generate_facts
from simulator.kube_objects import cluster_objects, write_kubectl_dump

SPEC = FabricSpec(nodes=2, rails=2, vfs_per_pf=2, spines=1, pods_per_nic=2, jobs=(
    JobSpec("team-a", "llm", "PyTorchJob", 2),
    JobSpec("team-b", "db", "StatefulSet", 1),
    JobSpec("team-b", "js", "JobSet", 1),
))


@pytest.fixture(scope="module")
def facts():
    SPEC.validate()
    return generate_facts(SPEC)


@pytest.fixture(scope="module")
def objects(facts):
    return cluster_objects(facts)


def find(objects, kind, name, namespace=None):
    (obj,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name
              and o["metadata"].get("namespace") == namespace]
    return obj


def test_every_fact_becomes_the_expected_objects(objects):
    assert Counter(o["kind"] for o in objects) == {
        "Namespace": 4, "Node": 2, "SriovNetworkNodeState": 2, "SpiderIPPool": 2,
        "SpiderMultusConfig": 2, "NetworkAttachmentDefinition": 2, "PyTorchJob": 1,
        "StatefulSet": 1, "JobSet": 1, "Job": 1, "Pod": 4, "SpiderEndpoint": 4,
    }
    namespaces = {o["metadata"]["name"]: o["metadata"]["labels"].get("tenant")
                  for o in objects if o["kind"] == "Namespace"}
    assert namespaces == {"team-a": "team-a", "team-b": "team-b", "spiderpool": None,
                          "sriov-network-operator": None}
    node = find(objects, "Node", "gpu02")
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "gpu02"
    assert node["status"]["addresses"][0] == {"type": "InternalIP", "address": "192.168.0.11"}


def test_network_status_lists_eth0_then_every_vf_with_bare_ips(objects):
    pod = find(objects, "Pod", "llm-worker-1", "team-a")
    assert json.loads(pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/network-status"]) == [
        {"name": "k8s-pod-network", "interface": "eth0", "ips": ["10.233.64.2"],
         "default": True},
        {"name": "spiderpool/rail1-sriov", "interface": "net1", "ips": ["10.101.0.3"],
         "mac": "02:00:00:01:00:00", "dns": {},
         "device-info": {"type": "pci", "version": "1.1.0",
                         "pci": {"pci-address": "0000:1a:00.2", "rdma-device": "mlx5_2"}}},
        {"name": "spiderpool/rail2-sriov", "interface": "net2", "ips": ["10.102.0.3"],
         "mac": "02:00:00:01:01:00", "dns": {},
         "device-info": {"type": "pci", "version": "1.1.0",
                         "pci": {"pci-address": "0000:3d:00.2", "rdma-device": "mlx5_4"}}},
    ]
    assert json.loads(pod["metadata"]["annotations"]["ipam.spidernet.io/ippools"]) == [
        {"interface": "net1", "ipv4": ["rail1-v4"]}, {"interface": "net2", "ipv4": ["rail2-v4"]}]
    assert pod["spec"]["nodeName"] == "gpu02"
    assert pod["metadata"]["uid"] == "uid-llm-1"
    assert pod["status"] == {"phase": "Running", "hostIP": "192.168.0.11",
                             "podIP": "10.233.64.2", "podIPs": [{"ip": "10.233.64.2"}],
                             "startTime": "2026-01-01T00:00:00Z"}


def test_pod_times_come_from_the_interfaces_and_ended_interfaces_are_gone(facts):
    moved = [dataclasses.replace(pi, valid_from=1_767_229_200.7) if pi.pod == "db-0" else pi
             for pi in facts.pod_interfaces]
    ended = [dataclasses.replace(pi, valid_until=1_767_230_000.0)
             if pi.pod == "js-worker-0" and pi.interface == "net2" else pi for pi in moved]
    objects = cluster_objects(dataclasses.replace(facts, pod_interfaces=tuple(ended)))
    pod = find(objects, "Pod", "db-0", "team-b")
    assert pod["metadata"]["creationTimestamp"] == "2026-01-01T01:00:00Z"
    assert pod["status"]["startTime"] == "2026-01-01T01:00:00Z"
    js = find(objects, "Pod", "js-worker-0", "team-b")
    status = json.loads(js["metadata"]["annotations"]["k8s.v1.cni.cncf.io/network-status"])
    assert [entry["interface"] for entry in status] == ["eth0", "net1"]
    pool = find(objects, "SpiderIPPool", "rail2-v4")
    assert sorted(json.loads(pool["status"]["allocatedIPs"])) == [
        "10.102.0.2", "10.102.0.3", "10.102.0.4"]


def test_fixed_ip_endpoint_has_no_owner_and_keeps_prefixes(objects):
    endpoint = find(objects, "SpiderEndpoint", "db-0", "team-b")
    assert "ownerReferences" not in endpoint["metadata"]
    assert "finalizers" not in endpoint["metadata"]
    assert endpoint["status"] == {
        "current": {"uid": "uid-db-0", "node": "gpu01", "ips": [
            {"interface": "net1", "ipv4": "10.101.0.4/16", "ipv4Pool": "rail1-v4",
             "ipv4Gateway": "10.101.0.1", "vlan": 0, "mac": "02:00:00:00:00:01"},
            {"interface": "net2", "ipv4": "10.102.0.4/16", "ipv4Pool": "rail2-v4",
             "ipv4Gateway": "10.102.0.1", "vlan": 0, "mac": "02:00:00:00:01:01"},
        ]},
        "ownerControllerType": "StatefulSet", "ownerControllerName": "db",
    }
    pod = find(objects, "Pod", "db-0", "team-b")
    sts = find(objects, "StatefulSet", "db", "team-b")
    assert pod["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]


def test_pytorchjob_owns_its_pods_directly(objects):
    job = find(objects, "PyTorchJob", "llm", "team-a")
    assert job["apiVersion"] == "kubeflow.org/v1"
    pods = [find(objects, "Pod", f"llm-worker-{i}", "team-a") for i in range(2)]
    for pod in pods:
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "llm",
            "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    labels = [pod["metadata"]["labels"] for pod in pods]
    assert labels[0]["training.kubeflow.org/job-role"] == "master"
    assert "training.kubeflow.org/job-role" not in labels[1]
    assert [(la["training.kubeflow.org/job-name"], la["training.kubeflow.org/replica-type"],
             la["training.kubeflow.org/replica-index"]) for la in labels] == [
        ("llm", "worker", "0"), ("llm", "worker", "1")]
    endpoint = find(objects, "SpiderEndpoint", "llm-worker-0", "team-a")
    assert endpoint["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "Pod", "name": "llm-worker-0", "uid": "uid-llm-0",
        "controller": True, "blockOwnerDeletion": True}]
    assert endpoint["metadata"]["finalizers"] == ["spiderpool.spidernet.io"]
    assert (endpoint["status"]["ownerControllerType"],
            endpoint["status"]["ownerControllerName"]) == ("PyTorchJob", "llm")


def test_jobset_owns_a_job_that_owns_the_pods(objects):
    jobset = find(objects, "JobSet", "js", "team-b")
    job = find(objects, "Job", "js-workers-0", "team-b")
    pod = find(objects, "Pod", "js-worker-0", "team-b")
    assert (jobset["apiVersion"], job["apiVersion"]) == ("jobset.x-k8s.io/v1alpha2", "batch/v1")
    assert [(r["kind"], r["name"], r["uid"]) for r in job["metadata"]["ownerReferences"]] == [
        ("JobSet", "js", jobset["metadata"]["uid"])]
    assert [(r["kind"], r["name"], r["uid"]) for r in pod["metadata"]["ownerReferences"]] == [
        ("Job", "js-workers-0", job["metadata"]["uid"])]
    labels = pod["metadata"]["labels"]
    assert labels["jobset.sigs.k8s.io/jobset-uid"] == jobset["metadata"]["uid"]
    assert labels["batch.kubernetes.io/controller-uid"] == job["metadata"]["uid"]
    assert {key: labels[key] for key in (
        "jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/replicatedjob-name",
        "jobset.sigs.k8s.io/job-index", "batch.kubernetes.io/job-name", "job-name",
        "batch.kubernetes.io/job-completion-index")} == {
        "jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/job-index": "0", "batch.kubernetes.io/job-name": "js-workers-0",
        "job-name": "js-workers-0", "batch.kubernetes.io/job-completion-index": "0"}
    assert len(labels["jobset.sigs.k8s.io/job-key"]) == 40
    endpoint = find(objects, "SpiderEndpoint", "js-worker-0", "team-b")
    # Spiderpool stops at a Job unless a CronJob owns it
    assert (endpoint["status"]["ownerControllerType"],
            endpoint["status"]["ownerControllerName"]) == ("Job", "js-workers-0")


def test_node_state_lists_pfs_and_their_vfs(facts, objects):
    state = find(objects, "SriovNetworkNodeState", "gpu01", "sriov-network-operator")
    assert state["apiVersion"] == "sriovnetwork.openshift.io/v1"
    interfaces = state["status"]["interfaces"]
    assert [(i["name"], i["pciAddress"], i["mac"], i["linkSpeed"], i["numVfs"], i["totalvfs"],
             i["driver"], i["eSwitchMode"]) for i in interfaces] == [
        ("ens1f0np0", "0000:1a:00.0", "b8:3f:d2:00:00:00", "400000 Mb/s", 2, 2, "mlx5_core",
         "legacy"),
        ("ens2f0np0", "0000:3d:00.0", "b8:3f:d2:00:00:01", "400000 Mb/s", 2, 2, "mlx5_core",
         "legacy"),
    ]
    rendered = [(i["name"], vf["vfID"], vf["pciAddress"], vf["mac"], vf["name"], vf["Vlan"])
                for i in interfaces for vf in i["Vfs"]]
    expected = [(v.pf, v.vf_index, v.pci_address, v.mac, f"{v.pf}v{v.vf_index}", 0)
                for v in facts.vfs if v.node == "gpu01"]
    assert rendered == expected
    assert rendered[1] == ("ens1f0np0", 1, "0000:1a:00.3", "02:00:00:00:00:01", "ens1f0np0v1", 0)


def test_ippool_allocations_are_a_json_string_of_the_pool_ips(objects):
    pool = find(objects, "SpiderIPPool", "rail1-v4")
    assert "namespace" not in pool["metadata"]
    assert pool["spec"] == {"ipVersion": 4, "subnet": "10.101.0.0/16",
                            "ips": ["10.101.0.2-10.101.255.254"], "gateway": "10.101.0.1",
                            "default": False, "multusName": ["spiderpool/rail1-sriov"]}
    allocated = pool["status"]["allocatedIPs"]
    assert isinstance(allocated, str)
    assert json.loads(allocated) == {
        "10.101.0.2": {"pod": "team-a/llm-worker-0", "podUid": "uid-llm-0"},
        "10.101.0.3": {"pod": "team-a/llm-worker-1", "podUid": "uid-llm-1"},
        "10.101.0.4": {"pod": "team-b/db-0", "podUid": "uid-db-0"},
        "10.101.0.5": {"pod": "team-b/js-worker-0", "podUid": "uid-js-0"},
    }
    assert (pool["status"]["allocatedIPCount"], pool["status"]["totalIPCount"]) == (4, 65533)


def test_multus_config_and_its_attachment_definition(objects):
    smc = find(objects, "SpiderMultusConfig", "rail2-sriov", "spiderpool")
    assert smc["spec"]["cniType"] == "sriov"
    assert smc["spec"]["sriov"] == {"resourceName": "spidernet.io/rail2-sriov", "vlanID": 0,
                                    "rdmaIsolation": True, "ippools": {"ipv4": ["rail2-v4"]}}
    nad = find(objects, "NetworkAttachmentDefinition", "rail2-sriov", "spiderpool")
    assert nad["apiVersion"] == "k8s.cni.cncf.io/v1"
    assert nad["metadata"]["annotations"] == {
        "k8s.v1.cni.cncf.io/resourceName": "spidernet.io/rail2-sriov"}
    assert nad["metadata"]["ownerReferences"][0]["uid"] == smc["metadata"]["uid"]
    config = json.loads(nad["spec"]["config"])
    assert config["name"] == "rail2-sriov"
    assert [p["type"] for p in config["plugins"]] == ["sriov", "rdma", "coordinator"]
    assert config["plugins"][0]["vlan"] == 0
    assert config["plugins"][0]["ipam"] == {"type": "spiderpool",
                                            "default_ipv4_ippool": ["rail2-v4"]}


def test_kubectl_dump_writes_one_list_per_kind(objects, tmp_path):
    paths = write_kubectl_dump(objects, tmp_path / "dump")
    assert [p.name for p in paths] == [
        "jobs.json", "jobsets.json", "namespaces.json", "network-attachment-definitions.json",
        "nodes.json", "pods.json", "pytorchjobs.json", "spiderendpoints.json",
        "spiderippools.json", "spidermultusconfigs.json", "sriovnetworknodestates.json",
        "statefulsets.json"]
    seen = []
    for path in paths:
        listing = json.loads(path.read_text())
        assert listing.keys() == {"apiVersion", "kind", "items", "metadata"}
        assert (listing["apiVersion"], listing["kind"], listing["metadata"]) == (
            "v1", "List", {"resourceVersion": ""})
        kinds = {item["kind"] for item in listing["items"]}
        assert len(kinds) == 1
        assert listing["items"] == [o for o in objects if o["kind"] in kinds]
        seen += listing["items"]
    assert len(seen) == len(objects)


def test_rendering_is_deterministic(facts, objects):
    assert cluster_objects(facts) == objects
    assert json.dumps(cluster_objects(facts)) == json.dumps(objects)
    rvs = [o["metadata"]["resourceVersion"] for o in objects]
    assert len(set(rvs)) == len(objects)


def test_other_owner_kinds():
    facts = generate_facts(FabricSpec(nodes=2, rails=2, vfs_per_pf=4, spines=1, pods_per_nic=4,
                                      jobs=(JobSpec("t", "mpi", "MPIJob", 1),
                                            JobSpec("t", "lws", "LeaderWorkerSet", 2),
                                            JobSpec("t", "batch", "Job", 1),
                                            JobSpec("t", "vc", "VolcanoJob", 1))))
    objects = cluster_objects(facts)
    mpi = find(objects, "Pod", "mpi-worker-0", "t")["metadata"]["labels"]
    assert mpi["training.kubeflow.org/replica-type"] == "Worker"
    lws = find(objects, "LeaderWorkerSet", "lws", "t")
    sts = find(objects, "StatefulSet", "lws", "t")
    assert sts["metadata"]["ownerReferences"][0]["uid"] == lws["metadata"]["uid"]
    leader = find(objects, "Pod", "lws-1", "t")["metadata"]
    assert leader["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
    assert {k: v for k, v in leader["labels"].items() if k.startswith("leaderworkerset")
            and not k.endswith("group-key")} == {
        "leaderworkerset.sigs.k8s.io/name": "lws", "leaderworkerset.sigs.k8s.io/group-index": "1",
        "leaderworkerset.sigs.k8s.io/worker-index": "0"}
    assert "ownerReferences" not in find(objects, "SpiderEndpoint", "lws-1", "t")["metadata"]
    job = find(objects, "Job", "batch", "t")
    assert job["apiVersion"] == "batch/v1"
    labels = find(objects, "Pod", "batch-worker-0", "t")["metadata"]["labels"]
    assert labels == {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"],
                      "batch.kubernetes.io/job-name": "batch",
                      "controller-uid": job["metadata"]["uid"], "job-name": "batch",
                      "batch.kubernetes.io/job-completion-index": "0"}
    volcano = [o for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1"]
    assert [(o["kind"], o["metadata"]["name"]) for o in volcano] == [("Job", "vc")]
    labels = find(objects, "Pod", "vc-worker-0", "t")["metadata"]["labels"]
    assert {k: labels[k] for k in ("volcano.sh/job-name", "volcano.sh/task-spec",
                                   "volcano.sh/queue-name", "volcano.sh/task-index")} == {
        "volcano.sh/job-name": "vc", "volcano.sh/task-spec": "worker",
        "volcano.sh/queue-name": "default", "volcano.sh/task-index": "0"}


def test_volcano_jobs_get_their_own_dump_file(tmp_path):
    facts = generate_facts(FabricSpec(nodes=1, rails=1, vfs_per_pf=2, spines=1, pods_per_nic=2,
                                      jobs=(JobSpec("t", "b", "Job", 1),
                                            JobSpec("t", "vc", "VolcanoJob", 1))))
    names = {p.name for p in write_kubectl_dump(cluster_objects(facts), tmp_path)}
    assert {"jobs.json", "jobs.batch.volcano.sh.json"} <= names
    items = json.loads((tmp_path / "jobs.batch.volcano.sh.json").read_text())["items"]
    assert [(i["apiVersion"], i["metadata"]["name"]) for i in items] == [
        ("batch.volcano.sh/v1alpha1", "vc")]


def test_unknown_job_kind_is_refused():
    facts = generate_facts(FabricSpec(nodes=1, rails=1, vfs_per_pf=1, spines=1,
                                      jobs=(JobSpec("t", "x", "RayCluster", 1),)))
    with pytest.raises(ValueError, match="RayCluster"):
        cluster_objects(facts)

"""The Kubernetes inventory on objects modelled on real clusters (REFERENCE §1)."""

import json

import pytest

from inventory.facts import PfFact, PodInterfaceFact
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.objects import ClusterObjects, sort_objects

BUSES = (0x1A, 0x3D, 0x5E, 0x81, 0x9C, 0xBC, 0xDA, 0xE8)
T0 = "2026-03-01T10:00:00Z"
T0_S = 1772359200.0


def vf_pci(pf: int, vf: int) -> str:
    device, function = divmod(vf + 2, 8)
    return f"0000:{BUSES[pf]:02x}:{device:02x}.{function}"


def vf_mac(node: int, pf: int, vf: int) -> str:
    return f"02:{node:02x}:00:00:{pf:02x}:{vf:02x}"


def sriov_state(node: int, pfs: int = 8, vfs: int = 8) -> dict:
    """A SriovNetworkNodeState of gpu0<node> with ``pfs`` PFs of ``vfs`` VFs (note ``Vfs``)."""
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodeState",
        "metadata": {"name": f"gpu0{node}", "namespace": "sriov-network-operator"},
        "status": {"interfaces": [{
            "name": f"ens{p + 1}f0np0", "pciAddress": f"0000:{BUSES[p]:02x}:00.0",
            "mac": f"B8:3F:D2:00:{node:02X}:{p:02X}", "linkSpeed": "400000 Mb/s",
            "numVfs": vfs, "totalvfs": 16, "driver": "mlx5_core", "eSwitchMode": "legacy",
            "Vfs": [{"pciAddress": vf_pci(p, v), "vfID": v, "name": f"ens{p + 1}f0v{v}",
                     "mac": vf_mac(node, p, v), "Vlan": 0, "driver": "mlx5_core"}
                    for v in range(vfs)],
        } for p in range(pfs)]},
    }


def status_entry(k: int, ips: list[str], mac: str, pci: str | None, rdma: str = "") -> dict:
    entry = {"name": f"spiderpool/gpu{k}-sriov", "interface": f"net{k}", "ips": ips,
             "mac": mac, "dns": {}}
    if pci is not None:
        entry["device-info"] = {"type": "pci", "version": "1.1.0",
                                "pci": {"pci-address": pci, "rdma-device": rdma}}
    return entry


def pod(namespace: str, name: str, node: int, entries: list[dict], *, uid: str = "",
        owner: tuple[str, str, str] | None = None, labels: dict | None = None,
        raw_status: str | None = None) -> dict:
    status = [{"name": "k8s-pod-network", "interface": "eth0", "ips": ["10.233.74.12"],
               "default": True}, *entries]
    meta = {"namespace": namespace, "name": name, "uid": uid or f"uid-{name}",
            "creationTimestamp": "2026-03-01T09:59:58Z", "labels": labels or {},
            "annotations": {"k8s.v1.cni.cncf.io/network-status":
                            raw_status if raw_status is not None else json.dumps(status)}}
    if owner:
        api_version, kind, owner_name = owner
        meta["ownerReferences"] = [{"apiVersion": api_version, "kind": kind,
                                    "name": owner_name, "uid": f"uid-{owner_name}",
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": f"gpu0{node}"},
            "status": {"phase": "Running", "startTime": T0, "podIP": "10.233.74.12"}}


def endpoint(namespace: str, name: str, node: int, ips: list[dict], *, owner_type: str,
             fixed: bool = False, uid: str = "") -> dict:
    meta = {"namespace": namespace, "name": name}
    if not fixed:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                    "uid": uid or f"uid-{name}"}]
        meta["finalizers"] = ["spiderpool.spidernet.io"]
    return {"apiVersion": "spiderpool.spidernet.io/v2beta1", "kind": "SpiderEndpoint",
            "metadata": meta,
            "status": {"current": {"uid": uid or f"uid-{name}", "node": f"gpu0{node}",
                                   "ips": ips},
                       "ownerControllerType": owner_type, "ownerControllerName": name}}


def owner(api_version: str, kind: str, namespace: str, name: str,
          parent: tuple[str, str, str] | None = None, labels: dict | None = None) -> dict:
    meta = {"namespace": namespace, "name": name, "uid": f"uid-{name}", "labels": labels or {}}
    if parent:
        meta["ownerReferences"] = [{"apiVersion": parent[0], "kind": parent[1],
                                    "name": parent[2], "uid": f"uid-{parent[2]}",
                                    "controller": True}]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def namespace(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name,
                                                                  "labels": labels}}


def node(n: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"gpu0{n}"}}


def inventory_of(*objects: dict, unreadable: frozenset = frozenset()):
    resources, others = sort_objects(objects)
    return build_inventory(ClusterObjects({k: tuple(v) for k, v in resources.items()},
                                          tuple(others), unreadable))


PYTORCH_WORKER = pod(
    "ml-a", "llm-worker-3", 1,
    [status_entry(k, [f"172.16.{10 + k}.23"], vf_mac(1, k - 1, 3), vf_pci(k - 1, 3),
                  f"mlx5_{8 + (k - 1) * 8 + 3}") for k in range(1, 9)],
    owner=("kubeflow.org/v1", "PyTorchJob", "llm"),
    labels={"training.kubeflow.org/job-name": "llm",
            "training.kubeflow.org/replica-type": "Worker",
            "training.kubeflow.org/replica-index": "3",
            "training.kubeflow.org/operator-name": "pytorchjob-controller"})
PYTORCH_ENDPOINT = endpoint(
    "ml-a", "llm-worker-3", 1,
    [{"interface": f"net{k}", "ipv4": f"172.16.{10 + k}.23/24", "ipv4Pool": f"gpu{k}-v4",
      "ipv4Gateway": f"172.16.{10 + k}.1", "vlan": 0, "mac": vf_mac(1, k - 1, 3)}
     for k in range(1, 9)],
    owner_type="PyTorchJob")
BASE = (node(1), node(2), sriov_state(1), sriov_state(2), namespace("ml-a", tenant="acme"),
        namespace("ml-b"))


def test_pytorch_worker_with_eight_rdma_vfs():
    found = inventory_of(*BASE, PYTORCH_WORKER, PYTORCH_ENDPOINT,
                         owner("kubeflow.org/v1", "PyTorchJob", "ml-a", "llm"))
    [pod_fact] = found.facts.pods
    assert (pod_fact.node, pod_fact.job_kind, pod_fact.job_name, pod_fact.role,
            pod_fact.index, pod_fact.tenant) == ("gpu01", "PyTorchJob", "llm", "worker", "3",
                                                 "acme")
    interfaces = found.facts.pod_interfaces
    assert [i.interface for i in interfaces] == [f"net{k}" for k in range(1, 9)]  # eth0 left out
    assert interfaces[4] == PodInterfaceFact(
        namespace="ml-a", pod="llm-worker-3", interface="net5", node="gpu01",
        ipv4="172.16.15.23/24", mac="02:01:00:00:04:03", vf_pci="0000:9c:00.5",
        rdma_device="mlx5_43", network="spiderpool/gpu5-sriov", pool="gpu5-v4", vlan=0,
        fixed=False, valid_from=T0_S, valid_until=None)
    assert [(j.namespace, j.name, j.kind, j.tenant) for j in found.facts.jobs] == [
        ("ml-a", "llm", "PyTorchJob", "acme")]
    assert [(t.name, t.source) for t in found.facts.tenants] == [("acme", "label:tenant")]
    assert found.problems == ()
    assert found.counts["interfaces_joined"] == 8
    assert (found.counts["pfs"], found.counts["vfs"]) == (16, 128)  # two nodes, 8 PFs x 8 VFs


def test_sriov_node_state_with_eight_pfs_of_eight_vfs():
    found = inventory_of(node(1), sriov_state(1))
    pfs, vfs = found.facts.pfs, found.facts.vfs
    assert len(pfs) == 8 and len(vfs) == 64
    assert pfs[7] == PfFact("gpu01", "ens8f0np0", "0000:e8:00.0", "b8:3f:d2:00:01:07",
                            400_000_000_000)
    assert [(v.pci_address, v.pf, v.vf_index) for v in vfs[8:11]] == [
        ("0000:3d:00.2", "ens2f0np0", 0), ("0000:3d:00.3", "ens2f0np0", 1),
        ("0000:3d:00.4", "ens2f0np0", 2)]


def test_statefulset_pod_with_fixed_ips_restarted_on_another_node():
    sts_pod = pod("ml-b", "db-0", 2, [status_entry(1, ["172.16.11.40"], vf_mac(2, 0, 5),
                                                   vf_pci(0, 5))],
                  uid="uid-db-0-second", owner=("apps/v1", "StatefulSet", "db"))
    sts_endpoint = endpoint(
        "ml-b", "db-0", 2, [{"interface": "net1", "ipv4": "172.16.11.40/24",
                             "ipv4Pool": "gpu1-v4", "vlan": 0}],
        owner_type="StatefulSet", fixed=True, uid="uid-db-0-second")
    found = inventory_of(*BASE, sts_pod, sts_endpoint, owner("apps/v1", "StatefulSet", "ml-b",
                                                             "db"))
    [fact] = found.facts.pod_interfaces
    assert (fact.node, fact.vf_pci, fact.ipv4, fact.fixed) == (
        "gpu02", "0000:1a:00.7", "172.16.11.40/24", True)
    assert (found.facts.pods[0].job_kind, found.facts.pods[0].tenant) == ("StatefulSet", "ml-b")
    assert found.facts.tenants[0].source == "namespace"


def test_stale_endpoint_of_the_previous_incarnation_is_not_used():
    sts_pod = pod("ml-b", "db-0", 2, [status_entry(1, ["172.16.11.40"], vf_mac(2, 0, 5),
                                                   vf_pci(0, 5))], uid="uid-new")
    stale = endpoint("ml-b", "db-0", 1, [{"interface": "net1", "ipv4": "172.16.11.40/24"}],
                     owner_type="StatefulSet", fixed=True, uid="uid-old")
    found = inventory_of(*BASE, sts_pod, stale)
    assert [p.kind for p in found.problems] == ["spiderendpoint-stale"]
    assert found.facts.pod_interfaces[0].ipv4 == "172.16.11.40/32"  # no pool: host prefix


@pytest.mark.parametrize(("objects", "identity"), [
    # Volcano job whose owner GET is forbidden: the reference still names it.
    ([pod("ml-b", "vj-worker-0", 1, [status_entry(1, ["172.16.11.9"], vf_mac(1, 0, 0),
                                                  vf_pci(0, 0))],
          owner=("batch.volcano.sh/v1alpha1", "Job", "vj"),
          labels={"volcano.sh/job-name": "vj", "volcano.sh/task-spec": "worker",
                  "volcano.sh/task-index": "0"})],
     ("VolcanoJob", "vj", "worker", "0")),
    # JobSet -> Job -> Pod, every owner readable.
    ([pod("ml-b", "js-workers-0-0-x7k", 1, [status_entry(1, ["172.16.11.9"], vf_mac(1, 0, 0),
                                                         vf_pci(0, 0))],
          owner=("batch/v1", "Job", "js-workers-0"),
          labels={"jobset.sigs.k8s.io/jobset-name": "js",
                  "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                  "jobset.sigs.k8s.io/job-index": "0",
                  "batch.kubernetes.io/job-completion-index": "0"}),
      owner("batch/v1", "Job", "ml-b", "js-workers-0",
            ("jobset.x-k8s.io/v1alpha2", "JobSet", "js")),
      owner("jobset.x-k8s.io/v1alpha2", "JobSet", "ml-b", "js")],
     ("JobSet", "js", "workers", "0")),
    # JobSet whose Job cannot be read: the labels name the JobSet above it.
    ([pod("ml-b", "js-workers-0-0-x7k", 1, [status_entry(1, ["172.16.11.9"], vf_mac(1, 0, 0),
                                                         vf_pci(0, 0))],
          owner=("batch/v1", "Job", "js-workers-0"),
          labels={"jobset.sigs.k8s.io/jobset-name": "js"})],
     ("JobSet", "js", "", "")),
    # A LeaderWorkerSet group: LWS -> StatefulSet -> Pod.
    ([pod("ml-b", "lws-0-1", 1, [status_entry(1, ["172.16.11.9"], vf_mac(1, 0, 0),
                                              vf_pci(0, 0))],
          owner=("apps/v1", "StatefulSet", "lws-0"),
          labels={"leaderworkerset.sigs.k8s.io/name": "lws",
                  "leaderworkerset.sigs.k8s.io/group-index": "0",
                  "leaderworkerset.sigs.k8s.io/worker-index": "1"}),
      owner("apps/v1", "StatefulSet", "ml-b", "lws-0",
            ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws")),
      owner("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "ml-b", "lws")],
     ("LeaderWorkerSet", "lws", "", "1")),
    # A Job of a CronJob, both readable.
    ([pod("ml-b", "nightly-29000-abc", 1, [status_entry(1, ["172.16.11.9"],
                                                        vf_mac(1, 0, 0), vf_pci(0, 0))],
          owner=("batch/v1", "Job", "nightly-29000"),
          labels={"batch.kubernetes.io/job-name": "nightly-29000"}),
      owner("batch/v1", "Job", "ml-b", "nightly-29000", ("batch/v1", "CronJob", "nightly")),
      owner("batch/v1", "CronJob", "ml-b", "nightly")],
     ("CronJob", "nightly", "", "")),
    # No owner at all but job labels (the Job was deleted and the pod orphaned).
    ([pod("ml-b", "orphan", 1, [status_entry(1, ["172.16.11.9"], vf_mac(1, 0, 0),
                                             vf_pci(0, 0))],
          labels={"job-name": "old-job"})],
     ("Job", "old-job", "", "")),
])
def test_job_identity(objects, identity):
    found = inventory_of(*BASE, *objects)
    [fact] = found.facts.pods
    assert (fact.job_kind, fact.job_name, fact.role, fact.index) == identity
    assert [(j.kind, j.name) for j in found.facts.jobs] == [identity[:2]]


def test_ipv6_only_and_dual_stack_pods():
    v6 = pod("ml-b", "v6", 1, [status_entry(1, ["fd00:11::17"], vf_mac(1, 0, 1),
                                            vf_pci(0, 1))])
    dual = pod("ml-b", "dual", 1, [status_entry(2, ["172.16.12.5", "fd00:12::5"],
                                                vf_mac(1, 1, 1), vf_pci(1, 1))])
    found = inventory_of(
        *BASE, v6, dual,
        endpoint("ml-b", "v6", 1, [{"interface": "net1", "ipv6": "fd00:11::17/64",
                                    "ipv6Pool": "gpu1-v6"}], owner_type="Pod"),
        endpoint("ml-b", "dual", 1, [{"interface": "net2", "ipv4": "172.16.12.5/24",
                                      "ipv6": "fd00:12::5/64", "ipv4Pool": "gpu2-v4",
                                      "ipv6Pool": "gpu2-v6"}], owner_type="Pod"))
    assert [(i.pod, i.ipv4, i.ipv6, i.pool) for i in found.facts.pod_interfaces] == [
        ("v6", "", "fd00:11::17/64", "gpu1-v6"),
        ("dual", "172.16.12.5/24", "fd00:12::5/64", "gpu2-v4")]
    assert found.problems == ()


def test_bad_input_gives_counted_problems_never_exceptions():
    malformed = pod("ml-b", "broken", 1, [], raw_status="[{not json")
    no_device_info = pod("ml-b", "nodev", 1, [status_entry(1, ["172.16.11.50"],
                                                           vf_mac(1, 0, 6), None)])
    unknown_vf = pod("ml-b", "ghost", 2, [status_entry(1, ["172.16.11.51"],
                                                       "02:ff:ff:ff:ff:ff", "0000:99:00.2")])
    dup_a = pod("ml-b", "dup-a", 1, [status_entry(1, ["172.16.11.60"], vf_mac(1, 0, 2),
                                                  vf_pci(0, 2))])
    dup_b = pod("ml-b", "dup-b", 2, [status_entry(1, ["172.16.11.60"], vf_mac(2, 0, 2),
                                                  vf_pci(0, 2))])
    newer_crd = {"apiVersion": "spiderpool.spidernet.io/v3", "kind": "SpiderEndpoint",
                 "metadata": {"namespace": "ml-b", "name": "x"}}
    plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "ml-b",
                                                             "name": "web"}}
    found = inventory_of(*BASE, malformed, no_device_info, unknown_vf, dup_a, dup_b,
                         newer_crd, plain, unreadable=frozenset({"localqueues"}))
    assert sorted((p.kind, p.subject) for p in found.problems) == [
        ("device-info-missing", "podif:ml-b/nodev/net1"),
        ("ip-duplicate", "172.16.11.60"),
        ("network-status-malformed", "pod:ml-b/broken"),
        ("resource-unreadable", "localqueues"),
        ("unknown-api-version", "SpiderEndpoint:ml-b/x"),
        ("vf-unknown", "podif:ml-b/ghost/net1"),
    ]
    # The interface without device-info is still joined, by MAC; the unknown VF is kept.
    by_pod = {i.pod: i for i in found.facts.pod_interfaces}
    assert by_pod["nodev"].vf_pci == vf_pci(0, 6)
    assert by_pod["ghost"].vf_pci == "0000:99:00.2"
    assert (found.counts["pods"], found.counts["pods_with_rdma"],
            found.counts["pods_without_rdma"]) == (6, 4, 2)


def test_tenant_from_kueue_queue_and_capsule_label():
    queues = [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"namespace": "ml-b", "name": "team-q"},
         "spec": {"clusterQueue": "cq-gpu"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
         "metadata": {"name": "cq-gpu"}, "spec": {"cohort": "research"}},
    ]
    queued = pod("ml-b", "q-0", 1, [status_entry(1, ["172.16.11.70"], vf_mac(1, 0, 4),
                                                 vf_pci(0, 4))],
                 owner=("batch/v1", "Job", "q"))
    job = owner("batch/v1", "Job", "ml-b", "q", labels={"kueue.x-k8s.io/queue-name": "team-q"})
    capsule = pod("ml-c", "c-0", 1, [status_entry(1, ["172.16.11.71"], vf_mac(1, 0, 5),
                                                  vf_pci(0, 5))])
    found = inventory_of(*BASE, *queues, queued, job, capsule,
                         namespace("ml-c", **{"capsule.clastix.io/tenant": "oil"}))
    assert {(p.name, p.tenant) for p in found.facts.pods} == {("q-0", "research"),
                                                              ("c-0", "oil")}
    assert {(t.name, t.source) for t in found.facts.tenants} == {
        ("research", "kueue"), ("oil", "label:capsule.clastix.io/tenant")}

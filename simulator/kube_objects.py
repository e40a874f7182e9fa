"""The Kubernetes objects a Spiderpool + Multus + SR-IOV operator cluster holds for a FactSet.

:func:`cluster_objects` renders the Kubernetes side of the facts (nodes, PFs, VFs, tenants,
jobs, pods, pod interfaces) as plain JSON-form dicts: Namespaces, Nodes,
SriovNetworkNodeStates, SpiderIPPools, SpiderMultusConfigs and their
NetworkAttachmentDefinitions, job owners, Pods (with Multus ``network-status``) and
SpiderEndpoints. :func:`write_kubectl_dump` writes them as ``kubectl get <plural> -A -o
json`` would. Only current pod interfaces (``valid_until`` is ``None``) are rendered.
Everything is deterministic: uids are UUIDv5 of kind, namespace and name.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import uuid
from collections.abc import Callable, Hashable, Iterable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from inventory.facts import FactSet, JobFact, PfFact, PodFact, PodInterfaceFact, VfFact
from inventory.kubernetes.resources import OWNER_KINDS, WATCHED, group_of

Obj = dict[str, Any]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
T = TypeVar("T")

SPIDERPOOL = "spiderpool.spidernet.io/v2beta1"
SRIOV_NAMESPACE = "sriov-network-operator"
NETWORK_STATUS = "k8s.v1.cni.cncf.io/network-status"
IPPOOLS = "ipam.spidernet.io/ippools"
FINALIZER = "spiderpool.spidernet.io"
_UID_ROOT = uuid.uuid5(uuid.NAMESPACE_DNS, "simulator.fabcorr")
_KUBEFLOW_SPECS = {"PyTorchJob": "pytorch", "MPIJob": "mpi", "TFJob": "tf"}
_CAPITALIZED_REPLICA_TYPE = "MPIJob"  # replica-type "Worker": readers must ignore case
_CALICO_BASE = ipaddress.ip_address("10.233.64.1")


class _Link(NamedTuple):
    """How one pod hangs off its job: owner reference, labels, Spiderpool's top controller."""

    owner: Obj | None
    labels: dict[str, str]
    top_kind: str
    top_name: str


def cluster_objects(facts: FactSet, *, created: str = "2026-01-01T00:00:00Z") -> list[Obj]:
    """Every object of the cluster, in a fixed order; ``created`` stamps non-pod objects.

    Raises ValueError for a job kind that cannot be rendered.
    """
    current = [p for p in facts.pod_interfaces if p.valid_until is None]
    by_pod = {key: sorted(ifs, key=lambda pi: _natural(pi.interface))
              for key, ifs in _index(current, lambda pi: (pi.namespace, pi.pod)).items()}
    by_pool = _index(current, lambda pi: pi.pool)
    subnets = {name: ipaddress.ip_interface(_address(ifs[0])).network
               for name, ifs in by_pool.items()}
    uids = {(p.namespace, p.name): p.uid or _uid("v1", "Pod", p.namespace, p.name)
            for p in facts.pods}
    node_ips = {n.name: f"192.168.{i // 250}.{i % 250 + 10}" for i, n in enumerate(facts.nodes)}
    pfs = _index(facts.pfs, lambda pf: pf.node)
    vfs = _index(facts.vfs, lambda vf: (vf.node, vf.pf))
    objects = _namespaces(facts, created)
    objects += [_node(n.name, node_ips[n.name], created) for n in facts.nodes]
    objects += [_node_state(n.name, pfs.get(n.name, []), vfs, created) for n in facts.nodes]
    objects += [_ippool(name, subnets[name], ifs, uids, created) for name, ifs in by_pool.items()]
    for network, ifs in _index(current, lambda pi: pi.network).items():
        smc = _multus_config(network, ifs, created)
        objects += [smc, _attachment(smc, created)]
    owners, links = _owners(facts, created)
    objects += owners
    pods, endpoints = [], []
    for i, pod in enumerate(facts.pods):
        key = (pod.namespace, pod.name)
        link = links.get(key) or _Link(None, {}, "Pod", pod.name)
        interfaces = by_pod.get(key, [])
        pods.append(_pod(pod, uids[key], link, interfaces, i, node_ips, created))
        if any(pi.pool for pi in interfaces):
            endpoints.append(_endpoint(pod, uids[key], link, interfaces, subnets))
    objects += pods + endpoints
    for rv, obj in enumerate(objects, start=1000):
        obj["metadata"]["resourceVersion"] = str(rv)
    return objects


def write_kubectl_dump(objects: list[Obj], directory: Path) -> list[Path]:
    """Write one ``<plural>.json`` List per kind into ``directory``; return the paths, sorted."""
    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[Obj]] = {}
    for obj in objects:
        files.setdefault(_plural(obj["apiVersion"], obj["kind"]), []).append(obj)
    paths = []
    for plural, items in sorted(files.items()):
        path = directory / f"{plural}.json"
        listing = {"apiVersion": "v1", "items": items, "kind": "List",
                   "metadata": {"resourceVersion": ""}}
        path.write_text(json.dumps(listing, indent=4) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


@cache
def _plural(api_version: str, kind: str) -> str:
    """``kubectl``'s resource name: the plural, qualified by group when another group's
    kind shares it (``jobs`` vs ``jobs.batch.volcano.sh``)."""
    for resource in WATCHED.values():
        if (resource.api_version, resource.kind) == (api_version, kind):
            return resource.plural
    group = group_of(api_version)
    plural = OWNER_KINDS.get((group, kind), kind.lower() + "s")
    shared = any(p == plural and g != group for (g, _), p in OWNER_KINDS.items())
    return f"{plural}.{group}" if shared and group not in ("", "apps", "batch") else plural


def _uid(api_version: str, kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(_UID_ROOT, f"{api_version}/{kind}/{namespace}/{name}"))


def _hash(text: str, length: int = 10) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:length]


def _natural(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"(.*?)(\d+)", name)
    return (match[1], int(match[2])) if match else (name, -1)


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _index(items: Iterable[T], key: Callable[[T], Hashable]) -> dict[Any, list[T]]:
    """``items`` grouped by ``key`` in first-seen order, leaving out empty keys."""
    groups: dict[Any, list[T]] = {}
    for item in items:
        if value := key(item):
            groups.setdefault(value, []).append(item)
    return groups


def _object(api_version: str, kind: str, name: str, namespace: str, created: str, *,
            uid: str = "", labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, owner: Obj | list[Obj] | None = None,
            finalizers: list[str] | None = None, **fields: Any) -> Obj:
    """An object with standard metadata (empty parts left out); ``owner`` is an object or a
    list of ownerReferences; the other keyword arguments become top-level fields."""
    meta: Obj = {"name": name, "namespace": namespace,
                 "uid": uid or _uid(api_version, kind, namespace, name),
                 "creationTimestamp": created, "labels": labels, "annotations": annotations,
                 "ownerReferences": [_ref(owner)] if isinstance(owner, dict) else owner,
                 "finalizers": finalizers}
    meta = {key: value for key, value in meta.items() if value}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def _ref(owner: Obj) -> Obj:
    """A controller ownerReference to ``owner``."""
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def _namespaces(facts: FactSet, created: str) -> list[Obj]:
    tenants = {t.name: t.name for t in facts.tenants}
    for item in (*facts.jobs, *facts.pods):
        tenants.setdefault(item.namespace, item.tenant)
    for system in ("spiderpool", SRIOV_NAMESPACE):
        tenants.setdefault(system, "")
    return [_object("v1", "Namespace", name, "", created,
                    labels={"kubernetes.io/metadata.name": name} | (
                        {"tenant": tenant} if tenant else {}),
                    spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"})
            for name, tenant in tenants.items()]


def _node(name: str, address: str, created: str) -> Obj:
    labels = {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
              "kubernetes.io/os": "linux"}
    addresses = [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}]
    return _object("v1", "Node", name, "", created, labels=labels, spec={},
                   status={"addresses": addresses})


def _node_state(node: str, pfs: list[PfFact], vfs_of: dict[tuple[str, str], list[VfFact]],
                created: str) -> Obj:
    """SriovNetworkNodeState: the node's PFs and their VFs, as the config daemon reports."""
    interfaces = []
    for pf in pfs:
        vfs = vfs_of.get((node, pf.name), [])
        entry: Obj = {"name": pf.name, "pciAddress": pf.pci_address, "vendor": "15b3",
                      "deviceID": "1021", "driver": "mlx5_core", "mtu": 9000, "linkType": "ETH",
                      "linkAdminState": "up", "eSwitchMode": "legacy",
                      "numVfs": len(vfs), "totalvfs": len(vfs)}
        if pf.mac:
            entry["mac"] = pf.mac
        if pf.speed_bps:
            entry["linkSpeed"] = f"{pf.speed_bps // 1_000_000} Mb/s"
        if vfs:
            entry["Vfs"] = [{"pciAddress": v.pci_address, "vfID": v.vf_index,
                             "name": f"{pf.name}v{v.vf_index}", "driver": "mlx5_core",
                             "vendor": "15b3", "deviceID": "101e", "mtu": 9000, "Vlan": 0}
                            | ({"mac": v.mac} if v.mac else {}) for v in vfs]
        interfaces.append(entry)
    spec = {"interfaces": [{key: i[key] for key in ("name", "pciAddress", "numVfs")}
                           for i in interfaces]}
    return _object("sriovnetwork.openshift.io/v1", "SriovNetworkNodeState", node,
                   SRIOV_NAMESPACE, created, spec=spec,
                   status={"interfaces": interfaces, "syncStatus": "Succeeded"})


def _address(pi: PodInterfaceFact) -> str:
    """The prefixed address the pool of ``pi`` handed out (IPv4 unless only IPv6 is set)."""
    return pi.ipv4 or pi.ipv6


def _ippool(name: str, subnet: Network, interfaces: list[PodInterfaceFact],
            uids: dict[tuple[str, str], str], created: str) -> Obj:
    gateway = subnet.network_address + 1
    last = subnet.broadcast_address - (1 if subnet.version == 4 else 0)
    allocated = {
        str(ipaddress.ip_interface(_address(pi)).ip): {
            "pod": f"{pi.namespace}/{pi.pod}",
            "podUid": uids.get((pi.namespace, pi.pod)) or _uid("v1", "Pod", pi.namespace, pi.pod),
        } for pi in interfaces
    }
    spec = {"ipVersion": subnet.version, "subnet": str(subnet), "ips": [f"{gateway + 1}-{last}"],
            "gateway": str(gateway), "default": False,
            "multusName": sorted({pi.network for pi in interfaces if pi.network})}
    status = {"allocatedIPs": json.dumps(allocated, separators=(",", ":"), sort_keys=True),
              "allocatedIPCount": len(allocated),
              "totalIPCount": int(last) - int(gateway)}
    return _object(SPIDERPOOL, "SpiderIPPool", name, "", created, finalizers=[FINALIZER],
                   spec=spec, status=status)


def _split_network(network: str, fallback_namespace: str) -> tuple[str, str]:
    namespace, _, name = network.rpartition("/")
    return namespace or fallback_namespace, name


def _multus_config(network: str, ifs: list[PodInterfaceFact], created: str) -> Obj:
    namespace, name = _split_network(network, ifs[0].namespace)
    ippools: dict[str, list[str]] = {}
    for pi in ifs:
        if pi.pool:
            family = "ipv4" if pi.ipv4 else "ipv6"
            ippools.setdefault(family, [])
            if pi.pool not in ippools[family]:
                ippools[family].append(pi.pool)
    sriov = {"resourceName": f"spidernet.io/{name}", "vlanID": 0, "rdmaIsolation": True,
             "ippools": ippools}
    return _object(SPIDERPOOL, "SpiderMultusConfig", name, namespace, created,
                   spec={"cniType": "sriov", "enableCoordinator": True, "sriov": sriov})


def _attachment(smc: Obj, created: str) -> Obj:
    """The NetworkAttachmentDefinition Spiderpool generates from a SpiderMultusConfig."""
    meta, sriov = smc["metadata"], smc["spec"]["sriov"]
    ipam: Obj = {"type": "spiderpool"}
    for family, pools in sriov["ippools"].items():
        ipam[f"default_{family}_ippool"] = pools
    config = {"cniVersion": "0.3.1", "name": meta["name"], "plugins": [
        {"type": "sriov", "vlan": sriov["vlanID"], "ipam": ipam},
        {"type": "rdma"},
        {"type": "coordinator"},
    ]}
    return _object("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", meta["name"],
                   meta["namespace"], created, owner=smc,
                   annotations={"k8s.v1.cni.cncf.io/resourceName": sriov["resourceName"]},
                   spec={"config": json.dumps(config, separators=(",", ":"))})


def _owners(facts: FactSet, created: str) -> tuple[list[Obj], dict[tuple[str, str], _Link]]:
    """Owner objects of every job (those the pods name too) and each job pod's link."""
    jobs = {(j.namespace, j.name, j.kind): j for j in facts.jobs}
    members: dict[tuple[str, str, str], list[PodFact]] = {key: [] for key in jobs}
    for pod in facts.pods:
        if pod.job_kind:
            key = (pod.namespace, pod.job_name, pod.job_kind)
            jobs.setdefault(key, JobFact(pod.namespace, pod.job_name, pod.job_kind, pod.tenant))
            members.setdefault(key, []).append(pod)
    objects: list[Obj] = []
    links: dict[tuple[str, str], _Link] = {}
    for key, job in jobs.items():
        render = _RENDERERS.get(job.kind)
        if render is None:
            raise ValueError(f"cannot render pods owned by job kind {job.kind!r} ({job.name})")
        owned, pod_links = render(job, members[key], created)
        objects += owned
        for pod, link in zip(members[key], pod_links, strict=True):
            links[(pod.namespace, pod.name)] = link
    return objects, links


def _kubeflow(job: JobFact, pods: list[PodFact], created: str) -> tuple[list[Obj], list[_Link]]:
    replicas = {"Worker": {"replicas": len(pods), "restartPolicy": "OnFailure"}}
    owner = _object("kubeflow.org/v1", job.kind, job.name, job.namespace, created,
                    spec={f"{_KUBEFLOW_SPECS[job.kind]}ReplicaSpecs": replicas},
                    status={"conditions": [{"type": "Running", "status": "True"}]})
    links = []
    for i, pod in enumerate(pods):
        replica_type = pod.role or "worker"
        if job.kind == _CAPITALIZED_REPLICA_TYPE:
            replica_type = replica_type.capitalize()
        labels = {"training.kubeflow.org/job-name": job.name,
                  "training.kubeflow.org/operator-name": f"{job.kind.lower()}-controller",
                  "training.kubeflow.org/replica-type": replica_type,
                  "training.kubeflow.org/replica-index": str(i)}
        role = {"training.kubeflow.org/job-role": "master"} if i == 0 else {}
        links.append(_Link(_ref(owner), labels | role, job.kind, job.name))
    return [owner], links


def _statefulset(job: JobFact, pods: list[PodFact], created: str, parent: Obj | None = None,
                 ) -> tuple[list[Obj], list[_Link]]:
    revision = f"{job.name}-{_hash(job.namespace + '/' + job.name)}"
    sts = _object("apps/v1", "StatefulSet", job.name, job.namespace, created, owner=parent,
                  spec={"replicas": len(pods), "serviceName": job.name,
                        "selector": {"matchLabels": {"app": job.name}}},
                  status={"replicas": len(pods), "readyReplicas": len(pods),
                          "currentRevision": revision})
    links = [_Link(_ref(sts), {"app": job.name, "apps.kubernetes.io/pod-index": str(i),
                               "controller-revision-hash": revision,
                               "statefulset.kubernetes.io/pod-name": pod.name},
                   "StatefulSet", job.name) for i, pod in enumerate(pods)]
    return [sts], links


def _leaderworkerset(job: JobFact, pods: list[PodFact], created: str,
                     ) -> tuple[list[Obj], list[_Link]]:
    """LeaderWorkerSet -> leader StatefulSet of the same name -> one leader pod per group."""
    lws = _object("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", job.name, job.namespace,
                  created, spec={"replicas": len(pods), "leaderWorkerTemplate": {"size": 1}},
                  status={"replicas": len(pods), "readyReplicas": len(pods)})
    sts, links = _statefulset(job, pods, created, parent=lws)
    for i, link in enumerate(links):
        link.labels.update({
            "leaderworkerset.sigs.k8s.io/name": job.name,
            "leaderworkerset.sigs.k8s.io/group-index": str(i),
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
            "leaderworkerset.sigs.k8s.io/group-key": _hash(f"{job.namespace}/{job.name}-{i}", 40),
        })
    return [lws, *sts], links


def _batch_job(namespace: str, name: str, pods: list[PodFact], created: str,
               parent: Obj | None = None, labels: dict[str, str] | None = None,
               ) -> tuple[list[Obj], list[_Link]]:
    uid = _uid("batch/v1", "Job", namespace, name)
    identity = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                "controller-uid": uid, "job-name": name}
    job = _object("batch/v1", "Job", name, namespace, created, uid=uid, owner=parent,
                  labels=(labels or {}) | identity,
                  spec={"parallelism": len(pods), "completions": len(pods),
                        "completionMode": "Indexed",
                        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}},
                  status={"active": len(pods)})
    links = [_Link(_ref(job), (labels or {}) | identity
                   | {"batch.kubernetes.io/job-completion-index": str(i)}, "Job", name)
             for i in range(len(pods))]
    return [job], links


def _jobset(job: JobFact, pods: list[PodFact], created: str) -> tuple[list[Obj], list[_Link]]:
    """JobSet -> Job ``<jobset>-workers-0`` -> pods; Spiderpool's top controller is the Job."""
    jobset = _object("jobset.x-k8s.io/v1alpha2", "JobSet", job.name, job.namespace, created,
                     spec={"replicatedJobs": [{"name": "workers", "replicas": 1}]},
                     status={"replicatedJobsStatus": [{"name": "workers", "active": 1}]})
    child = f"{job.name}-workers-0"
    labels = {"jobset.sigs.k8s.io/jobset-name": job.name,
              "jobset.sigs.k8s.io/jobset-uid": jobset["metadata"]["uid"],
              "jobset.sigs.k8s.io/replicatedjob-name": "workers",
              "jobset.sigs.k8s.io/job-index": "0",
              "jobset.sigs.k8s.io/job-key": _hash(f"{job.namespace}/{child}", 40)}
    owned, links = _batch_job(job.namespace, child, pods, created, jobset, labels)
    return [jobset, *owned], links


def _volcano(job: JobFact, pods: list[PodFact], created: str) -> tuple[list[Obj], list[_Link]]:
    owner = _object("batch.volcano.sh/v1alpha1", "Job", job.name, job.namespace, created,
                    spec={"queue": "default", "minAvailable": len(pods),
                          "tasks": [{"name": "worker", "replicas": len(pods)}]},
                    status={"state": {"phase": "Running"}, "running": len(pods)})
    links = [_Link(_ref(owner), {"volcano.sh/job-name": job.name,
                                 "volcano.sh/job-namespace": job.namespace,
                                 "volcano.sh/queue-name": "default",
                                 "volcano.sh/task-spec": pod.role or "worker",
                                 "volcano.sh/task-index": str(i)}, "Job", job.name)
             for i, pod in enumerate(pods)]
    return [owner], links


_RENDERERS: dict[str, Callable[[JobFact, list[PodFact], str], tuple[list[Obj], list[_Link]]]] = {
    **dict.fromkeys(_KUBEFLOW_SPECS, _kubeflow),
    "StatefulSet": _statefulset,
    "LeaderWorkerSet": _leaderworkerset,
    "JobSet": _jobset,
    "Job": lambda job, pods, created: _batch_job(job.namespace, job.name, pods, created),
    "VolcanoJob": _volcano,
}


def _network_status(eth0: str, interfaces: list[PodInterfaceFact]) -> str:
    """Multus' annotation: Calico's eth0, then one entry per VF with bare IPs (indented JSON,
    as Multus writes it)."""
    entries: list[Obj] = [{"name": "k8s-pod-network", "interface": "eth0", "ips": [eth0],
                           "default": True}]
    for pi in interfaces:
        entry: Obj = {"name": pi.network, "interface": pi.interface,
                      "ips": [str(ipaddress.ip_interface(a).ip) for a in (pi.ipv4, pi.ipv6) if a],
                      "mac": pi.mac, "dns": {}}
        if pi.vf_pci:
            pci = {"pci-address": pi.vf_pci} | (
                {"rdma-device": pi.rdma_device} if pi.rdma_device else {})
            entry["device-info"] = {"type": "pci", "version": "1.1.0", "pci": pci}
        entries.append(entry)
    return json.dumps(entries, indent=4)


def _pod(pod: PodFact, uid: str, link: _Link, interfaces: list[PodInterfaceFact], index: int,
         node_ips: dict[str, str], created: str) -> Obj:
    """A running pod (pending when it has no node) with its Multus and Spiderpool annotations
    and a container asking for one GPU and one VF resource per interface."""
    since = _rfc3339(min(pi.valid_from for pi in interfaces)) if interfaces else created
    eth0 = str(_CALICO_BASE + index)
    annotations = {NETWORK_STATUS: _network_status(eth0, interfaces)}
    if interfaces:
        annotations["k8s.v1.cni.cncf.io/networks"] = ",".join(pi.network for pi in interfaces)
    pools = [{"interface": pi.interface, "ipv4" if pi.ipv4 else "ipv6": [pi.pool]}
             for pi in interfaces if pi.pool]
    if pools:
        annotations[IPPOOLS] = json.dumps(pools, separators=(",", ":"))
    limits = {"nvidia.com/gpu": str(len(interfaces))} if interfaces else {}
    for pi in interfaces:
        resource = f"spidernet.io/{_split_network(pi.network, pod.namespace)[1]}"
        limits[resource] = str(int(limits.get(resource, "0")) + 1)
    restart = "Always" if link.top_kind in ("StatefulSet", "Pod") else "OnFailure"
    spec: Obj = {"containers": [{"name": pod.role or "worker", "image": "fabcorr/worker:1",
                                 "resources": {"limits": limits, "requests": dict(limits)}}],
                 "restartPolicy": restart}
    status: Obj = {"phase": "Pending"}
    if pod.node:
        spec["nodeName"] = pod.node
        status = {"phase": "Running", "hostIP": node_ips.get(pod.node, ""), "podIP": eth0,
                  "podIPs": [{"ip": eth0}], "startTime": since}
    return _object("v1", "Pod", pod.name, pod.namespace, since, uid=uid, labels=link.labels,
                   annotations=annotations if pod.node else {},
                   owner=[link.owner] if link.owner else None, spec=spec, status=status)


def _endpoint(pod: PodFact, uid: str, link: _Link, interfaces: list[PodInterfaceFact],
              subnets: dict[str, Network]) -> Obj:
    """SpiderEndpoint: fixed-IP pods' endpoints have no owner (they outlive the pod)."""
    ips = []
    for pi in (p for p in interfaces if p.pool):
        family = "ipv4" if pi.ipv4 else "ipv6"
        addresses = {key: a for key, a in (("ipv4", pi.ipv4), ("ipv6", pi.ipv6)) if a}
        ips.append({"interface": pi.interface, **addresses, f"{family}Pool": pi.pool,
                    f"{family}Gateway": str(subnets[pi.pool].network_address + 1),
                    "vlan": 0, "mac": pi.mac})
    fixed = any(pi.fixed for pi in interfaces)
    pod_ref = {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": uid,
               "controller": True, "blockOwnerDeletion": True}
    since = _rfc3339(min(pi.valid_from for pi in interfaces))
    return _object(SPIDERPOOL, "SpiderEndpoint", pod.name, pod.namespace, since,
                   owner=None if fixed else [pod_ref],
                   finalizers=[] if fixed else [FINALIZER],
                   status={"current": {"uid": uid, "node": pod.node, "ips": ips},
                           "ownerControllerType": link.top_kind,
                           "ownerControllerName": link.top_name})

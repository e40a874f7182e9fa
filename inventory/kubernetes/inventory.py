"""The Kubernetes inventory: ClusterObjects -> facts, by joining pods to their VFs and jobs.

A pod interface (``netN``) is the network-status entry, joined with the SpiderEndpoint
entry of the same interface (prefix, pool, fixed IP), the VF of the SriovNetworkNodeState
on the pod's node (by PCI address, else by MAC) and that VF's PF. Pods without RDMA
interfaces are ignored and counted; an interface that cannot be fully joined is kept with
what is known and reported as a problem. Nothing here raises on bad objects.

A shard keeps the VFs of the NICs cabled to its own switches (``keeps``) and those pod
interfaces use, not the bulk of a large cluster's (786,432 at x-large): the join looks up
each pod's VFs among every state's, one state at a time, and makes no other VF's fact.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inventory.bulk import gc_paused
from inventory.facts import FactSet, JobFact, PodFact, PodInterfaceFact, TenantFact, VfFact
from inventory.kubernetes.jobs import JobIdentity, kind_name, resolve_job
from inventory.kubernetes.mapping import (
    Endpoint,
    EndpointIp,
    Object,
    Pool,
    ip_pool,
    meta,
    network_vlans,
    node_fact,
    parse_time,
    ref,
    spider_endpoint,
    sriov_nics,
)
from inventory.kubernetes.netstatus import NetworkAttachment, network_status
from inventory.kubernetes.objects import ClusterObjects
from inventory.kubernetes.resources import WATCHED, group_of
from inventory.kubernetes.tenants import DEFAULT_RULES, QUEUE_LABEL, TenantRules, tenant_rules
from inventory.problems import Problem

Status = tuple[list[NetworkAttachment], list[Problem]]
"""A pod's network-status attachments and the problems found reading them."""

RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"


@dataclass(frozen=True)
class Inventory:
    """Facts learned from Kubernetes, the problems met, and counts of what was seen."""

    facts: FactSet
    problems: tuple[Problem, ...]
    counts: dict[str, int]


NicsKept = Callable[[str, str], bool]
"""Whether a PF's VFs are kept (node, PF name): a shard's NICs."""


def build_inventory(objects: ClusterObjects, rules: Sequence[str] = DEFAULT_RULES,
                    keeps: NicsKept | None = None) -> Inventory:
    """Join every object of ``objects`` into facts; see the module docstring. With
    ``keeps``, only the VFs of the PFs it keeps and those pod interfaces use are facts
    (``counts["vfs"]`` still counts all)."""
    with gc_paused():
        return _Join(objects, rules, keeps).run()


def _node_name(pod: Object) -> str:
    """The node a pod is scheduled on ("" before it is)."""
    return (pod.get("spec") or {}).get("nodeName", "")


class _Join:
    def __init__(self, objects: ClusterObjects, rules: Sequence[str],
                 keeps: NicsKept | None) -> None:
        self.objects = objects
        self.keeps = keeps
        self.problems: list[Problem] = []
        self.counts: Counter[str] = Counter()
        self.tenants: TenantRules = tenant_rules(rules, objects.get("namespaces"),
                                                 objects.get("localqueues"),
                                                 objects.get("clusterqueues"))
        self.owners = objects.owner_index()
        self.jobs_by_name = {(namespace, kind_name(obj.get("apiVersion", ""), kind), name): obj
                             for (_, kind, namespace, name), obj in self.owners.items()}
        self.vlans = network_vlans(list(objects.get("spidermultusconfigs")),
                                   list(objects.get("networkattachmentdefinitions")))
        self.device_networks = {
            ref(nad) for nad in objects.get("networkattachmentdefinitions")
            if RESOURCE_ANNOTATION in (meta(nad).get("annotations") or {})}
        self.endpoints: dict[str, Endpoint] = {
            ref(e): spider_endpoint(e) for e in objects.get("spiderendpoints")}
        self.pools: list[Pool] = []
        for obj in objects.get("spiderippools"):
            pool, problems = ip_pool(obj)
            self.pools.append(pool)
            self.problems.extend(problems)
        self.vf_by_pci: dict[tuple[str, str], VfFact] = {}
        self.vf_by_mac: dict[tuple[str, str], VfFact] = {}
        self.jobs: dict[tuple[str, str], JobFact] = {}
        self.tenant_facts: dict[str, TenantFact] = {}

    def run(self) -> Inventory:
        nodes = [node_fact(n) for n in self.objects.get("nodes")]
        # read twice, not kept: a live cache's pods are unpacked as they are reached
        pods = self.objects.get("pods")
        statuses = [(_node_name(pod), network_status(pod)) for pod in pods]
        kept = self._vfs_kept(statuses)
        pfs, vfs, seen = [], [], 0
        for state in self.objects.get("sriovnetworknodestates"):
            found_pfs, found_vfs, problems = sriov_nics(state)
            pfs += found_pfs
            vfs += found_vfs if kept is None else filter(kept, found_vfs)
            seen += len(found_vfs)
            self.problems += problems
        for vf in vfs:
            self.vf_by_pci[(vf.node, vf.pci_address)] = vf
            if vf.mac:
                self.vf_by_mac[(vf.node, vf.mac)] = vf
        self._report_unread()
        pod_facts, interfaces = [], []
        for pod, (_, status) in zip(pods, statuses, strict=True):
            found = self._pod(pod, status)
            if found is not None:
                pod_facts.append(found[0])
                interfaces += found[1]
        self._report_duplicate_ips(interfaces)
        self.counts.update(nodes=len(nodes), pfs=len(pfs), vfs=seen, jobs=len(self.jobs),
                           tenants=len(self.tenant_facts), problems=len(self.problems))
        facts = FactSet(nodes=tuple(nodes), pfs=tuple(pfs), vfs=tuple(vfs), pods=tuple(pod_facts),
                        pod_interfaces=tuple(interfaces), jobs=tuple(self.jobs.values()),
                        tenants=tuple(self.tenant_facts.values()))
        return Inventory(facts, tuple(self.problems), dict(self.counts))

    def _vfs_kept(self, statuses: list[tuple[str, Status]]
                  ) -> Callable[[VfFact], bool] | None:
        """Whether a VF's fact is made: its PF kept, or a pod's attachment on its node
        names its PCI address or MAC (as :meth:`_interface` and :meth:`_is_vf` look VFs
        up); None when every VF is kept."""
        keeps = self.keeps
        if keeps is None:
            return None
        named = set()
        for node, (attachments, _) in statuses:
            for a in attachments:
                if not a.default:
                    named.update((node, key) for key in (a.pci_address, a.mac.lower()) if key)
        return lambda vf: keeps(vf.node, vf.pf) or (vf.node, vf.pci_address) in named \
            or (vf.node, vf.mac) in named

    def _pod(self, pod: Object, status: Status
             ) -> tuple[PodFact, list[PodInterfaceFact]] | None:
        self.counts["pods"] += 1
        m = meta(pod)
        namespace, name = m.get("namespace", ""), m.get("name", "")
        attachments, problems = status
        self.problems += problems
        endpoint = self.endpoints.get(f"{namespace}/{name}")
        if endpoint is not None and endpoint.uid and endpoint.uid != m.get("uid"):
            self.problems.append(Problem("spiderendpoint-stale", f"pod:{namespace}/{name}",
                                         f"endpoint is for pod uid {endpoint.uid}"))
            endpoint = None
        node = _node_name(pod)
        rdma = [a for a in attachments if not a.default and self._is_vf(a, endpoint, node)]
        if not rdma:
            self.counts["pods_without_rdma"] += 1
            return None
        self.counts["pods_with_rdma"] += 1
        labels = m.get("labels") or {}
        job = resolve_job(pod, self.owners)
        tenant, rule = self.tenants.tenant_of(namespace,
                                              self._queue_labels(namespace, labels, job))
        self.tenant_facts.setdefault(tenant, TenantFact(tenant, rule))
        if job is not None:
            self.jobs.setdefault((namespace, job.name), JobFact(namespace, job.name, job.kind,
                                                                tenant))
        status = pod.get("status") or {}
        valid_from = parse_time(status.get("startTime")) or \
            parse_time(m.get("creationTimestamp")) or 0.0
        valid_until = parse_time(m.get("deletionTimestamp"))
        fact = PodFact(namespace, name, node, m.get("uid", ""),
                       job.kind if job else "", job.name if job else "",
                       job.role if job else "", job.index if job else "", tenant)
        interfaces = [
            self._interface(pod, a, endpoint, node, valid_from, valid_until) for a in rdma]
        return fact, interfaces

    def _is_vf(self, attachment: NetworkAttachment, endpoint: Endpoint | None,
               node: str) -> bool:
        """Whether a secondary attachment is an SR-IOV VF: device-info says so, Spiderpool
        manages it, its network requests a device-plugin resource, or its MAC is a VF's."""
        return (attachment.device_type == "pci"
                or (endpoint is not None and attachment.interface in endpoint.interfaces)
                or attachment.network in self.device_networks
                or (node, attachment.mac.lower()) in self.vf_by_mac)

    def _interface(self, pod: Object, attachment: NetworkAttachment, endpoint: Endpoint | None,
                   node: str, valid_from: float, valid_until: float | None) -> PodInterfaceFact:
        m = meta(pod)
        subject = f"podif:{m.get('namespace', '')}/{m.get('name', '')}/{attachment.interface}"
        self.counts["interfaces"] += 1
        ip = endpoint.interfaces.get(attachment.interface) if endpoint else None
        if ip is None:
            ip = self._from_pools(attachment)
            if endpoint is not None or self.pools:
                self.problems.append(Problem("spiderendpoint-missing", subject,
                                             "no SpiderEndpoint entry: prefix from the pool"))
        vf = None
        if attachment.pci_address:
            vf = self.vf_by_pci.get((node, attachment.pci_address))
        else:
            self.problems.append(Problem("device-info-missing", subject,
                                         "network-status has no PCI address: joined by MAC"))
        if vf is None and attachment.mac:
            vf = self.vf_by_mac.get((node, attachment.mac.lower()))
        if vf is None:
            self.problems.append(Problem(
                "vf-unknown", subject,
                f"no VF {attachment.pci_address or attachment.mac or '?'} on node {node!r} in "
                "SriovNetworkNodeStates"))
        else:
            self.counts["interfaces_joined"] += 1
        return PodInterfaceFact(
            namespace=m.get("namespace", ""), pod=m.get("name", ""),
            interface=attachment.interface, node=node, ipv4=ip.ipv4, ipv6=ip.ipv6,
            mac=attachment.mac.lower(), vf_pci=vf.pci_address if vf else attachment.pci_address,
            rdma_device=attachment.rdma_device, network=attachment.network, pool=ip.pool,
            vlan=self.vlans.get(attachment.network, ip.vlan),
            fixed=endpoint.fixed if endpoint else False,
            valid_from=valid_from, valid_until=valid_until,
        )

    def _from_pools(self, attachment: NetworkAttachment) -> EndpointIp:
        """Addresses of an interface with no SpiderEndpoint entry, prefixed by their pool."""
        found = {"ipv4": "", "ipv6": "", "pool": ""}
        for text in attachment.ips:
            address = ipaddress.ip_address(text)
            pool = next((p for p in self.pools if p.subnet and address in p.subnet), None)
            family = "ipv4" if address.version == 4 else "ipv6"
            prefix = pool.subnet.prefixlen if pool and pool.subnet else address.max_prefixlen
            found[family] = f"{address}/{prefix}"
            found["pool"] = found["pool"] or (pool.name if pool else "")
        return EndpointIp(**found)

    def _queue_labels(self, namespace: str, labels: dict[str, str],
                      job: JobIdentity | None) -> dict[str, str]:
        """Pod labels, plus the Kueue queue label of the pod's job when the pod lacks it."""
        if QUEUE_LABEL in labels or job is None:
            return labels
        owner = self.jobs_by_name.get((namespace, job.kind, job.name))
        queue = (meta(owner).get("labels") or {}).get(QUEUE_LABEL) if owner else None
        return {**labels, QUEUE_LABEL: queue} if queue else labels

    def _report_unread(self) -> None:
        for name in sorted(self.objects.unreadable):
            self.problems.append(Problem("resource-unreadable", name,
                                         "could not be read; facts from it are missing"))
        known = {(r.group, r.kind): r.version for r in WATCHED.values()}
        for obj in self.objects.others:
            api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
            version = known.get((group_of(api_version), kind))
            if version is not None:
                self.problems.append(Problem(
                    "unknown-api-version", f"{kind}:{ref(obj)}",
                    f"{api_version} is not read (fabcorr reads {group_of(api_version)}/"
                    f"{version})"))

    def _report_duplicate_ips(self, interfaces: list[PodInterfaceFact]) -> None:
        holders: dict[str, list[str]] = defaultdict(list)
        for fact in interfaces:
            if fact.valid_until is None:
                for address in (fact.ipv4, fact.ipv6):
                    if address:
                        holders[address.split("/")[0]].append(f"{fact.namespace}/{fact.pod}")
        for address, pods in holders.items():
            if len(set(pods)) > 1:
                self.problems.append(Problem("ip-duplicate", address,
                                             "claimed by live pods " + ", ".join(sorted(pods))))

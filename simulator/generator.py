"""Synthetic rail-optimized leaf-spine fabrics (2- or 3-tier) with pods, jobs and tenants, as facts.

The facts are shaped like those real sources report: switches' LLDP sends the host's
chassis MAC and the PF MAC as port id, hosts' lldpd sends the leaf's chassis MAC and port
name, VFs hang off PFs by netdev name, pod interfaces carry the VF PCI address and a
prefixed IP from one pool per rail. Everything is deterministic for a given spec.

Layout: node ``n`` (0-based) plugs NIC ``r`` into leaf ``r * leaves_per_rail + n //
nodes_per_leaf``. Leaves are grouped into Clos pods of ``leaves_per_pod`` leaves with
their own ``spines`` spines; with ``super_spines`` > 0, spine ``j`` of every pod cables to
the super-spines of plane ``j mod planes``.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field

from inventory.facts import (
    FactSet,
    IdSubtype,
    InterfaceFact,
    JobFact,
    LldpNeighborFact,
    NodeFact,
    PfFact,
    PodFact,
    PodInterfaceFact,
    Reporter,
    SwitchFact,
    TenantFact,
    VfFact,
)

_PF_BUSES = (0x1A, 0x3D, 0x5E, 0x81, 0x9C, 0xBC, 0xDA, 0xE8)
_STATEFUL_KINDS = frozenset({"StatefulSet", "LeaderWorkerSet", "VirtualMachineInstance"})


@dataclass(frozen=True)
class JobSpec:
    """One AI job: ``pods`` pods of ``nics_per_pod`` NICs each (0: a whole node)."""

    tenant: str
    name: str
    kind: str = "PyTorchJob"
    pods: int = 2
    nics_per_pod: int = 0


@dataclass(frozen=True)
class FabricSpec:
    """Shape of a synthetic fabric and the jobs placed on it.

    A pod takes one VF on each of its NICs; ``pods_per_nic`` pods may share a NIC (each on
    its own VF), so a node holds ``rails * pods_per_nic / nics_per_pod`` pods.
    """

    nodes: int = 8
    rails: int = 8
    vfs_per_pf: int = 8
    pods_per_nic: int = 1
    leaves_per_rail: int = 1
    spines: int = 2
    uplinks_per_leaf: int = 0
    leaves_per_pod: int = 0
    super_spines: int = 0
    uplinks_per_spine: int = 0
    speed_bps: int = 400_000_000_000
    host_lldp: bool = True
    start_time: float = 1_767_225_600.0
    jobs: tuple[JobSpec, ...] = field(default=())

    @property
    def leaves(self) -> int:
        return self.rails * self.leaves_per_rail

    @property
    def nodes_per_leaf(self) -> int:
        return math.ceil(self.nodes / self.leaves_per_rail)

    @property
    def clos_pods(self) -> int:
        return math.ceil(self.leaves / (self.leaves_per_pod or self.leaves))

    @property
    def gpus(self) -> int:
        return self.nodes * self.rails

    def validate(self) -> None:
        """Raise ValueError naming the first inconsistent parameter."""
        positive = ("nodes", "rails", "vfs_per_pf", "leaves_per_rail", "spines")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.rails > len(_PF_BUSES) * 4:
            raise ValueError(f"rails must be at most {len(_PF_BUSES) * 4}")
        if self.uplinks_per_leaf % self.spines:
            raise ValueError("uplinks_per_leaf must be a multiple of spines")
        if not 1 <= self.pods_per_nic <= self.vfs_per_pf:
            raise ValueError("pods_per_nic must be between 1 and vfs_per_pf")
        capacity = self.nodes * self.rails * self.pods_per_nic
        wanted = sum(j.pods * (j.nics_per_pod or self.rails) for j in self.jobs)
        if wanted > capacity:
            raise ValueError(f"jobs need {wanted} NICs, the fabric has {capacity}")
        if any(j.nics_per_pod > self.rails for j in self.jobs):
            raise ValueError("a job's nics_per_pod exceeds rails")

    def _super_per_plane(self) -> int:
        return max(1, self.super_spines // self.spines)


def generate_facts(spec: FabricSpec) -> FactSet:
    """All facts of the fabric ``spec`` describes.

    >>> facts = generate_facts(FabricSpec(nodes=2, rails=2, vfs_per_pf=2, spines=2,
    ...                                   jobs=(JobSpec("team-a", "llm", pods=2),)))
    >>> {name: n for name, n in facts.count().items() if n}  # doctest: +NORMALIZE_WHITESPACE
    {'switches': 4, 'interfaces': 12, 'neighbors': 16, 'nodes': 2, 'pfs': 4, 'vfs': 8,
     'pods': 2, 'pod_interfaces': 4, 'jobs': 1, 'tenants': 1}
    """
    spec.validate()
    builder = _Builder(spec)
    builder.cable_hosts()
    builder.cable_fabric()
    builder.place_jobs()
    return builder.facts()


class _Builder:
    def __init__(self, spec: FabricSpec) -> None:
        self.spec = spec
        self.switches: list[SwitchFact] = []
        self.interfaces: list[InterfaceFact] = []
        self.neighbors: list[LldpNeighborFact] = []
        self.nodes: list[NodeFact] = []
        self.pfs: list[PfFact] = []
        self.vfs: list[VfFact] = []
        self.pods: list[PodFact] = []
        self.pod_interfaces: list[PodInterfaceFact] = []
        self.jobs: list[JobFact] = []
        self.tenants: dict[str, TenantFact] = {}
        self._next_port: dict[str, int] = {}
        self._chassis: dict[str, str] = {}
        self._pools = [ipaddress.ip_network(f"10.{101 + r}.0.0/16") for r in range(spec.rails)]
        self._next_ip = [2] * spec.rails
        self.leaf_names = [f"leaf{i + 1:02d}" for i in range(spec.leaves)]
        for i, name in enumerate(self.leaf_names):
            self._switch(name, 1, i)
        pods, per_pod = spec.clos_pods, spec.spines
        self.spine_names = [
            [f"spine{p * per_pod + j + 1:02d}" for j in range(per_pod)] for p in range(pods)
        ]
        for i, name in enumerate(n for group in self.spine_names for n in group):
            self._switch(name, 2, i)
        self.super_names = [f"superspine{i + 1:02d}" for i in range(spec.super_spines)]
        for i, name in enumerate(self.super_names):
            self._switch(name, 3, i)

    def facts(self) -> FactSet:
        return FactSet(
            switches=tuple(self.switches), interfaces=tuple(self.interfaces),
            neighbors=tuple(self.neighbors), nodes=tuple(self.nodes), pfs=tuple(self.pfs),
            vfs=tuple(self.vfs), pods=tuple(self.pods), pod_interfaces=tuple(self.pod_interfaces),
            jobs=tuple(self.jobs), tenants=tuple(self.tenants.values()),
        )

    def _switch(self, name: str, tier: int, index: int) -> None:
        chassis = f"0c:42:a1:{tier:02x}:{index >> 8:02x}:{index & 255:02x}"
        serial = len(self.switches)
        address = f"127.1.{serial // 250}.{serial % 250 + 1}"
        self._chassis[name] = chassis
        self._next_port[name] = 1
        self.switches.append(SwitchFact(name, chassis, address, address, "openconfig"))

    def _port(self, switch: str) -> str:
        number = self._next_port[switch]
        self._next_port[switch] = number + 1
        name = f"Ethernet{number}"
        mac = self._chassis[switch]
        self.interfaces.append(
            InterfaceFact(switch, name, 1000 + number, self.spec.speed_bps, "up", mac)
        )
        return name

    def cable_hosts(self) -> None:
        spec = self.spec
        for n in range(spec.nodes):
            host = f"gpu{n + 1:04d}" if spec.nodes > 99 else f"gpu{n + 1:02d}"
            chassis = f"b8:3f:d3:{n >> 8:02x}:{n & 255:02x}:00"
            self.nodes.append(NodeFact(host, chassis))
            for r in range(spec.rails):
                pf_name = f"ens{r + 1}f0np0"
                bus = _PF_BUSES[r % len(_PF_BUSES)] + r // len(_PF_BUSES)
                pf_mac = f"b8:3f:d2:{n >> 8:02x}:{n & 255:02x}:{r:02x}"
                self.pfs.append(PfFact(host, pf_name, f"0000:{bus:02x}:00.0", pf_mac,
                                       spec.speed_bps))
                for v in range(spec.vfs_per_pf):
                    device, function = divmod(v + 2, 8)
                    self.vfs.append(VfFact(
                        host, f"0000:{bus:02x}:{device:02x}.{function}", pf_name, v,
                        f"02:00:{n >> 8:02x}:{n & 255:02x}:{r:02x}:{v:02x}",
                    ))
                leaf = self.leaf_names[r * spec.leaves_per_rail + n // spec.nodes_per_leaf]
                port = self._port(leaf)
                self.neighbors.append(LldpNeighborFact(
                    Reporter.SWITCH, leaf, port, chassis, IdSubtype.MAC, pf_mac, IdSubtype.MAC,
                    host, pf_name, source="generator",
                ))
                if spec.host_lldp:
                    self.neighbors.append(LldpNeighborFact(
                        Reporter.HOST, host, pf_name, self._chassis[leaf], IdSubtype.MAC,
                        port, IdSubtype.IFNAME, leaf, f"to-{host}", source="generator",
                    ))

    def cable_fabric(self) -> None:
        spec = self.spec
        per_leaf = spec.uplinks_per_leaf or spec.spines
        pod_size = spec.leaves_per_pod or spec.leaves
        for i, leaf in enumerate(self.leaf_names):
            for spine in self.spine_names[i // pod_size]:
                for _ in range(per_leaf // spec.spines):
                    self._cable(leaf, spine)
        if not self.super_names:
            return
        per_plane = spec._super_per_plane()
        planes = max(1, spec.super_spines // per_plane)
        for group in self.spine_names:
            for j, spine in enumerate(group):
                first = (j % planes) * per_plane
                for k in range(spec.uplinks_per_spine or per_plane):
                    self._cable(spine, self.super_names[first + k % per_plane])

    def _cable(self, lower: str, upper: str) -> None:
        down, up = self._port(lower), self._port(upper)
        for (a, pa), (b, pb) in (((lower, down), (upper, up)), ((upper, up), (lower, down))):
            self.neighbors.append(LldpNeighborFact(
                Reporter.SWITCH, a, pa, self._chassis[b], IdSubtype.MAC, pb, IdSubtype.IFNAME,
                b, f"to-{b}", source="generator",
            ))

    def place_jobs(self) -> None:
        """Place pods round-robin over nodes interleaved across leaves, widest pods first
        (so narrower pods fill the gaps): jobs span leaves and tenants share them."""
        spec = self.spec
        order = sorted(range(spec.nodes), key=lambda n: (n % spec.nodes_per_leaf, n))
        free = {n: list(range(spec.rails)) * spec.pods_per_nic for n in order}
        used_vfs: dict[tuple[int, int], int] = {}
        for job in spec.jobs:
            self.tenants.setdefault(job.tenant, TenantFact(job.tenant, "namespace"))
            self.jobs.append(JobFact(job.tenant, job.name, job.kind, job.tenant))
        pods = [(job, k) for job in spec.jobs for k in range(job.pods)]
        pods.sort(key=lambda pod: -(pod[0].nics_per_pod or spec.rails))
        start = 0
        placed = []
        for job, k in pods:
            position = _next_fit(order, free, job.nics_per_pod or spec.rails, start)
            node = order[position]
            width = job.nics_per_pod or spec.rails
            rails, free[node] = free[node][:width], free[node][width:]
            placed.append((job, k, node, rails))
            start = position + 1
        job_order = {job.name: i for i, job in enumerate(spec.jobs)}
        for job, k, node, rails in sorted(placed, key=lambda p: (job_order[p[0].name], p[1])):
            self._pod(job, k, node, rails, used_vfs)

    def _pod(self, job: JobSpec, k: int, n: int, rails: list[int],
             used_vfs: dict[tuple[int, int], int]) -> None:
        host = self.nodes[n].name
        stateful = job.kind in _STATEFUL_KINDS
        name = f"{job.name}-{k}" if stateful else f"{job.name}-worker-{k}"
        self.pods.append(PodFact(job.tenant, name, host, uid=f"uid-{job.name}-{k}",
                                 job_kind=job.kind, job_name=job.name, role="worker",
                                 index=str(k), tenant=job.tenant))
        for i, r in enumerate(rails, start=1):
            v = used_vfs.get((n, r), 0)
            if v >= self.spec.vfs_per_pf:
                raise ValueError(f"node {host} rail {r + 1} has no free VF")
            used_vfs[(n, r)] = v + 1
            vf = self.vfs[(n * self.spec.rails + r) * self.spec.vfs_per_pf + v]
            address = self._pools[r][self._next_ip[r]]
            self._next_ip[r] += 1
            self.pod_interfaces.append(PodInterfaceFact(
                job.tenant, name, f"net{i}", host, ipv4=f"{address}/16", mac=vf.mac,
                vf_pci=vf.pci_address,
                rdma_device=f"mlx5_{self.spec.rails + r * self.spec.vfs_per_pf + v}",
                network=f"spiderpool/rail{r + 1}-sriov", pool=f"rail{r + 1}-v4", vlan=0,
                fixed=stateful, valid_from=self.spec.start_time,
            ))


def _next_fit(order: list[int], free: dict[int, list[int]], width: int, start: int) -> int:
    """Position in ``order`` of the first node from ``start`` on (wrapping) with ``width``
    free NIC slots."""
    count = len(order)
    for step in range(count):
        position = (start + step) % count
        if len(free[order[position]]) >= width:
            return position
    raise ValueError("no node has enough free NICs left for the next pod")

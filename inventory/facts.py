"""Typed, frozen records of what the sources report: switches, hosts, pods, jobs, tenants.

Facts are the only currency between ``inventory`` and ``topology``: every source (a
Kubernetes list, an SNMP walk, a host's lldpd, a fact file, the simulator) produces them,
and the fabric graph is built from a :class:`FactSet` alone. A fact holds what one source
said, untouched by inference: roles, rails and link status are derived later.

MAC addresses are lower-case and colon-separated (see :func:`normalize_mac`); times are
Unix seconds; speeds are bits per second; IP addresses of pod interfaces keep their
prefix length (``172.16.11.23/24``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from enum import StrEnum

_CANONICAL_MAC = re.compile(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")


class IdSubtype(StrEnum):
    """How an LLDP chassis or port id is to be read (lldpd's names for the subtypes)."""

    MAC = "mac"
    IFNAME = "ifname"
    IFALIAS = "ifalias"
    LOCAL = "local"
    IP = "ip"
    OTHER = "other"


class Reporter(StrEnum):
    """Which side of a cable reported an LLDP neighbour."""

    SWITCH = "switch"
    HOST = "host"


@dataclass(frozen=True, slots=True)
class SwitchFact:
    """A switch: its LLDP identity, where to reach it, and an optional role hint."""

    name: str
    chassis_id: str = ""
    mgmt_address: str = ""
    sflow_agent: str = ""
    vendor: str = ""
    role_hint: str = ""


@dataclass(frozen=True, slots=True)
class InterfaceFact:
    """One switch interface as the switch reports it."""

    switch: str
    name: str
    ifindex: int | None = None
    speed_bps: int | None = None
    oper_status: str = ""
    mac: str = ""
    alias: str = ""


@dataclass(frozen=True, slots=True)
class LldpNeighborFact:
    """One LLDP neighbour entry: what ``local_device``/``local_port`` hears on its cable.

    ``local_device`` is a switch name when ``reporter`` is ``switch`` and a node name when
    it is ``host`` (then ``local_port`` is the PF's netdev). The remote ids are kept as
    sent, with their subtypes; resolving them to graph nodes is the topology's job.
    """

    reporter: Reporter
    local_device: str
    local_port: str
    chassis_id: str
    chassis_id_subtype: IdSubtype
    port_id: str
    port_id_subtype: IdSubtype
    system_name: str = ""
    port_description: str = ""
    mgmt_address: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class NodeFact:
    """A Kubernetes node (a GPU server) and the LLDP chassis id its lldpd sends."""

    name: str
    chassis_id: str = ""


@dataclass(frozen=True, slots=True)
class PfFact:
    """A physical NIC port (SR-IOV physical function) of a node."""

    node: str
    name: str
    pci_address: str
    mac: str = ""
    speed_bps: int | None = None


@dataclass(frozen=True, slots=True)
class VfFact:
    """An SR-IOV virtual function of PF ``pf`` (a netdev name) on ``node``."""

    node: str
    pci_address: str
    pf: str
    vf_index: int
    mac: str = ""


@dataclass(frozen=True, slots=True)
class PodInterfaceFact:
    """A pod's secondary interface (``net1``...) with its IPs, VF and validity interval.

    ``valid_until`` is ``None`` while the pod still owns the addresses. ``fixed`` marks an
    address that Spiderpool keeps across pod restarts (StatefulSet, KubeVirt).
    """

    namespace: str
    pod: str
    interface: str
    node: str = ""
    ipv4: str = ""
    ipv6: str = ""
    mac: str = ""
    vf_pci: str = ""
    rdma_device: str = ""
    network: str = ""
    pool: str = ""
    vlan: int | None = None
    fixed: bool = False
    valid_from: float = 0.0
    valid_until: float | None = None


@dataclass(frozen=True, slots=True)
class PodFact:
    """A pod, the node it runs on, and the job (by kind and name) and tenant it belongs to."""

    namespace: str
    name: str
    node: str = ""
    uid: str = ""
    job_kind: str = ""
    job_name: str = ""
    role: str = ""
    index: str = ""
    tenant: str = ""


@dataclass(frozen=True, slots=True)
class JobFact:
    """An AI job: the top controller that owns a set of pods."""

    namespace: str
    name: str
    kind: str
    tenant: str = ""


@dataclass(frozen=True, slots=True)
class TenantFact:
    """A tenant and the rule that named it (namespace label, Kueue queue, namespace)."""

    name: str
    source: str = ""


@dataclass(frozen=True, slots=True)
class FactSet:
    """All facts of one fabric, grouped by type; the only input of the fabric graph."""

    switches: tuple[SwitchFact, ...] = ()
    interfaces: tuple[InterfaceFact, ...] = ()
    neighbors: tuple[LldpNeighborFact, ...] = ()
    nodes: tuple[NodeFact, ...] = ()
    pfs: tuple[PfFact, ...] = ()
    vfs: tuple[VfFact, ...] = ()
    pods: tuple[PodFact, ...] = ()
    pod_interfaces: tuple[PodInterfaceFact, ...] = ()
    jobs: tuple[JobFact, ...] = ()
    tenants: tuple[TenantFact, ...] = ()

    def merge(self, other: FactSet) -> FactSet:
        """Return the union of both sets, section by section, keeping order and first copies.

        >>> a = FactSet(nodes=(NodeFact("gpu01"),))
        >>> b = FactSet(nodes=(NodeFact("gpu01"), NodeFact("gpu02")))
        >>> [n.name for n in a.merge(b).nodes]
        ['gpu01', 'gpu02']
        """
        return merge_all((self, other))

    def count(self) -> dict[str, int]:
        """Number of facts per section."""
        return {name: len(getattr(self, name)) for name in FACT_TYPES}

    def of_switches(self, names: Container[str] | None = None) -> FactSet:
        """What switches reported (all, or those ``names``): themselves, their interfaces
        and their LLDP neighbours; what discovery finds.

        >>> f = FactSet(switches=(SwitchFact("a"), SwitchFact("b")),
        ...             interfaces=(InterfaceFact("a", "Ethernet1"),
        ...                         InterfaceFact("b", "Ethernet1")), nodes=(NodeFact("gpu01"),))
        >>> [i.switch for i in f.of_switches({"b"}).interfaces], f.of_switches().nodes
        (['b'], ())
        """
        def kept(name: str) -> bool:
            return names is None or name in names
        return FactSet(switches=tuple(s for s in self.switches if kept(s.name)),
                       interfaces=tuple(i for i in self.interfaces if kept(i.switch)),
                       neighbors=tuple(n for n in self.neighbors if n.reporter ==
                                       Reporter.SWITCH and kept(n.local_device)))

    def inventory(self) -> FactSet:
        """Everything but what switches reported: :meth:`hosts` and :meth:`workloads`.

        >>> facts = FactSet(switches=(SwitchFact("a"),), nodes=(NodeFact("gpu01"),))
        >>> facts.inventory().count()["switches"], facts.inventory().count()["nodes"]
        (0, 1)
        """
        return dataclasses.replace(self, switches=(), interfaces=(), neighbors=tuple(
            n for n in self.neighbors if n.reporter != Reporter.SWITCH))

    def hosts(self) -> FactSet:
        """The hosts, their NICs (PFs, VFs) and what their LLDP hears.

        >>> facts = FactSet(nodes=(NodeFact("gpu01"),), pods=(PodFact("ns", "p"),))
        >>> facts.hosts().count()["nodes"], facts.hosts().count()["pods"]
        (1, 0)
        """
        return FactSet(nodes=self.nodes, pfs=self.pfs, vfs=self.vfs, neighbors=tuple(
            n for n in self.neighbors if n.reporter == Reporter.HOST))

    def workloads(self) -> FactSet:
        """The pods, their interfaces, jobs and tenants.

        >>> facts = FactSet(nodes=(NodeFact("gpu01"),), pods=(PodFact("ns", "p"),))
        >>> facts.workloads().count()["nodes"], facts.workloads().count()["pods"]
        (0, 1)
        """
        return FactSet(pods=self.pods, pod_interfaces=self.pod_interfaces, jobs=self.jobs,
                       tenants=self.tenants)


FACT_TYPES: dict[str, type] = {
    "switches": SwitchFact,
    "interfaces": InterfaceFact,
    "neighbors": LldpNeighborFact,
    "nodes": NodeFact,
    "pfs": PfFact,
    "vfs": VfFact,
    "pods": PodFact,
    "pod_interfaces": PodInterfaceFact,
    "jobs": JobFact,
    "tenants": TenantFact,
}
"""Section name of a :class:`FactSet` -> the fact class it holds (the fact-file schema)."""


def merge_all(sets: Iterable[FactSet]) -> FactSet:
    """The union of many fact sets, section by section, keeping order and first copies.

    >>> merge_all([FactSet(nodes=(NodeFact("a"),)), FactSet(nodes=(NodeFact("b"),))]).nodes
    (NodeFact(name='a', chassis_id=''), NodeFact(name='b', chassis_id=''))
    """
    sections: dict[str, dict[object, None]] = {name: {} for name in FACT_TYPES}
    for facts in sets:
        for name, found in sections.items():
            found.update(dict.fromkeys(getattr(facts, name)))
    return FactSet(**{name: tuple(found) for name, found in sections.items()})


def latest_interfaces(interfaces: Iterable[PodInterfaceFact]) -> list[PodInterfaceFact]:
    """One fact per pod interface (namespace, pod, interface): the latest valid; the
    earlier incarnations of a restarted pod live on in the IP index only.

    >>> old, new = (PodInterfaceFact("ns", "w-0", "net1", valid_from=at) for at in (1.0, 2.0))
    >>> latest_interfaces([new, old]) == [new]
    True
    """
    latest: dict[tuple[str, str, str], PodInterfaceFact] = {}
    for fact in interfaces:
        key = (fact.namespace, fact.pod, fact.interface)
        if key not in latest or fact.valid_from >= latest[key].valid_from:
            latest[key] = fact
    return list(latest.values())


def normalize_mac(text: object) -> str:
    """Return a MAC as six lower-case colon-separated octets, or ``""`` when it is not one
    (nor a string: an object's ``mac: null``).

    Accepts colons, dashes, dots (Cisco ``0c42.a1b2.c3d4``) or bare hex.

    >>> normalize_mac("0C-42-A1-B2-C3-D4"), normalize_mac("0c42.a1b2.c3d4"), normalize_mac("x")
    ('0c:42:a1:b2:c3:d4', '0c:42:a1:b2:c3:d4', '')
    """
    if not isinstance(text, str):
        return ""
    if _CANONICAL_MAC.fullmatch(text):
        return text
    digits = "".join(ch for ch in text.lower() if ch not in ":-. ")
    if len(digits) != 12 or any(ch not in "0123456789abcdef" for ch in digits):
        return ""
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))

"""What a shard's graph holds of the fabric other shards discover (``elsewhere``: their
switches' names, each with its role hint).

A cable from one of its switches to another shard's ends in a *stand-in* switch and port
(:func:`add_stand_ins`), so that the shard sees every cable that decides what it
attributes, judges and reads. A host's NIC whose cable its lldpd hears on another shard's
switch is that shard's to keep (:func:`hosts_here`): a shard holds the NICs cabled to its
own switches (and those it cannot place), not every host's, the bulk of a large inventory;
the Kubernetes inventory makes no fact of the others' VFs (:func:`nics_here`).
"""

from __future__ import annotations

import dataclasses
import pickle
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import networkx as nx

from inventory.facts import FactSet, IdSubtype, LldpNeighborFact, Reporter
from topology.roles import nic_indexes
from topology.schema import (
    ELSEWHERE,
    KIND,
    RAILS,
    EdgeKind,
    NodeKind,
    SwitchRole,
    pf_id,
    port_id,
    switch_id,
)

if TYPE_CHECKING:
    from inventory.kubernetes.inventory import NicsKept


@dataclass(frozen=True, slots=True)
class HostsHere:
    """What a shard keeps of the hosts (:func:`hosts_here`)."""

    facts: FactSet
    """The facts without the PFs cabled to another shard's switch, their VFs and reports."""
    nics: dict[tuple[str, str], int]
    """(node, PF name) -> its NIC index (:func:`~topology.roles.nic_indexes`, among all
    the node's PFs), of each PF kept."""
    away: frozenset[tuple[str, str]]
    """(node, VF PCI address) of each VF left out that a pod interface uses."""
    leaves: dict[str, frozenset[int]]
    """Each switch of ``elsewhere`` such a PF is cabled to (a leaf) -> their rails."""


def hosts_here(facts: FactSet, elsewhere: Mapping[str, str]) -> HostsHere:
    """``facts`` without the PFs whose host's LLDP hears a switch of ``elsewhere`` (nor
    their VFs, nor those reports); copies of them when some are left out, so that the
    memory of the others can go back to the system once the caller drops ``facts``.

    >>> from inventory.facts import LldpNeighborFact, PfFact, VfFact, PodInterfaceFact
    >>> heard = LldpNeighborFact(Reporter.HOST, "gpu01", "eth1", "aa:bb:cc:00:00:01",
    ...                          IdSubtype.MAC, "Ethernet1", IdSubtype.IFNAME, "leaf02")
    >>> facts = FactSet(pfs=(PfFact("gpu01", "eth0", "0000:01:00.0"),
    ...                      PfFact("gpu01", "eth1", "0000:02:00.0")),
    ...                 vfs=(VfFact("gpu01", "0000:01:00.1", "eth0", 0),
    ...                      VfFact("gpu01", "0000:02:00.1", "eth1", 0)),
    ...                 neighbors=(heard,),
    ...                 pod_interfaces=(PodInterfaceFact("ns", "p", "net1", "gpu01",
    ...                                                  vf_pci="0000:02:00.1"),))
    >>> here = hosts_here(facts, {"leaf02": ""})
    >>> [pf.name for pf in here.facts.pfs], [vf.pf for vf in here.facts.vfs]
    (['eth0'], ['eth0'])
    >>> here.facts.neighbors, here.nics, here.away, here.leaves
    ((), {('gpu01', 'eth0'): 1}, frozenset({('gpu01', '0000:02:00.1')}), {'leaf02': frozenset({2})})
    """
    cabled = _cabled(facts, elsewhere)
    nics = nic_indexes(facts.pfs)
    if not cabled:
        return HostsHere(facts, nics, frozenset(), {})
    rails: dict[str, set[int]] = defaultdict(set)
    for pf, switch in cabled.items():
        if pf in nics:
            rails[switch].add(nics[pf])
    used = {(i.node, i.vf_pci) for i in facts.pod_interfaces}
    far = {(vf.node, vf.pci_address) for vf in facts.vfs
           if (vf.node, vf.pf) in cabled and (vf.node, vf.pci_address) in used}
    kept = _copied(dataclasses.replace(
        facts,
        pfs=tuple(pf for pf in facts.pfs if (pf.node, pf.name) not in cabled),
        vfs=tuple(vf for vf in facts.vfs if (vf.node, vf.pf) not in cabled),
        neighbors=tuple(n for n in facts.neighbors if n.reporter == Reporter.SWITCH
                        or (n.local_device, n.local_port) not in cabled)))
    # keyed by the copies' strings: nothing kept refers to the facts given
    return HostsHere(
        kept, {(pf.node, pf.name): nics[pf.node, pf.name] for pf in kept.pfs},
        frozenset((i.node, i.vf_pci) for i in kept.pod_interfaces
                  if (i.node, i.vf_pci) in far),
        {switch: frozenset(found) for switch, found in rails.items()})


def nics_here(facts: FactSet, elsewhere: Mapping[str, str]) -> NicsKept | None:
    """Whether a PF (node, name) is a shard's to keep, as :func:`hosts_here` decides from
    the hosts' LLDP among ``facts``: for the Kubernetes inventory to make facts of those
    PFs' VFs only (and of the VFs pods use); None when every PF is kept."""
    cabled = _cabled(facts, elsewhere)
    return (lambda node, pf: (node, pf) not in cabled) if cabled else None


def _cabled(facts: FactSet, elsewhere: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """(node, PF name) -> the switch of ``elsewhere`` its host's LLDP hears it on, for
    each PF cabled to another shard's switch (the switch's name as ``elsewhere`` holds it,
    not the facts' copy)."""
    named = {name: name for name in elsewhere}
    heard = _far_ends(facts, elsewhere)
    return {(n.local_device, n.local_port): named[n.system_name] for n in facts.neighbors
            if n.reporter == Reporter.HOST and heard(n)}


def _copied(facts: FactSet) -> FactSet:
    """A copy of ``facts``, every fact and string in it new: the few a shard keeps of a
    large inventory's would otherwise hold on to the memory of all (the allocator returns
    none of a page while one object on it lives)."""
    return pickle.loads(pickle.dumps(facts, pickle.HIGHEST_PROTOCOL))


def add_stand_ins(graph: nx.Graph, facts: FactSet, elsewhere: Mapping[str, str],
                  leaves: Mapping[str, frozenset[int]]) -> None:
    """A switch and port node, marked ``elsewhere``, for each far end a switch port or PF
    hears on a switch of ``elsewhere`` that ``facts`` lack (its port named by its port id,
    or by its description when the id is a MAC); a switch of ``leaves`` (hosts' PFs left
    out are cabled to it) a leaf with those rails, unless its role is configured."""
    nodes, heard = graph._node, _far_ends(facts, elsewhere)
    for report in facts.neighbors:
        local = port_id if report.reporter == Reporter.SWITCH else pf_id
        if not heard(report) or local(report.local_device, report.local_port) not in nodes:
            continue
        far = report.system_name
        switch = switch_id(far)
        name = report.port_description if report.port_id_subtype == IdSubtype.MAC \
            else report.port_id
        port = port_id(far, name)
        if not name or port in nodes:
            continue
        if switch not in nodes:
            graph.add_node(switch, **{KIND: NodeKind.SWITCH.value, "name": far,
                                      **_known_role(far, elsewhere[far], leaves),
                                      ELSEWHERE: True})
        graph.add_node(port, **{KIND: NodeKind.PORT.value, "switch": far, "name": name,
                                ELSEWHERE: True})
        graph.add_edge(switch, port, **{KIND: EdgeKind.HAS_PORT.value})


def _far_ends(facts: FactSet, elsewhere: Mapping[str, str]
              ) -> Callable[[LldpNeighborFact], bool]:
    """Whether an LLDP report hears a switch of ``elsewhere`` (by its system name) that
    ``facts`` do not hold (discovered here after all)."""
    discovered = {switch.name for switch in facts.switches}
    return lambda report: report.system_name in elsewhere and \
        report.system_name not in discovered


def _known_role(switch: str, configured: str, leaves: Mapping[str, frozenset[int]]
                ) -> dict[str, str]:
    """A stand-in's role hint and rails: what the graph would infer with the hosts' PFs
    left out (a switch cabled to one is a leaf), a configured role first."""
    known = {RAILS: ",".join(map(str, sorted(leaves[switch])))} if switch in leaves else {}
    hint = configured or (SwitchRole.LEAF.value if switch in leaves else "")
    return {"role_hint": hint, **known} if hint else known

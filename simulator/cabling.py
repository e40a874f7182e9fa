"""The emulated fabric's cabling, read from its own facts: switch ports, the cables between
them, where each NIC (PF) and so each pod interface plugs in, and each switch's tier.

A cable is what an LLDP neighbour fact says: a switch-reported neighbour whose chassis is
another switch's names that switch's port (by interface name, or by MAC when it is the
port's own); one whose chassis is a node's names the node's PF (by MAC or name); a
host-reported one names the switch port its PF is cabled to. A pod interface plugs in
where its VF's PF does; its rail is its PF's position by PCI address on its node (from
1). Leaves are the switches with a NIC cabled to them (tier 1); every other switch is one
tier above its nearest leaf (spines 2, super spines 3). Nothing here reads the inventory's
or fabcorr's graph: the emulator must not route over the code it is scored against.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

from inventory.facts import FactSet, IdSubtype, Reporter

PortName = tuple[str, str]
"""A switch port: switch name, port name."""


class Hop(NamedTuple):
    """One switch on a path, with the ports the traffic enters and leaves it by."""

    switch: str
    ingress: str
    egress: str


@dataclass(frozen=True, slots=True)
class Plug:
    """Where a pod interface is cabled: its leaf's host port, and its NIC's rail."""

    leaf: str
    port: str
    rail: int


def podif_key(namespace: str, pod: str, interface: str) -> str:
    """A pod interface's name in the emulator (fabcorr's documented pod interface id).

    >>> podif_key("team-a", "llm-worker-0", "net1")
    'podif:team-a/llm-worker-0/net1'
    """
    return f"podif:{namespace}/{pod}/{interface}"


class Cabling:
    """The cabling of ``facts``: :attr:`ports` in the facts' interface order, each with
    its ifIndex and speed, :attr:`peer` (switch port -> switch port at the cable's far
    end), :attr:`tier` per switch and :attr:`plugs` per pod interface (:func:`podif_key`)."""

    def __init__(self, facts: FactSet) -> None:
        self.ports: list[PortName] = [(i.switch, i.name) for i in facts.interfaces]
        self.ifindex = {(i.switch, i.name): i.ifindex or 0 for i in facts.interfaces}
        self.speed = {(i.switch, i.name): i.speed_bps or 0 for i in facts.interfaces}
        switch_of = {s.chassis_id.lower(): s.name for s in facts.switches if s.chassis_id}
        node_of = {n.chassis_id.lower(): n.name for n in facts.nodes if n.chassis_id}
        by_mac = {(i.switch, i.mac.lower()): i.name for i in facts.interfaces if i.mac}
        pf_by_mac = {(p.node, p.mac.lower()): p.name for p in facts.pfs if p.mac}
        pf_names = {(p.node, p.name) for p in facts.pfs}
        self.peer: dict[PortName, PortName] = {}
        nic_port: dict[tuple[str, str], PortName] = {}
        for n in facts.neighbors:
            chassis = n.chassis_id.lower()
            if n.reporter == Reporter.SWITCH and chassis in switch_of:
                far_switch = switch_of[chassis]
                far = by_mac.get((far_switch, n.port_id.lower())) \
                    if n.port_id_subtype == IdSubtype.MAC else n.port_id
                if far and (far_switch, far) in self.ifindex:
                    self.peer[(n.local_device, n.local_port)] = (far_switch, far)
                    self.peer[(far_switch, far)] = (n.local_device, n.local_port)
            elif n.reporter == Reporter.SWITCH and chassis in node_of:
                node = node_of[chassis]
                pf = pf_by_mac.get((node, n.port_id.lower())) \
                    if n.port_id_subtype == IdSubtype.MAC else n.port_id
                if pf and (node, pf) in pf_names:
                    nic_port[(node, pf)] = (n.local_device, n.local_port)
            elif n.reporter == Reporter.HOST and chassis in switch_of:
                port = (switch_of[chassis], n.port_id)
                if port in self.ifindex:
                    nic_port.setdefault((n.local_device, n.local_port), port)
        self.tier = _tiers({s.name for s in facts.switches}, {p[0] for p in nic_port.values()},
                           self.peer)
        rails = {}
        for node in {p.node for p in facts.pfs}:
            ordered = sorted((p.pci_address, p.name) for p in facts.pfs if p.node == node)
            rails.update({(node, name): r for r, (_, name) in enumerate(ordered, start=1)})
        pf_of_vf = {(v.node, v.pci_address): v.pf for v in facts.vfs}
        self.plugs: dict[str, Plug] = {}
        for f in facts.pod_interfaces:
            pf = pf_of_vf.get((f.node, f.vf_pci), "")
            port = nic_port.get((f.node, pf))
            if port is not None:
                self.plugs[podif_key(f.namespace, f.pod, f.interface)] = Plug(
                    *port, rails[(f.node, pf)])

    def links(self, switch: str) -> list[tuple[str, str, str]]:
        """A switch's cables to other switches as (egress port, far switch, far port), in
        the order of the egress ports' ifIndex (then name)."""
        found = [(port, *self.peer[(switch, port)]) for s, port in self.ports
                 if s == switch and (s, port) in self.peer]
        return sorted(found, key=lambda link: (self.ifindex[(switch, link[0])], link[0]))


def _tiers(switches: set[str], leaves: set[str], peer: dict[PortName, PortName]
           ) -> dict[str, int]:
    """Tier per switch: 1 for a leaf, 1 + hops to the nearest leaf otherwise (1 when no
    leaf is reachable)."""
    neighbours: dict[str, set[str]] = {}
    for (a, _), (b, _) in peer.items():
        neighbours.setdefault(a, set()).add(b)
    tier = dict.fromkeys(leaves, 1)
    queue = deque(sorted(leaves))
    while queue:
        switch = queue.popleft()
        for far in sorted(neighbours.get(switch, ())):
            if far not in tier:
                tier[far] = tier[switch] + 1
                queue.append(far)
    return {s: tier.get(s, 1) for s in switches}

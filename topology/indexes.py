"""Hot-path lookups: IP -> pod interface at a time, sFlow (agent, ifIndex) -> port, MAC -> NIC.

Addresses are keyed by their packed bytes (4 or 16), the form the sFlow decoder slices
from a datagram, so a lookup needs no string conversion.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import networkx as nx

from inventory.facts import FactSet, PodInterfaceFact
from inventory.problems import Problem
from topology.schema import KIND, NodeKind, podif_id
from topology.vfs import VfTable


def ip_key(address: str | bytes) -> bytes:
    """Packed bytes of an address, with or without a prefix length.

    >>> ip_key("172.16.11.23/24"), ip_key(b"\\xac\\x10\\x0b\\x17")
    (b'\\xac\\x10\\x0b\\x17', b'\\xac\\x10\\x0b\\x17')
    """
    if isinstance(address, bytes):
        return address
    return ipaddress.ip_interface(address.strip()).ip.packed


def _packed(address: str) -> bytes:
    """:func:`ip_key` of a fact's address, by the C parser when it can (a large fabric's
    hundred thousand addresses, checked when the facts were read)."""
    text = address.partition("/")[0]
    try:
        return socket.inet_pton(socket.AF_INET6 if ":" in text else socket.AF_INET, text)
    except OSError:
        return ip_key(address)


@dataclass(frozen=True, slots=True)
class IpOwner:
    """A pod interface (its node ID and its fact) that owned an address for a while."""

    interface: str
    fact: PodInterfaceFact

    @property
    def valid_from(self) -> float:
        return self.fact.valid_from

    @property
    def valid_until(self) -> float | None:
        return self.fact.valid_until

    def covers(self, at: float) -> bool:
        """Whether the interface owned the address at time ``at``."""
        until = self.fact.valid_until
        return self.fact.valid_from <= at and (until is None or at < until)


class IpIndex:
    """Address -> the pod interfaces that owned it, oldest first; lookups take a time."""

    def __init__(self, owners: dict[bytes, tuple[IpOwner, ...]]) -> None:
        self._owners = owners

    @classmethod
    def from_facts(cls, interfaces: Iterable[PodInterfaceFact]) -> tuple[IpIndex, list[Problem]]:
        """Index every address of every interface; overlapping owners are reported."""
        owners: dict[bytes, list[IpOwner]] = defaultdict(list)
        texts: dict[bytes, str] = {}
        for fact in interfaces:
            owner = IpOwner(podif_id(fact.namespace, fact.pod, fact.interface), fact)
            for address in (fact.ipv4, fact.ipv6):
                if address:
                    key = _packed(address)
                    owners[key].append(owner)
                    texts[key] = address.split("/")[0]
        problems = []
        for key, found in owners.items():
            found.sort(key=lambda o: (o.valid_from, o.interface))
            problems.extend(
                Problem("ip-conflict", texts[key], f"{a.interface} and {b.interface} overlap")
                for a, b in pairwise(found)
                if a.interface != b.interface
                and (a.valid_until is None or a.valid_until > b.valid_from)
            )
        return cls({key: tuple(found) for key, found in owners.items()}), problems

    def owner(self, address: str | bytes, at: float | None = None) -> IpOwner | None:
        """Who owned ``address`` at time ``at`` (``None``: who owns it now).

        When owners overlap (a reported conflict) the one that claimed it last wins.
        """
        for owner in reversed(self._owners.get(ip_key(address), ())):
            if owner.valid_until is None if at is None else owner.covers(at):
                return owner
        return None

    def lookup(self, address: str | bytes, at: float | None = None) -> str | None:
        """The ID of the pod interface owning ``address`` at time ``at``."""
        found = self.owner(address, at)
        return found.interface if found is not None else None

    def changes(self, start: float, end: float) -> list[float]:
        """The moments in ``(start, end)`` when some address changed owner, sorted.

        >>> from inventory.facts import PodInterfaceFact
        >>> fact = PodInterfaceFact("ns", "w-0", "net1", "n1", ipv4="10.0.0.5/16",
        ...                         valid_from=100.0, valid_until=160.0)
        >>> IpIndex.from_facts([fact])[0].changes(90.0, 200.0)
        [100.0, 160.0]
        """
        moments = {t for owners in self._owners.values() for o in owners
                   for t in (o.valid_from, o.valid_until) if t is not None and start < t < end}
        return sorted(moments)

    def items(self) -> Iterable[tuple[bytes, tuple[IpOwner, ...]]]:
        """Every address (packed) and its owners, oldest first."""
        return self._owners.items()

    def history(self, address: str | bytes) -> tuple[IpOwner, ...]:
        """Every owner of ``address``, oldest first."""
        return self._owners.get(ip_key(address), ())

    def __len__(self) -> int:
        return len(self._owners)


class MacIndex:
    """MAC -> the ID of the PF or VF that has it (the first one seen, when several do).

    Compact for the million MACs of a large fabric: canonical MACs are 48-bit integers in a
    sorted array, each beside its owner (a graph node, or a row of the VF table whose node
    ID is made when asked), found by bisection; any other text is kept as it is.

    >>> table = VfTable.from_rows([("gpu01", "0000:1a:00.2", "ens1f0np0", 0, "02:00:00:00:00:09")])
    >>> index, problems = MacIndex.build([("b8:3f:d2:00:00:01", "pf:gpu01/ens1f0np0"),
    ...                                   ("b8:3f:d2:00:00:01", "pf:gpu01/ens1f1np1")],
    ...                                  table, [0])
    >>> index["02:00:00:00:00:09"], index.get("b8:3f:d2:00:00:01"), index.get("02:00:00:00:00:08")
    ('vf:gpu01/0000:1a:00.2', 'pf:gpu01/ens1f0np0', None)
    >>> [(p.kind, p.detail) for p in problems]
    [('mac-conflict', 'pf:gpu01/ens1f0np0 and pf:gpu01/ens1f1np1')]
    """

    def __init__(self, keys: array, owners: array, nodes: list[str], vfs: VfTable,
                 other: dict[str, int]) -> None:
        self._keys, self._owners, self._nodes, self._vfs = keys, owners, nodes, vfs
        self._other = other

    @classmethod
    def build(cls, nodes: list[tuple[str, str]], vfs: VfTable, rows: list[int]
              ) -> tuple[MacIndex, list[Problem]]:
        """The index of ``nodes`` ((MAC, node ID) pairs), then of the VF table's ``rows``,
        in that order, and a ``mac-conflict`` Problem for each MAC seen again."""
        index = cls(array("Q"), array("L"), [node for _, node in nodes], vfs, {})
        macs = [mac for mac, _ in nodes] + [vfs.mac(row) for row in rows]
        owners = list(range(len(nodes))) + [len(nodes) + row for row in rows]
        conflicts = []
        keys = _mac_keys(macs)  # all canonical, as normalized facts are: parsed at once
        canonical: Sequence[int] = range(len(macs))
        if keys is None:
            canonical = [seq for seq, mac in enumerate(macs) if _CANONICAL_MAC.fullmatch(mac)]
            for seq in sorted(set(range(len(macs))).difference(canonical)):
                if macs[seq] in index._other:
                    conflicts.append((seq, index._other[macs[seq]]))
                else:
                    index._other[macs[seq]] = owners[seq]
            keys = _mac_keys([macs[seq] for seq in canonical])
            assert keys is not None
        last = -1
        for at in sorted(range(len(keys)), key=keys.__getitem__):  # stable: ties by seq
            key, seq = keys[at], canonical[at]
            if key == last:
                conflicts.append((seq, index._owners[-1]))
                continue
            index._keys.append(key)
            index._owners.append(owners[seq])
            last = key
        problems = [Problem("mac-conflict", macs[seq], f"{index._owner(first)} and "
                            f"{index._owner(owners[seq])}") for seq, first in sorted(conflicts)]
        return index, problems

    def columns(self) -> tuple[Any, ...]:
        """The index as plain data (bytes, a list, a dict) for :meth:`from_columns`."""
        return self._keys.tobytes(), self._owners.tobytes(), self._nodes, self._other

    @classmethod
    def from_columns(cls, columns: Any, vfs: VfTable) -> MacIndex:
        """The index :meth:`columns` gave (as a packed snapshot holds it), over ``vfs``."""
        keys, owners, nodes, other = columns
        index = cls(array("Q", keys), array("L", owners), nodes, vfs, other)
        if len(index._keys) != len(index._owners) or type(nodes) is not list \
                or type(other) is not dict:
            raise ValueError("MAC index columns of unequal lengths")
        return index

    def get(self, mac: str) -> str | None:
        if not _CANONICAL_MAC.fullmatch(mac):
            found = self._other.get(mac)
            return None if found is None else self._owner(found)
        key = int(mac.replace(":", ""), 16)
        at = bisect_left(self._keys, key)
        if at == len(self._keys) or self._keys[at] != key:
            return None
        return self._owner(self._owners[at])

    def __getitem__(self, mac: str) -> str:
        found = self.get(mac)
        if found is None:
            raise KeyError(mac)
        return found

    def __len__(self) -> int:
        return len(self._keys) + len(self._other)

    def _owner(self, code: int) -> str:
        nodes = self._nodes
        return nodes[code] if code < len(nodes) else self._vfs.node_id(code - len(nodes))


_CANONICAL_MAC = re.compile(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")


def _mac_keys(macs: list[str]) -> array | None:
    """Canonical MACs as 48-bit integers, parsed in a few calls rather than one per MAC
    (a large fabric has a million); None unless every one is canonical."""
    text, count = "".join(macs), len(macs)
    if set(map(len, macs)) - {17} or any(text[at::17] != ":" * count for at in (2, 5, 8, 11, 14)):
        return None
    digits = text.replace(":", "")
    try:
        octets = bytes.fromhex(digits)
    except ValueError:
        return None
    if len(octets) != 6 * count or digits != digits.lower():
        return None
    wide = bytearray(8 * count)  # each MAC as eight bytes, big-endian: two zeros, its six
    for octet in range(6):
        wide[2 + octet::8] = octets[octet::6]
    keys = array("Q", wide)
    if sys.byteorder == "little":
        keys.byteswap()
    return keys


@dataclass(frozen=True, slots=True)
class Indexes:
    """All hot-path lookups of one fabric graph."""

    ips: IpIndex
    ports_by_agent: dict[tuple[bytes, int], str]
    ports_by_ifindex: dict[tuple[str, int], str]
    ports_by_name: dict[tuple[str, str], str]
    by_mac: MacIndex
    problems: tuple[Problem, ...]

    def port_for_sample(self, agent: str | bytes, ifindex: int) -> str | None:
        """The port an sFlow agent means by ``ifindex``."""
        return self.ports_by_agent.get((ip_key(agent), ifindex))

    def port_named(self, switch: str, name: str) -> str | None:
        """A switch port by its name or alias."""
        return self.ports_by_name.get((switch, name))

    def port_maps(self) -> PortMaps:
        """The three port lookups, for :func:`build_indexes` to take as built."""
        return self.ports_by_agent, self.ports_by_ifindex, self.ports_by_name


PortMaps = tuple[dict[tuple[bytes, int], str], dict[tuple[str, int], str],
                 dict[tuple[str, str], str]]
"""Ports by (sFlow agent address, ifIndex), by (switch, ifIndex), by (switch, name or alias)."""


INDEXED_FACTS = ("switches", "pod_interfaces")
"""The fact sections the indexes read besides the graph."""


def build_indexes(graph: nx.Graph, facts: FactSet, vfs: VfTable,
                  by_mac: MacIndex | None = None, ports: PortMaps | None = None) -> Indexes:
    """Build every index from a fabric graph, its VF table and the facts it was built from
    (only the sections in :data:`INDEXED_FACTS` are read); ``by_mac`` and ``ports``, when
    given, are the MAC index (its conflicts then are the fabric's problems already) and
    the port maps already built."""
    ips, problems = IpIndex.from_facts(facts.pod_interfaces)
    if by_mac is not None and ports is not None:
        return Indexes(ips, *ports, by_mac, tuple(problems))
    agents = {  # by switch name
        s.name: ip_key(s.sflow_agent or s.mgmt_address)
        for s in facts.switches
        if s.sflow_agent or s.mgmt_address
    }
    by_agent: dict[tuple[bytes, int], str] = {}
    by_ifindex: dict[tuple[str, int], str] = {}
    by_name: dict[tuple[str, str], str] = {}
    macs: list[tuple[str, str]] = []
    in_graph: set[int] = set()  # the VF table's rows of the graph's VFs
    port, pf, vf = NodeKind.PORT.value, NodeKind.PF.value, NodeKind.VF.value
    for node, attrs in graph._node.items():
        kind = attrs[KIND]
        if kind == port:
            switch = attrs["switch"]
            by_name[(switch, attrs["name"])] = node
            if attrs.get("alias"):
                by_name.setdefault((switch, attrs["alias"]), node)
            if "ifindex" in attrs:
                by_ifindex[(switch, attrs["ifindex"])] = node
                agent = agents.get(switch)
                if agent is not None:
                    by_agent[(agent, attrs["ifindex"])] = node
        elif kind in (pf, vf) and by_mac is None:
            if attrs.get("mac"):
                macs.append((attrs["mac"], node))
            if kind == vf:
                in_graph.update(vfs.rows_of(attrs.get("node", ""), attrs.get("pci_address", "")))
    conflicts: list[Problem] = []
    if by_mac is None:
        by_mac, conflicts = MacIndex.build(
            macs, vfs, [row for row, _ in vfs.macs() if row not in in_graph])
    return Indexes(ips, by_agent, by_ifindex, by_name, by_mac, (*problems, *conflicts))

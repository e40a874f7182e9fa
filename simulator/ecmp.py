"""Per-hop ECMP as switches do it: each switch hashes a flow's 5-tuple with its own seed
and picks one of its equal-cost next hops toward the destination leaf.

The next hops of a switch toward leaf ``d`` are its cables to switches one hop closer to
``d`` (the equal-cost set :func:`topology.paths.interface_paths` enumerates whole),
ordered by egress ifIndex. The hash (:func:`ecmp_hash`) is CRC-32 of the packed 5-tuple
XOR the switch seed, mixed by a multiply so that switches do not polarize (a CRC is
linear: seeding it alone would make every switch split flows the same way). So one flow
always takes one path, and many flows spread over all of them. A failed cable leaves
the next-hop sets from then on; flows are rerouted by calling :meth:`Ecmp.path` again.
"""

from __future__ import annotations

import struct
import zlib
from collections import deque

from topology.graph import FabricGraph
from topology.paths import Hop
from topology.schema import NodeKind, id_name, switch_id

_MIX = 0x9E3779B1  # 2^32 / golden ratio, odd: Knuth's multiplicative hash


def five_tuple(src_ip: bytes, dst_ip: bytes, sport: int, dport: int = 4791) -> bytes:
    """The packed 5-tuple ECMP hashes: addresses, UDP ports, protocol 17."""
    return src_ip + dst_ip + struct.pack("!HHB", sport, dport, 17)


def switch_seed(seed: int, switch: str) -> int:
    """A switch's 32-bit hash seed, from the scenario seed and the switch name."""
    return zlib.crc32(f"{seed}/{switch}".encode())


def ecmp_hash(key: bytes, seed: int) -> int:
    """A 16-bit bucket hash of a packed 5-tuple under a switch seed.

    >>> ecmp_hash(five_tuple(bytes(4), bytes(4), 49152), 7) < 1 << 16
    True
    """
    return ((zlib.crc32(key) ^ seed) * _MIX & 0xFFFFFFFF) >> 16


class Ecmp:
    """ECMP routing over a fabric's switches, with cables that fail along the way."""

    def __init__(self, fabric: FabricGraph, seed: int) -> None:
        nodes = fabric.graph.nodes
        self._links: dict[str, list[tuple[str, str, str]]] = {}
        """Switch ID -> its cables as (egress port, neighbour switch ID, ingress port)."""
        for a, b, data in fabric.switch_graph.edges(data=True):
            ends = data["ends"]
            for near, far in ((a, b), (b, a)):
                self._links.setdefault(near, []).append(
                    (nodes[ends[near]]["name"], far, nodes[ends[far]]["name"]))
        order = {(nodes[p]["switch"], nodes[p]["name"]): nodes[p].get("ifindex") or 0
                 for p in fabric.nodes_of(NodeKind.PORT)}
        for switch, links in self._links.items():
            name = id_name(switch)
            links.sort(key=lambda link, n=name: (order.get((n, link[0]), 0), link[0]))
        self._seeds = {s: switch_seed(seed, id_name(s)) for s in fabric.switch_graph}
        self._down: set[tuple[str, str]] = set()
        self._distances: dict[str, dict[str, int]] = {}
        self._next: dict[tuple[str, str], list[tuple[str, str, str]]] = {}

    def fail(self, switch: str, port: str) -> None:
        """Take the cable at ``switch``:``port`` (both its ends) out of every choice."""
        self._down.add((switch, port))
        for egress, far, ingress in self._links.get(switch_id(switch), ()):
            if egress == port:
                self._down.add((id_name(far), ingress))
        self._distances.clear()
        self._next.clear()

    def is_down(self, switch: str, port: str) -> bool:
        return (switch, port) in self._down

    def path(self, src_leaf: str, src_port: str, dst_leaf: str, dst_port: str,
             key: bytes) -> tuple[Hop, ...] | None:
        """The hops of the flow hashed by ``key`` from host port ``src_port`` of leaf
        ``src_leaf`` to host port ``dst_port`` of ``dst_leaf`` (switch names), or None
        when a host port is down or no route is left."""
        if (src_leaf, src_port) in self._down or (dst_leaf, dst_port) in self._down:
            return None
        current, target, ingress = switch_id(src_leaf), switch_id(dst_leaf), src_port
        hops = []
        while current != target:
            choices = self._next_hops(current, target)
            if not choices:
                return None
            egress, following, next_ingress = choices[
                ecmp_hash(key, self._seeds[current]) % len(choices)]
            hops.append(Hop(id_name(current), ingress, egress))
            current, ingress = following, next_ingress
        hops.append(Hop(dst_leaf, ingress, dst_port))
        return tuple(hops)

    def _next_hops(self, switch: str, target: str) -> list[tuple[str, str, str]]:
        found = self._next.get((switch, target))
        if found is None:
            distance = self._distances_to(target)
            here = distance.get(switch)
            found = [] if here is None else [
                link for link in self._links.get(switch, ())
                if distance.get(link[1]) == here - 1
                and (id_name(switch), link[0]) not in self._down]
            self._next[(switch, target)] = found
        return found

    def _distances_to(self, target: str) -> dict[str, int]:
        """Hop counts to ``target`` over cables that are up (breadth-first)."""
        found = self._distances.get(target)
        if found is None:
            found = self._distances[target] = {target: 0}
            queue = deque([target])
            while queue:
                switch = queue.popleft()
                for egress, far, _ in self._links.get(switch, ()):
                    if far not in found and (id_name(switch), egress) not in self._down:
                        found[far] = found[switch] + 1
                        queue.append(far)
        return found

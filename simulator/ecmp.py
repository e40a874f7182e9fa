"""Per-hop ECMP as switches do it: each switch hashes a flow's 5-tuple with its own seed
and picks one of its equal-cost next hops toward the destination leaf.

The next hops of a switch toward leaf ``d`` are its cables to switches one hop closer to
``d`` over the scenario's own cabling (:mod:`simulator.cabling`), ordered by egress
ifIndex. The hash (:func:`ecmp_hash`) is CRC-32 of the packed 5-tuple
XOR the switch seed, mixed by a multiply so that switches do not polarize (a CRC is
linear: seeding it alone would make every switch split flows the same way). So one flow
always takes one path, and many flows spread over all of them. A failed cable leaves
the next-hop sets from then on; flows are rerouted by calling :meth:`Ecmp.path` again.
"""

from __future__ import annotations

import struct
import zlib
from collections import deque

from simulator.cabling import Cabling, Hop

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

    def __init__(self, cabling: Cabling, seed: int) -> None:
        switches = sorted({switch for switch, _ in cabling.ports})
        self._links: dict[str, list[tuple[str, str, str]]] = {
            s: cabling.links(s) for s in switches}
        """Switch -> its cables as (egress port, neighbour switch, ingress port)."""
        self._seeds = {s: switch_seed(seed, s) for s in switches}
        self._down: set[tuple[str, str]] = set()
        self._distances: dict[str, dict[str, int]] = {}
        self._next: dict[tuple[str, str], list[tuple[str, str, str]]] = {}

    def fail(self, switch: str, port: str) -> None:
        """Take the cable at ``switch``:``port`` (both its ends) out of every choice."""
        self._down.add((switch, port))
        for egress, far, ingress in self._links.get(switch, ()):
            if egress == port:
                self._down.add((far, ingress))
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
        current, target, ingress = src_leaf, dst_leaf, src_port
        hops = []
        while current != target:
            choices = self._next_hops(current, target)
            if not choices:
                return None
            egress, following, next_ingress = choices[
                ecmp_hash(key, self._seeds[current]) % len(choices)]
            hops.append(Hop(current, ingress, egress))
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
                and (switch, link[0]) not in self._down]
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
                    if far not in found and (switch, egress) not in self._down:
                        found[far] = found[switch] + 1
                        queue.append(far)
        return found

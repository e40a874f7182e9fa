"""The RoCEv2 flows of AI jobs: which pod interface sends to which, per communication
pattern, with the UDP source port each flow's queue pair gets.

Pods of a job, in index order, talk by ``pattern``: ``ring`` (each pod to the next, the
last to the first), ``tree`` (a binary tree: each pod to its parent and its parent back
to it) or ``all-to-all`` (every ordered pair). Two pods talk NIC to NIC: interfaces on the
same rail pair up, and the others in order. A NIC splits its rate evenly over the flows
leaving it. A flow's source port is its entropy: 49152 + 14 bits of a CRC of the flow's
addresses and queue pair, as NICs derive it from the QP number.
"""

from __future__ import annotations

import ipaddress
import struct
import zlib
from collections import Counter
from dataclasses import dataclass

from inventory.facts import FactSet
from simulator.cabling import Cabling, podif_key
from simulator.scenario import JobTraffic


@dataclass(frozen=True, slots=True)
class Flow:
    """One queue pair's traffic from pod interface ``src`` to ``dst`` (IDs), of job
    number ``job`` (in the scenario's traffic list), carrying ``share`` of the source
    NIC's rate."""

    job: int
    src: str
    dst: str
    src_ip: bytes
    dst_ip: bytes
    qp: int
    sport: int
    share: float


def pattern_pairs(pattern: str, pods: int) -> list[tuple[int, int]]:
    """(sender, receiver) pod positions of a pattern among ``pods`` pods.

    >>> pattern_pairs("ring", 3), pattern_pairs("tree", 3)
    ([(0, 1), (1, 2), (2, 0)], [(1, 0), (0, 1), (2, 0), (0, 2)])
    >>> len(pattern_pairs("all-to-all", 4)), pattern_pairs("ring", 1)
    (12, [])
    """
    if pods < 2:
        return []
    if pattern == "ring":
        return [(i, (i + 1) % pods) for i in range(pods)] if pods > 2 else [(0, 1), (1, 0)]
    if pattern == "tree":
        return [pair for i in range(1, pods) for pair in ((i, (i - 1) // 2), ((i - 1) // 2, i))]
    if pattern == "all-to-all":
        return [(i, j) for i in range(pods) for j in range(pods) if i != j]
    raise ValueError(f"unknown pattern {pattern!r}")


def job_flows(facts: FactSet, cabling: Cabling, traffic: tuple[JobTraffic, ...],
              seed: int) -> list[Flow]:
    """Every flow of every job, job by job, in pattern order (pod interfaces that are not
    cabled take no part)."""
    table = cabling.plugs
    interfaces_of: dict[tuple[str, str], list[tuple[int, str]]] = {}
    addresses: dict[str, bytes] = {}
    for f in facts.pod_interfaces:
        key = podif_key(f.namespace, f.pod, f.interface)
        if key in table:
            interfaces_of.setdefault((f.namespace, f.pod), []).append((table[key].rail, key))
            addresses[key] = _address(f.ipv4 or f.ipv6)
    members: dict[tuple[str, str], list[tuple[int, list[tuple[int, str]]]]] = {}
    for pod in facts.pods:
        members.setdefault((pod.namespace, pod.job_name), []).append(
            (int(pod.index or 0), sorted(interfaces_of.get((pod.namespace, pod.name), []))))
    pairs: list[tuple[int, str, str]] = []
    for number, job in enumerate(traffic):
        pods = [interfaces for _, interfaces in sorted(members.get((job.tenant, job.name), []))]
        for a, b in pattern_pairs(job.pattern, len(pods)):
            pairs += [(number, x, y) for x, y in _nic_pairs(pods[a], pods[b])]
    fanout = Counter(src for _, src, _ in pairs)
    flows = []
    for qp, (number, src, dst) in enumerate(pairs, start=0x100):
        src_ip, dst_ip = addresses[src], addresses[dst]
        entropy = zlib.crc32(src_ip + dst_ip + struct.pack("!I", qp), seed & 0xFFFFFFFF)
        flows.append(Flow(number, src, dst, src_ip, dst_ip, qp, 0xC000 | entropy & 0x3FFF,
                          1 / fanout[src]))
    return flows


def _nic_pairs(a: list[tuple[int, str]], b: list[tuple[int, str]]) -> list[tuple[str, str]]:
    """Interfaces of two pods paired rail to rail, the rest in order.

    >>> _nic_pairs([(1, "a1"), (2, "a2")], [(2, "b2"), (3, "b3")])
    [('a2', 'b2'), ('a1', 'b3')]
    """
    rails_b = dict(b)
    same = [(x, rails_b[rail]) for rail, x in a if rail in rails_b]
    rails_a = {rail for rail, _ in a}
    rest = zip([x for rail, x in a if rail not in rails_b],
               [y for rail, y in b if rail not in rails_a], strict=False)
    return same + list(rest)


def _address(text: str) -> bytes:
    return ipaddress.ip_interface(text).ip.packed


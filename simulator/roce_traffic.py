"""RoCEv2 traffic from real sockets: UDP datagrams to port 4791 carrying BTH payloads
(:mod:`simulator.roce`), sent from "pod" addresses, e.g. in a lab's host namespaces.

A sender sends ``weight * rounds`` packets of each opcode in :data:`MIX` for every stream,
so streams' byte volumes are in the ratio of their weights, in an order shuffled by a seed:
reproducible, and not periodic (a periodic pattern can alias with a sampler, and pmacct's
sfprobe samples at pseudo-random intervals that are the same in every run). IPv4, marked
as NICs mark RoCE: DSCP 26 (CNPs 48), ECT(0). Each sender reports exactly what it sent.

:func:`send` runs one sender per network namespace (``python -m simulator.roce_traffic``
under ``ip netns exec``) and starts them together. Each also binds UDP port 4791 without
reading it, until all are done: the traffic it receives is dropped silently instead of
drawing ICMP port-unreachable replies into the measured ports.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass

from simulator.roce import (
    ACK,
    CNP,
    CNP_DSCP,
    ECT0,
    ROCE_DSCP,
    ROCE_PORT,
    SEND_ONLY,
    WRITE_ONLY,
    payload,
)

MIX = ((WRITE_ONLY, 1024), (SEND_ONLY, 256), (ACK, 0), (CNP, 0))
"""(opcode, data bytes) of the packets each stream sends, ``weight * rounds`` of each."""
FRAME_OVERHEAD = 14 + 20 + 8
"""Ethernet, IPv4 and UDP headers around a payload: frame bytes as the kernel counts them
(no FCS, no VLAN tag)."""


@dataclass(frozen=True)
class Stream:
    """Packets from ``src`` to the queue pair ``dest_qp`` at ``dst``."""

    tenant: str
    src: str
    dst: str
    dest_qp: int
    weight: int = 1


@dataclass(frozen=True)
class Flow:
    """What a sender reports: one stream's packets of one opcode."""

    tenant: str
    src: str
    dst: str
    opcode: int
    dest_qp: int
    dscp: int
    packets: int
    bytes: int


def dscp(opcode: int) -> int:
    """DSCP of an opcode's packets: CNPs go on their own class (REFERENCE §7)."""
    return CNP_DSCP if opcode == CNP else ROCE_DSCP


def _send(streams: list[Stream], rounds: int, pps: Sequence[float], seed: int) -> list[Flow]:
    """Send the streams from this namespace, at most ``pps[i]`` packets per second during
    the i-th of ``len(pps)`` equal parts of the packets. Every packet of a stream and
    opcode is the same (PSN = the opcode's place in :data:`MIX`)."""
    sockets: dict[tuple[str, int], socket.socket] = {}
    packets = []  # (stream, opcode, payload, socket)
    for stream in streams:
        for psn, (opcode, length) in enumerate(MIX):
            tos = dscp(opcode) << 2 | ECT0
            if (stream.src, tos) not in sockets:
                sock = sockets[stream.src, tos] = socket.socket(socket.AF_INET,
                                                                socket.SOCK_DGRAM)
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                sock.bind((stream.src, 0))
            packets.append((stream, opcode, payload(opcode, stream.dest_qp, psn, length),
                            sockets[stream.src, tos]))
    order = [slot for slot, (stream, *_) in enumerate(packets)
             for _ in range(stream.weight * rounds)]
    random.Random(seed).shuffle(order)
    sent = [0] * len(packets)
    part = math.ceil(len(order) / len(pps))
    due = time.monotonic()
    for number, slot in enumerate(order):
        stream, _, data, sock = packets[slot]
        if sock.sendto(data, (stream.dst, ROCE_PORT)) == len(data):
            sent[slot] += 1
        due += 1 / pps[number // part]
        if number % 64 == 63 and (delay := due - time.monotonic()) > 0:
            time.sleep(delay)
    for sock in sockets.values():
        sock.close()
    return [Flow(stream.tenant, stream.src, stream.dst, opcode, stream.dest_qp, dscp(opcode),
                 count, count * (len(data) + FRAME_OVERHEAD))
            for (stream, opcode, data, _), count in zip(packets, sent, strict=True)]


def send(streams: dict[str, list[Stream]], rounds: int,
         pps: float | Sequence[float] = 20_000, seed: int = 0) -> list[Flow]:
    """Send ``streams[namespace]`` from each network namespace, all starting together, at
    most ``pps`` packets per second each (several rates: one after the other, each for an
    equal part of the packets; the n-th namespace's order shuffled with ``seed + n``);
    returns what was sent."""
    senders: dict[str, subprocess.Popen] = {}
    try:
        for number, (namespace, plan) in enumerate(streams.items()):
            sender = senders[namespace] = subprocess.Popen(
                ["ip", "netns", "exec", namespace, sys.executable, "-m", __name__],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            sender.stdin.write(json.dumps({
                "streams": [asdict(s) for s in plan], "rounds": rounds,
                "pps": [pps] if isinstance(pps, int | float) else list(pps),
                "seed": seed + number}) + "\n")
            sender.stdin.flush()
        for namespace, sender in senders.items():
            if sender.stdout.readline() != "ready\n":
                raise RuntimeError(f"{namespace}: the RoCE sender did not start")
        for sender in senders.values():
            sender.stdin.write("go\n")
            sender.stdin.flush()
        flows = []
        for namespace, sender in senders.items():
            line = sender.stdout.readline()
            if not line:
                raise RuntimeError(f"{namespace}: the RoCE sender failed")
            flows += [Flow(**flow) for flow in json.loads(line)]
    finally:
        for sender in senders.values():
            with contextlib.suppress(OSError):
                sender.stdin.close()  # the senders' sinks close only now
        for sender in senders.values():
            try:
                sender.wait(timeout=10)
            except subprocess.TimeoutExpired:
                sender.kill()
                sender.wait()
    return flows


def totals(flows: Iterable[Flow], key: Callable[[Flow], Hashable]) -> dict:
    """(packets, bytes) per ``key(flow)``."""
    out: dict = {}
    for flow in flows:
        packets, octets = out.get(key(flow), (0, 0))
        out[key(flow)] = (packets + flow.packets, octets + flow.bytes)
    return out


def _main() -> None:
    order = json.loads(sys.stdin.readline())
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("0.0.0.0", ROCE_PORT))
    streams = [Stream(**s) for s in order["streams"]]
    print("ready", flush=True)
    if sys.stdin.readline() != "go\n":
        return
    flows = _send(streams, order["rounds"], order["pps"], order["seed"])
    print(json.dumps([asdict(flow) for flow in flows]), flush=True)
    sys.stdin.read()  # until every sender is done
    sink.close()


if __name__ == "__main__":
    _main()

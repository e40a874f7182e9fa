"""A synthetic sFlow capture over a generated fabric, with its ground truth.

Each :class:`PortFlow` is a RoCEv2 flow between two addresses crossing one switch port
inbound at a steady packet rate. Every second, each switch's :class:`SflowAgent` samples
the packets of its ports 1-in-N, and every ``counter_every_s`` seconds it reports the
ports' exact interface counters. The ground truth is what really crossed: bytes and
packets per (switch, port, source address).
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass, field

from inventory.facts import FactSet
from simulator import roce
from simulator.sflow_agent import SflowAgent
from simulator.sflow_wire import IfCounters, ifindex

FCS = 4
_MAC = bytes.fromhex("020000000001")


@dataclass(frozen=True)
class PortFlow:
    """``packets_per_s`` RoCEv2 packets of ``payload`` bytes from ``src`` to ``dst``,
    received by ``switch`` on ``port`` (its sFlow data source) and sent out of
    ``out_port`` (or an unknown interface)."""

    switch: str
    port: str
    src: str
    dst: str
    packets_per_s: int
    payload: int = 4096
    opcode: int = roce.WRITE_ONLY
    out_port: str = ""
    sport: int = 49152

    def frame(self) -> bytes:
        return roce.frame(_MAC, _MAC, ipaddress.ip_address(self.src).packed,
                          ipaddress.ip_address(self.dst).packed,
                          roce.payload(self.opcode, 0x100 + self.sport % 4096, 1, self.payload),
                          sport=self.sport,
                          dscp=roce.CNP_DSCP if self.opcode == roce.CNP else roce.ROCE_DSCP)


@dataclass(frozen=True)
class CaptureSpec:
    """A capture to run: ``flows`` for ``seconds`` from ``start`` (Unix seconds; 0: an
    hour after the fabric's pods started), sampled 1-in-``sampling_rate``."""

    seconds: int = 30
    sampling_rate: int = 1000
    counter_every_s: int = 5
    start: float = 0.0
    seed: int = 0
    flows: tuple[PortFlow, ...] = ()


@dataclass
class Capture:
    """Datagrams (time, payload, agent address) in time order, and the ground truth:
    (switch, port, source address) -> [packets, bytes including FCS]."""

    datagrams: list[tuple[float, bytes, str]] = field(default_factory=list)
    truth: dict[tuple[str, str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0]))


def capture(facts: FactSet, flows: list[PortFlow], seconds: int, sampling_rate: int,
            start: float, seed: int = 0, counter_every_s: int = 5) -> Capture:
    """Run ``flows`` for ``seconds`` from ``start`` and capture what the agents send."""
    ifindexes = {(i.switch, i.name): i.ifindex for i in facts.interfaces}
    speeds = {(i.switch, i.name): i.speed_bps or 0 for i in facts.interfaces}
    agents_of = {s.name: s.sflow_agent or s.mgmt_address for s in facts.switches}
    now = [start]
    agents = {name: SflowAgent(agents_of[name], sampling_rate, seed=seed + n,
                               clock=lambda: now[0])
              for n, name in enumerate(sorted({f.switch for f in flows}))}
    frames = [f.frame() for f in flows]
    octets: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # bytes, packets
    result = Capture()
    for second in range(seconds):
        for flow, frame in zip(flows, frames, strict=True):
            index = ifindexes[(flow.switch, flow.port)]
            out = ifindexes.get((flow.switch, flow.out_port), 0x3FFFFFFF)
            agents[flow.switch].offer_many(index, ifindex(index), ifindex(out), frame,
                                           flow.packets_per_s)
            size = (len(frame) + FCS) * flow.packets_per_s
            truth = result.truth[(flow.switch, flow.port, flow.src)]
            truth[0] += flow.packets_per_s
            truth[1] += size
            port = octets[(flow.switch, flow.port)]
            port[0] += size
            port[1] += flow.packets_per_s
        now[0] = start + second + 1
        if (second + 1) % counter_every_s == 0:
            for (switch, port), (total, packets) in sorted(octets.items()):
                index = ifindexes[(switch, port)]
                agents[switch].counters(index, IfCounters(
                    index, speed=speeds[(switch, port)], in_octets=total,
                    in_ucast=packets & 0xFFFFFFFF))
        for name, agent in agents.items():
            agent.flush()
            result.datagrams += [(now[0] - 0.001, d, agents_of[name]) for d in agent.datagrams()]
    result.datagrams.sort(key=lambda d: d[0])
    return result

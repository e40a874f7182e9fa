"""Run an emulated fabric: advance a :class:`TrafficModel` tick by tick and let one sFlow
agent per switch (its ``sflow_agent`` address from the facts) sample what crossed it.

Ticks run back to back, as fast as the model goes; each tick's datagrams are handed over,
stamped just before the tick's end (:mod:`simulator.emulator` plays them in real time).
Every ``counter_every_s`` each agent also sends every port's interface counters.
Switches flagged down keep forwarding and sampling.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from simulator.fabric_agent import FabricAgent
from simulator.sflow_wire import IfCounters
from simulator.traffic import Tick, TrafficModel, TruthInterval

_U32 = 0xFFFFFFFF

Stamped = tuple[float, bytes, str]
"""A datagram: time sent (Unix seconds), payload, agent address."""


@dataclass(frozen=True, slots=True)
class TickRun:
    """One tick's run: the tick, its datagrams, and the flow samples taken."""

    tick: Tick
    datagrams: list[Stamped]
    samples: int


@dataclass
class FabricRun:
    """A whole run: the datagrams, the ground truth per interval, flow samples taken,
    wall seconds spent."""

    datagrams: list[Stamped] = field(default_factory=list)
    truth: list[TruthInterval] = field(default_factory=list)
    samples: int = 0
    wall_s: float = 0.0


def stream(model: TrafficModel) -> Iterator[TickRun]:
    """Run ``model`` to its end, tick by tick (between ticks, an emulator can act on
    :attr:`~TrafficModel.down_switches` and :attr:`~TrafficModel.down_ports`)."""
    scenario = model.scenario
    now = [model.start + model.now]
    addresses = {s.name: s.sflow_agent or s.mgmt_address for s in model.facts.switches}
    agents = {name: FabricAgent(address, scenario.sampling_rate, seed=scenario.seed + n,
                                clock=lambda: now[0])
              for n, (name, address) in enumerate(sorted(addresses.items()))}
    offer = {name: agent.offer for name, agent in agents.items()}
    try:
        while not model.done:
            tick = model.step()
            now[0] = tick.end
            taken = 0
            for taps, frame, packets in tick.offers:
                for switch, ingress, egress in taps:
                    taken += offer[switch](ingress, ingress, egress, frame, packets)
            if round(model.now) % scenario.counter_every_s == 0:
                _counter_samples(model, agents)
            datagrams = []
            for name, agent in agents.items():
                agent.flush()
                datagrams += [(tick.end - 0.001, d, addresses[name]) for d in agent.datagrams()]
            yield TickRun(tick, datagrams, taken)
    finally:
        for agent in agents.values():
            agent.close()


def run(model: TrafficModel) -> FabricRun:
    """Run ``model`` to its end and gather what it produced."""
    result = FabricRun()
    wall = time.monotonic()
    for step in stream(model):
        result.datagrams += step.datagrams
        result.samples += step.samples
    result.truth = model.truth
    result.wall_s = time.monotonic() - wall
    return result


def _counter_samples(model: TrafficModel, agents: dict[str, FabricAgent]) -> None:
    for (switch, port), ifindex, speed in model.port_list():
        c = model.counters(switch, port)
        status = 1 if (switch, port) in model.down_ports else 3
        agents[switch].counters(ifindex, IfCounters(
            ifindex, speed=speed, status=status,
            in_octets=c["in_octets"], in_ucast=c["in_pkts"] & _U32,
            out_octets=c["out_octets"], out_ucast=c["out_pkts"] & _U32,
            out_discards=c["out_discards"] & _U32))

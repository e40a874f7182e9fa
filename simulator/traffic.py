"""The emulated fabric's traffic, tick by tick: jobs' RoCEv2 flows over ECMP paths,
congestion, the switch port counters, what the sFlow agents see, and the ground truth.

Pure and deterministic for a scenario (and seed). Every tick (:data:`TICK_S`) each flow
offers its job's rate on the wire (``gbps`` per NIC, split over the NIC's flows, times
the share of the tick its duty cycle is on), reckoned in full-MTU packet equivalents;
:func:`simulator.congestion.throttle` turns offered into delivered rates, which are sent
as whole units of the flow's frame mix (:mod:`simulator.flow_frames`: WRITE segments and
small SENDs), kept whole with a per-flow carry. Every hop counts a flow's frames, each
at its exact size, on its ingress port (``in``) and egress port (``out``): the cable
from port A to port B in direction A -> B is A's ``out`` and B's ``in``. The receiver
acknowledges each message with an ACK on the reverse 5-tuple's own path. Flows through
overloaded ports are ECN marked, and each such receiver sends CNPs (at most
:data:`CNP_PER_S` a second) back to the sender on that path; ACKs and CNPs are counted
and sampled like data but take no part in congestion. A flow with no route left sends
nothing. The ground truth is every port
direction's bytes by sender (tenant, job, pod) per interval, exactly what the counters
count.

Events act at the start of their second: ``noisy`` sets a job's rate, ``link_down``
reroutes the flows that crossed the cable, ``ip_reuse`` changes whose bytes an
interface's traffic is (the new pod carries on the old one's flows); the emulator reads
:attr:`TrafficModel.down_ports` and :attr:`TrafficModel.down_switches` (``switch_down``
stops the switch's management answers, not its forwarding or sFlow).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from inventory.facts import FactSet
from simulator.cabling import Cabling, Hop, podif_key
from simulator.congestion import Hops, Hot, throttle
from simulator.ecmp import Ecmp, five_tuple
from simulator.flow_frames import (
    ACK_BYTES,
    CNP_BYTES,
    DATA_BYTES,
    PACKETS_PER_GBIT,
    WIRE_EXTRA,
    Mix,
    SampledFrame,
    ack_frame,
    cnp_frame,
    default_message,
    flow_mix,
)
from simulator.generator import generate_facts
from simulator.ownership import Ownership, facts_with_history
from simulator.port_table import PortTable, Tap
from simulator.scenario import IpReuse, LinkDown, Noisy, Scenario, SwitchDown, check_names
from simulator.workload import Flow, job_flows

TICK_S = 1.0
CNP_PER_S = 20_000  # one CNP per queue pair per 50 us at most (DCQCN)

CounterSource = Callable[[str, float], dict[str, int]]
"""``(port name, now) -> {counter name: value}`` as simulator.gnmi_target expects."""


@dataclass(frozen=True, slots=True)
class Tick:
    """One tick (Unix seconds): what crossed the fabric as (taps, frame, count), one entry
    per kind of frame of each flow that sent (its mix, its ACKs, its CNPs)."""

    start: float
    end: float
    offers: list[tuple[tuple[Tap, ...], SampledFrame, int]]


class TruthKey(NamedTuple):
    """A port direction (``in``: received by the port) and the sender's names."""

    switch: str
    port: str
    direction: str
    tenant: str
    job: str
    pod: str


@dataclass(frozen=True, slots=True)
class TruthInterval:
    """Bytes (counted as the port counters count them) per key over [start, end)."""

    start: float
    end: float
    bytes: dict[TruthKey, int]


class TrafficModel:
    """A scenario's traffic over the fabric its spec generates, routed on the cabling of
    its facts (:mod:`simulator.cabling`); :meth:`step` advances it.

    ``facts`` default to the scenario's generated facts (pass them to share them);
    ``start`` (Unix seconds) defaults to the scenario's.
    """

    def __init__(self, scenario: Scenario, facts: FactSet | None = None,
                 start: float | None = None) -> None:
        self.scenario = scenario
        self.facts = facts or generate_facts(scenario.fabric)
        check_names(scenario, self.facts)
        self.cabling = Cabling(self.facts)
        self.start = scenario.start_time if start is None else start
        self.now = 0.0
        self.down_switches: set[str] = set()
        self.down_ports: set[tuple[str, str]] = set()
        self.truth: list[TruthInterval] = []
        self._ports = PortTable(self.cabling, TICK_S)
        self._ecmp = Ecmp(self.cabling, scenario.seed)
        self._owners = Ownership(self.facts)
        self._gbps = [job.gbps for job in scenario.traffic]
        self._events = list(scenario.events)
        self.flows: list[Flow] = job_flows(self.facts, self.cabling, scenario.traffic,
                                           scenario.seed)
        routes = [self._route(f) for f in self.flows]
        self.routes: list[tuple[Hop, ...] | None] = [r[0] for r in routes]
        self._paths: list[Hops | None] = [r[1] for r in routes]
        self._taps: list[tuple[Tap, ...]] = [r[2] for r in routes]
        self._macs = {podif_key(f.namespace, f.pod, f.interface):
                      bytes.fromhex(f.mac.replace(":", "")) or bytes(6)
                      for f in self.facts.pod_interfaces}
        messages = [job.message or default_message(scenario.seed, job.tenant, job.name)
                    for job in scenario.traffic]
        self.mixes: list[Mix] = [flow_mix(messages[f.job], self._macs[f.src], f.src_ip,
                                          f.dst_ip, f.qp, f.sport) for f in self.flows]
        self._units = [(DATA_BYTES + WIRE_EXTRA) / m.wire_bytes for m in self.mixes]
        """Units of a flow's mix per full-MTU packet equivalent."""
        self._rate = [f.share * PACKETS_PER_GBIT for f in self.flows]
        self._carry = [0.0] * len(self.flows)
        self._pending = [0] * len(self.flows)
        self._back: dict[int, tuple[Hops | None, tuple[Tap, ...]]] = {}
        """Flow -> the path of its ACKs and CNPs (the reverse 5-tuple's), as routed."""
        self.back_routes: dict[int, tuple[Hop, ...] | None] = {}
        """Flow -> the hops of its ACKs and CNPs, once they were first sent."""
        self._back_frames = [(SampledFrame(ack_frame(self._macs[f.dst], f.dst_ip, f.src_ip,
                                                     f.qp, f.sport)),
                              SampledFrame(cnp_frame(self._macs[f.dst], f.dst_ip, f.src_ip,
                                                     f.qp, f.sport))) for f in self.flows]
        self._ack_pending = [0] * len(self.flows)
        self._cnp_pending = [0] * len(self.flows)
        self._table: dict[TruthKey, int] = {}
        self._interval_start = 0.0

    @property
    def done(self) -> bool:
        return self.now >= self.scenario.seconds

    def inventory_facts(self) -> FactSet:
        """The facts an inventory holds of this run: with the ``ip_reuse`` history."""
        return facts_with_history(self.facts, self.scenario, self.start)

    def counters(self, switch: str, port: str) -> dict[str, int]:
        """The cumulative counters of one port (inventory.counters names)."""
        return self._ports.values(self._ports.index[(switch, port)])

    def port_list(self) -> list[tuple[tuple[str, str], int, int]]:
        """Every switch port: ((switch, port), ifIndex, speed in bit/s)."""
        ports = self._ports
        return list(zip(ports.names, ports.ifindex, ports.speed, strict=True))

    def counter_source(self, switch: str) -> CounterSource:
        """A CounterSource for simulator.gnmi_target: the port's counters as far as the
        model has advanced (``now`` is not looked at)."""
        ports = self._ports

        def source(port: str, now: float) -> dict[str, int]:
            return ports.values(ports.index[(switch, port)])
        return source

    def step(self) -> Tick:
        """Advance one tick; returns what the sFlow agents see in it."""
        t0, t1 = self.now, self.now + TICK_S
        self._apply_events(t0)
        factor = [gbps * (job.duty.on_time(t0, t1) if job.duty else TICK_S)
                  for gbps, job in zip(self._gbps, self.scenario.traffic, strict=True)]
        offered = [factor[f.job] * rate if path else 0.0
                   for f, rate, path in zip(self.flows, self._rate, self._paths, strict=True)]
        ports = self._ports
        delivered, hot = throttle(offered, self._paths, ports.capacity, ports.rank)
        sent, carry, units = [0] * len(delivered), self._carry, self._units
        pending, acks, mixes = self._pending, self._ack_pending, self.mixes
        offers = []
        for f, (rate, path) in enumerate(zip(delivered, self._paths, strict=True)):
            if not rate or path is None:
                continue
            total = rate * units[f] + carry[f]
            n = int(total)
            carry[f] = total - n
            if n:
                mix = mixes[f]
                ports.count(path, n * mix.octets, n * mix.packets)
                sent[f] = n * mix.packets
                pending[f] += n
                offers += [(self._taps[f], frame, n * k) for frame, k in mix.frames]
                back, taps = self._back_route(f)
                if back is not None:
                    count = n * mix.acks
                    ports.count(back, count * ACK_BYTES, count)
                    acks[f] += count
                    offers.append((taps, self._back_frames[f][0], count))
        if hot:
            ports.signal(hot, sent)
            offers += self._cnps(hot, sent, offered, delivered)
        self.now = t1
        if t1 % self.scenario.interval_s == 0 or self.done:
            self._close_interval()
        return Tick(self.start + t0, self.start + t1, offers)

    def _apply_events(self, t: float) -> None:
        while self._events and self._events[0].at <= t:
            event = self._events.pop(0)
            if isinstance(event, Noisy):
                self._gbps[[j.key for j in self.scenario.traffic].index(event.job)] = event.gbps
            elif isinstance(event, SwitchDown):
                self.down_switches.add(event.switch)
            elif isinstance(event, IpReuse):
                self._flush()
                self._owners.reuse(event)
            elif isinstance(event, LinkDown):
                self._flush()
                self._link_down(event)

    def _link_down(self, event: LinkDown) -> None:
        ports = self._ports
        failed = ports.index[(event.switch, event.port)]
        cable = {failed, ports.peer[failed]}
        self.down_ports.update(ports.names[p] for p in cable if p >= 0)
        self._ecmp.fail(event.switch, event.port)
        for f, path in enumerate(self._paths):
            if path and any(i in cable or o in cable for i, o in path):
                self.routes[f], self._paths[f], self._taps[f] = self._route(self.flows[f])
        for f, (path, _) in list(self._back.items()):
            if path and any(i in cable or o in cable for i, o in path):
                del self._back[f], self.back_routes[f]

    def _route(self, flow: Flow) -> tuple[tuple[Hop, ...] | None, Hops | None,
                                          tuple[Tap, ...]]:
        """A flow's ECMP path: as hops, as port indexes and as sFlow taps."""
        hops = self._hops(flow.src, flow.dst, five_tuple(flow.src_ip, flow.dst_ip, flow.sport))
        return (hops, *self._ports.path_of(hops))

    def _hops(self, src: str, dst: str, key: bytes) -> tuple[Hop, ...] | None:
        a, b = self.cabling.plugs[src], self.cabling.plugs[dst]
        return self._ecmp.path(a.leaf, a.port, b.leaf, b.port, key)

    def _cnps(self, hot: dict[int, Hot], sent: list[int], offered: list[float],
              delivered: list[float]) -> list[tuple[tuple[Tap, ...], SampledFrame, int]]:
        """CNPs from the receivers of marked flows back to their senders."""
        offers = []
        ports, cap = self._ports, round(CNP_PER_S * TICK_S)
        for f in sorted({f for h in hot.values() for f, _ in h.members}):
            count = min(cap, round(sent[f] * (1 - delivered[f] / offered[f])))
            if not count:
                continue
            path, taps = self._back_route(f)
            if path is None:
                continue
            ports.count(path, count * CNP_BYTES, count, queue6=True)
            self._cnp_pending[f] += count
            offers.append((taps, self._back_frames[f][1], count))
        return offers

    def _back_route(self, f: int) -> tuple[Hops | None, tuple[Tap, ...]]:
        """The path of a flow's ACKs and CNPs, from its receiver back to its sender."""
        found = self._back.get(f)
        if found is None:
            flow = self.flows[f]
            hops = self._hops(flow.dst, flow.src,
                              five_tuple(flow.dst_ip, flow.src_ip, flow.sport))
            self.back_routes[f] = hops
            found = self._back[f] = self._ports.path_of(hops)
        return found

    def _flush(self) -> None:
        """Move the bytes counted since the last flush into the current interval."""
        table, names = self._table, self._ports.names
        for f, flow in enumerate(self.flows):
            forward = self._pending[f] * self.mixes[f].octets
            back = self._ack_pending[f] * ACK_BYTES + self._cnp_pending[f] * CNP_BYTES
            self._pending[f] = self._ack_pending[f] = self._cnp_pending[f] = 0
            for octets, path, sender in ((forward, self._paths[f], flow.src),
                                         (back, self._back.get(f, (None,))[0], flow.dst)):
                if not octets:
                    continue
                owner = self._owners.owner(sender)
                for ingress, egress in path or ():
                    for port, direction in ((ingress, "in"), (egress, "out")):
                        key = TruthKey(*names[port], direction, *owner)
                        table[key] = table.get(key, 0) + octets

    def _close_interval(self) -> None:
        self._flush()
        self.truth.append(TruthInterval(self.start + self._interval_start,
                                        self.start + self.now, self._table))
        self._table, self._interval_start = {}, self.now

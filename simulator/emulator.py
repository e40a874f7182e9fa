"""The emulated fabric on loopback: a traffic model's switches as gNMI targets whose
counters follow the model, and the model's sFlow sent to a collector in real time.

Each switch answers gNMI on its management address (``127.1.x.y``) with the EOS profile
(interfaces, LLDP, PFC per priority, queue ECN and drops), or, when named in ``snmp``, SNMP
v2c (IF-MIB, LLDP-MIB, the EOS PFC and ECN MIBs) with the fabric's password as community
(``public`` without one); a switch the scenario takes down stops answering. What a service
needs to see the cluster side is written as a fact file:
nodes, NICs, VFs, pods with their fixed IPs over time, jobs, tenants (the switch side it
must discover itself).

The model does not depend on the wall clock, so :meth:`EmulatedFabric.prepare` plays it to
its end at once, keeping every tick's datagrams, port counters and down switches and
cables; :meth:`EmulatedFabric.run` then replays them at their wall-clock times. Replaying
costs little, so a busy machine delays a datagram at most, never the traffic itself: the
counters a switch answers with are always those of the wall-clock moment (or of its
agent's last refresh before it), and each tick's datagrams are spread over the first half
of their tick
(:func:`send_schedule`), sent by a process of their own (:mod:`simulator.sflow_sender`).
"""

from __future__ import annotations

import bisect
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from inventory.factfile import write_facts
from simulator.fabric_run import TickRun, stream
from simulator.gnmi_target import GnmiTarget
from simulator.sflow_sender import Schedule, start_sender
from simulator.snmp_agent import SnmpAgent
from simulator.traffic import TrafficModel

PROFILE = "eos"
SEND_SPREAD = 0.5
"""The share of a tick over which its datagrams are sent, from the tick's start."""

Clock = Callable[[], float]
Sleep = Callable[[float], None]


@dataclass(frozen=True, slots=True)
class PlayedTick:
    """What one tick [start, end) (Unix seconds) looks like from outside: its datagrams,
    every port's counters at its end (in :meth:`TrafficModel.port_list` order), the
    switches and the ports down during it."""

    start: float
    end: float
    datagrams: tuple[bytes, ...]
    counters: tuple[dict[str, int], ...]
    down_switches: frozenset[str]
    down_ports: frozenset[tuple[str, str]]


class EmulatedFabric:
    """Targets up on :meth:`start`; :meth:`run` plays the model in real time (in a thread
    of its own, :meth:`run_in_background`); :meth:`stop` takes everything down.

    gNMI switches answer with fresh counters; SNMP agents refresh theirs every
    ``snmp_refresh_s`` (net-snmp: about 3 s), each from a phase of its own, and answer
    with the same values in between. ``clock`` and ``sleep`` pace the replay (the wall
    clock by default).
    """

    def __init__(self, model: TrafficModel, username: str = "fabcorr",
                 password: str = "", snmp: Iterable[str] = (), snmp_refresh_s: float = 3.0,
                 clock: Clock = time.time, sleep: Sleep = time.sleep) -> None:
        self.model = model
        over_snmp = set(snmp)
        unknown = over_snmp - {s.name for s in model.facts.switches}
        if unknown:
            raise ValueError(f"snmp: no such switch: {', '.join(sorted(unknown))}")
        self.ticks: list[PlayedTick] = []
        self._ends: list[float] = []
        self._ports = {name: n for n, (name, _, _) in enumerate(model.port_list())}
        self._before = tuple(model.counters(*name) for name in self._ports)
        self._refreshed: dict[int, tuple[float, dict[str, int]]] = {}  # port -> the last
        self.targets: dict[str, GnmiTarget | SnmpAgent] = {}
        for switch in model.facts.switches:
            refresh = snmp_refresh_s if switch.name in over_snmp else 0.0
            options = {"host": switch.mgmt_address, "profile": PROFILE,
                       "counters": self._counter_source(switch.name, refresh)}
            self.targets[switch.name] = (
                SnmpAgent.from_facts(model.facts, switch.name, community=password or "public",
                                     **options) if switch.name in over_snmp else
                GnmiTarget.from_facts(model.facts, switch.name, username=username,
                                      password=password, **options))
        self.samples = 0
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._clock, self._sleep = clock, sleep
        self._thread: threading.Thread | None = None
        self._halt = threading.Event()
        self._down: set[tuple[str, str]] = set()

    def start(self) -> EmulatedFabric:
        for target in self.targets.values():
            target.start()
        return self

    def prepare(self, on_tick: Callable[[TickRun], None] | None = None) -> list[PlayedTick]:
        """Play the whole model now, as fast as it goes (``on_tick`` after every tick, e.g.
        a truth recorder); returns the ticks :meth:`run` replays."""
        model, names = self.model, list(self._ports)
        for step in stream(model):
            self.samples += step.samples
            self.ticks.append(PlayedTick(
                step.tick.start, step.tick.end, tuple(d for _, d, _ in step.datagrams),
                tuple(model.counters(*name) for name in names),
                frozenset(model.down_switches), frozenset(model.down_ports)))
            self._ends.append(step.tick.end)
            if on_tick is not None:
                on_tick(step)
        return self.ticks

    def run(self, collector: tuple[str, int]) -> None:
        """Replay the prepared ticks (preparing them first if need be) in real time,
        sending the sFlow to ``collector``; switches and cables go down at the start of
        the tick they are down in."""
        sender = None
        try:
            if not self.ticks:
                self.prepare()
            sender = start_sender(send_schedule(self.ticks), collector)
            for tick in self.ticks:
                self._wait_until(tick.start)
                if self._halt.is_set():
                    break
                self._take_down(tick)
            self._wait_until(self.ticks[-1].end)
            while sender.is_alive() and not self._halt.is_set():
                sender.join(0.1)
        except BaseException as exc:  # handed to whoever waits for the run
            self.error = exc
        finally:
            if sender is not None and sender.is_alive():
                sender.terminate()
                sender.join(5)
            self.finished.set()

    def _wait_until(self, moment: float) -> None:
        """Sleep until ``moment`` (or the halt), at most a tenth of a second at a time."""
        while not self._halt.is_set() and (left := moment - self._clock()) > 0:
            self._sleep(min(left, 0.1))

    def _take_down(self, tick: PlayedTick) -> None:
        """Stop the switches down in ``tick``; a port down reports oper-status down and
        hears no LLDP neighbour (on the gNMI targets)."""
        for name in tick.down_switches:
            target = self.targets.get(name)
            if target is not None and target.port:
                target.stop()
        for switch, port in tick.down_ports - self._down:
            self._down.add((switch, port))
            target = self.targets.get(switch)
            if isinstance(target, GnmiTarget) and port in target.interfaces:
                target.set_oper_status(port, "down")
                target.neighbors = [n for n in target.neighbors if n.local_port != port]

    def _counter_source(self, switch: str, refresh_s: float
                        ) -> Callable[[str, float], dict[str, int]]:
        """The counters of ``switch``'s ports as its agent shows them at a wall-clock
        moment: fresh (``refresh_s`` 0: counting steadily through each tick), or as of the
        agent's last refresh (every ``refresh_s`` from a phase of the switch's own), the
        same values until the next one."""
        phase = zlib.crc32(switch.encode()) % 1000 / 1000 * refresh_s

        def source(port: str, now: float) -> dict[str, int]:
            index = self._ports[(switch, port)]
            if not refresh_s:
                return self._counters_at(index, now)
            refreshed = phase + (now - phase) // refresh_s * refresh_s
            last = self._refreshed.get(index)
            if last is None or last[0] != refreshed:
                last = self._refreshed[index] = (refreshed, self._counters_at(index, refreshed))
            return last[1]
        return source

    def _counters_at(self, index: int, at: float) -> dict[str, int]:
        """A port's counters at ``at``: between its values at the ends of the tick's
        neighbours, in proportion to the time into the tick."""
        done = bisect.bisect_right(self._ends, at)
        before = self.ticks[done - 1].counters[index] if done else self._before[index]
        if done == len(self.ticks) or at <= self.ticks[done].start:
            return before
        tick = self.ticks[done]
        after, part = tick.counters[index], (at - tick.start) / (tick.end - tick.start)
        return {name: before.get(name, 0) + int((value - before.get(name, 0)) * part)
                for name, value in after.items()}

    def run_in_background(self, collector: tuple[str, int]) -> None:
        """:meth:`run` in a thread of its own; :attr:`finished` is set when it ends."""
        self._thread = threading.Thread(target=self.run, args=(collector,),
                                        name="emulated-fabric", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for target in self.targets.values():
            target.stop()

    def switch_config(self, password_env: str) -> list[dict]:
        """The ``switches`` of a fabcorr.yaml reaching these targets (``password_env`` holds
        the gNMI password, which is also the SNMP community)."""
        entries = []
        for name, target in self.targets.items():
            snmp = isinstance(target, SnmpAgent)
            entry: dict = {"name": name, "address": target.switch.mgmt_address,
                           "protocols": ["snmp" if snmp else "gnmi"], "vendor": PROFILE}
            if snmp:
                entry["snmp"] = {"port": target.port, "version": "2c",
                                 "community": {"env": password_env}, "timeout_s": 2.0,
                                 "retries": 1}
            else:
                entry["gnmi"] = {"port": target.port, "insecure": True, "username": "fabcorr",
                                 "password": {"env": password_env}, "timeout_s": 5.0}
            entries.append(entry)
        return entries

    def write_cluster_facts(self, path: Path) -> None:
        """The cluster side of the model's facts (with IP ownership over time)."""
        write_facts(self.model.inventory_facts().inventory(), path)


def send_schedule(ticks: Iterable[PlayedTick]) -> Schedule:
    """When each tick's datagrams go out: evenly over the first :data:`SEND_SPREAD` of it.

    >>> t = PlayedTick(10.0, 11.0, (b"a", b"b", b"c", b"d"), (), frozenset(), frozenset())
    >>> send_schedule([t])
    [(10.0, b'a'), (10.125, b'b'), (10.25, b'c'), (10.375, b'd')]
    """
    schedule = []
    for tick in ticks:
        step = SEND_SPREAD * (tick.end - tick.start) / max(1, len(tick.datagrams))
        schedule += [(tick.start + n * step, d) for n, d in enumerate(tick.datagrams)]
    return schedule


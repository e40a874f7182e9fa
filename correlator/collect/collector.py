"""Counter telemetry from many switches at once: periodic polls or streams, per-switch health.

Every switch runs in its own task: a poll-mode protocol (SNMP) is read once per interval
under a deadline of :data:`POLL_PERIODS` intervals (a walk that a busy machine makes
slower than one interval still delivers, late, and its readings are dated; the ticks it
overran are skipped); a stream-mode protocol (gNMI Subscribe SAMPLE) is read
as it delivers, and re-subscribed after a capped, jittered backoff when it fails. So one
slow, unreachable or misbehaving switch never delays another, and its errors are counted
by kind in its :class:`Health`, with the readings it refused
(:func:`~correlator.collect.rates.screen`: dated in the future, or values that are no
counts).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from correlator.collect.rates import screen
from inventory.backoff import Backoff
from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.discovery import failure_kind
from inventory.errors import FabcorrError

POLL_PERIODS = 5
"""How many intervals a poll may take before it is given up (a ``timeout``)."""

Poller = Callable[[SwitchConfig], Awaitable[list[PortCounters]]]
Streamer = Callable[[SwitchConfig, float, Collection[str] | None],
                   AsyncGenerator[list[PortCounters], None]]
"""Streams a switch's counters every so many seconds: of every port, or of those named."""
Sink = Callable[[list[PortCounters]], None]


@dataclass
class Health:
    """How one switch's telemetry is doing."""

    switch: str
    protocol: str
    up: bool = False
    last_success: float | None = None
    last_error: str = ""
    errors: Counter[str] = field(default_factory=Counter)
    updates: int = 0


def default_pollers() -> dict[str, Poller]:
    from inventory import snmp

    return {"snmp": snmp.poll_counters}


def default_streamers() -> dict[str, Streamer]:
    from inventory import gnmi

    return {"gnmi": gnmi.stream_counters}


class Collector:
    """Collects counters from ``switches`` every ``interval_s`` into ``sink``; of the
    switches named in ``ports``, a stream asks only for those ports (a poll reads the
    whole switch: an SNMP walk reads whole tables). :meth:`retarget` changes both while
    it runs."""

    def __init__(self, switches: Sequence[SwitchConfig], interval_s: float, sink: Sink, *,
                 pollers: dict[str, Poller] | None = None,
                 streamers: dict[str, Streamer] | None = None,
                 backoff: Backoff | None = None, clock: Callable[[], float] = time.time,
                 ports: Mapping[str, Collection[str]] | None = None) -> None:
        self.switches, self.interval_s, self.sink = switches, interval_s, sink
        self.ports = ports or {}
        self.pollers = default_pollers() if pollers is None else pollers
        self.streamers = default_streamers() if streamers is None else streamers
        self.backoff, self.clock = backoff or Backoff(), clock
        self.rng = random.Random()
        self.health = {s.name: Health(s.name, self._protocol(s)) for s in switches}
        self._retargeted = asyncio.Event()

    def retarget(self, switches: Sequence[SwitchConfig],
                  ports: Mapping[str, Collection[str]] | None = None) -> None:
        """Collect from ``switches`` (``ports`` as the constructor takes them) from now on:
        a switch no longer named stops, a new one starts, one whose configuration or ports
        changed starts again; the others go on undisturbed, their health kept."""
        self.switches, self.ports = switches, ports or {}
        self.health = {s.name: self.health.get(s.name) or Health(s.name, self._protocol(s))
                       for s in switches}
        self._retargeted.set()

    def _protocol(self, switch: SwitchConfig) -> str:
        return next((p for p in switch.protocols if p in self.streamers or p in self.pollers),
                    "")

    async def run(self, stop: asyncio.Event) -> None:
        """Collect until ``stop`` is set."""
        running: dict[str, tuple[tuple[SwitchConfig, Collection[str] | None],
                                 asyncio.Task[None]]] = {}
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                self._retargeted.clear()
                wanted = {s.name: (s, self.ports.get(s.name)) for s in self.switches}
                for name, (target, task) in list(running.items()):
                    if wanted.get(name) != target:
                        task.cancel()
                        del running[name]
                for name, (switch, ports) in wanted.items():
                    if name not in running:
                        running[name] = (switch, ports), asyncio.create_task(
                            self._collect(switch, stop), name=f"collect-{name}")
                retargeted = asyncio.create_task(self._retargeted.wait())
                await asyncio.wait((stopping, retargeted), return_when=asyncio.FIRST_COMPLETED)
                retargeted.cancel()
        finally:
            stopping.cancel()
            for _, task in running.values():
                task.cancel()
            await asyncio.gather(*(task for _, task in running.values()),
                                 return_exceptions=True)

    async def _collect(self, switch: SwitchConfig, stop: asyncio.Event) -> None:
        health = self.health[switch.name]
        if health.protocol in self.streamers:
            await self._stream(switch, health, stop)
        elif health.protocol in self.pollers:
            await self._poll(switch, health, stop)
        else:
            health.last_error = f"no telemetry adapter for {', '.join(switch.protocols)}"

    async def _poll(self, switch: SwitchConfig, health: Health, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        tick = loop.time()
        while not stop.is_set():
            try:
                async with asyncio.timeout(POLL_PERIODS * self.interval_s):
                    readings = await self.pollers[health.protocol](switch)
                self._delivered(health, readings)
            except (FabcorrError, TimeoutError, OSError) as exc:
                self._failed(health, exc)
            tick += self.interval_s
            if tick < loop.time():  # a late poll skips the ticks it missed
                tick = loop.time()
            await _wait(stop, tick - loop.time())

    async def _stream(self, switch: SwitchConfig, health: Health, stop: asyncio.Event) -> None:
        attempt = 0
        while not stop.is_set():
            stream = self.streamers[health.protocol](switch, self.interval_s,
                                                     self.ports.get(switch.name))
            try:
                async with contextlib.aclosing(stream):  # closed here, even when cancelled
                    async for readings in stream:
                        self._delivered(health, readings)
                        attempt = 0
                        if stop.is_set():
                            return
            except (FabcorrError, TimeoutError, OSError) as exc:
                self._failed(health, exc)
            await _wait(stop, self.backoff.delay(attempt, self.rng))
            attempt += 1

    def _delivered(self, health: Health, readings: list[PortCounters]) -> None:
        now = self.clock()
        health.up, health.last_success = True, now
        health.updates += 1
        usable = []
        for reading in readings:
            kept, refused = screen(reading, now)
            health.errors.update(refused)
            if kept is not None:
                usable.append(kept)
        self.sink(usable)

    def _failed(self, health: Health, exc: BaseException) -> None:
        health.up = False
        health.errors[failure_kind(exc)] += 1
        health.last_error = str(exc) or type(exc).__name__


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds``, or less if ``stop`` is set meanwhile."""
    if seconds > 0:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await stop.wait()

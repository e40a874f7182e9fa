"""Discovery of many switches at once: each over its first protocol, all concurrently.

One slow, unreachable or misbehaving switch never delays the others: every switch runs
under its own deadline and a bounded number run at once. Failures are kept per switch
with their kind (timeout, unreachable, auth, garbage, error) for the report.

With a :class:`~inventory.devices.CrawlConfig`, switches that are not listed are found
too: the LLDP neighbours of the seeds that announce a management address, then theirs,
wave by wave, each reached like the template switch, until no new one turns up or
``max_switches`` were tried. A neighbour is new when neither its system name, its
management address nor its chassis id is that of a switch listed or found already.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from inventory.devices import CrawlConfig, SwitchConfig
from inventory.errors import DecodeError, SourceError, SourceTimeout, SourceUnreachable
from inventory.facts import FactSet, Reporter, merge_all

Discoverer = Callable[[SwitchConfig], Awaitable[FactSet]]


ADAPTERS = {"gnmi": "inventory.gnmi", "snmp": "inventory.snmp", "netconf": "inventory.netconf"}
"""Protocol -> the module whose ``discover(switch)`` speaks it."""


class _Lazy(dict):
    """Protocol -> discover function, importing each adapter (and its library) on first use."""

    def __missing__(self, protocol: str) -> Discoverer:
        found = self[protocol] = importlib.import_module(ADAPTERS[protocol]).discover
        return found

    def __contains__(self, protocol: object) -> bool:
        return protocol in ADAPTERS


@dataclass(frozen=True)
class Failure:
    """Why one switch could not be discovered."""

    switch: str
    protocol: str
    kind: str
    message: str


@dataclass(frozen=True)
class Discovery:
    """What a discovery run found, what failed, how long each switch took, and the
    switches the crawl added (found or failed)."""

    facts: FactSet
    failures: tuple[Failure, ...]
    seconds: dict[str, float] = field(default_factory=dict)
    crawled: tuple[SwitchConfig, ...] = ()


def failure_kind(exc: BaseException) -> str:
    """A short name for why a source failed."""
    if isinstance(exc, SourceTimeout | TimeoutError):
        return "timeout"
    kind = getattr(exc, "kind", "")
    if kind:
        return kind
    if isinstance(exc, SourceUnreachable | ConnectionError | OSError):
        return "unreachable"
    if isinstance(exc, DecodeError):
        return "garbage"
    return "error"


async def discover_all(
    switches: Sequence[SwitchConfig], *, concurrency: int = 64, deadline_s: float = 60.0,
    adapters: dict[str, Discoverer] | None = None,
    progress: Callable[[SwitchConfig, Failure | None], None] | None = None,
    crawl: CrawlConfig | None = None,
) -> Discovery:
    """Discover every switch over the first of its protocols, then, with ``crawl``, the
    switches LLDP finds beyond them; gather facts and failures."""
    adapters = _Lazy() if adapters is None else adapters
    gate = asyncio.Semaphore(concurrency)
    seconds: dict[str, float] = {}

    async def one(switch: SwitchConfig) -> FactSet | Failure:
        protocol = next((p for p in switch.protocols if p in adapters), None)
        if protocol is None:
            return Failure(switch.name, ",".join(switch.protocols), "error",
                           "no discovery adapter for these protocols")
        async with gate:
            start = time.monotonic()
            try:
                async with asyncio.timeout(deadline_s):
                    found: FactSet | Failure = await adapters[protocol](switch)
            except (SourceError, TimeoutError, OSError) as exc:
                found = Failure(switch.name, protocol, failure_kind(exc), str(exc))
            seconds[switch.name] = time.monotonic() - start
        if progress is not None:
            progress(switch, found if isinstance(found, Failure) else None)
        return found

    async def wave(batch: Sequence[SwitchConfig]) -> list[FactSet | Failure]:
        return await asyncio.gather(*(one(s) for s in batch))

    results = await wave(switches)
    crawled: list[SwitchConfig] = []
    if crawl is not None:
        results += await _crawl(crawl, switches, results, wave, crawled)
    facts = merge_all(r for r in results if isinstance(r, FactSet))
    return Discovery(facts, tuple(r for r in results if isinstance(r, Failure)), seconds,
                     tuple(crawled))


Wave = Callable[[Sequence[SwitchConfig]], Awaitable[list[FactSet | Failure]]]


async def _crawl(config: CrawlConfig, switches: Sequence[SwitchConfig],
                 results: list[FactSet | Failure], wave: Wave, crawled: list[SwitchConfig]
                 ) -> list[FactSet | Failure]:
    """Discover new LLDP neighbours wave by wave, from the seeds' on; appends the switches
    tried to ``crawled`` and returns their results."""
    known = _Known(switches)
    sources = set(config.seeds or (s.name for s in switches))
    found = [r for r in results if isinstance(r, FactSet)]
    more: list[FactSet | Failure] = []
    while len(crawled) < config.max_switches:
        new = known.candidates(config, found, sources)[:config.max_switches - len(crawled)]
        if not new:
            break
        crawled += new
        results = await wave(new)
        more += results
        found = [r for r in results if isinstance(r, FactSet)]
        sources = {s.name for s in new}
    return more


class _Known:
    """Names, management addresses and chassis ids of the switches listed or found."""

    def __init__(self, switches: Sequence[SwitchConfig]) -> None:
        self.names = {s.name for s in switches}
        self.addresses = {s.address for s in switches}
        self.chassis: set[str] = set()

    def candidates(self, config: CrawlConfig, found: list[FactSet], sources: set[str]
                   ) -> list[SwitchConfig]:
        """The new switches that ``sources`` see as LLDP neighbours in ``found``."""
        for facts in found:
            self.chassis.update(s.chassis_id for s in facts.switches if s.chassis_id)
            self.addresses.update(s.mgmt_address for s in facts.switches if s.mgmt_address)
        new = []
        for n in (n for facts in found for n in facts.neighbors):
            name, address = n.system_name or n.mgmt_address, n.mgmt_address
            if n.reporter != Reporter.SWITCH or n.local_device not in sources or not address \
                    or not config.follows(n.system_name) or name in self.names \
                    or address in self.addresses or n.chassis_id in self.chassis:
                continue
            self.names.add(name)
            self.addresses.add(address)
            if n.chassis_id:
                self.chassis.add(n.chassis_id)
            new.append(config.switch(name, address))
        return new

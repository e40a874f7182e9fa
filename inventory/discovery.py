"""Discovery of many switches at once: each over its first protocol, all concurrently.

One slow, unreachable or misbehaving switch never delays the others: every switch runs
under its own deadline and a bounded number run at once. Failures are kept per switch
with their kind (timeout, unreachable, auth, garbage, error) for the report.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from inventory.devices import SwitchConfig
from inventory.errors import DecodeError, SourceError, SourceTimeout, SourceUnreachable
from inventory.facts import FactSet, merge_all

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
    """What a discovery run found, what failed, and how long each switch took."""

    facts: FactSet
    failures: tuple[Failure, ...]
    seconds: dict[str, float] = field(default_factory=dict)


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
) -> Discovery:
    """Discover every switch over the first of its protocols; gather facts and failures."""
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
                found: FactSet | Failure = await asyncio.wait_for(
                    adapters[protocol](switch), deadline_s)
            except (SourceError, TimeoutError, OSError) as exc:
                found = Failure(switch.name, protocol, failure_kind(exc), str(exc))
            seconds[switch.name] = time.monotonic() - start
        if progress is not None:
            progress(switch, found if isinstance(found, Failure) else None)
        return found

    results = await asyncio.gather(*(one(s) for s in switches))
    facts = merge_all(r for r in results if isinstance(r, FactSet))
    return Discovery(facts, tuple(r for r in results if isinstance(r, Failure)), seconds)

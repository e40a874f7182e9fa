"""gNMI source: discovery (LLDP, interfaces) and streamed port counters from one switch.

::

    facts = await discover(switch)
    async with contextlib.aclosing(stream_counters(switch, 10.0)) as stream:
        async for readings in stream:
            ...

Both raise :class:`~inventory.gnmi.client.GnmiError` (a ``SourceError``; its ``kind`` is
``timeout``, ``unreachable``, ``tls``, ``auth``, ``garbage`` or ``error``). Reconnecting a
broken stream is the caller's job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Collection
from contextlib import aclosing

from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.errors import DecodeError
from inventory.facts import FactSet
from inventory.gnmi.client import GnmiAuthError, GnmiClient, GnmiError, GnmiTimeout, GnmiUnreachable
from inventory.gnmi.mapping import CounterDecoder, facts_from_replies
from inventory.gnmi.profiles import DISCOVERY_PATHS, LOCAL_LLDP_PATH, counter_paths, profile_for

__all__ = ["GnmiAuthError", "GnmiError", "GnmiTimeout", "GnmiUnreachable", "discover",
           "stream_counters"]

_log = logging.getLogger(__name__)


async def discover(switch: SwitchConfig) -> FactSet:
    """The switch, its interfaces and the LLDP neighbours it reports.

    Uses Get, or Subscribe ONCE for subscribe-only profiles (Cumulus).
    """
    once = profile_for(switch.vendor).subscribe_only
    async with GnmiClient(switch) as client:
        fetch = client.once if once else client.get
        replies = await fetch(DISCOVERY_PATHS)
        replies += await fetch((LOCAL_LLDP_PATH,), missing_ok=True)
    try:
        return facts_from_replies(switch, replies)
    except DecodeError as exc:
        raise GnmiError(f"{client.where}: malformed reply: {exc}", "garbage") from exc


async def stream_counters(switch: SwitchConfig, interval_s: float,
                          ports: Collection[str] | None = None
                          ) -> AsyncIterator[list[PortCounters]]:
    """Port counters of the switch every ``interval_s`` (Subscribe STREAM, SAMPLE): of
    every interface, or of ``ports`` only.

    Yields one list per sample, the first being the initial state. A sample that does not
    decode is logged and skipped; an update whose JSON does not parse is dropped, and a
    target that sends nothing but such updates for as long as a silent one would be given
    fails with kind ``garbage``.
    """
    profile = profile_for(switch.vendor)
    decoder = CounterDecoder(switch.name)
    patience = switch.gnmi.timeout_s
    async with GnmiClient(switch) as client, aclosing(client.stream(
            counter_paths(profile, ports), interval_s, profile.counter_target)) as samples:
        deadline = time.monotonic() + patience
        async for notifications in samples:
            dropped = decoder.dropped
            try:
                readings = decoder.decode(notifications, time.time())
            except DecodeError as exc:
                _log.warning("%s: skipped a sample: %s", client.where, exc)
                continue
            finally:
                del notifications  # nor held until the next one
            if decoder.dropped > dropped:
                _log.debug("%s: dropped %d updates whose JSON did not parse", client.where,
                           decoder.dropped - dropped)
            if readings:
                deadline = time.monotonic() + interval_s + patience
                yield readings
            elif decoder.dropped and time.monotonic() >= deadline:
                raise GnmiError(f"{client.where}: Subscribe: {decoder.dropped} updates "
                                "could not be parsed", "garbage")

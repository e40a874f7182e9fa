"""The running inlet: the switches' socket, the Rust forwarding thread, the table it
routes by and the shards' addresses, both kept current by :meth:`Inlet.refresh`.

The switches are those ``fabcorr run`` admits
(:func:`~correlator.sflow.admission.switch_addresses`): the configured ones and those of
the topology snapshot and fact files; the files are read
again when they change. Switches only a shard's LLDP crawl finds are not known here: give
the inlet the snapshot the shards save (``topology.save``) or list them.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import struct
from collections.abc import Callable, Sequence
from typing import Any

from correlator import _wire
from correlator.inlet.routes import routes
from correlator.inlet.targets import Resolve, resolve_targets, system_resolve
from correlator.service.config import ServiceConfig
from correlator.sflow.admission import switch_addresses
from inventory.factfile import read_facts
from inventory.facts import FactSet
from topology.snapshot import load_snapshot_switches

_WAIT = struct.pack("@ll", 0, 20_000)  # struct timeval: the forwarding thread's longest wait
_log = logging.getLogger(__name__)

Switches = Callable[[], list[tuple[str, tuple[str, str]]]]
"""The known switches now: name and addresses, the agent address first."""


def configured_switches(config: ServiceConfig) -> tuple[Switches, Callable[[], object]]:
    """The switches of ``config`` (listed, snapshot, fact files), and a stamp of the files
    they come from that changes when one does."""
    files = [*([config.topology.snapshot] if config.topology.snapshot else []),
             *config.topology.facts]

    def switches() -> list[tuple[str, tuple[str, str]]]:
        facts = load_snapshot_switches(config.topology.snapshot) \
            if config.topology.snapshot else FactSet()
        if config.topology.facts:
            facts = facts.merge(read_facts(config.topology.facts))
        return switch_addresses(facts.switches, config.switches)

    def stamp() -> object:
        return tuple(os.stat(path).st_mtime_ns for path in files)

    return switches, stamp


class Inlet:
    """Forwards what arrives on ``sock`` to ``len(targets)`` shards, shard ``i`` at
    ``targets[i]`` (host, port), as routed by ``switches()``; ``resolve`` finds addresses."""

    def __init__(self, sock: socket.socket, targets: Sequence[tuple[str, int]],
                 switches: Switches, stamp: Callable[[], object] = lambda: None,
                 resolve: Resolve = system_resolve, batch: int = 64) -> None:
        self.sock, self.targets = sock, list(targets)
        self._switches, self._stamp, self._resolve = switches, stamp, resolve
        self._loaded: object = object()  # the stamp of the switches routed by
        self.switches = 0
        self.addresses = [""] * len(self.targets)  # as last resolved ("": not resolved)
        self.serving = False  # routing yet: what /readyz answers
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _WAIT)
        self._core = _wire.Inlet(sock.fileno(), batch)

    def refresh(self) -> None:
        """Read the switches again if their files changed, resolve the shards again, and
        hand both to the forwarding thread (one caller at a time)."""
        stamp = self._stamp()
        if stamp != self._loaded:
            table = routes(self._switches(), len(self.targets))
            self._core.route(table)
            self._loaded, self.switches = stamp, len(table)
            _log.info("routing %d switch agents to %d shards", len(table), len(self.targets))
        found = resolve_targets(self.targets, self._resolve)
        addresses = ["" if f is None else str(ipaddress.ip_address(f[0])) for f in found]
        if addresses != self.addresses:
            _log.info("shards at %s", ", ".join(
                f"{i}={a or 'unresolved'}" for i, a in enumerate(addresses)))
        self._core.shards(found)
        self.addresses = addresses
        self.serving = True

    def counts(self) -> dict[str, Any]:
        """Since the start: ``forwarded`` and ``samples`` per shard, ``dropped`` per shard
        (per cause, in :data:`correlator._wire.DROPS` order), ``unrouted`` per cause."""
        return self._core.counts()

    def close(self) -> None:
        """Stop forwarding (the socket stays the caller's)."""
        self._core.stop()

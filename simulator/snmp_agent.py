"""An emulated switch's SNMP v2c agent on a loopback address, serving simulator.snmp_mib.

Built on pysnmp's agent side: an SNMP engine with a UDP transport and a community, and
its GET, GETNEXT and GETBULK command responders reading a MIB instrumentation of our own:
a snapshot of the switch's objects taken once per request, with the counters of that
moment. The engine runs on an event loop of its own in a thread; :meth:`SnmpAgent.stop`
closes the socket, so a switch taken down stops answering.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from bisect import bisect_right
from collections.abc import Iterable
from typing import Any, Self

from pysnmp.carrier.asyncio.dgram import udp
from pysnmp.carrier.error import CarrierError
from pysnmp.entity import config, engine
from pysnmp.entity.rfc3413 import cmdrsp, context
from pysnmp.proto.rfc1902 import ObjectName
from pysnmp.proto.rfc1905 import EndOfMibView, NoSuchInstance, NoSuchObject
from pysnmp.smi.instrum import AbstractMibInstrumController

from inventory.facts import InterfaceFact, LldpNeighborFact, SwitchFact
from simulator.emulated_switch import EmulatedSwitch
from simulator.gnmi_target import PROFILES, CounterSource, steady_counters
from simulator.snmp_mib import Objects, Oid, objects, ports

_DAY_S = 86_400.0
_REUSE_S = 1.0  # how long unchanged readings may keep a snapshot (and its sysUpTime)
_REQUEST = "rfc3412.receiveMessage:request"


class _Snapshot:
    """The served objects at one moment, in OID order for GETNEXT."""

    def __init__(self, served: Objects) -> None:
        self.served = served
        flat = sorted(((column + index, value) for column, rows in served.items()
                       for index, value in rows.items()), key=lambda item: item[0])
        self.names = [name for name, _ in flat]
        self.values = [value for _, value in flat]

    def get(self, name: Oid) -> object:
        for column, rows in self.served.items():
            if name[:len(column)] == column:
                return rows.get(name[len(column):], NoSuchInstance())
        return NoSuchObject()

    def next(self, name: Oid) -> tuple[Oid, object]:
        i = bisect_right(self.names, name)
        return (self.names[i], self.values[i]) if i < len(self.names) else (name, EndOfMibView())


class _Instrumentation(AbstractMibInstrumController):
    """What pysnmp's command responders read: the agent's snapshot of this request."""

    def __init__(self, agent: SnmpAgent) -> None:
        self.agent = agent

    def read_variables(self, *var_binds: tuple[Any, Any], **_: Any) -> list[tuple[Any, Any]]:
        snapshot = self.agent.snapshot()
        return [(name, snapshot.get(tuple(name))) for name, _ in var_binds]

    def read_next_variables(self, *var_binds: tuple[Any, Any], **_: Any
                            ) -> list[tuple[Any, Any]]:
        snapshot = self.agent.snapshot()
        found = (snapshot.next(tuple(name)) for name, _ in var_binds)
        return [(ObjectName(name), value) for name, value in found]


class SnmpAgent(EmulatedSwitch):
    """One emulated switch's SNMP v2c agent; a context manager.

    ``profile`` picks the vendor PFC (and ECN) table; ``up_since`` (Unix seconds, default
    a day before the agent is made) sets sysUpTime.
    """

    def __init__(self, switch: SwitchFact, interfaces: Iterable[InterfaceFact],
                 neighbors: Iterable[LldpNeighborFact] = (), *, profile: str = "openconfig",
                 counters: CounterSource | None = None, host: str = "127.0.0.1",
                 port: int = 0, community: str = "public",
                 up_since: float | None = None) -> None:
        if profile not in PROFILES:
            raise ValueError(f"profile {profile!r} is not one of {', '.join(PROFILES)}")
        self.switch, self.profile, self.community = switch, profile, community
        self.ports = ports(i for i in interfaces if i.switch == switch.name)
        self.neighbors = [n for n in neighbors if n.local_device == switch.name]
        self.counters = counters or steady_counters(time.time())
        self.up_since = time.time() - _DAY_S if up_since is None else up_since
        self._host, self._port = host, port
        self._snapshot: _Snapshot | None = None
        self._last: tuple[float, list[dict[str, int]], _Snapshot] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None


    def snapshot(self) -> _Snapshot:
        """The objects as of the request being answered (computed on its first read). The
        last request's objects serve again while the counter source hands out the very
        same readings (an emulated fabric between two ticks) and they are younger than
        :data:`_REUSE_S`: a walk's many requests then cost one snapshot."""
        if self._snapshot is None:
            now = time.time()
            readings = [self.counters(p.fact.name, now) for p in self.ports]
            last = self._last
            if last is not None and now - last[0] < _REUSE_S and all(
                    a is b for a, b in zip(readings, last[1], strict=True)):
                self._snapshot = last[2]
            else:
                self._snapshot = _Snapshot(objects(
                    self.switch, self.ports, self.neighbors, self.profile,
                    {p.fact.name: r for p, r in zip(self.ports, readings, strict=True)},
                    int((now - self.up_since) * 100)))
                self._last = (now, readings, self._snapshot)
        return self._snapshot

    def start(self) -> Self:
        """Bind ``host:port`` (port 0: a free one) and answer from a thread of its own."""
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind((self._host, self._port))
        except OSError:
            sock.close()
            raise
        self._port = sock.getsockname()[1]
        loop = self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(loop, sock, ready),
                                        name=f"snmp-agent-{self.switch.name}", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop answering: the socket is closed and the thread ends."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self, loop: asyncio.AbstractEventLoop, sock: socket.socket,
               ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.set_exception_handler(_quiet_when_stopping)
        snmp = engine.SnmpEngine()
        config.add_transport(snmp, udp.DOMAIN_NAME,
                             udp.UdpAsyncioTransport(loop=loop).open_server_mode(sock=sock))
        config.add_v1_system(snmp, "emulated", self.community)
        served = context.SnmpContext(snmp)
        served.unregister_context_name(b"")
        served.register_context_name(b"", _Instrumentation(self))
        for responder in (cmdrsp.GetCommandResponder, cmdrsp.NextCommandResponder,
                          cmdrsp.BulkCommandResponder):
            responder(snmp, served)
        snmp.observer.register_observer(self._new_request, _REQUEST)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            snmp.close_dispatcher()  # closes the transport and its socket
            loop.run_until_complete(asyncio.sleep(0))

    def _new_request(self, *_: object) -> None:
        self._snapshot = None


def _quiet_when_stopping(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A request still queued when the agent stops reaches a transport pysnmp has already
    let go of: not worth a traceback. Anything else is reported as asyncio would."""
    if isinstance(context.get("exception"), CarrierError):
        return
    loop.default_exception_handler(context)

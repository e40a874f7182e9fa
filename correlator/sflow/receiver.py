"""Receiving sFlow: UDP sockets, the Rust receive path, several worker processes.

One :class:`Worker` admits, decodes, accounts and accumulates datagrams with the Rust core
(:class:`correlator._wire.Collector`): only known agents, from their own addresses or a
declared relay (:class:`~correlator.sflow.admission.Admission`); loss per (agent,
sub-agent) as :mod:`~correlator.sflow.accounting` describes it; sums per interval as
:mod:`~correlator.attribution.accumulate` keys them; what the kernel dropped on its
socket (:func:`kernel_drops`). A datagram belongs to the wall-clock interval it *arrived*
in, by the kernel's receive timestamp (``SO_TIMESTAMPNS``), not to the one in progress
when the process gets round to reading it. The worker closes an interval when a datagram
of the next one arrives, or when asked to (:meth:`Worker.close`).

Fed a socket (:meth:`Worker.receive`), the worker reads it in a thread of its own that
never takes the GIL (``recvmmsg`` batches): receiving goes on while Python attributes an
interval. Python takes closed intervals, as compact tables, never one object per sample;
every close first reads what is queued. In the asyncio service a :class:`Receiver` holds
the socket and its worker (:func:`serve`); to use more cores, :class:`ReceiverPool` starts
processes that each bind the same port with ``SO_REUSEPORT`` (the kernel spreads agents
over them) and hand over each interval to the parent, which merges them.

A stop loses nothing: the socket first refuses new datagrams (:func:`refuse`: senders get
"port unreachable", as from a closed port), then every datagram already queued is read
and counted in the last interval.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import queue
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from correlator import _wire
from correlator.attribution.accumulate import Interval, merge
from correlator.sflow import native
from correlator.sflow.accounting import (
    MAX_AGENTS,
    MAX_FLOWS,
    MAX_SOURCES,
    Totals,
    name_interleaved,
)
from correlator.sflow.admission import Admission, parse_relays
from inventory.bulk import give_back
from inventory.errors import ConfigError

_CHECK_S = 0.1  # how often a worker process reads its control queue
_WAIT = struct.pack("@ll", 0, 20_000)  # struct timeval: the receive thread's longest wait
_log = logging.getLogger(__name__)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)  # Linux asm-generic
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux asm-generic; Python lacks it
"""Receive timestamps in nanoseconds; its control messages carry the same number."""


@dataclass(frozen=True, slots=True)
class ReceiverConfig:
    """Where and how sFlow is received. ``host`` ``::`` takes IPv4 and IPv6 alike.
    ``max_agents`` bounds the (agent, sub-agent) pairs followed, ``max_sources`` the data
    sources (:class:`~correlator.sflow.accounting.LossTracker`); ``relays`` are the
    addresses or CIDR ranges that may send for any known agent."""

    host: str = "0.0.0.0"
    port: int = 6343
    workers: int = 1
    rcvbuf_bytes: int = 8 << 20
    interval_s: float = 10.0
    max_agents: int = MAX_AGENTS
    max_sources: int = MAX_SOURCES
    relays: tuple[str, ...] = ()

    def validate(self) -> ReceiverConfig:
        """Return self, or raise ConfigError naming the bad field."""
        if not 0 <= self.port <= 65535:
            raise ConfigError("sflow", "port", f"must be 0-65535, not {self.port!r}")
        if self.workers < 1:
            raise ConfigError("sflow", "workers", f"must be >= 1, not {self.workers!r}")
        if self.rcvbuf_bytes < 65536:
            raise ConfigError("sflow", "rcvbuf_bytes", "must be >= 65536")
        if not self.interval_s > 0:
            raise ConfigError("sflow", "interval_s", f"must be > 0, not {self.interval_s!r}")
        for key in ("max_agents", "max_sources"):
            if getattr(self, key) < 1:
                raise ConfigError("sflow", key, f"must be >= 1, not {getattr(self, key)!r}")
        try:
            parse_relays(self.relays)
        except ValueError as exc:
            raise ConfigError("sflow", "relays", str(exc)) from None
        return self


def open_socket(config: ReceiverConfig, reuse_port: bool = False) -> socket.socket:
    """A bound UDP socket with the configured receive buffer (unless the process may
    exceed ``net.core.rmem_max``, the kernel caps it there; :func:`receive_buffer` tells
    what was granted)."""
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:  # past net.core.rmem_max when allowed (CAP_NET_ADMIN), as configured
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, config.rcvbuf_bytes)
        except PermissionError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, config.rcvbuf_bytes)
        sock.bind((config.host, config.port))
    except OSError:
        sock.close()
        raise
    return sock


def refuse(sock: socket.socket) -> None:
    """Take no more datagrams on ``sock``; those already queued stay readable.

    Connecting a UDP socket to itself makes the kernel match it for its own datagrams
    only: every other sender's datagram finds no socket and is answered "port
    unreachable", as if the socket were closed, while the receive queue is kept.
    """
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = "::1" if sock.family == socket.AF_INET6 else "127.0.0.1"
    sock.connect((host, port))


def receive_buffer(sock: socket.socket) -> int:
    """The receive buffer the kernel granted (Linux reports twice the usable size)."""
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)


def kernel_drops(sock: socket.socket) -> int:
    """Datagrams the kernel dropped for ``sock``, its receive buffer being full, since it
    was opened: the ``drops`` column of the socket's line in ``/proc/net/udp`` (or
    ``udp6``), found by its inode (Linux)."""
    inode = str(os.fstat(sock.fileno()).st_ino)
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table, encoding="ascii") as lines:
            for line in lines:
                fields = line.split()  # sl local rem st tx:rx tr:when retr uid timeout
                if fields[9] == inode:  # inode ref pointer drops
                    return int(fields[12])
    raise OSError(f"UDP socket inode {inode} is in neither /proc/net/udp nor udp6")


def interval_end(at: float, interval_s: float) -> float:
    """The wall-clock boundary closing the interval that holds ``at``.

    >>> interval_end(1005.0, 10.0), interval_end(1010.0, 10.0)
    (1010.0, 1020.0)
    """
    return (math.floor(at / interval_s) + 1) * interval_s


class Worker:
    """Admits, decodes, accounts and accumulates datagrams into the interval they arrived
    in; the intervals it closed wait in :attr:`closed` until taken (:meth:`close`).

    Datagrams come from :meth:`handle` (a capture, a test) or, after :meth:`receive`, from
    a socket read in the worker's own thread until :meth:`stop`.
    """

    __slots__ = ("_closed", "_core", "interval_s")

    def __init__(self, start: float, interval_s: float, *, admission: Admission | None = None,
                 max_agents: int = MAX_AGENTS, max_sources: int = MAX_SOURCES,
                 max_flows: int = MAX_FLOWS) -> None:
        self._core = _wire.Collector(start, interval_s, max_agents, max_sources, max_flows)
        self.interval_s = interval_s
        self._closed: list[tuple[Interval, Totals]] = []
        self.admit(admission)

    @property
    def end(self) -> float:
        """The end of the interval in progress."""
        return self._core.end

    @property
    def closed(self) -> list[tuple[Interval, Totals]]:
        """The intervals closed and not taken yet, oldest first."""
        self._closed += map(_closed, self._core.close(-math.inf))
        return self._closed

    def watch(self, sock: socket.socket) -> None:
        """Count, in each interval, the datagrams the kernel dropped on ``sock`` from now."""
        self._core.watch(os.fstat(sock.fileno()).st_ino)

    def admit(self, admission: Admission | None) -> None:
        """Believe the agents ``admission`` admits from now (None: every agent)."""
        if admission is None:
            self._core.admit(None)
        else:
            self._core.admit(*admission.rules())

    def handle(self, data: bytes, at: float, source: str = "") -> None:
        """One datagram that arrived at ``at`` (arrival order: ``at`` never goes back) from
        UDP ``source``."""
        self._core.handle(data, at, source)

    def handle_many(self, datagrams: list[tuple[float, bytes]]) -> None:
        """:meth:`handle` each ``(at, data)`` of a capture (no UDP source), in one call."""
        self._core.handle_many(datagrams)

    def handle_capture(self, capture: _wire.Capture, until: float) -> int:
        """:meth:`handle` the datagrams of ``capture`` that arrived before ``until``, read
        and handled in the core (no Python object per datagram); how many."""
        return self._core.handle_capture(capture, until)

    def cut(self, at: float) -> None:
        """Start a new segment at ``at``: an address changed owner."""
        self._core.cut(at)

    def close(self, now: float) -> list[tuple[Interval, Totals]]:
        """Every interval that ended by ``now`` and was not taken yet, oldest first (when
        receiving: once every datagram queued before ``now`` has been read)."""
        closed, self._closed = [*self._closed, *map(_closed, self._core.close(now))], []
        return closed

    def take(self, end: float) -> tuple[Interval, Totals]:
        """The interval in progress, cut at ``end`` (at shutdown), and what was counted
        in it; both start over."""
        return _closed(self._core.take(end))

    def peek(self) -> tuple[Totals, dict[str, int]]:
        """What was counted since the last take (datagrams, samples, rejects) without
        taking it, and the entries of the bounded tables (sequences, sources, formats)."""
        seen = self._core.peek()
        return (Totals(datagrams=seen["datagrams"], samples=Counter(seen["samples"]),
                       rejects=Counter(seen["rejects"])), seen["tables"])

    def receive(self, sock: socket.socket) -> None:
        """Read ``sock`` from now on, in a thread of the worker's own, until :meth:`stop`;
        the socket must stay open until then."""
        sock.setblocking(True)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _WAIT)
        self._core.receive(sock.fileno())

    def stop(self) -> None:
        """Stop reading the socket (what was received stays, to be taken)."""
        self._core.stop()


def _closed(raw: tuple[_wire.IntervalTuple, dict[str, Any]]) -> tuple[Interval, Totals]:
    """An interval and its totals from the Rust collector."""
    raw_interval, counts = raw
    interval, overflow = native.interval(raw_interval)
    give_back()  # the flow tables the core freed as it made their rows
    evictions = Counter(counts["evictions"])
    evictions.update({table: n for table, n in overflow.items() if n})
    for agent, sub_agent in counts["named"]:
        name_interleaved(agent, sub_agent)
    return interval, Totals(
        counts["datagrams"], counts["bytes"], Counter(counts["samples"]),
        Counter(counts["rejects"]), counts["lost_datagrams"], counts["agent_restarts"],
        counts["agent_drops"], counts["kernel_drops"], counts["interleaved"], evictions)


class Receiver:
    """A socket and the worker that reads it in its own thread (:meth:`Worker.receive`)."""

    def __init__(self, sock: socket.socket, worker: Worker) -> None:
        self.socket, self.worker = sock, worker
        worker.receive(sock)

    def refuse(self) -> None:
        """Take no more datagrams (:func:`refuse`); those queued are still read."""
        refuse(self.socket)

    def close(self) -> None:
        if self.socket.fileno() >= 0:
            self.worker.stop()  # before the socket goes: the thread reads its descriptor
            self.socket.close()


async def serve(config: ReceiverConfig, worker: Worker) -> Receiver:
    """Feed ``worker`` from a socket in its own thread; close the receiver to stop."""
    sock = open_socket(config.validate())
    worker.watch(sock)
    return Receiver(sock, worker)


class ReceiverPool:
    """``workers`` processes on one port (``SO_REUSEPORT``); use as a context manager.

    :meth:`wait` gathers what the workers hand over, and :meth:`take` returns each
    wall-clock interval that every worker has handed over, merged, with their counts;
    :meth:`cut` starts a new segment in every worker; :meth:`finish` stops them and
    returns the rest, the interval in progress last. An interval gathered by a
    :meth:`wait` whose caller gave up is kept for the next :meth:`take`.
    ``port`` must be a fixed port: with port 0 each worker would get its own.
    ``admission`` (and :meth:`admit`) as :meth:`Worker.admit`.
    """

    def __init__(self, config: ReceiverConfig, admission: Admission | None = None) -> None:
        self.config = config.validate()
        context = multiprocessing.get_context("spawn")
        self._results: multiprocessing.Queue = context.Queue()
        self._controls = [context.Queue() for _ in range(config.workers)]
        self._ready = context.Queue()
        self._processes = [
            context.Process(target=_work,
                            args=(config, admission, self._results, control, self._ready),
                            name=f"fabcorr-sflow-{i}", daemon=True)
            for i, control in enumerate(self._controls)]
        self._pending: dict[float, list[tuple[Interval, Totals]]] = {}
        self._complete: list[tuple[Interval, Totals]] = []
        self._done = 0  # workers that have handed over their last interval
        self._lock = threading.Lock()

    def __enter__(self) -> ReceiverPool:
        for process in self._processes:
            process.start()
        for _ in self._processes:
            failure = self._ready.get(timeout=30)
            if failure:
                self.close()
                raise OSError(failure)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the workers at once (what they hold is lost: :meth:`finish` keeps it)."""
        for control in self._controls:
            with contextlib.suppress(Exception):
                control.put(("exit", 0.0))
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()

    def cut(self, at: float) -> None:
        for control in self._controls:
            control.put(("cut", at))

    def wait(self, timeout_s: float) -> bool:
        """Gather hand-overs for up to ``timeout_s``; whether an interval is complete."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while not self._complete:
                try:
                    item = self._results.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    return False
                self._gather(*item)
            return True

    def take(self) -> list[tuple[Interval, Totals]]:
        """The intervals every worker has handed over, oldest first."""
        with self._lock:
            complete, self._complete = self._complete, []
            return complete

    def admit(self, admission: Admission | None) -> None:
        for control in self._controls:
            control.put(("admit", admission))

    def next_interval(self, timeout_s: float | None = None) -> tuple[Interval, Totals]:
        """Block until an interval is complete (TimeoutError after ``timeout_s``)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self.wait(1.0 if deadline is None else deadline - time.monotonic()):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("no interval from the sFlow workers in time")
        with self._lock:
            return self._complete.pop(0)

    def finish(self, timeout_s: float = 3.0) -> list[tuple[Interval, Totals]]:
        """Stop the workers without losing a datagram: every one refuses new datagrams
        and reads those queued; then all close at the same moment, the latest of their
        refusals, and hand over the rest. What was not taken yet, oldest first."""
        deadline = time.monotonic() + timeout_s
        for control in self._controls:
            control.put(("refuse", 0.0))
        refused = [0.0]
        with contextlib.suppress(queue.Empty):
            for _ in self._processes:
                refused.append(self._ready.get(timeout=max(0.0, deadline - time.monotonic())))
        for control in self._controls:
            control.put(("stop", max(refused)))
        with self._lock:
            with contextlib.suppress(queue.Empty):
                while self._done < len(self._processes):
                    self._gather(*self._results.get(
                        timeout=max(0.0, deadline - time.monotonic())))
            complete, self._complete = self._complete, []
        self.close()
        return complete

    def _gather(self, end: float | None, interval: Interval | None,
                totals: Totals | None) -> None:
        """One worker's hand-over (``None``: it has ended)."""
        if end is None or interval is None or totals is None:
            self._done += 1
            return
        parts = self._pending.setdefault(end, [])
        parts.append((interval, totals))
        if len(parts) == len(self._processes):
            del self._pending[end]
            merged = Totals()
            for _, part in parts:
                merged.add(part)
            self._complete.append((merge([i for i, _ in parts]), merged))


def _work(config: ReceiverConfig, admission: Admission | None,
          results: multiprocessing.Queue, control: multiprocessing.Queue,
          ready: multiprocessing.Queue) -> None:
    """A worker process: receive, decode, accumulate (in the worker's thread); hand over
    each interval."""
    try:
        sock = open_socket(config, reuse_port=True)
    except OSError as exc:
        ready.put(f"sFlow worker cannot bind {config.host}:{config.port}: {exc}")
        return
    worker = Worker(time.time(), config.interval_s, admission=admission,
                    max_agents=config.max_agents, max_sources=config.max_sources)
    worker.watch(sock)
    worker.receive(sock)
    ready.put("")

    def hand_over(closed: list[tuple[Interval, Totals]]) -> None:
        for interval, totals in closed:
            results.put((interval.end, interval, totals))

    try:
        while True:
            try:
                command, argument = control.get(timeout=_CHECK_S)
            except queue.Empty:
                hand_over(worker.close(time.time()))
                continue
            if command == "exit":
                return
            if command == "refuse":
                refuse(sock)
                hand_over(worker.close(time.time()))  # reads every datagram queued
                ready.put(time.time())
            elif command == "stop":
                hand_over([*worker.close(argument), worker.take(argument)])
                results.put((None, None, None))
                return
            elif command == "admit":
                worker.admit(argument)
            else:
                worker.cut(argument)
    finally:
        worker.stop()
        sock.close()

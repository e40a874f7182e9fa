"""Receiving sFlow: UDP sockets, a decode-and-accumulate loop, several worker processes.

One :class:`Worker` decodes datagrams into an :class:`~correlator.attribution.accumulate.
Accumulator` and counts everything (:mod:`~correlator.sflow.accounting`), with what the
kernel dropped on its socket (:func:`kernel_drops`). A datagram
belongs to the wall-clock interval it *arrived* in, by the kernel's receive timestamp
(``SO_TIMESTAMPNS``), not to the one in progress when the process gets round to reading
it: a busy collector reads late, and what queued before a boundary still counts before
it. With an :class:`~correlator.sflow.admission.Admission` only known agents, from their
own addresses or a declared relay, are believed. The worker closes an interval when a
datagram of the next one arrives, or when asked to (:meth:`Worker.close`). In the asyncio
service a :class:`Receiver` reads every queued datagram whenever the socket is readable
(:func:`serve`); to use more cores,
:class:`ReceiverPool` starts processes that each bind the same port with ``SO_REUSEPORT``
(the kernel spreads agents over them) and hand over each interval to the parent, which
merges them.

A stop loses nothing: the socket first refuses new datagrams (:func:`refuse`: senders get
"port unreachable", as from a closed port), then every datagram already queued is read
and counted in the last interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import multiprocessing
import os
import queue
import socket
import struct
import threading
import time
from dataclasses import dataclass

from correlator.attribution.accumulate import Accumulator, Interval, merge
from correlator.sflow.accounting import MAX_AGENTS, MAX_SOURCES, LossTracker, Totals
from correlator.sflow.admission import Admission, parse_relays
from correlator.sflow.decode import Decoder
from inventory.errors import ConfigError

MAX_DATAGRAM = 65535
_CHECK_S = 0.1  # how often a worker process reads its control queue
_STAMP = struct.Struct("@qq")  # struct timespec: seconds, nanoseconds
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
    """A bound UDP socket with the configured receive buffer (the kernel may cap it at
    ``net.core.rmem_max``; :func:`receive_buffer` tells what was granted)."""
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
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


def arrival(ancillary: list[tuple[int, int, bytes]], default: float) -> float:
    """The kernel's receive time of a datagram from ``recvmsg``'s ancillary data
    (``default`` when the kernel gave none).

    >>> arrival([(socket.SOL_SOCKET, SO_TIMESTAMPNS, _STAMP.pack(1700000000, 500000000))],
    ...         0.0)
    1700000000.5
    """
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = _STAMP.unpack_from(data)
            return seconds + nanoseconds / 1e9
    return default


_ANCILLARY = socket.CMSG_SPACE(_STAMP.size)


class Worker:
    """Decodes datagrams into the interval they arrived in, counting everything; the
    intervals it closed wait in :attr:`closed` until taken (:meth:`close`)."""

    __slots__ = ("_dropped", "_socket", "accumulator", "closed", "decoder", "end", "interval_s",
                 "loss")

    def __init__(self, start: float, interval_s: float, *, admission: Admission | None = None,
                 max_agents: int = MAX_AGENTS, max_sources: int = MAX_SOURCES) -> None:
        self.decoder = Decoder(admission)
        self.accumulator = Accumulator(start)
        self.loss = LossTracker(max_agents, max_sources)
        self.interval_s = interval_s
        self.end = interval_end(start, interval_s)
        self.closed: list[tuple[Interval, Totals]] = []
        self._socket: socket.socket | None = None
        self._dropped = 0

    def watch(self, sock: socket.socket) -> None:
        """Count, in each interval, the datagrams the kernel dropped on ``sock`` from now."""
        self._socket, self._dropped = sock, kernel_drops(sock)

    def admit(self, admission: Admission | None) -> None:
        """Believe the agents ``admission`` admits from now (None: every agent)."""
        self.decoder.admission = admission

    def handle(self, data: bytes, at: float, source: str = "") -> None:
        """One datagram that arrived at ``at`` (arrival order: ``at`` never goes back) from
        UDP ``source``."""
        if at >= self.end:
            self._close_until(at)
        datagram = self.decoder.decode(data, source)
        if datagram is not None:
            self.loss.observe(datagram, len(data))
            self.accumulator.add(datagram, at)

    def close(self, now: float) -> list[tuple[Interval, Totals]]:
        """Every interval that ended by ``now`` and was not taken yet, oldest first."""
        self._close_until(now)
        closed, self.closed = self.closed, []
        return closed

    def take(self, end: float) -> tuple[Interval, Totals]:
        """The interval in progress, cut at ``end`` (at shutdown), and what was counted
        in it; both start over."""
        totals, decoder = self.loss.take(), self.decoder
        totals.samples.update(decoder.samples)
        totals.rejects.update(decoder.rejects)
        decoder.samples.clear()
        decoder.rejects.clear()
        evicted = decoder.skipped.take_evictions()
        if evicted:
            totals.evictions["formats"] += evicted
        if self._socket is not None and self._socket.fileno() >= 0:
            dropped, self._dropped = self._dropped, kernel_drops(self._socket)
            totals.kernel_drops = self._dropped - dropped
        return self.accumulator.take(end), totals

    def _close_until(self, at: float) -> None:
        while at >= self.end:
            self.closed.append(self.take(self.end))
            self.end = interval_end(self.end, self.interval_s)


class Receiver:
    """Reads a socket on the running loop: every queued datagram, with its arrival time,
    whenever it is readable; :meth:`drain` reads what is queued now."""

    def __init__(self, sock: socket.socket, worker: Worker) -> None:
        self.socket, self.worker = sock, worker
        sock.setblocking(False)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(sock.fileno(), self.drain)

    def drain(self) -> None:
        _drain(self.socket, self.worker)

    def refuse(self) -> None:
        """Take no more datagrams (:func:`refuse`); :meth:`drain` still reads the queued."""
        self._loop.remove_reader(self.socket.fileno())
        refuse(self.socket)

    def close(self) -> None:
        if self.socket.fileno() >= 0:
            self._loop.remove_reader(self.socket.fileno())
            self.socket.close()


def _drain(sock: socket.socket, worker: Worker) -> None:
    """Hand ``worker`` every datagram queued on the non-blocking ``sock``."""
    receive, handle = sock.recvmsg, worker.handle
    while True:
        try:
            data, ancillary, _, source = receive(MAX_DATAGRAM, _ANCILLARY)
        except (BlockingIOError, InterruptedError):
            return
        handle(data, arrival(ancillary, time.time()), source[0])


async def serve(config: ReceiverConfig, worker: Worker) -> Receiver:
    """Feed ``worker`` from a socket on the running loop; close the receiver to stop."""
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
    """A worker process: receive, decode, accumulate; hand over each interval."""
    try:
        sock = open_socket(config, reuse_port=True)
    except OSError as exc:
        ready.put(f"sFlow worker cannot bind {config.host}:{config.port}: {exc}")
        return
    sock.settimeout(_CHECK_S)
    now = time.time()
    worker = Worker(now, config.interval_s, admission=admission,
                    max_agents=config.max_agents, max_sources=config.max_sources)
    worker.watch(sock)
    ready.put("")
    receive, handle, check = sock.recvmsg, worker.handle, now + _CHECK_S
    while True:
        try:
            data, ancillary, _, source = receive(MAX_DATAGRAM, _ANCILLARY)
        except TimeoutError:
            data, ancillary = b"", []
        now = time.time()
        if data:  # more may be queued that arrived before a boundary: close by this one
            now = arrival(ancillary, now)
            handle(data, now, source[0])
        for interval, totals in worker.close(now):
            results.put((interval.end, interval, totals))
        if now >= check:
            check = now + _CHECK_S
            with contextlib.suppress(queue.Empty):
                while True:
                    command, argument = control.get_nowait()
                    if command == "exit":
                        sock.close()
                        return
                    if command == "refuse":
                        refuse(sock)
                        sock.setblocking(False)
                        _drain(sock, worker)
                        sock.settimeout(_CHECK_S)
                        ready.put(time.time())
                    elif command == "stop":
                        for interval, totals in [*worker.close(argument),
                                                 worker.take(argument)]:
                            results.put((interval.end, interval, totals))
                        results.put((None, None, None))
                        sock.close()
                        return
                    elif command == "admit":
                        worker.admit(argument)
                    else:
                        worker.accumulator.cut(argument)

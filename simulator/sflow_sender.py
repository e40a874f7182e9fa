"""Datagrams sent to a collector at the moments a schedule gives, from a process of their
own: a sender sharing an interpreter with busy emulated switches waits for the GIL and
sends late, which moves datagrams into the next interval. Each datagram leaves from its
agent's own address (the emulated switches' are on loopback), as a switch sends it: a
collector or an inlet checking the source against the agent sees what a fabric shows."""

from __future__ import annotations

import contextlib
import multiprocessing
import socket
import time
from collections.abc import Callable, Sequence

from simulator.sflow_wire import agent_of

Schedule = Sequence[tuple[float, bytes]]
"""(when to send, Unix seconds; payload), in time order."""
AHEAD_S = 0.002
"""A datagram due sooner than this goes out without a sleep."""


def pace(schedule: Schedule, send: Callable[[bytes], object],
         clock: Callable[[], float] = time.time,
         sleep: Callable[[float], None] = time.sleep) -> int:
    """Send every datagram of ``schedule`` when it is due (late ones at once); returns how
    many were sent late by more than a second."""
    late = 0
    for at, payload in schedule:
        left = at - clock()
        if left > AHEAD_S:
            sleep(left)
        elif left < -1.0:
            late += 1
        send(payload)
    return late


def _send(schedule: Schedule, collector: tuple[str, int]) -> None:
    family = socket.AF_INET6 if ":" in collector[0] else socket.AF_INET
    with contextlib.ExitStack() as sockets:
        agents: dict[str, socket.socket] = {}

        def send(payload: bytes) -> None:
            agent = agent_of(payload)
            out = agents.get(agent)
            if out is None:
                out = agents[agent] = sockets.enter_context(
                    socket.socket(family, socket.SOCK_DGRAM))
                out.bind((agent, 0))
            out.sendto(payload, collector)

        late = pace(schedule, send)
    if late:
        print(f"sflow sender: {late} datagrams sent more than 1 s late", flush=True)


def start_sender(schedule: Schedule, collector: tuple[str, int]) -> multiprocessing.Process:
    """A process that sends ``schedule`` to ``collector`` and exits (``spawn``ed: the
    caller's threads and sockets stay behind)."""
    process = multiprocessing.get_context("spawn").Process(
        target=_send, args=(list(schedule), collector), name="emulated-sflow", daemon=True)
    process.start()
    return process

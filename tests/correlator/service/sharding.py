"""What the shard tests share, whether the shards run as processes or containers: the
example's sFlow sent as each switch sends it, a burst an interval sent to the single
process and to ``fabcorr inlet``, the inlet's counts, and the attribution logs read back."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from inventory.factfile import read_facts
from simulator.sflow_run import capture
from simulator.spec import load_capture_spec
from tests.correlator.service import prometheus
from tests.correlator.service.running import EXAMPLE, fetch_url

SHARDS = 3
INTERVAL_S = 2.0
BURST_AT = 0.3  # seconds into an interval
ALONE, SHARDED = 'shard=""', 'shard!=""'  # the single process's series, the shards'

Burst = list[tuple[bytes, str, str]]
"""Datagrams with their switch and its agent address."""


class InletCounts:
    """What the ``fabcorr inlet`` serving ``url`` says it forwarded and dropped."""

    def __init__(self, url: str) -> None:
        self.url = url

    def counts(self, name: str) -> dict[tuple[str, str], float]:
        """The samples of metric ``name`` (the inlet's): (shard, reason) -> value."""
        text = fetch_url(f"{self.url}/metrics", timeout=30)[1].decode()
        return {(labels.get("shard", ""), labels.get("reason", "")): float(value)
                for labels, value in ((dict(re.findall(r'(\w+)="([^"]*)"', line)),
                                       line.rpartition(" ")[2])
                                      for line in text.splitlines()
                                      if line.startswith(name + "{"))}

    def handled(self) -> float:
        """Datagrams forwarded or dropped since the start: each one received, once."""
        return sum(self.counts("fabcorr_inlet_forwarded_datagrams_total").values()) + \
            sum(self.counts("fabcorr_inlet_dropped_datagrams_total").values())


class Switches:
    """The example's switches sending sFlow, every datagram to each of ``targets``, each
    switch from its own address (its agent's), or all from ``source`` when given."""

    def __init__(self, targets: list[tuple[str, int]], source: str | None = None) -> None:
        self.targets, self.source = targets, source
        self.sent = 0  # to each target
        self._sockets: dict[str, socket.socket] = {}

    def send(self, data: bytes, agent: str) -> None:
        address = self.source or agent
        out = self._sockets.get(address)
        if out is None:
            out = self._sockets[address] = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            out.bind((address, 0))
        for target in self.targets:
            out.sendto(data, target)
        self.sent += 1

    def close(self) -> None:
        for out in self._sockets.values():
            out.close()


def wait(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {timeout:g} s")
        time.sleep(0.1)


def burst() -> Burst:
    """One second of the example's sFlow (no counter samples), with a flow on every
    switch."""
    facts = read_facts([EXAMPLE / "facts.yaml"])
    spec = load_capture_spec(EXAMPLE / "flows.yaml")
    first = spec.flows[0]
    extra = [dataclasses.replace(first, switch=s.name, port="Ethernet1", out_port="",
                                 packets_per_s=500_000 * (n + 1))
             for n, s in enumerate(facts.switches) if s.name not in ("leaf01", "spine01")]
    switch_of = {s.mgmt_address: s.name for s in facts.switches}
    run = capture(facts, [*spec.flows, *extra], 1, spec.sampling_rate, time.time(),
                  spec.seed, counter_every_s=10**6)
    return [(data, switch_of[agent], agent) for _, data, agent in run.datagrams]


def send_burst(switches: Switches, datagrams: Burst, inlet: InletCounts
               ) -> tuple[float, float, float] | None:
    """Send ``datagrams`` at the next interval's BURST_AT (to the single process and the
    inlet): the start of the interval it went into wholly, the inlet having passed all of
    it on, and when it was sent (first datagram) and passed on (last), else None."""
    now = time.time()
    start = math.floor(now / INTERVAL_S) * INTERVAL_S
    time.sleep(max(0.0, start + BURST_AT - now) if now < start + BURST_AT
               else start + INTERVAL_S + BURST_AT - now)
    began = time.time()
    for data, _, agent in datagrams:
        switches.send(data, agent)
    wait(lambda: inlet.handled() >= switches.sent, 60, "the burst passed on by the inlet")
    ended = time.time()
    if math.floor(began / INTERVAL_S) == math.floor(ended / INTERVAL_S):
        return math.floor(began / INTERVAL_S) * INTERVAL_S, began, ended
    return None


class Bursts:
    """A burst every interval (:func:`send_burst`) from a thread while the test asks;
    ``sent`` holds (interval start, first, last datagram's time) of the clean ones."""

    def __init__(self, switches: Switches, inlet: InletCounts) -> None:
        self.sent: list[tuple[float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(switches, inlet), daemon=True)

    def _run(self, switches: Switches, inlet: InletCounts) -> None:
        datagrams = burst()
        while not self._stop.is_set():
            sent = send_burst(switches, datagrams, inlet)
            if sent is not None:
                self.sent.append(sent)

    def __enter__(self) -> Bursts:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def clean(self) -> set[float]:
        """The starts of the intervals a burst went into wholly."""
        return {start for start, _, _ in self.sent}

    def after(self, moment: float) -> int:
        """How many clean bursts began after ``moment``."""
        return sum(began > moment for _, began, _ in self.sent)

    def in_intervals_after(self, moment: float) -> int:
        """How many clean bursts went into intervals that began after ``moment``: all of
        such an interval is a process's that was up at ``moment`` (its first interval runs
        from its start to the next boundary, and is logged under its own start)."""
        return sum(start > moment for start, _, _ in self.sent)


def logged(path: Path) -> dict[float, dict]:
    """An attribution log's intervals by start (the last record of each)."""
    if not path.exists():
        return {}
    records = (json.loads(line) for line in path.read_text().splitlines() if line)
    return {r["attribution"]["start"]: r["attribution"] for r in records}


def by_direction(links: list[dict]) -> dict[tuple[str, str], dict]:
    return {(link["port"], link["direction"]): link for link in links}


def until_agreed(server: prometheus.Prometheus, switches: Switches, datagrams: Burst,
                 inlet: InletCounts, intervals: int) -> tuple[list[float], dict[str, float]]:
    """Send a burst an interval until ``intervals`` went in clean and Prometheus's sums
    by tenant agree over the shards and the single process (the last intervals alike):
    the clean intervals' starts and the agreed sums."""
    clean: list[float] = []
    agreed: dict[str, float] = {}
    deadline = time.monotonic() + 120
    while len(clean) < intervals or not agreed:
        assert time.monotonic() < deadline, (
            f"{len(clean)} clean intervals; Prometheus: alone "
            f"{tenant_sums(server, ALONE)}, shards {tenant_sums(server, SHARDED)}")
        sent = send_burst(switches, datagrams, inlet)
        if sent is not None:
            clean.append(sent[0])
        if len(clean) >= 2 and not agreed:
            single = tenant_sums(server, ALONE)
            if same(single, tenant_sums(server, SHARDED)):
                agreed = single
    return clean, agreed


def tenant_sums(server: prometheus.Prometheus, selector: str) -> dict[str, float]:
    return {r["metric"]["tenant"]: float(r["value"][1]) for r in server.query(
        f"sum by (tenant) (fabcorr_tenant_fabric_bytes_per_second{{{selector}}})")}


def same(a: dict[str, float], b: dict[str, float]) -> bool:
    return bool(a) and a.keys() == b.keys() and all(
        math.isclose(a[k], b[k], rel_tol=1e-9) for k in a)

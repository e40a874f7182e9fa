"""A saved run, attributed: sFlow datagrams with their receive times (a pcap), port
counters (the sFlow counter samples among them, or readings from elsewhere), a fabric.

Datagrams go through the receiver's :class:`~correlator.sflow.receiver.Worker` by their
timestamps (handed over in batches between interval ends and changes of owner), which
cuts them into intervals; inside an interval a segment starts wherever
some fixed IP changed owner. Each closed interval goes to the interval engine
(:class:`~correlator.engine.Engine`) the live service drives, after the counter readings
up to its end: a replay gives the numbers the service would have given. A provisional
interval is corrected as the service corrects it (the engine's corrections are taken
before each interval is closed, and once every reading is in at the end): the result
holds the last attribution of every interval. :func:`replay_view` is what the service
would know at the end of the run. Nothing here does I/O.

A replay as one ``shard`` of several takes what that shard would be given out of the
whole run: the datagrams of its switches' agents (as an inlet forwards them) and the
readings of its ports and of their peers (:class:`~correlator.scope.Scope`); the rest is
left out, not counted. Its intervals are the whole run's (the others' datagrams still
tell the time), as a live shard's are the wall clock's.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from correlator.attribution.accumulate import Interval
from correlator.attribution.attribute import Attribution
from correlator.attribution.hotspots import Hotspot, Thresholds
from correlator.collect.rates import Rates
from correlator.engine import Engine
from correlator.scope import Scope
from correlator.sflow.accounting import MAX_FLOWS, Totals
from correlator.sflow.header import agent
from correlator.sflow.pcap import Capture
from correlator.sflow.receiver import Worker
from correlator.shards import ALONE, Shard
from correlator.view import View
from inventory.counters import PortCounters
from topology.graph import FabricGraph

_BATCH = 4096  # datagrams handed to the worker at a time


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """How a run is cut and judged."""

    interval_s: float = 10.0
    top_pods: int = 10
    thresholds: Thresholds = field(default_factory=Thresholds)
    telemetry_interval_s: float | None = None  # how often counters were read: interval_s
    shard: Shard = ALONE  # the share of the run replayed
    max_flows: int = MAX_FLOWS  # flow keys an interval holds; samples of more are lost


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Every interval's attribution, the hotspots found (ended, then active), what was
    received, and the latest rates of every port (port ID) at the end."""

    attributions: tuple[Attribution, ...]
    hotspots: tuple[Hotspot, ...]
    totals: Totals
    rates: Mapping[str, Rates]


def replay(fabric: FabricGraph, datagrams: Iterable[tuple[float, bytes]] | Capture,
           readings: Iterable[PortCounters] = (), config: ReplayConfig | None = None
           ) -> ReplayResult:
    """Attribute a run: ``datagrams`` are (receive time, payload) in time order, or a
    capture the core reads into the worker itself;
    ``readings`` are telemetry counter readings (any order), each given to the engine
    before the interval it falls in (or ends) is closed; a corrected interval's
    attribution is its correction."""
    config = config or ReplayConfig()
    engine = Engine(config.telemetry_interval_s or config.interval_s, config.top_pods,
                    config.thresholds, shard=config.shard)
    scope = engine.scope(fabric)
    if scope is not None:
        readings = _read(fabric, scope, readings)
    agents = scope.agents if scope is not None else None  # None: every datagram is its own
    extra = sorted(readings, key=lambda r: r.at)
    worker: Worker | None = None
    changes: list[float] = []
    attributions: dict[float, Attribution] = {}  # by start

    def correct() -> None:
        for corrected, _ in engine.corrections():
            attributions[corrected.start] = corrected

    def publish(closed: list[tuple[Interval, Totals]]) -> None:
        nonlocal extra
        for interval, totals in closed:
            # what the service would have by the time it closes the interval
            due = bisect.bisect_right(extra, interval.end + engine.counter_wait_s,
                                      key=lambda r: r.at)
            engine.readings(extra[:due])
            extra = extra[due:]
            correct()
            view = engine.close(fabric, interval, totals)
            assert view.attribution is not None
            attributions[interval.start] = view.attribution

    if agents is not None:  # a shard's datagrams only (a capture's items end with the
        # payload); every one keeps the time going
        source: Capture | _Batches = _Batches(((item[0], item[-1]) for item in datagrams),
                                              lambda data: agent(data) in agents)
    else:
        source = datagrams if isinstance(datagrams, Capture) else _Batches(datagrams)
    at = source.peek()
    while at is not None:
        if worker is None:
            start = at - at % config.interval_s
            worker = Worker(start, config.interval_s, max_flows=config.max_flows)
            changes = fabric.indexes.ips.changes(start, float("inf"))
        if at >= worker.end:
            publish(worker.close(at))
        while changes and changes[0] <= at:
            worker.cut(changes.pop(0))
        # up to the next interval end or change of owner (both after ``at``)
        at = source.feed(worker, min(worker.end, changes[0] if changes else float("inf")))
    if worker is not None:
        publish(worker.close(worker.end))
    engine.readings(extra)
    correct()
    engine.finish()
    return ReplayResult(tuple(attributions.values()), engine.hotspots, engine.totals,
                        engine.rates)


def _read(fabric: FabricGraph, scope: Scope, readings: Iterable[PortCounters]
          ) -> Iterable[PortCounters]:
    """The readings a shard reads: of its switches' ports and of their peers."""
    named = fabric.indexes.port_named
    return (reading for reading in readings if reading.switch in scope.switches
            or named(reading.switch, reading.port) in scope.peers)


class _Batches:
    """(receive time, payload) pairs handed to a worker a batch at a time, as a
    :class:`~correlator.sflow.pcap.Capture` hands its datagrams; those ``keep`` refuses
    (given the payload) only mark the time."""

    __slots__ = ("_items", "_keep", "_next")

    def __init__(self, datagrams: Iterable[tuple[float, bytes]],
                 keep: Callable[[bytes], bool] | None = None) -> None:
        self._items = iter(datagrams)
        self._keep = keep
        self._next = next(self._items, None)

    def peek(self) -> float | None:
        return None if self._next is None else self._next[0]

    def feed(self, worker: Worker, until: float) -> float | None:
        batch, item, items = [], self._next, self._items
        keep = self._keep
        while item is not None and item[0] < until:
            if keep is None or keep(item[1]):
                batch.append(item)
            if len(batch) >= _BATCH:
                worker.handle_many(batch)
                batch = []
            item = next(items, None)
        worker.handle_many(batch)
        self._next = item
        return self.peek()


def replay_view(fabric: FabricGraph, result: ReplayResult, shard: Shard = ALONE) -> View:
    """What the service (``shard``, whose share of the run ``result`` is) would know at
    the end of the run: the last interval, its rates, the hotspots (active; ended in the
    order they ended), the totals; ready."""
    last = result.attributions[-1] if result.attributions else None
    return View(fabric, last, result.rates,
                tuple(h for h in result.hotspots if h.active),
                tuple(h for h in result.hotspots if not h.active),
                judged_until=last.start + last.seconds if last else 0.0, sflow=result.totals,
                started=result.attributions[0].start if result.attributions else 0.0,
                ready=True, shard=shard)


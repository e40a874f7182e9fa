"""The interval engine: one attribution interval's cycle, the same for ``fabcorr run`` and
every replay (counter readings to rates, sFlow counter samples, attribution with its check
of the counters against the samples, hotspots, the published
:class:`~correlator.view.View`).

The engine is handed values and times and never reads a clock or a socket: the service
feeds it the collector's readings as they come and every interval the receiver closes; a
replay feeds it a saved run in time order. A saved run and the live service therefore give
the same numbers for the same input.

Counter readings are tracked per source: telemetry (gNMI, SNMP, NETCONF) and the sFlow
counter samples of one port are two series. A port's rates for an interval are its
telemetry's over exactly that interval: each counter's increase between its values
interpolated at the interval's start and end (:mod:`~correlator.collect.interval_rates`),
whenever the readings were taken and however stale the agent's counters were; so summed
over intervals the counters' bytes are all of their increase. That needs a reading after
the interval's end: the caller closes an interval once :meth:`Engine.covered` says every
port has one, or after :attr:`Engine.counter_wait_s` (then the ports still behind are
carried on at their last rate, and say ``provisional``). A port without telemetry has its
sFlow counter samples' rates over exactly the interval the same way, each sample dated by
its datagram's uptime on the agent's clock (:mod:`~correlator.sflow.clock`), not by when
it arrived; they come with the interval's datagrams, so the last interval before a sample
is carried on, provisionally.

An interval attributed with any such port is ``provisional``, and the engine keeps what it
needs to attribute it again (its samples, the rates it used) until :meth:`Engine.corrections`
finds those ports read past its end: then it is attributed again with their rates over
exactly the interval, the other ports' as they were, and the correction ``replaces`` the
first attribution. An interval still behind :data:`CORRECTION_PERIODS` telemetry periods
after its end (and :data:`CORRECTION_MIN_S`) stays provisional (logged), its counters
pinned where it was published (a late reading dated inside it moves nothing), so the next
interval starts there and no byte falls between them. Hotspots are judged on final
numbers, each link direction interval after interval: in a provisional interval the
directions of the ports carried on (and in the intervals after it, until it is corrected)
wait for its correction, the others are judged at once, so a rate carried on never heats
nor cools a hotspot; the ports of an interval that stays provisional are held as they
were (neither hot nor cool); what still waits when a run ends (:meth:`Engine.finish`) is
judged as it stands. The service and a replay drive the engine alike, so their hotspots
agree.

An engine of one shard of several (:mod:`correlator.scope`) is given its switches'
datagrams and the readings of their ports and of the far ends of their cables: it
attributes and publishes its switches' ports only, and judges only the cable directions
its switches receive, on the signals of both ends.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from correlator._wire import CounterArrivals, SampledPorts
from correlator.attribution.accumulate import Interval
from correlator.attribution.attribute import OUTSIDE, Attribution, attribute
from correlator.attribution.hotspots import Hotspot, HotspotTracker, Thresholds
from correlator.collect.collector import Health
from correlator.collect.interval_rates import IntervalRates
from correlator.collect.rates import Rates
from correlator.gc_pause import collection_paused
from correlator.scope import Scope, scope_of
from correlator.sflow.accounting import Totals
from correlator.sflow.clock import AgentClocks
from correlator.shards import ALONE, Shard
from correlator.view import View
from inventory.counters import PortCounters
from topology.graph import FabricGraph
from topology.schema import id_name

__all__ = ["CORRECTION_PERIODS", "Engine"]

_log = logging.getLogger(__name__)

CORRECTION_PERIODS = 10
CORRECTION_MIN_S = 60.0
"""Telemetry periods past its end a provisional interval is kept for its correction, and
at least that many seconds (polls that time out on a busy machine stall for a while)."""


@dataclass(frozen=True, slots=True)
class _Provisional:
    """A provisional interval, kept for its correction: what it was attributed from, the
    ports whose rates were carried on, and those whose rates were telemetry's (the others'
    were their sFlow counter samples')."""

    fabric: FabricGraph
    interval: Interval
    totals: Totals
    rates: dict[str, Rates]
    behind: frozenset[str]
    telemetry: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Unjudged:
    """An interval whose hotspot judgement of some ports waits: its result, the rates it
    was attributed with, those ports (carried on in it, or in an interval before that
    still waits), whether its numbers are final, and whether it was given up (its ports
    then stay as they were)."""

    result: Attribution
    rates: dict[str, Rates]
    ports: frozenset[str]
    final: bool
    given_up: bool = False
    scope: Scope | None = None


class Engine:
    """Rates, attribution and hotspots, interval after interval.

    ``telemetry_interval_s`` is how often counters are read (an interval waits at most two
    of them, and the slowest agent's refresh period, for the readings after its end);
    ``ended_kept`` how many recent ended hotspots a view lists (None: all); ``started``
    goes into every view. A ``shard`` of several attributes and publishes only its
    switches' ports and judges only the cable directions it owns
    (:class:`~correlator.scope.Scope`); it is given its switches' datagrams and the
    readings of its ports and of their peers. :meth:`readings` may be called from
    another thread than :meth:`close`; calls of :meth:`close` and :meth:`corrections`
    must not overlap.
    """

    def __init__(self, telemetry_interval_s: float = 10.0, top_pods: int = 10,
                 thresholds: Thresholds | None = None, ended_kept: int | None = None,
                 started: float = 0.0, shard: Shard = ALONE) -> None:
        self.top_pods, self.ended_kept, self.started = top_pods, ended_kept, started
        self.shard = shard
        self._scope: Scope | None = None  # of the fabric of the last interval closed
        self.tracker = HotspotTracker(thresholds)
        self.totals = Totals()  # received since the start
        self.telemetry_interval_s = telemetry_interval_s
        self._counters = IntervalRates()  # telemetry
        self._sampled = IntervalRates()  # sFlow counter samples
        self._clocks = AgentClocks()
        self._telemetry: dict[str, Rates] = {}  # port ID -> rates of the last interval
        self._sflow: dict[str, Rates] = {}  # port ID -> the same from sFlow counter samples
        self._last_start: float | None = None  # of the last interval closed
        self._provisional: dict[float, _Provisional] = {}  # by start, oldest first
        self._unjudged: dict[float, _Unjudged] = {}  # by start, oldest first
        self._closed_until = 0.0  # the end of the last interval closed
        self._given_up: frozenset[str] = frozenset()  # ports behind when it last gave up
        self._lock = threading.Lock()  # readings arrive while an interval is closed

    @property
    def rates(self) -> dict[str, Rates]:
        """Every published port's latest rates (port ID): telemetry's where there are any
        (a shard's own ports, as of the last interval closed)."""
        return _attributed(self._read, self._scope)

    @property
    def _read(self) -> dict[str, Rates]:
        """The latest rates of every port read (a shard's peers too)."""
        return {**self._sflow, **self._telemetry}

    @property
    def hotspots(self) -> tuple[Hotspot, ...]:
        """Every hotspot so far: the ended ones in the order they ended, then the active."""
        active = sorted(self.tracker.active.values(),
                        key=lambda h: (h.start, h.port, h.direction))
        return (*self.tracker.ended, *active)

    @property
    def provisional(self) -> tuple[float, ...]:
        """The starts of the provisional intervals kept for a correction, oldest first."""
        return tuple(self._provisional)

    @property
    def counter_wait_s(self) -> float:
        """How long after its end an interval waits for the counter readings past it: two
        telemetry periods, and the slowest agent's refresh period (a stale agent's new
        value shows up to one period late)."""
        with self._lock:
            return 2 * self.telemetry_interval_s + self._counters.slowest_refresh_s

    def readings(self, readings: Iterable[PortCounters]) -> None:
        """Telemetry counter readings (one port's in time order)."""
        with self._lock:
            for reading in readings:
                self._counters.add(reading)

    def covered(self, end: float) -> bool:
        """Whether every port read in the last three telemetry periods before ``end`` has
        a known counter value at or after it (an interval ending then can close)."""
        with self._lock:
            return self._counters.covered(end, since=end - 3 * self.telemetry_interval_s)

    @collection_paused()  # a medium interval makes ~600,000 share tuples
    def close(self, fabric: FabricGraph, interval: Interval, totals: Totals,
              health: Mapping[str, Health] | None = None) -> View:
        """Attribute ``interval`` (received: ``totals``) on ``fabric``, judge hotspots, and
        return the view to publish; keep the interval if it is provisional, and forget
        those kept that ended longer before it than they are kept for."""
        self._sflow_counters(fabric, interval.counters)
        self._sflow = self._sampled.rates(interval.start, interval.end)
        with self._lock:
            self._telemetry = self._counters.rates(interval.start, interval.end)
        rates = self._read
        scope = self._scope = self.scope(fabric)
        result = attribute(fabric, interval, _attributed(rates, scope), self.top_pods)
        _log_mismatches(result)
        behind = frozenset(link.port for link in result.links
                           if link.port in rates and rates[link.port].provisional)
        if scope is not None:  # the peers' signals are judged with this shard's directions
            behind |= {port for port in scope.peers
                       if port in rates and rates[port].provisional}
        self._give_up(interval.end - self._patience)
        self._last_start = interval.start
        if behind:
            result = dataclasses.replace(result, provisional=True)
            self._provisional[interval.start] = _Provisional(
                fabric, interval, totals, rates, behind, frozenset(self._telemetry))
        waiting = behind.union(*(w.ports for w in self._unjudged.values()))
        self.tracker.update(result, rates, hold=waiting, **_judging(scope))
        if waiting:
            self._unjudged[interval.start] = _Unjudged(result, rates, waiting, not behind,
                                                       scope=scope)
        self._closed_until = interval.end
        self._judge_final()
        self.totals.add(totals)
        return View(fabric, result, _attributed(rates, scope), health=dict(health or {}),
                    sflow=_copy(self.totals), started=self.started, ready=True,
                    shard=self.shard, **self.shown_hotspots())

    def scope(self, fabric: FabricGraph) -> Scope | None:
        """This shard's share of ``fabric``; None alone (everything is its own)."""
        return None if self.shard.count == 1 else fabric.cached(scope_of(self.shard))

    def shown_hotspots(self) -> dict[str, Any]:
        """What a view says of hotspots: the active ones, the last ``ended_kept`` ended,
        and the end of the last interval judged (fields of :class:`View`)."""
        ended = self.tracker.ended
        kept = ended if self.ended_kept is None else ended[max(0, len(ended) - self.ended_kept):]
        active = sorted(self.tracker.active.values(), key=lambda h: (h.port, h.direction))
        return {"hotspots": tuple(active), "ended": tuple(kept),
                "judged_until": self.judged_until}

    def finish(self) -> None:
        """The run is over: judge every interval still waiting for its correction as it
        stands (no reading will come to correct it: its rates are the best known)."""
        for start, waiting in self._unjudged.items():
            self._unjudged[start] = dataclasses.replace(waiting, final=True, given_up=False)
        self._judge_final()

    @property
    def judged_until(self) -> float:
        """Up to when every port is judged for hotspots: the end of the last interval
        closed, or the start of the first whose judgement of some port waits."""
        first = next(iter(self._unjudged.values()), None)
        return self._closed_until if first is None else first.result.start

    def _judge_final(self) -> None:
        """Judge the waiting ports of the waiting intervals, in interval order, up to the
        first interval not final (those of an interval given up stay as they were)."""
        for start, waiting in list(self._unjudged.items()):
            if not waiting.final:
                return
            del self._unjudged[start]
            if not waiting.given_up:
                self.tracker.update(waiting.result, waiting.rates, only=waiting.ports,
                                    **_judging(waiting.scope))

    @collection_paused()
    def corrections(self) -> list[tuple[Attribution, Totals]]:
        """The kept provisional intervals whose ports are now read past their end,
        attributed again (``replaces``), each with what was received in it; oldest first.

        The ports that were behind get their rates over exactly the interval, the others
        keep theirs; they are no longer kept. When the last interval closed is corrected,
        :attr:`rates` become its corrected ones. The correction is judged for hotspots
        (with the intervals after it that waited for it).
        """
        found = []
        for start, kept in list(self._provisional.items()):
            with self._lock:
                known = {**self._sampled.rates(kept.interval.start, kept.interval.end,
                                               kept.behind),
                         **self._counters.rates(kept.interval.start, kept.interval.end,
                                                kept.behind)}
            if any(rates.provisional for rates in known.values()):
                continue
            del self._provisional[start]
            result = attribute(kept.fabric, kept.interval,
                               _attributed({**kept.rates, **known}, self.scope(kept.fabric)),
                               self.top_pods)
            _log_mismatches(result)
            if start == self._last_start:
                self._telemetry = {**self._telemetry, **known}
            result = dataclasses.replace(result, replaces=True)
            if start in self._unjudged:
                self._unjudged[start] = dataclasses.replace(
                    self._unjudged[start], result=result, rates={**kept.rates, **known},
                    final=True)
            found.append((result, kept.totals))
        self._judge_final()
        return found

    def judge(self, result: Attribution, rates: Mapping[str, Rates]) -> list[Hotspot]:
        """Follow hotspots over one more attributed interval (attributed here, or read
        back from an attribution log) with its ports' ``rates``; the active ones."""
        return self.tracker.update(result, rates)

    @property
    def _patience(self) -> float:
        """How long past its end a provisional interval is kept for its correction."""
        return max(CORRECTION_PERIODS * self.telemetry_interval_s, CORRECTION_MIN_S)

    def _give_up(self, ended_before: float) -> None:
        """Forget the kept intervals that ended before ``ended_before``: they stay
        provisional (logged when the ports behind differ from the last time), and their
        ports' counters are pinned at their ends as published (from their starts, what
        their rates carried on counted; a reading that came late, dated inside one, does
        not move it), so the next interval starts where they ended: summed over
        intervals the bytes stay the counters'."""
        late = [start for start, kept in self._provisional.items()
                if kept.interval.end < ended_before]
        if not late:
            return
        with self._lock:
            for start in late:  # oldest first: each starts where the one before was pinned
                kept = self._provisional[start]
                span = kept.interval.start, kept.interval.end
                for port in kept.behind:
                    published = kept.rates.get(port)
                    telemetry = port in kept.telemetry
                    self._counters.keep(port, *span, published if telemetry else None)
                    self._sampled.keep(port, *span, None if telemetry else published)
        behind = frozenset().union(*(self._provisional.pop(start).behind for start in late))
        for start in late:
            if start in self._unjudged:
                self._unjudged[start] = dataclasses.replace(self._unjudged[start], final=True,
                                                            given_up=True)
        if behind != self._given_up:
            _log.warning("%d interval(s) from %.3f stay provisional: no counter readings "
                         "past their end within %.0f s from %s", len(late),
                         late[0], self._patience,
                         ", ".join(sorted(id_name(port) for port in behind)))
        self._given_up = behind

    def _sflow_counters(self, fabric: FabricGraph, counters: CounterArrivals) -> None:
        """The interval's sFlow counter samples, in the order they arrived, into their
        ports' timelines, each dated by its agent's clock."""
        self._sampled.add_sflow(counters, self._clocks, fabric.cached(_sampled_ports))


def _sampled_ports(fabric: FabricGraph) -> SampledPorts:
    """The switch and name of the port each sFlow agent means by each ifIndex, once per
    fabric (each port's counter samples come every interval)."""
    attrs = fabric.attrs
    return SampledPorts([(agent, ifindex, attrs(port)["switch"], attrs(port)["name"])
                         for (agent, ifindex), port in fabric.indexes.ports_by_agent.items()])


def _attributed(rates: dict[str, Rates], scope: Scope | None) -> dict[str, Rates]:
    """The rates of the ports whose directions are attributed and published: a shard's
    own (its peers' are read for their signals only)."""
    if scope is None:
        return rates
    return {port: found for port, found in rates.items() if scope.attributes(port)}


def _judging(scope: Scope | None) -> dict[str, Any]:
    """How a shard's hotspot tracker judges: only its cable directions, knowing its
    cables' ends (nothing to say alone)."""
    return {} if scope is None else {"judges": scope.judges, "cables": scope.cables}


def _log_mismatches(result: Attribution) -> None:
    """One line per interval naming the link directions whose counters the samples
    contradict (their bytes are the sampled estimate)."""
    outside = [link for link in result.links if link.counter_check == OUTSIDE]
    if outside:
        _log.warning("counter bytes outside the sampled estimate's 95%% bound, the estimate "
                     "used, interval %.3f: %s", result.start, ", ".join(
                         f"{id_name(link.port)} {link.direction} counters "
                         f"{link.counter_bytes:.0f} B, sampled {link.estimated_bytes:.0f} B "
                         f"({link.samples} samples)" for link in outside))


def _copy(totals: Totals) -> Totals:
    return dataclasses.replace(totals, samples=Counter(totals.samples),
                               rejects=Counter(totals.rejects),
                               evictions=Counter(totals.evictions))

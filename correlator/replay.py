"""A saved run, attributed: sFlow datagrams with their receive times (a pcap), port
counters (the sFlow counter samples among them, or readings from elsewhere), a fabric.

Datagrams are cut into intervals by their timestamps; inside an interval a segment starts
wherever some fixed IP changed owner. Each interval's rates come from the latest
counter readings of every port up to its end; :func:`replay_view` is what the service
would know at the end of the run. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from correlator.attribution.accumulate import Accumulator, Interval
from correlator.attribution.attribute import Attribution, attribute
from correlator.attribution.hotspots import Hotspot, HotspotTracker, Thresholds
from correlator.collect.rates import RateConfig, Rates, RateTracker
from correlator.sflow.accounting import LossTracker, Totals
from correlator.sflow.decode import Decoder
from correlator.sflow.records import CounterSample, InterfaceCounters
from correlator.view import View
from inventory.counters import PortCounters
from topology.graph import FabricGraph
from topology.schema import port_id

SFLOW, READINGS = "sflow", "readings"  # the two series of counter readings of a port


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """How a run is cut and judged."""

    interval_s: float = 10.0
    top_pods: int = 10
    thresholds: Thresholds = field(default_factory=Thresholds)


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Every interval's attribution, the hotspots found (ended, then active), what was
    received, and the latest rates of every port (port ID) at the end."""

    attributions: tuple[Attribution, ...]
    hotspots: tuple[Hotspot, ...]
    totals: Totals
    rates: Mapping[str, Rates]


def interface_reading(switch: str, port: str, at: float, counters: InterfaceCounters
                      ) -> PortCounters:
    """A port reading from an sFlow generic interface counters record.

    >>> c = InterfaceCounters(5, 6, 10**11, 1, 3, 1000, 7, 1, 2, 0, 0, 0, 500, 4, 0, 0, 3, 0, 0)
    >>> r = interface_reading("leaf01", "Ethernet5", 10.0, c)
    >>> r.values["in_octets"], r.values["in_pkts"], r.bits["in_pkts"], r.oper_status
    (1000, 10, 32, 'up')
    """
    values = {"in_octets": counters.in_octets, "out_octets": counters.out_octets,
              "in_pkts": counters.in_ucast + counters.in_mcast + counters.in_bcast,
              "out_pkts": counters.out_ucast + counters.out_mcast + counters.out_bcast,
              "in_discards": counters.in_discards, "out_discards": counters.out_discards,
              "in_errors": counters.in_errors, "out_errors": counters.out_errors}
    narrow = dict.fromkeys(("in_discards", "out_discards", "in_errors", "out_errors"), 32)
    # a sum of three Counter32s wraps where none of them says: keep it out of 64-bit math
    narrow |= {"in_pkts": 32, "out_pkts": 32}
    return PortCounters(switch, port, at, values, narrow,
                        oper_status="up" if counters.oper_up else "down",
                        speed_bps=counters.speed or None)


class _Rates:
    """Latest rates of every port, from counter readings in time order. The capture's
    sFlow counter samples and the readings given are two series of a port, as telemetry
    and sFlow are in the service; where both give a port rates, the readings' win."""

    def __init__(self, interval_s: float) -> None:
        self._trackers: dict[tuple[str, str], RateTracker] = {}
        self._config = RateConfig(interval_s=interval_s)
        self._latest: dict[str, dict[str, Rates]] = {SFLOW: {}, READINGS: {}}

    @property
    def latest(self) -> dict[str, Rates]:
        return {**self._latest[SFLOW], **self._latest[READINGS]}

    def add(self, source: str, port: str, reading: PortCounters) -> None:
        tracker = self._trackers.get((source, port))
        if tracker is None:
            tracker = self._trackers[source, port] = RateTracker(self._config)
        rates = tracker.update(reading)
        if rates is not None:
            self._latest[source][port] = rates


def replay(fabric: FabricGraph, datagrams: Iterable[tuple[float, bytes]],
           readings: Iterable[PortCounters] = (), config: ReplayConfig | None = None
           ) -> ReplayResult:
    """Attribute a run: ``datagrams`` are (receive time, payload) in time order;
    ``readings`` are extra counter readings (any order)."""
    config = config or ReplayConfig()
    extra = sorted(readings, key=lambda r: r.at)
    decoder, loss = Decoder(), LossTracker()
    rates, tracker = _Rates(config.interval_s), HotspotTracker(config.thresholds)
    changes: list[float] = []
    accumulator: Accumulator | None = None
    end = 0.0
    attributions: list[Attribution] = []

    def close(upto: float) -> None:
        nonlocal extra
        assert accumulator is not None
        interval = accumulator.take(upto)
        due = [r for r in extra if r.at <= upto]
        extra = extra[len(due):]
        for reading in due:
            rates.add(READINGS, port_id(reading.switch, reading.port), reading)
        _counter_samples(fabric, interval, rates)
        result = attribute(fabric, interval, rates.latest, config.top_pods)
        attributions.append(result)
        tracker.update(result, rates.latest)

    for at, payload in datagrams:
        if accumulator is None:
            start = at - at % config.interval_s
            accumulator, end = Accumulator(start), start + config.interval_s
            changes = fabric.indexes.ips.changes(start, float("inf"))
        while at >= end:
            close(end)
            end += config.interval_s
        while changes and changes[0] <= at:
            accumulator.cut(changes.pop(0))
        datagram = decoder.decode(payload)
        if datagram is not None:
            loss.observe(datagram, len(payload))
            accumulator.add(datagram, at)
    if accumulator is not None:
        close(end)
    totals = loss.take()
    totals.samples.update(decoder.samples)
    totals.rejects.update(decoder.rejects)
    hotspots = (*tracker.ended, *sorted(tracker.active.values(),
                                        key=lambda h: (h.start, h.port, h.direction)))
    return ReplayResult(tuple(attributions), tuple(hotspots), totals, rates.latest)


def replay_view(fabric: FabricGraph, result: ReplayResult) -> View:
    """What the service would know at the end of the run: the last interval, its rates,
    the hotspots (active; ended in the order they ended), the totals; ready."""
    last = result.attributions[-1] if result.attributions else None
    return View(fabric, last, result.rates,
                tuple(h for h in result.hotspots if h.active),
                tuple(h for h in result.hotspots if not h.active), sflow=result.totals,
                started=result.attributions[0].start if result.attributions else 0.0,
                ready=True)


def _counter_samples(fabric: FabricGraph, interval: Interval, rates: _Rates) -> None:
    """Feed the interval's sFlow counter samples to the rate trackers."""
    for agent, at, sample in sorted(interval.counters, key=lambda c: c[1]):
        if not isinstance(sample, CounterSample) or sample.interface is None:
            continue
        port = fabric.indexes.port_for_sample(agent, sample.interface.ifindex)
        if port is None:
            continue
        attrs = fabric.attrs(port)
        rates.add(SFLOW, port, interface_reading(attrs["switch"], attrs["name"], at,
                                                 sample.interface))

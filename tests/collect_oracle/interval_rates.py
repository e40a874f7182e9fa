"""The interval rates of :mod:`correlator.collect.interval_rates` in Python, over the
Python counter timelines of :mod:`tests.collect_oracle.timeline`: the oracle the Rust
core's (``wire/src/interval_rates.rs``) is held to, bit for bit. It was fabcorr's own
until the core took it over; the method is described in the product module's docstring.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from correlator.collect.rates import Rates, Skip, ceiling, line_rate
from inventory.counters import PortCounters
from tests.collect_oracle.timeline import CounterTimeline

__all__ = ["IntervalRates"]


@dataclass(slots=True)
class _Port:
    switch: str
    port: str
    timelines: dict[str, CounterTimeline] = field(default_factory=dict)
    ambiguous: set[str] = field(default_factory=set)  # narrow counters read too seldom
    last: PortCounters | None = None
    known: float | None = None  # known_until, once found after the last reading

    @property
    def known_until(self) -> float:
        """The earliest of its timelines' last known moments (found once a reading)."""
        if self.known is None:
            self.known = min(t.covered_until for t in self.timelines.values()) \
                if self.timelines else float("-inf")
        return self.known


class _LineRates(dict[str, float | None]):
    """Counter name -> its :func:`~correlator.collect.rates.line_rate` at one speed, each
    found once."""

    def __init__(self, speed_bps: int | None) -> None:
        super().__init__()
        self.speed_bps = speed_bps

    def __missing__(self, name: str) -> float | None:
        rate = self[name] = line_rate(name, self.speed_bps)
        return rate


class IntervalRates:
    """Readings in, rates over any interval out; ``slack`` as in :class:`RateConfig` (the
    product's doctest, :mod:`correlator.collect.interval_rates`, shows them)."""

    def __init__(self, slack: float = 1.1) -> None:
        self.slack = slack
        self.slowest_refresh_s = 0.0
        """The longest refresh period learnt of any counter so far (0 before any)."""
        self._ports: dict[str, _Port] = {}
        self._line_rates: dict[int | None, _LineRates] = {}  # by port speed

    def add(self, reading: PortCounters) -> None:
        """One reading (a port's readings in time order; older ones are ignored)."""
        key = f"port:{reading.switch}/{reading.port}"
        port = self._ports.get(key)
        if port is None:
            port = self._ports[key] = _Port(reading.switch, reading.port)
        last = port.last
        if last is not None and reading.at <= last.at:
            return
        if last is not None and _restarted(last, reading):
            for timeline in port.timelines.values():
                timeline.restart()
        speed = reading.speed_bps or (last.speed_bps if last is not None else None)
        span = reading.at - last.at if last is not None else 0.0
        line_rates = self._line_rates.get(speed)
        if line_rates is None:
            line_rates = self._line_rates[speed] = _LineRates(speed)
        timelines, ambiguous, slack = port.timelines, port.ambiguous, self.slack
        for name, value in reading.values.items():
            rate, bits = line_rates[name], reading.width(name)
            # ceiling(name, speed, span, slack) is rate * span * slack; a first reading
            # (span 0) cannot have wrapped
            if span and rate is not None and rate * span * slack >= 1 << bits:
                ambiguous.add(name)  # it could have wrapped whole, unseen
                timelines.pop(name, None)
            if name in ambiguous:
                continue
            timeline = timelines.get(name)
            if timeline is None:
                timeline = timelines[name] = CounterTimeline(bits, reading.stamped)
            timeline.add(reading.at, value, None if rate is None else rate * slack)
            if timeline.period is not None and timeline.period > self.slowest_refresh_s:
                self.slowest_refresh_s = timeline.period
        port.last, port.known = reading, None

    def covered(self, end: float, since: float | None = None) -> bool:
        """Whether every port (read after ``since``, when given) is known at ``end``."""
        return all(p.known_until >= end for p in self._ports.values()
                   if p.last is not None and (since is None or p.last.at > since))

    def keep(self, port: str, start: float, end: float, published: Rates | None = None
             ) -> None:
        """Pin every counter of ``port`` (port ID) at ``end``: where ``published`` (the
        rates ``[start, end)`` was published with) has its rate, at what that counted from
        ``start``, else as given now (see :meth:`CounterTimeline.keep`)."""
        found = self._ports.get(port)
        for name, timeline in found.timelines.items() if found is not None else ():
            rate = published.per_second.get(name) if published is not None else None
            if rate is None:
                timeline.keep(end)
            else:
                timeline.keep(end, since=start, counted=rate * (end - start))

    def rates(self, start: float, end: float, ports: Iterable[str] | None = None
              ) -> dict[str, Rates]:
        """Port ID -> its rates over ``[start, end)``, for the ports known over all of it
        (of ``ports`` only, when given)."""
        found: dict[str, Rates] = {}
        seconds = end - start
        for key in self._ports if ports is None else ports:
            port = self._ports.get(key)
            last = port.last if port is not None else None
            if port is None or last is None or seconds <= 0:
                continue
            per_second: dict[str, float] = {}
            ranges: dict[str, tuple[float, float]] = {}
            skipped = dict.fromkeys(port.ambiguous, Skip.AMBIGUOUS)
            provisional = False
            for name, timeline in port.timelines.items():
                increase = timeline.increase(start, end, extrapolate=True)
                if increase is None:
                    if timeline.unknown and timeline.unknown_in(start, end):
                        skipped[name] = Skip.AMBIGUOUS
                    continue
                increase = max(0.0, increase)  # from a value carried on too far, kept
                provisional |= timeline.covered_until < end
                limit = ceiling(name, last.speed_bps, seconds, self.slack)
                if limit is not None and increase > limit:
                    skipped[name] = Skip.IMPLAUSIBLE
                else:
                    per_second[name] = increase / seconds
                    low, high = timeline.increase_bounds(start, end, extrapolate=True)
                    ranges[name] = (low / seconds, high / seconds)
            if not per_second and not skipped:
                continue
            speed = last.speed_bps or None
            found[key] = Rates(port.switch, port.port, end, seconds, per_second, skipped,
                               speed_bps=speed, provisional=provisional, ranges=ranges,
                               in_utilization=_utilization(per_second.get("in_octets"), speed),
                               out_utilization=_utilization(per_second.get("out_octets"),
                                                            speed))
        return found


def _restarted(last: PortCounters, now: PortCounters) -> bool:
    # up for less than since the last reading: booted in between
    rebooted = now.uptime_s is not None and (
        now.uptime_s < now.at - last.at
        or (last.uptime_s is not None and now.uptime_s < last.uptime_s))
    cleared = now.last_clear is not None and last.last_clear is not None \
        and now.last_clear != last.last_clear
    return rebooted or cleared


def _utilization(octets_per_second: float | None, speed_bps: int | None) -> float | None:
    if octets_per_second is None or not speed_bps:
        return None
    return octets_per_second * 8 / speed_bps

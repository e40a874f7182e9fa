"""Per-second rates from successive counter readings of one switch port.

A counter only ever counts up, so a delta is a rate unless something broke the series: the
device rebooted, an operator cleared the counters, a narrow counter wrapped, or readings
went missing. A rate is given only when the delta is certain; otherwise the counter is
listed with the reason it has no rate and the series restarts from the new reading, so a
reset never shows up as a negative rate or as a spike. Whether a narrow counter that went
down wrapped or was reset is judged by :func:`judge_step` (and alike by the Rust core's
counter timelines, ``wire/src/timeline.rs``), from what the port's speed allows over the
time between the readings; readings dated in the future, and values
that are not counts (NaN, infinite, negative, too wide), are screened out where readings
come in (:func:`screen`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from enum import StrEnum

from inventory.counters import (
    INTERFACE_COUNTERS,
    PFC_RX,
    PFC_TX,
    QUEUE_DROPPED,
    QUEUE_ECN,
    QUEUE_TX,
    PortCounters,
)
from inventory.errors import ConfigError

__all__ = ["RateConfig", "RateTracker", "Rates", "Skip", "ceiling", "judge_step", "line_rate",
           "screen"]

OCTET_COUNTERS = frozenset({"in_octets", "out_octets"})
PACKET_COUNTERS = (frozenset(INTERFACE_COUNTERS) - OCTET_COUNTERS
                   | {PFC_RX, PFC_TX, QUEUE_ECN, QUEUE_DROPPED, QUEUE_TX})
"""Counter families (the name before ``/``) that count frames."""

MIN_WIRE_FRAME = 84
"""Bytes a minimum Ethernet frame holds the wire: 64 + 8 preamble + 12 inter-frame gap."""
MAX_SKEW_S = 5.0
"""How far past now a reading may be dated (clocks a little apart) before it is refused."""


class Skip(StrEnum):
    """Why a counter has no rate for an interval."""

    NEW = "new"  # not in the previous reading: this one is its baseline
    GAP = "gap"  # the interval is longer than max_gap_s
    REBOOT = "reboot"  # device uptime went back, or is shorter than the interval
    CLEARED = "cleared"  # last_clear changed: an operator cleared the counters
    RESET = "reset"  # went down where no wrap explains it, or changed width
    IMPLAUSIBLE = "implausible"  # the delta is more than the port's speed allows
    AMBIGUOUS = "ambiguous"  # too narrow: could wrap more than once at line rate
    INVALID = "invalid"  # negative, or too large for its width


@dataclass(frozen=True, slots=True)
class RateConfig:
    """How a tracker judges intervals: expected poll interval, longest gap, speed slack.

    ``max_gap_s`` defaults to three times ``interval_s``. ``slack`` is how far above line
    rate a delta may go (timestamp jitter, rounded speeds) before it is implausible.
    """

    interval_s: float = 10.0
    max_gap_s: float | None = None
    slack: float = 1.1

    @property
    def gap_s(self) -> float:
        return self.max_gap_s if self.max_gap_s is not None else 3 * self.interval_s

    def validate(self) -> RateConfig:
        """Return self, or raise ConfigError naming the bad field."""
        for key, value in (("interval_s", self.interval_s), ("max_gap_s", self.gap_s)):
            if not value > 0:
                raise ConfigError("rates", key, f"must be > 0, not {value!r}")
        if not self.slack >= 1:
            raise ConfigError("rates", "slack", f"must be >= 1, not {self.slack!r}")
        return self


@dataclass(frozen=True, slots=True)
class Rates:
    """Per-second rates of one port over one interval ending at ``at``.

    ``per_second`` holds every counter with a certain rate; ``skipped`` every other counter
    of the reading, with the reason. ``wrapped`` lists counters whose delta crossed a
    wrap; ``gone`` those of the previous reading missing from this one. Utilization
    (0..1, from octets and ``speed_bps``) is None when either is unknown. ``provisional``:
    carried on from earlier readings, none having come after the interval's end yet.
    ``ranges``: per counter, the least and most per second the readings allow (a counter
    known only between readings), when known.
    """

    switch: str
    port: str
    at: float
    interval_s: float
    per_second: dict[str, float]
    skipped: dict[str, Skip]
    wrapped: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    speed_bps: int | None = None
    in_utilization: float | None = None
    out_utilization: float | None = None
    provisional: bool = False
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def octets_range(self, direction: str) -> tuple[float, float] | None:
        """The least and the most octets a second the readings allow ``direction``
        (``in`` or ``out``), when known.

        >>> Rates("leaf01", "Ethernet1", 5.0, 5.0, {}, {},
        ...       ranges={"out_octets": (90.0, 110.0)}).octets_range("out")
        (90.0, 110.0)
        """
        return self.ranges.get("in_octets" if direction == "in" else "out_octets")


def ceiling(name: str, speed_bps: int | None, seconds: float, slack: float = 1.1
            ) -> float | None:
    """The largest plausible delta of counter ``name`` over ``seconds`` at ``speed_bps``.

    Octets are bounded by line rate, frame counters by line rate in minimum-size frames;
    other counters, or an unknown speed, have no bound (None).

    >>> ceiling("in_octets", 400_000_000_000, 1.0, slack=1.0)
    50000000000.0
    >>> ceiling("pfc_rx_pause/3", 84 * 8 * 1000, 2.0, slack=1.0), ceiling("in_octets", None, 1)
    (2000.0, None)
    """
    rate = line_rate(name, speed_bps)
    return None if rate is None else rate * seconds * slack


@functools.lru_cache(maxsize=4096)
def line_rate(name: str, speed_bps: int | None) -> float | None:
    """The most counter ``name`` can count a second at ``speed_bps`` (None: no bound);
    :func:`ceiling` is it times the seconds and the slack.

    >>> line_rate("out_octets", 8000), line_rate("in_pkts", 8 * 84), line_rate("x", 8000)
    (1000.0, 1.0, None)
    """
    if not speed_bps:
        return None
    if name in OCTET_COUNTERS:
        return speed_bps / 8
    if name.partition("/")[0] in PACKET_COUNTERS:
        return speed_bps / 8 / MIN_WIRE_FRAME
    return None


def judge_step(before: int, after: int, bits: int, limit: float | None) -> int | Skip:
    """What a counter ``bits`` wide counted from ``before`` to ``after``, at most ``limit``
    being possible (line rate over the time between; None: unknown), or why it is unknown.

    A fall is a wrap only when the wrap fits under the limit, else a reset (``RESET``, as
    is any fall of a 64-bit counter); with no limit, or one that allows a whole wrap, a
    narrow counter's step is ``AMBIGUOUS``; a rise beyond the limit is ``IMPLAUSIBLE``.

    >>> judge_step(2**32 - 100, 50, 32, 1000.0), judge_step(2**32 - 100, 50, 32, 100.0)
    (150, <Skip.RESET: 'reset'>)
    >>> judge_step(2**32 - 100, 50, 32, None), judge_step(10, 50, 32, None)
    (<Skip.AMBIGUOUS: 'ambiguous'>, 40)
    """
    if limit is not None and limit >= 1 << bits:
        return Skip.AMBIGUOUS
    if after >= before:
        delta = after - before
    elif bits >= 64:
        # A 64-bit counter at 1.6 Tb/s needs 2.9 years to wrap: a decrease is a reset.
        return Skip.RESET
    elif limit is None:
        return Skip.AMBIGUOUS  # a reset read as a wrap would be a 2**bits spike
    else:
        delta = after + (1 << bits) - before
        if delta > limit:  # faster than line rate: the counter restarted from zero
            return Skip.RESET
    if limit is not None and delta > limit:
        return Skip.IMPLAUSIBLE
    return delta


def valid_values(reading: PortCounters) -> dict[str, int]:
    """The values of ``reading`` that are counts of their width (not NaN, infinite,
    negative or wider)."""
    return {n: v for n, v in reading.values.items() if 0 <= v < 1 << reading.width(n)}


def screen(reading: PortCounters, now: float, skew_s: float = MAX_SKEW_S
           ) -> tuple[PortCounters | None, list[str]]:
    """``reading`` as far as it can be used at ``now``, and what was refused in it:
    ``future-reading`` or ``bad-time`` (all of it: a reading dated ahead would hold back
    every later one of its port), ``invalid-value`` (one per value left out).

    >>> r = PortCounters("leaf01", "Ethernet1", 100.0, {"in_octets": 5, "out_octets": -1})
    >>> screen(r, 100.0)[0].values, screen(r, 100.0)[1], screen(r, 94.0)
    ({'in_octets': 5}, ['invalid-value'], (None, ['future-reading']))
    >>> screen(replace(r, at=math.nan), 100.0), screen(replace(r, at=math.inf), 100.0)
    ((None, ['bad-time']), (None, ['bad-time']))
    """
    if not math.isfinite(reading.at):
        return None, ["bad-time"]
    if reading.at > now + skew_s:
        return None, ["future-reading"]
    valid = valid_values(reading)
    if len(valid) == len(reading.values):
        return reading, []
    return replace(reading, values=valid), ["invalid-value"] * (len(reading.values) - len(valid))


class RateTracker:
    """Turns successive readings of one (switch, port) into :class:`Rates`.

    Examples
    --------
    >>> tracker = RateTracker(RateConfig(interval_s=10))
    >>> tracker.update(PortCounters("leaf01", "Ethernet1", 100.0, {"in_octets": 1000}))
    >>> tracker.update(PortCounters("leaf01", "Ethernet1", 110.0, {"in_octets": 6000})
    ...                ).per_second
    {'in_octets': 500.0}
    """

    def __init__(self, config: RateConfig | None = None) -> None:
        self.config = (config or RateConfig()).validate()
        self.last: PortCounters | None = None
        self.ignored = 0

    def update(self, reading: PortCounters) -> Rates | None:
        """Rates since the previous reading, which ``reading`` then replaces.

        Returns None for the first reading and for a reading not newer than the previous
        one (out of order or repeated; counted in ``ignored`` and otherwise dropped).

        Raises
        ------
        ValueError
            When ``reading`` belongs to another switch port than the previous ones.
        """
        last = self.last
        if last is not None and (reading.switch, reading.port) != (last.switch, last.port):
            raise ValueError(f"reading of {reading.switch}:{reading.port} given to the "
                             f"tracker of {last.switch}:{last.port}")
        if last is not None and not reading.at > last.at:
            self.ignored += 1
            return None
        valid = valid_values(reading)
        self.last = replace(reading, values=valid)
        if last is None:
            return None
        return self._rates(last, reading, valid)

    def _rates(self, last: PortCounters, now: PortCounters, valid: dict[str, int]) -> Rates:
        span = now.at - last.at
        skipped = {n: Skip.INVALID for n in now.values if n not in valid}
        skipped |= {n: Skip.NEW for n in valid if n not in last.values}
        common = [n for n in valid if n in last.values]
        whole = _device_reset(last, now, span, self.config.gap_s)
        deltas: dict[str, int] = {}
        wrapped: list[str] = []
        if whole is not None:
            skipped |= dict.fromkeys(common, whole)
        else:
            speed = max(last.speed_bps or 0, now.speed_bps or 0) or None
            for name in common:
                delta, skip = self._delta(name, last, now, span, speed)
                if skip is not None:
                    skipped[name] = skip
                elif delta is not None:
                    deltas[name] = delta
                    if valid[name] < last.values[name]:
                        wrapped.append(name)
            # Counters of one port are cleared together: once one decrease is a proven
            # reset, a decrease elsewhere is that reset too, not a wrap.
            if any(skipped.get(n) is Skip.RESET and valid[n] < last.values[n]
                   for n in common):
                skipped |= dict.fromkeys(wrapped, Skip.RESET)
                wrapped = []
        per_second = {n: d / span for n, d in deltas.items() if n not in skipped}
        speed_now = now.speed_bps or None
        return Rates(
            switch=now.switch, port=now.port, at=now.at, interval_s=span,
            per_second=per_second, skipped=skipped, wrapped=tuple(wrapped),
            gone=tuple(n for n in last.values if n not in now.values), speed_bps=speed_now,
            in_utilization=_utilization(per_second.get("in_octets"), speed_now),
            out_utilization=_utilization(per_second.get("out_octets"), speed_now),
        )

    def _delta(self, name: str, last: PortCounters, now: PortCounters, span: float,
               speed: int | None) -> tuple[int | None, Skip | None]:
        bits = now.width(name)
        if bits != last.width(name):
            return None, Skip.RESET
        verdict = judge_step(last.values[name], now.values[name], bits,
                             ceiling(name, speed, span, self.config.slack))
        return (None, verdict) if isinstance(verdict, Skip) else (verdict, None)


def _device_reset(last: PortCounters, now: PortCounters, span: float,
                  max_gap: float) -> Skip | None:
    """Why no counter of the port has a rate this interval, if something says so."""
    if span > max_gap:
        return Skip.GAP
    if now.uptime_s is not None and (
            now.uptime_s < span or (last.uptime_s is not None and now.uptime_s < last.uptime_s)):
        # Up for less than the interval: booted after the previous reading.
        return Skip.REBOOT
    if now.last_clear is not None and last.last_clear is not None \
            and now.last_clear != last.last_clear:
        return Skip.CLEARED
    return None


def _utilization(octets_per_second: float | None, speed_bps: int | None) -> float | None:
    if octets_per_second is None or not speed_bps:
        return None
    return octets_per_second * 8 / speed_bps

"""The counter timeline of :mod:`correlator.collect.timeline` in Python, operation for
operation: the oracle the Rust core's timeline (``wire/src/timeline.rs``) is held to, bit
for bit. It was fabcorr's own until the core took it over; the method is described in the
product module's docstring.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from itertools import pairwise
from statistics import median
from types import MappingProxyType

from correlator.collect.rates import Skip, judge_step

__all__ = ["CounterTimeline"]

_PERIODS_KEPT = 8
_NOTHING_PINNED: Mapping[float, float] = MappingProxyType({})
_MOMENTS_KEPT = 4096  # at one change a second, over half an hour of them


class CounterTimeline:
    """The known moments of one counter of ``bits`` width, and its increase between any two
    (the product's doctest, :mod:`correlator.collect.timeline`, shows them)."""

    __slots__ = ("_changes", "_cumulative", "_held", "_last", "_pin_times", "_pinned", "_reads",
                 "_restarted", "_since", "bits", "covered_until", "fresh", "period", "slack",
                 "times", "unknown", "values")

    def __init__(self, bits: int = 64, fresh: bool = False) -> None:
        self.bits, self.fresh = bits, fresh
        self.times: list[float] = []
        self.values: list[float] = []  # unwrapped, never decreasing
        self.slack: list[float] = []  # how far each moment may lie from its true time
        self._last: int | None = None  # the last raw value read
        self._held = 0.0  # when it was last read
        self._since = 0.0  # when it was first read
        self.unknown: list[tuple[float, float]] = []  # spans of steps neither wrap nor reset
        self._reads = 0  # how many times it was read
        self._restarted = False
        self._cumulative = 0.0
        self._changes: tuple[float, ...] = ()  # the moments of the latest changes
        # instant -> the value given for it, and the same instants in order (shared empty
        # ones until the first pin)
        self._pinned: Mapping[float, float] = _NOTHING_PINNED
        self._pin_times: Sequence[float] = ()
        self.period: float | None = None
        """The agent's refresh period as learnt so far: the median spacing of the latest
        changes after values read more than once (None before two of them)."""
        self.covered_until = -math.inf
        """The last moment the counter's value is known at (an interval may close once it
        ends at or before this): the last of :attr:`times`."""

    def add(self, at: float, value: int, max_rate: float | None = None) -> None:
        """A reading taken at ``at`` (readings come in time order; an older one is
        ignored); ``max_rate``: the most the counter can count a second, when known."""
        last = self._last
        if last is None:  # counting starts here
            self.times.append(at)
            self.values.append(0.0)
            self.slack.append(0.0)
            self.covered_until = at
        elif at <= self._held:
            return
        elif value == last:
            self._held, self._reads = at, self._reads + 1
            self._hold()
            return
        else:
            step = self._step(last, value, at, max_rate)
            self._hold()
            changed = (self._held + at) / 2 if self._reads > 1 and not self.fresh else at
            if step is None:
                self.unknown.append((self.times[-1], max(changed, self.times[-1])))
            else:
                self._cumulative += step
            self._known(max(changed, self.times[-1]), self._cumulative,
                        slack=at - changed)
            if self._reads > 1:
                changes = self._changes = (*self._changes[-_PERIODS_KEPT:], changed)
                if len(changes) > 1:
                    self.period = median(b - a for a, b in pairwise(changes))
        self._last, self._held, self._since, self._reads = value, at, at, 1

    def restart(self) -> None:
        """The counter restarted (a device reboot, an operator clear): the next value read
        counts from zero, whatever its width."""
        self._restarted = True

    def _step(self, before: int, after: int, at: float, max_rate: float | None) -> int | None:
        """What was counted from ``before`` to ``after`` (read at ``at``, at most ``max_rate``
        a second); None when unknown."""
        if self._restarted:
            self._restarted = False
            return after
        if after >= before:
            return after - before
        # the old value may have held since a refresh period before its first reading
        limit = None if max_rate is None else \
            max_rate * (at - self._since + (self.period or 0.0))
        verdict = judge_step(before, after, self.bits, limit)
        if verdict is Skip.RESET:
            return after  # reset: counts from 0
        return None if isinstance(verdict, Skip) else verdict

    def _hold(self) -> None:
        """The value last read was still the counter's at its last reading (fresh, or never
        seen to move), or a refresh period before it: a moment there, or the last one moved
        there when the value already stood still before it (a quiet counter keeps two
        moments)."""
        # a counter never seen to move: nothing says the agent is behind
        period = 0.0 if self.fresh or self.values[-1] == self.values[0] else self.period
        if period is None or self._held - period <= self.times[-1]:
            return
        at, times, values = self._held - period, self.times, self.values
        slack = max(0.0, self._since - at)  # refreshed between here and its first reading
        if len(times) > 1 and values[-1] == values[-2]:
            times[-1], self.slack[-1], self.covered_until = at, slack, at
        else:
            self._known(at, values[-1], slack)

    def _known(self, at: float, value: float, slack: float = 0.0) -> None:
        times = self.times
        if times and at == times[-1]:
            self.values[-1], self.slack[-1] = value, slack
            return
        times.append(at)
        self.values.append(value)
        self.slack.append(slack)
        self.covered_until = at
        if len(times) > _MOMENTS_KEPT:  # older moments than any interval still asks
            half = _MOMENTS_KEPT // 2
            del self.times[:half], self.values[:half], self.slack[:half]
            self.unknown = [span for span in self.unknown if span[1] > self.times[0]]
            self._pin_times = [t for t in self._pin_times if t >= self.times[0]]
            self._pinned = {t: self._pinned[t] for t in self._pin_times}

    def moments(self) -> list[tuple[float, int]]:
        """The known (moment, unwrapped value) pairs, oldest first."""
        return [(t, int(v)) for t, v in zip(self.times, self.values, strict=True)]

    def value_at(self, at: float, extrapolate: bool = False) -> float | None:
        """The interpolated value at ``at``; None outside the known moments, unless
        ``extrapolate``: past the last one, at the rate between the last two."""
        times = self.times
        if extrapolate and len(times) > 1 and at > times[-1]:
            slope = (self.values[-1] - self.values[-2]) / (times[-1] - times[-2])
            return self.values[-1] + slope * (at - times[-1])
        if not times or not times[0] <= at <= times[-1]:
            return None
        i = bisect.bisect_right(times, at)
        if i == len(times):
            return self.values[-1]
        return self._between(i, at)

    def _between(self, i: int, at: float) -> float:
        """The value at ``at`` between moments ``i - 1`` and ``i``: a kink between the
        neighbouring gaps' rates when those explain the gap's increase, else steady.

        >>> t = CounterTimeline(fresh=True)
        >>> for at, value in ((3.3, 0), (4.3, 0), (5.3, 300), (6.3, 1300), (7.3, 2300)):
        ...     t.add(at, value)
        >>> round(t.value_at(5.0), 6), round(t.value_at(5.2), 6)  # 1,000 a second from 5 s on
        (0.0, 200.0)
        """
        times, values = self.times, self.values
        t0, t1, v0, v1 = times[i - 1], times[i], values[i - 1], values[i]
        if 1 < i < len(times) - 1:
            before = (v0 - values[i - 2]) / (t0 - times[i - 2])
            after = (values[i + 1] - v1) / (times[i + 1] - t1)
            counted, gap = v1 - v0, t1 - t0
            if before != after and min(before, after) * gap <= counted <= max(before,
                                                                             after) * gap:
                kink = t0 + (after * gap - counted) / (after - before)
                return v0 + before * (at - t0) if at <= kink else v1 - after * (t1 - at)
        return v0 + (v1 - v0) * (at - t0) / (t1 - t0)

    def bounds(self, at: float, extrapolate: bool = False) -> tuple[float, float] | None:
        """Where the value at ``at`` lies if the counter ran, between the known moments
        around it, at rates within the spread of the average rates of that gap and the gaps
        on either side, widened by that spread on both sides (traffic changes its rate, and
        readings are dated only so well, but as much as its neighbourhood shows; without a
        neighbour, anywhere between the two moments); past the last moment, with
        ``extrapolate``: from the last value to twice what the last rate carries on. A
        moment dated only within a window (a stale agent's change, somewhere between two
        polls) widens them to the values as far before and after ``at`` as that window
        (polls that run late leave a change dated less well than its neighbours show).

        >>> t = CounterTimeline(fresh=True)
        >>> for at, value in ((0.0, 0), (1.0, 100), (2.0, 210), (3.0, 330)):
        ...     t.add(at, value)
        >>> t.bounds(1.5)  # 100, 110, 120 a second around: 80 to 140 a second
        (140.0, 170.0)
        """
        found = self._bounds(at, extrapolate)
        if found is None:
            return None
        times, slack = self.times, self.slack
        i = bisect.bisect_left(times, at)
        late = max(slack[max(0, i - 1):i + 1])  # how far the moments around may be dated
        if not late:
            return found
        early = self.value_at(max(times[0], at - late), extrapolate)
        later = self.value_at(at + late if extrapolate else min(times[-1], at + late),
                              extrapolate)
        return (found[0] if early is None else min(found[0], early),
                found[1] if later is None else max(found[1], later))

    def _bounds(self, at: float, extrapolate: bool) -> tuple[float, float] | None:
        """:meth:`bounds` for moments dated exactly."""
        times = self.times
        if extrapolate and len(times) > 1 and at > times[-1]:
            carried = self.value_at(at, extrapolate=True)
            assert carried is not None
            return self.values[-1], 2 * carried - self.values[-1]
        if not times or not times[0] <= at <= times[-1]:
            return None
        i = bisect.bisect_left(times, at)
        if times[i] == at:
            return self.values[i], self.values[i]
        least, most = self._within(i, times[i - 1], at)
        return self.values[i - 1] + least, self.values[i - 1] + most

    def _within(self, i: int, start: float, end: float) -> tuple[float, float]:
        """The least and the most counted from ``start`` to ``end``, both in the gap before
        moment ``i``, by the rates of :meth:`bounds`."""
        times, values = self.times, self.values
        t0, t1, v0, v1 = times[i - 1], times[i], values[i - 1], values[i]
        rates = [(v1 - v0) / (t1 - t0)]
        if i > 1:
            rates.append((v0 - values[i - 2]) / (t0 - times[i - 2]))
        if i < len(times) - 1:
            rates.append((values[i + 1] - v1) / (times[i + 1] - t1))
        spread = max(rates) - min(rates) if len(rates) > 1 else math.inf
        slow, fast = max(0.0, min(rates) - spread), max(rates) + spread
        counted, inside, outside = v1 - v0, end - start, (start - t0) + (t1 - end)
        return (max(slow * inside, counted - fast * outside),
                min(fast * inside, counted - slow * outside))

    def unknown_in(self, start: float, end: float) -> bool:
        """Whether a step of unknown size (neither wrap nor reset) lies in ``[start, end)``."""
        return any(a < end and start < b for a, b in self.unknown)

    def increase_bounds(self, start: float, end: float, extrapolate: bool = False
                        ) -> tuple[float, float] | None:
        """The least and the most the counter counted over ``[start, end)``, by the rates
        of :meth:`bounds`."""
        if self.unknown_in(start, end):
            return None
        times = self.times
        if times and times[0] <= start < end <= times[-1]:
            i = bisect.bisect_left(times, start)
            if times[i] != start and end < times[i] and not max(self.slack[i - 1:i + 1]):
                return self._within(i, start, end)  # both in one gap between exact moments
        first, last = self.bounds(start, extrapolate), self.bounds(end, extrapolate)
        if first is None or last is None:
            return None
        return max(0.0, last[0] - first[1]), last[1] - first[0]

    def increase(self, start: float, end: float, extrapolate: bool = False) -> float | None:
        """What the counter counted over ``[start, end)``; None unless both are known (or,
        with ``extrapolate``, can be carried on from the last two known moments) and no
        step of unknown size lies between."""
        if self.unknown and self.unknown_in(start, end):
            return None
        first = self._pin(start, extrapolate)
        if first is None and end > self.covered_until:
            return None  # nor is ``end`` pinned: past the last moment, it is only carried on
        last = self._pin(end, extrapolate)
        return None if first is None or last is None else last - first

    def keep(self, at: float, since: float | None = None, counted: float = 0.0) -> None:
        """Pin the value at ``at``: ``counted`` more than at ``since`` when given (what a
        span from ``since`` was published with), else as it is given now, carried on past
        the last moment if need be. A span that was given up on ends there, and the next
        starts there: no byte falls between them, whatever the readings that come later say
        (a late one dated inside the span moves what the span was carried on to, not what
        it was published with).

        >>> t = CounterTimeline(fresh=True)
        >>> for at, value in ((8.0, 0), (12.0, 400)):
        ...     t.add(at, value)
        >>> t.increase(10.0, 20.0, extrapolate=True)  # 100 a second, carried on
        1000.0
        >>> t.add(19.0, 2500)  # 300 a second since 12 s: 2,800 at 20 s
        >>> t.keep(20.0, since=10.0, counted=1000.0)
        >>> t.value_at(20.0, extrapolate=True), t.increase(10.0, 20.0)
        (2800.0, 1000.0)
        """
        if at in self._pinned:
            return
        if since is None:
            self._pin(at, extrapolate=True, past=True)
            return
        first = self._pin(since, extrapolate=True, past=True)
        self._pin(at, extrapolate=True, past=True,
                  value=None if first is None else first + counted)

    def _pin(self, at: float, extrapolate: bool, past: bool = False,
             value: float | None = None) -> float | None:
        """The value at ``at`` (``value`` when given) as first given, once it was known
        (pinned then); never
        below a value given for an earlier instant nor above one for a later instant (a
        later moment moves a gap's kink, not what was given), so no span counts less than
        nothing.

        >>> t = CounterTimeline(fresh=True)
        >>> for at, value in ((0.0, 0), (1.0, 100), (2.0, 600)):
        ...     t.add(at, value)
        >>> t.increase(0.0, 1.5)  # steady between 1 and 2 s
        350.0
        >>> t.add(3.0, 1600)  # 1,000 a second after: a kink at 1.56 s
        >>> t.value_at(1.5), t.increase(1.5, 3.0)  # still 350 at 1.5 s for the next span
        (150.0, 1250.0)
        """
        pinned = self._pinned.get(at)
        if pinned is not None:
            return pinned
        if value is None:
            value = self.value_at(at, extrapolate)
        if value is None:
            return None
        pins = self._pin_times
        i = bisect.bisect_left(pins, at)
        if i:
            value = max(value, self._pinned[pins[i - 1]])
        if i < len(pins):
            value = min(value, self._pinned[pins[i]])
        if self.times and (past or at <= self.times[-1]):
            self._pin_at(i, at, value)
        return value

    def _pin_at(self, i: int, at: float, value: float) -> None:
        """Pin ``value`` at ``at``, the ``i``-th of the pinned instants."""
        if not self._pin_times:  # the first pin: containers of its own
            self._pinned, self._pin_times = {}, []
        pins, pinned = self._pin_times, self._pinned
        pins.insert(i, at)
        pinned[at] = value
        if len(pins) > _MOMENTS_KEPT:
            del pinned[pins.pop(0)]

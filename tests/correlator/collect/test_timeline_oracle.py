"""The Rust core's counter timeline (``wire/src/timeline.rs``) against the method in
Python (tests/collect_oracle/timeline.py): the same bits, the same types and the same
None, for random readings and queries of every kind, step after step."""

import random

from correlator.collect.timeline import CounterTimeline
from tests.collect_oracle import timeline as oracle

STEPS = 40_000
STATE = ("times", "values", "slack", "unknown", "period", "covered_until")


def _bits(found) -> str:
    """``found`` written out: a float's repr is its bits (the shortest that reads back as
    them, -0.0 apart from 0.0), an int's differs from an equal float's, None is None."""
    return repr(found)


class _Counter:
    """A counter read by an agent: its raw value, the time, how it is read."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.bits = rng.choice((64, 64, 32, 32, 16))
        self.fresh = rng.random() < 0.3
        self.rate = rng.choice((0.0, 1.0, 100.0, 6.2e6, rng.uniform(0, 1e4)))
        self.max_rate = rng.choice((None, self.rate * 1.1, self.rate * 3, 1e3, 2.0 ** 40))
        self.at = rng.choice((0.0, 10.0, 1.7e9, rng.uniform(0, 100)))
        self.value = rng.choice((0, 5, 2 ** self.bits - 1000, rng.randrange(2 ** self.bits)))

    def reading(self) -> tuple[float, int, float | None]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.05:  # older than (or as old as) the last: ignored
            return self.at - rng.choice((0.0, 0.5, rng.uniform(0, 3))), self.value, self.max_rate
        self.at += rng.choice((1.0, 0.5, 3.0, 10.0, rng.uniform(0.01, 5)))
        if roll < 0.45:  # stale: the same value again
            pass
        elif roll < 0.8:  # a jump at about the rate
            self.value += int(self.rate * rng.uniform(0, 6)) + rng.randrange(3)
        elif roll < 0.88:  # a wrap of a narrow counter (a 64-bit one: a fall)
            self.value = (self.value + rng.choice((1000, 2 ** 31, rng.randrange(2 ** 16)))) \
                % 2 ** self.bits
        elif roll < 0.95:  # a fall: reset, or restart
            self.value = rng.randrange(max(1, self.value // 2 + 1))
        else:
            self.value += rng.choice((1, 2 ** 20))
        return self.at, self.value, rng.choice((self.max_rate, self.max_rate, None))


def _instant(rng: random.Random, timeline: oracle.CounterTimeline) -> float:
    times = timeline.times
    roll = rng.random()
    if not times or roll < 0.1:
        return rng.uniform(-5, 5) + (times[-1] if times else 0.0)
    if roll < 0.35:
        return rng.choice(times)
    if roll < 0.5 and timeline._pin_times:
        return rng.choice(timeline._pin_times)
    if roll < 0.7 and len(times) > 1:
        i = rng.randrange(1, len(times))
        return (times[i - 1] + times[i]) / 2
    if roll < 0.85:
        return round(rng.uniform(times[0] - 2, times[-1] + 12) * 2) / 2
    return rng.uniform(times[0] - 2, times[-1] + 12)


def _query(rng: random.Random, rust: CounterTimeline, python: oracle.CounterTimeline):
    """One query of both, at the same random instants: their answers."""
    start = _instant(rng, python)
    end = start + rng.choice((0.0, 0.5, 1.0, 10.0, rng.uniform(0, 20))) \
        if rng.random() < 0.8 else _instant(rng, python)
    extrapolate = rng.random() < 0.5
    kind = rng.randrange(7)
    if kind == 0:
        return [t.increase(start, end, extrapolate) for t in (rust, python)]
    if kind == 1:
        return [t.increase_bounds(start, end, extrapolate) for t in (rust, python)]
    if kind == 2:
        return [t.value_at(start, extrapolate) for t in (rust, python)]
    if kind == 3:
        return [t.bounds(start, extrapolate) for t in (rust, python)]
    if kind == 4:
        return [t.unknown_in(start, end) for t in (rust, python)]
    if kind == 5:
        counted = rng.choice((0.0, 1.0, rng.uniform(0, 1e5)))
        since = rng.choice((None, start - rng.choice((1.0, 10.0))))
        return [t.keep(end, since=since, counted=counted) for t in (rust, python)]
    return [t.increase(start, end, True) for t in (rust, python)]  # an interval's rates


def _same(rust: CounterTimeline, python: oracle.CounterTimeline, what: str) -> None:
    for name in STATE:
        assert _bits(getattr(rust, name)) == _bits(getattr(python, name)), (what, name)
    assert _bits(rust.moments()) == _bits(python.moments()), what


def test_every_answer_is_the_pythons_bit_for_bit():
    rng = random.Random(17)
    steps = asked = 0
    while steps < STEPS:
        counter = _Counter(rng)
        rust = CounterTimeline(counter.bits, counter.fresh)
        python = oracle.CounterTimeline(counter.bits, counter.fresh)
        assert (rust.bits, rust.fresh) == (python.bits, python.fresh)
        for step in range(rng.choice((3, 20, 200, 1000))):
            steps += 1
            if rng.random() < 0.02:
                rust.restart()
                python.restart()
            reading = counter.reading()
            rust.add(*reading)
            python.add(*reading)
            assert _bits([getattr(rust, name) for name in ("covered_until", "period")]) == \
                _bits([python.covered_until, python.period]), (step, reading)
            if step % 64 == 0:
                _same(rust, python, f"step {step}: {reading}")
            for _ in range(rng.choice((0, 1, 1, 3))):
                found, expected = _query(rng, rust, python)
                assert _bits(found) == _bits(expected), (step, reading)
                asked += 1
        _same(rust, python, f"after {step} steps")
    assert asked > STEPS


def test_moments_beyond_those_kept_are_trimmed_alike():
    """A counter changing every half second for over an hour: the oldest half of the
    moments go, and the pins and unknown steps before them, in both."""
    rng = random.Random(18)
    rust, python = CounterTimeline(32, fresh=True), oracle.CounterTimeline(32, fresh=True)
    value = 0
    for n in range(9_000):
        at = n * 0.5
        fall, unknown = n % 997 == 0, n % 1500 == 7  # a reset; a fall of unknown kind
        value = rng.randrange(100) if fall or unknown else \
            (value + rng.randrange(2 ** 20)) % 2 ** 32
        max_rate = None if unknown else 2.0 ** 22
        for t in (rust, python):
            t.add(at, value, max_rate)
            if n % 3 == 0:
                t.keep(at - 0.25)
        if n % 50 == 0:
            assert rust.increase(at - 600.3, at - 0.2) == python.increase(at - 600.3, at - 0.2)
        if n % 7 == 0:
            found, expected = _query(rng, rust, python)
            assert _bits(found) == _bits(expected), n
    _same(rust, python, "trimmed")
    assert len(python.times) < 4096 < 9_000 and python.unknown
    assert rust.increase(0.0, 10.0) == python.increase(0.0, 10.0) is None
    assert _bits(rust.moments()) == _bits(python.moments())

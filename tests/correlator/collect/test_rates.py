"""Rates from counter deltas: wraps, resets, gaps, and never a negative rate or a spike."""

import math
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.collect.rates import RateConfig, RateTracker, Skip, ceiling
from inventory.counters import PortCounters
from inventory.errors import ConfigError

G = 1_000_000_000
W32 = 1 << 32
EXACT = RateConfig(interval_s=10, slack=1.0)  # ceilings at line rate exactly
W32_BPS = 8 * W32  # bits/s at which 32-bit octets reach 2**32 in one second
PACKETS_TO_THE_TOP = 672 * (W32 - 1) // 10  # minimum frames: 2**32 - 1 of them in 10 s


def reading(at, values, *, bits=None, speed=None, uptime=None, clear=None):
    return PortCounters("leaf01", "Ethernet1", at, dict(values), dict(bits or {}),
                        speed_bps=speed, uptime_s=uptime, last_clear=clear)


@dataclass
class Case:
    readings: list
    per_second: dict
    skipped: dict = field(default_factory=dict)
    wrapped: tuple = ()
    gone: tuple = ()
    config: RateConfig = field(default_factory=lambda: RateConfig(interval_s=10))


CASES = {
    "plain rate": Case(
        [reading(100, {"in_octets": 1000, "out_octets": 0}),
         reading(110, {"in_octets": 6000, "out_octets": 2000})],
        {"in_octets": 500.0, "out_octets": 200.0}),
    "a 32-bit fall with the speed unknown: a wrap or a reset, no rate": Case(
        [reading(100, {"in_pkts": W32 - 100}, bits={"in_pkts": 32}),
         reading(110, {"in_pkts": 400}, bits={"in_pkts": 32})],
        {}, skipped={"in_pkts": Skip.AMBIGUOUS}),
    "32-bit packet wrap within a 1G port's line rate": Case(
        [reading(100, {"in_pkts": W32 - 100}, bits={"in_pkts": 32}, speed=G),
         reading(110, {"in_pkts": 400}, bits={"in_pkts": 32}, speed=G)],
        {"in_pkts": 50.0}, wrapped=("in_pkts",)),
    "32-bit octet wrap within a 1G port's line rate": Case(
        [reading(100, {"in_octets": W32 - 1000}, bits={"in_octets": 32}, speed=G),
         reading(101, {"in_octets": 4000}, bits={"in_octets": 32}, speed=G)],
        {"in_octets": 5000.0}, wrapped=("in_octets",)),
    "64-bit decrease is a reset": Case(
        [reading(100, {"in_octets": 5000, "out_octets": 10}),
         reading(110, {"in_octets": 100, "out_octets": 110})],
        {"out_octets": 10.0}, skipped={"in_octets": Skip.RESET}),
    "after a reset, the next interval starts from the new value": Case(
        [reading(100, {"in_octets": 5000}), reading(110, {"in_octets": 100}),
         reading(120, {"in_octets": 1100})],
        {"in_octets": 100.0}),
    "a 32-bit decrease beside a 64-bit reset is that reset, not a wrap": Case(
        [reading(100, {"in_octets": 5000, "in_pkts": W32 - 10}, bits={"in_pkts": 32},
                 speed=G),
         reading(110, {"in_octets": 100, "in_pkts": 2}, bits={"in_pkts": 32}, speed=G)],
        {}, skipped={"in_octets": Skip.RESET, "in_pkts": Skip.RESET}),
    "reboot: uptime went back": Case(
        [reading(100, {"in_octets": 5000, "in_pkts": 9}, uptime=86_400),
         reading(110, {"in_octets": 9000, "in_pkts": 3}, uptime=20)],
        {}, skipped={"in_octets": Skip.REBOOT, "in_pkts": Skip.REBOOT}),
    "reboot: up for less than the interval": Case(
        [reading(100, {"in_octets": 50}, uptime=3), reading(110, {"in_octets": 900}, uptime=8)],
        {}, skipped={"in_octets": Skip.REBOOT}),
    "uptime that keeps pace is no reboot": Case(
        [reading(100, {"in_octets": 50}, uptime=3), reading(110, {"in_octets": 150}, uptime=13)],
        {"in_octets": 10.0}),
    "last clear changed": Case(
        [reading(100, {"in_octets": 5000}, clear=50.0),
         reading(110, {"in_octets": 7000}, clear=105.0)],
        {}, skipped={"in_octets": Skip.CLEARED}),
    "gap: longer than 3x the interval": Case(
        [reading(100, {"in_octets": 0}), reading(131, {"in_octets": 3100})],
        {}, skipped={"in_octets": Skip.GAP}),
    "an explicit max gap allows longer intervals": Case(
        [reading(100, {"in_octets": 0}), reading(131, {"in_octets": 3100})],
        {"in_octets": 100.0}, config=RateConfig(interval_s=10, max_gap_s=60)),
    "a 32-bit fall faster than a 400G port's line rate as a wrap is a reset": Case(
        [reading(100, {"in_pkts": W32 - 10}, bits={"in_pkts": 32}, speed=400 * G),
         reading(101, {"in_pkts": 4_000_000_000}, bits={"in_pkts": 32}, speed=400 * G)],
        {}, skipped={"in_pkts": Skip.RESET}),
    "the issue's spike: a reset 32-bit octet counter of a 1G port, not 4.3e8/s": Case(
        [reading(100, {"in_octets": 2_000_000_000}, bits={"in_octets": 32}, speed=G),
         reading(110, {"in_octets": 1_000}, bits={"in_octets": 32}, speed=G)],
        {}, skipped={"in_octets": Skip.RESET}),
    "32-bit octets on a 400G port can wrap unseen": Case(
        [reading(100, {"in_octets": 10}, bits={"in_octets": 32}, speed=400 * G),
         reading(101, {"in_octets": 20}, bits={"in_octets": 32}, speed=400 * G)],
        {}, skipped={"in_octets": Skip.AMBIGUOUS}),
    "64-bit jump beyond line rate": Case(
        [reading(100, {"out_octets": 0}, speed=100 * G),
         reading(110, {"out_octets": 10**15}, speed=100 * G)],
        {}, skipped={"out_octets": Skip.IMPLAUSIBLE}),
    "per-priority PFC": Case(
        [reading(100, {"pfc_rx_pause/3": 10, "pfc_tx_pause/3": 0, "pfc_rx_pause/4": 7}),
         reading(110, {"pfc_rx_pause/3": 510, "pfc_tx_pause/3": 20, "pfc_rx_pause/4": 7})],
        {"pfc_rx_pause/3": 50.0, "pfc_tx_pause/3": 2.0, "pfc_rx_pause/4": 0.0}),
    "counters appear and disappear": Case(
        [reading(100, {"in_octets": 0, "in_pkts": 5}),
         reading(110, {"in_octets": 100, "out_octets": 7})],
        {"in_octets": 10.0}, skipped={"out_octets": Skip.NEW}, gone=("in_pkts",)),
    "invalid values have no rate": Case(
        [reading(100, {"in_pkts": 5, "in_errors": 1}, bits={"in_pkts": 32}),
         reading(110, {"in_pkts": W32, "in_errors": -1}, bits={"in_pkts": 32})],
        {}, skipped={"in_pkts": Skip.INVALID, "in_errors": Skip.INVALID}),
    "a counter back from an invalid value is new": Case(
        [reading(100, {"in_errors": 1}), reading(110, {"in_errors": -1}),
         reading(120, {"in_errors": 3})],
        {}, skipped={"in_errors": Skip.NEW}),
    # -- limits, and one step either side --
    "a 32-bit wrap counts the whole way round: 2**32 - before + after": Case(
        [reading(100, {"in_pkts": W32 - 1}, bits={"in_pkts": 32}, speed=G),
         reading(110, {"in_pkts": 0}, bits={"in_pkts": 32}, speed=G)],
        {"in_pkts": 0.1}, wrapped=("in_pkts",)),
    "a 32-bit wrap from zero to the top: 2**32 - 1, just what line rate allows": Case(
        [reading(100, {"in_pkts": 1}, bits={"in_pkts": 32}, speed=PACKETS_TO_THE_TOP),
         reading(110, {"in_pkts": 0}, bits={"in_pkts": 32}, speed=PACKETS_TO_THE_TOP)],
        {"in_pkts": (W32 - 1) / 10}, wrapped=("in_pkts",), config=EXACT),
    "a 64-bit decrease by one is a reset, not a wrap": Case(
        [reading(100, {"in_pkts": 1}), reading(110, {"in_pkts": 0})],
        {}, skipped={"in_pkts": Skip.RESET}),
    "a counter standing still has rate 0, not a wrap": Case(
        [reading(100, {"in_pkts": 7}, bits={"in_pkts": 32}),
         reading(110, {"in_pkts": 7}, bits={"in_pkts": 32})],
        {"in_pkts": 0.0}),
    "ambiguous when the ceiling reaches exactly 2**bits": Case(
        [reading(100, {"in_octets": 0}, bits={"in_octets": 32}, speed=W32_BPS),
         reading(101, {"in_octets": 5}, bits={"in_octets": 32}, speed=W32_BPS)],
        {}, skipped={"in_octets": Skip.AMBIGUOUS}, config=EXACT),
    "not ambiguous one byte/s below: a delta of 2**32 - 1 at line rate": Case(
        [reading(100, {"in_octets": 0}, bits={"in_octets": 32}, speed=W32_BPS - 8),
         reading(101, {"in_octets": W32 - 1}, bits={"in_octets": 32}, speed=W32_BPS - 8)],
        {"in_octets": W32 - 1.0}, config=EXACT),
    "a delta of exactly the ceiling is plausible": Case(
        [reading(100, {"out_octets": 0}, speed=8 * G), reading(110, {"out_octets": 10 * G})],
        {"out_octets": 1.0 * G}, config=EXACT),
    "a delta of one above the ceiling is implausible": Case(
        [reading(100, {"out_octets": 0}, speed=8 * G),
         reading(110, {"out_octets": 10 * G + 1})],
        {}, skipped={"out_octets": Skip.IMPLAUSIBLE}, config=EXACT),
    "a frame counter at exactly the ceiling in minimum frames is plausible": Case(
        [reading(100, {"in_pkts": 0}, speed=84 * 8 * 1000),
         reading(110, {"in_pkts": 10_000})],
        {"in_pkts": 1000.0}, config=EXACT),
    "a frame counter one above is implausible": Case(
        [reading(100, {"in_pkts": 0}, speed=84 * 8 * 1000),
         reading(110, {"in_pkts": 10_001})],
        {}, skipped={"in_pkts": Skip.IMPLAUSIBLE}, config=EXACT),
    "a gap of exactly max_gap_s still has a rate": Case(
        [reading(100, {"in_octets": 0}), reading(130, {"in_octets": 3000})],
        {"in_octets": 100.0}),
    "a gap one step over max_gap_s has none": Case(
        [reading(100, {"in_octets": 0}), reading(math.nextafter(130, math.inf),
                                                 {"in_octets": 3000})],
        {}, skipped={"in_octets": Skip.GAP}),
    "up for exactly the interval: booted at the previous reading, no reboot since": Case(
        [reading(100, {"in_octets": 50}), reading(110, {"in_octets": 150}, uptime=10.0)],
        {"in_octets": 10.0}),
    "up for one step less than the interval: rebooted since": Case(
        [reading(100, {"in_octets": 50}),
         reading(110, {"in_octets": 150}, uptime=math.nextafter(10.0, 0.0))],
        {}, skipped={"in_octets": Skip.REBOOT}),
    "uptime standing still is no reboot": Case(
        [reading(100, {"in_octets": 50}, uptime=500.0),
         reading(110, {"in_octets": 150}, uptime=500.0)],
        {"in_octets": 10.0}),
    "a counter that changed width is reset": Case(
        [reading(100, {"in_pkts": 90}, bits={"in_pkts": 32}), reading(110, {"in_pkts": 100})],
        {}, skipped={"in_pkts": Skip.RESET}),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_rates(case):
    tracker = RateTracker(case.config)
    results = [tracker.update(r) for r in case.readings]
    rates = results[-1]
    assert results[0] is None
    assert rates.per_second == case.per_second
    assert rates.skipped == case.skipped
    assert (rates.wrapped, rates.gone) == (case.wrapped, case.gone)
    assert rates.interval_s == case.readings[-1].at - case.readings[-2].at


def test_first_reading_has_no_rate():
    tracker = RateTracker()
    assert tracker.update(reading(100, {"in_octets": 1})) is None
    assert tracker.last.at == 100


def test_repeated_or_older_readings_are_ignored():
    tracker = RateTracker(RateConfig(interval_s=10))
    tracker.update(reading(100, {"in_octets": 1000}))
    assert tracker.update(reading(100, {"in_octets": 9000})) is None
    assert tracker.update(reading(95, {"in_octets": 0})) is None
    rates = tracker.update(reading(110, {"in_octets": 2000}))
    assert (tracker.ignored, rates.per_second, rates.interval_s) == (2, {"in_octets": 100.0}, 10)


def test_utilization():
    tracker = RateTracker(RateConfig(interval_s=10))
    tracker.update(reading(100, {"in_octets": 0, "out_octets": 0}, speed=100 * G))
    rates = tracker.update(reading(110, {"in_octets": 31_250_000_000,
                                         "out_octets": 62_500_000_000}, speed=100 * G))
    assert (rates.in_utilization, rates.out_utilization) == (0.25, 0.5)
    assert rates.speed_bps == 100 * G


def test_utilization_unknown_without_speed():
    tracker = RateTracker()
    tracker.update(reading(100, {"in_octets": 0}))
    rates = tracker.update(reading(110, {"in_octets": 10}))
    assert (rates.in_utilization, rates.out_utilization) == (None, None)


def test_readings_of_another_port_are_refused():
    tracker = RateTracker()
    tracker.update(reading(100, {}))
    with pytest.raises(ValueError, match="leaf01:Ethernet2"):
        tracker.update(PortCounters("leaf01", "Ethernet2", 110))


@pytest.mark.parametrize(("config", "key"), [
    (RateConfig(interval_s=0), "interval_s"),
    (RateConfig(max_gap_s=-1), "max_gap_s"),
    (RateConfig(slack=0.9), "slack"),
])
def test_bad_config(config, key):
    with pytest.raises(ConfigError) as error:
        RateTracker(config)
    assert error.value.key == key


@pytest.mark.parametrize(("name", "expected"), [
    ("in_octets", 50 * G * 1.1), ("out_pkts", 50 * G / 84 * 1.1),
    ("queue_ecn_marked/UC3", 50 * G / 84 * 1.1), ("vendor_thing", None),
])
def test_ceiling(name, expected):
    assert ceiling(name, 400 * G, 1.0) == expected


# Arbitrary sequences: counters that mostly count up (by up to ~70 GB, so wraps and line-rate
# breaches both happen) and sometimes jump anywhere; timestamps in any order; reboots, clears.
NAMES = ("in_octets", "out_pkts", "pfc_rx_pause/3", "queue_dropped/UC3")
moves = st.one_of(st.tuples(st.just("add"), st.integers(0, 1 << 36)),
                  st.tuples(st.just("set"), st.integers(0, (1 << 64) - 1)))
steps = st.lists(st.tuples(
    st.floats(min_value=-5, max_value=40, allow_nan=False),  # time since previous
    st.fixed_dictionaries({}, optional=dict.fromkeys(NAMES, moves)),
    st.one_of(st.none(), st.floats(0, 1e6)),  # uptime
    st.sampled_from([None, 1.0, 2.0]),  # last clear
), min_size=2, max_size=30)


@settings(max_examples=300, deadline=None)
@given(steps=steps, widths=st.fixed_dictionaries({n: st.sampled_from([32, 64]) for n in NAMES}),
       speed=st.sampled_from([None, G, 10 * G, 400 * G]))
def test_rates_are_never_negative_nor_above_line_rate(steps, widths, speed):
    config = RateConfig(interval_s=10)
    tracker = RateTracker(config)
    at, counters = 1000.0, dict.fromkeys(NAMES, 0)
    for dt, moved, uptime, clear in steps:
        at += dt
        for name, (how, amount) in moved.items():
            counters[name] = (counters[name] + amount if how == "add" else amount) \
                % (1 << widths[name])
        values = {n: counters[n] for n in moved}
        rates = tracker.update(reading(at, values, bits=widths, speed=speed, uptime=uptime,
                                       clear=clear))
        if rates is None:
            continue
        assert rates.interval_s > 0
        assert not rates.per_second or rates.interval_s <= config.gap_s
        for name, rate in rates.per_second.items():
            assert rate >= 0 and math.isfinite(rate)
            limit = ceiling(name, speed, rates.interval_s, config.slack)
            if limit is not None:
                assert rate * rates.interval_s <= limit * (1 + 1e-9)
                assert limit < 1 << widths[name]
        assert not rates.per_second.keys() & rates.skipped.keys()

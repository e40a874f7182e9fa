"""Rates over exactly an interval from readings taken whenever, per port."""

import pytest

from correlator.collect.interval_rates import IntervalRates
from correlator.collect.rates import Skip
from inventory.counters import PortCounters

SPEED = 100_000_000_000  # a 32-bit packet counter read every 10 s cannot wrap twice


def _reading(at, port="Ethernet1", uptime=None, **values):
    return PortCounters("leaf01", port, at, values, {"in_pkts": 32}, speed_bps=SPEED,
                        uptime_s=uptime)


def test_each_interval_gets_the_bytes_of_its_own_time():
    rates = IntervalRates()
    for at, octets in ((7.0, 0), (12.0, 5_000), (17.0, 10_000), (22.0, 15_000)):
        rates.add(_reading(at, in_octets=octets))
    # 1,000 bytes a second read every 5 s out of step with the 10 s intervals
    (found,) = rates.rates(10.0, 20.0).values()
    assert found.per_second == {"in_octets": 1000.0} and found.interval_s == 10.0
    assert found.in_utilization == 8000 / SPEED and found.at == 20.0
    assert rates.rates(0.0, 10.0) == {}  # 7 s is the first known moment


def test_an_interval_is_covered_once_every_recent_port_is_known_past_its_end():
    rates = IntervalRates()
    rates.add(_reading(9.0, "Ethernet1", in_octets=0))
    rates.add(_reading(21.0, "Ethernet1", in_octets=100))
    rates.add(_reading(9.0, "Ethernet2", in_octets=0))
    rates.add(_reading(19.0, "Ethernet2", in_octets=100))
    assert not rates.covered(20.0)
    assert rates.covered(20.0, since=20.0)  # Ethernet2 was last read before then
    rates.add(_reading(21.5, "Ethernet2", in_octets=130))
    assert rates.covered(20.0) and rates.covered(21.0) and not rates.covered(21.2)
    assert set(rates.rates(10.0, 20.0)) == {"port:leaf01/Ethernet1", "port:leaf01/Ethernet2"}


def test_a_reboot_restarts_the_counters_and_an_impossible_increase_is_left_out():
    rates = IntervalRates()
    rates.add(_reading(0.0, uptime=1000.0, in_octets=10**9, in_pkts=4_000_000_000))
    rates.add(_reading(10.0, uptime=1010.0, in_octets=2 * 10**9, in_pkts=4_000_001_000))
    rates.add(_reading(20.0, uptime=5.0, in_octets=500, in_pkts=300))  # rebooted
    (found,) = rates.rates(10.0, 20.0).values()
    assert found.per_second == {"in_octets": 50.0, "in_pkts": 30.0}  # from zero, no wrap
    rates.add(_reading(30.0, uptime=15.0, in_octets=500 + SPEED // 8 * 12, in_pkts=400))
    (found,) = rates.rates(20.0, 30.0).values()
    # 12 s of line rate in 10 s: more than the 11 s the slack allows
    assert found.skipped == {"in_octets": Skip.IMPLAUSIBLE}
    assert found.per_second == {"in_pkts": pytest.approx(10.0)}


def test_the_rates_carry_the_range_the_readings_allow():
    """Read at 7, 12, 17 and 22 s, the counter ran at 800, 1,200 and 2,000 a second on
    average. At 10 s, 3 s into a gap of 4,000 whose rates around spread 400 wide, at 400 to
    1,600 a second: 1,200 to 3,200 (at least 4,000 - 2 x 1,600 is less). At 20 s, 3 s into
    a gap of 10,000 next to 1,200 a second, at 400 to 2,800: from 10,000 + the most of 1,200
    and 10,000 - 2 x 2,800 to the least of 8,400 and 10,000 - 2 x 400, 14,400 to 18,400.
    Steady readings leave no room."""
    rates = IntervalRates()
    for at, octets in ((7.0, 0), (12.0, 4_000), (17.0, 10_000), (22.0, 20_000)):
        rates.add(_reading(at, in_octets=octets))
    (found,) = rates.rates(10.0, 20.0).values()
    assert found.ranges == {"in_octets": (1120.0, 1720.0)}
    steady = IntervalRates()
    for at, octets in ((7.0, 0), (12.0, 5_000), (17.0, 10_000), (22.0, 15_000)):
        steady.add(_reading(at, in_octets=octets))
    (found,) = steady.rates(10.0, 20.0).values()
    assert found.ranges == {"in_octets": (1000.0, 1000.0)}


def _narrow(at, octets, speed=1_000_000_000, uptime=None):
    return PortCounters("leaf01", "Ethernet1", at, {"in_octets": octets}, {"in_octets": 32},
                        speed_bps=speed, uptime_s=uptime)


@pytest.mark.parametrize(("before", "after", "per_second"), [
    # 1 GB in 10 s as a wrap: under the 1.375 GB 10 s of 1 Gb/s allow (with 10 % slack)
    (2**32 - 5 * 10**8, 5 * 10**8, 10**9 / 10),
    (2 * 10**9, 1000, 1000 / 10),  # 2.3 GB as a wrap: more than allowed, a reset from 0
])
def test_a_narrow_counter_falls_by_a_wrap_or_a_reset_as_the_ports_speed_allows(
        before, after, per_second):
    rates = IntervalRates()
    rates.add(_narrow(10.0, before))
    rates.add(_narrow(20.0, after))
    (found,) = rates.rates(10.0, 20.0).values()
    assert (found.per_second, found.skipped) == ({"in_octets": per_second}, {})


def test_a_narrow_counter_falling_on_a_port_of_unknown_speed_has_no_rate_for_that_step():
    rates = IntervalRates()
    for at, octets in ((10.0, 2 * 10**9), (20.0, 1000), (30.0, 6000)):
        rates.add(_narrow(at, octets, speed=None))
    (found,) = rates.rates(10.0, 20.0).values()
    assert (found.per_second, found.skipped) == ({}, {"in_octets": Skip.AMBIGUOUS})
    (found,) = rates.rates(20.0, 30.0).values()
    assert (found.per_second, found.skipped) == ({"in_octets": 500.0}, {})


def test_an_uptime_shorter_than_the_time_since_the_last_reading_is_a_reboot():
    """Up 4 s at 20 s (the agent's uptime is not known before): booted since 10 s, so 1,000
    is what it counted from zero, not a wrap; nor a reset judged from the speed alone."""
    rates = IntervalRates()
    rates.add(_narrow(10.0, 2**32 - 10**9, speed=None))
    rates.add(_narrow(20.0, 1000, speed=None, uptime=4.0))
    (found,) = rates.rates(10.0, 20.0).values()
    assert (found.per_second, found.skipped) == ({"in_octets": 100.0}, {})



def test_a_narrow_counter_that_could_wrap_twice_between_readings_is_left_out():
    """A 32-bit packet counter of a 400G port read every 10 s: line rate in 84-byte frames
    (5.95e8 a second) could wrap it more than once in between."""
    rates = IntervalRates()
    for at, octets, packets in ((0.0, 0, 0), (10.0, 10_000, 100), (20.0, 20_000, 200)):
        rates.add(PortCounters("leaf01", "Ethernet1", at, {"in_octets": octets,
                                                           "in_pkts": packets},
                               {"in_pkts": 32}, speed_bps=400_000_000_000))
    (found,) = rates.rates(10.0, 20.0).values()
    assert (found.per_second, found.skipped) == ({"in_octets": 1000.0},
                                                 {"in_pkts": Skip.AMBIGUOUS})

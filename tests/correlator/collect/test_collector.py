"""The collector: faulty switches never delay the others; errors are counted by kind.

The pollers here are in-process stand-ins that fail on purpose (timing and fault logic
is the subject); real SNMP and gNMI peers are exercised in the lab and adapter tests.
They run on virtual time, so every tick is where the schedule puts it, however busy the
machine is.
"""

import asyncio
import random

from correlator.collect.collector import POLL_PERIODS, Collector
from inventory.backoff import Backoff
from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.errors import DecodeError, SourceError, SourceUnreachable
from tests import virtual_time

INTERVAL = 0.1


class AuthRefused(SourceError):
    kind = "auth"


async def good(switch):
    return [PortCounters(switch.name, "Ethernet1", 0.0, {"in_octets": 1})]


async def slow(switch):
    await asyncio.sleep(60)


async def refused(switch):
    raise AuthRefused(f"{switch.name}: authentication failed")


async def garbage(switch):
    raise DecodeError(f"{switch.name}: not an SNMP response")


def run_for(collector: Collector, seconds: float) -> None:
    """Run ``collector`` for ``seconds`` of virtual time."""
    async def main():
        stop = asyncio.Event()
        task = asyncio.create_task(collector.run(stop))
        await asyncio.sleep(seconds)
        stop.set()
        await task
    virtual_time.run(main())


def test_faulty_switches_never_delay_the_good_ones():
    switches = [SwitchConfig(name, "192.0.2.1", protocols=(name,))
                for name in ("good", "slow", "refused", "garbage")]
    delivered = []
    collector = Collector(switches, INTERVAL, delivered.extend, streamers={},
                          pollers={"good": good, "slow": slow, "refused": refused,
                                   "garbage": garbage})
    run_for(collector, 10.5 * INTERVAL)
    health = collector.health
    assert health["good"].updates == 11  # every tick, on time: 0, 0.1, ..., 1.0
    assert len(delivered) == health["good"].updates
    assert health["good"].up and not health["good"].errors
    # Each poll hits its deadline of POLL_PERIODS intervals (at 0.5 and 1.0); the next
    # starts right away, and the one begun at 1.0 is still waiting when collection stops.
    assert health["slow"].errors == {"timeout": 10 // POLL_PERIODS}
    assert health["refused"].errors == {"auth": 11}
    assert health["garbage"].errors == {"garbage": 11}
    assert not any(health[n].up for n in ("slow", "refused", "garbage"))
    assert health["refused"].last_error == "refused: authentication failed"


def test_a_broken_stream_is_resubscribed_after_backoff():
    subscriptions = []

    async def flaky(switch, interval, ports):
        assert ports is None
        subscriptions.append(switch.name)
        for _ in range(3):
            yield [PortCounters(switch.name, "Ethernet1", 0.0, {"in_octets": 1})]
        raise SourceUnreachable("connection reset")

    switch = SwitchConfig("leaf", "192.0.2.1", protocols=("gnmi",))
    collector = Collector([switch], INTERVAL, lambda readings: None, pollers={},
                          streamers={"gnmi": flaky}, backoff=Backoff(base_s=0.01, cap_s=0.02))
    collector.rng = random.Random(11)
    run_for(collector, 0.3)
    # A stream that delivered starts its backoff over: every wait is U(0, base_s). Each
    # subscription delivers and fails at once, so subscription k opens after k such waits.
    draws, opened_at, expected = random.Random(11), 0.0, 0
    while opened_at < 0.3:
        expected += 1
        opened_at += draws.uniform(0, 0.01)
    health = collector.health["leaf"]
    assert expected > 20 and len(subscriptions) == expected
    assert health.errors == {"unreachable": expected}
    assert health.updates == 3 * expected


def test_readings_from_the_future_or_of_no_counts_are_refused_and_counted():
    """Dated 10 s ahead (beyond the clock skew allowed), at NaN, or with NaN, infinite and
    negative values: a reading dated ahead would hold back its port's later readings."""
    now = 1000.0

    async def odd(switch):
        return [PortCounters(switch.name, "Ethernet1", now + 10.0, {"in_octets": 1}),
                PortCounters(switch.name, "Ethernet2", float("nan"), {"in_octets": 1}),
                PortCounters(switch.name, "Ethernet3", now + 4.0,
                             {"in_octets": 7, "out_octets": float("nan"),
                              "in_pkts": float("inf"), "out_pkts": -1})]

    switch = SwitchConfig("leaf", "192.0.2.1", protocols=("odd",))
    delivered = []
    collector = Collector([switch], INTERVAL, delivered.extend, streamers={},
                          pollers={"odd": odd}, clock=lambda: now)
    run_for(collector, 0.5 * INTERVAL)
    assert [(r.port, r.at, r.values) for r in delivered] == [
        ("Ethernet3", now + 4.0, {"in_octets": 7})]
    assert collector.health["leaf"].errors == {"future-reading": 1, "bad-time": 1,
                                               "invalid-value": 3}


def test_retargeted_the_collector_stops_starts_and_restarts_only_the_switches_that_changed():
    """A shard's switches and peer ports follow its fabric: a switch dropped stops, a new
    one starts, a stream whose ports changed subscribes again, the others go on."""
    subscriptions = []

    async def stream(switch, interval, ports):
        subscriptions.append((switch.name, ports))
        while True:
            yield [PortCounters(switch.name, "Ethernet1", 0.0, {"in_octets": 1})]
            await asyncio.sleep(interval)

    def config(name, protocol):
        return SwitchConfig(name, "192.0.2.1", protocols=(protocol,))

    collector = Collector([config("a", "gnmi"), config("b", "snmp")], INTERVAL,
                          lambda readings: None, pollers={"snmp": good},
                          streamers={"gnmi": stream}, ports={"a": ("Ethernet1",)})
    first = collector.health["a"]

    async def main():
        stop = asyncio.Event()
        task = asyncio.create_task(collector.run(stop))
        await asyncio.sleep(2.5 * INTERVAL)
        collector.retarget([config("a", "gnmi"), config("c", "snmp")],
                           {"a": ("Ethernet1", "Ethernet2")})
        await asyncio.sleep(2.5 * INTERVAL)
        collector.retarget([config("a", "gnmi"), config("c", "snmp")],
                           {"a": ("Ethernet1", "Ethernet2")})  # the same: nothing restarts
        await asyncio.sleep(2 * INTERVAL)
        stop.set()
        await task
    virtual_time.run(main())
    assert subscriptions == [("a", ("Ethernet1",)), ("a", ("Ethernet1", "Ethernet2"))]
    assert set(collector.health) == {"a", "c"}
    assert collector.health["a"] is first
    # a: at 0, 0.1, 0.2, then from 0.25 every 0.1 to 0.65; c: from 0.25 to 0.65
    assert (collector.health["a"].updates, collector.health["c"].updates) == (8, 5)

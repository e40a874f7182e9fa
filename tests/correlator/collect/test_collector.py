"""The collector: faulty switches never delay the others; errors are counted by kind.

The pollers here are in-process stand-ins that fail on purpose (timing and fault logic
is the subject); real SNMP and gNMI peers are exercised in the lab and adapter tests.
"""

import asyncio

from correlator.collect.collector import Collector
from inventory.backoff import Backoff
from inventory.counters import PortCounters
from inventory.devices import SwitchConfig
from inventory.errors import DecodeError, SourceError, SourceUnreachable

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
    async def main():
        stop = asyncio.Event()
        task = asyncio.create_task(collector.run(stop))
        await asyncio.sleep(seconds)
        stop.set()
        await task
    asyncio.run(main())


def test_faulty_switches_never_delay_the_good_ones():
    switches = [SwitchConfig(name, "192.0.2.1", protocols=(name,))
                for name in ("good", "slow", "refused", "garbage")]
    delivered = []
    collector = Collector(switches, INTERVAL, delivered.extend, streamers={},
                          pollers={"good": good, "slow": slow, "refused": refused,
                                   "garbage": garbage})
    run_for(collector, 10.5 * INTERVAL)
    health = collector.health
    assert 10 <= health["good"].updates <= 11  # every tick, on time
    assert len(delivered) == health["good"].updates
    assert health["good"].up and not health["good"].errors
    # Each tick's poll hits its one-interval deadline; the next tick starts right away.
    assert set(health["slow"].errors) == {"timeout"}
    assert 10 <= health["slow"].errors["timeout"] <= 11
    assert 10 <= health["refused"].errors["auth"] <= 11
    assert 10 <= health["garbage"].errors["garbage"] <= 11
    assert not any(health[n].up for n in ("slow", "refused", "garbage"))
    assert health["refused"].last_error == "refused: authentication failed"


def test_a_broken_stream_is_resubscribed_after_backoff():
    subscriptions = []

    async def flaky(switch, interval):
        subscriptions.append(switch.name)
        for _ in range(3):
            yield [PortCounters(switch.name, "Ethernet1", 0.0, {"in_octets": 1})]
        raise SourceUnreachable("connection reset")

    switch = SwitchConfig("leaf", "192.0.2.1", protocols=("gnmi",))
    collector = Collector([switch], INTERVAL, lambda readings: None, pollers={},
                          streamers={"gnmi": flaky}, backoff=Backoff(base_s=0.01, cap_s=0.02))
    run_for(collector, 0.3)
    health = collector.health["leaf"]
    failures = health.errors["unreachable"]
    assert failures >= 2 and set(health.errors) == {"unreachable"}
    assert len(subscriptions) in (failures, failures + 1)  # the last may still be open
    assert 3 * failures <= health.updates <= 3 * len(subscriptions)

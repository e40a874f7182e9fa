"""The collector against real gNMI peers: emulated targets over gRPC, one per fault.

A stalled target, one refusing the password and one answering garbage run beside a good
one; the good one still delivers every interval and the errors are counted by kind.
"""

import asyncio

from correlator.collect.collector import Collector
from inventory.backoff import Backoff
from inventory.devices import GnmiOptions, Secret, SwitchConfig
from simulator.generator import FabricSpec, generate_facts
from simulator.gnmi_target import GnmiTarget

INTERVAL = 0.5
FACTS = generate_facts(FabricSpec(nodes=2, rails=1, vfs_per_pf=1, spines=1))


def target(**faults) -> GnmiTarget:
    return GnmiTarget.from_facts(FACTS, "leaf01", username="fabcorr", password="right",
                                 pack=True, **faults)


def config(name: str, server: GnmiTarget, password: str = "right") -> SwitchConfig:
    host, port = server.address.rsplit(":", 1)
    return SwitchConfig(name, host, protocols=("gnmi",), gnmi=GnmiOptions(
        port=int(port), insecure=True, username="fabcorr", password=Secret(password),
        timeout_s=0.4))


def test_faulty_gnmi_targets_never_delay_the_good_one():
    with target() as good, target(stall=True) as stalled, target() as locked, \
            target(garbage=True) as noisy:
        switches = [config("good", good), config("stalled", stalled),
                    config("locked", locked, password="wrong"), config("noisy", noisy)]
        seen: dict[str, list[float]] = {}

        def sink(readings):
            seen.setdefault(readings[0].switch, []).append(readings[0].at)

        collector = Collector(switches, INTERVAL, sink, pollers={},
                              backoff=Backoff(base_s=0.05, cap_s=0.1))

        async def main():
            stop = asyncio.Event()
            task = asyncio.create_task(collector.run(stop))
            await asyncio.sleep(6 * INTERVAL + 0.2)
            stop.set()
            await task

        asyncio.run(main())
    health = collector.health
    assert set(seen) == {"good"}
    assert 6 <= health["good"].updates <= 8  # initial state, then one per interval
    gaps = [b - a for a, b in zip(seen["good"][1:], seen["good"][2:], strict=False)]
    assert all(abs(gap - INTERVAL) < 0.2 for gap in gaps), gaps
    assert health["good"].up and not health["good"].errors
    assert set(health["stalled"].errors) == {"timeout"}
    assert set(health["locked"].errors) == {"auth"}
    assert set(health["noisy"].errors) == {"garbage"}

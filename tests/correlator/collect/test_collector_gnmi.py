"""The collector against real gNMI peers: emulated targets over gRPC, one per fault.

A stalled target, one refusing the password and one answering garbage run beside a good
one; the good one goes on delivering while they fail, and the errors are counted by kind.
The test waits for those events (failing after 60 s), not for a wall-clock window.
"""

import asyncio
import time

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


def config(name: str, server: GnmiTarget, password: str = "right",
           timeout_s: float = 30) -> SwitchConfig:
    host, port = server.address.rsplit(":", 1)
    return SwitchConfig(name, host, protocols=("gnmi",), gnmi=GnmiOptions(
        port=int(port), insecure=True, username="fabcorr", password=Secret(password),
        timeout_s=timeout_s))


def test_faulty_gnmi_targets_never_delay_the_good_one():
    with target() as good, target(stall=True) as stalled, target() as locked, \
            target(garbage=True) as noisy:
        # Only the stalled target needs a short timeout: the others answer, if slowly under
        # load (the noisy one's garbage is judged after its timeout: 5 s, not 30).
        switches = [config("good", good), config("stalled", stalled, timeout_s=0.4),
                    config("locked", locked, password="wrong"),
                    config("noisy", noisy, timeout_s=5)]
        seen: dict[str, list[float]] = {}
        collector = Collector(switches, INTERVAL, lambda readings: None, pollers={},
                              backoff=Backoff(base_s=0.05, cap_s=0.1))
        health = collector.health
        stalls_before: list[int] = []  # the stalled target's timeouts at each good sample

        def sink(readings):
            seen.setdefault(readings[0].switch, []).append(readings[0].at)
            stalls_before.append(health["stalled"].errors["timeout"])

        collector.sink = sink

        def enough() -> bool:
            """6 good samples after the stalled target's second timeout; 2 of each error."""
            return sum(stalls >= 2 for stalls in stalls_before) >= 6 \
                and health["locked"].errors["auth"] >= 2 \
                and health["noisy"].errors["garbage"] >= 2

        async def main():
            stop = asyncio.Event()
            task = asyncio.create_task(collector.run(stop))
            deadline = time.monotonic() + 60
            try:
                while not enough():
                    assert time.monotonic() < deadline, (stalls_before, health)
                    await asyncio.sleep(0.05)
            finally:
                stop.set()
                await task

        asyncio.run(main())
    assert set(seen) == {"good"}
    # Waiting on the stalled target never held a good sample back: each is a new one.
    assert all(b > a for a, b in zip(seen["good"], seen["good"][1:], strict=False))
    assert health["good"].up and not health["good"].errors
    assert set(health["stalled"].errors) == {"timeout"}
    assert set(health["locked"].errors) == {"auth"}
    assert set(health["noisy"].errors) == {"garbage"}

"""walk() keeps one client per agent and event loop, through failed and cancelled walks
alike (a new SNMP engine would cost the next poll its deadline too, and late answers to the
old one would reach a closed transport)."""

import asyncio

from inventory.devices import Secret, SnmpOptions
from inventory.errors import SourceTimeout
from inventory.facts import SwitchFact
from inventory.snmp import client
from simulator.snmp_agent import SnmpAgent

HOST = "127.1.0.1"
SYS_NAME = (1, 3, 6, 1, 2, 1, 1, 5)
IF_NAME = (1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1)
SWITCH = SwitchFact("leaf01", "0c:42:a1:01:00:00", HOST, HOST, "eos")


def _options(agent: SnmpAgent, timeout_s: float = 10.0) -> SnmpOptions:
    return SnmpOptions(port=agent.port, community=Secret("c0mm"), timeout_s=timeout_s,
                       retries=0)


def _kept(options: SnmpOptions) -> client.SnmpClient | None:
    return client._clients[asyncio.get_running_loop()].get((HOST, id(options)))


def test_a_cancelled_walk_keeps_the_client_and_the_next_walk_answers():
    with SnmpAgent(SWITCH, (), (), host=HOST, community="c0mm") as agent:
        options = _options(agent)

        async def main():
            assert await client.walk(HOST, options, [SYS_NAME]) == {(*SYS_NAME, 0): b"leaf01"}
            first = _kept(options)
            walking = asyncio.create_task(client.walk(HOST, options, [SYS_NAME, IF_NAME]))
            await asyncio.sleep(0)  # under way: its first request is out
            walking.cancel()
            await asyncio.gather(walking, return_exceptions=True)
            assert walking.cancelled() and _kept(options) is first
            again = await asyncio.wait_for(client.walk(HOST, options, [SYS_NAME]), 60)
            return again, _kept(options) is first

        assert asyncio.run(main()) == ({(*SYS_NAME, 0): b"leaf01"}, True)


def test_a_timed_out_walk_keeps_the_client_and_it_answers_when_the_agent_is_back():
    with SnmpAgent(SWITCH, (), (), host=HOST, community="c0mm") as agent:
        options = _options(agent, timeout_s=3.0)  # the first walk, a new engine, within 24 s

        async def main():
            await client.walk(HOST, options, [SYS_NAME])
            first = _kept(options)
            agent.stop()
            try:
                await asyncio.wait_for(client.walk(HOST, options, [SYS_NAME]), 60)
            except SourceTimeout:
                pass
            else:
                raise AssertionError("a stopped agent answered")
            kept = _kept(options) is first
            agent.start()  # back on the same port
            again = await asyncio.wait_for(client.walk(HOST, options, [SYS_NAME]), 60)
            return first is not None and kept, again, _kept(options) is first

        assert asyncio.run(main()) == (True, {(*SYS_NAME, 0): b"leaf01"}, True)

"""Agent clocks: a datagram's uptime in wall time, learnt per agent from arrivals."""

import random

import pytest

from correlator.sflow.clock import AgentClocks
from tests.sflow_oracle import clock as oracle

A, B = b"\xc0\x00\x02\x01", b"\xc0\x00\x02\x02"


@pytest.mark.parametrize(("datagrams", "dated"), [
    # (agent, sub-agent, arrival, uptime ms) in arrival order -> each one's wall time
    pytest.param([(A, 0, 50.4, 10_000), (A, 0, 51.1, 11_000), (A, 0, 52.3, 12_000)],
                 [50.4, 51.1, 52.1], id="the least delayed datagram sets the clock"),
    pytest.param([(A, 0, 50.4, 10_000), (A, 0, 50.9, 10_000)], [50.4, 50.4],
                 id="samples of one datagram are one guess"),
    pytest.param([(A, 0, 50.4, 10_000), (A, 0, 61.0, 500), (A, 0, 61.7, 1_000)],
                 [50.4, 61.0, 61.5], id="uptime going back is a restart: learnt anew"),
    pytest.param([(A, 0, 50.4, 10_000), (B, 0, 50.2, 3_000), (A, 1, 50.6, 70_000),
                  (B, 0, 51.5, 4_000)],
                 [50.4, 50.2, 50.6, 51.2], id="each agent and sub-agent has its own clock"),
])
def test_datagrams_are_dated_by_the_least_delayed_recent_guess(datagrams, dated):
    clocks = AgentClocks()
    assert [round(clocks.date(*d), 6) for d in datagrams] == dated


def test_only_recent_guesses_count_so_a_drifting_clock_is_followed():
    clocks = AgentClocks(kept=3)
    # one early datagram 0.5 s ahead of the rest (offset 40.0), then offsets of 40.5:
    # it sets the clock until three newer guesses have replaced it
    first = clocks.date(A, 0, 50.0, 10_000)
    later = [clocks.date(A, 0, 50.5 + n, 10_000 + 1000 * n) for n in range(1, 4)]
    assert [round(t, 6) for t in (first, *later)] == [50.0, 51.0, 52.0, 53.5]


def test_zero_kept_guesses_is_refused():
    with pytest.raises(ValueError, match="at least one guess"):
        AgentClocks(kept=0)


@pytest.mark.parametrize("agent", [b"", b"\x01\x02", bytes(5)])
def test_an_agent_that_is_no_address_is_refused(agent):
    with pytest.raises(ValueError, match="4 or 16 bytes"):
        AgentClocks().date(agent, 0, 1.0, 1000)


@pytest.mark.parametrize("kept", [1, 3, 8])
def test_the_core_dates_as_the_python_method_bit_for_bit(kept):
    """Random agents (IPv4 and IPv6, sub-agents) with delays, repeated uptimes (several
    samples of one datagram), restarts and drift, dated by the Rust core and by the Python
    oracle (tests/sflow_oracle/clock.py)."""
    rng = random.Random(kept)
    agents = [(bytes([10, 0, 0, n]), n % 2) for n in range(5)] + [(bytes(15) + b"\x07", 0)]
    uptime = {agent: rng.randrange(2**31) for agent in agents}
    ours, theirs = AgentClocks(kept), oracle.AgentClocks(kept)
    for n in range(20_000):
        agent = rng.choice(agents)
        step = rng.choice((0, 0, 1, 7, 1000, 1003, -5000))  # ms; 0: the same datagram
        uptime[agent] = max(0, uptime[agent] + step) if rng.random() < 0.999 else 17
        arrival = n * 0.01 + rng.expovariate(200.0) + uptime[agent] * 1e-9  # drifting
        args = (*agent, arrival, uptime[agent])
        assert ours.date(*args).hex() == theirs.date(*args).hex(), (n, args)

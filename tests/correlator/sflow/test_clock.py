"""Agent clocks: a datagram's uptime in wall time, learnt per agent from arrivals."""

import pytest

from correlator.sflow.clock import AgentClocks

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

"""When an sFlow agent sent a datagram, in wall time: the agent's uptime, carried in every
datagram, moved by what each agent's clock is learnt to be off by.

Each datagram gives one guess of the offset (wall time - uptime): its arrival minus its
uptime, late by however long it travelled and waited. The least of an agent's recent guesses
is the one least delayed, so a datagram held up in a queue does not move the clock; keeping
only recent guesses follows an agent clock that drifts. An agent restart (uptime going back,
or wrapping at 2**32 ms) starts the learning anew.

The clocks are the Rust core's (``wire/src/clock.rs``): the engine dates an interval's
counter samples there in one call (:meth:`IntervalRates.add_sflow
<correlator.collect.interval_rates.IntervalRates.add_sflow>`).

>>> clocks = AgentClocks()
>>> agent = bytes([192, 0, 2, 1])
>>> [round(clocks.date(agent, 0, arrival, uptime_ms), 3) for arrival, uptime_ms in (
...     (100.30, 5000),  # the first guess: 95.30
...     (101.25, 6000),  # 95.25, the least so far
...     (102.90, 7000),  # held up 0.65 s: dated by 95.25 all the same
...     (103.00, 1000))]  # uptime went back: a restart, 102.00 from now on
[100.3, 101.25, 102.25, 103.0]
"""

from correlator._wire import AgentClocks

__all__ = ["AgentClocks"]

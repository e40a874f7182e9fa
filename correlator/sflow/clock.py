"""When an sFlow agent sent a datagram, in wall time: the agent's uptime, carried in every
datagram, moved by what each agent's clock is learnt to be off by.

Each datagram gives one guess of the offset (wall time - uptime): its arrival minus its
uptime, late by however long it travelled and waited. The least of an agent's recent guesses
is the one least delayed, so a datagram held up in a queue does not move the clock; keeping
only recent guesses follows an agent clock that drifts. An agent restart (uptime going back,
or wrapping at 2**32 ms) starts the learning anew.
"""

from __future__ import annotations

from collections import deque

__all__ = ["AgentClocks"]

KEPT = 8
"""How many recent guesses of an agent's offset are kept."""


class AgentClocks:
    """Per (agent, sub-agent): the wall time of a datagram's uptime.

    >>> clocks = AgentClocks()
    >>> [round(clocks.date(b"a", 0, arrival, uptime_ms), 3) for arrival, uptime_ms in (
    ...     (100.30, 5000),  # the first guess: 95.30
    ...     (101.25, 6000),  # 95.25, the least so far
    ...     (102.90, 7000),  # held up 0.65 s: dated by 95.25 all the same
    ...     (103.00, 1000))]  # uptime went back: a restart, 102.00 from now on
    [100.3, 101.25, 102.25, 103.0]
    """

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._agents: dict[tuple[bytes, int], tuple[int, deque[float]]] = {}

    def date(self, agent: bytes, sub_agent: int, arrival: float, uptime_ms: int) -> float:
        """The wall time of ``uptime_ms`` on the agent, given a datagram of it that
        arrived at ``arrival`` (an agent's datagrams in the order they arrived; several
        samples of one datagram make one guess)."""
        key = (agent, sub_agent)
        known = self._agents.get(key)
        uptime = uptime_ms / 1000
        if known is not None and uptime_ms == known[0]:
            return uptime + min(known[1])
        if known is None or uptime_ms < known[0]:
            guesses: deque[float] = deque(maxlen=self.kept)
        else:
            guesses = known[1]
        guesses.append(arrival - uptime)
        self._agents[key] = (uptime_ms, guesses)
        return uptime + min(guesses)

"""The agent clocks in Python, as fabcorr once dated counter samples: the oracle of the
Rust core's (``wire/src/clock.rs``, :class:`correlator._wire.AgentClocks`); the method
is :mod:`correlator.sflow.clock`'s."""

from __future__ import annotations

from collections import deque


class AgentClocks:
    """Per (agent, sub-agent): the wall time of a datagram's uptime."""

    def __init__(self, kept: int = 8) -> None:
        self.kept = kept
        self._agents: dict[tuple[bytes, int], tuple[int, deque[float]]] = {}

    def date(self, agent: bytes, sub_agent: int, arrival: float, uptime_ms: int) -> float:
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

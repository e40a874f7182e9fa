"""What the receiver counts: datagrams, samples, rejects, and the loss sFlow itself reveals.

Datagram sequence numbers run per (agent, sub-agent): a gap is datagrams lost on the way
(UDP), a fall in agent uptime or sequence a restarted agent (not a loss). Each flow sample
carries its data source's ``drops``: samples the agent itself shed while overloaded. The
receiver adds what the kernel dropped on its full socket buffers (``kernel_drops``), part
of the sequence gaps.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from correlator.sflow.records import Datagram, FlowSample

_RESTART_GAP = 1 << 20  # a jump this far ahead is a restart too, not a loss


@dataclass(slots=True)
class Totals:
    """Counts over some span; totals of several receivers or spans add up."""

    datagrams: int = 0
    bytes: int = 0
    samples: Counter[str] = field(default_factory=Counter)
    rejects: Counter[str] = field(default_factory=Counter)
    lost_datagrams: int = 0
    agent_restarts: int = 0
    agent_drops: int = 0
    kernel_drops: int = 0

    def add(self, other: Totals) -> None:
        self.datagrams += other.datagrams
        self.bytes += other.bytes
        self.samples.update(other.samples)
        self.rejects.update(other.rejects)
        self.lost_datagrams += other.lost_datagrams
        self.agent_restarts += other.agent_restarts
        self.agent_drops += other.agent_drops
        self.kernel_drops += other.kernel_drops


class LossTracker:
    """Follows sequence numbers and drop counters across datagrams, adding to ``totals``.

    >>> t = LossTracker()
    >>> for seq, uptime in ((1, 100), (2, 200), (5, 500), (1, 10)):
    ...     t.observe(Datagram(b"\\x7f\\x00\\x00\\x01", 0, seq, uptime, []), 64)
    >>> t.totals.datagrams, t.totals.lost_datagrams, t.totals.agent_restarts
    (4, 2, 1)
    """

    __slots__ = ("_drops", "_sequences", "totals")

    def __init__(self) -> None:
        self.totals = Totals()
        self._sequences: dict[tuple[bytes, int], tuple[int, int]] = {}
        self._drops: dict[tuple[bytes, int, int], int] = {}

    def observe(self, datagram: Datagram, size: int) -> None:
        """Account one decoded datagram of ``size`` bytes."""
        totals = self.totals
        totals.datagrams += 1
        totals.bytes += size
        key = (datagram.agent, datagram.sub_agent)
        last = self._sequences.get(key)
        seq, uptime = datagram.seq, datagram.uptime_ms
        if last is not None:
            if uptime < last[1] or not 0 < seq - last[0] < _RESTART_GAP:
                totals.agent_restarts += 1
            else:
                totals.lost_datagrams += seq - last[0] - 1
        self._sequences[key] = (seq, uptime)
        known = self._drops
        for sample in datagram.samples:
            # only sources that ever dropped are followed: the common case costs one test
            if sample.__class__ is FlowSample and (sample.drops or known):
                source = (datagram.agent, sample.source_type, sample.source_index)
                before = known.get(source)
                if before is not None and sample.drops > before:
                    totals.agent_drops += sample.drops - before
                if sample.drops or before is not None:
                    known[source] = sample.drops

    def take(self) -> Totals:
        """The totals so far; counting starts over (sequence state is kept)."""
        totals, self.totals = self.totals, Totals()
        return totals

"""Loss accounting in pure Python, as the receiver once did it: the oracle of the Rust
core's (wire/src/loss.rs); the semantics are :mod:`correlator.sflow.accounting`'s."""

from __future__ import annotations

from correlator.sflow.accounting import MAX_AGENTS, MAX_SOURCES, Totals, name_interleaved
from correlator.sflow.records import Datagram, FlowSample
from correlator.sflow.tables import LruTable

_SEQUENCES = 1 << 32  # sequence numbers are u32 and wrap
_JUMP_SLACK = 1024  # datagrams a sequence may skip beyond what its uptime allows
_PER_MS = 100  # datagrams per millisecond of uptime: more than any agent sends
_STREAMS_KEPT = 4  # sequences followed per (agent, sub-agent)


class _Sequence:
    """One sequence of datagrams: where it is, how many it had; ``parent``, while it is
    unconfirmed, the sequence it jumped ahead of by ``pending`` datagrams."""

    __slots__ = ("datagrams", "parent", "pending", "seq", "uptime")

    def __init__(self, seq: int, uptime: int, parent: _Sequence | None = None,
                 pending: int = 0) -> None:
        self.seq, self.uptime, self.datagrams = seq, uptime, 1
        self.parent, self.pending = parent, pending

    def ahead(self, seq: int, uptime: int) -> int:
        """How far ``seq`` is ahead, if it can go on this sequence at ``uptime`` (else 0)."""
        elapsed = uptime - self.uptime
        ahead = (seq - self.seq) % _SEQUENCES
        return ahead if elapsed >= 0 and ahead <= _JUMP_SLACK + elapsed * _PER_MS else 0


class _Pair:
    """The sequences of one (agent, sub-agent), the latest last; ``named`` once its
    interleaving was logged."""

    __slots__ = ("named", "streams")

    def __init__(self, seq: int, uptime: int) -> None:
        self.streams = [_Sequence(seq, uptime)]
        self.named = False


class LossTracker:
    """Follows sequence numbers and drop counters across datagrams, adding to ``totals``;
    at most ``max_agents`` (agent, sub-agent) pairs and ``max_sources`` data sources.

    A jump further than ``_JUMP_SLACK`` that the uptime allows is a loss once the next
    datagram goes on from it; if the old sequence goes on instead, it was another source.

    >>> t = LossTracker()
    >>> for seq, uptime in ((1, 100), (2, 200), (5, 500), (1, 10), (2, 20), (1 << 30, 30)):
    ...     t.observe(Datagram(b"\\x7f\\x00\\x00\\x01", 0, seq, uptime, []), 64)
    >>> t.totals.datagrams, t.totals.lost_datagrams, t.totals.agent_restarts
    (6, 2, 2)
    """

    __slots__ = ("_drops", "_pairs", "totals")

    def __init__(self, max_agents: int = MAX_AGENTS, max_sources: int = MAX_SOURCES) -> None:
        self.totals = Totals()
        self._pairs: LruTable[tuple[bytes, int], _Pair] = LruTable(max_agents)
        self._drops: LruTable[tuple[bytes, int, int], int] = LruTable(max_sources)

    def observe(self, datagram: Datagram, size: int) -> None:
        """Account one decoded datagram of ``size`` bytes."""
        totals = self.totals
        totals.datagrams += 1
        totals.bytes += size
        key = (datagram.agent, datagram.sub_agent)
        seq, uptime = datagram.seq, datagram.uptime_ms
        pair = self._pairs.pop(key, None)
        if pair is None:
            pair = _Pair(seq, uptime)
        else:
            last = pair.streams[-1]
            if seq - last.seq == 1 and uptime >= last.uptime and last.parent is None:
                last.seq, last.uptime = seq, uptime  # the common case: the next one
                last.datagrams += 1
            else:
                self._follow(key, pair, seq, uptime)
        self._pairs.put(key, pair)
        known = self._drops
        for sample in datagram.samples:
            # only sources that ever dropped are followed: the common case costs one test
            if sample.__class__ is FlowSample and (sample.drops or known):
                source = (datagram.agent, sample.source_type, sample.source_index)
                before = known.pop(source, None)
                if before is not None and sample.drops > before:
                    totals.agent_drops += sample.drops - before
                if sample.drops or before is not None:
                    known.put(source, sample.drops)

    def _follow(self, key: tuple[bytes, int], pair: _Pair, seq: int, uptime: int) -> None:
        """A datagram that is not simply the next of the latest sequence: it goes on with
        the sequence it is least ahead of (a loss; another source's sequence when that is
        not the latest), or jumps far ahead of it (unconfirmed), or starts a new one (a
        restart)."""
        totals, streams = self.totals, pair.streams
        best, gap = None, 0
        for stream in streams:
            ahead = stream.ahead(seq, uptime)
            if ahead and (best is None or ahead < gap):
                best, gap = stream, ahead
        if best is None or gap > _JUMP_SLACK:
            if best is None:
                totals.agent_restarts += 1
            streams.append(_Sequence(seq, uptime, best, gap - 1 if best else 0))
            if len(streams) > _STREAMS_KEPT:
                del streams[0]
            return
        totals.lost_datagrams += gap - 1
        if best is not streams[-1]:
            if best.datagrams > 1 and streams[-1].datagrams > 1:  # not one stray datagram
                totals.interleaved += 1
                if not pair.named:
                    pair.named = True
                    name_interleaved(*key)
            streams.remove(best)
            streams.append(best)
        for other in streams:  # what jumped ahead of this sequence was not its future
            if other.parent is best:
                other.parent, other.pending = None, 0
        if best.parent is not None:  # the jump to here is confirmed: a loss
            totals.lost_datagrams += best.pending
            if best.parent in streams:
                streams.remove(best.parent)
            best.parent, best.pending = None, 0
        best.seq, best.uptime = seq, uptime
        best.datagrams += 1

    def take(self) -> Totals:
        """The totals so far; counting starts over (sequence state is kept)."""
        totals, self.totals = self.totals, Totals()
        for name, table in (("sequences", self._pairs), ("sources", self._drops)):
            evicted = table.take_evictions()
            if evicted:
                totals.evictions[name] += evicted
        return totals

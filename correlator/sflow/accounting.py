"""What the receiver counts: datagrams, samples, rejects, and the loss sFlow itself reveals.

Datagram sequence numbers run per (agent, sub-agent): a gap is datagrams lost on the way
(UDP). A sequence that does not go on from where it was is a new one, counted as a restart
(not a loss): agent uptime falling, the sequence going back, or a jump further ahead than
the agent can have sent in the uptime between the two datagrams (one forged or bit-flipped
sequence number is not a million lost datagrams). Several sources misconfigured onto one
(agent, sub-agent) send interleaved sequences: each is followed on its own (a few per pair),
the pair is named in the log once, and datagrams that switch between them are counted
(``interleaved``). Each flow sample carries its data source's ``drops``: samples the agent
itself shed while overloaded. The receiver adds what the kernel dropped on its full socket
buffers (``kernel_drops``), part of the sequence gaps. Every table is bounded (least
recently used evicted); its evictions are counted by table.

The accounting itself runs in the Rust core (``wire/src/loss.rs``: a jump further than
1,024 datagrams beyond 100 per millisecond of uptime is implausible; four sequences
followed per pair); this module holds what the rest of fabcorr reads of it.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from correlator import _wire
from correlator.sflow.records import address_text

_log = logging.getLogger(__name__)
MAX_AGENTS = 16384
"""Default bound of (agent, sub-agent) pairs followed."""
MAX_SOURCES = 262144
"""Default bound of data sources whose drop counters are followed."""
MAX_FLOWS: int = _wire.MAX_FLOWS
"""Default bound of the flow keys (agent, port, direction, addresses, traffic class,
sampling rate) one interval holds: a sample of a new key beyond it is lost, counted."""
FULL_TABLES = ("flows", "counters", "discards")
"""An interval's tables: a sample that finds one full is lost (:meth:`Totals.lost`)."""


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
    interleaved: int = 0
    evictions: Counter[str] = field(default_factory=Counter)

    def add(self, other: Totals) -> None:
        self.datagrams += other.datagrams
        self.bytes += other.bytes
        self.samples.update(other.samples)
        self.rejects.update(other.rejects)
        self.lost_datagrams += other.lost_datagrams
        self.agent_restarts += other.agent_restarts
        self.agent_drops += other.agent_drops
        self.kernel_drops += other.kernel_drops
        self.interleaved += other.interleaved
        self.evictions.update(other.evictions)

    def lost(self) -> dict[str, int]:
        """Samples lost because an interval's table was full, by table."""
        return {table: self.evictions[table] for table in FULL_TABLES if self.evictions[table]}


def name_interleaved(agent: bytes, sub_agent: int) -> None:
    """Say once per (agent, sub-agent) that several sources send as it."""
    _log.warning(
        "sFlow agent %s sub-agent %d: several sources send interleaved sequences as this "
        "one agent (give each its own agent address or sub_agent_id); each sequence's loss "
        "is counted on its own", address_text(agent), sub_agent)

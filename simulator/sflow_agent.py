"""An emulated switch sFlow agent: 1-in-N packet sampling per data source, counter samples,
and sample packing into sFlow v5 datagrams (REFERENCE §6, §8).

Sampling is reproducible: each data source counts down a geometric skip drawn from
``random.Random(seed)``, so every offered packet is sampled with probability 1/N
independently, and offering a million packets costs one draw per sample, not per packet.

>>> from simulator.sflow_wire import ifindex
>>> agent = SflowAgent("192.0.2.1", sampling_rate=1, clock=lambda: 0.0)
>>> agent.offer(5, ifindex(5), ifindex(9), bytes(60))
1
>>> agent.flush()
>>> [len(d) for d in agent.datagrams()]
[152]
"""

from __future__ import annotations

import math
import random
import socket
import time
from collections.abc import Callable

from simulator.sflow_wire import CounterSample, FlowSample, IfCounters, datagram_header

_U32 = 0xFFFFFFFF


class SflowAgent:
    """One agent (``agent_ip``, ``sub_agent``): sequence numbers per datagram and, for flow
    and counter samples separately, per data source; one sample pool per data source.

    Finished datagrams go to ``collector`` (host, port) over UDP when one is given, else
    they wait in :meth:`datagrams`. ``clock`` (seconds, monotonic) sets the uptime.
    """

    def __init__(self, agent_ip: str, sampling_rate: int, *, sub_agent: int = 0,
                 collector: tuple[str, int] | None = None, max_datagram: int = 1400,
                 header_bytes: int = 128, seed: int = 0, expanded: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if sampling_rate < 1:
            raise ValueError("sampling_rate must be at least 1")
        self.agent_ip, self.sub_agent, self.sampling_rate = agent_ip, sub_agent, sampling_rate
        self.max_datagram, self.header_bytes, self.expanded = max_datagram, header_bytes, expanded
        self._rng, self._clock, self._start = random.Random(seed), clock, clock()
        self._log_keep = math.log1p(-1 / sampling_rate) if sampling_rate > 1 else 0.0
        self.pools: dict[int, int] = {}
        """Packets seen per data source (32-bit, wraps)."""
        self._skip: dict[int, int] = {}
        self._flow_seq: dict[int, int] = {}
        self._counter_seq: dict[int, int] = {}
        self.datagram_seq = 0
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._header_size = len(datagram_header(agent_ip, sub_agent, 0, 0, 0))
        self._out: list[bytes] = []
        self._collector = collector
        self._socket: socket.socket | None = None

    def offer(self, source_index: int, input: int, output: int, frame: bytes,
              count: int = 1) -> int:
        """``count`` packets like ``frame`` (an Ethernet frame without FCS) crossed the data
        source: each is sampled with probability 1/N. Returns the number sampled."""
        if count < 0:
            raise ValueError("count must not be negative")
        pool = self.pools.get(source_index, 0)
        skip = self._skip.get(source_index) or self._gap()
        left, taken = count, 0
        while skip <= left:
            left -= skip
            pool += skip
            taken += 1
            self._flow_sample(source_index, input, output, frame, pool)
            skip = self._gap()
        self._skip[source_index] = skip - left
        self.pools[source_index] = (pool + left) & _U32
        return taken

    def offer_many(self, source_index: int, input: int, output: int, frame: bytes,
                   packets: int) -> int:
        """``offer`` for a burst of ``packets``: the number sampled is binomial(packets,
        1/N), drawn in O(samples) through the skip countdown; the pool grows by ``packets``."""
        return self.offer(source_index, input, output, frame, packets)

    def counters(self, source_index: int, if_counters: IfCounters | None = None,
                 ethernet: tuple[int, ...] | None = None) -> None:
        """Queue a counter sample of the data source."""
        seq = self._counter_seq[source_index] = (self._counter_seq.get(source_index, 0) + 1) & _U32
        self._add(CounterSample(seq, source_index, if_counters, ethernet,
                                expanded=self.expanded).encode())

    def flush(self) -> None:
        """Finish the datagram being filled, if it holds any sample."""
        if not self._pending:
            return
        self.datagram_seq = (self.datagram_seq + 1) & _U32
        uptime = round((self._clock() - self._start) * 1000)
        data = datagram_header(self.agent_ip, self.sub_agent, self.datagram_seq, uptime,
                               len(self._pending)) + b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        self.send(data)

    def send(self, datagram: bytes) -> None:
        """Send a finished datagram to the collector, or keep it for :meth:`datagrams`."""
        if self._collector is None:
            self._out.append(datagram)
            return
        if self._socket is None:
            family = socket.AF_INET6 if ":" in self._collector[0] else socket.AF_INET
            self._socket = socket.socket(family, socket.SOCK_DGRAM)
        self._socket.sendto(datagram, self._collector)

    def datagrams(self) -> list[bytes]:
        """The finished datagrams kept since the last call (none are kept with a collector)."""
        out, self._out = self._out, []
        return out

    def close(self) -> None:
        """Flush, then close the socket."""
        self.flush()
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _gap(self) -> int:
        """Packets up to and including the next sampled one: geometric with p = 1/N."""
        if self._log_keep == 0.0:
            return 1
        return int(math.log(1.0 - self._rng.random()) / self._log_keep) + 1

    def _flow_sample(self, source_index: int, input: int, output: int, frame: bytes,
                     pool: int) -> None:
        seq = self._flow_seq[source_index] = (self._flow_seq.get(source_index, 0) + 1) & _U32
        self._add(FlowSample(seq, source_index, self.sampling_rate, pool & _U32, 0, input,
                             output, frame[:self.header_bytes], len(frame) + 4,
                             expanded=self.expanded).encode())

    def _add(self, sample: bytes) -> None:
        if self._header_size + len(sample) > self.max_datagram:
            raise ValueError(f"a {len(sample)}-byte sample does not fit in max_datagram")
        if self._header_size + self._pending_size + len(sample) > self.max_datagram:
            self.flush()
        self._pending.append(sample)
        self._pending_size += len(sample)

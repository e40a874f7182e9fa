"""The receiver over real UDP on loopback: two worker processes sharing one port."""

import asyncio
import errno
import os
import re
import socket
import time

import pytest

from correlator.attribution.accumulate import merge
from correlator.sflow.accounting import Totals
from correlator.sflow.receiver import ReceiverConfig, ReceiverPool, Worker, serve
from simulator import roce, sflow_wire
from simulator.sflow_wire import Datagram

SRC, DST = bytes([10, 101, 0, 2]), bytes([10, 101, 0, 3])
FRAME = roce.frame(bytes(6), bytes(6), SRC, DST, roce.payload(roce.WRITE_ONLY, 9, 1, 4096))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _datagram(agent: str, seq: int) -> bytes:
    samples = [sflow_wire.FlowSample(seq * 4 + i, 7, 1000, 1000 * (seq * 4 + i), 0,
                                     sflow_wire.ifindex(7), sflow_wire.ifindex(9),
                                     FRAME[:128], len(FRAME) + 4) for i in range(4)]
    return Datagram(agent, 0, seq, 1000 + seq, samples).encode()


def _send(port: int, agents: list[str], count: int, skip: int | None = None) -> None:
    senders = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in agents]
    try:
        for seq in range(1, count + 1):
            for sender, agent in zip(senders, agents, strict=True):
                if seq != skip:
                    sender.sendto(_datagram(agent, seq), ("127.0.0.1", port))
            if seq % 50 == 0:
                time.sleep(0.002)  # stay inside the socket buffers
    finally:
        for sender in senders:
            sender.close()


def test_two_worker_processes_share_the_port_and_lose_nothing():
    port = _free_port()
    agents = ["127.1.0.1", "127.1.0.2", "127.1.0.3", "127.1.0.4"]
    config = ReceiverConfig(host="127.0.0.1", port=port, workers=2, interval_s=0.5)
    with ReceiverPool(config) as pool:
        _send(port, agents, 300, skip=100)  # each agent's datagram 100 is "lost"
        intervals, totals = [], Totals()
        deadline = time.monotonic() + 15
        while totals.datagrams < 4 * 299 and time.monotonic() < deadline:
            interval, part = pool.next_interval(timeout_s=5)
            intervals.append(interval)
            totals.add(part)
    merged = merge(intervals)
    assert (totals.datagrams, totals.lost_datagrams, totals.agent_restarts) == (1196, 4, 0)
    assert totals.samples == {"flow": 4784} and totals.rejects == {}
    by_agent: dict[bytes, list[int]] = {}
    for segment in merged.segments:  # the samples may straddle interval boundaries
        for key, sums in segment.flows():
            mine = by_agent.setdefault(key[0], [0, 0, 0, 0])
            for i, value in enumerate(sums):
                mine[i] += value
    assert {socket.inet_ntoa(a) for a in by_agent} == set(agents)
    for sums in by_agent.values():
        length = len(FRAME + bytes(4))
        assert sums == [299 * 4, 299 * 4 * length * 1000, 299 * 4 * 1000,
                        299 * 4 * length * length * 1000 * 1000]


def test_a_taken_port_is_a_clear_error():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        in_use = re.escape(f"cannot bind 127.0.0.1:{port}: [Errno {errno.EADDRINUSE}] "
                           f"{os.strerror(errno.EADDRINUSE)}")
        with pytest.raises(OSError, match=in_use), \
                ReceiverPool(ReceiverConfig(host="127.0.0.1", port=port, workers=1)):
            pass


def test_the_asyncio_endpoint_feeds_a_worker():
    async def run():
        worker = Worker(time.time(), 3600.0)
        port = _free_port()
        transport = await serve(ReceiverConfig(host="127.0.0.1", port=port), worker)
        try:
            _send(port, ["127.1.0.9"], 20)
            for _ in range(100):
                await asyncio.sleep(0.01)
                if worker.loss.totals.datagrams == 20:
                    break
        finally:
            transport.close()
        now = time.time()
        return [*worker.close(now), worker.take(now)]  # an hour's boundary may fall inside

    parts = asyncio.run(run())
    assert sum(t.datagrams for _, t in parts) == 20
    assert sum(t.samples["flow"] for _, t in parts) == 80
    assert sum(s[0] for i, _ in parts for seg in i.segments for _, s in seg.flows()) == 80

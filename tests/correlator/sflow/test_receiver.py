"""The receiver over real UDP on loopback: two worker processes sharing one port.

What a loaded machine's kernel drops on a full socket buffer is read from the kernel
(``/proc/net/udp``, or the emptied socket's own queue), so every datagram is accounted:
received or dropped.
"""

import asyncio
import errno
import os
import re
import socket
import time

import pytest

from correlator.attribution.accumulate import merge
from correlator.sflow.accounting import Totals
from correlator.sflow.admission import Admission
from correlator.sflow.receiver import (
    ReceiverConfig,
    ReceiverPool,
    Worker,
    kernel_drops,
    serve,
)
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


def _send(port: int, agents: list[str], count: int, skip: int | None = None,
          pause: bool = True) -> None:
    senders = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in agents]
    try:
        for seq in range(1, count + 1):
            for sender, agent in zip(senders, agents, strict=True):
                if seq != skip:
                    sender.sendto(_datagram(agent, seq), ("127.0.0.1", port))
            if pause and seq % 50 == 0:
                time.sleep(0.002)  # stay inside the socket buffers
    finally:
        for sender in senders:
            sender.close()


def _seen(worker: Worker) -> int:
    """Datagrams the worker has accepted or rejected so far."""
    totals, _ = worker.peek()
    return totals.datagrams + totals.rejects.total()


def _backlog_drops() -> int:
    """Packets the kernel dropped before any socket, a CPU's input backlog being full
    (``/proc/net/softnet_stat``'s second column, summed over CPUs)."""
    with open("/proc/net/softnet_stat", encoding="ascii") as lines:
        return sum(int(line.split()[1], 16) for line in lines)


def _kernel_table_drops(port: int) -> int:
    """The kernel's ``drops`` summed over the IPv4 UDP sockets bound to ``port``."""
    with open("/proc/net/udp", encoding="ascii") as lines:
        rows = [line.split() for line in lines][1:]
    return sum(int(row[12]) for row in rows if int(row[1].split(":")[1], 16) == port)


@pytest.mark.parametrize("flood", [False, True], ids=["paced", "flooded"])
def test_two_worker_processes_share_the_port_and_account_for_every_datagram(flood):
    """Paced into large buffers, or flooded into the smallest the kernel usually drops from."""
    port = _free_port()
    agents = ["127.1.0.1", "127.1.0.2", "127.1.0.3", "127.1.0.4"]
    config = ReceiverConfig(host="127.0.0.1", port=port, workers=2, interval_s=0.5,
                            rcvbuf_bytes=65536 if flood else 8 << 20)
    with ReceiverPool(config) as pool:
        backlog = _backlog_drops()
        _send(port, agents, 300, skip=100, pause=not flood)  # each agent's datagram 100 is "lost"
        sent = 4 * 299
        intervals, totals = [], Totals()
        deadline = time.monotonic() + 60
        while totals.datagrams + totals.kernel_drops + _backlog_drops() - backlog < sent:
            assert time.monotonic() < deadline, totals
            interval, part = pool.next_interval(timeout_s=60)
            intervals.append(interval)
            totals.add(part)
        dropped, backlog = _kernel_table_drops(port), _backlog_drops() - backlog
    merged = merge(intervals)
    assert totals.kernel_drops == dropped
    # Every datagram was read or dropped at the socket, but those a busy machine dropped
    # before any socket (its input backlog full: loopback traffic queues there too).
    assert sent - backlog <= totals.datagrams + totals.kernel_drops <= sent
    # A kernel drop is a sequence gap too, unless it was among an agent's last datagrams
    # (or first: a worker kept from running while the flood began sees no gap at 100).
    if totals.kernel_drops == backlog == 0:
        assert totals.lost_datagrams == 4
    assert totals.lost_datagrams <= 4 + totals.kernel_drops + backlog
    assert totals.agent_restarts == 0
    assert totals.samples == {"flow": 4 * totals.datagrams} and totals.rejects == {}
    by_agent: dict[bytes, list[int]] = {}
    for segment in merged.segments:  # the samples may straddle interval boundaries
        for key, sums in segment.flows():
            mine = by_agent.setdefault(key[0], [0, 0, 0, 0])
            for i, value in enumerate(sums):
                mine[i] += value
    assert {socket.inet_ntoa(a) for a in by_agent} == set(agents)
    assert sum(sums[0] for sums in by_agent.values()) == 4 * totals.datagrams
    length = len(FRAME + bytes(4))
    for samples, frame_bytes, packets, squares in by_agent.values():
        assert (frame_bytes, packets, squares) == (samples * length * 1000, samples * 1000,
                                                   samples * length * length * 1000 * 1000)


def _flood(port: int, count: int, size: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for _ in range(count):
            sender.sendto(bytes(size), ("127.0.0.1", port))


def _drain(sock: socket.socket) -> int:
    """How many datagrams the socket's queue held (it is emptied)."""
    sock.setblocking(False)
    queued = 0
    while True:
        try:
            sock.recv(65535)
        except BlockingIOError:
            return queued
        queued += 1


def test_kernel_drops_are_what_a_full_buffer_did_not_queue():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.bind(("127.0.0.1", 0))
        assert kernel_drops(sock) == 0
        _flood(sock.getsockname()[1], 300, 1000)  # about 300 kB into a few kB of buffer
        queued = _drain(sock)
        assert 0 < queued < 300
        assert kernel_drops(sock) == 300 - queued


def test_a_worker_counts_the_kernel_drops_of_each_interval():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        _flood(port, 100, 1000)
        before = 100 - _drain(sock)  # dropped before the worker watches: not its loss
        worker = Worker(time.time(), 3600.0)
        worker.watch(sock)
        counted = []
        for _ in range(2):
            _flood(port, 200, 1000)
            queued = _drain(sock)
            counted.append((worker.take(time.time())[1].kernel_drops, 200 - queued))
    assert before > 0
    assert [got for got, _ in counted] == [dropped for _, dropped in counted]
    assert all(dropped > 0 for _, dropped in counted)


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
            deadline = time.monotonic() + 60
            sock = transport.socket
            while worker.peek()[0].datagrams + kernel_drops(sock) < 20:
                assert time.monotonic() < deadline, worker.peek()
                await asyncio.sleep(0.01)
            now = time.time()
            return [*worker.close(now), worker.take(now)]  # an hour's boundary may fall in
        finally:
            transport.close()

    parts = asyncio.run(run())
    datagrams = sum(t.datagrams for _, t in parts)
    assert datagrams + sum(t.kernel_drops for _, t in parts) == 20
    assert sum(t.samples["flow"] for _, t in parts) == 4 * datagrams
    assert sum(s[0] for i, _ in parts for seg in i.segments for _, s in seg.flows()) == \
        4 * datagrams


def test_only_known_agents_from_their_own_address_or_a_declared_relay_are_believed():
    """127.1.0.1 is a switch's agent (management address 127.1.0.11); 127.0.0.3 a declared
    relay; 127.0.0.2 forges datagrams claiming to be the switch, or an unknown one."""
    async def run():
        admission = Admission([("127.1.0.1", "127.1.0.11")], relays=["127.0.0.3/32"])
        worker = Worker(time.time(), 3600.0, admission=admission)
        port = _free_port()
        transport = await serve(ReceiverConfig(host="127.0.0.1", port=port), worker)
        sent = {"127.1.0.1": 3, "127.1.0.11": 2, "127.0.0.3": 4, "127.0.0.2": 5}
        try:
            for source, count in sent.items():
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
                    sender.bind((source, 0))
                    for seq in range(1, count + 1):
                        sender.sendto(_datagram("127.1.0.1", seq), ("127.0.0.1", port))
                    if source == "127.0.0.2":
                        sender.sendto(_datagram("127.1.0.2", 1), ("127.0.0.1", port))
            deadline = time.monotonic() + 60
            while _seen(worker) < 15:
                assert time.monotonic() < deadline, worker.peek()
                await asyncio.sleep(0.01)
            return worker.take(time.time())
        finally:
            transport.close()

    interval, totals = asyncio.run(run())
    assert (totals.datagrams, totals.kernel_drops) == (3 + 2 + 4, 0)
    assert totals.rejects == {"spoofed-source": 5, "unknown-agent": 1}
    assert totals.samples == {"flow": 4 * 9}
    assert sum(s[0] for seg in interval.segments for _, s in seg.flows()) == 4 * 9

"""A datagram counts in the interval it arrived in: the worker's boundaries, and the
receiver's kernel arrival times (not when the process got round to reading)."""

import asyncio
import socket
import time

from correlator.sflow.receiver import SO_TIMESTAMPNS, Receiver, Worker
from simulator import roce, sflow_wire
from simulator.sflow_wire import Datagram

FRAME = roce.frame(bytes(6), bytes(6), bytes([10, 101, 0, 2]), bytes([10, 101, 0, 3]),
                   roce.payload(roce.WRITE_ONLY, 9, 1, 1024))


def _datagram(seq: int, samples: int = 2) -> bytes:
    flows = [sflow_wire.FlowSample(seq * samples + i, 7, 100, 100 * (seq * samples + i), 0,
                                   sflow_wire.ifindex(7), sflow_wire.ifindex(9), FRAME,
                                   len(FRAME) + 4) for i in range(samples)]
    return Datagram("127.1.0.1", 0, seq, 1000 + seq, flows).encode()


def _flows(interval) -> int:
    return sum(s[0] for seg in interval.segments for _, s in seg.flows())


def test_intervals_close_when_a_datagram_of_the_next_one_arrives():
    worker = Worker(100.0, 10.0)  # intervals [100, 110), [110, 120), ...
    worker.handle(_datagram(1), 109.999)
    assert worker.closed == [] and worker.end == 110.0
    worker.handle(_datagram(2), 110.0)  # exactly on the boundary: the next interval
    ((first, totals),) = worker.closed
    assert (first.start, first.end, _flows(first), totals.datagrams) == (100.0, 110.0, 2, 1)
    worker.handle(_datagram(3), 131.0)  # after a quiet interval: that one closes empty
    assert [(i.start, i.end, _flows(i)) for i, _ in worker.close(131.5)] == [
        (100.0, 110.0, 2), (110.0, 120.0, 2), (120.0, 130.0, 0)]
    assert worker.closed == [] and worker.end == 140.0
    last, totals = worker.take(135.0)  # shutdown: the interval in progress, cut
    assert (last.start, last.end, _flows(last), totals.datagrams) == (130.0, 135.0, 2, 1)


def test_close_with_nothing_new_closes_empty_intervals_up_to_now():
    worker = Worker(100.0, 10.0)
    assert worker.close(109.9) == []
    assert [(i.start, i.end) for i, _ in worker.close(120.0)] == [(100.0, 110.0),
                                                                 (110.0, 120.0)]


def test_the_receiver_gives_the_kernels_arrival_time_not_the_read_time():
    """Datagrams queued while nothing reads the socket keep the time they arrived at (a
    counter sample is kept with its datagram's arrival time)."""
    async def run():
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.bind(("127.0.0.1", 0))
        worker = Worker(time.time(), 3600.0)
        before = time.time()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            for seq in range(1, 4):
                sample = sflow_wire.CounterSample(seq, 7, sflow_wire.IfCounters(7))
                sender.sendto(Datagram("127.1.0.1", 0, seq, 1000 + seq, [sample]).encode(),
                              sock.getsockname())
        sent = time.time()
        time.sleep(0.3)  # nothing reads the socket meanwhile
        read = time.time()
        receiver = Receiver(sock, worker)
        try:
            return [*worker.close(read), worker.take(time.time())], before, sent, read
        finally:
            receiver.close()

    parts, before, sent, read = asyncio.run(run())
    counters = [(seq, received) for interval, _ in parts  # (agent, sub-agent, received,
                for _, _, received, _, (seq, *_) in interval.counters]  # uptime, sample)
    assert [seq for seq, _ in counters] == [1, 2, 3]
    assert all(before <= at <= sent < read for _, at in counters), (before, counters, sent)

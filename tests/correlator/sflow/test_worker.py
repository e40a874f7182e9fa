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


class Recorder:
    """Stands in for a worker: keeps each datagram's arrival time."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, float]] = []

    def handle(self, data: bytes, at: float, source: str) -> None:
        self.seen.append((data, at))


def test_the_receiver_gives_the_kernels_arrival_time_not_the_read_time():
    async def run() -> tuple[list[tuple[bytes, float]], float, float, float]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.bind(("127.0.0.1", 0))
        recorder = Recorder()
        receiver = Receiver(sock, recorder)  # type: ignore[arg-type]
        try:
            before = time.time()
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
                for seq in range(1, 4):
                    sender.sendto(_datagram(seq), sock.getsockname())
            sent = time.time()
            time.sleep(0.3)  # blocks the loop: nothing is read meanwhile
            read = time.time()
            receiver.drain()
        finally:
            receiver.close()
        return recorder.seen, before, sent, read

    seen, before, sent, read = asyncio.run(run())
    assert [data for data, _ in seen] == [_datagram(seq) for seq in range(1, 4)]
    assert all(before <= at <= sent < read for _, at in seen), (before, seen, sent, read)

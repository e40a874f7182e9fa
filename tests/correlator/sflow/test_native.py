"""The Rust wire path against the Python decoder and accumulator as oracle: the simulator's
datagrams and 100,000 mutated ones (``FABCORR_DIFF_DATAGRAMS`` for more: ``make fuzz`` runs
1,000,000) give identical records, counts and reject reasons, and identical interval sums."""

import os
import random
from collections import Counter

import pytest

from correlator import _wire
from correlator.attribution.accumulate import Accumulator, Interval
from correlator.sflow import native
from simulator import roce, sflow_wire
from simulator.sflow_agent import SflowAgent
from tests.correlator.sflow.test_fuzz import _datagram, _mutate
from tests.sflow_oracle.decode import Decoder

DATAGRAMS = int(os.environ.get("FABCORR_DIFF_DATAGRAMS", "100000"))
MUTATIONS = 400  # per valid datagram
MAC = bytes.fromhex("020000000001")

def _python(data: bytes) -> tuple[object, dict[str, object]]:
    decoder = Decoder()
    result = decoder.decode(data)
    return result, {"datagrams": decoder.datagrams, "samples": dict(decoder.samples),
                    "rejects": dict(decoder.rejects), "skipped": dict(decoder.skipped)}


def _same_decode(data: bytes) -> None:
    assert native.decode(data) == _python(data), data.hex()


def _interval_sums(interval: Interval) -> tuple[object, ...]:
    return ([(s.start, [t.agents for t in s.tables], sorted(s.flows()))
             for s in interval.segments], interval.counters,
            interval.discards, interval.start, interval.end)


def _same_intervals(batch: list[tuple[float, bytes]], cut_at: int) -> dict[str, object]:
    """Both accumulators over ``batch``, cut before datagram ``cut_at``; the counts."""
    decoder, theirs = Decoder(), Accumulator(0.0)
    ours = _wire.Accumulator(0.0)
    for i, (at, data) in enumerate(batch):
        if i == cut_at:
            theirs.cut(at)
            ours.cut(at)
        datagram = decoder.decode(data)
        if datagram is not None:
            theirs.add(datagram, at)
        ours.add(data, at)
    end = batch[-1][0] + 1.0 if batch else 1.0
    interval, overflow = native.interval(ours.take(end))
    assert _interval_sums(interval) == _interval_sums(theirs.take(end))
    assert overflow == {"flows": 0, "counters": 0, "discards": 0}
    counts = ours.take_counts()
    assert (counts["datagrams"], counts["samples"], counts["rejects"], counts["skipped"]) == (
        decoder.datagrams, dict(decoder.samples), dict(decoder.rejects), dict(decoder.skipped))
    return counts


def _simulated() -> list[bytes]:
    """Datagrams of the simulator's sFlow agents: RoCEv2 of every class, IPv4 and IPv6,
    tagged and not, other IP traffic, non-IP frames, short headers, counter samples."""
    frames = []
    for n, opcode in enumerate((roce.SEND_ONLY, roce.WRITE_ONLY, roce.READ_REQUEST,
                                roce.READ_RESPONSE_ONLY, roce.ACK, 0x13, roce.CNP, 0x1F)):
        v6 = n % 2 == 1
        src = bytes([10, 0, n, 1]) if not v6 else bytes(15) + bytes([n])
        dst = bytes([10, 0, n, 2]) if not v6 else bytes(15) + bytes([n + 100])
        frames.append(roce.frame(MAC, MAC, src, dst, roce.payload(opcode, n, n, 1024),
                                 vlan=n if n % 3 == 0 else None))
    udp = roce.frame(MAC, MAC, bytes([10, 1, 0, 1]), bytes([10, 1, 0, 2]), b"x" * 64, dport=53)
    frames += [udp, udp[:23] + b"\x06" + udp[24:], MAC + MAC + b"\x08\x06" + bytes(46),
               frames[1][:50], frames[2][:20]]
    datagrams = []
    for agent_ip, expanded in (("192.0.2.1", False), ("2001:db8::7", True)):
        agent = SflowAgent(agent_ip, 1, seed=3, expanded=expanded, clock=lambda: 0.0)
        for i, frame in enumerate(frames):
            agent.offer(1 + i % 4, sflow_wire.ifindex(1 + i % 4),
                        sflow_wire.ifindex(9) if i % 2 else sflow_wire.UNKNOWN, frame)
            if i % 5 == 0:
                agent.counters(1 + i % 4, sflow_wire.IfCounters(1 + i % 4, in_octets=i << 33))
        agent.flush()
        datagrams += agent.datagrams()
    return datagrams


def test_the_simulators_datagrams_decode_the_same():
    datagrams = _simulated()
    assert len(datagrams) >= 4
    for data in datagrams:
        _same_decode(data)
    classes = {s.packet.traffic for d in datagrams for s in native.decode(d)[0].samples
               if getattr(s, "packet", None)}
    assert classes == {"roce-send", "roce-write", "roce-read-request", "roce-read-response",
                       "roce-ack", "roce-atomic", "roce-cnp", "roce-other", "udp", "tcp",
                       "non-ip"}
    _same_intervals([(float(i), d) for i, d in enumerate(datagrams)], len(datagrams) // 2)


def test_mutated_datagrams_decode_and_accumulate_the_same():
    rng = random.Random(14)
    compared = 0
    seen: Counter[str] = Counter()
    for _ in range(DATAGRAMS // MUTATIONS):
        valid = _datagram(rng)
        batch = []
        for _ in range(MUTATIONS):
            data = _mutate(valid, rng)
            _same_decode(data)
            batch.append((len(batch) * 0.01, data))
        compared += len(batch)
        counts = _same_intervals(batch, rng.randrange(len(batch) + 1))
        seen.update(counts["rejects"])  # type: ignore[arg-type]
        seen.update(counts["samples"])  # type: ignore[arg-type]
    assert compared == DATAGRAMS // MUTATIONS * MUTATIONS
    # every reason and every kind of sample was met, and nothing panicked
    assert set(seen) == {*_wire.REJECTS[:-1], "flow", "counters", "discard"}, seen


@pytest.mark.parametrize("data", [b"", b"\0\0\0\5" * 7, bytes(range(256)) * 4])
def test_datagrams_that_are_not_sflow(data):
    _same_decode(data)


def test_a_full_table_counts_what_it_cannot_keep():
    frames = [roce.frame(MAC, MAC, bytes([10, 0, 0, n]), bytes([10, 0, 1, n]),
                         roce.payload(roce.WRITE_ONLY, 1, 1, 64)) for n in range(5)]
    agent = SflowAgent("192.0.2.1", 1, clock=lambda: 0.0)
    for frame in frames * 2:
        agent.offer(1, sflow_wire.ifindex(1), sflow_wire.UNKNOWN, frame)
    agent.counters(1)
    agent.counters(2)
    agent.flush()
    datagrams = agent.datagrams()
    ours = _wire.Accumulator(0.0, max_flows=3, max_counters=1)
    assert ours.add_many([(0.5, d) for d in datagrams]) == len(datagrams) == 2
    interval, overflow = native.interval(ours.take(1.0))
    assert sorted(sums[0] for _, sums in interval.segments[0].flows()) == [2, 2, 2]
    assert overflow == {"flows": 4, "counters": 1, "discards": 0}
    assert len(interval.counters) == 1

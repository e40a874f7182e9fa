"""The emulated sFlow agent: sequence numbers, sample pools, datagram packing."""

from __future__ import annotations

import socket
import struct

import pytest

from simulator.sflow_agent import SflowAgent
from simulator.sflow_wire import IfCounters, ifindex

FRAME = bytes(range(200))


def _samples(datagram: bytes) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """(version, agent type, sub-agent, seq, uptime, count) of an IPv4 agent's datagram, and
    per sample (format, seq, source id, rate, pool, frame length, header length) for flow
    samples or (format, seq, source id) for counter samples."""
    head = struct.unpack_from("!II4xIIII", datagram)
    offset, samples = 28, []
    for _ in range(head[-1]):
        fmt, length = struct.unpack_from("!II", datagram, offset)
        body = datagram[offset + 8:offset + 8 + length]
        if fmt == 1:
            seq, source, rate, pool = struct.unpack_from("!4I", body)
            frame_length, header_length = struct.unpack_from("!12xI4xI", body, 32)
            samples.append((fmt, seq, source, rate, pool, frame_length, header_length))
        else:
            samples.append((fmt, *struct.unpack_from("!II", body)))
        offset += 8 + length
    assert offset == len(datagram)
    return head, samples


def test_every_packet_sampled_at_rate_one():
    clock = iter([10.0, 12.5]).__next__
    agent = SflowAgent("192.0.2.1", 1, sub_agent=2, header_bytes=64, clock=clock)
    assert agent.offer(5, ifindex(5), ifindex(9), FRAME, count=3) == 3
    agent.flush()
    [datagram] = agent.datagrams()
    assert _samples(datagram) == ((5, 1, 2, 1, 2500, 3), [
        (1, 1, 5, 1, 1, 204, 64), (1, 2, 5, 1, 2, 204, 64), (1, 3, 5, 1, 3, 204, 64)])
    assert agent.datagrams() == []


def test_sources_keep_their_own_sequences_and_pools():
    agent = SflowAgent("192.0.2.1", 1, clock=lambda: 0.0)
    agent.offer(1, 0, 0, FRAME[:60])
    agent.offer(2, 0, 0, FRAME[:60], count=2)
    agent.counters(2, IfCounters(2))
    agent.offer(1, 0, 0, FRAME[:60])
    agent.counters(2, IfCounters(2))
    agent.counters(1, None, tuple(range(13)))
    agent.flush()
    [datagram] = agent.datagrams()
    assert [s[:5] if s[0] == 1 else s for s in _samples(datagram)[1]] == [
        (1, 1, 1, 1, 1), (1, 1, 2, 1, 1), (1, 2, 2, 1, 2), (2, 1, 2), (1, 2, 1, 1, 2),
        (2, 2, 2), (2, 1, 1)]
    assert agent.pools == {1: 2, 2: 2}


def test_pool_counts_every_packet_and_samples_record_the_pool_when_taken():
    agent = SflowAgent("192.0.2.1", 1000, seed=7, clock=lambda: 0.0)
    taken = agent.offer_many(3, 0, 0, FRAME, packets=1_000_000)
    agent.flush()
    samples = [s for d in agent.datagrams() for s in _samples(d)[1]]
    assert agent.pools == {3: 1_000_000}
    assert taken == len(samples) == 1018
    assert [s[1] for s in samples] == list(range(1, taken + 1))
    pools = [s[4] for s in samples]
    assert pools == sorted(set(pools)) and pools[0] > 0 and pools[-1] <= 1_000_000
    assert {s[3] for s in samples} == {1000}


def test_offer_many_draws_like_one_packet_at_a_time():
    one_by_one, burst = (SflowAgent("192.0.2.1", 50, seed=3, clock=lambda: 0.0) for _ in "ab")
    for _ in range(20_000):
        one_by_one.offer(1, 0, 0, FRAME)
    burst.offer_many(1, 0, 0, FRAME, 5_000)
    burst.offer_many(1, 0, 0, FRAME, 15_000)
    for agent in (one_by_one, burst):
        agent.flush()
    assert one_by_one.datagrams() == burst.datagrams()
    assert one_by_one.pools == burst.pools == {1: 20_000}


def test_sample_counts_follow_the_sampling_rate():
    counts = [SflowAgent("192.0.2.1", 400, seed=seed, clock=lambda: 0.0)
              .offer_many(1, 0, 0, FRAME[:64], 400_000) for seed in range(20)]
    mean = sum(counts) / len(counts)
    assert abs(mean - 1000) < 3 * (1000 ** 0.5) / len(counts) ** 0.5  # 3 sigma of the mean


def test_sample_pool_wraps_at_32_bits():
    agent = SflowAgent("192.0.2.1", 1, clock=lambda: 0.0)
    agent.pools[4] = 0xFFFFFFFE
    agent.offer(4, 0, 0, FRAME[:60], count=3)
    agent.flush()
    assert [s[4] for s in _samples(agent.datagrams()[0])[1]] == [0xFFFFFFFF, 0, 1]
    assert agent.pools[4] == 1


def test_datagrams_stay_under_max_size_and_are_numbered():
    agent = SflowAgent("192.0.2.1", 1, max_datagram=1400, clock=lambda: 0.0)
    agent.offer(1, 0, 0, FRAME, count=20)  # 20 samples of 192 bytes: 7 per datagram
    assert len(agent.datagrams()) == 2  # full ones only, until flush
    agent.flush()
    agent.flush()  # nothing pending: no empty datagram
    assert len(agent.datagrams()) == 1 and agent.datagram_seq == 3
    agent = SflowAgent("192.0.2.1", 1, max_datagram=1400, clock=lambda: 0.0)
    agent.offer(1, 0, 0, FRAME, count=20)
    agent.flush()
    datagrams = agent.datagrams()
    assert [len(d) for d in datagrams] == [28 + 7 * 192, 28 + 7 * 192, 28 + 6 * 192]
    assert [(_samples(d)[0][3], len(_samples(d)[1])) for d in datagrams] == [
        (1, 7), (2, 7), (3, 6)]
    with pytest.raises(ValueError, match="does not fit"):
        SflowAgent("192.0.2.1", 1, max_datagram=200).offer(1, 0, 0, FRAME)


def test_datagrams_go_to_the_collector():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as collector:
        collector.bind(("127.0.0.1", 0))
        collector.settimeout(60)
        agent = SflowAgent("192.0.2.1", 1, collector=collector.getsockname(), clock=lambda: 0.0)
        agent.counters(1, IfCounters(1))
        agent.close()
        data = collector.recv(2048)
    assert agent.datagrams() == []
    assert _samples(data) == ((5, 1, 0, 1, 0, 1), [(2, 1, 1)])

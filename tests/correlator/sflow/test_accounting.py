"""Loss accounting per (agent, sub-agent), and every table keyed by what datagrams claim
bounded, with exact counts: the receive path's (the Rust core, through the worker), and
the same as the Python oracle's over random sequences."""

import logging
import random

from correlator import _wire
from correlator.sflow.accounting import Totals
from correlator.sflow.receiver import Worker
from correlator.sflow.records import Datagram, FlowSample
from simulator import sflow_wire
from tests.sflow_oracle.accounting import LossTracker

AGENT = bytes([127, 1, 0, 1])
FORMATS_KEPT = _wire.FORMATS_KEPT


class _Tracker:
    """Datagrams of one agent through a worker, and what it counted so far."""

    def __init__(self) -> None:
        self.worker = Worker(0.0, 3600.0)
        self.totals = Totals()

    def observe(self, seq: int, uptime: int, sub_agent: int = 0) -> None:
        data = sflow_wire.Datagram("127.1.0.1", sub_agent, seq, uptime, []).encode()
        self.worker.handle(data, 1.0)

    def counted(self) -> Totals:
        self.totals.add(self.worker.take(2.0)[1])
        return self.totals


def _follow(*datagrams: tuple[int, int], sub_agent: int = 0,
            tracker: _Tracker | None = None) -> _Tracker:
    """Observe (seq, uptime ms) datagrams of one agent in order."""
    tracker = tracker or _Tracker()
    for seq, uptime in datagrams:
        tracker.observe(seq, uptime, sub_agent)
    return tracker


def _counts(tracker: _Tracker) -> tuple[int, int, int, int]:
    t = tracker.counted()
    return t.datagrams, t.lost_datagrams, t.agent_restarts, t.interleaved


def test_a_bit_flipped_sequence_number_is_a_restart_not_half_a_million_lost():
    seqs = [seq if seq != 5 else 5 ^ 1 << 19 for seq in range(1, 11)]
    tracker = _follow(*((seq, 1000 * n) for n, seq in enumerate(seqs, 1)))
    # the genuine 5 is gone (its copy came corrupted): one lost, one implausible jump
    assert _counts(tracker) == (10, 1, 1, 0)


def test_a_forged_jump_under_the_old_limit_is_not_a_loss():
    tracker = _follow((1, 1000), (1048576, 2000), (2, 3000), (3, 4000))
    assert _counts(tracker) == (4, 0, 1, 0)  # it used to be 1,048,574 lost datagrams


def test_a_long_outage_is_lost_datagrams_once_the_sequence_goes_on_from_the_jump():
    tracker = _follow((1, 1000), (2, 2000), (100_002, 1_002_000))
    assert _counts(tracker) == (3, 0, 0, 0)  # one jump far ahead: unconfirmed
    _follow((100_003, 1_003_000), (100_005, 1_005_000), tracker=tracker)
    assert _counts(tracker) == (5, 99_999 + 1, 0, 0)


def test_small_gaps_sequence_wrap_and_a_restart():
    tracker = _follow((2**32 - 2, 5000), (1, 6000), (2, 7000), (1, 10), (2, 20))
    assert _counts(tracker) == (5, 2, 1, 0)  # 2**32 - 1 and 0 lost over the wrap


def test_interleaved_sources_are_followed_apart_named_once_and_counted(caplog):
    """Two sources misconfigured as one agent and sub-agent: neither loses anything."""
    a = [(seq, 10_000 + 10 * seq) for seq in range(1, 51)]
    b = [(7000 + seq, 900_000 + 10 * seq) for seq in range(1, 51)]
    with caplog.at_level(logging.WARNING, "correlator.sflow.accounting"):
        tracker = _follow(*(d for pair in zip(a, b, strict=True) for d in pair))
    # from A's third datagram on, every datagram switches between two going sequences
    assert _counts(tracker) == (100, 0, 0, 96)
    assert [r.getMessage() for r in caplog.records] == [
        "sFlow agent 127.1.0.1 sub-agent 0: several sources send interleaved sequences as "
        "this one agent (give each its own agent address or sub_agent_id); each sequence's "
        "loss is counted on its own"]
    _follow((52, 10_520), (7052, 900_520), tracker=tracker)  # each lost its 51st
    assert _counts(tracker) == (102, 2, 0, 98)


def test_100000_datagrams_of_new_sub_agents_formats_and_sources_keep_the_tables_bounded():
    worker = Worker(0.0, 3600.0, max_agents=1000, max_sources=2000)
    for n in range(100_000):
        data = sflow_wire.Datagram("127.1.0.1", n, 1, 1000, [
            sflow_wire.Raw(sflow_wire.data_format(n % 4096 + 1, n // 4096), b""),
            sflow_wire.FlowSample(1, n, 100, 100, 1, sflow_wire.ifindex(n),
                                  sflow_wire.ifindex(9), b"", 64)]).encode()
        worker.handle(data, 1.0)
    _, totals = worker.take(2.0)
    assert totals.datagrams == 100_000 and totals.rejects == {}
    assert worker.peek()[1] == {"sequences": 1000, "sources": 2000, "formats": FORMATS_KEPT}
    assert totals.evictions == {"sequences": 99_000, "sources": 98_000,
                                "formats": 100_000 - FORMATS_KEPT}
    assert worker.take(3.0)[1].evictions == {}  # counted once


def _random_datagrams(rng: random.Random, count: int) -> list[Datagram]:
    """Datagrams of a few agents and sub-agents whose sequences go on, skip, jump, restart,
    wrap and interleave; flow samples whose drop counters rise, stay and fall."""
    agents = [bytes([127, 1, 0, n]) for n in range(1, 4)]
    state = {(a, s): [rng.randrange(1 << 32), rng.randrange(1 << 20)]
             for a in agents for s in range(2)}
    drops = [0] * 4
    datagrams = []
    for _ in range(count):
        key = rng.choice(list(state))
        seq, uptime = state[key]
        move = rng.random()
        if move < 0.7:
            seq, uptime = seq + 1, uptime + rng.randrange(50)
        elif move < 0.8:
            seq, uptime = seq + rng.randrange(2, 40), uptime + rng.randrange(1000)
        elif move < 0.85:
            seq, uptime = seq + rng.randrange(1 << 16, 1 << 31), uptime + rng.randrange(10**6)
        elif move < 0.9:
            seq, uptime = rng.randrange(1 << 8), rng.randrange(1000)  # a restart
        elif move < 0.95:
            other = state.setdefault((key[0], key[1] + 7), [rng.randrange(1 << 32), uptime])
            seq, uptime = other  # another source on the same pair: interleaving
            other[0] += 1
            other[1] += 3
        else:
            seq = seq - rng.randrange(1, 10)  # back
        seq %= 1 << 32
        uptime %= 1 << 32
        state[key] = [seq, uptime]
        source = rng.randrange(4)
        drops[source] = max(0, drops[source] + rng.choice((0, 0, 1, 5, -3)))
        sample = FlowSample(1, 0, source, 100, 100, drops[source] % (1 << 32), source, 9,
                            64, 0, None)
        datagrams.append(Datagram(key[0], key[1] % 7, seq, uptime, [sample]))
    return datagrams


def test_the_receive_paths_accounting_is_the_oracles_over_random_sequences():
    rng = random.Random(13)
    for bound in (2, 16384):
        oracle, worker = LossTracker(bound, bound), Worker(0.0, 3600.0, max_agents=bound,
                                                               max_sources=bound)
        for datagram in _random_datagrams(rng, 20_000):
            samples = [sflow_wire.FlowSample(1, s.source_index, 100, 100, s.drops,
                                             sflow_wire.ifindex(s.source_index),
                                             sflow_wire.ifindex(9), b"", 64)
                       for s in datagram.samples]
            data = sflow_wire.Datagram(".".join(map(str, datagram.agent)), datagram.sub_agent,
                                       datagram.seq, datagram.uptime_ms, samples).encode()
            oracle.observe(datagram, len(data))
            worker.handle(data, 1.0)
        ours, theirs = worker.take(2.0)[1], oracle.take()
        assert (ours.datagrams, ours.bytes, ours.lost_datagrams, ours.agent_restarts,
                ours.agent_drops, ours.interleaved, ours.evictions) == (
            theirs.datagrams, theirs.bytes, theirs.lost_datagrams, theirs.agent_restarts,
            theirs.agent_drops, theirs.interleaved, theirs.evictions)
        assert theirs.lost_datagrams > 0 and theirs.agent_restarts > 0
        assert theirs.interleaved > 0 and theirs.agent_drops > 0

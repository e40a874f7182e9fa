"""Fuzzing: 100,000+ generated and mutated datagrams per run; nothing escapes the decoder,
and every datagram it refuses is counted under exactly one known reason."""

import random
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from correlator.sflow.decode import Decoder
from simulator import roce, sflow_wire
from simulator.sflow_wire import Datagram, IfCounters

REASONS = {"short-datagram", "bad-version", "bad-agent-type", "truncated-sample",
           "truncated-record", "bad-record"}
DATAGRAM_REASONS = {"short-datagram", "bad-version", "bad-agent-type"}
EXAMPLES, MUTATIONS = 250, 400  # 100,000 mutated datagrams, plus the generated ones


def _datagram(rng: random.Random) -> bytes:
    """A valid datagram of random flow, counter and discard samples."""
    samples = []
    for seq in range(rng.randint(1, 8)):
        ip = bytes(rng.randrange(256) for _ in range(4 if rng.random() < 0.8 else 16))
        other = bytes(reversed(ip))
        frame = roce.frame(bytes(6), bytes(6), ip, other,
                           roce.payload(rng.choice((4, 10, 12, 17, 0x81)), rng.randrange(1 << 24),
                                        rng.randrange(1 << 24), rng.choice((0, 64, 4096))),
                           vlan=rng.choice((None, 5)))
        kind = rng.random()
        if kind < 0.7:
            samples.append(sflow_wire.FlowSample(
                seq, rng.randrange(1, 1 << 16), rng.randint(1, 1 << 20), rng.randrange(1 << 32),
                0, sflow_wire.ifindex(3), sflow_wire.ifindex(4), frame[:rng.randint(0, 128)],
                len(frame) + 4, expanded=rng.random() < 0.3,
                extended_switch=(1, 2, 3, 4) if rng.random() < 0.3 else None))
        elif kind < 0.9:
            samples.append(sflow_wire.CounterSample(
                seq, 3, IfCounters(3, 6, 10**11, 1, 3, *range(14)), tuple(range(13))))
        else:
            samples.append(sflow_wire.DiscardSample(seq, 3, 1, sflow_wire.ifindex(3),
                                                    sflow_wire.dropped(259), 259, frame[:64],
                                                    len(frame)))
    agent = "192.0.2.1" if rng.random() < 0.7 else "2001:db8::1"
    return Datagram(agent, 0, rng.randrange(1 << 32), rng.randrange(1 << 32), samples).encode()


def _mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        how = rng.random()
        if how < 0.3 and buf:  # flip bytes
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif how < 0.6 and len(buf) >= 4:  # overwrite a 4-byte field: lengths, counts...
            at = rng.randrange(0, len(buf) - 3) & ~3
            value = rng.choice((0, 1, 3, 0xFFFFFFFF, 0x7FFFFFFF, rng.randrange(1 << 32),
                                struct.unpack_from("!I", buf, at)[0] + rng.randint(-8, 8)))
            struct.pack_into("!I", buf, at, value & 0xFFFFFFFF)
        elif how < 0.8:  # truncate
            del buf[rng.randrange(len(buf) + 1):]
        else:  # insert or delete a few bytes
            at = rng.randrange(len(buf) + 1)
            if rng.random() < 0.5:
                buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            else:
                del buf[at:at + rng.randint(1, 8)]
    return bytes(buf)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(st.integers(0, 2**63))
def test_no_exception_escapes_and_every_refusal_is_counted(seed):
    rng = random.Random(seed)
    decoder = Decoder()
    valid = _datagram(rng)
    assert decoder.decode(valid) is not None and sum(decoder.rejects.values()) == 0
    refused = 0
    for _ in range(MUTATIONS):
        before = sum(decoder.rejects[r] for r in DATAGRAM_REASONS)
        result = decoder.decode(_mutate(valid, rng))
        after = sum(decoder.rejects[r] for r in DATAGRAM_REASONS)
        assert after - before == (result is None)
        refused += result is None
    assert set(decoder.rejects) <= REASONS
    assert decoder.datagrams == 1 + MUTATIONS - refused

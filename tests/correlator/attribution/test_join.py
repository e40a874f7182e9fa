"""The Rust core's join (:mod:`correlator.attribution.join`) against the pure-Python join
it replaced (:mod:`tests.attribution_oracle.attribute`), on a capture whose addresses
change owner inside an interval and at an interval boundary, with an address nobody owns,
a port the fabric does not know, CNPs and two sampling rates.

Sums stay below 2^53 (frames <= 1,500 B at rates <= 1,000, under 2,000 samples), so the
reference's float sums are exact and both answers are identical to the last bit.
"""

from __future__ import annotations

import ipaddress
import math
import random
from dataclasses import replace

import pytest

from correlator import _wire
from correlator.attribution.attribute import attribute
from correlator.attribution.join import fabric_join
from correlator.collect.rates import Rates
from correlator.sflow.receiver import Worker
from simulator import roce, sflow_wire
from tests.attribution_oracle import attribute as reference
from tests.correlator.attribution.conftest import A0, A1, B0, B1, T0
from topology.build import build_graph

NOBODY_IP = "10.9.9.9"
MOVED = T0 + 14.0  # 10.101.0.3 goes from a/llm-worker-1 to b/cv-worker-1, inside interval 2
BOUNDARY = T0 + 20.0  # 10.101.0.2 leaves a/llm-worker-0 at the start of interval 3
AGENTS = {"127.1.0.1": (1001, 1002, 1003, 1099), "127.1.0.2": (1001, 1002, 1004)}
KNOWN_PORTS = {("127.1.0.1", 1001), ("127.1.0.1", 1002), ("127.1.0.1", 1003),
               ("127.1.0.2", 1001), ("127.1.0.2", 1002), ("127.1.0.2", 1004)}
OPCODES = (roce.WRITE_ONLY, roce.SEND_ONLY, roce.ACK, roce.CNP)


def _pod(address: str, at: float) -> str:
    """Who sent from ``address`` at ``at``: the test's own ground truth."""
    if address == A1:
        return "pod:a/llm-worker-1" if at < MOVED else "pod:b/cv-worker-1"
    if address == A0:
        return "pod:a/llm-worker-0" if at < BOUNDARY else "unattributed"
    return {B0: "pod:b/cv-worker-0", B1: "pod:b/cv-worker-1"}.get(address, "unattributed")


@pytest.fixture(scope="module")
def handed_over(facts):
    interfaces = []
    for fact in facts.pod_interfaces:
        if fact.pod == "llm-worker-1":
            fact = replace(fact, valid_from=0.0, valid_until=MOVED)
        elif fact.pod == "cv-worker-1":
            interfaces.append(replace(fact, ipv4=f"{A1}/16", valid_from=MOVED))
        elif fact.pod == "llm-worker-0":
            fact = replace(fact, valid_from=0.0, valid_until=BOUNDARY)
        interfaces.append(fact)
    return build_graph(replace(facts, pod_interfaces=tuple(interfaces)))


Truth = list[tuple[float, str, int, str, int]]


def _capture(seed: int = 14) -> tuple[list[tuple[float, bytes]], Truth]:
    """Datagrams over three 10 s intervals, and each sample as (time, agent, port,
    source, samples)."""
    rng = random.Random(seed)
    addresses = (A0, A1, B0, B1, NOBODY_IP)
    mac = bytes(6)
    datagrams, truth = [], []
    for n in range(240):
        at = T0 + 30.0 * n / 240
        agent = rng.choice(list(AGENTS))
        samples = []
        for _ in range(rng.randint(1, 7)):
            src, dst = rng.choice(addresses), rng.choice(addresses)
            port = rng.choice(AGENTS[agent])
            frame = roce.frame(mac, mac, ipaddress.ip_address(src).packed,
                               ipaddress.ip_address(dst).packed,
                               roce.payload(rng.choice(OPCODES), 7, n, rng.randrange(0, 1400)))
            samples.append(sflow_wire.FlowSample(
                n, port, rng.choice((256, 1000)), 1000 * n, 0, sflow_wire.ifindex(port),
                sflow_wire.ifindex(1), frame[:128], len(frame) + 4).encode())
            truth.append((at, agent, port, src, 1))
        header = sflow_wire.datagram_header(agent, 0, n + 1, 1000 + n, len(samples))
        datagrams.append((at, header + b"".join(samples)))
    return datagrams, truth


def _intervals(fabric, datagrams):
    """The intervals the receiver's worker closes, cut where an address changes owner
    (as a replay drives it)."""
    worker = Worker(T0, 10.0)
    changes = fabric.indexes.ips.changes(T0, math.inf)
    intervals = []
    for at, payload in datagrams:
        if at >= worker.end:
            intervals += [interval for interval, _ in worker.close(at)]
        while changes and changes[0] <= at:
            worker.cut(changes.pop(0))
        worker.handle(payload, at)
    return intervals + [interval for interval, _ in worker.close(worker.end)]


def test_the_core_join_answers_as_the_python_join(handed_over):
    datagrams, _ = _capture()
    intervals = _intervals(handed_over, datagrams)
    assert [len(i.segments) for i in intervals] == [1, 2, 1]
    rates = {"port:leaf01/Ethernet1": Rates("leaf01", "Ethernet1", T0 + 10, 10.0,
                                            {"in_octets": 3e6, "out_octets": 1e6}, {})}
    for interval in intervals:
        for kwargs in ({}, {"rates": rates}, {"top_pods": 1}):
            ours = attribute(handed_over, interval, **kwargs)
            theirs = reference.attribute(handed_over, interval, **kwargs)
            assert ours.unknown_ports == theirs.unknown_ports
            assert ours.unattributed_samples == theirs.unattributed_samples
            assert ours.links == theirs.links
    assert any(link.pairs[-1].name == "other" for link in
               attribute(handed_over, intervals[1], top_pods=1).links)


def test_samples_go_to_who_owned_their_source_when_they_came(handed_over):
    datagrams, truth = _capture()
    expected: dict[tuple[int, str, str], int] = {}
    unknown: dict[int, int] = {}
    for at, agent, port, src, samples in truth:
        number = int((at - T0) // 10)
        if (agent, port) not in KNOWN_PORTS:
            unknown[number] = unknown.get(number, 0) + samples
            continue
        switch = "leaf01" if agent == "127.1.0.1" else "leaf02"
        key = (number, f"port:{switch}/Ethernet{port - 1000}", _pod(src, at))
        expected[key] = expected.get(key, 0) + samples
    found: dict[tuple[int, str, str], int] = {}
    for number, interval in enumerate(_intervals(handed_over, datagrams)):
        result = attribute(handed_over, interval, top_pods=10)
        assert sum(result.unknown_ports.values()) == unknown.get(number, 0)
        for link in result.links:
            assert link.direction == "in"
            for share in link.pods:
                found[(number, link.port, share.name)] = share.samples
    assert found == expected
    assert {pod for (number, _, pod) in found if number == 1} >= {"pod:a/llm-worker-1",
                                                                  "pod:b/cv-worker-1"}


@pytest.mark.parametrize(("damage", "message"), [
    (lambda rows: rows[:-1], "not whole rows of 56"),
    (lambda rows: rows[:20] + b"\x02" + rows[21:], "names no direction or traffic class"),
    (lambda rows: rows[:21] + bytes([len(_wire.TRAFFIC)]) + rows[22:],
     "names no direction or traffic class"),
])
def test_the_core_refuses_damaged_flow_rows(handed_over, damage, message):
    interval = _intervals(handed_over, _capture()[0])[0]
    [table] = interval.segments[0].tables
    rows = b"".join(table.rows)
    assert len(rows) % 56 == 0 and len(rows) > 56
    segments = [(interval.start, table.agents, table.addresses, [damage(rows)])]
    with pytest.raises(ValueError, match=message):
        fabric_join(handed_over).core.attribute(segments, 10, {})

"""The emulated fabric's replay: the model played ahead, then sent and answered by the
clock (an injected one where timing is checked, so nothing depends on the machine's
speed)."""

import socket
import time
import zlib

from simulator.emulator import SEND_SPREAD, EmulatedFabric, send_schedule
from simulator.fabric_run import run
from simulator.scenario import scenario_from
from simulator.sflow_sender import pace
from simulator.traffic import TrafficModel

START = 1_800_000_000.0


def _model(**extra) -> TrafficModel:
    return TrafficModel(scenario_from({
        "fabric": {"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2, "vfs_per_pf": 2},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 20}],
        "sampling_rate": 100_000, "counter_every_s": 1, **extra}), start=START)


class FakeClock:
    """A clock that only moves when slept on; keeps every sleep."""

    def __init__(self, now: float) -> None:
        self.now, self.sleeps = now, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def test_prepare_keeps_what_a_fast_run_makes_tick_by_tick():
    fabric = EmulatedFabric(_model(seconds=2))
    ticks = fabric.prepare()
    fast = run(_model(seconds=2))
    assert [(t.start, t.end) for t in ticks] == [(START, START + 1), (START + 1, START + 2)]
    assert [d for t in ticks for d in t.datagrams] == [d for _, d, _ in fast.datagrams]
    assert fabric.samples == fast.samples > 0


def test_pace_sends_each_datagram_when_due_and_late_ones_at_once():
    clock = FakeClock(100.0)
    sent = []
    schedule = [(100.0, b"a"), (100.001, b"b"), (100.5, b"c"), (100.5, b"d"), (101.0, b"e")]
    assert pace(schedule, sent.append, clock, clock.sleep) == 0
    assert sent == [b"a", b"b", b"c", b"d", b"e"]
    assert clock.sleeps == [0.5, 0.5]  # b is due within AHEAD_S: no sleep for it
    late = FakeClock(101.8)  # more than 1 s behind a to d, 0.8 s behind e
    assert pace(schedule, sent.append, late, late.sleep) == 4 and late.sleeps == []


def test_the_collector_gets_every_datagram_from_the_sender_process():
    model = _model(seconds=2)
    model.start = time.time() - 60  # long over: everything goes out at once
    fabric = EmulatedFabric(TrafficModel(model.scenario, start=model.start))
    ticks = fabric.prepare()
    sent = [d for t in ticks for d in t.datagrams]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
        sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        sink.bind(("127.0.0.1", 0))
        sink.settimeout(60)
        fabric.run(sink.getsockname())
        received = [sink.recv(65535) for _ in sent]
    assert fabric.error is None and fabric.finished.is_set()
    assert received == sent  # one sender over loopback keeps the order


def test_a_ticks_datagrams_are_spread_over_its_first_half():
    fabric = EmulatedFabric(_model(seconds=2))
    ticks = fabric.prepare()
    schedule = send_schedule(ticks)
    assert [d for _, d in schedule] == [d for t in ticks for d in t.datagrams]
    for tick in ticks:
        times = [at for at, d in schedule if tick.start <= at < tick.end]
        n = len(tick.datagrams)
        assert times == [tick.start + i * SEND_SPREAD / n for i in range(n)]


def test_gnmi_switches_count_steadily_through_each_tick():
    model = _model(seconds=3)
    fabric = EmulatedFabric(model)
    ticks = fabric.prepare()
    leaf = fabric.targets["leaf01"]
    port = next(iter(leaf.interfaces))
    index = [name for name, _, _ in model.port_list()].index(("leaf01", port))
    first, second = (ticks[n].counters[index]["in_octets"] for n in (0, 1))
    read = leaf.counters
    assert first > 0 and second > first
    assert read(port, START - 1)["in_octets"] == 0  # before the traffic: the start values
    assert read(port, START + 0.25)["in_octets"] == int(first * 0.25)
    assert read(port, START + 1)["in_octets"] == first
    assert read(port, START + 1.5)["in_octets"] == first + int((second - first) * 0.5)
    assert read(port, START + 100) == ticks[2].counters[index]


def test_snmp_agents_show_the_counters_of_their_last_refresh():
    model = _model(seconds=8)
    fabric = EmulatedFabric(model, snmp={"leaf02"}, snmp_refresh_s=3.0)
    fabric.prepare()
    agent, gnmi = fabric.targets["leaf02"], fabric.targets["leaf01"]
    port = next(p.fact.name for p in agent.ports)
    phase = zlib.crc32(b"leaf02") % 1000 / 1000 * 3.0
    refresh = START + phase + 3.0  # a refresh inside the traffic: at 3.0 + phase s
    seen = agent.counters(port, refresh)
    assert agent.counters(port, refresh + 2.99) is seen  # unchanged until the next one
    assert agent.counters(port, refresh + 3.0) != seen
    # what it shows is what a fresh agent showed at the refresh
    fresh = EmulatedFabric(model_again := _model(seconds=8), snmp={"leaf02"},
                           snmp_refresh_s=0.0)
    fresh.prepare()
    assert model_again.port_list() == model.port_list()
    assert fresh.targets["leaf02"].counters(port, refresh) == seen
    assert gnmi.counters(next(iter(gnmi.interfaces)), refresh + 1) != \
        gnmi.counters(next(iter(gnmi.interfaces)), refresh + 2)

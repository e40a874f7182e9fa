"""The interval engine: the live service's path and a replay of the same datagrams and
counter readings give the same attributions, hotspots and view, record for record."""

import asyncio
import dataclasses
import gc
import json

import pytest

from correlator import engine as engine_module
from correlator.attribution.accumulate import Accumulator
from correlator.cli.sflow import read_capture
from correlator.data import to_data
from correlator.engine import Engine
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.config import service_config_from
from correlator.service.service import Service
from correlator.sflow.accounting import Totals
from correlator.sflow.pcap import Capture
from correlator.sflow.receiver import Worker
from correlator.sflow.records import CounterSample, Datagram, InterfaceCounters
from inventory.counters import PortCounters
from inventory.facts import FactSet, InterfaceFact, SwitchFact
from simulator.reported import read_log
from tests.correlator.service.example_view import SNAPSHOT, make_capture
from topology.build import build_graph
from topology.schema import port_id
from topology.snapshot import load_snapshot

INTERVAL_S, TELEMETRY_S = 5.0, 2.0


@pytest.fixture(scope="module")
def datagrams(tmp_path_factory):
    return list(read_capture(str(make_capture(tmp_path_factory.mktemp("engine")))))


def _readings(first: float, last: float) -> list[PortCounters]:
    """Telemetry of two ports every TELEMETRY_S over the capture, in time order: spine01's
    Ethernet1 receives 48 GB/s (96 % of its 400 Gb/s), leaf01's Ethernet5 sends 10 MB/s."""
    found, at = [], first - first % TELEMETRY_S
    while at <= last + TELEMETRY_S:
        elapsed = at - first
        found += [PortCounters("spine01", "Ethernet1", at,
                               {"in_octets": int(48e9 * elapsed), "out_octets": 0},
                               speed_bps=400_000_000_000),
                  PortCounters("leaf01", "Ethernet5", at,
                               {"in_octets": 0, "out_octets": int(1e7 * elapsed)},
                               speed_bps=400_000_000_000)]
        at += TELEMETRY_S
    return found


def _served(datagrams, readings, log):
    """What ``fabcorr run`` publishes for these datagrams and readings: the receiver's
    worker, the collector's sink, the interval loop and the corrections, as the service
    wires them (no sockets, no clock). Readings come up to each boundary only: an interval
    whose end falls between two readings is provisional, and corrected at the next."""
    config = service_config_from(
        {"topology": {"snapshot": str(SNAPSHOT)}, "sflow": {"listen": "127.0.0.1:0"},
         "telemetry": {"interval_s": TELEMETRY_S},
         "attribution": {"interval_s": INTERVAL_S, "log": str(log)}}, "test.yaml", {})
    service = Service(config)
    service.view = dataclasses.replace(service.view, fabric=load_snapshot(SNAPSHOT),
                                       ready=True)
    first = datagrams[0][0]
    worker = Worker(first - first % INTERVAL_S, INTERVAL_S)
    pending = list(readings)

    async def run():
        for at, payload in datagrams:
            while at >= worker.end:  # the interval loop wakes at the boundary
                boundary = worker.end
                while pending and pending[0].at <= boundary:
                    service.engine.readings([pending.pop(0)])
                await service._correct()
                for interval, totals in worker.close(boundary):
                    await service._publish(interval, totals)
            worker.handle(payload, at)
        while pending and pending[0].at <= worker.end:
            service.engine.readings([pending.pop(0)])
        await service._correct()
        for interval, totals in worker.close(worker.end):
            await service._publish(interval, totals)

    asyncio.run(run())
    return service


def test_the_service_and_a_replay_give_identical_attributions(datagrams, tmp_path):
    readings = _readings(datagrams[0][0], datagrams[-1][0])
    served = _served(datagrams, readings, tmp_path / "attribution.jsonl")
    fabric = load_snapshot(SNAPSHOT)
    replayed = replay(fabric, datagrams, readings,
                      ReplayConfig(INTERVAL_S, telemetry_interval_s=TELEMETRY_S))
    logged = [json.loads(line) for line in
              (tmp_path / "attribution.jsonl").read_text().splitlines()]
    # datagrams from 1767229200.999 to 1767229229.999: six 5 s intervals; readings every
    # 2 s from 1767229200: those ending at :05, :15 and :25 are provisional when published,
    # and corrected before the next is
    first = replayed.attributions[0].start
    assert [(r["attribution"]["start"] - first, r["attribution"]["provisional"],
             r["attribution"]["replaces"]) for r in logged] == [
        (0, True, False), (0, False, True), (5, False, False), (10, True, False),
        (10, False, True), (15, False, False), (20, True, False), (20, False, True),
        (25, False, False)]
    last = list({r["attribution"]["start"]: r for r in logged}.values())
    assert [record["attribution"] for record in last] == read_log(
        tmp_path / "attribution.jsonl")[0]
    # the replay has every reading in time: no interval of it is provisional, and the
    # corrections are its numbers
    assert len(replayed.attributions) == len(last) == 6
    assert [{**record["attribution"], "replaces": False} for record in last] == to_data(
        replayed.attributions)
    assert sum(r["received"]["datagrams"] for r in last) == len(datagrams) \
        == replayed.totals.datagrams
    view = replay_view(fabric, replayed)
    assert to_data(served.view.attribution) == to_data(view.attribution)
    # hot from the telemetry: the cable leaf01:Ethernet5 -> spine01:Ethernet1, by its sender
    assert [(h.port, h.direction) for h in view.hotspots] == [
        (port_id("leaf01", "Ethernet5"), "out")]
    # a port carried on is judged once its interval is corrected: the service's hotspots
    # are the replay's
    assert to_data(served.view.hotspots) == to_data(view.hotspots)
    assert to_data(served.view.ended) == to_data(view.ended)
    assert to_data(served.view.rates) == to_data(view.rates)
    assert to_data(served.view.sflow) == to_data(view.sflow)
    # the telemetry was used: spine01:Ethernet1 in is 48 GB/s over every whole interval
    spine = [link for link in view.attribution.links
             if (link.port, link.direction) == (port_id("spine01", "Ethernet1"), "in")]
    assert [link.counter_bytes for link in spine] == [pytest.approx(48e9 * INTERVAL_S)]


def test_a_capture_read_by_the_core_replays_as_its_datagrams_handed_over(tmp_path):
    pcap = make_capture(tmp_path)
    fabric, config = load_snapshot(SNAPSHOT), ReplayConfig(INTERVAL_S)
    handed = replay(fabric, list(read_capture(str(pcap))), config=config)
    read = replay(fabric, Capture(pcap), config=config)
    assert len(read.attributions) == 6 and read.totals.datagrams > 0
    assert (read.attributions, read.hotspots, read.totals) == \
        (handed.attributions, handed.hotspots, handed.totals)


def test_telemetry_rates_are_the_increase_over_exactly_the_interval():
    """Readings at 8, 12 and 21 s of a counter counting steadily between them: [10, 20)
    gets 200 of the 400 bytes of [8, 12) and 800 of the 900 of [12, 21), 100 B/s; it can
    close once the reading after 20 s is in. The next interval, with no reading after its
    end, is carried on at the last rate, provisionally."""
    engine = Engine(telemetry_interval_s=5.0)
    fabric = build_graph(FactSet())
    engine.readings([PortCounters("leaf01", "Ethernet1", t, {"in_octets": v})
                     for t, v in ((8.0, 0), (12.0, 400))])
    assert not engine.covered(20.0) and engine.counter_wait_s == 10.0
    engine.readings([PortCounters("leaf01", "Ethernet1", 21.0, {"in_octets": 1300})])
    assert engine.covered(20.0)
    engine.close(fabric, Accumulator(10.0).take(20.0), Totals())
    rates = engine.rates[port_id("leaf01", "Ethernet1")]
    assert (rates.per_second, rates.interval_s, rates.at, rates.provisional) == (
        {"in_octets": 100.0}, 10.0, 20.0, False)
    engine.close(fabric, Accumulator(20.0).take(30.0), Totals())
    rates = engine.rates[port_id("leaf01", "Ethernet1")]
    assert (rates.per_second, rates.provisional) == ({"in_octets": 100.0}, True)


def _in_bytes(result, port):
    return next(link.counter_bytes for link in result.links
                if (link.port, link.direction) == (port, "in"))


def test_a_provisional_interval_is_corrected_once_the_reading_past_its_end_comes():
    """Readings at 8, 12 and 19 s (100 B/s), then at 23 s (300 B/s since 19 s). [10, 20)
    closed before the 23 s reading is carried on at 100 B/s: 1,000 B, provisional. Once it
    comes the counter at 20 s is 1,100 + 900 x 1/4 = 1,325 and at 10 s 0 + 400 x 2/4 = 200,
    so the correction has 1,125 B: what an engine that had the reading in time gives."""
    fabric, port = load_snapshot(SNAPSHOT), port_id("leaf01", "Ethernet5")
    early = [PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets})
             for at, octets in ((8.0, 0), (12.0, 400), (19.0, 1100))]
    late = PortCounters("leaf01", "Ethernet5", 23.0, {"in_octets": 2000})
    received = Totals(datagrams=7)
    engine = Engine(telemetry_interval_s=5.0)
    engine.readings(early)
    view = engine.close(fabric, Accumulator(10.0).take(20.0), received)
    assert (view.attribution.provisional, view.attribution.replaces,
            _in_bytes(view.attribution, port)) == (True, False, 1000.0)
    assert engine.provisional == (10.0,) and engine.corrections() == []
    engine.readings([late])
    [(corrected, totals)] = engine.corrections()
    assert (corrected.start, corrected.provisional, corrected.replaces,
            _in_bytes(corrected, port), totals) == (10.0, False, True, 1125.0, received)
    assert engine.provisional == () and engine.corrections() == []
    assert engine.rates[port].per_second == {"in_octets": 112.5}  # the last interval's
    in_time = Engine(telemetry_interval_s=5.0)
    in_time.readings([*early, late])
    expected = in_time.close(fabric, Accumulator(10.0).take(20.0), received).attribution
    assert to_data(corrected) == {**to_data(expected), "replaces": True}


def test_an_interval_whose_reading_never_comes_stays_provisional_and_is_let_go(caplog):
    """The port is never read after 19 s: each interval from [10, 20) on is provisional
    and kept 60 s past its end (more than 10 telemetry periods of 5 s), no longer; giving
    up is logged once for the same ports behind. A reading at last (150 B/s since 19 s)
    corrects only those still kept, from where the ones let go were carried on to: summed
    over the intervals, the bytes are the counter's increase."""
    fabric, port = load_snapshot(SNAPSHOT), port_id("leaf01", "Ethernet5")
    engine = Engine(telemetry_interval_s=5.0)
    engine.readings([PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets})
                     for at, octets in ((8.0, 0), (12.0, 400), (19.0, 1100))])
    kept, first = [], {}
    for start in range(10, 100, 10):
        view = engine.close(fabric, Accumulator(float(start)).take(start + 10.0), Totals())
        assert view.attribution.provisional and engine.corrections() == []
        kept.append(engine.provisional)
        first[float(start)] = _in_bytes(view.attribution, port)
    assert kept[6:] == [tuple(float(s) for s in range(10, 80, 10)),
                        tuple(float(s) for s in range(20, 90, 10)),
                        tuple(float(s) for s in range(30, 100, 10))]
    assert [r.getMessage() for r in caplog.records if "stay provisional" in r.getMessage()
            ] == ["1 interval(s) from 10.000 stay provisional: no counter readings past "
                  "their end within 60 s from leaf01/Ethernet5"]
    assert first[10.0] == first[20.0] == 1000.0  # carried on at 100 B/s
    engine.readings([PortCounters("leaf01", "Ethernet5", 101.0, {"in_octets": 13400})])
    corrected = {c.start: _in_bytes(c, port) for c, _ in engine.corrections()}
    # from 2,200 at 30 s (as carried on) to 1,100 + 150 x 21 = 4,250 at 40 s
    assert corrected == {30.0: 2050.0, **{float(s): 1500.0 for s in range(40, 100, 10)}}
    assert engine.provisional == ()
    # 0 + 400 x 2/4 at 10 s, 1,100 + 150 x 81 at 100 s
    assert first[10.0] + first[20.0] + sum(corrected.values()) == 13250.0 - 200.0


def test_an_interval_let_go_keeps_its_bytes_when_a_late_reading_moved_its_end():
    """[10, 20) is published carried on at 100 B/s from the readings at 8 and 12 s: from
    200 at 10 s to 1,200 at 20 s, 1,000 B. Then a poll sent at 19 s answers (2,500: 300
    B/s since 12 s), still before its end; nothing is read past 20 s for 60 s, so it is let
    go as published, and the next interval starts at 1,200, not at the 2,800 the late
    reading carries on to. At 91 s (16,900: 200 B/s since 19 s) the intervals still kept
    are corrected: summed over the intervals the bytes are the counter's increase from
    10 s (200) to 90 s (16,700), none lost between the one let go and the next."""
    fabric, port = load_snapshot(SNAPSHOT), port_id("leaf01", "Ethernet5")
    engine, logged = Engine(telemetry_interval_s=5.0), {}
    engine.readings([PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets})
                     for at, octets in ((8.0, 0), (12.0, 400))])
    for start in range(10, 90, 10):
        view = engine.close(fabric, Accumulator(float(start)).take(start + 10.0), Totals())
        logged[float(start)] = _in_bytes(view.attribution, port)
        if start == 10:
            engine.readings([PortCounters("leaf01", "Ethernet5", 19.0, {"in_octets": 2500})])
    assert logged[10.0] == 1000.0 and engine.provisional == tuple(
        float(s) for s in range(20, 90, 10))
    engine.readings([PortCounters("leaf01", "Ethernet5", 91.0, {"in_octets": 16900})])
    corrected = {c.start: _in_bytes(c, port) for c, _ in engine.corrections()}
    assert corrected[20.0] == 4700.0 - 1200.0  # 2,500 + 200 x 11 at 30 s
    assert logged[10.0] + sum(corrected.values()) == 16700.0 - 200.0


def test_a_carried_on_rate_neither_heats_nor_cools_a_hotspot():
    """leaf01:Ethernet5 (8 kb/s, so 1,000 B/s is 100 %) receives 1,000 B/s until 21 s,
    then 100 B/s. [10, 20) is hot; [20, 30), closed before a reading past 30 s, is carried
    on at 1,000 B/s: hot, provisionally. Judged then, it would make a hotspot of two hot
    intervals; it waits for its correction (190 B/s: cool), and no hotspot is found. One
    that stays provisional is judged with the port held: no hotspot either."""
    fabric, port = load_snapshot(SNAPSHOT), port_id("leaf01", "Ethernet5")
    readings = [PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets}, speed_bps=8000)
                for at, octets in ((8.0, 0), (12.0, 4000), (21.0, 13000))]
    late = PortCounters("leaf01", "Ethernet5", 31.0, {"in_octets": 14000}, speed_bps=8000)
    for corrected in (True, False):
        engine = Engine(telemetry_interval_s=5.0)
        engine.readings(readings)
        engine.close(fabric, Accumulator(10.0).take(20.0), Totals())
        view = engine.close(fabric, Accumulator(20.0).take(30.0), Totals())
        assert view.attribution.provisional and view.hotspots == ()
        assert engine.rates[port].in_utilization == 1.0
        if corrected:
            engine.readings([late])
            [(correction, _)] = engine.corrections()
            assert _in_bytes(correction, port) == 1900.0
        else:  # given up 60 s after its end: judged with the port held
            engine.close(fabric, Accumulator(30.0).take(91.0), Totals())
            assert engine.provisional == (30.0,)
        assert engine.hotspots == ()
    # hot again from 31 s: judged as they close, two hot intervals make the hotspot
    engine = Engine(telemetry_interval_s=5.0)
    engine.readings([*readings, late, *(
        PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets}, speed_bps=8000)
        for at, octets in ((41.0, 24000), (51.0, 34000)))])
    for start in (10.0, 20.0, 30.0, 40.0):
        view = engine.close(fabric, Accumulator(start).take(start + 10.0), Totals())
    # the cable's direction by its sender: spine01:Ethernet1 out
    assert [(h.port, h.direction, h.start) for h in view.hotspots] == [
        (port_id("spine01", "Ethernet1"), "out", 30.0)]


def test_sflow_counter_samples_are_dated_by_the_agent_and_give_interval_rates():
    """A port with only sFlow counter samples: each sample dated by its datagram's uptime
    on the agent's clock (the least arrival - uptime so far), then the same timelines as
    telemetry. Samples (uptime, arrival, in_octets): (10 s, 1000.5, 0), (12 s, 1002.2,
    3,000), (14 s, 1004.9 held up 0.7 s, 7,000), (16 s, 1006.2, 11,000): moments at
    1000.5, 1002.2, 1004.2 (not 1004.9) and 1006.2. [1002, 1004) carries 3,000/1.7 B/s
    on past 1002.2; [1004, 1006) runs from 6,600 at 1004 (between 1002.2 and 1004.2) to
    10,600 carried on past 1004.2, 2,000 B/s (by arrival it would be 1,481 B/s). Where
    the port has telemetry too, its telemetry's rates are used."""
    engine = Engine(telemetry_interval_s=1.0)
    fabric = build_graph(FactSet(switches=(SwitchFact("leaf01", sflow_agent="192.0.2.1"),),
                                 interfaces=(InterfaceFact("leaf01", "Ethernet5", 5),)))
    port = port_id("leaf01", "Ethernet5")
    found = []
    for seq, (start, uptime_ms, arrival, octets) in enumerate((
            (1000.0, 10_000, 1000.5, 0), (1002.0, 12_000, 1002.2, 3_000),
            (1004.0, 14_000, 1004.9, 7_000), (1006.0, 16_000, 1006.2, 11_000))):
        accumulator = Accumulator(start)
        counters = InterfaceCounters(5, 6, 10**9, 1, 3, octets, *[0] * 13)
        accumulator.add(Datagram(b"\xc0\x00\x02\x01", 0, seq + 1, uptime_ms,
                                 [CounterSample(seq + 1, 0, 5, counters, None)]), arrival)
        engine.close(fabric, accumulator.take(start + 2.0), Totals())
        rates = engine.rates.get(port)
        found.append(rates and (round(rates.per_second["in_octets"], 6), rates.provisional))
    assert found == [None, (round(3000 / 1.7, 6), True), (2000.0, True), (2000.0, True)]
    engine.readings([PortCounters("leaf01", "Ethernet5", t, {"in_octets": v})
                     for t, v in ((1007.0, 0), (1011.0, 4000))])
    engine.close(fabric, Accumulator(1008.0).take(1010.0), Totals())
    assert engine.rates[port].per_second == {"in_octets": 1000.0}


def _stale_agent(quiet_s: float, busy_s: float, rate: int, until: float
                 ) -> list[PortCounters]:
    """leaf01:Ethernet5 read every second at k + 0.5 from an agent that refreshes its
    counter every 3 s (net-snmp's cache): quiet (1,000) for ``quiet_s``, then ``rate`` B/s
    for ``busy_s``, then quiet again."""
    def counter(t: float) -> int:
        return 1000 + int(rate * min(max(0.0, t - quiet_s), busy_s))
    return [PortCounters("leaf01", "Ethernet5", k + 0.5, {"in_octets": counter(k - k % 3)})
            for k in range(int(until))]


@pytest.mark.parametrize("quiet_s", [10.0, 90.0])
def test_summed_over_intervals_the_bytes_of_a_stale_agent_are_its_counters_increase(quiet_s):
    """1 s intervals closed as the service closes them (once covered, or after the
    engine's wait), corrected as readings come, the last record per start read: a port
    quiet before its traffic (shorter, and longer, than a provisional interval is kept)
    has counter bytes in every interval, and their sum is exactly what it counted."""
    fabric, port = load_snapshot(SNAPSHOT), port_id("leaf01", "Ethernet5")
    until = quiet_s + 40.0
    pending = _stale_agent(quiet_s, 10.0, 100_000, until)
    engine, logged = Engine(telemetry_interval_s=1.0), {}
    for start in range(1, int(until) - 10):
        end = start + 1.0
        deadline = end + engine.counter_wait_s
        while pending and (pending[0].at <= end or (not engine.covered(end)
                                                    and pending[0].at <= deadline)):
            engine.readings([pending.pop(0)])
        result = engine.close(fabric, Accumulator(float(start)).take(end), Totals()).attribution
        for found in [result, *(c for c, _ in engine.corrections())]:
            logged[found.start] = next((link.counter_bytes for link in found.links
                                        if (link.port, link.direction) == (port, "in")), None)
    assert None not in logged.values(), logged
    assert sum(logged.values()) == 1_000_000


@pytest.fixture
def collector_on():
    """The cyclic collector on for the test, as it was after (an in-process ``fabcorr
    attribute`` earlier in the session turns it off, as its process would)."""
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_an_interval_is_attributed_and_corrected_with_the_cyclic_collector_paused(
        monkeypatch, collector_on):
    """Closing and correcting an interval make a burst of objects kept: the collector
    waits until they are made, and runs again after (or stays off if it was off)."""
    seen = []

    def attribute(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    real = engine_module.attribute
    monkeypatch.setattr(engine_module, "attribute", attribute)
    fabric = load_snapshot(SNAPSHOT)
    engine = Engine(telemetry_interval_s=5.0)
    engine.readings([PortCounters("leaf01", "Ethernet5", at, {"in_octets": octets})
                     for at, octets in ((8.0, 0), (12.0, 400), (19.0, 1100))])
    engine.close(fabric, Accumulator(10.0).take(20.0), Totals())
    engine.readings([PortCounters("leaf01", "Ethernet5", 23.0, {"in_octets": 2000})])
    assert len(engine.corrections()) == 1
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    engine.close(fabric, Accumulator(20.0).take(30.0), Totals())
    assert not gc.isenabled()

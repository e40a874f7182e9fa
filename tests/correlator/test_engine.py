"""The interval engine: the live service's path and a replay of the same datagrams and
counter readings give the same attributions, hotspots and view, record for record."""

import asyncio
import dataclasses
import json

import pytest

from correlator.attribution.accumulate import Accumulator
from correlator.cli.sflow import read_capture
from correlator.data import to_data
from correlator.engine import Engine
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.config import service_config_from
from correlator.service.service import Service
from correlator.sflow.accounting import Totals
from correlator.sflow.receiver import Worker
from inventory.counters import PortCounters
from inventory.facts import FactSet
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
    worker, the collector's sink and the interval loop, as the service wires them (no
    sockets, no clock)."""
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
                for interval, totals in worker.close(boundary):
                    await service._publish(interval, totals)
            worker.handle(payload, at)
        while pending and pending[0].at <= worker.end:
            service.engine.readings([pending.pop(0)])
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
    # datagrams from 1767229200.999 to 1767229229.999: six 5 s intervals
    assert len(replayed.attributions) == len(logged) == 6
    assert [record["attribution"] for record in logged] == to_data(replayed.attributions)
    assert sum(r["received"]["datagrams"] for r in logged) == len(datagrams) \
        == replayed.totals.datagrams
    view = replay_view(fabric, replayed)
    assert to_data(served.view.attribution) == to_data(view.attribution)
    # hot from the telemetry: the cable leaf01:Ethernet5 -> spine01:Ethernet1, by its sender
    assert [(h.port, h.direction) for h in view.hotspots] == [
        (port_id("leaf01", "Ethernet5"), "out")]
    assert to_data(served.view.hotspots) == to_data(view.hotspots)
    assert to_data(served.view.ended) == to_data(view.ended)
    assert to_data(served.view.rates) == to_data(view.rates)
    assert to_data(served.view.sflow) == to_data(view.sflow)
    # the telemetry was used: spine01:Ethernet1 in is 48 GB/s over every whole interval
    spine = [link for link in view.attribution.links
             if (link.port, link.direction) == (port_id("spine01", "Ethernet1"), "in")]
    assert [link.counter_bytes for link in spine] == [pytest.approx(48e9 * INTERVAL_S)]


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

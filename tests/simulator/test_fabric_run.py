"""Running the emulated fabric: per-switch sFlow agents sample what the model says
crossed each port, as real datagrams (simulator.emulator sends them in real time)."""

import ipaddress
import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

from correlator.sflow.decode import Decoder
from correlator.sflow.records import CounterSample, FlowSample
from simulator.fabric_agent import FabricAgent
from simulator.fabric_run import run, stream
from simulator.flow_frames import SampledFrame, data_frame
from simulator.scenario import load_scenario, scenario_from
from simulator.sflow_agent import SflowAgent
from simulator.traffic import TrafficModel

SCENARIOS = Path(__file__).parents[2] / "simulator" / "scenarios"


def _small(**extra) -> TrafficModel:
    return TrafficModel(scenario_from({
        "fabric": {"nodes": 2, "rails": 1, "leaves_per_rail": 2, "spines": 2, "vfs_per_pf": 2},
        "jobs": [{"tenant": "a", "name": "llm", "pods": 2, "gbps": 20}],
        "sampling_rate": 100_000, "counter_every_s": 1, **extra}))


def _decoded(datagrams):
    decoder = Decoder()
    found = [(at, decoder.decode(data)) for at, data, _ in datagrams]
    assert not decoder.rejects and not decoder.skipped
    return found


def test_samples_estimate_the_ground_truth():
    model = TrafficModel(replace(load_scenario(SCENARIOS / "demo.yaml"), sampling_rate=80_000))
    result = run(model)
    agents = {s.sflow_agent: s.name for s in model.facts.switches}
    ports = {(switch, ifindex): port for (switch, port), ifindex, _ in model.port_list()}
    samples: Counter = Counter()
    estimate: Counter = Counter()
    counted = 0
    for at, datagram in _decoded(result.datagrams):
        switch = agents[ipaddress.ip_address(datagram.agent).compressed]
        assert model.start < at < model.start + model.scenario.seconds
        for sample in datagram.samples:
            if isinstance(sample, FlowSample):
                assert sample.input == sample.source_index  # ingress sampling
                port = ports[(switch, sample.source_index)]
                samples[(switch, port)] += 1
                estimate[(switch, port)] += sample.sampling_rate * sample.frame_length
            else:
                assert isinstance(sample, CounterSample)
                counted += 1
    assert sum(samples.values()) == result.samples > 50_000
    assert counted == len(ports) * model.scenario.seconds // model.scenario.counter_every_s
    truth: Counter = Counter()
    for interval in result.truth:
        for key, octets in interval.bytes.items():
            if key.direction == "in":
                truth[(key.switch, key.port)] += octets
    assert samples.keys() == {port for port, octets in truth.items() if octets}
    for port, count in samples.items():
        bound = 4 / math.sqrt(count)  # four standard errors of a sampled count
        assert abs(estimate[port] - truth[port]) <= bound * truth[port], port


def test_counter_samples_carry_the_model_counters():
    model = _small(seconds=3)
    result = run(model)
    last = {}
    for _, datagram in _decoded(result.datagrams):
        for sample in datagram.samples:
            if isinstance(sample, CounterSample):
                last[(datagram.agent, sample.source_index)] = sample.interface
    agents = {s.name: ipaddress.ip_address(s.sflow_agent).packed for s in model.facts.switches}
    for (switch, port), ifindex, speed in model.port_list():
        record = last[(agents[switch], ifindex)]
        values = model.counters(switch, port)
        assert (record.in_octets, record.out_octets, record.in_ucast, record.speed) == (
            values["in_octets"], values["out_octets"], values["in_pkts"], speed)


def test_fabric_agent_sends_what_the_plain_agent_sends():
    frame = data_frame(bytes(6), bytes(4), bytes([10, 0, 0, 1]), 0x101, 50_000)
    plain, fast = (cls("192.0.2.1", 50, seed=9, clock=lambda: 0.0)
                   for cls in (SflowAgent, FabricAgent))
    short = SampledFrame(frame)
    for _ in range(3):
        assert plain.offer(7, 7, 9, frame, 4000) == fast.offer(7, 7, 9, short, 4000)
        plain.offer(8, 8, 7, frame, 10)
        fast.offer(8, 8, 7, short, 10)
    plain.flush()
    fast.flush()
    sent = plain.datagrams()
    assert len(sent) > 10 and fast.datagrams() == sent


def test_stream_hands_over_each_ticks_datagrams():
    model = _small(seconds=3, events=[{"at": 1, "switch_down": "spine01"}])
    steps = []
    for step in stream(model):
        steps.append((step.tick.end - model.start, "spine01" in model.down_switches,
                      bool(step.datagrams), step.samples > 0))
        assert all(step.tick.start < at < step.tick.end for at, _, _ in step.datagrams)
    assert steps == [(1.0, False, True, True), (2.0, True, True, True), (3.0, True, True, True)]

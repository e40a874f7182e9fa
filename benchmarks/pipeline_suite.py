"""Whole-pipeline benchmark on the emulated medium fabric (8,192 GPUs).

The traffic model runs the medium ladder scenario (every job communicating by ring, tree
or all-to-all at 200 Gb/s per NIC, 1:400,000 sampling, like a Cumulus or SONiC default)
as fast as it can for one 10 s interval: the emulator's own speed is reported. Then
fabcorr takes what the switches' sFlow agents sent: decode, accumulate and attribute the
interval against the fabric built from the same facts, hotspots included
(``correlator.replay``). ``end_to_end_samples_per_s`` is fabcorr's side alone;
``interval_to_report_s`` is the time from the interval's last datagram to its view being
ready (the engine's close, what the service spends at each boundary before the view is
swapped). ``pcap_interval_cpu_s`` is ``fabcorr attribute``'s CPU seconds on a pcap of
the interval, process start subtracted (``attribute_suite.work_cpu``): issue 14's 2 s.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks.attribute_suite import work_cpu
from benchmarks.harness import Result, median
from correlator.engine import Engine
from correlator.replay import ReplayConfig, replay
from correlator.sflow.receiver import Worker
from simulator.fabric_run import run as run_fabric
from simulator.pcap import write_pcap
from simulator.scenario import ladder_scenario
from simulator.traffic import TrafficModel
from topology.build import build_graph
from topology.snapshot import save_snapshot

NAME = "pipeline"
SIZE = "medium"
INTERVAL_S = 10
INTERVAL_TARGET_S = 2.0  # CPU seconds for one medium interval (issue 14)


def run(sizes: list[str], repeat: int) -> list[Result]:
    """The medium size, whatever ``sizes`` says: the issue states it for medium."""
    del sizes
    scenario = ladder_scenario(SIZE, seconds=INTERVAL_S)
    began = time.perf_counter()
    model = TrafficModel(scenario)
    setup = time.perf_counter() - began
    emulated = run_fabric(model)
    datagrams = [(at, payload) for at, payload, _ in emulated.datagrams]
    fabric = build_graph(model.facts)
    assert fabric.indexes is not None  # built once per fabric, as in the service
    seconds = [_replay(fabric, datagrams) for _ in range(repeat)]
    latency = median([_report_latency(fabric, datagrams) for _ in range(repeat)])
    with tempfile.TemporaryDirectory(prefix="fabcorr-pipeline-bench-") as folder:
        pcap, empty, snapshot = (Path(folder) / name for name in (
            "medium.pcap", "empty.pcap", "snapshot.json"))
        write_pcap(pcap, [(at, payload, agent, "192.0.2.99", 6343)
                          for at, payload, agent in emulated.datagrams])
        write_pcap(empty, [])
        save_snapshot(fabric, snapshot)
        from_pcap, _ = work_cpu(snapshot, pcap, empty, "table", repeat)
    return [
        Result(NAME, SIZE, "emulated_samples", emulated.samples, "count"),
        Result(NAME, SIZE, "emulator_setup_s", setup, "s"),
        Result(NAME, SIZE, "emulator_samples_per_s", emulated.samples / emulated.wall_s,
               "samples/s"),
        Result(NAME, SIZE, "end_to_end_samples_per_s", emulated.samples / median(seconds),
               "samples/s"),
        Result(NAME, SIZE, "interval_to_report_s", latency, "s"),
        Result(NAME, SIZE, "pcap_interval_cpu_s", from_pcap, "s"),
        Result(NAME, SIZE, "pcap_interval_vs_target_ratio", INTERVAL_TARGET_S / from_pcap,
               "ratio"),
    ]


def _replay(fabric: object, datagrams: list[tuple[float, bytes]]) -> float:
    start = time.process_time()
    replay(fabric, datagrams, config=ReplayConfig(interval_s=INTERVAL_S))  # type: ignore[arg-type]
    return time.process_time() - start


def _report_latency(fabric: object, datagrams: list[tuple[float, bytes]]) -> float:
    """Seconds from the interval's samples being in (the receiver's tables, as the
    service takes them) to its view being ready (the engine's close: counters, attribution,
    hotspots)."""
    worker = Worker(datagrams[0][0] - datagrams[0][0] % INTERVAL_S, INTERVAL_S)
    worker.handle_many(datagrams)
    interval, totals = worker.take(datagrams[-1][0] + 1)
    start = time.perf_counter()
    Engine(INTERVAL_S).close(fabric, interval, totals)  # type: ignore[arg-type]
    return time.perf_counter() - start

"""The x-large ladder through shards, replayed (issue 17): one x-large interval's samples
split by the shard hash, each shard's share decoded and attributed on one core.

The fabric: the x-large ladder (12,288 nodes, 98,304 GPUs), saved as a snapshot. The
interval: ``SAMPLES`` RoCEv2 flow samples over 10 s (12 times the medium pipeline
interval's ~4 M), in datagrams of 5-10 from the leaves, each from a pod at its leaf port
to a pod drawn from the whole fabric (the attribute suite's samples). A leaf sends its
share of them (the leaves send alike); the datagrams of the switches each shard owns
(:func:`~correlator.shards.owner`) go to a pcap of the shard's own. Then each shard is
``fabcorr attribute --snapshot --pcap --shard I/N`` run in a process of its own on one
core: the CPU seconds of everything after the imports but the snapshot's load (which a
shard pays once when it starts, not every interval; ``snapshot_load_cpu_s``) are its
share's work, which must fit in the interval's 10 s; its peak RSS is the shard's. A shard
that loses a sample fails the suite (its exit status is 3): the samples are pairs drawn
from the whole fabric, each a flow key of its own, and an interval's flow table holds
:data:`~correlator.sflow.accounting.MAX_FLOWS` keys (4,194,304), which the busiest of 12
shards (4.5 M samples) overflows: hence 16.
The busiest shard is also run as ``fabcorr run --shard`` builds its fabric
(:func:`_service_shard`), with the allocator it starts itself again with
(:mod:`correlator.allocator`: jemalloc when installed): its service in live mode, its
cache filled from a Kubernetes API server (the simulator's, in this process, serving the
cluster's objects as the simulator renders them), the hosts' LLDP from a fact file, and
its own switches' facts as its discovery finds them. ``service_shard_cache_rss_mib`` is
what it holds once its cache is filled, ``service_shard_fabric_rss_mib`` once it has
built its fabric, and each stage's own peak: ``service_shard_build_peak_rss_mib``
building it, ``service_shard_rebuild_peak_rss_mib`` building it again while the old one
serves (a refresh; the highest of ``REFRESHES`` in a row),
``service_shard_refreshed_rss_mib`` what it holds after them (with what its allocator has
not given back yet), ``service_shard_peak_rss_mib`` attributing its share of the
interval on the last one.
``shards_needed`` is the fewest shards whose busiest share would fit both its CPU in the
interval and its keys in the table, from the busiest share measured at ``SHARDS`` (work
and samples spread over the shards as their switches do); ``shards_needed_by_cpu`` the
CPU's alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import pickle
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.attribute_suite import leaf_templates, sample_to
from benchmarks.harness import Result, median
from correlator.allocator import allocator_in_use, jemalloc_env
from correlator.service.config import load_service_config
from correlator.service.service import Service
from correlator.sflow.accounting import MAX_FLOWS
from correlator.shards import Shard, owner, parse_shard
from inventory.factfile import write_facts
from inventory.facts import FactSet, Reporter
from simulator import sflow_wire
from simulator.generator import generate_facts
from simulator.kube_api import FakeKubeApi
from simulator.kube_objects import cluster_objects
from simulator.ladder import ladder_spec
from simulator.pcap import write_pcap
from topology.build import build_graph
from topology.graph import FabricGraph
from topology.snapshot import save_snapshot

NAME = "shards"
SIZE = "x-large"
SAMPLES = 48_000_000
SECONDS = 10.0
SHARDS = 16
REFRESHES = 3
MIB = 2**20


def run(sizes: list[str], repeat: int) -> list[Result]:
    """The x-large size and ``SHARDS`` shards, once, whatever ``sizes`` and ``repeat``
    say: the issue asks for them, and one run takes about 20 minutes."""
    del sizes, repeat
    return measure(SIZE, SAMPLES, SHARDS)


def measure(size: str, samples: int, shards: int) -> list[Result]:
    """Every metric of ``samples`` samples of the ladder fabric ``size`` over ``shards``."""
    facts = generate_facts(ladder_spec(size))
    fabric = build_graph(facts)
    results: list[Result] = []

    def record(metric: str, value: float, unit: str) -> None:
        results.append(Result(NAME, size, metric, value, unit))

    with tempfile.TemporaryDirectory(prefix="fabcorr-shard-bench-") as name:
        folder = Path(name)
        snapshot = folder / "fabric.snapshot"  # packed, as a shard loads it fastest
        save_snapshot(fabric, snapshot)
        shares = write_shares(fabric, samples, shards, folder)
        del fabric
        busiest = max(range(shards), key=lambda index: shares[index][1])
        service = _service_shard(facts, Shard(busiest, shards), shares[busiest][0], folder)
        del facts
        loads, work, rss = [], [], []
        for index, (pcap, count) in enumerate(shares):
            load, cpu, peak = _attribute(snapshot, pcap, f"{index}/{shards}")
            loads.append(load)
            work.append(cpu)
            rss.append(peak)
            print(f"  shard {index}/{shards}: {count:,} samples, {cpu:.1f} s CPU after its "
                  f"snapshot's load ({load:.1f} s), peak RSS {peak:,.0f} MiB",
                  file=sys.stderr, flush=True)
    busiest, busiest_samples = max(work), max(count for _, count in shares)
    record("samples", samples, "count")
    record("shards", shards, "count")
    record("snapshot_load_cpu_s", median(loads), "s")
    record("busiest_shard_samples", busiest_samples, "count")
    record("busiest_shard_cpu_s", busiest, "s")
    record("median_shard_cpu_s", median(work), "s")
    record("interval_vs_busiest_ratio", SECONDS / busiest, "ratio")
    by_cpu = math.ceil(shards * busiest / SECONDS)
    by_table = math.ceil(shards * busiest_samples / MAX_FLOWS)
    record("shards_needed", max(by_cpu, by_table), "count")
    record("shards_needed_by_cpu", by_cpu, "count")
    record("peak_rss_per_shard_mib", max(rss), "MiB")
    record("service_shard_cache_rss_mib", service["cache_rss_mib"], "MiB")
    record("service_shard_fabric_rss_mib", service["fabric_rss_mib"], "MiB")
    record("service_shard_build_peak_rss_mib", service["build_peak_rss_mib"], "MiB")
    record("service_shard_rebuild_peak_rss_mib", service["rebuild_peak_rss_mib"], "MiB")
    record("service_shard_refreshed_rss_mib", service["refreshed_rss_mib"], "MiB")
    record("service_shard_peak_rss_mib", service["peak_rss_mib"], "MiB")
    record("total_work_samples_per_cpu_s", samples / sum(work), "samples/s")
    return results


def write_shares(fabric: FabricGraph, samples: int, shards: int, folder: Path
                 ) -> list[tuple[Path, int]]:
    """Each shard's pcap of its leaves' datagrams, and how many samples it holds."""
    by_leaf, addresses = leaf_templates(fabric)
    agents = {s.name: s.sflow_agent for s in fabric.facts.switches}
    per_leaf = samples / len(by_leaf)
    written = []
    for index in range(shards):
        leaves = sorted(leaf for leaf in by_leaf if owner(leaf, shards) == index)
        count = round(per_leaf * len(leaves))
        pcap = folder / f"shard-{index}.pcap"
        datagrams = _datagrams(random.Random(index), leaves, by_leaf, addresses, agents,
                               count)
        write_pcap(pcap, ((at, data, agent, "192.0.2.99", 6343)
                          for at, data, agent in datagrams))
        written.append((pcap, count))
    return written


def _datagrams(rng: random.Random, leaves: list[str],
               by_leaf: dict[str, list[tuple[bytes, int]]], addresses: list[bytes],
               agents: dict[str, str], samples: int) -> Iterator[tuple[float, bytes, str]]:
    """``samples`` samples from ``leaves``, 5-10 a datagram, spread over the interval."""
    sequence = dict.fromkeys(leaves, 0)
    made, start = 0, 1767229200.0
    while made < samples:
        leaf = rng.choice(leaves)
        count = min(rng.randint(5, 10), samples - made)
        sequence[leaf] += 1
        body = b"".join(sample_to(rng.choice(by_leaf[leaf]), rng.choice(addresses))
                        for _ in range(count))
        header = sflow_wire.datagram_header(agents[leaf], 0, sequence[leaf], sequence[leaf],
                                            count)
        yield start + SECONDS * made / samples, header + body, agents[leaf]
        made += count


def _service_shard(facts: FactSet, shard: Shard, pcap: Path, folder: Path
                   ) -> dict[str, float]:
    """``fabcorr run --shard`` as it builds its fabric, in a process of its own
    (:func:`_running_shard`), its Kubernetes API server in this one: the RSS once its cache
    is filled, once its fabric is built and after ``REFRESHES`` refreshes, and the peak of
    each stage (MiB)."""
    own = {s.name for s in facts.switches if shard.owns(s.name)}
    config, discovered = folder / "service-shard.yaml", folder / "discovered.facts"
    hosts = FactSet(neighbors=tuple(n for n in facts.neighbors if n.reporter == Reporter.HOST))
    write_facts(hosts, folder / "hosts.json")
    with discovered.open("wb") as stream:
        pickle.dump(facts.of_switches(own), stream, protocol=pickle.HIGHEST_PROTOCOL)
    with FakeKubeApi(cluster_objects(facts.inventory())) as api:
        config.write_text(json.dumps({
            "switches": [{"name": s.name, "address": s.sflow_agent, "role": s.role_hint}
                         for s in facts.switches],
            "topology": {"facts": [str(folder / "hosts.json")], "discover_every_s": 0},
            "kubernetes": {"source": ["live"],
                           "kubeconfig": str(api.kubeconfig(folder / "kubeconfig"))},
            "shards": {"count": shard.count}}))
        # with the allocator fabcorr run starts itself again with
        ran = _child("--service", str(config), str(discovered), str(pcap), str(shard),
                     env=jemalloc_env(os.environ))
    print(f"  shard {shard} as fabcorr run --shard ({ran['allocator']}): its cache "
          f"{ran['cache_rss_mib']:,.0f} MiB; "
          f"its fabric {ran['nodes']:,} nodes, RSS {ran['fabric_rss_mib']:,.0f} MiB once "
          f"built (peak {ran['build_peak_rss_mib']:,.0f} MiB); built again beside it "
          f"{REFRESHES} times, peak RSS {ran['rebuild_peak_rss_mib']:,.0f} MiB, then RSS "
          f"{ran['refreshed_rss_mib']:,.0f} MiB; peak RSS {ran['peak_rss_mib']:,.0f} MiB over "
          "its interval",
          file=sys.stderr, flush=True)
    return ran


def _running_shard(config: str, discovered: str, pcap: str, shard: str) -> int:
    """The service of ``config`` as shard ``shard``: its live cache filled, its discovery's
    facts those of ``discovered``; build its fabric, then again while the old one is alive,
    as a refresh does, and swap it in, ``REFRESHES`` times; then attribute ``pcap`` on it.
    Print the node count, the RSS once the cache is filled, once built and after the
    refreshes, and the peak RSS of each stage: the first build, the refreshes (the
    highest), the interval. Exit 1 unless the attribution exits 0."""
    service = Service(dataclasses.replace(load_service_config(config),
                                          shard=parse_shard(shard)))
    asyncio.run(service._start_live_cache())
    with open(discovered, "rb") as stream:
        service._discovered = pickle.load(stream)
    built: dict[str, Any] = {"cache_rss_mib": _status("VmRSS"),
                             "allocator": allocator_in_use()}
    _new_peak()
    asyncio.run(service._swap(service._build()))
    nodes = service.view.fabric.graph.number_of_nodes()
    built |= {"fabric_rss_mib": _status("VmRSS"), "nodes": nodes, "build_peak_rss_mib": _peak()}
    peaks = []
    for _ in range(REFRESHES):  # as a rediscovery or a change in the cluster does
        _new_peak()
        asyncio.run(service._swap(service._build()))
        peaks.append(_peak())
    built |= {"rebuild_peak_rss_mib": max(peaks), "refreshed_rss_mib": _status("VmRSS")}
    _new_peak()
    status = _attribute_here(pcap, shard, lambda path, owns: service.view.fabric)
    assert service._kubernetes is not None
    service._kubernetes.stop()
    print(json.dumps({**built, "peak_rss_mib": _peak()}))
    return 1 if status else 0


def _attribute(snapshot: Path, pcap: Path, shard: str) -> tuple[float, float, float]:
    """One ``fabcorr attribute --shard`` process (:func:`_shard`): the CPU seconds of its
    snapshot's load and of the rest of its work, and its peak RSS (MiB)."""
    spent = _child(str(snapshot), str(pcap), shard)
    return spent["load_cpu_s"], spent["work_cpu_s"], spent["peak_rss_mib"]


def _child(*argv: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """What this module run as ``argv`` (in ``env``) prints (JSON); RuntimeError if it
    fails."""
    child = subprocess.run([sys.executable, "-m", __name__, *argv], stdout=subprocess.PIPE,
                           env=env)
    if child.returncode:
        raise RuntimeError(f"{__name__} {' '.join(argv)} exited {child.returncode}")
    return json.loads(child.stdout)


def _shard(snapshot: str, pcap: str, shard: str) -> int:
    """``fabcorr attribute --snapshot SNAPSHOT --pcap PCAP --shard I/N`` in this process,
    its table discarded; prints the CPU seconds of the snapshot's load and of the rest
    (the imports before it excluded), and its peak RSS. Exit 1 unless the command exits 0
    (3 would be samples lost to a full table, or datagrams rejected: not the shard's
    share)."""
    from correlator.cli import attribute

    load, loads = attribute.load_snapshot, []

    def timed_load(path: str, owns: Callable[[str], bool] | None) -> object:
        began = time.process_time()
        fabric = load(path, owns)
        loads.append(time.process_time() - began)
        return fabric

    began = time.process_time()
    status = _attribute_here(pcap, shard, timed_load, snapshot)
    work = time.process_time() - began - sum(loads)
    print(json.dumps({"load_cpu_s": sum(loads), "work_cpu_s": work, "peak_rss_mib": _peak()}))
    return 1 if status else 0


def _attribute_here(pcap: str, shard: str, load: Callable[[str, Any], object],
                    snapshot: str = "-") -> int:
    """``fabcorr attribute --pcap PCAP --shard I/N`` in this process, its fabric from
    ``load`` (in place of the snapshot's), its table discarded; its exit status."""
    from correlator.cli import attribute
    from correlator.cli.main import main

    attribute.load_snapshot = load  # type: ignore[assignment]
    with open(os.devnull, "w") as table, contextlib.redirect_stdout(table):
        return main(["attribute", "--snapshot", snapshot, "--pcap", pcap, "--shard", shard,
                     "-o", "table"])


def _peak() -> float:
    """This process's peak RSS (MiB) since it began the program it runs, or since
    :func:`_new_peak`: its own memory's high-water mark, where the kernel's ``ru_maxrss``
    of a child also counts the parent's pages it was forked with (this suite's parent
    holds the whole fabric)."""
    return _status("VmHWM")


def _new_peak() -> None:
    """Start this process's high-water mark again from its RSS now (Linux 4.0 on)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _status(field: str) -> float:
    """A memory field of this process's ``/proc/self/status``, in MiB."""
    with open("/proc/self/status") as status:
        found = next(line for line in status if line.startswith(field + ":"))
    return int(found.split()[1]) * 1024 / MIB


if __name__ == "__main__":
    sys.exit(_running_shard(*sys.argv[2:]) if sys.argv[1] == "--service"
             else _shard(*sys.argv[1:]))

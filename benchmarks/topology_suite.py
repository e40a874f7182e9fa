"""Topology benchmarks: graph build time, snapshot save/load, query latency, and the peak
RSS of the whole process that generates, builds, saves, loads and queries one size.

Each size runs in a child process (``python -m benchmarks.topology_suite SIZE REPEAT``) so
that its peak resident set size, as the kernel counts it for ``/usr/bin/time -v``, is that
size's alone.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx

from benchmarks.harness import Result, median_time, percentile, timed
from inventory.bulk import settle
from simulator.generator import generate_facts
from simulator.ladder import ladder_spec
from topology import queries
from topology.build import build_graph
from topology.graph import FabricGraph
from topology.schema import ROLE, NodeKind, PortRole, id_name
from topology.snapshot import load_snapshot, save_snapshot

NAME = "topology"
SAMPLES = 300
MIB = 2**20


def run(sizes: list[str], repeat: int) -> list[Result]:
    results: list[Result] = []
    for size in sizes:
        child = subprocess.Popen([sys.executable, "-m", __name__, size, str(repeat)],
                                 stdout=subprocess.PIPE)
        assert child.stdout is not None
        output = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            raise RuntimeError(f"topology benchmark of {size} failed ({child.returncode})")
        results += [Result(**row) for row in json.loads(output)]
        results.append(Result(NAME, size, "peak_rss_mib", usage.ru_maxrss * 1024 / MIB, "MiB"))
    return results


def measure(size: str, repeat: int) -> list[Result]:
    """Every topology metric of one size, measured in this process."""
    results: list[Result] = []

    def record(metric: str, value: float, unit: str) -> None:
        results.append(Result(NAME, size, metric, value, unit))

    seconds, facts = timed(generate_facts, ladder_spec(size))
    record("generate_s", seconds, "s")
    seconds, fabric = median_time(build_graph, repeat, facts)
    del facts
    record("build_s", seconds, "s")
    record("graph_nodes", fabric.graph.number_of_nodes(), "count")
    record("graph_edges", fabric.graph.number_of_edges(), "count")
    with tempfile.TemporaryDirectory() as tmp:
        ours, text, peer = (Path(tmp, name) for name in ("snapshot.packed", "snapshot.json",
                                                          "node-link.json"))
        for metric, path in (("snapshot", ours), ("snapshot_json", text)):
            seconds, _ = median_time(save_snapshot, repeat, fabric, path)
            record(f"{metric}_save_s", seconds, "s")
            record(f"{metric}_mib", path.stat().st_size / MIB, "MiB")
        del fabric
        gc.collect()  # a graph's views make cycles: free it before loading another
        record("snapshot_json_load_s", median_time(load_snapshot, repeat, text)[0], "s")
        gc.collect()
        loaded_s, loaded = median_time(load_snapshot, repeat, ours)
        record("snapshot_load_s", loaded_s, "s")
        # as the service does with a fabric it swaps in
        record("settle_s", timed(settle)[0], "s")
        for metric, value in _query_latencies(loaded, random.Random(7)):
            record(metric, value, "ms")
        with peer.open("w") as stream:
            json.dump(nx.node_link_data(loaded.graph, edges="edges"), stream)
        del loaded
        gc.unfreeze()
        gc.collect()
        peer_s, _ = median_time(_load_node_link, repeat, peer)
    record("networkx_node_link_load_s", peer_s, "s")
    # Our load restores the graph, its indexes and query tables, and the facts the indexes
    # need, from a bigger file; the networkx load restores the graph alone.
    record("snapshot_load_vs_networkx", loaded_s / peer_s, "ratio")
    return results


def _load_node_link(path: Path) -> nx.Graph:
    with path.open() as stream:
        return nx.node_link_graph(json.load(stream), edges="edges")


def _query_latencies(fabric: FabricGraph, rng: random.Random) -> list[tuple[str, float]]:
    """First-call, p50 and p99 milliseconds of each query over random targets.

    ``fabric`` is freshly loaded, so the first calls build the derived tables; they run in
    the order below, so each first call pays only for the tables earlier ones did not build.
    """
    latencies = []
    for name, call, refs in _query_plan(fabric, rng):
        first, _ = timed(call, fabric, *refs[0])
        samples = [timed(call, fabric, *ref)[0] * 1000 for ref in refs]
        latencies += [(f"{name}_first_ms", first * 1000),
                      (f"{name}_p50_ms", percentile(samples, 50)),
                      (f"{name}_p99_ms", percentile(samples, 99))]
    return latencies


def _query_plan(fabric: FabricGraph, rng: random.Random
                ) -> list[tuple[str, Callable[..., Any], list[tuple[str, ...]]]]:
    """(name, query, argument tuples after the fabric) for each query benchmarked."""
    attrs = fabric.graph.nodes
    pods = [id_name(p) for p in fabric.nodes_of(NodeKind.POD)]
    ips = [attrs[i]["ipv4"].partition("/")[0] for i in fabric.nodes_of(NodeKind.POD_INTERFACE)
           if attrs[i].get("ipv4")]
    ports = fabric.nodes_of(NodeKind.PORT)
    vfs = [fabric.vfs.node_id(row) for row in range(len(fabric.vfs))]

    def port_refs(role: PortRole) -> list[tuple[str, ...]]:
        chosen = rng.choices([p for p in ports if attrs[p].get(ROLE) == role], k=SAMPLES // 2)
        return [(f"{attrs[p]['switch']}:{attrs[p]['name']}",) for p in chosen]

    return [
        ("where_pod", queries.where, [(p,) for p in rng.choices(pods, k=SAMPLES)]),
        ("where_ip", queries.where, [(ip,) for ip in rng.choices(ips, k=SAMPLES)]),
        ("path", queries.paths, [tuple(rng.sample(pods, 2)) for _ in range(SAMPLES)]),
        ("link_host", queries.link, port_refs(PortRole.HOST)),
        ("link_fabric", queries.link, port_refs(PortRole.FABRIC)),
        ("job", queries.job, [(id_name(j),) for j in fabric.nodes_of(NodeKind.JOB)[:SAMPLES]]),
        ("where_vf", queries.where, [(id_name(v),) for v in rng.choices(vfs, k=SAMPLES)]),
    ]


if __name__ == "__main__":
    print(json.dumps([dataclasses.asdict(r) for r in measure(sys.argv[1], int(sys.argv[2]))]))

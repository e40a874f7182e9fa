"""Topology benchmarks: graph build time and memory, snapshot save/load, query latency."""

from __future__ import annotations

import json
import random
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx

from benchmarks.harness import Result, median_time, percentile, timed
from inventory.facts import FactSet
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
        def record(metric: str, value: float, unit: str, size: str = size) -> None:
            results.append(Result(NAME, size, metric, value, unit))

        seconds, facts = timed(generate_facts, ladder_spec(size))
        record("generate_s", seconds, "s")
        seconds, fabric = median_time(build_graph, repeat, facts)
        record("build_s", seconds, "s")
        record("build_peak_mib", _build_peak(facts) / MIB, "MiB")
        record("graph_nodes", fabric.graph.number_of_nodes(), "count")
        record("graph_edges", fabric.graph.number_of_edges(), "count")
        with tempfile.TemporaryDirectory() as tmp:
            ours, peer = Path(tmp, "snapshot.json"), Path(tmp, "node-link.json")
            seconds, _ = median_time(save_snapshot, repeat, fabric, ours)
            record("snapshot_save_s", seconds, "s")
            record("snapshot_mib", ours.stat().st_size / MIB, "MiB")
            loaded_s, loaded = median_time(load_snapshot, repeat, ours)
            record("snapshot_load_s", loaded_s, "s")
            with peer.open("w") as stream:
                json.dump(nx.node_link_data(fabric.graph, edges="edges"), stream)
            peer_s, _ = median_time(_load_node_link, repeat, peer)
        record("networkx_node_link_load_s", peer_s, "s")
        # Our load restores the graph and also parses the facts into a FactSet (and the
        # problems), from a bigger file; the networkx load restores the graph alone. The
        # ratio is the price of a whole fabric over a bare graph in the same format family.
        record("snapshot_load_vs_networkx", loaded_s / peer_s, "ratio")
        for metric, value in _query_latencies(loaded, random.Random(7)):
            record(metric, value, "ms")
    return results


def _build_peak(facts: FactSet) -> int:
    """Peak bytes Python allocated while building the graph of ``facts`` once."""
    tracemalloc.start()
    try:
        build_graph(facts)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


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
    ]

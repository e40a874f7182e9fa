"""``fabcorr simulate``: synthetic fabrics for tests, benchmarks and trying fabcorr out."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from correlator.cli.options import add_snapshot
from correlator.cli.status import ExitStatus
from inventory.errors import ConfigError
from inventory.factfile import write_facts
from simulator.generator import FabricSpec, generate_facts
from simulator.kube_objects import cluster_objects, write_kubectl_dump
from simulator.ladder import LADDER, ladder_spec, synthetic_jobs
from simulator.pcap import write_pcap
from simulator.sflow_run import capture as sflow_capture
from simulator.spec import load_capture_spec, load_fabric_spec
from topology.build import build_graph
from topology.snapshot import load_snapshot, save_snapshot


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``simulate`` and its subcommands to the ``fabcorr`` parser."""
    parser = commands.add_parser("simulate", help="generate synthetic fabrics and captures",
                                 description="Synthetic rail-optimized Clos fabrics with "
                                 "pods, jobs and tenants, as facts and snapshots; synthetic "
                                 "sFlow captures over them.")
    sub = parser.add_subparsers(dest="simulate_command", metavar="SUBCOMMAND", required=True)
    generate = sub.add_parser(
        "generate", help="write a synthetic fabric's snapshot (and optionally its facts)",
        description="Generate a fabric from a ladder size, a GPU count or a spec file.")
    shape = generate.add_mutually_exclusive_group(required=True)
    shape.add_argument("--size", choices=list(LADDER), help="a benchmark ladder size")
    shape.add_argument("--gpus", type=int, metavar="N",
                       help="N GPUs: N/8 nodes of 8 rails, 64 nodes per leaf, 2-tier")
    shape.add_argument("--spec", metavar="FILE", help="a fabric spec (YAML), see "
                       "examples/fabric-small/fabric.yaml")
    generate.add_argument("-o", "--output", default="topology.json", metavar="FILE",
                          help="snapshot to write (default topology.json)")
    generate.add_argument("--facts-out", metavar="FILE",
                          help="also write the facts (.json or .yaml)")
    generate.add_argument("--kube-out", metavar="DIR",
                          help="also write the Kubernetes objects a cluster running this "
                          "fabric would hold, as `kubectl get <plural> -A -o json` files")
    generate.set_defaults(run=_generate)
    capture = sub.add_parser(
        "capture", help="write a synthetic sFlow capture (pcap) of given flows",
        description="Emulate the sFlow agents of a snapshot's switches: each flow of the "
        "spec (switch, port it enters by, source and destination IP, packets per second) "
        "is sampled 1-in-N by its switch's agent, which also reports the ports' interface "
        "counters; the datagrams are written as a pcap (UDP to the collector) and the "
        "bytes that really crossed each port, per source, to stderr.")
    add_snapshot(capture)
    capture.add_argument("--flows", required=True, metavar="FILE",
                         help="capture spec (YAML): seconds, sampling_rate, counter_every_s, "
                         "start, seed, flows: [{switch, port, src, dst, packets_per_s, "
                         "payload, opcode, out_port, sport}]")
    capture.add_argument("-o", "--output", default="capture.pcap", metavar="FILE",
                         help="pcap to write (default capture.pcap)")
    capture.add_argument("--collector", default="192.0.2.99:6343", metavar="IP:PORT",
                         help="destination of the datagrams in the pcap (default "
                         "192.0.2.99:6343)")
    capture.set_defaults(run=_capture)


def _capture(args: argparse.Namespace) -> ExitStatus:
    spec = load_capture_spec(args.flows)
    host, _, port = args.collector.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError("--collector", "", f"expected IP:PORT, not {args.collector!r}")
    facts = load_snapshot(args.snapshot).facts
    known = {(i.switch, i.name) for i in facts.interfaces}
    for i, flow in enumerate(spec.flows):
        if (flow.switch, flow.port) not in known:
            raise ConfigError(args.flows, f"flows[{i}]",
                              f"{flow.switch}:{flow.port} is not a port of the snapshot")
    start = spec.start or max((p.valid_from for p in facts.pod_interfaces), default=0) + 3600
    run = sflow_capture(facts, list(spec.flows), spec.seconds, spec.sampling_rate, start,
                        spec.seed, spec.counter_every_s)
    write_pcap(args.output, [(at, data, agent, host.strip("[]"), int(port))
                             for at, data, agent in run.datagrams])
    print(f"wrote {args.output}: {len(run.datagrams)} datagrams over {spec.seconds} s from "
          f"{start:.0f}", file=sys.stderr)
    for (switch, name, source), (packets, octets) in sorted(run.truth.items()):
        print(f"  sent {switch}:{name} from {source}: {packets} packets, {octets} bytes",
              file=sys.stderr)
    return ExitStatus.OK


def spec_for_gpus(gpus: int) -> FabricSpec:
    """A 2-tier fabric of ``gpus`` GPUs: 8 per node, up to 64 nodes per leaf per rail.

    >>> s = spec_for_gpus(8192)
    >>> s.nodes, s.leaves, s.spines
    (1024, 128, 64)
    """
    if gpus < 8 or gpus % 8:
        raise argparse.ArgumentTypeError("--gpus must be a positive multiple of 8")
    nodes = gpus // 8
    leaves_per_rail = -(-nodes // 64)
    nodes_per_leaf = -(-nodes // leaves_per_rail)
    spines = min(leaves_per_rail * 4, 64, nodes_per_leaf)
    spec = FabricSpec(nodes=nodes, leaves_per_rail=leaves_per_rail, spines=spines,
                      uplinks_per_leaf=spines * (nodes_per_leaf // spines))
    jobs = max(1, nodes * 3 // 2 // 16)
    return replace(spec, jobs=synthetic_jobs(nodes, 8, jobs, max(1, jobs // 4)))


def _generate(args: argparse.Namespace) -> ExitStatus:
    if args.size:
        spec = ladder_spec(args.size)
    elif args.gpus:
        spec = spec_for_gpus(args.gpus)
    else:
        spec = load_fabric_spec(args.spec)
    facts = generate_facts(spec)
    if args.facts_out:
        write_facts(facts, args.facts_out)
    if args.kube_out:
        write_kubectl_dump(cluster_objects(facts), Path(args.kube_out))
    fabric = build_graph(facts)
    save_snapshot(fabric, args.output)
    print(f"wrote {args.output}: {spec.gpus} GPUs, {spec.nodes} nodes, {spec.leaves} leaves, "
          f"{fabric.graph.number_of_nodes()} graph nodes, {len(fabric.problems)} problems",
          file=sys.stderr)
    return ExitStatus.OK

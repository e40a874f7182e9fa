"""``fabcorr simulate``: synthetic fabrics for tests, benchmarks and trying fabcorr out."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from correlator.cli.status import ExitStatus
from inventory.factfile import write_facts
from simulator.generator import FabricSpec, generate_facts
from simulator.kube_objects import cluster_objects, write_kubectl_dump
from simulator.ladder import LADDER, ladder_spec, synthetic_jobs
from simulator.spec import load_fabric_spec
from topology.build import build_graph
from topology.snapshot import save_snapshot


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``simulate`` and its subcommands to the ``fabcorr`` parser."""
    parser = commands.add_parser("simulate", help="generate synthetic fabrics",
                                 description="Synthetic rail-optimized Clos fabrics with "
                                 "pods, jobs and tenants, as facts and snapshots.")
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

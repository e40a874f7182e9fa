"""``fabcorr simulate``: synthetic fabrics for tests, benchmarks and trying fabcorr out.

``fabcorr simulate score --truth TRUTH.jsonl --log LOG [--hotspots FILE]`` scores what
fabcorr reported for an emulated run against the run's ground truth
(:mod:`simulator.truth`, :mod:`simulator.score`): the fraction of link-intervals (with
at least ``--min-samples`` samples) where every tenant's true share lies in fabcorr's
95 % interval, the mean share error, hotspot precision and recall against the hotspots
the same thresholds find in the true signals, the top culprit tenant against the true
top sender, and the time from onset to report. ``LOG`` is the service's attribution log
or ``fabcorr attribute -o json``; ``--log`` once per shard (``fabcorr run --shard``) scores
their union per interval (:func:`simulator.reported.union`); hotspots come from
``--hotspots`` (``fabcorr hotspots -o json``, ``/api/v1/hotspots``), else from ``LOG``,
else are recomputed from the log's utilization (:func:`recompute_hotspots`). The
fraction of (link-interval, tenant) pairs whose true bytes lie in fabcorr's bytes
interval is shown beside the shares. Exit 0 when the targets are met (>= 95 % within,
precision, recall and culprit accuracy 100 %), 1 when not, 2 on unreadable or misaligned
input.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from correlator.attribution.attribute import Attribution, LinkTraffic
from correlator.attribution.estimate import Share
from correlator.attribution.hotspots import Thresholds
from correlator.cli.cells import link_name
from correlator.cli.human import local_time, plural, short_name
from correlator.cli.options import add_format, add_out, add_snapshot, checked, number
from correlator.cli.printers import Block, Fields, Table, emit
from correlator.cli.status import ExitStatus
from correlator.cli.topology import save
from correlator.collect.rates import Rates
from correlator.data import to_data
from correlator.engine import Engine
from inventory.errors import ConfigError
from inventory.factfile import write_facts
from inventory.schema import split_address
from simulator.generator import FabricSpec, generate_facts
from simulator.kube_objects import cluster_objects, write_kubectl_dump
from simulator.ladder import LADDER, ladder_spec, synthetic_jobs
from simulator.pcap import write_pcap
from simulator.reported import read_hotspots, read_log, union
from simulator.score import Limits, Report, ScoreError
from simulator.score import score as score_run
from simulator.sflow_run import capture as sflow_capture
from simulator.spec import load_capture_spec, load_fabric_spec
from simulator.truth import read_truth
from topology.build import build_graph
from topology.snapshot import load_snapshot


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
    shape.add_argument("--gpus", type=checked(_gpus), metavar="N",
                       help="N GPUs: N/8 nodes of 8 rails, 64 nodes per leaf, 2-tier")
    shape.add_argument("--spec", metavar="FILE", help="a fabric spec (YAML), see "
                       "examples/fabric-small/fabric.yaml")
    add_out(generate, "snapshot", "topology.json")
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
    add_out(capture, "pcap", "capture.pcap")
    capture.add_argument("--collector", type=checked(_collector), default="192.0.2.99:6343",
                         metavar="IP:PORT",
                         help="destination of the datagrams in the pcap (default "
                         "192.0.2.99:6343)")
    capture.set_defaults(run=_capture)
    _register_score(sub)


def _register_score(sub: argparse._SubParsersAction) -> None:
    score = sub.add_parser(
        "score", help="score what fabcorr reported against an emulated run's ground truth",
        description="Compare fabcorr's attribution and hotspots with the ground truth of "
        "an emulated run: per link-interval, whether every tenant's true share lies in "
        "fabcorr's 95 % interval (link directions with at least --min-samples samples); "
        "hotspot precision and recall (same port direction, overlapping in time); whether "
        "the top culprit tenant is the true top sender; the time from onset to report. "
        "Exit 0 when >= 95 % of link-intervals are within and precision, recall and "
        "culprit accuracy are 100 %, 1 otherwise, 2 on unreadable or misaligned input.")
    score.add_argument("--truth", required=True, metavar="FILE",
                       help="ground truth, JSON lines (simulator.truth)")
    score.add_argument("--log", required=True, action="append", metavar="FILE",
                       help="fabcorr's attribution log (JSON lines of `fabcorr run`) or the "
                       "output of `fabcorr attribute -o json`; once per shard of a sharded "
                       "run (`fabcorr run --shard`): their union per interval is scored")
    score.add_argument("--hotspots", metavar="FILE",
                       help="the hotspots fabcorr reported (`fabcorr hotspots -o json`, "
                       "/api/v1/hotspots); default: those of --log, else recomputed from "
                       "the log's utilization")
    score.add_argument("--min-samples", type=int, default=100, metavar="N",
                       help="link directions with fewer samples are not scored (default 100)")
    limits, default = score.add_argument_group("hotspot thresholds"), Thresholds()
    for option, field, help_text in (("--utilization", "utilization", "utilization 0..1"),
                                     ("--pfc", "pfc_per_s", "PFC pause frames/s"),
                                     ("--ecn", "ecn_per_s", "ECN-marked packets/s"),
                                     ("--discards", "discards_per_s", "discards/s")):
        limits.add_argument(option, dest=field, type=float, default=getattr(default, field),
                            metavar="RATIO" if field == "utilization" else "PER_S",
                            help=f"{help_text} (default {getattr(default, field):g})")
    limits.add_argument("--hot-intervals", dest="intervals", type=int,
                        default=default.intervals, metavar="N",
                        help="hot intervals in a row that make a hotspot "
                        f"(default {default.intervals})")
    add_format(score)
    score.set_defaults(run=_score)


def _score(args: argparse.Namespace) -> ExitStatus:
    if args.min_samples < 1:
        raise ConfigError("--min-samples", "", f"must be >= 1, not {args.min_samples}")
    limits = Thresholds(args.utilization, args.pfc_per_s, args.ecn_per_s,
                        args.discards_per_s, args.intervals).validate()
    truth = read_truth(args.truth)
    logs = [read_log(path) for path in args.log]
    attributions = union([found for found, _ in logs]) if len(logs) > 1 else logs[0][0]
    given = [found for _, found in logs if found is not None]
    hotspots = [h for found in given for h in found] if given else None
    if args.hotspots:
        hotspots = read_hotspots(args.hotspots)
    source = "reported" if hotspots is not None else "recomputed from the log's utilization"
    if hotspots is None:
        hotspots = recompute_hotspots(attributions, limits)
    try:
        report = score_run(truth, attributions, hotspots, score_limits(limits),
                           args.min_samples)
    except ScoreError as exc:
        raise ConfigError(",".join(args.log), "", str(exc)) from None
    emit(report, lambda r, _: _score_blocks(r, source), args.output, sys.stdout)
    return ExitStatus.OK if report.passed else ExitStatus.DIFFERS


def score_limits(limits: Thresholds) -> Limits:
    """The scorer's own limits, with the values of fabcorr's thresholds."""
    return Limits(limits.utilization, limits.pfc_per_s, limits.ecn_per_s,
                  limits.discards_per_s, limits.intervals)


def recompute_hotspots(attributions: Iterable[Mapping[str, Any]],
                       limits: Thresholds | None = None) -> list[dict[str, Any]]:
    """The hotspots the interval engine finds over logged intervals (in time order), judged
    on the utilization they logged (the log keeps no PFC, ECN or discard rates): ended,
    then active."""
    engine = Engine(thresholds=limits)
    for data in sorted(attributions, key=lambda a: a["start"]):
        links = tuple(_link(link) for link in data["links"])
        utilization: dict[str, dict[str, float | None]] = {}
        for link in links:
            utilization.setdefault(link.port, {})[link.direction] = link.utilization
        rates = {port: Rates("", "", data["start"] + data["seconds"], data["seconds"], {}, {},
                             in_utilization=found.get("in"), out_utilization=found.get("out"))
                 for port, found in utilization.items()}
        engine.judge(Attribution(data["start"], data["seconds"], links, {}, 0), rates)
    return to_data([*engine.tracker.ended, *engine.tracker.active.values()])


def _link(data: Mapping[str, Any]) -> LinkTraffic:
    groups = ("tenants", "jobs", "pods", "pairs", "throttled")
    return LinkTraffic(**{**data, **{g: tuple(Share(**s) for s in data[g]) for g in groups}})


_MISSES_SHOWN = 20


def _score_blocks(report: Report, source: str) -> list[Block]:
    onset = report.onset_to_report_s
    fields = Fields([
        ("Link-intervals", f"{report.link_intervals} with >= {report.min_samples} samples"
         + (f" ({report.ignored_intervals} intervals outside the truth)"
            if report.ignored_intervals else "")),
        ("Within 95% bound", "-" if report.within_fraction is None else
         f"{report.within_fraction:.1%} ({report.within})"),
        ("Mean share error", "-" if report.mean_share_error is None else
         f"{report.mean_share_error:.2%}"),
        ("Bytes within bound", "-" if report.bytes_within_fraction is None else
         f"{report.bytes_within_fraction:.1%} ({report.bytes_within} of "
         f"{report.tenant_intervals} tenant-link-intervals)"),
        ("Hotspots", f"{len(report.true_hotspots)} true, {len(report.reported_hotspots)} "
         f"{source}"),
        ("Precision", f"{report.precision:.0%}"), ("Recall", f"{report.recall:.0%}"),
        ("Culprit top-1", f"{report.culprit_accuracy:.0%}"),
        ("Onset to report", f"{sum(onset) / len(onset):.0f} s mean, {max(onset):.0f} s max"
         if onset else "-"),
        ("Verdict", "pass" if report.passed else "FAIL: " + "; ".join(report.failures))])
    matched = {(m.port, m.direction, m.true_start): m for m in report.matches}
    rows = []
    for true in report.true_hotspots:
        m = matched.get((true.port, true.direction, true.start))
        rows.append([link_name(true.port), true.direction, local_time(true.start),
                     *([local_time(m.reported_start), f"{m.onset_to_report_s:.0f} s",
                        _name(m.culprit), _name(m.true_culprit)] if m
                       else ["missed", "", "", ""]), "down" if true.down else ""])
    found = {(m.port, m.direction, m.reported_start) for m in report.matches}
    rows += [[link_name(r.port), r.direction, "false", local_time(r.start), "", "", "", ""]
             for r in report.reported_hotspots if (r.port, r.direction, r.start) not in found]
    blocks: list[Block] = [fields, Table(
        ["link", "dir", "true start", "reported start", "onset to report", "culprit",
         "true culprit", "switch"], rows, "Hotspots")]
    if report.misses:
        title = "Shares outside the 95% bound" + (
            f" (first {_MISSES_SHOWN} of {len(report.misses)})"
            if len(report.misses) > _MISSES_SHOWN else "")
        blocks.append(Table(["link", "dir", "start", "samples", "tenant", "share (95%)",
                             "true share"],
                            [[link_name(x.port), x.direction, local_time(x.start), x.samples,
                              _name(x.tenant), f"{x.share:.1%} ({x.share_low:.1%}-"
                              f"{x.share_high:.1%})", f"{x.true_share:.1%}"]
                             for x in report.misses[:_MISSES_SHOWN]], title))
    return blocks


def _name(node: str | None) -> str:
    """``team-a`` for ``tenant:team-a``; ``-`` for none."""
    return short_name(node) if node else "-"


def _capture(args: argparse.Namespace) -> ExitStatus:
    spec = load_capture_spec(args.flows)
    host, port = args.collector
    facts = load_snapshot(args.snapshot).facts
    known = {(i.switch, i.name) for i in facts.interfaces}
    for i, flow in enumerate(spec.flows):
        if (flow.switch, flow.port) not in known:
            raise ConfigError(args.flows, f"flows[{i}]",
                              f"{flow.switch}:{flow.port} is not a port of the snapshot")
    start = spec.start or max((p.valid_from for p in facts.pod_interfaces), default=0) + 3600
    run = sflow_capture(facts, list(spec.flows), spec.seconds, spec.sampling_rate, start,
                        spec.seed, spec.counter_every_s)
    # standard output by a duplicate of its descriptor, closed when the pcap is written
    write_pcap(os.dup(sys.stdout.fileno()) if args.out == "-" else args.out,
               [(at, data, agent, host, port) for at, data, agent in run.datagrams])
    print(f"wrote {args.out}: {plural(len(run.datagrams), 'datagram')} over {spec.seconds} s "
          f"from {local_time(start)}", file=sys.stderr)
    for (switch, port, source), (packets, octets) in sorted(run.truth.items()):
        print(f"  sent {switch}:{port} from {source}: {plural(packets, 'packet')}, "
              f"{plural(octets, 'byte')}", file=sys.stderr)
    return ExitStatus.OK


def _collector(text: str) -> tuple[str, int]:
    host, port = split_address(text)
    ipaddress.ip_address(host)  # the pcap holds addresses, not names
    return host, port


def _gpus(text: str) -> int:
    gpus = int(number(int, 8)(text))
    if gpus % 8:
        raise ValueError(f"must be a positive multiple of 8, not {gpus}")
    return gpus


def spec_for_gpus(gpus: int) -> FabricSpec:
    """A 2-tier fabric of ``gpus`` GPUs: 8 per node, up to 64 nodes per leaf per rail.

    >>> s = spec_for_gpus(8192)
    >>> s.nodes, s.leaves, s.spines
    (1024, 128, 64)
    """
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
    save(fabric, args.out)
    print(f"wrote {args.out}: {plural(spec.gpus, 'GPU')}, {plural(spec.nodes, 'node')}, "
          f"{plural(spec.leaves, 'leaf', 'leaves')}, "
          f"{plural(fabric.graph.number_of_nodes(), 'graph node')}, "
          f"{plural(len(fabric.problems), 'problem')}", file=sys.stderr)
    return ExitStatus.OK

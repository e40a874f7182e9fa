"""``fabcorr discover``: find the fabric's cabling from the switches and write a snapshot."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from correlator.cli.options import add_out, number
from correlator.cli.status import ExitStatus
from correlator.cli.topology import save
from correlator.data import to_data
from inventory.devices import SwitchConfig, read_devices
from inventory.discovery import Discovery, Failure, discover_all
from inventory.errors import SourceError
from inventory.factfile import read_facts
from inventory.facts import FactSet, merge_all
from inventory.files import load_config
from inventory.hostlldp import host_neighbors
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.snapshot import read_cluster_objects
from topology.build import build_graph
from topology.graph import FabricGraph
from topology.schema import KIND, STATUS, EdgeKind, NodeKind


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``discover`` to the ``fabcorr`` parser."""
    parser = commands.add_parser(
        "discover", help="discover the fabric from the switches (LLDP, interfaces)",
        description="Ask every switch of the config for its interfaces and LLDP neighbours "
        "(gNMI, SNMP or NETCONF: the first of its protocols), and with a 'crawl' section "
        "the switches those announce with a management address, join them with the "
        "hosts' and Kubernetes' facts, reconcile the cabling and write a topology snapshot.")
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="fabcorr.yaml (or a device inventory) with a 'switches' list")
    add_out(parser, "snapshot", "topology.json")
    parser.add_argument("--facts", nargs="+", default=[], metavar="PATH",
                        help="more fact files (hosts, PFs, pods...) to join")
    parser.add_argument("--kubernetes", nargs="+", default=[], metavar="PATH",
                        help="kubectl dumps to join (see `fabcorr inventory`)")
    parser.add_argument("--host-lldp", nargs="+", default=[], metavar="PATH",
                        help="hosts' `lldpcli -f json show neighbors details` outputs, "
                        "one file per node named <node>.json (or directories of them)")
    parser.add_argument("--concurrency", type=number(int, 1, 1024), default=64, metavar="N",
                        help="switches asked at once (default 64)")
    parser.add_argument("--deadline", type=number(float, 0.1), default=60.0, metavar="SECONDS",
                        help="per-switch deadline (default 60)")
    parser.add_argument("--report", metavar="FILE", help="also write the report as JSON")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> ExitStatus:
    devices = read_devices(load_config(args.config), args.config, os.environ)
    switches, crawl = devices.switches, devices.crawl_config()
    known = _known_facts(args)
    progress = Progress(len(switches), sys.stderr)
    found = asyncio.run(discover_all(switches, concurrency=args.concurrency,
                                     deadline_s=args.deadline, progress=progress.step,
                                     crawl=crawl))
    progress.done()
    fabric = build_graph(found.facts.merge(known))
    save(fabric, args.out)
    report = discovery_report((*switches, *found.crawled), found, fabric)
    print_report(report, args.out, sys.stderr)
    if args.report:
        Path(args.report).write_text(json.dumps(to_data(report), indent=2) + "\n")
    return ExitStatus.PARTIAL if found.failures else ExitStatus.OK


def _known_facts(args: argparse.Namespace) -> FactSet:
    """Facts from files, Kubernetes dumps and hosts' lldpd outputs."""
    sets = [read_facts(args.facts)] if args.facts else []
    if args.kubernetes:
        sets.append(build_inventory(read_cluster_objects(args.kubernetes)).facts)
    for path in _json_files(args.host_lldp):
        sets.append(FactSet(neighbors=tuple(host_neighbors(path.stem, path.read_text()))))
    return merge_all(sets)


def _json_files(paths: list[str]) -> list[Path]:
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(path.glob("*.json"))
        elif path.is_file():
            files.append(path)
        else:
            raise SourceError(f"{path}: no such file or directory")
    return files


class Progress:
    """A one-line progress bar on a terminal; one line per switch otherwise."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.finished = self.failed = 0
        self.tty = stream.isatty()

    def step(self, switch: SwitchConfig, failure: Failure | None) -> None:
        self.finished += 1
        self.total = max(self.total, self.finished)  # crawled switches come on top
        self.failed += failure is not None
        if self.tty:
            filled = 30 * self.finished // max(1, self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.finished}/"
                              f"{self.total} switches, {self.failed} failed")
        else:
            outcome = f"failed ({failure.kind})" if failure else "ok"
            self.stream.write(f"[{self.finished}/{self.total}] {switch.name}: {outcome}\n")
        self.stream.flush()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\n")


def discovery_report(switches: list[SwitchConfig] | tuple[SwitchConfig, ...],
                     found: Discovery, fabric: FabricGraph) -> dict[str, object]:
    """What a discovery run achieved, as plain data."""
    graph = fabric.graph
    links: Counter[str] = Counter()
    host_ports = Counter()
    for a, b, edge in graph.edges(data=True):
        if edge[KIND] == EdgeKind.CABLED:
            links[edge[STATUS]] += 1
            if NodeKind.PF in (graph.nodes[a][KIND], graph.nodes[b][KIND]):
                host_ports["matched"] += 1
    host_ports["unmatched"] = sum(p.kind == "lldp-unresolved" for p in fabric.problems)
    return {
        "switches": {"total": len(switches), "reached": len(switches) - len(found.failures)},
        "links": dict(sorted(links.items())),
        "host_ports": dict(host_ports),
        "failures": [{"switch": f.switch, "protocol": f.protocol, "reason": f.kind,
                      "detail": f.message} for f in found.failures],
        "problems": dict(sorted(Counter(p.kind for p in fabric.problems).items())),
    }


def print_report(report: dict, output: str, stream: TextIO) -> None:
    switches, links, hosts = report["switches"], report["links"], report["host_ports"]
    stream.write(
        f"switches reached: {switches['reached']}/{switches['total']}\n"
        f"links: {links.get('confirmed', 0)} confirmed, {links.get('one-sided', 0)} one-sided,"
        f" {links.get('conflict', 0)} in conflict\n"
        f"host ports: {hosts.get('matched', 0)} matched to PFs, {hosts.get('unmatched', 0)} "
        "unmatched\n")
    for failure in report["failures"]:
        stream.write(f"failed: {failure['switch']} over {failure['protocol']}: "
                     f"{failure['reason']}: {failure['detail']}\n")
    stream.write(f"wrote {output}\n")

"""``fabcorr topology``: build a snapshot from facts, query it (or a service), export it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from correlator.cli import plan
from correlator.cli.human import bit_rate, local_time, plural, short_name
from correlator.cli.options import (
    DEFAULT_SNAPSHOT,
    INTERVAL,
    add_format,
    add_out,
    add_snapshot,
    add_source,
    checked,
    number,
    to_stdout,
)
from correlator.cli.printers import Block, Fields, Table, emit
from correlator.cli.sflow import read_capture
from correlator.cli.source import ask
from correlator.cli.status import ExitStatus
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.api import MAX_LIMIT, parse_time
from correlator.service.fabric_map import cable_heat
from inventory.errors import ConfigError
from inventory.factfile import read_facts
from inventory.facts import FactSet
from inventory.kubernetes.inventory import build_inventory
from inventory.kubernetes.snapshot import read_cluster_objects
from inventory.problems import PROBLEM_KINDS
from topology.build import build_graph
from topology.export import FORMATS as EXPORT_FORMATS
from topology.export import export_graph, node_kinds
from topology.export import render as render_graph
from topology.queries import summary
from topology.resolve import check_reference
from topology.schema import NodeKind, id_name
from topology.snapshot import load_snapshot, save_snapshot, snapshot_text


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``topology`` and its subcommands to the ``fabcorr`` parser."""
    parser = commands.add_parser(
        "topology", help="build, query and export the fabric graph",
        description="Build a topology snapshot from facts, answer questions about it, "
        "export it. Read commands take --snapshot FILE (default $FABCORR_SNAPSHOT or "
        f"./{DEFAULT_SNAPSHOT}) or --server URL (default $FABCORR_SERVER: a running "
        "service), and -o table|wide|json|yaml|jsonl.")
    sub = parser.add_subparsers(dest="topology_command", metavar="SUBCOMMAND", required=True)

    build = sub.add_parser("build", help="build a snapshot from fact files",
                           description="Build the fabric graph from fact files (JSON or YAML, "
                           "or directories of them) and save it as a snapshot.")
    build.add_argument("--facts", nargs="+", default=[], metavar="PATH",
                       help="fact files or directories of fact files")
    build.add_argument("--kubernetes", nargs="+", default=[], metavar="PATH",
                       help="kubectl JSON/YAML dumps: their pods, VFs, jobs and tenants join "
                       "the facts (see `fabcorr inventory`)")
    add_out(build, "snapshot", DEFAULT_SNAPSHOT)
    build.set_defaults(run=_build)

    def reader(name: str, help_text: str, run: Any) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        add_source(command)
        add_format(command)
        command.set_defaults(run=run)
        return command

    where = reader("where", "where a pod, pod interface, IP, VF (NODE/PCI), PF (NODE/PF) or "
                   "node plugs in: node, PF, rail, VF, leaf and leaf port", _where)
    where.add_argument("ref", metavar="THING", type=checked(check_reference),
                       help="e.g. team-a/w-3, team-a/w-3/net1, 172.16.11.23, gpu01, "
                       "gpu01/0000:1a:00.2")
    _at_option(where)

    path = reader("path", "every equal-cost path between two pods, pod interfaces or IPs, "
                  "as the switch ports crossed", _path)
    path.add_argument("source", metavar="A", type=checked(check_reference))
    path.add_argument("destination", metavar="B", type=checked(check_reference))
    path.add_argument("--limit", type=number(int, 0, MAX_LIMIT), default=256, metavar="N",
                      help="list at most N paths per interface pair (default 256; the count "
                      "is always exact)")
    _at_option(path)

    link = reader("link", "a switch port's cable (both ends, speed, role, LLDP status) and "
                  "every pod, job and tenant whose traffic can cross it", _link)
    link.add_argument("port", metavar="SWITCH:PORT", help="e.g. leaf01:Ethernet1")

    job = reader("job", "an AI job's pods and fabric footprint (nodes, leaves, leaf ports, "
                 "spines) and the other tenants on its leaves", _job)
    job.add_argument("job", metavar="NAMESPACE/NAME")

    tenant = reader("tenant", "a tenant's jobs, pods and fabric footprint", _tenant)
    tenant.add_argument("tenant", metavar="NAME")

    reader("summary", "counts of nodes by kind, switches by role, cables by tier and LLDP "
           "status, problems by kind", _summary)

    problems = reader("problems", "what did not fit while building the graph (unresolved "
                      "LLDP, one-sided or conflicting cables, unattached interfaces...)",
                      _problems)
    problems.add_argument("--kind", choices=sorted(PROBLEM_KINDS), metavar="KIND",
                          help="only problems of this kind: " + ", ".join(sorted(PROBLEM_KINDS)))

    export = sub.add_parser("export", help="write the graph as GraphML, GEXF, node-link JSON, "
                            "DOT or Cytoscape.js JSON",
                            description="Write the whole fabric graph in an interchange format.")
    add_snapshot(export)
    export.add_argument("-o", "--output", required=True, choices=EXPORT_FORMATS,
                        help="export format: " + ", ".join(EXPORT_FORMATS))
    export.add_argument("--kinds", type=checked(node_kinds), default=None, metavar="KIND,...",
                        help="only nodes of these kinds and the edges between them, e.g. "
                        "switch,port for the cabling alone (kinds: "
                        + ", ".join(NodeKind.__members__.values()) + "; default all)")
    export.add_argument("--pcap", metavar="FILE",
                        help="sFlow capture of a run: its last interval's heat on the cables "
                        "(edge attributes utilization and hotspot; DOT colours them by "
                        "utilisation, hot ones red)")
    export.add_argument("--interval", type=INTERVAL, default=10.0, metavar="SECONDS",
                        help="attribution interval of --pcap (default 10)")
    add_out(export, "export", "-")
    export.set_defaults(run=_export)
    plan.register(sub)


def _at_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--at", type=checked(parse_time), metavar="TIME",
                        help="resolve IPs as owned at TIME (ISO 8601 or Unix seconds; "
                        "default: the current owner)")


def _build(args: argparse.Namespace) -> ExitStatus:
    if not args.facts and not args.kubernetes:
        raise ConfigError("topology build", "", "needs --facts and/or --kubernetes")
    facts = read_facts(args.facts) if args.facts else FactSet()
    if args.kubernetes:
        facts = facts.merge(build_inventory(read_cluster_objects(args.kubernetes)).facts)
    fabric = build_graph(facts)
    save(fabric, args.out)
    nodes = summary(fabric).nodes
    # VFs no pod uses live beside the graph, each with its vf-of edge: counted as exported.
    unused = nodes[NodeKind.VF] - len(fabric.nodes_of(NodeKind.VF))
    print(f"wrote {args.out}: {plural(sum(nodes.values()), 'node')}, "
          f"{plural(fabric.graph.number_of_edges() + unused, 'edge')}, "
          f"{plural(len(fabric.problems), 'problem')}", file=sys.stderr)
    return ExitStatus.OK


def _where(args: argparse.Namespace) -> ExitStatus:
    rows = ask(args, "topology/where", q=args.ref, at=args.at)
    emit(rows, _where_blocks, args.output, sys.stdout)
    return ExitStatus.OK


def save(fabric: Any, path: str) -> None:
    """The snapshot to the ``--out`` file, or to standard output for ``-``."""
    if path == "-":
        to_stdout(snapshot_text(fabric))
    else:
        save_snapshot(fabric, path)


def _where_blocks(rows: list[dict[str, Any]], wide: bool) -> list[Block]:
    """The attachments; a pod that has ended (its addresses given up) shows when."""
    columns = ["pod", "interface", "ipv4", "node", "pf", "rail", "vf", "leaf", "leaf_port"]
    extra = ["ipv6", "job", "tenant"] if wide else []
    headers = ["pod", "if", *columns[2:-1], "port", *extra]
    ended = any(r.get("valid_until") is not None for r in rows)
    return [Table(headers + ["ended"] * ended,
                  [[r[c] for c in columns + extra] + [_ended(r)] * ended for r in rows])]


def _ended(row: dict[str, Any]) -> str:
    until = row.get("valid_until")
    return "" if until is None else local_time(until)


def _path(args: argparse.Namespace) -> ExitStatus:
    found = ask(args, "topology/path", a=args.source, b=args.destination, at=args.at,
                limit=args.limit)
    emit(found, _path_blocks, args.output, sys.stdout)
    return ExitStatus.OK


def _path_blocks(found: list[dict[str, Any]], wide: bool) -> list[Block]:
    blocks: list[Block] = []
    for pair in found:
        count, paths = pair["count"], pair["paths"]
        listed = f", {len(paths)} listed" if len(paths) < count else ""
        title = (f"{id_name(pair['source'])} -> {id_name(pair['destination'])}: "
                 f"{plural(count, 'equal-cost path')}{listed}")
        rows = [[n, "  ".join(f"{h['switch']}[{h['ingress']}>{h['egress']}]" for h in hops)]
                for n, hops in enumerate(paths, start=1)]
        blocks.append(Table(["#", "hops (switch[in>out])"], rows, title))
    return blocks


def _link(args: argparse.Namespace) -> ExitStatus:
    emit(ask(args, "topology/link", port=args.port), _link_blocks, args.output, sys.stdout)
    return ExitStatus.OK


def _link_blocks(report: dict[str, Any], wide: bool) -> list[Block]:
    peer = report["peer"]
    return [Fields([
        ("Port", report["port"]), ("Role", report["role"]),
        ("Speed", bit_rate(report["speed_bps"]) if report["speed_bps"] else "-"),
        ("Oper status", report["oper_status"]),
        ("ifIndex", report["ifindex"]),
        ("Peer", f"{peer} ({report['peer_kind']})" if peer else "(none)"),
        ("LLDP", report["status"]), ("Tier", report["tier"]),
        ("Conflicts", report["conflicts"]), ("Tenants", report["tenants"]),
        ("Jobs", report["jobs"]), ("Pods", report["pods"]),
        ("Interfaces", report["interfaces"]),
    ])]


def _job(args: argparse.Namespace) -> ExitStatus:
    emit(ask(args, "topology/job", name=args.job), _job_blocks, args.output, sys.stdout)
    return ExitStatus.OK


def _job_blocks(report: dict[str, Any], wide: bool) -> list[Block]:
    return [Fields([("Job", report["job"]), ("Kind", report["kind"]),
                    ("Tenant", report["tenant"]), ("Pods", report["pods"]),
                    *_footprint_fields(report["footprint"])])]


def _tenant(args: argparse.Namespace) -> ExitStatus:
    emit(ask(args, "topology/tenant", name=args.tenant), _tenant_blocks, args.output,
         sys.stdout)
    return ExitStatus.OK


def _tenant_blocks(report: dict[str, Any], wide: bool) -> list[Block]:
    return [Fields([("Tenant", report["tenant"]), ("Jobs", report["jobs"]),
                    ("Pods", report["pods"]), *_footprint_fields(report["footprint"])])]


def _footprint_fields(footprint: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("Nodes", footprint["nodes"]), ("Leaves", footprint["leaves"]),
            ("Leaf ports", footprint["leaf_ports"]), ("Spines", footprint["spines"]),
            ("Super-spines", footprint["super_spines"]),
            ("Tenants sharing leaves", footprint["neighbours"])]


def _summary(args: argparse.Namespace) -> ExitStatus:
    emit(ask(args, "topology/summary"), _summary_blocks, args.output, sys.stdout)
    return ExitStatus.OK


def _summary_blocks(summary: dict[str, Any], wide: bool) -> list[Block]:
    statuses = sorted({s for by_status in summary["links"].values() for s in by_status})
    return [
        Table(["kind", "count"], summary["nodes"].items(), "Nodes"),
        Table(["role", "count"], summary["switches"].items(), "Switches"),
        Table(["tier", *statuses], [[tier, *(c.get(s, 0) for s in statuses)]
                                    for tier, c in summary["links"].items()], "Cables"),
        Table(["kind", "count"], summary["problems"].items() or [["(none)", 0]], "Problems"),
    ]


def _problems(args: argparse.Namespace) -> ExitStatus:
    found = ask(args, "topology/problems", kind=args.kind)
    emit(found, lambda rows, wide: [Table(["kind", "subject", "detail"],
                                          [[p["kind"], short_name(p["subject"]), p["detail"]]
                                           for p in rows])],
         args.output, sys.stdout)
    return ExitStatus.OK


def _export(args: argparse.Namespace) -> ExitStatus:
    fabric = load_snapshot(args.snapshot)
    heat = None
    if args.pcap:
        result = replay(fabric, read_capture(args.pcap), (), ReplayConfig(args.interval))
        heat = cable_heat(replay_view(fabric, result))
    if args.out == "-":
        to_stdout(render_graph(fabric, args.output, args.kinds, heat))
    else:
        export_graph(fabric, args.output, args.out, args.kinds, heat)
    return ExitStatus.OK

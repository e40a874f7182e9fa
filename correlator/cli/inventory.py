"""``fabcorr inventory``: what Kubernetes says about pods, interfaces, jobs and tenants."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from correlator.cli.human import count, plural
from correlator.cli.options import add_format, number, to_stdout
from correlator.cli.printers import Block, Table, emit
from correlator.cli.status import ExitStatus
from inventory.errors import ConfigError, SourceUnreachable
from inventory.factfile import facts_text, write_facts
from inventory.kubernetes.inventory import Inventory, build_inventory
from inventory.kubernetes.snapshot import read_cluster_objects
from inventory.kubernetes.tenants import DEFAULT_RULES

_VIEWS = ("pods", "interfaces", "jobs", "tenants", "problems", "facts")


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``inventory`` to the ``fabcorr`` parser."""
    parser = commands.add_parser(
        "inventory", help="pods, RDMA interfaces, jobs and tenants from Kubernetes",
        description="Read Kubernetes (live with the official client, or from `kubectl get "
        "-A -o json` dumps) and show what fabcorr learns: pods with RDMA interfaces, "
        "their IPs and VFs, AI jobs, tenants, and every problem met.")
    parser.add_argument("view", choices=_VIEWS,
                        help="what to show; 'facts' writes the facts for `topology build`")
    add_source_options(parser)
    add_format(parser)
    parser.add_argument("--out", metavar="FILE",
                        help="for 'facts': the file to write (.yaml or .json; '-' for "
                        "standard output, YAML unless -o json)")
    parser.set_defaults(run=_run)


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """``--from``, ``--kubeconfig``, ``--context``, ``--tenant-rule`` and ``--timeout``."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--from", dest="dumps", nargs="+", metavar="PATH",
                        help="kubectl JSON/YAML dumps (files or directories) instead of a "
                        "live cluster")
    source.add_argument("--kubeconfig", metavar="FILE",
                        help="kubeconfig for a live cluster (default: in-cluster config, "
                        "else $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--tenant-rule", dest="tenant_rules", action="append",
                        metavar="RULE", help="tenant rule, in order (label:<key>, kueue, "
                        f"namespace); default: {' '.join(DEFAULT_RULES)}")
    parser.add_argument("--timeout", type=number(float, 1), default=60.0, metavar="SECONDS",
                        help="live mode: how long to wait for the initial lists (default 60)")


def load_inventory(args: argparse.Namespace) -> Inventory:
    """The inventory from dumps, or from a live cluster once its initial lists are done."""
    rules = tuple(args.tenant_rules or DEFAULT_RULES)
    if args.dumps:
        return build_inventory(read_cluster_objects(args.dumps), rules)
    from inventory.kubernetes.live import LiveKubernetes, LiveSettings, api_client

    live = LiveKubernetes(api_client(args.kubeconfig, args.context),
                          LiveSettings(tenant_rules=rules))
    live.start()
    try:
        print("listing Kubernetes resources...", file=sys.stderr)
        if not live.wait_ready(args.timeout):
            waiting = [n for n, s in live.stores.items() if not s.synced.is_set()]
            raise SourceUnreachable(f"initial lists not done after {args.timeout:g}s: "
                                    + ", ".join(waiting))
        return live.inventory()
    finally:
        live.stop()


def _run(args: argparse.Namespace) -> ExitStatus:
    found = load_inventory(args)
    counts = found.counts
    print(f"{plural(counts.get('pods', 0), 'pod')} ({count(counts.get('pods_with_rdma', 0))} "
          f"with RDMA interfaces), {plural(counts.get('interfaces', 0), 'interface')} "
          f"({count(counts.get('interfaces_joined', 0))} joined to a VF), "
          f"{plural(counts.get('jobs', 0), 'job')}, {plural(counts.get('tenants', 0), 'tenant')}"
          f", {plural(len(found.problems), 'problem')}", file=sys.stderr)
    if args.view == "facts":
        if not args.out:
            raise ConfigError("--out", "", "'inventory facts' needs --out FILE (.yaml or "
                              ".json, '-' for standard output)")
        if args.out == "-":
            to_stdout(facts_text(found.facts, as_json=args.output == "json"))
        else:
            write_facts(found.facts, args.out)
        return ExitStatus.OK
    if args.out:
        raise ConfigError("--out", "", f"only for 'inventory facts', not {args.view!r}")
    rows = _DATA[args.view](found)
    emit(rows, lambda data, wide: _tables(args.view, data, wide), args.output, sys.stdout)
    return ExitStatus.OK


_DATA = {
    "pods": lambda i: list(i.facts.pods),
    "interfaces": lambda i: list(i.facts.pod_interfaces),
    "jobs": lambda i: list(i.facts.jobs),
    "tenants": lambda i: list(i.facts.tenants),
    "problems": lambda i: list(i.problems),
}

_COLUMNS: dict[str, tuple[list[str], list[str]]] = {
    "pods": (["namespace", "name", "node", "job_kind", "job_name", "role", "index",
              "tenant"], ["uid"]),
    "interfaces": (["namespace", "pod", "interface", "node", "ipv4", "ipv6", "vf_pci",
                    "fixed"], ["mac", "rdma_device", "network", "pool", "vlan", "valid_from",
                               "valid_until"]),
    "jobs": (["namespace", "name", "kind", "tenant"], []),
    "tenants": (["name", "source"], []),
    "problems": (["kind", "subject", "detail"], []),
}


def _tables(view: str, rows: list[Any], wide: bool) -> list[Block]:
    columns, extra = _COLUMNS[view]
    shown = columns + (extra if wide else [])
    return [Table(shown, [[getattr(row, c) for c in shown] for row in rows])]

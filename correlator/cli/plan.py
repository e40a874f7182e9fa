"""``fabcorr topology check``: the discovered cabling against a cabling plan."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from correlator.cli.options import add_format, add_snapshot
from correlator.cli.printers import Block, Fields, Table, emit
from correlator.cli.status import ExitStatus
from inventory.errors import ConfigError
from topology.plan import PlanReport, check_plan, parse_plan
from topology.snapshot import load_snapshot


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``check`` to the ``fabcorr topology`` subcommands ``sub``."""
    description = ("Compare the cables of a snapshot with a cabling plan (a YAML list of "
                   "[DEVICE:PORT, DEVICE:PORT]) and list the cables missing, miswired and "
                   "unexpected. Exit 0 when the fabric matches the plan, 1 when it does not.")
    check = sub.add_parser("check", help="compare the discovered cabling with a cabling plan",
                           description=description)
    check.add_argument("--plan", required=True, metavar="FILE", help="cabling plan (YAML)")
    add_snapshot(check)
    check.add_argument("--hosts", action="store_true",
                       help="also report host cables the plan does not list (by default only "
                       "cables between switches are unexpected)")
    add_format(check)
    check.set_defaults(run=_check)


def _check(args: argparse.Namespace) -> ExitStatus:
    try:
        text = Path(args.plan).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(args.plan, "", f"cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(args.plan, "", f"not UTF-8 text: {exc.reason}") from exc
    plan = parse_plan(text, args.plan)
    report = check_plan(load_snapshot(args.snapshot), plan, hosts=args.hosts)
    emit(report, _blocks, args.output, sys.stdout)
    return ExitStatus.OK if report.ok else ExitStatus.DIFFERS


def _blocks(report: PlanReport, wide: bool) -> list[Block]:
    blocks: list[Block] = [Fields([
        ("Planned", report.planned), ("As planned", report.as_planned),
        ("Missing", len(report.missing)), ("Miswired", len(report.miswired)),
        ("Unexpected", len(report.unexpected)),
    ])]
    if report.missing:
        blocks.append(Table(["entry", "a", "b", "note"],
                            [[m.entry, m.a, m.b, m.note] for m in report.missing], "Missing"))
    if report.miswired:
        blocks.append(Table(["entry", "port", "planned peer", "actual peer", "lldp"],
                            [[m.entry, m.port, m.planned_peer, m.actual_peer, m.status]
                             for m in report.miswired], "Miswired"))
    if report.unexpected:
        blocks.append(Table(["a", "b", "lldp", "tier"],
                            [[u.a, u.b, u.status, u.tier] for u in report.unexpected],
                            "Unexpected"))
    return blocks

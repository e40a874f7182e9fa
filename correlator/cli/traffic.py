"""``fabcorr hotspots``, ``fabcorr who SWITCH:PORT``, ``fabcorr top tenants|jobs|pods``:
the last attributed interval, from a running service (``--server``) or a saved run."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from correlator.cli.cells import (
    HOTSPOT_COLUMNS,
    HOTSPOT_WIDE,
    TRAFFIC_COLUMNS,
    WIDE_COLUMNS,
    hotspot_row,
    link_name,
    pct,
    traffic_cells,
)
from correlator.cli.human import byte_rate, count, interval
from correlator.cli.options import add_format, add_source
from correlator.cli.printers import Block, Table, emit
from correlator.cli.source import ask
from correlator.cli.status import ExitStatus
from correlator.service.traffic import GROUPS

_FROM = ("Answers from a running service (--server URL) or from a saved run (--snapshot "
         "FILE --pcap FILE [--counters FILE] [--interval S]: its last interval).")


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``hotspots``, ``who`` and ``top``."""
    def command(name: str, help_text: str, run: Any) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=help_text, description=f"{help_text}. {_FROM}")
        add_source(parser, capture=True)
        add_format(parser)
        parser.set_defaults(run=run)
        return parser

    command("hotspots", "the hot link directions, active then ended, with culprits, victims, "
            "the jobs CNPs throttle and the noisy-neighbour verdict", _hotspots)
    who = command("who", "whose traffic fills both directions of a link: tenants, jobs and "
                  "pods with their shares", _who)
    who.add_argument("port", metavar="SWITCH:PORT", help="e.g. spine01:Ethernet1")
    top = command("top", "the biggest senders: bytes/s per tier over the fabric, or their "
                  "shares of one link", _top)
    top.add_argument("group", choices=GROUPS)
    top.add_argument("--link", metavar="SWITCH:PORT",
                     help="rank the senders on this link (both directions) instead")
    top.add_argument("--limit", type=int, default=10, metavar="N",
                     help="at most N per tier or direction (default 10)")


def _hotspots(args: argparse.Namespace) -> ExitStatus:
    found = ask(args, "hotspots")
    active = sum(1 for h in found if h["end"] is None)
    emit(found, lambda rows, wide: [Table(
        HOTSPOT_COLUMNS + (HOTSPOT_WIDE if wide else []), [hotspot_row(h, wide) for h in rows],
        f"Hotspots: {active} active, {len(rows) - active} ended")], args.output, sys.stdout)
    return ExitStatus.OK


def _who(args: argparse.Namespace) -> ExitStatus:
    emit(ask(args, f"links/{args.port}"), _who_blocks, args.output, sys.stdout)
    return ExitStatus.OK


def _who_blocks(found: dict[str, Any], wide: bool) -> list[Block]:
    rows = []
    for direction in ("in", "out"):
        link = found[direction]
        if link is None:
            blank = [""] * len(WIDE_COLUMNS) if wide else []
            rows.append([direction, "", "", "", "", "no samples", *blank])
            continue
        rows.append([direction, f"{link_name(link['port'])} {link['direction']}",
                     *traffic_cells(link, wide)])
    peer = f" (peer {found['peer']})" if found["peer"] else ""
    title = f"{found['link']}{peer}: interval {interval(found['start'], found['seconds'])}"
    return [Table(["dir", "sampled at", *TRAFFIC_COLUMNS, *(WIDE_COLUMNS if wide else [])],
                  rows, title)]


def _top(args: argparse.Namespace) -> ExitStatus:
    found = ask(args, f"top/{args.group}", link=args.link, limit=args.limit)
    emit(found, lambda data, wide: _top_blocks(data, args.group, wide), args.output,
         sys.stdout)
    return ExitStatus.OK


def _top_blocks(found: dict[str, Any], group: str, wide: bool) -> list[Block]:
    """Rates in bit/s (``~``: a sampled estimate); ``wide`` adds the bytes of the interval."""
    what = group.removesuffix("s")
    when = f"interval {interval(found['start'], found['seconds'])}"
    rows, seconds = found["rows"], found["seconds"]
    if found["link"] is None:
        return [Table(["tier", what, "rate", *["bytes"] * wide],
                      [[r["tier"], r["name"], byte_rate(r["bytes_per_second"]),
                        *[count(r["bytes_per_second"] * seconds)] * wide] for r in rows],
                      f"Fabric-wide, per tier: {when}")]
    return [Table(["dir", what, "share (95%)", "rate", "samples",
                   *["bytes", "bytes (95%)"] * wide],
                  [[r["direction"], r["name"], pct(r), byte_rate(r["bytes_per_second"])
                    + ("" if r["exact"] else "~"), count(r["samples"]),
                    *[count(r["bytes"]), f"{count(r['low'])}-{count(r['high'])}"]
                    * wide] for r in rows],
                  f"{found['link']}: {when}")]

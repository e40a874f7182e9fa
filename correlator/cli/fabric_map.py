"""``fabcorr map``: the fabric map as one offline HTML file, from a snapshot and optionally
a saved run (what ``fabcorr run`` serves live at ``/``)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from correlator.cli.attribute import read_readings
from correlator.cli.human import local_time
from correlator.cli.options import INTERVAL, add_snapshot, number
from correlator.cli.sflow import read_capture
from correlator.cli.status import ExitStatus
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.fabric_map import layout_data, state_data
from correlator.service.map_page import page
from correlator.view import View
from inventory.files import replace_file
from topology.snapshot import load_snapshot


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr map``."""
    parser = commands.add_parser(
        "map", help="write the fabric map as one self-contained HTML file",
        description="Draw the fabric as fabcorr lays it out (super-spines, spines, leaves "
        "grouped by rail, then the host NICs under their leaves, collapsed per leaf on big "
        "fabrics) into one HTML file that needs no network: with --pcap, each cable "
        "coloured by the utilisation of its busier direction in the run's last interval, "
        "its senders with their shares and 95% intervals, and the hotspots. `fabcorr run` "
        "serves the same map live at / . Exit 0; 3 when datagrams were rejected or the "
        "capture is cut short.")
    add_snapshot(parser)
    parser.add_argument("--pcap", metavar="FILE",
                        help="sFlow capture (pcap or pcapng) of a run to colour the map with "
                        "(default: the fabric only)")
    parser.add_argument("--counters", metavar="FILE",
                        help="port counter readings of the run, one JSON object per line (as "
                        "for `fabcorr attribute`)")
    parser.add_argument("--port", type=number(int, 1, 65535), default=None,
                        help="only UDP datagrams to this port (default: every UDP datagram)")
    parser.add_argument("--interval", type=INTERVAL, default=10.0, metavar="SECONDS",
                        help="attribution interval (default 10)")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the HTML file to write (e.g. map.html)")
    parser.set_defaults(run=_map)


def _map(args: argparse.Namespace) -> ExitStatus:
    fabric = load_snapshot(args.snapshot)
    view, partial = View(fabric), False
    if args.pcap:
        skipped: Counter[str] = Counter()
        readings = list(read_readings(args.counters)) if args.counters else []
        result = replay(fabric, read_capture(args.pcap, args.port, skipped), readings,
                        ReplayConfig(args.interval))
        view = replay_view(fabric, result)
        partial = bool(result.totals.rejects or skipped["cut_short"])
    drawn = layout_data(fabric)
    replace_file(args.out, page({"layout": drawn, "state": state_data(view)}))
    print(f"{args.out}: {len(drawn['boxes'])} boxes, {len(drawn['cables'])} cables"
          + (f", the interval from {local_time(view.attribution.start)}"
             if view.attribution else ""), file=sys.stderr)
    return ExitStatus.PARTIAL if partial else ExitStatus.OK

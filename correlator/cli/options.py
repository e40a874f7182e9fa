"""Options shared by the read commands: where the answers come from (a snapshot, a capture,
or a running service), and the output format."""

from __future__ import annotations

import argparse
import os

from correlator.cli.printers import FORMATS

DEFAULT_SNAPSHOT = "topology.json"


def add_snapshot(parser: argparse._ActionsContainer) -> None:
    """``--snapshot FILE`` (default ``$FABCORR_SNAPSHOT``, else ./topology.json)."""
    parser.add_argument("--snapshot", default=os.environ.get("FABCORR_SNAPSHOT",
                                                             DEFAULT_SNAPSHOT),
                        metavar="FILE", help="topology snapshot to read (default "
                        f"$FABCORR_SNAPSHOT, else ./{DEFAULT_SNAPSHOT})")


def add_format(parser: argparse.ArgumentParser) -> None:
    """``-o table|wide|json|yaml``."""
    parser.add_argument("-o", "--output", choices=FORMATS, default="table",
                        help="output format (default table)")


def add_source(parser: argparse.ArgumentParser, capture: bool = False) -> None:
    """``--snapshot FILE`` or ``--server URL`` (with ``--user``, ``--ca-file``); with
    ``capture``, also the saved run to replay offline: ``--pcap``, ``--counters``,
    ``--interval``."""
    source = parser.add_mutually_exclusive_group()
    add_snapshot(source)
    source.add_argument("--server", metavar="URL",
                        help="ask a running fabcorr service (http[s]://HOST:PORT) instead of "
                        "reading files")
    parser.add_argument("--user", default=os.environ.get("FABCORR_USER"),
                        help="basic auth user for --server (default $FABCORR_USER); the "
                        "password comes from $FABCORR_PASSWORD")
    parser.add_argument("--ca-file", metavar="FILE",
                        help="CA certificates to verify an https --server with (default: the "
                        "system's)")
    if capture:
        parser.add_argument("--pcap", metavar="FILE",
                            help="without --server: the sFlow capture (pcap) to replay; the "
                            "answer is about its last interval")
        parser.add_argument("--counters", metavar="FILE",
                            help="with --pcap: port counter readings, JSON lines (see "
                            "`fabcorr attribute --help`)")
        parser.add_argument("--interval", type=float, default=10.0, metavar="SECONDS",
                            help="with --pcap: attribution interval (default 10)")

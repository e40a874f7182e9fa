"""Options shared by the read commands: which snapshot, which output format."""

from __future__ import annotations

import argparse
import os

from correlator.cli.printers import FORMATS

DEFAULT_SNAPSHOT = "topology.json"


def add_snapshot(parser: argparse.ArgumentParser) -> None:
    """``--snapshot FILE`` (default ``$FABCORR_SNAPSHOT``, else ./topology.json)."""
    parser.add_argument("--snapshot", default=os.environ.get("FABCORR_SNAPSHOT",
                                                             DEFAULT_SNAPSHOT),
                        metavar="FILE", help="topology snapshot to read (default "
                        f"$FABCORR_SNAPSHOT, else ./{DEFAULT_SNAPSHOT})")


def add_format(parser: argparse.ArgumentParser) -> None:
    """``-o table|wide|json|yaml``."""
    parser.add_argument("-o", "--output", choices=FORMATS, default="table",
                        help="output format (default table)")

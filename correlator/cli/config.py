"""``fabcorr config schema``: the JSON Schema of ``fabcorr run``'s configuration file."""

from __future__ import annotations

import argparse
import json
import sys

from correlator.cli.status import ExitStatus
from correlator.service.config import config_schema


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr config`` and its subcommand."""
    parser = commands.add_parser(
        "config", help="the configuration file's JSON Schema",
        description="About fabcorr run's configuration file (examples/fabcorr.yaml). "
        "`fabcorr run --config FILE --check` validates one.")
    sub = parser.add_subparsers(dest="config_command", metavar="SUBCOMMAND", required=True)
    schema = sub.add_parser("schema", help="print the JSON Schema (draft 2020-12) of the file",
                            description="Print the JSON Schema of fabcorr run's "
                            "configuration file: every section, key, type, range and default "
                            "(for editors and CI checks).")
    schema.set_defaults(run=_schema)


def _schema(args: argparse.Namespace) -> ExitStatus:
    json.dump(config_schema(), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return ExitStatus.OK

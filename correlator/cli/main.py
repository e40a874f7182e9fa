"""The ``fabcorr`` command: parse, dispatch to one command module, map errors to exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from correlator.cli import (
    attribute,
    demo,
    discover,
    inventory,
    run,
    sflow,
    simulate,
    topology,
    traffic,
)
from correlator.cli.status import ExitStatus, Refused
from inventory.errors import FabcorrError, NotFound

COMMANDS = (topology, inventory, discover, sflow, attribute, traffic, run, demo, simulate)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser; every command module adds its own subcommands."""
    parser = argparse.ArgumentParser(
        prog="fabcorr",
        description="Switch-telemetry correlator for RoCEv2 AI clusters on Kubernetes: "
        "maps fabric links to the pods, jobs and tenants whose traffic crosses them.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``fabcorr`` command and return its exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except Refused as exc:
        print(f"fabcorr: {exc}", file=sys.stderr)
        return exc.status
    except NotFound as exc:
        print(f"fabcorr: {exc}", file=sys.stderr)
        return ExitStatus.NOT_FOUND
    except FabcorrError as exc:
        print(f"fabcorr: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    except BrokenPipeError:
        return ExitStatus.OK


if __name__ == "__main__":
    sys.exit(main())

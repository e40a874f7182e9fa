"""The ``fabcorr`` command: parse, dispatch to one command module, and the one error
boundary that turns every failure into one line ``fabcorr: WHERE: reason`` and an exit
status (:class:`ExitStatus`)."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import re
import sys
import threading
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from correlator.allocator import restart_with_jemalloc
from correlator.cli import (
    attribute,
    completion,
    config,
    demo,
    discover,
    fabric_map,
    inlet,
    inventory,
    run,
    sflow,
    simulate,
    topology,
    traffic,
)
from correlator.cli.status import ExitStatus, Refused
from inventory.errors import ConfigError, FabcorrError, NotFound

COMMANDS = (topology, inventory, discover, sflow, attribute, traffic, run, inlet, fabric_map,
            config, demo, simulate, completion)


class Parser(argparse.ArgumentParser):
    """argparse whose usage errors reach the error boundary instead of exiting."""

    def error(self, message: str) -> NoReturn:
        """Raise ConfigError naming the flag (``argument --x: reason``) or the command."""
        flag, sep, reason = message.partition(": ")
        if flag.startswith("argument ") and sep:
            raise ConfigError(flag.removeprefix("argument ").split("/")[-1], "", reason)
        raise ConfigError(self.prog.removeprefix("fabcorr ") or self.prog, "", message)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser; every command module adds its own subcommands."""
    parser = Parser(
        prog="fabcorr",
        description="Switch-telemetry correlator for RoCEv2 AI clusters on Kubernetes: "
        "maps fabric links to the pods, jobs and tenants whose traffic crosses them.",
        epilog="Exit status: 0 done, 1 the thing asked for does not exist, 2 bad input or "
        "environment, 3 done in part (some switches, datagrams or samples rejected, or some "
        "shards did not answer).")
    parser.add_argument("--debug", action="store_true",
                        help="on failure, also print the traceback")
    parser.add_argument("--version", action="version", version=f"fabcorr {_version()}",
                        help="print the installed version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.register(commands)
    return parser


def _version() -> str:
    """The installed distribution's version (its package metadata)."""
    try:
        return version("fabcorr")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``fabcorr`` command and return its exit status; every failure is one line
    on stderr (with ``--debug``, after its traceback)."""
    args: argparse.Namespace | None = None
    try:
        args = build_parser().parse_args(argv)
        if argv is None and getattr(args, "long_running", False):  # this process's command
            restart_with_jemalloc()
        status = int(args.run(args))
        if status == ExitStatus.OK and getattr(args, "unanswered", None):
            return ExitStatus.PARTIAL  # answered without some shards
        return status
    except BrokenPipeError:
        return ExitStatus.OK
    except KeyboardInterrupt:
        return ExitStatus.INTERRUPTED
    except Exception as exc:
        if getattr(args, "debug", False):
            traceback.print_exc()
        message, status = _failure(exc)
        print("fabcorr: " + re.sub(r"\s*\n\s*", " ", message), file=sys.stderr)
        return status


def _failure(exc: Exception) -> tuple[str, ExitStatus]:
    """What to print for ``exc`` and the exit status it means."""
    if isinstance(exc, Refused):
        return str(exc), exc.status
    if isinstance(exc, NotFound):
        return str(exc), ExitStatus.NOT_FOUND
    if isinstance(exc, FabcorrError):
        return str(exc), ExitStatus.USAGE
    if isinstance(exc, OSError) and exc.strerror:  # the environment: files, sockets
        return f"{exc.filename or 'system'}: {exc.strerror}", ExitStatus.USAGE
    return (f"internal error: {type(exc).__name__}: {exc} (--debug shows the traceback)",
            ExitStatus.USAGE)


def program() -> NoReturn:
    """The ``fabcorr`` program: :func:`main`, then the process ends. When nothing else runs,
    that skips the interpreter's teardown, which would free a command's results and the
    fabric object by object for nothing (a quarter of ``fabcorr attribute``'s CPU on a
    medium capture): output is flushed and the exit handlers run first, as at a normal
    exit."""
    status = main()
    if threading.active_count() > 1:  # a thread left running ends as Python ends it
        sys.exit(status)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # reader gone, stream closed
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(status)


if __name__ == "__main__":
    program()

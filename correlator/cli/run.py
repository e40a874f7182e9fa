"""``fabcorr run``: the service (see :mod:`correlator.service.service`)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import signal
import socket
import sys

from correlator.allocator import allocator_in_use
from correlator.cli.status import ExitStatus
from correlator.service.config import ServiceConfig, check_listening, load_service_config
from correlator.shards import Shard, parse_shard
from inventory.errors import ConfigError


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr run``."""
    parser = commands.add_parser(
        "run", help="run the service: telemetry, sFlow, attribution, metrics, API",
        description="Run fabcorr as a service: build the fabric (snapshot, or discovery "
        "joined with Kubernetes), stream counters from the switches, receive sFlow, "
        "attribute every interval, and serve Prometheus metrics (/metrics), the JSON API "
        "(/api/v1/...), /healthz and /readyz. SIGTERM or SIGINT stop it after the interval "
        "in progress is attributed. It starts itself again with jemalloc as its allocator "
        "when libjemalloc.so.2 is installed, which gives the memory of a fabric rebuilt "
        "back to the system (FABCORR_ALLOCATOR=system keeps CPython's). Exit 0 when "
        "stopped, 2 on a bad configuration or environment (a missing file, an address "
        "taken or not on this machine).")
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="configuration (YAML; examples/fabcorr.yaml explains every key, "
                        "`fabcorr config schema` prints its JSON Schema; the FABCORR_* "
                        "variables of the README override it)")
    parser.add_argument("--check", action="store_true",
                        help="validate the configuration (files, secrets, and binding the "
                        "listen addresses, released at once), print a summary and exit")
    parser.add_argument("--shard", metavar="I/N|auto",
                        help="run as shard I (from 0) of N: discover, stream and poll only "
                        "the switches the shard hash gives this shard (and read the far ends "
                        "of their cables), attribute their sFlow and "
                        "label every series shard=I; auto: I is the StatefulSet ordinal at "
                        "the end of $POD_NAME (else the host name), N is shards.count "
                        "(default: one process owns every switch)")
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"],
                        help="log level (default info; logs go to stderr)")
    parser.set_defaults(run=_run, long_running=True)


def _run(args: argparse.Namespace) -> ExitStatus:
    config = load_service_config(args.config)
    if args.shard:
        config = dataclasses.replace(config, shard=shard_of(args.shard, config.shards))
    check_listening(config)  # before anything logs "ready"
    if args.check:
        shard = f", shard {config.shard}" if config.shard.count > 1 else ""
        print(f"{args.config}: ok: {len(config.switches)} switches, sFlow on "
              f"{config.sflow.host}:{config.sflow.port} ({config.sflow.workers} worker(s)), "
              f"metrics and API on {config.http.listen}, {config.interval_s:g} s "
              f"intervals{shard}, allocator {allocator_in_use()}")
        return ExitStatus.OK
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.log_level != "debug":  # pygnmi logs every call at info
        logging.getLogger("pygnmi").setLevel(logging.WARNING)
    asyncio.run(_serve(config))
    return ExitStatus.OK


async def _serve(config: ServiceConfig) -> None:
    from correlator.service.service import Service

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await Service(config).run(stop)


def shard_of(text: str, count: int) -> Shard:
    """The shard ``--shard`` names (``auto``: from $POD_NAME, else the host name), with
    ``count`` shards configured (``shards.count``); ConfigError when it does not parse
    or names another count than a configured one."""
    pod = os.environ.get("POD_NAME") or socket.gethostname()
    try:
        shard = parse_shard(text, pod_name=pod, count=count)
    except ValueError as exc:
        raise ConfigError("--shard", "", str(exc)) from None
    if count > 1 and shard.count != count:
        raise ConfigError("--shard", "", f"{text}: shards.count is {count}")
    return shard

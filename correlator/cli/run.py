"""``fabcorr run``: the service (see :mod:`correlator.service.service`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from correlator.cli.status import ExitStatus
from correlator.service.config import ServiceConfig, check_listening, load_service_config


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr run``."""
    parser = commands.add_parser(
        "run", help="run the service: telemetry, sFlow, attribution, metrics, API",
        description="Run fabcorr as a service: build the fabric (snapshot, or discovery "
        "joined with Kubernetes), stream counters from the switches, receive sFlow, "
        "attribute every interval, and serve Prometheus metrics (/metrics), the JSON API "
        "(/api/v1/...), /healthz and /readyz. SIGTERM or SIGINT stop it after the interval "
        "in progress is attributed. Exit 0 when stopped, 2 on a bad configuration or "
        "environment (a missing file, an address taken or not on this machine).")
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="configuration (YAML; examples/fabcorr.yaml explains every key, "
                        "`fabcorr config schema` prints its JSON Schema; the FABCORR_* "
                        "variables of the README override it)")
    parser.add_argument("--check", action="store_true",
                        help="validate the configuration (files, secrets, and binding the "
                        "listen addresses, released at once), print a summary and exit")
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"],
                        help="log level (default info; logs go to stderr)")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> ExitStatus:
    config = load_service_config(args.config)
    check_listening(config)  # before anything logs "ready"
    if args.check:
        print(f"{args.config}: ok: {len(config.switches)} switches, sFlow on "
              f"{config.sflow.host}:{config.sflow.port} ({config.sflow.workers} worker(s)), "
              f"metrics and API on {config.http.listen}, {config.interval_s:g} s intervals")
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

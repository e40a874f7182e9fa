"""``fabcorr inlet``: the switches' one sFlow address in front of the shards
(see :mod:`correlator.inlet`)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from correlator.cli.status import ExitStatus
from correlator.service.config import ServiceConfig, load_service_config
from correlator.service.http import HttpServer
from correlator.sflow.receiver import ReceiverConfig, open_socket
from inventory.errors import ConfigError
from inventory.schema import split_address

_log = logging.getLogger(__name__)


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr inlet``."""
    parser = commands.add_parser(
        "inlet", help="forward each switch's sFlow datagrams unchanged to the shard owning it",
        description="Receive the switches' sFlow datagrams and forward each, unchanged, to "
        "the shard (`fabcorr run --shard I/N`) owning its switch: the agent address its "
        "header names, of a known switch (the configuration's, its topology snapshot's and "
        "fact files'), sent from one of that switch's own addresses. Nothing after the header "
        "is read. Serves Prometheus metrics of what it forwarded and dropped per shard "
        "(/metrics), /healthz and /readyz. The shards trust it as a relay (sflow.relays). "
        "SIGTERM or SIGINT stop it. Exit 0 when stopped, 2 on a bad configuration.")
    parser.add_argument("--config", required=True, metavar="FILE",
                        help="the shards' configuration (YAML): its switches, "
                        "topology.snapshot and topology.facts say which switches exist; its "
                        "sflow.listen, service.listen and sflow.rcvbuf_bytes are the defaults "
                        "below")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--shard-address", action="append", metavar="HOST:PORT",
                       help="a shard's sFlow address, once per shard: the first is shard 0, "
                       "and so on (host names are resolved again every --resolve-every)")
    where.add_argument("--shard-dns", metavar="STATEFULSET.SERVICE",
                       help="find the --shards pods of a StatefulSet through its headless "
                       "Service's DNS: shard I is STATEFULSET-I.SERVICE (e.g. "
                       "fabcorr-shard.fabcorr-shard), on --shard-port")
    parser.add_argument("--shards", type=int, metavar="N",
                        help="with --shard-dns: the number of shards (the StatefulSet's "
                        "replicas; the shards' shards.count)")
    parser.add_argument("--shard-port", type=int, metavar="PORT",
                        help="with --shard-dns: the shards' sFlow port (default: the "
                        "configuration's sflow.listen port)")
    parser.add_argument("--listen", metavar="HOST:PORT",
                        help="where the switches send sFlow (default: sflow.listen)")
    parser.add_argument("--http", metavar="HOST:PORT",
                        help="where /metrics, /healthz and /readyz are served (default: "
                        "service.listen; with the configuration's TLS and basic auth)")
    parser.add_argument("--resolve-every", type=float, default=10.0, metavar="SECONDS",
                        help="how often the shards are resolved again and the snapshot and "
                        "fact files checked for changes (default 10)")
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"],
                        help="log level (default info; logs go to stderr)")
    parser.set_defaults(run=_run)


def targets_of(args: argparse.Namespace, config: ServiceConfig) -> list[tuple[str, int]]:
    """The shards' (host, port), shard ``i`` at ``i``; ConfigError names a bad option."""
    from correlator.inlet.targets import statefulset_targets

    if args.shard_address:
        if args.shards is not None and args.shards != len(args.shard_address):
            raise ConfigError("--shards", "", f"{args.shards} shards but "
                              f"{len(args.shard_address)} --shard-address")
        return [_address("--shard-address", text) for text in args.shard_address]
    if args.shards is None or args.shards < 1:
        raise ConfigError("--shards", "", "--shard-dns needs the number of shards (>= 1)")
    port = config.sflow.port if args.shard_port is None else args.shard_port
    try:
        return statefulset_targets(args.shard_dns, args.shards, port)
    except ValueError as exc:
        raise ConfigError("--shard-dns", "", str(exc)) from None


def _address(option: str, text: str) -> tuple[str, int]:
    try:
        return split_address(text)
    except ValueError as exc:
        raise ConfigError(option, "", str(exc)) from None


def _run(args: argparse.Namespace) -> ExitStatus:
    from correlator.inlet.inlet import Inlet, configured_switches
    from correlator.inlet.metrics import InletMetrics

    config = load_service_config(args.config)
    targets = targets_of(args, config)
    if not args.resolve_every > 0:
        raise ConfigError("--resolve-every", "", "must be > 0")
    host, port = _address("--listen", args.listen) if args.listen else \
        (config.sflow.host, config.sflow.port)
    http_host, http_port = _address("--http", args.http) if args.http else config.http.address
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    sock = open_socket(ReceiverConfig(host=host, port=port,
                                      rcvbuf_bytes=config.sflow.rcvbuf_bytes))
    inlet = Inlet(sock, targets, *configured_switches(config))
    settings = config.http  # protected as the shards' own are
    http = HttpServer(http_host, http_port, lambda: inlet, InletMetrics(inlet), api=False,
                      tls=(settings.tls_cert, settings.tls_key) if settings.tls_cert else None,
                      auth=(settings.username, settings.password) if settings.username
                      else None)
    try:
        inlet.refresh()
        http.start()
        _log.info("forwarding sFlow from %s:%d to %d shards; metrics on %s:%d", host,
                  sock.getsockname()[1], len(targets), http_host, http.port)
        while not stop.wait(args.resolve_every):
            try:
                inlet.refresh()
            except Exception as exc:  # the routes and addresses so far stay
                _log.error("refresh failed, again in %g s: %s: %s", args.resolve_every,
                           type(exc).__name__, exc)
    finally:
        http.close()
        inlet.close()
        sock.close()
    return ExitStatus.OK

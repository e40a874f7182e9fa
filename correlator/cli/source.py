"""Where the read commands get their answers: a running service's API (``--server URL``),
or the same API answering here from files (``--snapshot``, and ``--pcap`` for traffic) —
one :func:`correlator.service.api.handle`, so both print the same thing."""

from __future__ import annotations

import argparse
import os
from typing import Any

from correlator.cli import remote
from correlator.cli.attribute import read_readings
from correlator.cli.options import resolve_source
from correlator.cli.sflow import read_capture
from correlator.cli.status import ExitStatus, Refused
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.api import PREFIX, handle
from correlator.view import View
from inventory.errors import ConfigError
from topology.snapshot import load_snapshot

PASSWORD_ENV = "FABCORR_PASSWORD"


def ask(args: argparse.Namespace, endpoint: str, **params: object) -> Any:
    """The API's answer to ``GET /api/v1/<endpoint>?params`` (None values left out);
    anything but 200 raises Refused (404: exit 1, else 2)."""
    resolve_source(args)
    path = PREFIX + endpoint
    query = {k: [str(v)] for k, v in params.items() if v is not None}
    if args.server:
        status, body = remote.get(args.server, path, query, auth=_auth(args),
                                  ca_file=args.ca_file)
    else:
        status, body = handle(_offline(args), "GET", path, query)
    if status == 200:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if status == 401:
        error = (f"{args.server}: {error or 'authentication required'} (--user or "
                 f"$FABCORR_USER, and ${PASSWORD_ENV})")
    raise Refused(error or f"HTTP {status}",
                  ExitStatus.NOT_FOUND if status == 404 else ExitStatus.USAGE)


def _auth(args: argparse.Namespace) -> tuple[str, str] | None:
    if not args.user:
        return None
    password = os.environ.get(PASSWORD_ENV)
    if password is None:
        raise ConfigError(f"${PASSWORD_ENV}", "", f"not set; --user {args.user} needs it")
    return args.user, password


def _offline(args: argparse.Namespace) -> View:
    """The snapshot's view; for a command with ``--pcap``, the replayed run's last one."""
    if "pcap" not in args:
        return View(load_snapshot(args.snapshot))
    if not args.pcap:
        raise ConfigError("--pcap", "", "needed to answer from files (or ask a service "
                          "with --server URL)")
    fabric = load_snapshot(args.snapshot)
    readings = list(read_readings(args.counters)) if args.counters else []
    result = replay(fabric, read_capture(args.pcap), readings, ReplayConfig(args.interval))
    return replay_view(fabric, result)

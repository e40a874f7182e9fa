"""Where the read commands get their answers: a running service's API (``--server URL``),
or the same API answering here from files (``--snapshot``, and ``--pcap`` for traffic) —
one :func:`correlator.service.api.handle`, so both print the same thing."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from correlator.cli import merge, remote, servers
from correlator.cli.attribute import read_readings
from correlator.cli.options import resolve_source
from correlator.cli.sflow import read_capture
from correlator.cli.status import ExitStatus, Refused
from correlator.replay import ReplayConfig, replay, replay_view
from correlator.service.api import MAX_LIMIT, PREFIX, handle
from correlator.view import View
from inventory.errors import ConfigError, SourceError
from topology.snapshot import load_snapshot

PASSWORD_ENV = "FABCORR_PASSWORD"


def ask(args: argparse.Namespace, endpoint: str, **params: object) -> Any:
    """The API's answer to ``GET /api/v1/<endpoint>?params`` (None values left out);
    anything but 200 raises Refused (404: exit 1, else 2). Several servers (shards): each
    is asked and their answers merged (:mod:`correlator.cli.merge`); one that does not
    answer is named on stderr and listed in ``args.unanswered`` (exit 3), the answer is
    the others'."""
    resolve_source(args)
    if not args.server:
        return _answer(args, handle(_offline(args), "GET", PREFIX + endpoint,
                                    _query(params)), None)
    urls = servers.expand(args.server)
    if len(urls) == 1:
        return _answer(args, _get(args, urls[0], endpoint, params), urls[0])
    return _merged(args, urls, endpoint, params)


def _merged(args: argparse.Namespace, urls: list[str], endpoint: str,
            params: dict[str, object]) -> Any:
    """The shards' answers merged; the URLs that did not answer go to ``args.unanswered``."""
    def each(path: str, **query: object) -> dict[str, Any]:
        found, failed = {}, {}
        for url in urls:
            if url in args.unanswered:
                continue
            try:
                found[url] = _answer(args, _get(args, url, path, query), url)
            except (Refused, SourceError) as exc:
                failed[url] = exc
        if not found:  # what the API refused before what could not be reached
            raise next((e for e in failed.values() if isinstance(e, Refused)),
                       next(iter(failed.values())))
        for url, exc in failed.items():
            print(f"fabcorr: {url}: warning: no answer ({exc}); answering from the other "
                  "shards", file=sys.stderr)
            args.unanswered.append(url)
        return found

    args.unanswered = getattr(args, "unanswered", [])
    if endpoint == "hotspots":
        return merge.hotspots([*each(endpoint).values()])
    if endpoint.startswith("links/"):
        return merge.who([*each(endpoint).values()])
    if endpoint.startswith("top/") and params.get("link") is None:
        limit = int(str(params["limit"]))  # every sender of each shard, if the API takes it
        every = MAX_LIMIT if 1 <= limit <= MAX_LIMIT else limit
        return merge.top([*each(endpoint, **{**params, "limit": every}).values()], limit)
    if endpoint.startswith("top/"):
        tops = each(endpoint, **params)
        whos = each(f"links/{params['link']}")
        both = [url for url in whos if url in tops]
        return merge.top_link([tops[url] for url in both], [whos[url] for url in both])
    switches = each("topology/facts", part="switches")  # the topology: every shard's
    hosts = each("topology/facts", part="hosts")  # switches and hosts, one's workloads
    url = next(iter(hosts))  # each of them answered both
    workloads = _answer(args, _get(args, url, "topology/facts", {"part": "workloads"}), url)
    fabric = merge.fabric(workloads, [(switches[url], hosts[url]) for url in hosts])
    return _answer(args, handle(View(fabric), "GET", PREFIX + endpoint, _query(params)), None)


def _query(params: dict[str, object]) -> dict[str, list[str]]:
    return {k: [str(v)] for k, v in params.items() if v is not None}


def _get(args: argparse.Namespace, url: str, endpoint: str, params: dict[str, object]
         ) -> tuple[int, Any]:
    return remote.get(url, PREFIX + endpoint, _query(params), auth=_auth(args),
                      ca_file=args.ca_file)


def _answer(args: argparse.Namespace, answer: tuple[int, Any], server: str | None) -> Any:
    """The body of a 200; else Refused (404: exit 1, else 2)."""
    status, body = answer
    if status == 200:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if status == 401:
        error = (f"{server}: {error or 'authentication required'} (--user or "
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

"""Options shared by the commands: where the answers come from (a snapshot, a capture, or a
running service: ``--server``, default ``$FABCORR_SERVER``), the output format (``-o``) and
the file written (``--out FILE``, ``-`` for standard output)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from urllib.parse import urlsplit

from correlator.cli.printers import FORMATS
from correlator.service.config import MIN_INTERVAL_S
from inventory.errors import ConfigError

DEFAULT_SNAPSHOT = "topology.json"
SERVER_ENV = "FABCORR_SERVER"


def number(kind: type[int] | type[float], low: float | None = None,
           high: float | None = None) -> Callable[[str], float]:
    """An argparse type: a finite ``kind`` within ``low``..``high`` (either may be open).

    >>> number(int, 1)("3"), number(float, 0.1)("0.5")
    (3, 0.5)
    >>> number(float, 0.1)("1e-9")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be >= 0.1, not 1e-9
    """
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, not {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, not {text!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = (f"between {low:g} and {high:g}" if low is not None and high is not None
                      else f">= {low:g}" if low is not None else f"<= {high:g}")
            raise argparse.ArgumentTypeError(f"must be {bounds}, not {text.strip()}")
        return value
    return parse


def checked(check: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a function whose ValueError says what is wrong."""
    def parse(text: str) -> object:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


INTERVAL = number(float, MIN_INTERVAL_S)
"""An attribution interval in seconds: shorter ones hold too few samples to apportion."""


def server_urls(text: str) -> list[str]:
    """An argparse type: comma-separated :func:`server_url` s.

    >>> server_urls("http://a:8080, http://b:8080")
    ['http://a:8080', 'http://b:8080']
    """
    return [server_url(url.strip()) for url in text.split(",") if url.strip()]


def server_url(text: str) -> str:
    """An argparse type: an ``http://`` or ``https://`` URL with a host."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http:// or https:// URL")
    return text


def add_snapshot(parser: argparse._ActionsContainer) -> None:
    """``--snapshot FILE`` (default ``$FABCORR_SNAPSHOT``, else ./topology.json)."""
    parser.add_argument("--snapshot", default=os.environ.get("FABCORR_SNAPSHOT",
                                                             DEFAULT_SNAPSHOT),
                        metavar="FILE", help="topology snapshot to read (default "
                        f"$FABCORR_SNAPSHOT, else ./{DEFAULT_SNAPSHOT})")


def add_format(parser: argparse.ArgumentParser) -> None:
    """``-o table|wide|json|yaml|jsonl``."""
    parser.add_argument("-o", "--output", choices=FORMATS, default="table",
                        help="output format: " + ", ".join(FORMATS) + " (default table; "
                        "wide adds columns, jsonl is one JSON document a line)")


def add_out(parser: argparse.ArgumentParser, what: str, default: str | None = None) -> None:
    """``--out FILE``: where ``what`` is written, ``-`` for standard output."""
    parser.add_argument("--out", default=default, required=default is None, metavar="FILE",
                        help=f"{what} to write ('-' for standard output"
                        + (f"; default {default})" if default else ")"))


def to_stdout(data: str | bytes) -> None:
    """What ``--out -`` writes: text, or bytes (after any text already buffered)."""
    if isinstance(data, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
    else:
        sys.stdout.write(data)


def resolve_source(args: argparse.Namespace) -> None:
    """Settle ``args.server`` and ``args.snapshot`` of a read command: ``--server``; else
    (without ``--snapshot`` or ``--pcap``) ``$FABCORR_SERVER``; else files, the snapshot
    from ``--snapshot``, ``$FABCORR_SNAPSHOT`` or ./topology.json."""
    files = args.snapshot is not None or getattr(args, "pcap", None)
    if args.server is None and not files and os.environ.get(SERVER_ENV):
        try:
            args.server = server_urls(os.environ[SERVER_ENV])
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"${SERVER_ENV}", "", str(exc)) from None
    if args.snapshot is None:
        args.snapshot = os.environ.get("FABCORR_SNAPSHOT", DEFAULT_SNAPSHOT)


def add_source(parser: argparse.ArgumentParser, capture: bool = False) -> None:
    """``--snapshot FILE`` or ``--server URL`` (with ``--user``, ``--ca-file``); with
    ``capture``, also the saved run to replay offline: ``--pcap``, ``--counters``,
    ``--interval``."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--snapshot", metavar="FILE", help="topology snapshot to read "
                        f"(default $FABCORR_SNAPSHOT, else ./{DEFAULT_SNAPSHOT})")
    source.add_argument("--server", metavar="URL", type=server_urls, action="extend",
                        help="ask a running fabcorr service (http[s]://HOST:PORT) instead of "
                        f"reading files (default ${SERVER_ENV} unless --snapshot or --pcap "
                        "is given); shards: repeat it or separate URLs with commas, or name "
                        "a headless Service (each of its addresses is asked), and the "
                        "answers are merged into the fabric's (exit 3 if a shard did not "
                        "answer)")
    parser.add_argument("--user", default=os.environ.get("FABCORR_USER"),
                        help="basic auth user for --server (default $FABCORR_USER); the "
                        "password comes from $FABCORR_PASSWORD")
    parser.add_argument("--ca-file", metavar="FILE",
                        help="CA certificates to verify an https --server with (default: the "
                        "system's)")
    if capture:
        parser.add_argument("--pcap", metavar="FILE",
                            help="without --server: the sFlow capture (pcap or pcapng) to "
                            "replay; the answer is about its last interval")
        parser.add_argument("--counters", metavar="FILE",
                            help="with --pcap: port counter readings, JSON lines (see "
                            "`fabcorr attribute --help`)")
        parser.add_argument("--interval", type=INTERVAL, default=10.0, metavar="SECONDS",
                            help=f"with --pcap: attribution interval (default 10, at least "
                            f"{MIN_INTERVAL_S:g})")

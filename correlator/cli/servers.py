"""Which services a read command asks: the ``--server`` URLs (repeated or comma-separated),
each host name resolved to all its addresses (A and AAAA), so a Kubernetes headless
Service name (``http://fabcorr-shards.monitoring.svc:8080``) stands for one URL per shard.
A name with one address, or an IP, stays the URL it is."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit, urlunsplit

from inventory.errors import SourceUnreachable

Resolver = Callable[[str, int], list[str]]


def addresses(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (A and AAAA records), in the resolver's order."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise SourceUnreachable(f"cannot resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def expand(urls: Sequence[str], resolve: Resolver | None = None) -> list[str]:
    """One URL per address of each URL's host name (duplicates once), resolved by
    ``resolve`` (default :func:`addresses`).

    >>> expand(["http://shards:8080"], lambda host, port: ["10.0.0.1", "fd00::2"])
    ['http://10.0.0.1:8080', 'http://[fd00::2]:8080']
    >>> expand(["http://10.0.0.1:8080/", "http://one:80"], lambda host, port: ["10.0.0.9"])
    ['http://10.0.0.1:8080/', 'http://one:80']
    """
    found: list[str] = []
    for url in urls:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if _is_ip(host):
            found.append(url)
            continue
        port = parts.port or (443 if parts.scheme == "https" else 80)
        known = (resolve or addresses)(host, port)
        if len(known) <= 1:
            found.append(url)
            continue
        auth = parts.netloc.rpartition("@")[0]
        for address in known:
            netloc = f"[{address}]" if ":" in address else address
            netloc = (auth + "@" if auth else "") + netloc + (f":{parts.port}"
                                                             if parts.port else "")
            found.append(urlunsplit(parts._replace(netloc=netloc)))
    return list(dict.fromkeys(found))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True

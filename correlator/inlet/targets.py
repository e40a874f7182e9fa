"""Where the shards are: a static list of ``HOST:PORT`` (index = position), or the pods of
a StatefulSet behind a headless Service (``NAME-I.SERVICE``), resolved again and again
(a restarted pod may come back with another address).

>>> statefulset_targets("fabcorr-shard.fabcorr-shard", 2, 6343)
[('fabcorr-shard-0.fabcorr-shard', 6343), ('fabcorr-shard-1.fabcorr-shard', 6343)]
>>> resolve_targets([("a", 1), ("b", 2)], lambda host, port: ["10.0.0.7"] if host == "a" else [])
[(b'\\n\\x00\\x00\\x07', 1), None]
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Callable, Sequence

Resolve = Callable[[str, int], Sequence[str]]
"""A host name (or address) and port to its addresses; empty or OSError when unknown."""

_log = logging.getLogger(__name__)


def statefulset_targets(pods: str, count: int, port: int) -> list[tuple[str, int]]:
    """The ``count`` pods of ``pods`` (``STATEFULSET.SERVICE[.NAMESPACE...]``): the DNS name
    ``STATEFULSET-I.SERVICE...`` of each, in ordinal order."""
    statefulset, dot, service = pods.partition(".")
    if not (statefulset and dot and service):
        raise ValueError(f"expected STATEFULSET.SERVICE (e.g. fabcorr-shard.fabcorr-shard), "
                         f"not {pods!r}")
    return [(f"{statefulset}-{index}.{service}", port) for index in range(count)]


def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system's resolver gives ``host`` (DNS in a pod)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)
    return [str(address[0]) for *_, address in found]


def resolve_targets(targets: Sequence[tuple[str, int]], resolve: Resolve
                    ) -> list[tuple[bytes, int] | None]:
    """Each target's first address (packed) and port; None for one not resolved now."""
    found: list[tuple[bytes, int] | None] = []
    for host, port in targets:
        try:
            addresses = resolve(host, port)
        except OSError as exc:
            _log.debug("shard %s does not resolve: %s", host, exc)
            addresses = []
        found.append((ipaddress.ip_address(addresses[0]).packed, port) if addresses else None)
    return found

"""Which shard owns a switch: rendezvous (highest random weight) hashing of its name.

Every switch belongs to exactly one of ``count`` shards: the one whose weight for the
switch's name is the highest. A weight is the first 8 bytes of BLAKE2b over ``name#index``,
so every process (shards, inlets, the CLI) agrees without talking, and going from N to
N + 1 shards moves only the switches the new shard wins, about 1/(N + 1).

>>> [owner(name, 3) for name in ("leaf01", "leaf02", "spine01")]
[1, 0, 0]
>>> parse_shard("1/3")
Shard(index=1, count=3)
>>> parse_shard("auto", pod_name="fabcorr-2", count=3)
Shard(index=2, count=3)
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import NamedTuple


class Shard(NamedTuple):
    """Shard ``index`` (from 0) of ``count``."""

    index: int
    count: int

    def owns(self, switch: str) -> bool:
        """Whether this shard owns ``switch``."""
        return owner(switch, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


ALONE = Shard(0, 1)
"""One process owning every switch: the default."""


def weight(index: int, switch: str) -> int:
    """Shard ``index``'s weight for ``switch``."""
    digest = hashlib.blake2b(f"{switch}#{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@functools.lru_cache(maxsize=1 << 16)
def owner(switch: str, count: int) -> int:
    """The index of the shard of ``count`` that owns ``switch`` (remembered: a shard asks
    for every counter reading)."""
    if count < 1:
        raise ValueError(f"a fabric has at least one shard, not {count}")
    return max(range(count), key=lambda index: weight(index, switch))


_ORDINAL = re.compile(r"-(\d+)$")


def parse_shard(text: str, pod_name: str | None = None, count: int | None = None) -> Shard:
    """``I/N``, or ``auto``: the StatefulSet ordinal at the end of ``pod_name`` (``name-I``)
    with ``count`` shards (from the configuration).

    >>> parse_shard("3/3")
    Traceback (most recent call last):
    ...
    ValueError: shard 3/3: the index must be below the count (from 0)
    >>> parse_shard("auto", pod_name="fabcorr", count=3)
    Traceback (most recent call last):
    ...
    ValueError: --shard auto: pod name 'fabcorr' does not end in a StatefulSet ordinal (-N)
    """
    if text == "auto":
        if count is None:
            raise ValueError("--shard auto needs the shard count (shards.count in the config)")
        found = _ORDINAL.search(pod_name or "")
        if not found:
            raise ValueError(f"--shard auto: pod name {pod_name!r} does not end in a "
                             "StatefulSet ordinal (-N)")
        text = f"{found.group(1)}/{count}"
    index, slash, total = text.partition("/")
    if not (slash and index.isdigit() and total.isdigit()):
        raise ValueError(f"shard {text!r}: expected I/N (e.g. 0/3) or auto")
    shard = Shard(int(index), int(total))
    if shard.count < 1:
        raise ValueError(f"shard {text}: the count must be at least 1")
    if shard.index >= shard.count:
        raise ValueError(f"shard {text}: the index must be below the count (from 0)")
    return shard

"""From sample counts to shares of a link's bytes, each with a 95 % interval (REFERENCE §8).

A group (tenant, job, pod...) of ``c`` of the ``n`` samples of a link direction, with
``b`` of its ``B`` estimated bytes, has the byte share ``s = b / B``. Its interval is the
Wilson score interval of the sample fraction ``p = c / n``, scaled by ``s / p`` (1 when
every frame has the same size): unlike ``p ± 1.96·sqrt(p(1-p)/n)`` it stays inside 0..1
and is not empty at ``p = 1`` or for a handful of samples.

When the port counters give the exact bytes ``T`` of the interval, a group's bytes are
``s·T`` within ``[low·T, high·T]``. Without them its bytes are the sampled estimate
``N̂ = b`` within ``N̂·(1 ± 1.96/sqrt(c))``, sFlow's own bound for a class of ``c`` samples.

>>> round(wilson(50, 100)[0], 4), round(wilson(50, 100)[1], 4)
(0.4038, 0.5962)
>>> [round(x, 4) for x in wilson(10, 10)]
[0.7225, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

Z95 = 1.959963984540054
OTHER = "other"


def wilson(c: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``c`` successes in ``n`` trials."""
    if n <= 0:
        return 0.0, 1.0
    p, z2 = c / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


class Share(NamedTuple):
    """One group's part of a link direction in one interval.

    ``bytes`` is apportioned from the counters when the interval had them (``exact``),
    else the sampled estimate; ``low`` / ``high`` bound ``bytes`` at 95 %.
    """

    name: str
    samples: int
    share: float
    share_low: float
    share_high: float
    bytes: float
    low: float
    high: float
    packets: float
    exact: bool


Sums = tuple[int, float, float]
"""(samples, estimated bytes, estimated packets) of one group."""


def share_of(name: str, sums: Sums, n: int, total_bytes: float,
             exact_bytes: float | None) -> Share:
    """The share of one group of a link direction with ``n`` samples and ``total_bytes``
    estimated bytes; ``exact_bytes`` from the counters when known. Packets stay the
    sampled estimate.

    >>> s = share_of("tenant:a", (25, 2500.0, 25.0), 100, 10000.0, 1_000_000.0)
    >>> s.share, round(s.share_low, 4), round(s.share_high, 4), s.bytes, round(s.low)
    (0.25, 0.1755, 0.343, 250000.0, 175452)
    >>> e = share_of("tenant:a", (25, 2500.0, 25.0), 100, 10000.0, None)
    >>> e.bytes, round(e.low, 1), round(e.high, 1)
    (2500.0, 1520.0, 3480.0)
    """
    c, estimated, packets = sums
    share = estimated / total_bytes if total_bytes > 0 else 0.0
    low, high = wilson(c, n) if c else (0.0, 0.0)
    scale = share * n / c if c else 0.0  # the byte share over the sample share
    share_low, share_high = low * scale, min(1.0, high * scale)
    if exact_bytes is not None:
        return Share(name, c, share, share_low, share_high, share * exact_bytes,
                     share_low * exact_bytes, share_high * exact_bytes, packets, True)
    margin = Z95 / math.sqrt(c) if c else 1.0
    return Share(name, c, share, share_low, share_high, estimated,
                 max(0.0, estimated * (1 - margin)), estimated * (1 + margin), packets, False)


def shares(groups: Mapping[str, Sums], exact_bytes: float | None = None,
           top: int | None = None) -> tuple[Share, ...]:
    """Every group's share, largest first; beyond ``top`` groups the rest is one ``other``.

    >>> [(s.name, s.samples, s.share) for s in shares(
    ...     {"a": (6, 600.0, 6.0), "b": (3, 300.0, 3.0), "c": (1, 100.0, 1.0)}, top=1)]
    [('a', 6, 0.6), ('other', 4, 0.4)]
    """
    if len(groups) == 1:  # most link directions carry one tenant, job, pod: no sorting
        ((name, sums),) = groups.items()
        return (share_of(name, sums, sums[0], sums[1], exact_bytes),)
    n = sum(s[0] for s in groups.values())
    total = sum(s[1] for s in groups.values())
    ranked = sorted(groups.items(), key=lambda item: (-item[1][1], item[0]))
    if top is not None and len(ranked) > top:
        rest = ranked[top:]
        merged = (sum(s[0] for _, s in rest), sum(s[1] for _, s in rest),
                  sum(s[2] for _, s in rest))
        ranked = [*ranked[:top], (OTHER, merged)]
    return tuple(share_of(name, sums, n, total, exact_bytes)
                 for name, sums in ranked)

"""From samples to shares of a link's bytes, each with a 95 % interval (REFERENCE §8, §8a).

A group (tenant, job, pod...) of ``c`` of the ``n`` samples of a link direction, with
``b`` of its ``B`` estimated bytes, has the byte share ``R = b / B``. sFlow samples
packets, not bytes, so when frame sizes differ the sample share ``c / n`` says little
about ``R``. The interval is the wider, on each side, of

- the ratio estimator's: ``R ± 1.96·sqrt(Var R)`` with, by the delta method,
  ``Var R = ((1 - R)²·v + R²·(V - v)) / B²``, where ``v`` is the variance of the
  group's estimated bytes (the sum of its sampled frame lengths squared, times the
  sampling rate squared) and ``V`` the link's;
- the count interval: the Wilson score interval of ``c / n`` scaled by ``R / (c / n)``,
  which stays inside 0..1 and is not empty for a handful of samples;
- above the share, with fewer than :data:`FEW_SAMPLES` samples, the ratio interval on the
  log scale, ``R·exp(1.96·sqrt(Var R) / R)``;
- above the share, with fewer than :data:`SCANT_SAMPLES` samples, also the missed-class
  bound (:func:`missed_class_high`).

A group whose bytes ride on a few large frames is estimated low whenever its few samples
missed them, and its sum of squared lengths is small then too, so no interval built from
its own samples reaches the truth above (the namespace lab's tenant C: a quarter of its
frames are 1,098 B and carry 71 % of its bytes; 3 samples miss them all 42 % of the time).
The link's samples show which large frames there are, and the chance of missing them
bounds how many of the group's packets they can be. Checked on a seeded simulation of
frame-size and RoCE-like mixes and on a replay of the lab's sampling
(tests/correlator/attribution/test_estimate_coverage.py, test_estimate_lab_replay.py).

When the port counters give the exact bytes ``T`` of the interval, a group's bytes are
``R·T`` within ``[low·T, high·T]``. Without them its bytes are the estimate ``b`` with
the standard error ``sqrt(v)``: never tighter than sFlow's ``b·(1 ± 1.96/sqrt(c))``, the
same for equal frames (the sum of ``c`` squares is at least the square of their sum over
``c``).

>>> round(wilson(50, 100)[0], 4), round(wilson(50, 100)[1], 4)
(0.4038, 0.5962)
>>> [round(x, 4) for x in wilson(10, 10)]
[0.7225, 1.0]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import NamedTuple

Z95 = 1.959963984540054
FEW_SAMPLES = 30
"""Below this many samples the normal approximation of a group's bytes is not trusted."""
SCANT_SAMPLES = 10
"""Below this many samples a group may have missed a whole class of its frames."""
MISSED = 0.05
"""The chance below which a group's samples are taken not to have missed a frame class."""
COUNT_Z = 0.5
"""The normal quantile of the packet-share factor of :func:`missed_class_high`."""
OTHER = "other"


def wilson(c: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``c`` successes in ``n`` trials."""
    if n <= 0:
        return 0.0, 1.0
    p, z2 = c / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # every trial a success (or none): the bound is 1 (or 0) exactly, not its rounding
    return (0.0 if c <= 0 else max(0.0, centre - half),
            1.0 if c >= n else min(1.0, centre + half))


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


Sums = tuple[int, float, float, float]
"""(samples, estimated bytes, estimated packets, variance of the estimated bytes) of one
group."""


def share_of(name: str, sums: Sums, n: int, total_bytes: float, total_variance: float,
             exact_bytes: float | None) -> Share:
    """The share of one group of a link direction with ``n`` samples, ``total_bytes``
    estimated bytes and ``total_variance``; ``exact_bytes`` from the counters when known.
    Packets stay the sampled estimate.

    Equal 100-byte frames at rate 1: the ratio interval is the wider one below the share,
    Wilson's above it.

    >>> s = share_of("tenant:a", (25, 2500.0, 25.0, 250_000.0), 100, 10000.0, 1e6, 1e6)
    >>> s.share, round(s.share_low, 4), round(s.share_high, 4), s.bytes, round(s.low)
    (0.25, 0.1651, 0.3511, 250000.0, 165131)
    >>> e = share_of("tenant:a", (25, 2500.0, 25.0, 250_000.0), 100, 10000.0, 1e6, None)
    >>> e.bytes, round(e.low, 1), round(e.high, 1)
    (2500.0, 1520.0, 3480.0)

    One 9,000-byte frame among 99 of 100 bytes: 48 % of the bytes from 1 % of the samples.

    >>> big = share_of("tenant:b", (1, 9000.0, 1.0, 81e6), 100, 18900.0, 81e6 + 990_000, None)
    >>> round(big.share, 3), round(big.share_low, 3), round(big.share_high, 3)
    (0.476, 0.0, 1.0)
    """
    return Share(name, *_share(*sums, n, total_bytes, total_variance, exact_bytes))


@functools.lru_cache(maxsize=1 << 16, typed=True)
def _share(c: int, estimated: float, packets: float, variance: float, n: int,
           total_bytes: float, total_variance: float, exact_bytes: float | None
           ) -> tuple[int, float, float, float, float, float, float, float, bool]:
    """:func:`share_of`'s numbers, computed once for the same sums: groups of a link
    direction often have them (a pair seen once, in frames of one size)."""
    share = estimated / total_bytes if total_bytes > 0 else 0.0
    share_low, share_high = _interval(c, n, share, variance, total_bytes, total_variance)
    if exact_bytes is not None:
        return (c, share, share_low, share_high, share * exact_bytes,
                share_low * exact_bytes, share_high * exact_bytes, packets, True)
    margin = Z95 * math.sqrt(variance) if c else estimated
    return (c, share, share_low, share_high, estimated, max(0.0, estimated - margin),
            estimated + margin, packets, False)


def _interval(c: int, n: int, share: float, variance: float, total_bytes: float,
              total_variance: float) -> tuple[float, float]:
    """The wider, on each side, of the ratio (with few samples, also on the log scale
    above and, with fewer, the missed-class bound) and the scaled count interval of a
    share."""
    if not c or total_bytes <= 0:
        return 0.0, 0.0
    low, high = wilson(c, n)
    scale = share * n / c  # the byte share over the sample share
    low, high = low * scale, high * scale
    ratio = ((1 - share) ** 2 * variance + share * share * (total_variance - variance)) \
        / (total_bytes * total_bytes)
    half = Z95 * math.sqrt(max(0.0, ratio))
    high = max(high, share + half)
    if c < FEW_SAMPLES and share > 0:
        high = max(high, share * math.exp(min(half / share, 700.0)))
    if c < SCANT_SAMPLES and share > 0:
        high = max(high, missed_class_high(c, n, share, total_bytes, total_variance))
    return max(0.0, min(low, share - half)), min(1.0, high)


def missed_class_high(c: int, n: int, share: float, total_bytes: float,
                      total_variance: float) -> float:
    """An upper bound of the byte share ``R`` of a group of ``c`` of a link's ``n``
    samples, should its samples have missed the link's large frames.

    The share is ``π·μ_g / μ``: the group's part of the packets times its mean frame
    length over the link's. Its samples estimate ``μ_g`` by their mean ``m_g``; the
    link's by ``m``; so ``R = (c / n)·m_g / m``. The link's large frames are sized by its
    samples' size-biased mean ``M = ΣL² / ΣL``, which for rates that cancel is
    ``m·n·V / B²``, so ``M / m_g = c·V / (R·B²)``. If a part ``q`` of the group's packets
    were frames of length ``M``, all ``c`` samples would miss them with probability
    ``(1 - q)^c``; the largest ``q`` not ruled out at :data:`MISSED` is
    ``q = 1 - MISSED^(1/c)``, and the group's mean is then up to
    ``m_g·(1 + q·(M / m_g - 1))``. Its packet share is up to Wilson's upper bound of
    ``c / n`` at :data:`COUNT_Z`, not at 1.96: the two shortfalls compound but are
    rarely both extreme. Calibrated on the tests the module's docstring names: at z = 0
    the lab replay's groups of under 10 samples are inside 92 %, at 1 the simulation's
    over 99 %, at 0.5 96 and 98 %::

        high = wilson_high(c, n, COUNT_Z)·(n / c)·R·(1 + q·max(0, M / m_g - 1))

    Three 100-byte samples among 27 of 1,000 bytes: ``M / m_g = 9.90``, ``q = 0.63``.

    >>> round(missed_class_high(3, 30, 300 / 27300, 27300.0, 27_030_000.0), 4)
    0.0952
    """
    large = c * total_variance / (share * total_bytes * total_bytes)  # M / m_g
    missed = 1 - MISSED ** (1 / c)
    packets = wilson(c, n, COUNT_Z)[1] * n / c
    return packets * share * (1 + missed * max(0.0, large - 1))


class Ranked(NamedTuple):
    """Groups ranked largest first and cut (the last may be ``other``), and the sums of
    every group before the cut."""

    groups: list[tuple[str, Sums]]
    total: Sums


NONE = Ranked([], (0, 0.0, 0.0, 0.0))


def rank(groups: Mapping[str, Sums], top: int | None = None) -> Ranked:
    """``groups`` largest first (by estimated bytes, then name); beyond ``top`` groups the
    rest is one ``other``.

    >>> rank({"a": (6, 600, 6, 60), "b": (3, 300, 3, 30), "c": (1, 100, 1, 10)}, top=1)
    Ranked(groups=[('a', (6, 600, 6, 60)), ('other', (4, 400, 4, 40))], total=(10, 1000, 10, 100))
    """
    if len(groups) == 1:  # most link directions carry one tenant, job, pod: no sorting
        ((name, sums),) = groups.items()
        return Ranked([(name, sums)], sums)
    total = tuple(sum(s[i] for s in groups.values()) for i in range(4))
    ranked = sorted(groups.items(), key=lambda item: (-item[1][1], item[0]))
    if top is not None and len(ranked) > top:
        rest = ranked[top:]
        merged = tuple(sum(s[i] for _, s in rest) for i in range(4))
        ranked = [*ranked[:top], (OTHER, merged)]  # type: ignore[list-item]
    return Ranked(ranked, total)  # type: ignore[arg-type]


def apportion(ranked: Ranked, exact_bytes: float | None = None) -> tuple[Share, ...]:
    """The share of each of ``ranked``'s groups, in its order."""
    n, total, _, variance = ranked.total
    make, numbers = Share._make, _share  # as share_of, without a call more per group
    return tuple([make((name, *numbers(*sums, n, total, variance, exact_bytes)))
                  for name, sums in ranked.groups])


def shares(groups: Mapping[str, Sums], exact_bytes: float | None = None,
           top: int | None = None) -> tuple[Share, ...]:
    """Every group's share, largest first; beyond ``top`` groups the rest is one ``other``.

    >>> [(s.name, s.samples, s.share) for s in shares(
    ...     {"a": (6, 600.0, 6.0, 6e4), "b": (3, 300.0, 3.0, 3e4), "c": (1, 100.0, 1.0, 1e4)},
    ...     top=1)]
    [('a', 6, 0.6), ('other', 4, 0.4)]
    """
    return apportion(rank(groups, top), exact_bytes)

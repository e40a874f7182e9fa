"""The share method of :mod:`correlator.attribution.estimate` in Python, operation for
operation: the oracle the Rust core's shares (``wire/src/share.rs``) are held to, bit for
bit; and the ranking of a table by name (:func:`rank`) its join is held to. Both were
fabcorr's own until the core took them over; the method's derivation is written out here
and in the product module's docstring.

>>> round(wilson(50, 100)[0], 4), round(wilson(50, 100)[1], 4)
(0.4038, 0.5962)
>>> [round(x, 4) for x in wilson(10, 10)]
[0.7225, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from correlator.attribution.estimate import OTHER, Counters, Ranked, Share, Sums

Z95 = 1.959963984540054
FEW_SAMPLES = 30
"""Below this many samples the normal approximation of a group's bytes is not trusted."""
SCANT_SAMPLES = 10
"""Below this many samples a group may have missed a whole class of its frames."""
MISSED = 0.05
"""The chance below which a group's samples are taken not to have missed a frame class."""
COUNT_Z = 0.5
"""The normal quantile of the packet-share factor of :func:`missed_class_high`."""


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


def share_numbers(c: int, estimated: float, packets: float, variance: float, n: int,
                  total_bytes: float, total_variance: float, exact_bytes: float | None
                  ) -> tuple[int, float, float, float, float, float, float, float, bool]:
    """One group's share of a link direction with ``n`` samples, ``total_bytes`` estimated
    bytes and ``total_variance``, as the fields of :class:`Share` after its name; its
    bytes apportioned from ``exact_bytes`` when given."""
    share = estimated / total_bytes if total_bytes > 0 else 0.0
    share_low, share_high = interval(c, n, share, variance, total_bytes, total_variance)
    if exact_bytes is not None:
        return (c, share, share_low, share_high, share * exact_bytes,
                share_low * exact_bytes, share_high * exact_bytes, packets, True)
    margin = Z95 * math.sqrt(variance) if c else estimated
    return (c, share, share_low, share_high, estimated, max(0.0, estimated - margin),
            estimated + margin, packets, False)


def interval(c: int, n: int, share: float, variance: float, total_bytes: float,
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


def apportion(ranked: Ranked, counters: Counters | None = None) -> tuple[Share, ...]:
    """:func:`correlator.attribution.estimate.apportion`, in Python."""
    n, total, _, variance = ranked.total
    exact = counters.exact if counters is not None else None
    found = [Share(name, *share_numbers(*sums, n, total, variance, exact))
             for name, sums in ranked.groups]
    if counters is None:
        return tuple(found)
    if counters.known is not None:
        least, most = counters.known
        found = [s._replace(low=min(s.low, s.share_low * least),
                            high=max(s.high, s.share_high * most)) for s in found]
    if not counters.disputed:
        return tuple(found)
    return tuple(e._replace(low=min(e.low, c.low), high=max(e.high, c.high))
                 for e, c in zip(apportion(ranked), found, strict=True))


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

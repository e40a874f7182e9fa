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
- above the share, with fewer than 10 samples (``SCANT_SAMPLES``), also the missed-class
  bound (written out in ``missed_class_high`` of the oracle named below).

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

The Rust core computes these shares a table at a time (``wire/src/share.rs``, through
:func:`correlator._wire.shares`), from the exact integer sums of its join; the method in
Python, operation for operation, is ``tests/attribution_oracle/estimate.py``, and the
tests hold the two to the same bits.
"""

from __future__ import annotations

from typing import NamedTuple

from correlator import _wire

Z95: float = _wire.Z95
FEW_SAMPLES: int = _wire.FEW_SAMPLES
"""Below this many samples the normal approximation of a group's bytes is not trusted."""
OTHER: str = _wire.OTHER
"""The group a table's cut leaves over."""


Share = _wire.Share
"""One group's part of a link direction in one interval (a named tuple's fields: name,
samples, share, share_low, share_high, bytes, low, high, packets, exact)."""


Sums = tuple[int, int, int, int]
"""(samples, estimated bytes, estimated packets, variance of the estimated bytes) of one
group: the core's exact integers."""


class Counters(NamedTuple):
    """A link direction's counter bytes, as its shares are apportioned from them."""

    exact: float
    """The direction's bytes by the counters."""
    known: tuple[float, float] | None = None
    """The least and the most bytes the readings on either side of the interval allow:
    each share's bounds stretched from ``share_low`` of the least to ``share_high`` of
    the most."""
    disputed: bool = False
    """The counters contradict the samples: each share is the sampled estimate, within the
    hull of its own 95 % interval and the one apportioned from the counters (either may be
    the wrong one: stale counters, or an unlucky sample)."""


class Ranked(NamedTuple):
    """Groups ranked largest first (by estimated bytes, then name; the core ranks them)
    and cut (the last may be ``other``), and the sums of every group before the cut."""

    groups: list[tuple[str, Sums]]
    total: Sums


NONE = Ranked([], (0, 0, 0, 0))


def apportion(ranked: Ranked, counters: Counters | None = None) -> tuple[Share, ...]:
    """The share of each of ``ranked``'s groups, in its order: apportioned from
    ``counters`` when given, else the sampled estimate.

    Equal 100-byte frames at rate 1, a quarter of them one group's: the ratio interval is
    the wider one below the share, Wilson's above it.

    >>> quarter = Ranked([("tenant:a", (25, 2500, 25, 250_000))], (100, 10_000, 100, 10**6))
    >>> (s,) = apportion(quarter, Counters(1e6))
    >>> s.share, round(s.share_low, 4), round(s.share_high, 4), s.bytes, round(s.low)
    (0.25, 0.1651, 0.3511, 250000.0, 165131)
    >>> (e,) = apportion(quarter)
    >>> e.bytes, round(e.low, 1), round(e.high, 1), e.exact
    (2500, 1520.0, 3480.0, False)

    One 9,000-byte frame among 99 of 100 bytes: 48 % of the bytes from 1 % of the samples.

    >>> big = Ranked([("tenant:b", (1, 9000, 1, 81 * 10**6))], (100, 18_900, 100, 81_990_000))
    >>> [round(x, 3) for x in apportion(big)[0][2:5]]
    [0.476, 0.0, 1.0]
    """
    return tuple(_wire.shares(ranked.groups, ranked.total, counters))

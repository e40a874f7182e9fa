"""The 95 % bounds of a byte share, written out apart from fabcorr.

fabcorr bounds the byte share ``R`` of a group of ``c`` of a link direction's ``n`` samples
by the wider, on each side, of two intervals:

- the count interval: the Wilson score interval of the sample share ``p = c / n`` (here
  the two roots of ``(p - x)**2 = z**2 * x * (1 - x) / n``, solved as the quadratic it is,
  not by fabcorr's closed form), scaled by ``R / p``;
- the ratio estimator's (REFERENCE section 8a): ``R ± z * sqrt(Var R)`` with
  ``Var R = ((1 - R)**2 * S2_g + R**2 * (S2 - S2_g)) / S1**2``, ``S1`` the sum of the
  sampled frame lengths and ``S2`` of their squares (``_g``: the group's). With equal
  frames it is ``p * (1 - p) / n``, the Wald interval. With fewer than 30 samples its upper
  end is also taken on the log scale: ``R * exp(z * sqrt(Var R) / R)``;
- with fewer than 10 samples, above: :func:`missed_class_bound` (never the wider for equal
  frames, so :func:`share_bounds` leaves it out).

Tests that pin this formula through :func:`share_bounds`:

- tests/correlator/attribution/test_share_interval.py (all of it);
- tests/correlator/service/test_api.py::test_top_pods_of_one_link_are_its_shares_per_direction;
- tests/correlator/cli/test_attribute_cli.py (the shares of equal frames);
- tests/correlator/cli/test_sflow_cli.py::test_attribute_shares_hold_the_ground_truth and
  ::test_the_example_capture_names_the_noisy_tenant_and_its_victims.
"""

from __future__ import annotations

import math
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)  # about 1.959964


def wilson_roots(c: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The roots of ``a·x² + b·x + p² = 0`` with ``a = 1 + z²/n``, ``b = -(2p + z²/n)``,
    ``p = c / n``: the larger by the quadratic formula, the smaller as ``p² / a`` over it
    (Vieta). The discriminant ``b² - 4a·p²`` is expanded by hand to
    ``4z²·p(1 - p)/n + z⁴/n²``: subtracting two numbers near 4 would lose digits."""
    p = c / n
    a, b = 1 + z * z / n, -(2 * p + z * z / n)
    discriminant = 4 * z * z * p * (1 - p) / n + z ** 4 / (n * n)
    high = (-b + math.sqrt(discriminant)) / (2 * a)
    return p * p / (a * high), high


def ratio_variance(share: float, group_squares: float, total: float,
                   total_squares: float) -> float:
    """``Var R`` of REFERENCE 8a from the sums of the sampled lengths (any common scale)."""
    return ((1 - share) ** 2 * group_squares + share ** 2 * (total_squares - group_squares)) \
        / total ** 2


def share_bounds(c: int, n: int, share: float, variance: float | None = None
                 ) -> tuple[float, float]:
    """The bounds of byte share ``share`` of ``c`` of ``n`` samples with ``Var R`` =
    ``variance`` (equal frames when None), cut to 0..1."""
    if variance is None:
        variance = ratio_variance(c / n, c, n, n)  # frames of length 1
    low, high = wilson_roots(c, n)
    scale, half = share / (c / n), Z95 * math.sqrt(variance)
    above = max(high * scale, share + half)
    if c < 30 and share > 0:
        above = max(above, share * math.exp(half / share))
    return max(0.0, min(low * scale, share - half)), min(1.0, above)


def missed_class_bound(group: list[float], others: list[float]) -> float:
    """The byte share of the group of sampled frame lengths ``group`` among ``group +
    others`` could be this high had its samples missed a class of large frames: a part
    ``q`` of its packets, with ``(1 - q)**c = 0.05``, of the link's size-biased mean length
    ``M``, and its part of the packets up to Wilson's upper root at z = 0.5."""
    c, n = len(group), len(group) + len(others)
    lengths = group + others
    mean, link_mean = sum(group) / c, sum(lengths) / n
    large = sum(x * x for x in lengths) / sum(lengths)
    q = 1 - 0.05 ** (1 / c)
    return wilson_roots(c, n, 0.5)[1] * (mean + q * max(0.0, large - mean)) / link_mean

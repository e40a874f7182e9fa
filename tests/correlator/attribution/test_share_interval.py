"""Share intervals against the bounds written out in :mod:`tests.correlator.attribution.
bounds` (Wilson's count interval, the ratio estimator's, the wider of the two on each side).

Every test here pins today's interval (the module lists the others that do).
"""

import math

import pytest

from correlator.attribution.accumulate import Accumulator
from correlator.attribution.attribute import UNATTRIBUTED, attribute
from correlator.attribution.estimate import Ranked, apportion
from correlator.collect.rates import Rates
from tests.attribution_oracle.estimate import wilson
from tests.correlator.attribution.bounds import (
    Z95,
    missed_class_bound,
    ratio_variance,
    share_bounds,
    wilson_roots,
)
from tests.correlator.attribution.conftest import (
    A0,
    A1,
    B0,
    B1,
    FRAME,
    T0,
    datagram,
    flows,
    shares,
)

UPLINK = "port:leaf01/Ethernet3"
CLOSE = 1e-12  # the written-out forms and fabcorr's agree to rounding


def _interval(*samples):
    acc = Accumulator(T0)
    acc.add(datagram([s for group in samples for s in group]), T0 + 1)
    return acc.take(T0 + 10)


def test_the_written_out_roots_are_the_published_wilson_intervals():
    # Wilson 95 % intervals, as tables give them to 6 places
    assert wilson_roots(30, 45) == pytest.approx((0.520705, 0.786411), abs=1e-6)
    assert wilson_roots(10, 45) == pytest.approx((0.125447, 0.362693), abs=1e-6)
    assert wilson_roots(15, 45) == pytest.approx((0.213589, 0.479295), abs=1e-6)
    assert wilson_roots(50, 100) == pytest.approx((0.403832, 0.596168), abs=1e-6)


def test_with_equal_frames_the_ratio_variance_is_the_binomial_one():
    for c, n in ((1, 2), (30, 45), (999, 1000)):
        assert ratio_variance(c / n, c * 49.0, n * 7.0, n * 49.0) == pytest.approx(
            (c / n) * (1 - c / n) / n, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 10, 45, 100, 1000, 100_000])
def test_a_share_of_equal_frames_has_the_written_out_bounds_at_every_edge(n):
    length = 4096
    for c in sorted(c for c in {1, 2, n // 3, n // 2, n - 1, n} if 0 < c <= n):
        (share,) = apportion(Ranked([("g", (c, c * length, c, c * length ** 2))],
                                    (n, n * length, n, n * length ** 2)))
        low, high = share_bounds(c, n, c / n)
        assert share.share == c / n
        assert (share.share_low, share.share_high) == pytest.approx((low, high), abs=CLOSE)
        assert share.share_high - share.share_low == pytest.approx(high - low, abs=CLOSE)
        assert 0.0 <= share.share_low <= share.share <= share.share_high <= 1.0


def test_all_or_none_of_the_trials_bound_wilson_at_exactly_one_or_zero():
    """The closed form rounds to 1 - 2**-53 at p = 1, which would leave a share of 1
    above its own count bound (the method in Python, which the core's shares match bit
    for bit: test_share_oracle.py)."""
    for n in (1, 10, 45, 1000):
        assert wilson(n, n) == pytest.approx((wilson_roots(n, n)[0], 1.0), abs=CLOSE)
        assert wilson(n, n)[1] == 1.0
        assert wilson(0, n) == pytest.approx((0.0, wilson_roots(0, n)[1]), abs=CLOSE)
        assert wilson(0, n)[0] == 0.0


def test_all_the_samples_is_a_share_of_one_within_the_lower_wilson_bound_and_one():
    (only,) = shares({"g": (25, 25 * 1000.0, 25.0, 25 * 1000.0 ** 2)})
    assert (only.share, only.share_high) == (1.0, 1.0)
    assert only.share_low == pytest.approx(wilson_roots(25, 25)[0], abs=CLOSE)
    assert only.share_low == pytest.approx(25 / (25 + Z95 ** 2), abs=CLOSE)


def test_a_byte_share_of_mixed_frames_has_the_ratio_bounds_where_they_are_wider():
    big, small = shares({"big": (10, 10 * 9000.0, 10.0, 10 * 9000.0 ** 2),
                         "small": (90, 90 * 64.0, 90.0, 90 * 64.0 ** 2)})
    total, squares = 10 * 9000.0 + 90 * 64.0, 10 * 9000.0 ** 2 + 90 * 64.0 ** 2
    assert big.share == 90_000.0 / total
    for share, c, group_squares in ((big, 10, 10 * 9000.0 ** 2), (small, 90, 90 * 64.0 ** 2)):
        variance = ratio_variance(share.share, group_squares, total, squares)
        expected = share_bounds(c, 100, share.share, variance)
        assert (share.share_low, share.share_high) == pytest.approx(expected, abs=CLOSE)
    # 10 % of the samples, 94 % of the bytes: Wilson's 10 of 100 scaled by 9.4 is the wider
    low, high = wilson_roots(10, 100)
    scale = big.share / 0.1
    assert high * scale > 1.0
    assert (big.share_low, big.share_high) == pytest.approx((low * scale, 1.0), abs=CLOSE)
    # 90 % of the samples, 6 % of the bytes: the ratio interval is the wider on both sides
    half = Z95 * math.sqrt(ratio_variance(small.share, 90 * 64.0 ** 2, total, squares))
    assert (small.share_low, small.share_high) == pytest.approx(
        (small.share - half, small.share + half), abs=CLOSE)


def test_the_shares_of_a_link_and_their_bytes_have_the_written_out_bounds(fabric):
    interval = _interval(flows(A0, A1, 30), flows(B0, B1, 10), flows("10.9.9.9", A1, 5))
    rates = {UPLINK: Rates("leaf01", "Ethernet3", T0 + 10, 10.0, {"out_octets": 2e7}, {},
                           speed_bps=400_000_000_000)}  # 2e8 B: inside 187,830,000 ± 54,879,076
    (link,) = [x for x in attribute(fabric, interval, rates).links
               if (x.port, x.direction) == (UPLINK, "out")]
    assert link.estimated_bytes == 45 * FRAME * 1000  # equal frames
    assert [(s.name, s.samples) for s in link.tenants] == [
        ("tenant:a", 30), ("tenant:b", 10), (UNATTRIBUTED, 5)]
    for share in link.tenants:
        low, high = share_bounds(share.samples, 45, share.samples / 45)
        assert (share.share_low, share.share_high) == pytest.approx((low, high), abs=CLOSE)
        assert (share.low, share.high) == pytest.approx((low * 2e8, high * 2e8), rel=CLOSE)


def test_other_pods_have_the_bounds_of_their_samples_together(fabric):
    link = attribute(fabric, _interval(flows(A0, A1, 30), flows(B0, B1, 10),
                                       flows(A1, A0, 5)), top_pods=1).links[0]
    other = link.pods[1]
    assert (other.name, other.samples) == ("other", 15)
    assert (other.share_low, other.share_high) == pytest.approx(share_bounds(15, 45, 15 / 45),
                                                                abs=CLOSE)


def test_a_few_small_frames_beside_large_ones_reach_up_to_the_missed_class_bound():
    """Three 100-byte samples among 27 of 1,000 bytes: had the group frames of 990 B (the
    link's size-biased mean) for a part q = 1 - 0.05^(1/3) = 0.632 of its packets, its mean
    would be 662 B, and its packet share up to 0.1308 (Wilson at z = 0.5): 0.0952 of the
    bytes, where its estimate is 0.0110 and the other bounds reach 0.0358 (log scale)."""
    group, others = [100.0] * 3, [1000.0] * 27
    assert missed_class_bound(group, others) == pytest.approx(0.0951649, abs=1e-7)
    small, large = shares({"small": (3, 300.0, 3.0, 3 * 100.0 ** 2),
                           "large": (27, 27_000.0, 27.0, 27 * 1000.0 ** 2)})[::-1]
    assert small.share == 300 / 27_300
    assert small.share_high == pytest.approx(missed_class_bound(group, others), abs=CLOSE)
    variance = ratio_variance(small.share, 3 * 100.0 ** 2, 27_300.0,
                              3 * 100.0 ** 2 + 27 * 1000.0 ** 2)
    others_high = share_bounds(3, 30, small.share, variance)[1]
    assert others_high == pytest.approx(0.0357512, abs=1e-7)
    assert small.share_low == pytest.approx(share_bounds(3, 30, small.share, variance)[0],
                                            abs=CLOSE)
    # ten samples are not few: the same mix, ten times over, has the other bounds only
    small10 = shares({"small": (10, 1000.0, 10.0, 10 * 100.0 ** 2),
                      "large": (90, 90_000.0, 90.0, 90 * 1000.0 ** 2)})[1]
    variance10 = ratio_variance(small10.share, 10 * 100.0 ** 2, 91_000.0,
                                10 * 100.0 ** 2 + 90 * 1000.0 ** 2)
    assert (small10.share_low, small10.share_high) == pytest.approx(
        share_bounds(10, 100, small10.share, variance10), abs=CLOSE)
    assert large.share_high == pytest.approx(
        share_bounds(27, 30, large.share, ratio_variance(
            large.share, 27 * 1000.0 ** 2, 27_300.0, 3 * 100.0 ** 2 + 27 * 1000.0 ** 2))[1],
        abs=CLOSE)

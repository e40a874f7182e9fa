//! Each group's share of a link direction's bytes with its 95 % interval: the method of
//! `correlator/attribution/estimate.py` (REFERENCE §8, §8a), computed here for a whole
//! table at once.
//!
//! Every step is the operation Python performs on the same integers and floats, in the
//! same order (integers converted to `f64` rounding to nearest, `**` through the C
//! library's `pow` as CPython calls it, `max` and `min` keeping the first of equals), so
//! the shares are the bits the Python method gives for sums below 2^53
//! (`tests/attribution_oracle/estimate.py` is that method, and the tests hold both to it).

use std::hint::black_box;

pub use crate::attribute::Sums;

pub const Z95: f64 = 1.959963984540054;
/// Below this many samples the normal approximation of a group's bytes is not trusted.
pub const FEW_SAMPLES: u128 = 30;
/// Below this many samples a group may have missed a whole class of its frames.
pub const SCANT_SAMPLES: u128 = 10;
/// The chance below which a group's samples are taken not to have missed a frame class.
pub const MISSED: f64 = 0.05;
/// The normal quantile of the packet-share factor of [`missed_class_high`].
pub const COUNT_Z: f64 = 0.5;

/// A group's bytes: apportioned from the counters, or its sampled estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bytes {
    Apportioned(f64),
    Estimated(u128),
}

/// One group's share: `bytes` within `low..high` at 95 %.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    pub share: f64,
    pub share_low: f64,
    pub share_high: f64,
    pub bytes: Bytes,
    pub low: f64,
    pub high: f64,
}

/// The counters of a link direction, as its shares are apportioned from them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counters {
    /// The direction's bytes by the counters.
    pub exact: f64,
    /// The least and the most bytes the readings on either side of the interval allow.
    pub known: Option<(f64, f64)>,
    /// The counters contradict the samples: shares are the estimate, within the hull of
    /// its interval and the counters'.
    pub disputed: bool,
}

/// Python's `max(a, b)`: `a` unless `b` is greater.
fn max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Python's `min(a, b)`: `a` unless `b` is less.
fn min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// `x ** y` as CPython computes it: the C library's `pow`, never folded to products.
fn pow(x: f64, y: f64) -> f64 {
    x.powf(black_box(y))
}

fn float(value: u128) -> f64 {
    value as f64
}

/// The Wilson score interval of `c` successes in `n` trials.
pub fn wilson(c: u128, n: u128, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (p, z2) = (float(c) / float(n), z * z);
    let centre = (p + z2 / float(2 * n)) / (1.0 + z2 / float(n));
    let half =
        z / (1.0 + z2 / float(n)) * (p * (1.0 - p) / float(n) + z2 / float((4 * n).saturating_mul(n))).sqrt();
    let low = if c == 0 { 0.0 } else { max(0.0, centre - half) };
    let high = if c >= n { 1.0 } else { min(1.0, centre + half) };
    (low, high)
}

/// An upper bound of the byte share of a group of `c` of a link's `n` samples, should
/// its samples have missed the link's large frames (derived in the oracle's
/// `missed_class_high`, tests/attribution_oracle/estimate.py).
pub fn missed_class_high(c: u128, n: u128, share: f64, total: Sums) -> f64 {
    let weighted = c.checked_mul(total.variance).map_or(float(c) * float(total.variance), float);
    let large = weighted / (share * float(total.bytes) * float(total.bytes));
    let missed = 1.0 - pow(MISSED, 1.0 / float(c));
    let packets = wilson(c, n, COUNT_Z).1 * float(n) / float(c);
    packets * share * (1.0 + missed * max(0.0, large - 1.0))
}

/// The wider, on each side, of the ratio (with few samples, also on the log scale above
/// and, with fewer, the missed-class bound) and the scaled count interval of a share.
fn interval(group: Sums, share: f64, total: Sums) -> (f64, f64) {
    let (c, n) = (u128::from(group.samples), u128::from(total.samples));
    if c == 0 || total.bytes == 0 {
        return (0.0, 0.0);
    }
    let (low, high) = wilson(c, n, Z95);
    let scale = share * float(n) / float(c);
    let (low, mut high) = (low * scale, high * scale);
    let rest = if total.variance >= group.variance {
        float(total.variance - group.variance)
    } else {
        -float(group.variance - total.variance)
    };
    let squared = total.bytes.checked_mul(total.bytes).map_or(float(total.bytes) * float(total.bytes), float);
    let ratio = (pow(1.0 - share, 2.0) * float(group.variance) + share * share * rest) / squared;
    let half = Z95 * max(0.0, ratio).sqrt();
    high = max(high, share + half);
    if c < FEW_SAMPLES && share > 0.0 {
        high = max(high, share * min(half / share, 700.0).exp());
    }
    if c < SCANT_SAMPLES && share > 0.0 {
        high = max(high, missed_class_high(c, n, share, total));
    }
    (max(0.0, min(low, share - half)), min(1.0, high))
}

/// The share of one group of `total`'s; its bytes apportioned from `exact` when given.
pub fn share_of(group: Sums, total: Sums, exact: Option<f64>) -> Share {
    let share = if total.bytes > 0 { float(group.bytes) / float(total.bytes) } else { 0.0 };
    let (share_low, share_high) = interval(group, share, total);
    if let Some(exact) = exact {
        let bytes = Bytes::Apportioned(share * exact);
        return Share {
            share,
            share_low,
            share_high,
            bytes,
            low: share_low * exact,
            high: share_high * exact,
        };
    }
    let estimated = float(group.bytes);
    let margin = if group.samples > 0 { Z95 * float(group.variance).sqrt() } else { estimated };
    let bytes = Bytes::Estimated(group.bytes);
    Share { share, share_low, share_high, bytes, low: max(0.0, estimated - margin), high: estimated + margin }
}

/// What a link direction's counter bytes say against its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// No counters, or fewer than [`FEW_SAMPLES`] samples to judge them by.
    Unchecked,
    /// Within the sampled estimate's 95 % bound.
    Agrees,
    /// Beyond it: the counters are not trusted for the interval.
    Outside,
}

impl Check {
    /// The names Python reads (`LinkTraffic.counter_check`), in this order.
    pub const NAMES: [&'static str; 3] = ["", "ok", "outside"];

    pub fn name(self) -> &'static str {
        Check::NAMES[self as usize]
    }
}

/// Whether `counter_bytes` agree with `samples` samples estimating `estimated` bytes with
/// `variance`: outside when they lie beyond `estimated ± Z95·sqrt(variance)` (the
/// integers as floats, rounded to nearest, as Python's `float` rounds them).
pub fn counter_check(counter_bytes: Option<f64>, samples: u64, estimated: u128, variance: u128) -> Check {
    match counter_bytes {
        Some(counted) if u128::from(samples) >= FEW_SAMPLES => {
            if (counted - float(estimated)).abs() > Z95 * float(variance).sqrt() {
                Check::Outside
            } else {
                Check::Agrees
            }
        }
        _ => Check::Unchecked,
    }
}

/// Every group's share of `total`, in order: apportioned from `counters` when given,
/// each stretched to what the readings allow (`known`), and when the counters are
/// disputed the estimate within the hull of both.
pub fn apportion(groups: &[Sums], total: Sums, counters: Option<Counters>) -> Vec<Share> {
    let Some(counters) = counters else {
        return groups.iter().map(|&group| share_of(group, total, None)).collect();
    };
    groups
        .iter()
        .map(|&group| {
            let mut counted = share_of(group, total, Some(counters.exact));
            if let Some((least, most)) = counters.known {
                counted.low = min(counted.low, counted.share_low * least);
                counted.high = max(counted.high, counted.share_high * most);
            }
            if !counters.disputed {
                return counted;
            }
            let estimated = share_of(group, total, None);
            Share {
                low: min(estimated.low, counted.low),
                high: max(estimated.high, counted.high),
                ..estimated
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(samples: u64, bytes: u128, packets: u128, variance: u128) -> Sums {
        Sums { samples, bytes, packets, variance }
    }

    fn round(x: f64, digits: i32) -> f64 {
        (x * 10f64.powi(digits)).round() / 10f64.powi(digits)
    }

    #[test]
    fn counters_are_checked_against_the_estimates_bound() {
        // 900 B estimated, variance 2,500 B²: 900 ± 97.998 B (1.96 x 50)
        assert_eq!(counter_check(Some(997.9), 30, 900, 2500), Check::Agrees);
        assert_eq!(counter_check(Some(802.1), 30, 900, 2500), Check::Agrees);
        assert_eq!(counter_check(Some(998.0), 30, 900, 2500), Check::Outside);
        assert_eq!(counter_check(Some(801.9), 30, 900, 2500), Check::Outside);
        assert_eq!(counter_check(Some(999.0), 29, 900, 2500), Check::Unchecked);
        assert_eq!(counter_check(None, 30, 900, 2500), Check::Unchecked);
        assert_eq!(Check::Outside.name(), "outside");
    }

    #[test]
    fn wilson_bounds_a_proportion() {
        let (low, high) = wilson(50, 100, Z95);
        assert_eq!((round(low, 4), round(high, 4)), (0.4038, 0.5962));
        assert_eq!(round(wilson(10, 10, Z95).0, 4), 0.7225);
        assert_eq!(wilson(10, 10, Z95).1, 1.0);
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
    }

    #[test]
    fn equal_frames_share_by_count_and_bytes() {
        // 25 of 100 equal 100-byte frames at rate 1
        let total = sums(100, 10_000, 100, 1_000_000);
        let s = share_of(sums(25, 2500, 25, 250_000), total, Some(1e6));
        assert_eq!((s.share, round(s.share_low, 4), round(s.share_high, 4)), (0.25, 0.1651, 0.3511));
        assert_eq!((s.bytes, s.low.round()), (Bytes::Apportioned(250_000.0), 165_131.0));
        let e = share_of(sums(25, 2500, 25, 250_000), total, None);
        assert_eq!((e.bytes, round(e.low, 1), round(e.high, 1)), (Bytes::Estimated(2500), 1520.0, 3480.0));
    }

    #[test]
    fn one_large_frame_is_bounded_by_the_whole_link() {
        let total = sums(100, 18_900, 100, 81_000_000 + 990_000);
        let big = share_of(sums(1, 9000, 1, 81_000_000), total, None);
        assert_eq!(
            (round(big.share, 3), round(big.share_low, 3), round(big.share_high, 3)),
            (0.476, 0.0, 1.0)
        );
    }

    #[test]
    fn missed_class_bound_of_three_small_samples() {
        let total = sums(30, 27_300, 30, 27_030_000);
        assert_eq!(round(missed_class_high(3, 30, 300.0 / 27300.0, total), 4), 0.0952);
    }

    #[test]
    fn counters_stretch_and_disputes_take_the_hull() {
        let total = sums(100, 10_000, 100, 1_000_000);
        let group = [sums(25, 2500, 25, 250_000)];
        let plain = apportion(&group, total, Some(Counters { exact: 1e6, known: None, disputed: false }))[0];
        let known = Counters { exact: 1e6, known: Some((0.5e6, 2e6)), disputed: false };
        let stretched = apportion(&group, total, Some(known))[0];
        assert_eq!(
            (stretched.low, stretched.high),
            (plain.low.min(plain.share_low * 0.5e6), plain.share_high * 2e6)
        );
        let disputed = apportion(&group, total, Some(Counters { disputed: true, ..known }))[0];
        let estimate = share_of(group[0], total, None);
        assert_eq!(disputed.bytes, Bytes::Estimated(2500));
        assert_eq!((disputed.low, disputed.high), (estimate.low.min(stretched.low), stretched.high));
    }
}

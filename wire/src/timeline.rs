//! One counter of one port in time: the known moments of its unwrapped value, and what it
//! counted over any span (the method is described in `correlator/collect/timeline.py`).
//!
//! Every step is the operation the Python method (`tests/collect_oracle/timeline.py`)
//! performs, in the same order: raw values are integers (`i128`, as Python's are
//! unbounded) until a step joins the float cumulative value, converted rounding to
//! nearest; an integer is compared with a float exactly, as Python does; `max` and `min`
//! keep the first of equals; `statistics.median` of an even count is the mean of the two
//! middle values.

/// How many of the latest changes the refresh period is learnt from (one more is kept).
const PERIODS_KEPT: usize = 8;
/// Moments kept: at one change a second, over half an hour of them.
pub const MOMENTS_KEPT: usize = 4096;

/// Python's `max(a, b)`: `a` unless `b` is greater.
pub fn max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Python's `min(a, b)`: `a` unless `b` is less.
pub fn min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// Python's `max` of a non-empty sequence: the first of the greatest.
fn most(values: &[f64]) -> f64 {
    values[1..].iter().fold(values[0], |a, &b| max(a, b))
}

/// Python's `min` of a non-empty sequence: the first of the least.
fn least(values: &[f64]) -> f64 {
    values[1..].iter().fold(values[0], |a, &b| min(a, b))
}

/// Whether the integer `n` is greater than `x`, exactly (Python's `n > x`).
fn int_above(n: i128, x: f64) -> bool {
    const WIDE: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0; // 2**127
    if x.is_nan() || x >= WIDE {
        false
    } else if x < -WIDE {
        true
    } else {
        n > x.floor() as i128 // exact: x's floor fits, and n > x iff n > floor(x)
    }
}

/// `statistics.median` of a non-empty sequence.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// `bisect.bisect_left(times, at)`.
fn bisect_left(times: &[f64], at: f64) -> usize {
    times.partition_point(|&t| t < at)
}

/// `bisect.bisect_right(times, at)`, `at` not NaN.
fn bisect_right(times: &[f64], at: f64) -> usize {
    times.partition_point(|&t| t <= at)
}

/// How a narrow counter's fall is judged (`judge_step` of `correlator/collect/rates.py`,
/// for a fall): what it counted, or None when it is unknown (a wrap or a reset as likely);
/// a reset counts from zero.
fn judge_fall(before: i128, after: i128, bits: u32, limit: Option<f64>) -> Option<i128> {
    if limit.is_some_and(|limit| limit >= 2f64.powi(bits as i32)) {
        return None; // could wrap whole, unseen
    }
    if bits >= 64 {
        return Some(after); // a 64-bit counter's fall is a reset
    }
    let limit = limit?;
    let delta = after + (1i128 << bits) - before;
    if int_above(delta, limit) {
        Some(after) // faster than line rate: a reset
    } else {
        Some(delta)
    }
}

/// The known moments of one counter `bits` wide, and its increase between any two.
#[derive(Clone, Debug)]
pub struct Timeline {
    pub bits: u32,
    /// The device dates its readings itself.
    pub fresh: bool,
    pub times: Vec<f64>,
    /// Unwrapped, never decreasing.
    pub values: Vec<f64>,
    /// How far each moment may lie from its true time.
    pub slack: Vec<f64>,
    /// Spans of steps neither wrap nor reset.
    pub unknown: Vec<(f64, f64)>,
    /// The agent's refresh period as learnt so far (None before two changes).
    pub period: Option<f64>,
    /// The last moment the counter's value is known at.
    pub covered_until: f64,
    /// The last raw value read, when it was last and first read, how many times.
    last: Option<i128>,
    held: f64,
    since: f64,
    reads: u64,
    restarted: bool,
    cumulative: f64,
    /// The moments of the latest changes.
    changes: Vec<f64>,
    /// The pinned instants in order, with the values given for them.
    pins: Vec<(f64, f64)>,
}

impl Timeline {
    pub fn new(bits: u32, fresh: bool) -> Self {
        Timeline {
            bits,
            fresh,
            times: Vec::new(),
            values: Vec::new(),
            slack: Vec::new(),
            unknown: Vec::new(),
            period: None,
            covered_until: f64::NEG_INFINITY,
            last: None,
            held: 0.0,
            since: 0.0,
            reads: 0,
            restarted: false,
            cumulative: 0.0,
            changes: Vec::new(),
            pins: Vec::new(),
        }
    }

    fn last_time(&self) -> f64 {
        self.times[self.times.len() - 1]
    }

    /// A reading taken at `at` (in time order; an older one is ignored); `max_rate`: the
    /// most the counter can count a second, when known.
    pub fn add(&mut self, at: f64, value: i128, max_rate: Option<f64>) {
        match self.last {
            None => {
                self.times.push(at);
                self.values.push(0.0);
                self.slack.push(0.0);
                self.covered_until = at;
            }
            Some(_) if at <= self.held => return,
            Some(last) if value == last => {
                self.held = at;
                self.reads += 1;
                self.hold();
                return;
            }
            Some(last) => {
                let step = self.step(last, value, at, max_rate);
                self.hold();
                let changed = if self.reads > 1 && !self.fresh { (self.held + at) / 2.0 } else { at };
                let moment = max(changed, self.last_time());
                match step {
                    None => self.unknown.push((self.last_time(), moment)),
                    Some(step) => self.cumulative += step as f64,
                }
                self.known(moment, self.cumulative, at - changed);
                if self.reads > 1 {
                    let from = self.changes.len().saturating_sub(PERIODS_KEPT);
                    self.changes.drain(..from);
                    self.changes.push(changed);
                    if self.changes.len() > 1 {
                        self.period = Some(median(self.changes.windows(2).map(|w| w[1] - w[0]).collect()));
                    }
                }
            }
        }
        self.last = Some(value);
        self.held = at;
        self.since = at;
        self.reads = 1;
    }

    /// The counter restarted: the next value read counts from zero, whatever its width.
    pub fn restart(&mut self) {
        self.restarted = true;
    }

    /// What was counted from `before` to `after` (read at `at`); None when unknown.
    fn step(&mut self, before: i128, after: i128, at: f64, max_rate: Option<f64>) -> Option<i128> {
        if self.restarted {
            self.restarted = false;
            return Some(after);
        }
        if after >= before {
            return Some(after - before);
        }
        // the old value may have held since a refresh period before its first reading
        let limit = max_rate.map(|rate| rate * (at - self.since + self.period.unwrap_or(0.0)));
        judge_fall(before, after, self.bits, limit)
    }

    /// The value last read was still the counter's at its last reading (fresh, or never
    /// seen to move), or a refresh period before it: a moment there, or the last one
    /// moved there when the value already stood still before it.
    fn hold(&mut self) {
        let n = self.values.len();
        let period = if self.fresh || self.values[n - 1] == self.values[0] { Some(0.0) } else { self.period };
        let Some(period) = period else { return };
        if self.held - period <= self.last_time() {
            return;
        }
        let at = self.held - period;
        let slack = max(0.0, self.since - at); // refreshed between here and its first reading
        if n > 1 && self.values[n - 1] == self.values[n - 2] {
            self.times[n - 1] = at;
            self.slack[n - 1] = slack;
            self.covered_until = at;
        } else {
            self.known(at, self.values[n - 1], slack);
        }
    }

    fn known(&mut self, at: f64, value: f64, slack: f64) {
        let n = self.times.len();
        if n > 0 && at == self.times[n - 1] {
            self.values[n - 1] = value;
            self.slack[n - 1] = slack;
            return;
        }
        self.times.push(at);
        self.values.push(value);
        self.slack.push(slack);
        self.covered_until = at;
        if self.times.len() > MOMENTS_KEPT {
            // older moments than any interval still asks
            let half = MOMENTS_KEPT / 2;
            self.times.drain(..half);
            self.values.drain(..half);
            self.slack.drain(..half);
            let first = self.times[0];
            self.unknown.retain(|span| span.1 > first);
            self.pins.retain(|pin| pin.0 >= first);
        }
    }

    /// The known (moment, unwrapped value) pairs, oldest first, values as Python's `int`.
    pub fn moments(&self) -> Vec<(f64, i128)> {
        self.times.iter().zip(&self.values).map(|(&t, &v)| (t, v as i128)).collect()
    }

    /// The interpolated value at `at`; None outside the known moments, unless
    /// `extrapolate`: past the last one, at the rate between the last two.
    pub fn value_at(&self, at: f64, extrapolate: bool) -> Option<f64> {
        let (times, values) = (&self.times, &self.values);
        let n = times.len();
        if extrapolate && n > 1 && at > times[n - 1] {
            let slope = (values[n - 1] - values[n - 2]) / (times[n - 1] - times[n - 2]);
            return Some(values[n - 1] + slope * (at - times[n - 1]));
        }
        if n == 0 || !(times[0] <= at && at <= times[n - 1]) {
            return None;
        }
        let i = bisect_right(times, at);
        if i == n {
            return Some(values[n - 1]);
        }
        Some(self.between(i, at))
    }

    /// The value at `at` between moments `i - 1` and `i`: a kink between the neighbouring
    /// gaps' rates when those explain the gap's increase, else steady.
    fn between(&self, i: usize, at: f64) -> f64 {
        let (times, values) = (&self.times, &self.values);
        let (t0, t1, v0, v1) = (times[i - 1], times[i], values[i - 1], values[i]);
        if 1 < i && i < times.len() - 1 {
            let before = (v0 - values[i - 2]) / (t0 - times[i - 2]);
            let after = (values[i + 1] - v1) / (times[i + 1] - t1);
            let (counted, gap) = (v1 - v0, t1 - t0);
            if before != after && min(before, after) * gap <= counted && counted <= max(before, after) * gap {
                let kink = t0 + (after * gap - counted) / (after - before);
                return if at <= kink { v0 + before * (at - t0) } else { v1 - after * (t1 - at) };
            }
        }
        v0 + (v1 - v0) * (at - t0) / (t1 - t0)
    }

    /// Where the value at `at` lies, widened by how well the moments around are dated.
    pub fn bounds(&self, at: f64, extrapolate: bool) -> Option<(f64, f64)> {
        let found = self.exact_bounds(at, extrapolate)?;
        let (times, slack) = (&self.times, &self.slack);
        let i = bisect_left(times, at);
        let late = most(&slack[i.saturating_sub(1)..(i + 1).min(slack.len())]);
        if late == 0.0 {
            return Some(found);
        }
        let early = self.value_at(max(times[0], at - late), extrapolate);
        let later_at = if extrapolate { at + late } else { min(times[times.len() - 1], at + late) };
        let later = self.value_at(later_at, extrapolate);
        Some((early.map_or(found.0, |e| min(found.0, e)), later.map_or(found.1, |l| max(found.1, l))))
    }

    /// [`Timeline::bounds`] for moments dated exactly.
    fn exact_bounds(&self, at: f64, extrapolate: bool) -> Option<(f64, f64)> {
        let (times, values) = (&self.times, &self.values);
        let n = times.len();
        if extrapolate && n > 1 && at > times[n - 1] {
            let carried = self.value_at(at, true)?;
            return Some((values[n - 1], 2.0 * carried - values[n - 1]));
        }
        if n == 0 || !(times[0] <= at && at <= times[n - 1]) {
            return None;
        }
        let i = bisect_left(times, at);
        if times[i] == at {
            return Some((values[i], values[i]));
        }
        let (low, high) = self.within(i, times[i - 1], at);
        Some((values[i - 1] + low, values[i - 1] + high))
    }

    /// The least and the most counted from `start` to `end`, both in the gap before
    /// moment `i`, by the rates of [`Timeline::bounds`].
    fn within(&self, i: usize, start: f64, end: f64) -> (f64, f64) {
        let (times, values) = (&self.times, &self.values);
        let (t0, t1, v0, v1) = (times[i - 1], times[i], values[i - 1], values[i]);
        let mut rates = vec![(v1 - v0) / (t1 - t0)];
        if i > 1 {
            rates.push((v0 - values[i - 2]) / (t0 - times[i - 2]));
        }
        if i < times.len() - 1 {
            rates.push((values[i + 1] - v1) / (times[i + 1] - t1));
        }
        let spread = if rates.len() > 1 { most(&rates) - least(&rates) } else { f64::INFINITY };
        let (slow, fast) = (max(0.0, least(&rates) - spread), most(&rates) + spread);
        let (counted, inside, outside) = (v1 - v0, end - start, (start - t0) + (t1 - end));
        (max(slow * inside, counted - fast * outside), min(fast * inside, counted - slow * outside))
    }

    /// Whether a step of unknown size lies in `[start, end)`.
    pub fn unknown_in(&self, start: f64, end: f64) -> bool {
        self.unknown.iter().any(|&(a, b)| a < end && start < b)
    }

    /// The least and the most the counter counted over `[start, end)`.
    pub fn increase_bounds(&self, start: f64, end: f64, extrapolate: bool) -> Option<(f64, f64)> {
        if self.unknown_in(start, end) {
            return None;
        }
        let times = &self.times;
        if !times.is_empty() && times[0] <= start && start < end && end <= times[times.len() - 1] {
            let i = bisect_left(times, start);
            if times[i] != start && end < times[i] && most(&self.slack[i - 1..i + 1]) == 0.0 {
                return Some(self.within(i, start, end)); // both in one gap between exact moments
            }
        }
        let first = self.bounds(start, extrapolate)?;
        let last = self.bounds(end, extrapolate)?;
        Some((max(0.0, last.0 - first.1), last.1 - first.0))
    }

    /// What the counter counted over `[start, end)`; None unless both are known (or
    /// carried on) and no step of unknown size lies between.
    pub fn increase(&mut self, start: f64, end: f64, extrapolate: bool) -> Option<f64> {
        if !self.unknown.is_empty() && self.unknown_in(start, end) {
            return None;
        }
        let first = self.pin(start, extrapolate, false, None);
        if first.is_none() && end > self.covered_until {
            return None; // nor is `end` pinned: past the last moment, it is only carried on
        }
        let last = self.pin(end, extrapolate, false, None);
        Some(last? - first?)
    }

    /// Pin the value at `at`: `counted` more than at `since` when given, else as it is
    /// given now, carried on past the last moment if need be.
    pub fn keep(&mut self, at: f64, since: Option<f64>, counted: f64) {
        if self.pinned(at).is_ok() {
            return;
        }
        let Some(since) = since else {
            self.pin(at, true, true, None);
            return;
        };
        let first = self.pin(since, true, true, None);
        self.pin(at, true, true, first.map(|first| first + counted));
    }

    /// Where `at` is among the pinned instants: found, or where it would go.
    fn pinned(&self, at: f64) -> Result<usize, usize> {
        let i = self.pins.partition_point(|pin| pin.0 < at);
        if i < self.pins.len() && self.pins[i].0 == at {
            Ok(i)
        } else {
            Err(i)
        }
    }

    /// The value at `at` (`value` when given) as first given, once it was known (pinned
    /// then); never below a value given for an earlier instant nor above one for a later.
    fn pin(&mut self, at: f64, extrapolate: bool, past: bool, value: Option<f64>) -> Option<f64> {
        let i = match self.pinned(at) {
            Ok(found) => return Some(self.pins[found].1),
            Err(i) => i,
        };
        let mut value = match value {
            Some(value) => value,
            None => self.value_at(at, extrapolate)?,
        };
        if i > 0 {
            value = max(value, self.pins[i - 1].1);
        }
        if i < self.pins.len() {
            value = min(value, self.pins[i].1);
        }
        if !self.times.is_empty() && (past || at <= self.last_time()) {
            self.pins.insert(i, (at, value));
            if self.pins.len() > MOMENTS_KEPT {
                self.pins.remove(0);
            }
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(timeline: &mut Timeline, readings: &[(f64, i128)]) {
        for &(at, value) in readings {
            timeline.add(at, value, None);
        }
    }

    #[test]
    fn a_stale_agent_s_changes_are_dated_halfway_between_reads() {
        let mut t = Timeline::new(64, false);
        read(
            &mut t,
            &[
                (0.5, 0),
                (1.5, 0),
                (2.5, 300),
                (3.5, 300),
                (4.5, 300),
                (5.5, 600),
                (6.5, 600),
                (7.5, 600),
                (8.5, 900),
            ],
        );
        assert_eq!(t.moments(), [(0.5, 0), (1.5, 0), (2.0, 300), (5.0, 600), (8.0, 900)]);
        assert_eq!(t.increase(2.0, 5.0, false), Some(300.0));
        assert_eq!(t.increase(0.0, 3.0, false), None);
        assert_eq!(t.increase(3.0, 8.0, false), Some(500.0));
        assert_eq!(t.increase_bounds(3.0, 8.0, false), Some((250.0, 600.0)));
        assert_eq!(t.covered_until, 8.0);
    }

    #[test]
    fn a_narrow_fall_is_a_wrap_a_reset_or_unknown() {
        assert_eq!(judge_fall(4_294_967_196, 50, 32, Some(1000.0)), Some(150));
        assert_eq!(judge_fall(4_294_967_196, 50, 32, Some(100.0)), Some(50));
        assert_eq!(judge_fall(4_294_967_196, 50, 32, None), None);
        assert_eq!(judge_fall(4_294_967_196, 50, 32, Some(4_294_967_296.0)), None);
        assert_eq!(judge_fall(1000, 50, 64, None), Some(50));
    }

    #[test]
    fn integers_compare_with_floats_exactly() {
        assert!(int_above(9_007_199_254_740_993, 9_007_199_254_740_992.0));
        assert!(!int_above(150, 150.0) && int_above(151, 150.5) && !int_above(150, 150.5));
        assert!(!int_above(0, f64::NAN) && !int_above(i128::MAX, f64::INFINITY));
    }

    #[test]
    fn a_kept_value_holds_for_the_next_span() {
        let mut t = Timeline::new(64, true);
        read(&mut t, &[(0.0, 0), (1.0, 100), (2.0, 600)]);
        assert_eq!(t.increase(0.0, 1.5, false), Some(350.0));
        t.add(3.0, 1600, None);
        assert_eq!((t.value_at(1.5, false), t.increase(1.5, 3.0, false)), (Some(150.0), Some(1250.0)));
    }
}

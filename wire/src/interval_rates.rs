//! Every port's counters in time, and their rates over exactly one interval (the method
//! of `correlator/collect/interval_rates.py`): one [`Timeline`] per counter of a port,
//! fed reading after reading; the rates of a span are each counter's increase over it.
//!
//! Each step is the Python method's (`tests/collect_oracle/interval_rates.py`), in the
//! same order, as [`crate::timeline`] is: speeds are integers below 2^53, so a speed's
//! true division is its float's.

use crate::timeline::{max, Timeline};

/// What a counter counts, as its line rate goes (`line_rate` of
/// `correlator/collect/rates.py`): octets, frames, or something unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Octets,
    Frames,
    Other,
}

/// Bytes a minimum Ethernet frame holds the wire (`MIN_WIRE_FRAME`).
const MIN_WIRE_FRAME: f64 = 84.0;

/// The most a counter of `family` can count a second at `speed` bits a second.
pub fn line_rate(family: Family, speed: Option<u64>) -> Option<f64> {
    let speed = speed.filter(|&speed| speed != 0)? as f64;
    match family {
        Family::Octets => Some(speed / 8.0),
        Family::Frames => Some(speed / 8.0 / MIN_WIRE_FRAME),
        Family::Other => None,
    }
}

/// One reading of a port: when, its counters (by name id: value, width), what the port
/// said of itself.
#[derive(Clone, Debug)]
pub struct Reading {
    pub at: f64,
    pub values: Vec<(usize, i128, u32)>,
    pub speed: Option<u64>,
    pub uptime: Option<f64>,
    pub last_clear: Option<f64>,
    pub stamped: bool,
}

/// What a port's next reading is judged against: the last one, its counters left out.
#[derive(Clone, Copy, Debug)]
struct Last {
    at: f64,
    speed: Option<u64>,
    uptime: Option<f64>,
    last_clear: Option<f64>,
}

impl Last {
    /// Whether the port restarted its counters before `now`: up for less than since the
    /// last reading, or uptime going back (booted in between), or cleared.
    fn restarted(&self, now: &Reading) -> bool {
        let rebooted =
            now.uptime.is_some_and(|up| up < now.at - self.at || self.uptime.is_some_and(|last| up < last));
        let cleared = matches!((now.last_clear, self.last_clear), (Some(now), Some(last)) if now != last);
        rebooted || cleared
    }
}

/// One port: its counters' timelines (by name id, in the order first read), the narrow
/// counters read too seldom, its last reading.
#[derive(Debug, Default)]
struct Port {
    timelines: Vec<(usize, Timeline)>,
    ambiguous: Vec<usize>,
    last: Option<Last>,
    known: Option<f64>,
}

impl Port {
    /// The earliest of its timelines' last known moments (found once a reading).
    fn known_until(&mut self) -> f64 {
        *self.known.get_or_insert_with(|| {
            let mut found = self.timelines.iter().map(|(_, t)| t.covered_until);
            let first = found.next().unwrap_or(f64::NEG_INFINITY);
            found.fold(first, crate::timeline::min)
        })
    }
}

/// Why a counter has no rate (`Skip` of `correlator/collect/rates.py`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    Ambiguous,
    Implausible,
}

/// A port's rates over a span, by counter name id.
#[derive(Clone, Debug, PartialEq)]
pub struct PortRates {
    pub port: usize,
    pub per_second: Vec<(usize, f64)>,
    pub ranges: Vec<(usize, (f64, f64))>,
    pub skipped: Vec<(usize, Skip)>,
    pub provisional: bool,
    pub speed: Option<u64>,
}

/// A counter's rate with an increase but no bounds of it: what Python's method raises on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoBounds;

/// Readings in, rates over any interval out; `slack` as in `RateConfig`.
#[derive(Debug)]
pub struct IntervalRates {
    pub slack: f64,
    /// The longest refresh period learnt of any counter so far (0 before any).
    pub slowest_refresh_s: f64,
    /// The family of each counter name id.
    families: Vec<Family>,
    ports: Vec<Port>,
}

impl IntervalRates {
    pub fn new(slack: f64) -> Self {
        IntervalRates { slack, slowest_refresh_s: 0.0, families: Vec::new(), ports: Vec::new() }
    }

    /// A new counter name, of `family`: its id (the next).
    pub fn name(&mut self, family: Family) -> usize {
        self.families.push(family);
        self.families.len() - 1
    }

    /// A new port: its id (the next).
    pub fn port(&mut self) -> usize {
        self.ports.push(Port::default());
        self.ports.len() - 1
    }

    /// One reading of port `id` (a port's readings in time order; older ones are ignored).
    pub fn add(&mut self, id: usize, reading: &Reading) {
        let slack = self.slack;
        let port = &mut self.ports[id];
        let last = port.last;
        if last.is_some_and(|last| reading.at <= last.at) {
            return;
        }
        if last.is_some_and(|last| last.restarted(reading)) {
            for (_, timeline) in &mut port.timelines {
                timeline.restart();
            }
        }
        let speed = reading.speed.filter(|&s| s != 0).or(last.and_then(|last| last.speed));
        let span = last.map_or(0.0, |last| reading.at - last.at);
        for &(name, value, bits) in &reading.values {
            let rate = line_rate(self.families[name], speed);
            // a first reading (span 0) cannot have wrapped
            if let Some(rate) = rate.filter(|_| span != 0.0) {
                if rate * span * slack >= 2f64.powi(bits as i32) {
                    if !port.ambiguous.contains(&name) {
                        port.ambiguous.push(name); // it could have wrapped whole, unseen
                    }
                    port.timelines.retain(|(n, _)| *n != name);
                }
            }
            if port.ambiguous.contains(&name) {
                continue;
            }
            let at = match port.timelines.iter().position(|(n, _)| *n == name) {
                Some(at) => at,
                None => {
                    port.timelines.push((name, Timeline::new(bits, reading.stamped)));
                    port.timelines.len() - 1
                }
            };
            let timeline = &mut port.timelines[at].1;
            timeline.add(reading.at, value, rate.map(|rate| rate * slack));
            if let Some(period) = timeline.period {
                if period > self.slowest_refresh_s {
                    self.slowest_refresh_s = period;
                }
            }
        }
        port.last = Some(Last {
            at: reading.at,
            speed: reading.speed,
            uptime: reading.uptime,
            last_clear: reading.last_clear,
        });
        port.known = None;
    }

    /// Whether every port (read after `since`, when given) is known at `end`.
    pub fn covered(&mut self, end: f64, since: Option<f64>) -> bool {
        self.ports.iter_mut().all(|port| match port.last {
            Some(last) if since.is_none_or(|since| last.at > since) => port.known_until() >= end,
            _ => true,
        })
    }

    /// Pin every counter of port `id` at `end`: at what `published` (its rate by name id)
    /// counted from `start` where it has the counter's rate, else as given now.
    pub fn keep(&mut self, id: usize, start: f64, end: f64, published: &[(usize, f64)]) {
        for (name, timeline) in &mut self.ports[id].timelines {
            match published.iter().find(|(n, _)| n == name) {
                None => timeline.keep(end, None, 0.0),
                Some(&(_, rate)) => timeline.keep(end, Some(start), rate * (end - start)),
            }
        }
    }

    /// The rates of port `id` over `[start, end)`, when known over all of it.
    pub fn rates(&mut self, id: usize, start: f64, end: f64) -> Result<Option<PortRates>, NoBounds> {
        let seconds = end - start;
        let slack = self.slack;
        let port = &mut self.ports[id];
        let Some(last) = port.last else { return Ok(None) };
        if seconds <= 0.0 {
            return Ok(None);
        }
        let mut found = PortRates {
            port: id,
            per_second: Vec::with_capacity(port.timelines.len()),
            ranges: Vec::with_capacity(port.timelines.len()),
            skipped: port.ambiguous.iter().map(|&name| (name, Skip::Ambiguous)).collect(),
            provisional: false,
            speed: last.speed.filter(|&s| s != 0),
        };
        for (name, timeline) in &mut port.timelines {
            let Some(increase) = timeline.increase(start, end, true) else {
                if !timeline.unknown.is_empty() && timeline.unknown_in(start, end) {
                    skip(&mut found.skipped, *name, Skip::Ambiguous);
                }
                continue;
            };
            let increase = max(0.0, increase); // from a value carried on too far, kept
            found.provisional |= timeline.covered_until < end;
            let limit = line_rate(self.families[*name], last.speed).map(|rate| rate * seconds * slack);
            if limit.is_some_and(|limit| increase > limit) {
                skip(&mut found.skipped, *name, Skip::Implausible);
            } else {
                found.per_second.push((*name, increase / seconds));
                let (low, high) = timeline.increase_bounds(start, end, true).ok_or(NoBounds)?;
                found.ranges.push((*name, (low / seconds, high / seconds)));
            }
        }
        if found.per_second.is_empty() && found.skipped.is_empty() {
            return Ok(None);
        }
        Ok(Some(found))
    }
}

/// `skipped[name] = why`, a dict's way: a name already there keeps its place.
fn skip(skipped: &mut Vec<(usize, Skip)>, name: usize, why: Skip) {
    match skipped.iter_mut().find(|(n, _)| *n == name) {
        Some(found) => found.1 = why,
        None => skipped.push((name, why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at: f64, octets: i128, speed: Option<u64>) -> Reading {
        Reading { at, values: vec![(0, octets, 64)], speed, uptime: None, last_clear: None, stamped: false }
    }

    #[test]
    fn an_interval_gets_the_bytes_of_its_own_time() {
        let mut r = IntervalRates::new(1.1);
        let octets = r.name(Family::Octets);
        let port = r.port();
        for (at, value) in [(9.5, 1000), (10.5, 2000), (19.5, 11000), (20.5, 12000)] {
            r.add(port, &reading(at, value, Some(8000)));
        }
        assert!(r.covered(20.0, None) && !r.covered(21.0, None));
        let found = r.rates(port, 10.0, 20.0).unwrap().unwrap();
        assert_eq!((found.per_second, found.provisional), (vec![(octets, 1000.0)], false));
        assert!(r.rates(port, 20.0, 30.0).unwrap().unwrap().provisional);
    }

    #[test]
    fn line_rates_bound_octets_and_frames() {
        assert_eq!(line_rate(Family::Octets, Some(8000)), Some(1000.0));
        assert_eq!(line_rate(Family::Frames, Some(8 * 84)), Some(1.0));
        assert_eq!(line_rate(Family::Octets, Some(0)), None);
        assert_eq!(line_rate(Family::Other, Some(8000)), None);
    }
}

//! The receiver's work on each datagram, as `correlator/sflow/receiver.py`'s Worker does
//! it: admission, decoding, loss accounting and accumulation into the interval the
//! datagram arrived in, with what the kernel dropped on the socket per interval.
//!
//! A datagram belongs to the wall-clock interval it arrived in (its kernel receive
//! time): the collector closes an interval when a datagram of the next one arrives, or
//! when asked to ([`Collector::close`]); closed intervals wait in [`Collector::closed`].

use std::net::IpAddr;

use crate::accumulate::{guarded, Accumulator, Interval, Limits};
use crate::admission::Admission;
use crate::datagram::{self, Counts, Datagram};
use crate::loss::{Loss, LossTracker};

/// The boundary closing the interval that holds `at`.
pub fn interval_end(at: f64, interval_s: f64) -> f64 {
    ((at / interval_s).floor() + 1.0) * interval_s
}

/// Everything counted over one interval besides its sums.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Datagrams and samples decoded, rejected and refused (skipped formats aside).
    pub counts: Counts,
    pub loss: Loss,
    pub kernel_drops: u64,
    /// Evictions of the bounded tables: (agent, sub-agent) sequences, data sources,
    /// unknown formats.
    pub evicted_sequences: u64,
    pub evicted_sources: u64,
    pub evicted_formats: u64,
}

/// An interval and what was counted in it.
#[derive(Clone, Debug, Default)]
pub struct Closed {
    pub interval: Interval,
    pub totals: Totals,
}

/// The datagrams the kernel dropped on one socket, found by its inode in
/// `/proc/net/udp` or `/proc/net/udp6` (the `drops` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    inode: u64,
    drops: u64,
}

/// The kernel's drop count of the UDP socket with `inode`, if it is still open.
pub fn kernel_drops(inode: u64) -> Option<u64> {
    let wanted = inode.to_string();
    for table in ["/proc/net/udp", "/proc/net/udp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            // sl local rem st tx:rx tr:when retr uid timeout inode ref pointer drops
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(9) == Some(&wanted.as_str()) {
                return fields.get(12).and_then(|d| d.parse().ok());
            }
        }
    }
    None
}

/// Admission, decoding, loss accounting and accumulation per interval.
pub struct Collector {
    accumulator: Accumulator,
    scratch: Datagram,
    admission: Option<Admission>,
    loss: LossTracker,
    interval_s: f64,
    /// The end of the interval in progress.
    pub end: f64,
    /// Intervals closed and not taken yet, oldest first.
    pub closed: Vec<Closed>,
    watch: Option<Watch>,
}

impl Collector {
    /// From `start`, intervals of `interval_s`; the loss tables hold at most `max_agents`
    /// (agent, sub-agent) pairs and `max_sources` data sources, the sums `limits`.
    pub fn new(start: f64, interval_s: f64, max_agents: usize, max_sources: usize, limits: Limits) -> Self {
        Collector {
            accumulator: Accumulator::new(start, limits),
            scratch: Datagram::default(),
            admission: None,
            loss: LossTracker::new(max_agents, max_sources),
            interval_s,
            end: interval_end(start, interval_s),
            closed: Vec::new(),
            watch: None,
        }
    }

    /// Believe the agents `admission` admits from now (None: every agent).
    pub fn admit(&mut self, admission: Option<Admission>) {
        self.admission = admission;
    }

    /// Count, in each interval, what the kernel dropped on the socket with `inode` from now.
    pub fn watch(&mut self, inode: u64) {
        self.watch = Some(Watch { inode, drops: kernel_drops(inode).unwrap_or(0) });
    }

    /// One datagram that arrived at `at` (arrival order) from UDP `source`; whether it
    /// was accepted. A panic is caught and counted as `internal-error`.
    pub fn handle(&mut self, data: &[u8], at: f64, source: Option<IpAddr>) -> bool {
        if at >= self.end {
            self.close_until(at);
        }
        match guarded(|| self.decode_and_add(data, at, source)) {
            Ok(accepted) => accepted,
            Err(reason) => {
                self.accumulator.counts.reject(reason);
                self.scratch = Datagram::default();
                false
            }
        }
    }

    fn decode_and_add(&mut self, data: &[u8], at: f64, source: Option<IpAddr>) -> bool {
        let mut datagram = std::mem::take(&mut self.scratch);
        let admission = self.admission.as_ref();
        let accepted =
            datagram::decode_admitted(data, &mut datagram, &mut self.accumulator.counts, |agent| {
                admission.and_then(|a| a.check(agent, source))
            })
            .is_ok();
        if accepted {
            self.loss.observe(&datagram, data.len());
            self.accumulator.add_datagram(&datagram, at);
        }
        self.scratch = datagram;
        accepted
    }

    /// Starts a new segment at `at` (an address changed owner).
    pub fn cut(&mut self, at: f64) {
        self.accumulator.cut(at);
    }

    /// Every interval that ended by `now` and was not taken yet, oldest first.
    pub fn close(&mut self, now: f64) -> Vec<Closed> {
        self.close_until(now);
        std::mem::take(&mut self.closed)
    }

    /// The interval in progress, cut at `end` (at shutdown), and what was counted in it;
    /// both start over.
    pub fn take(&mut self, end: f64) -> Closed {
        let (loss, evicted_sequences, evicted_sources) = self.loss.take();
        let counts = &mut self.accumulator.counts;
        let evicted_formats = counts.skipped.take_evictions();
        let counts = counts.take_numbers();
        let kernel_drops = match self.watch.as_mut() {
            Some(watch) => match kernel_drops(watch.inode) {
                Some(now) => now.saturating_sub(std::mem::replace(&mut watch.drops, now)),
                None => 0, // the socket is closed
            },
            None => 0,
        };
        let totals =
            Totals { counts, loss, kernel_drops, evicted_sequences, evicted_sources, evicted_formats };
        Closed { interval: self.accumulator.take(end), totals }
    }

    fn close_until(&mut self, at: f64) {
        while at >= self.end {
            let closed = self.take(self.end);
            self.closed.push(closed);
            self.end = interval_end(self.end, self.interval_s);
        }
    }

    /// What was counted since the last take (without taking it), and the entries of the
    /// bounded tables: (sequences, sources, formats).
    pub fn peek(&self) -> (Counts, Loss, [usize; 3]) {
        let (sequences, sources) = self.loss.sizes();
        let mut counts = self.accumulator.counts.clone();
        let formats = counts.skipped.len();
        counts.skipped = crate::lru::Lru::new(1);
        (counts, self.loss.loss.clone(), [sequences, sources, formats])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries() {
        assert_eq!((interval_end(1005.0, 10.0), interval_end(1010.0, 10.0)), (1010.0, 1020.0));
        let mut c = Collector::new(100.0, 10.0, 16, 16, Limits::default());
        assert!(!c.handle(b"short", 109.0, None));
        assert_eq!(c.close(109.9).len(), 0);
        let closed = c.close(121.0);
        assert_eq!(
            closed.iter().map(|c| (c.interval.start, c.interval.end)).collect::<Vec<_>>(),
            [(100.0, 110.0), (110.0, 120.0)]
        );
        assert_eq!(closed[0].totals.counts.rejects[0], 1);
        assert_eq!(c.end, 130.0);
    }
}

//! Per-interval sums of decoded samples, keyed as `correlator/attribution/accumulate.py`.
//!
//! A flow sample adds one sample, its frame length and the length squared to its key:
//! agent, port and direction ([`data_source`]), source and destination IP, traffic
//! class, sampling rate. Counter samples are kept as they come; discard samples are
//! counted per (agent, port, reason, source, destination). A [`Accumulator::cut`] starts
//! a new segment. Every table is bounded: what does not fit is counted, not kept.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::agent_flows::{Added, AgentFlows};
use crate::counters_sample::CounterSample;
use crate::datagram::{self, Counts, Datagram, Sample};
use crate::hash::FastMap;
use crate::packet::{Addr, Traffic};
use crate::reject::Reject;

/// Format-0 interface value mask (the format bits above it must be 0 too).
pub const INTERFACE_INDEX: u64 = 0x3FFF_FFFF;

/// Which way a sample crossed its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Direction {
    In,
    Out,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::In => "in",
            Direction::Out => "out",
        }
    }
}

/// The ifIndex and direction a flow sample counts for: its data source, inbound when it
/// is the input (or when the input is not a port), outbound when it is the output; a data
/// source that is neither while the input is a port (pmacct's sfprobe says 0:1) counts
/// for the input, inbound.
pub fn data_source(source: u32, input: u64, output: u64) -> (u32, Direction) {
    let s = u64::from(source);
    if s == input {
        (source, Direction::In)
    } else if s == output {
        (source, Direction::Out)
    } else if 0 < input && input < INTERFACE_INDEX {
        // input < 2^30 here: it fits
        (u32::try_from(input).unwrap_or(source), Direction::In)
    } else {
        (source, Direction::In)
    }
}

/// The key of a flow sample's sums: its agent and addresses as their places in its
/// segment's tables ([`Segment::agents`] from 1, [`Segment::addresses`]), so that a key
/// is 24 bytes and the table holds a third less than with the addresses themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    pub agent: u32,
    pub ifindex: u32,
    pub src: u32,
    pub dst: u32,
    pub rate: u32,
    pub direction: Direction,
    pub traffic: Traffic,
}

/// Samples, sum of frame lengths, sum of their squares (two 64-bit words, low first: a
/// table entry stays 8-byte aligned, 56 bytes with its key rather than 64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    pub samples: u64,
    pub bytes: u64,
    squares: [u64; 2],
}

impl Sums {
    /// One sample of `length` bytes.
    pub(crate) fn of(length: u32) -> Self {
        let mut sums = Sums::default();
        sums.add(length);
        sums
    }

    pub(crate) fn add(&mut self, length: u32) {
        let squares = self.squares() + u128::from(length) * u128::from(length);
        self.samples += 1;
        self.bytes += u64::from(length);
        self.squares = [squares as u64, (squares >> 64) as u64];
    }

    pub fn squares(&self) -> u128 {
        u128::from(self.squares[0]) | u128::from(self.squares[1]) << 64
    }
}

/// (agent, port, reason, source IP, destination IP) of discard samples.
pub type DiscardKey = (Addr, u32, u32, Addr, Addr);

/// Sums from `start` on.
#[derive(Clone, Debug)]
pub struct Segment {
    pub start: f64,
    /// Each agent's flow table (by its place in `agents`): a datagram's samples look up
    /// keys among its own agent's, a table a few pages long rather than the whole
    /// interval's.
    flows: Vec<AgentFlows>,
    /// Agents of every datagram accepted in the segment, flow samples or not (as the
    /// Python accumulator's tables, which a cut also treats as "something happened"), in
    /// order: a key's `agent` is its place here from 1.
    pub agents: Vec<Addr>,
    /// The addresses keys name, in order of first use; index 0 is no address.
    pub addresses: Vec<Addr>,
    agent_ids: FastMap<Addr, u32>,
    address_ids: FastMap<Addr, u32>,
}

impl Segment {
    fn new(start: f64) -> Self {
        let address_ids = std::iter::once((Addr::NONE, 0)).collect();
        Segment {
            start,
            flows: Vec::new(),
            agents: Vec::new(),
            addresses: vec![Addr::NONE],
            agent_ids: FastMap::default(),
            address_ids,
        }
    }

    /// `agent`'s place in [`Segment::agents`] from 1, added when new.
    fn agent(&mut self, agent: Addr) -> u32 {
        let (agents, flows) = (&mut self.agents, &mut self.flows);
        *self.agent_ids.entry(agent).or_insert_with(|| {
            agents.push(agent);
            flows.push(AgentFlows::default());
            agents.len() as u32
        })
    }

    /// Each agent's table of sums, in the order of [`Segment::agents`].
    pub fn into_tables(self) -> impl Iterator<Item = AgentFlows> {
        self.flows.into_iter()
    }

    /// `address`'s place in [`Segment::addresses`], added when new.
    fn address(&mut self, address: Addr) -> u32 {
        let addresses = &mut self.addresses;
        *self.address_ids.entry(address).or_insert_with(|| {
            addresses.push(address);
            (addresses.len() - 1) as u32
        })
    }
}

/// How many entries each table of one interval may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub flows: usize,
    pub counters: usize,
    pub discards: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { flows: 1 << 22, counters: 1 << 20, discards: 1 << 16 }
    }
}

/// Samples that found their table full, per table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overflow {
    pub flows: u64,
    pub counters: u64,
    pub discards: u64,
}

/// Everything sampled between `start` and `end`.
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub start: f64,
    pub end: f64,
    pub segments: Vec<Segment>,
    /// (agent, sub-agent, received at, the agent's uptime in ms, sample)
    pub counters: Vec<(Addr, u32, f64, u32, CounterSample)>,
    pub discards: FastMap<DiscardKey, u64>,
    pub overflow: Overflow,
}

/// Decodes datagrams and sums their samples into the current interval.
pub struct Accumulator {
    limits: Limits,
    interval: Interval,
    keys: usize,
    scratch: Datagram,
    pub counts: Counts,
}

impl Accumulator {
    pub fn new(start: f64, limits: Limits) -> Self {
        Accumulator {
            limits,
            interval: fresh(start),
            keys: 0,
            scratch: Datagram::default(),
            counts: Counts::default(),
        }
    }

    /// Decodes `data`, received at `at`, and adds its samples; whether it was accepted.
    /// A panic is caught here and counted as `internal-error`: it never reaches a caller.
    pub fn add(&mut self, data: &[u8], at: f64) -> bool {
        match guarded(|| self.add_unguarded(data, at)) {
            Ok(accepted) => accepted,
            Err(reason) => {
                self.counts.reject(reason);
                self.scratch = Datagram::default();
                false
            }
        }
    }

    fn add_unguarded(&mut self, data: &[u8], at: f64) -> bool {
        let mut datagram = std::mem::take(&mut self.scratch);
        let accepted = datagram::decode(data, &mut datagram, &mut self.counts).is_ok();
        if accepted {
            self.add_datagram(&datagram, at);
        }
        self.scratch = datagram;
        accepted
    }

    /// Adds the samples of a decoded datagram received at `at`.
    pub fn add_datagram(&mut self, datagram: &Datagram, at: f64) {
        let agent = datagram.agent;
        let agent_id = self.interval.segments.last_mut().map_or(0, |segment| segment.agent(agent));
        for sample in &datagram.samples {
            match sample {
                Sample::Flow(f) => {
                    let (ifindex, direction) = data_source(f.source_index, f.input, f.output);
                    let (src, dst, traffic) = match &f.packet {
                        Some(p) => (p.src_ip, p.dst_ip, p.traffic),
                        None => (Addr::NONE, Addr::NONE, Traffic::NoHeader),
                    };
                    let key = FlowKey {
                        agent: agent_id,
                        ifindex,
                        src: 0,
                        dst: 0,
                        rate: f.sampling_rate,
                        direction,
                        traffic,
                    };
                    self.add_flow(key, src, dst, f.frame_length);
                }
                Sample::Counters(c) => {
                    if self.interval.counters.len() < self.limits.counters {
                        self.interval.counters.push((
                            agent,
                            datagram.sub_agent,
                            at,
                            datagram.uptime_ms,
                            c.clone(),
                        ));
                    } else {
                        self.interval.overflow.counters += 1;
                    }
                }
                Sample::Discard(d) => {
                    let input = u64::from(d.input);
                    let port = if input >> 30 == 0 { (input & INTERFACE_INDEX) as u32 } else { 0 };
                    let port = if port == 0 { d.source_index } else { port };
                    let (src, dst) = d.packet.map_or((Addr::NONE, Addr::NONE), |p| (p.src_ip, p.dst_ip));
                    let key = (agent, port, d.reason, src, dst);
                    let discards = &mut self.interval.discards;
                    if let Some(n) = discards.get_mut(&key) {
                        *n += 1;
                    } else if discards.len() < self.limits.discards {
                        discards.insert(key, 1);
                    } else {
                        self.interval.overflow.discards += 1;
                    }
                }
            }
        }
    }

    /// Adds a flow sample of `length` to `key`, its addresses `src` and `dst` (a new key's
    /// addresses are added to the segment's only when the table has room for it).
    fn add_flow(&mut self, key: FlowKey, src: Addr, dst: Addr, length: u32) {
        let Some(segment) = self.interval.segments.last_mut() else {
            return;
        };
        let room = self.keys < self.limits.flows;
        let (src, dst) = if room {
            (segment.address(src), segment.address(dst))
        } else {
            match (segment.address_ids.get(&src), segment.address_ids.get(&dst)) {
                (Some(&src), Some(&dst)) => (src, dst),
                _ => {
                    self.interval.overflow.flows += 1;
                    return;
                }
            }
        };
        let Some(flows) = segment.flows.get_mut(key.agent.wrapping_sub(1) as usize) else {
            return;
        };
        match flows.add(FlowKey { src, dst, ..key }, length, room) {
            Added::Inserted => self.keys += 1,
            Added::Summed => {}
            Added::Full => self.interval.overflow.flows += 1,
        }
    }

    /// Starts a new segment at `at` (an address changed owner).
    pub fn cut(&mut self, at: f64) {
        match self.interval.segments.last_mut() {
            Some(last) if last.agents.is_empty() => last.start = at,
            _ => self.interval.segments.push(Segment::new(at)),
        }
    }

    /// The interval up to `end`; a new one starts there.
    pub fn take(&mut self, end: f64) -> Interval {
        let mut interval = std::mem::replace(&mut self.interval, fresh(end));
        interval.end = end;
        self.keys = 0;
        interval
    }

    /// The counts so far; counting starts over.
    pub fn take_counts(&mut self) -> Counts {
        std::mem::take(&mut self.counts)
    }
}

fn fresh(start: f64) -> Interval {
    Interval { start, end: start, segments: vec![Segment::new(start)], ..Interval::default() }
}

/// `f()`, or `internal-error` if it panicked.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Reject> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| Reject::InternalError)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_source_as_python() {
        assert_eq!(data_source(5, 5, 9), (5, Direction::In));
        assert_eq!(data_source(9, 5, 9), (9, Direction::Out));
        assert_eq!(data_source(1, 5, 0x3FFF_FFFF), (5, Direction::In));
        assert_eq!(data_source(1, 0x3FFF_FFFF, 7), (1, Direction::In));
        assert_eq!(data_source(1, 0, 7), (1, Direction::In));
        assert_eq!(data_source(1, 1 << 40, 7), (1, Direction::In));
    }

    #[test]
    fn a_panic_is_a_reject_reason() {
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let caught = guarded(|| -> u32 { panic!("boom") });
        std::panic::set_hook(quiet);
        assert_eq!(caught, Err(Reject::InternalError));
        assert_eq!(guarded(|| 7), Ok(7));
    }
}

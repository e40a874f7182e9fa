//! sFlow v5 datagram: the header, then the samples, each read from its own cut slice.
//!
//! As `correlator/sflow/decode.py`: a datagram that cannot be trusted is rejected whole;
//! a sample running past the datagram ends it (what follows cannot be located); a sample
//! too short for its fixed fields, or with a record running past it, is rejected alone.
//! Unknown sample and record formats are skipped by their length and counted. Only
//! samples of enterprise 0 are read.

use crate::admission::Refusal;
use crate::counters_sample::{self, CounterSample};
use crate::discard_sample::{self, DiscardSample};
use crate::flow_sample::{self, FlowSample};
use crate::lru::Lru;
use crate::packet::Addr;
use crate::reject::Reject;
use crate::xdr::{words, Items};

pub const VERSION_5: u32 = 5;
pub const ADDRESS_IP_V4: u32 = 1;
pub const ADDRESS_IP_V6: u32 = 2;
/// sFlow v5 sample formats (enterprise 0).
pub const FLOW_SAMPLE: u32 = 1;
pub const COUNTERS_SAMPLE: u32 = 2;
pub const FLOW_SAMPLE_EXPANDED: u32 = 3;
pub const COUNTERS_SAMPLE_EXPANDED: u32 = 4;
/// sflow_drops.txt discarded-packet sample.
pub const DISCARDED_PACKET: u32 = 5;
/// version, agent type, agent (4 or 16 B), sub-agent, sequence, uptime, sample count.
const HEADER_V4: usize = 28;
const HEADER_V6: usize = 40;
/// More samples or records than this in one datagram is nonsense: read no further.
pub const MAX_ITEMS: u32 = 1 << 12;
/// Distinct unknown formats counted by name (the least recently met go, counted).
pub const MAX_SKIPPED_FORMATS: usize = 256;

/// One sample of a datagram.
#[derive(Clone, Debug, PartialEq)]
pub enum Sample {
    Flow(FlowSample),
    Counters(CounterSample),
    Discard(DiscardSample),
}

/// A decoded datagram; reused from one decode to the next (no allocation per datagram).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Datagram {
    pub agent: Addr,
    pub sub_agent: u32,
    pub seq: u32,
    pub uptime_ms: u32,
    pub samples: Vec<Sample>,
}

/// Whether an unknown format was a sample's or a record's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Sample,
    Record,
}

/// What a decoder counted: decoded datagrams, accepted samples, rejects, datagrams
/// refused by admission, skipped formats.
#[derive(Clone, Debug, PartialEq)]
pub struct Counts {
    pub datagrams: u64,
    pub flow: u64,
    pub counters: u64,
    pub discard: u64,
    pub rejects: [u64; Reject::ALL.len()],
    pub refused: [u64; Refusal::ALL.len()],
    /// (level, format) -> times skipped, the [`MAX_SKIPPED_FORMATS`] most recently met.
    pub skipped: Lru<(Level, u32), u64>,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            datagrams: 0,
            flow: 0,
            counters: 0,
            discard: 0,
            rejects: [0; Reject::ALL.len()],
            refused: [0; Refusal::ALL.len()],
            skipped: Lru::new(MAX_SKIPPED_FORMATS),
        }
    }
}

impl Counts {
    pub fn reject(&mut self, reason: Reject) {
        self.rejects[reason.index()] += 1;
    }

    pub fn skip(&mut self, level: Level, format: u32) {
        let n = self.skipped.pop(&(level, format)).unwrap_or(0);
        self.skipped.put((level, format), n + 1);
    }

    /// The counts of datagrams and samples since the last call (skipped formats stay).
    pub fn take_numbers(&mut self) -> Counts {
        let skipped = std::mem::replace(&mut self.skipped, Lru::new(MAX_SKIPPED_FORMATS));
        let numbers = std::mem::take(self);
        self.skipped = skipped;
        numbers
    }
}

/// Decodes `data` into `out` (cleared first), counting in `counts`; `Err` when the
/// datagram is rejected whole (counted too).
pub fn decode(data: &[u8], out: &mut Datagram, counts: &mut Counts) -> Result<(), Reject> {
    decode_admitted(data, out, counts, |_| None).map_err(|refused| match refused {
        Refused::Reject(reason) => reason,
        Refused::Admission(_) => Reject::InternalError, // |_| None refuses nothing
    })
}

/// Why a datagram was refused whole: its bytes, or its agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Reject(Reject),
    Admission(Refusal),
}

impl From<Reject> for Refused {
    fn from(reason: Reject) -> Self {
        Refused::Reject(reason)
    }
}

/// As [`decode`], with `admit` asked about the agent once the header is read, before any
/// sample is: a datagram it refuses is counted under that refusal and not read further.
pub fn decode_admitted(
    data: &[u8],
    out: &mut Datagram,
    counts: &mut Counts,
    admit: impl FnOnce(&Addr) -> Option<Refusal>,
) -> Result<(), Refused> {
    out.samples.clear();
    let result = decode_into(data, out, counts, admit);
    match result {
        Err(Refused::Reject(reason)) => counts.reject(reason),
        Err(Refused::Admission(refusal)) => counts.refused[refusal.index()] += 1,
        Ok(()) => {}
    }
    result
}

/// A datagram's header: everything before its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub agent: Addr,
    pub sub_agent: u32,
    pub seq: u32,
    pub uptime_ms: u32,
    /// The sample count the datagram declares.
    pub samples: u32,
    /// Where the samples begin.
    pub length: usize,
}

/// Reads the header of `data` and nothing after it.
pub fn header(data: &[u8]) -> Result<Header, Reject> {
    if data.len() < HEADER_V4 {
        return Err(Reject::ShortDatagram);
    }
    let [version, agent_type] = words::<2>(data, 0).ok_or(Reject::ShortDatagram)?;
    if version != VERSION_5 {
        return Err(Reject::BadVersion);
    }
    let (agent_length, length) = match agent_type {
        ADDRESS_IP_V4 => (4, HEADER_V4),
        ADDRESS_IP_V6 => (16, HEADER_V6),
        _ => return Err(Reject::BadAgentType),
    };
    let agent = data.get(8..8 + agent_length).ok_or(Reject::ShortDatagram)?;
    let [sub_agent, seq, uptime_ms, samples] =
        words::<4>(data, 8 + agent_length).ok_or(Reject::ShortDatagram)?;
    Ok(Header { agent: Addr::from_slice(agent), sub_agent, seq, uptime_ms, samples, length })
}

fn decode_into(
    data: &[u8],
    out: &mut Datagram,
    counts: &mut Counts,
    admit: impl FnOnce(&Addr) -> Option<Refusal>,
) -> Result<(), Refused> {
    let Header { agent, sub_agent, seq, uptime_ms, samples: count, length: header } = header(data)?;
    out.agent = agent;
    if let Some(refusal) = admit(&out.agent) {
        return Err(Refused::Admission(refusal));
    }
    (out.sub_agent, out.seq, out.uptime_ms) = (sub_agent, seq, uptime_ms);
    counts.datagrams += 1;
    for item in Items::new(data, header, count.min(MAX_ITEMS)) {
        let Ok((format, body)) = item else {
            counts.reject(Reject::TruncatedSample);
            break;
        };
        let sample = match format {
            FLOW_SAMPLE | FLOW_SAMPLE_EXPANDED => {
                flow_sample::decode(body, format == FLOW_SAMPLE_EXPANDED, counts).map(Sample::Flow)
            }
            COUNTERS_SAMPLE | COUNTERS_SAMPLE_EXPANDED => {
                counters_sample::decode(body, format == COUNTERS_SAMPLE_EXPANDED, counts)
                    .map(Sample::Counters)
            }
            DISCARDED_PACKET => discard_sample::decode(body, counts).map(Sample::Discard),
            _ => {
                counts.skip(Level::Sample, format);
                continue;
            }
        };
        match sample {
            Ok(s) => {
                match s {
                    Sample::Flow(_) => counts.flow += 1,
                    Sample::Counters(_) => counts.counters += 1,
                    Sample::Discard(_) => counts.discard += 1,
                }
                out.samples.push(s);
            }
            Err(reason) => counts.reject(reason),
        }
    }
    Ok(())
}

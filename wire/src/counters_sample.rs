//! sFlow v5 counters_sample (0,2) and counters_sample_expanded (0,4), with the counter
//! records fabcorr reads: generic interface (0,1) and ethernet (0,2).

use crate::datagram::{Counts, Level, MAX_ITEMS};
use crate::reject::Reject;
use crate::xdr::{u32_at, u64_at, words, Items};

/// Counter record formats (enterprise 0).
pub const GENERIC_INTERFACE_COUNTERS: u32 = 1;
pub const ETHERNET_INTERFACE_COUNTERS: u32 = 2;
const IF_COUNTERS_LENGTH: usize = 88;
pub const ETHERNET_COUNTERS_WORDS: usize = 13;

/// The generic interface counters record (0,1), fields in the spec's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InterfaceCounters {
    pub ifindex: u32,
    pub if_type: u32,
    pub speed: u64,
    pub direction: u32,
    pub status: u32,
    pub in_octets: u64,
    /// in_ucast, in_mcast, in_bcast, in_discards, in_errors, in_unknown
    pub in_counts: [u32; 6],
    pub out_octets: u64,
    /// out_ucast, out_mcast, out_bcast, out_discards, out_errors, promiscuous
    pub out_counts: [u32; 6],
}

/// Reads one port counter from a generic interface record.
pub type ReadCounter = fn(&InterfaceCounters) -> u64;

/// The port counter named `name` (as `inventory/counters.py` names them) in a generic
/// interface record, and its width: the octets are Counter64s; the packets are the sum of
/// three Counter32s (unicast, multicast, broadcast), 32 bits wide since each of them
/// wraps there; discards and errors are Counter32s. None for any other name.
pub fn interface_counter(name: &str) -> Option<(ReadCounter, u32)> {
    let found: (ReadCounter, u32) = match name {
        "in_octets" => (|c| c.in_octets, 64),
        "out_octets" => (|c| c.out_octets, 64),
        "in_pkts" => (|c| packets(&c.in_counts), 32),
        "out_pkts" => (|c| packets(&c.out_counts), 32),
        "in_discards" => (|c| u64::from(c.in_counts[3]), 32),
        "out_discards" => (|c| u64::from(c.out_counts[3]), 32),
        "in_errors" => (|c| u64::from(c.in_counts[4]), 32),
        "out_errors" => (|c| u64::from(c.out_counts[4]), 32),
        _ => return None,
    };
    Some(found)
}

/// Unicast, multicast and broadcast packets of a direction's counts.
fn packets(counts: &[u32; 6]) -> u64 {
    counts[..3].iter().map(|&n| u64::from(n)).sum()
}

/// A counters sample (`records.CounterSample`): records it does not carry are `None`.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterSample {
    pub seq: u32,
    pub source_type: u32,
    pub source_index: u32,
    pub interface: Option<InterfaceCounters>,
    pub ethernet: Option<[u32; ETHERNET_COUNTERS_WORDS]>,
}

/// The counters sample in `body` (cut to the sample's declared length).
pub fn decode(body: &[u8], expanded: bool, counts: &mut Counts) -> Result<CounterSample, Reject> {
    let (seq, source_type, source_index, count, at) = if expanded {
        let [seq, source_type, source_index, count] = words::<4>(body, 0).ok_or(Reject::TruncatedSample)?;
        (seq, source_type, source_index, count, 16)
    } else {
        let [seq, source, count] = words::<3>(body, 0).ok_or(Reject::TruncatedSample)?;
        (seq, source >> 24, source & 0x00FF_FFFF, count, 12)
    };
    let mut sample = CounterSample { seq, source_type, source_index, interface: None, ethernet: None };
    for item in Items::new(body, at, count.min(MAX_ITEMS)) {
        let (format, rec) = item.map_err(|()| Reject::TruncatedRecord)?;
        match format {
            GENERIC_INTERFACE_COUNTERS => {
                let rec = rec.get(..IF_COUNTERS_LENGTH).ok_or(Reject::BadRecord)?;
                sample.interface = Some(interface_counters(rec).ok_or(Reject::BadRecord)?);
            }
            ETHERNET_INTERFACE_COUNTERS => {
                sample.ethernet = Some(words::<ETHERNET_COUNTERS_WORDS>(rec, 0).ok_or(Reject::BadRecord)?);
            }
            _ => counts.skip(Level::Record, format),
        }
    }
    Ok(sample)
}

/// sFlow v5 if_counters, 88 bytes.
fn interface_counters(rec: &[u8]) -> Option<InterfaceCounters> {
    Some(InterfaceCounters {
        ifindex: u32_at(rec, 0)?,
        if_type: u32_at(rec, 4)?,
        speed: u64_at(rec, 8)?,
        direction: u32_at(rec, 16)?,
        status: u32_at(rec, 20)?,
        in_octets: u64_at(rec, 24)?,
        in_counts: words::<6>(rec, 32)?,
        out_octets: u64_at(rec, 56)?,
        out_counts: words::<6>(rec, 64)?,
    })
}

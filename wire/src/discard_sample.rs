//! sflow_drops.txt discarded-packet sample (0,5), with its sampled-header record.

use crate::datagram::{Counts, Level, MAX_ITEMS};
use crate::flow_sample::{sampled_header, SAMPLED_HEADER};
use crate::packet::Packet;
use crate::reject::Reject;
use crate::xdr::{words, Items};

/// seq, source type, source index, drops, input, output, reason, record count.
const FIXED: usize = 32;

/// A discarded-packet sample (`records.DiscardSample`); `reason` per sflow_drops.txt.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscardSample {
    pub seq: u32,
    pub source_type: u32,
    pub source_index: u32,
    pub drops: u32,
    pub input: u32,
    pub output: u32,
    pub reason: u32,
    pub frame_length: u32,
    pub packet: Option<Packet>,
}

/// The discard sample in `body` (cut to the sample's declared length).
pub fn decode(body: &[u8], counts: &mut Counts) -> Result<DiscardSample, Reject> {
    let [seq, source_type, source_index, drops, input, output, reason, count] =
        words::<8>(body, 0).ok_or(Reject::TruncatedSample)?;
    let mut sample = DiscardSample {
        seq,
        source_type,
        source_index,
        drops,
        input,
        output,
        reason,
        frame_length: 0,
        packet: None,
    };
    for item in Items::new(body, FIXED, count.min(MAX_ITEMS)) {
        let (format, rec) = item.map_err(|()| Reject::TruncatedRecord)?;
        if format == SAMPLED_HEADER {
            let (frame_length, _, packet) = sampled_header(rec)?;
            (sample.frame_length, sample.packet) = (frame_length, packet);
        } else {
            counts.skip(Level::Record, format);
        }
    }
    Ok(sample)
}

//! sFlow v5 flow_sample (0,1) and flow_sample_expanded (0,3), with their flow records:
//! sampled_header (0,1) and extended_switch (0,1001).

use crate::datagram::{Counts, Level, MAX_ITEMS};
use crate::packet::{self, Packet};
use crate::reject::Reject;
use crate::xdr::{align4, words, Items};

/// Flow record formats (enterprise 0).
pub const SAMPLED_HEADER: u32 = 1;
pub const EXTENDED_SWITCH: u32 = 1001;
/// seq, source_id, sampling_rate, sample_pool, drops, input, output, record count.
const FIXED: usize = 32;
/// seq, source type, source index, rate, pool, drops, input format and value,
/// output format and value, record count.
const FIXED_EXPANDED: usize = 44;
/// format, length, then the sampled header's protocol, frame length, stripped, length.
const SAMPLED_HEADER_HEAD: usize = 24;

/// A packet sample (`records.FlowSample`). Interfaces keep their sFlow value, format in
/// the bits from 30 up (an expanded sample's format is a whole word, hence 64 bits).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSample {
    pub seq: u32,
    pub source_type: u32,
    pub source_index: u32,
    pub sampling_rate: u32,
    pub sample_pool: u32,
    pub drops: u32,
    pub input: u64,
    pub output: u64,
    pub frame_length: u32,
    pub stripped: u32,
    pub packet: Option<Packet>,
    /// -1 without an extended_switch record.
    pub src_vlan: i64,
    pub dst_vlan: i64,
}

/// The flow sample in `body` (cut to the sample's declared length).
pub fn decode(body: &[u8], expanded: bool, counts: &mut Counts) -> Result<FlowSample, Reject> {
    let (mut sample, mut count, mut at) = if expanded {
        let w = words::<11>(body, 0).ok_or(Reject::TruncatedSample)?;
        let interface = |format: u32, value: u32| u64::from(format) << 30 | u64::from(value);
        (
            fields(w[0], w[1], w[2], w[3], w[4], w[5], interface(w[6], w[7]), interface(w[8], w[9])),
            w[10],
            FIXED_EXPANDED,
        )
    } else {
        let w = words::<8>(body, 0).ok_or(Reject::TruncatedSample)?;
        let (source_type, source_index) = (w[1] >> 24, w[1] & 0x00FF_FFFF);
        (fields(w[0], source_type, source_index, w[2], w[3], w[4], w[5].into(), w[6].into()), w[7], FIXED)
    };
    count = count.min(MAX_ITEMS);
    // Agents send the sampled header first: read it with no record loop when it is whole.
    if count > 0 {
        if let Some([SAMPLED_HEADER, length, protocol, frame_length, stripped, header_length]) =
            words::<6>(body, at)
        {
            let stop = at as u64 + 8 + u64::from(length);
            let header_stop = at as u64 + SAMPLED_HEADER_HEAD as u64 + u64::from(header_length);
            if length >= 16 && header_stop <= stop && stop <= body.len() as u64 {
                let header = &body[at + SAMPLED_HEADER_HEAD..header_stop as usize];
                sample.packet = packet::parse(protocol, header);
                (sample.frame_length, sample.stripped) = (frame_length, stripped);
                at = align4(stop as usize);
                count -= 1;
            }
        }
    }
    for item in Items::new(body, at, count) {
        let (format, rec) = item.map_err(|()| Reject::TruncatedRecord)?;
        match format {
            SAMPLED_HEADER => {
                (sample.frame_length, sample.stripped, sample.packet) = sampled_header(rec)?;
            }
            EXTENDED_SWITCH => {
                let [src_vlan, _, dst_vlan, _] = words::<4>(rec, 0).ok_or(Reject::BadRecord)?;
                (sample.src_vlan, sample.dst_vlan) = (src_vlan.into(), dst_vlan.into());
            }
            _ => counts.skip(Level::Record, format),
        }
    }
    Ok(sample)
}

#[allow(clippy::too_many_arguments)]
fn fields(
    seq: u32,
    source_type: u32,
    source_index: u32,
    sampling_rate: u32,
    sample_pool: u32,
    drops: u32,
    input: u64,
    output: u64,
) -> FlowSample {
    FlowSample {
        seq,
        source_type,
        source_index,
        sampling_rate,
        sample_pool,
        drops,
        input,
        output,
        frame_length: 0,
        stripped: 0,
        packet: None,
        src_vlan: -1,
        dst_vlan: -1,
    }
}

/// The sampled-header record (flow record 0,1) in `rec`: frame length, bytes stripped,
/// and the packet of its header (`None` for a header protocol not parsed).
pub(crate) fn sampled_header(rec: &[u8]) -> Result<(u32, u32, Option<Packet>), Reject> {
    let [protocol, frame_length, stripped, length] = words::<4>(rec, 0).ok_or(Reject::BadRecord)?;
    let header =
        16usize.checked_add(length as usize).and_then(|stop| rec.get(16..stop)).ok_or(Reject::BadRecord)?;
    Ok((frame_length, stripped, packet::parse(protocol, header)))
}

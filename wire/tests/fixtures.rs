//! Byte fixtures from the simulator's encoder (tests/fixtures/generate.py sets the
//! values asserted here), each with truncated copies: cut short, and with a sample or
//! record whose declared length is too short for its fields.

use fabcorr_wire::datagram::{decode, Counts, Datagram, Level, Sample};
use fabcorr_wire::packet::Traffic;
use fabcorr_wire::reject::Reject;

const ROCE_WRITE: &[u8] = include_bytes!("fixtures/flow_roce_write.bin");
const EXPANDED_IPV6: &[u8] = include_bytes!("fixtures/flow_expanded_ipv6.bin");
const COUNTERS_DISCARD: &[u8] = include_bytes!("fixtures/counters_discard.bin");
const UNKNOWN_FORMATS: &[u8] = include_bytes!("fixtures/unknown_formats.bin");
const ALL: [&[u8]; 4] = [ROCE_WRITE, EXPANDED_IPV6, COUNTERS_DISCARD, UNKNOWN_FORMATS];

fn decoded(data: &[u8]) -> (Result<Datagram, Reject>, Counts) {
    let mut counts = Counts::default();
    let mut out = Datagram::default();
    let result = decode(data, &mut out, &mut counts).map(|()| out);
    (result, counts)
}

fn rejects(counts: &Counts) -> Vec<(&'static str, u64)> {
    Reject::ALL
        .iter()
        .filter(|r| counts.rejects[r.index()] > 0)
        .map(|r| (r.name(), counts.rejects[r.index()]))
        .collect()
}

fn put_u32(data: &mut [u8], at: usize, value: u32) {
    data[at..at + 4].copy_from_slice(&value.to_be_bytes());
}

#[test]
fn a_compact_flow_sample_of_a_roce_write() {
    let (d, counts) = decoded(ROCE_WRITE);
    let d = d.unwrap();
    assert_eq!((d.agent.as_bytes(), d.sub_agent, d.seq, d.uptime_ms), (&[192, 0, 2, 10][..], 3, 41, 123456));
    let [Sample::Flow(f)] = &d.samples[..] else { panic!("{:?}", d.samples) };
    assert_eq!(
        (f.seq, f.source_type, f.source_index, f.sampling_rate, f.sample_pool, f.input, f.output),
        (1, 0, 5, 4000, 4000, 5, 9)
    );
    assert_eq!((f.frame_length, f.stripped, f.src_vlan, f.dst_vlan), (4174, 4, 100, 200));
    let p = f.packet.unwrap();
    assert_eq!((p.traffic, p.ip_version, p.dscp, p.ecn, p.vlan), (Traffic::RoceWrite, 4, 26, 2, -1));
    assert_eq!((p.src_ip.as_bytes(), p.dst_ip.as_bytes()), (&[10, 101, 0, 2][..], &[10, 101, 0, 3][..]));
    assert_eq!(
        (p.src_port, p.dst_port, p.opcode, p.dest_qp, p.psn, p.becn),
        (49152, 4791, 0x0A, 0x12345, 77, false)
    );
    assert_eq!((counts.datagrams, counts.flow, rejects(&counts)), (1, 1, vec![]));
}

#[test]
fn an_expanded_flow_sample_with_ipv6_agent_vlan_and_packet() {
    let (d, _) = decoded(EXPANDED_IPV6);
    let d = d.unwrap();
    assert_eq!(d.agent.as_bytes(), &[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1][..]);
    let [Sample::Flow(f)] = &d.samples[..] else { panic!("{:?}", d.samples) };
    assert_eq!(
        (f.source_index, f.input, f.output >> 30, f.output & 0x3FFF_FFFF),
        (1 << 25, 0x3FFF_FFFF, 2, 3)
    );
    let p = f.packet.unwrap();
    assert_eq!((p.ip_version, p.vlan, p.dest_qp, p.traffic), (6, 301, 0x12345, Traffic::RoceWrite));
    assert_eq!(p.src_ip.as_bytes()[..2], [0xfd, 0]);
    assert_eq!(p.dst_ip.as_bytes()[15], 3);
}

#[test]
fn a_counters_sample_and_a_discard_sample() {
    let (d, counts) = decoded(COUNTERS_DISCARD);
    let d = d.unwrap();
    let [Sample::Counters(c), Sample::Discard(x)] = &d.samples[..] else { panic!("{:?}", d.samples) };
    let i = c.interface.unwrap();
    assert_eq!(
        (c.seq, c.source_index, i.ifindex, i.speed, i.status, i.in_octets),
        (7, 5, 5, 400_000_000_000, 3, 1 << 40)
    );
    assert_eq!((i.in_counts, i.out_octets, i.out_counts), ([7, 0, 0, 2, 0, 0], 99, [1, 0, 0, 4, 0, 0]));
    assert_eq!(c.ethernet, Some([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
    assert_eq!((x.seq, x.drops, x.input, x.output >> 30, x.reason, x.frame_length), (8, 2, 5, 1, 259, 4178));
    let p = x.packet.unwrap();
    assert_eq!((p.traffic, p.becn, p.opcode), (Traffic::RoceCnp, true, 0x81));
    assert_eq!((counts.counters, counts.discard), (1, 1));
}

#[test]
fn unknown_formats_are_skipped_by_length_and_counted() {
    let (d, counts) = decoded(UNKNOWN_FORMATS);
    let d = d.unwrap();
    let [Sample::Flow(f)] = &d.samples[..] else { panic!("{:?}", d.samples) };
    assert_eq!(f.packet.unwrap().traffic, Traffic::RoceReadRequest);
    let skipped: Vec<_> = counts.skipped.iter().map(|(&k, &n)| (k, n)).collect();
    assert_eq!(skipped, vec![((Level::Sample, 4413 << 12 | 7), 1), ((Level::Record, 1036), 1)]);
}

/// Offsets of each sample record in a fixture: (start, end of its body).
fn samples_of(data: &[u8]) -> Vec<(usize, usize)> {
    let header = if data[7] == 1 { 28 } else { 40 };
    let mut at = header;
    let mut out = vec![];
    while at + 8 <= data.len() {
        let length = u32::from_be_bytes([data[at + 4], data[at + 5], data[at + 6], data[at + 7]]) as usize;
        out.push((at, at + 8 + length));
        at = (at + 8 + length + 3) & !3;
    }
    out
}

#[test]
fn every_cut_of_every_fixture_keeps_the_samples_before_it() {
    for fixture in ALL {
        let header = if fixture[7] == 1 { 28 } else { 40 };
        let samples = samples_of(fixture);
        let (whole, _) = decoded(fixture);
        let whole = whole.unwrap().samples;
        for cut in 0..fixture.len() {
            let (d, counts) = decoded(&fixture[..cut]);
            if cut < header {
                assert_eq!(d.unwrap_err(), Reject::ShortDatagram, "cut {cut}");
                continue;
            }
            let d = d.unwrap();
            let kept = samples.iter().filter(|&&(_, end)| end <= cut).count();
            // the skipped unknown sample is kept by no one
            let expected: Vec<_> = whole.iter().take(kept.min(whole.len())).cloned().collect();
            if fixture != UNKNOWN_FORMATS {
                assert_eq!(d.samples, expected, "cut {cut}");
            } else {
                assert!(d.samples.is_empty(), "cut {cut}");
            }
            assert_eq!(rejects(&counts), vec![("truncated-sample", 1)], "cut {cut}");
        }
    }
}

#[test]
fn bad_datagram_headers() {
    let mut v4 = ROCE_WRITE.to_vec();
    put_u32(&mut v4, 0, 4);
    assert_eq!(decoded(&v4).0.unwrap_err(), Reject::BadVersion);
    let mut kind = ROCE_WRITE.to_vec();
    put_u32(&mut kind, 4, 7);
    assert_eq!(decoded(&kind).0.unwrap_err(), Reject::BadAgentType);
    let mut v6 = ROCE_WRITE[..36].to_vec();
    put_u32(&mut v6, 4, 2);
    assert_eq!(decoded(&v6).0.unwrap_err(), Reject::ShortDatagram);
}

#[test]
fn a_sample_shorter_than_its_fixed_fields_is_rejected_alone() {
    // issue 13: the counters sample declares 8 bytes (its fields need 12): rejected as
    // truncated-sample, and the discard sample after it still decodes from its own bytes
    let mut data = COUNTERS_DISCARD.to_vec();
    let [(first, first_end), (second, second_end)] = samples_of(&data)[..] else { panic!() };
    let discard = data[second..second_end].to_vec();
    let mut short = data[..first + 8].to_vec();
    put_u32(&mut short, first + 4, 8);
    short.extend_from_slice(&data[first + 8..first + 16]);
    short.extend_from_slice(&discard);
    let (d, counts) = decoded(&short);
    let [Sample::Discard(x)] = &d.unwrap().samples[..] else { panic!() };
    assert_eq!((x.seq, x.reason), (8, 259));
    assert_eq!(rejects(&counts), vec![("truncated-sample", 1)]);
    // a record whose length runs past its sample: truncated-record, the next sample kept
    put_u32(&mut data, first + 8 + 12 + 4, (first_end - first) as u32);
    let (d, counts) = decoded(&data);
    assert!(matches!(d.unwrap().samples[..], [Sample::Discard(_)]));
    assert_eq!(rejects(&counts), vec![("truncated-record", 1)]);
}

#[test]
fn an_expanded_flow_sample_with_zero_records_is_valid() {
    // issue 13: 44 bytes of fixed fields and no record (it was read as 48)
    let data = EXPANDED_IPV6;
    let (start, _) = samples_of(data)[0];
    let mut bare = data[..start + 8 + 44].to_vec();
    put_u32(&mut bare, start + 4, 44);
    put_u32(&mut bare, start + 8 + 40, 0);
    let (d, counts) = decoded(&bare);
    let [Sample::Flow(f)] = &d.unwrap().samples[..] else { panic!() };
    assert_eq!((f.seq, f.packet, f.frame_length, f.src_vlan), (2, None, 0, -1));
    assert_eq!(rejects(&counts), vec![]);
    put_u32(&mut bare, start + 4, 40);
    let (_, counts) = decoded(&bare[..start + 8 + 40]);
    assert_eq!(rejects(&counts), vec![("truncated-sample", 1)]);
}

#[test]
fn a_record_shorter_than_its_format_is_a_bad_record() {
    // the extended_switch record (16 bytes) declared 12 long: bad-record
    let mut data = ROCE_WRITE.to_vec();
    let (start, end) = samples_of(&data)[0];
    let switch = end - 8 - 16;
    assert_eq!(&data[switch..switch + 4], &1001u32.to_be_bytes());
    put_u32(&mut data, switch + 4, 12);
    let (d, counts) = decoded(&data);
    assert!(d.unwrap().samples.is_empty());
    assert_eq!(rejects(&counts), vec![("bad-record", 1)]);
    // a sampled header whose header length runs past its record: bad-record as well
    let mut data = ROCE_WRITE.to_vec();
    put_u32(&mut data, start + 8 + 32 + 8 + 12, 129);
    assert_eq!(rejects(&decoded(&data).1), vec![("bad-record", 1)]);
}

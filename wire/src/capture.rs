//! UDP datagrams from captures, as `correlator/sflow/pcap.py` describes them: classic
//! libpcap (either byte order, micro- or nanosecond timestamps) and pcapng (sections in
//! either byte order, interfaces each with its link type, snap length and timestamp
//! resolution and offset, enhanced and simple packet blocks); links Ethernet (802.1Q /
//! QinQ tags), Linux cooked (SLL, SLL2) and raw IP.
//!
//! The file is read in large blocks; a datagram's payload is copied once, into the
//! caller's [`Udp`]. Packets that hold no whole UDP datagram are counted by [`Skip`]
//! reason, as the Python reader counted them.

use std::io::{self, Read};
use std::ops::Range;

const SECTION: u32 = 0x0A0D_0D0A;
const INTERFACE: u32 = 1;
const SIMPLE: u32 = 3;
const ENHANCED: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const TSRESOL: u16 = 9;
const TSOFFSET: u16 = 14;
const EN10MB: u32 = 1;
const RAW: u32 = 101;
const LINUX_SLL: u32 = 113;
const LINUX_SLL2: u32 = 276;
const IPV4: u16 = 0x0800;
const IPV6: u16 = 0x86DD;
const UDP: u8 = 17;
const IPV6_FRAGMENT: u8 = 44;
/// How much is read at a time: small enough to stay in a core's L2 cache until its
/// datagrams are decoded (4 MiB blocks cost a medium capture a fifth more CPU).
const BLOCK: usize = 1 << 18;

fn link_read(link: u32) -> bool {
    matches!(link, EN10MB | RAW | LINUX_SLL | LINUX_SLL2)
}

/// Why a packet gave no datagram (or the file ended inside a record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    NotIp,
    NotUdp,
    Fragment,
    Truncated,
    UnsupportedLink,
    CutShort,
}

impl Skip {
    pub const ALL: [Skip; 6] =
        [Skip::NotIp, Skip::NotUdp, Skip::Fragment, Skip::Truncated, Skip::UnsupportedLink, Skip::CutShort];

    pub fn name(self) -> &'static str {
        match self {
            Skip::NotIp => "not_ip",
            Skip::NotUdp => "not_udp",
            Skip::Fragment => "fragment",
            Skip::Truncated => "truncated",
            Skip::UnsupportedLink => "unsupported_link",
            Skip::CutShort => "cut_short",
        }
    }
}

/// A file that is no capture, or one of a link type not read.
#[derive(Debug)]
pub enum OpenError {
    Io(io::Error),
    Format(String),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> Self {
        OpenError::Io(e)
    }
}

/// One UDP datagram: when it was captured, its source address (4 or 16 packed bytes),
/// ports and payload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Udp {
    pub at: f64,
    pub source: Vec<u8>,
    pub sport: u16,
    pub dport: u16,
    pub payload: Vec<u8>,
}

/// The file, read in blocks as `stream.read(n)` reads it.
struct Blocks<R> {
    input: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl<R: Read> Blocks<R> {
    /// At least `n` bytes buffered from `pos`, unless the file ends first. Ranges given
    /// out stay valid until [`Blocks::release`].
    fn fill(&mut self, n: usize) -> io::Result<usize> {
        while self.buf.len() - self.pos < n && !self.eof {
            let have = self.buf.len();
            let want = BLOCK.max(n - (have - self.pos));
            self.buf.resize(have + want, 0);
            let got = read_fully(&mut self.input, &mut self.buf[have..])?;
            self.buf.truncate(have + got);
            self.eof = got < want;
        }
        Ok(self.buf.len() - self.pos)
    }

    /// Forgets what was read before `pos` once it is a block's worth: ranges given out
    /// before are stale from here.
    fn release(&mut self) {
        if self.pos >= BLOCK {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// Up to `n` bytes (fewer at the end of the file), as a range of `buf`.
    fn read(&mut self, n: usize) -> io::Result<Range<usize>> {
        let available = self.fill(n)?;
        let start = self.pos;
        self.pos += n.min(available);
        Ok(start..self.pos)
    }

    fn at_end(&mut self) -> io::Result<bool> {
        Ok(self.fill(1)? == 0)
    }
}

fn read_fully(input: &mut impl Read, mut buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while !buf.is_empty() {
        match input.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                buf = &mut buf[n..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[derive(Clone, Copy, Debug)]
struct Order(bool); // big-endian

impl Order {
    fn u16(self, b: &[u8], at: usize) -> u16 {
        let raw = [b[at], b[at + 1]];
        if self.0 {
            u16::from_be_bytes(raw)
        } else {
            u16::from_le_bytes(raw)
        }
    }

    fn u32(self, b: &[u8], at: usize) -> u32 {
        let raw = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.0 {
            u32::from_be_bytes(raw)
        } else {
            u32::from_le_bytes(raw)
        }
    }
}

/// What a pcapng interface description says about its packets.
#[derive(Clone, Copy, Debug)]
struct Interface {
    link: u32,
    snaplen: u32,
    /// Ticks per second: 10^r or 2^r (`None` beyond what fits 128 bits).
    ticks: Option<u128>,
    offset: i64,
}

impl Interface {
    fn new(body: &[u8], order: Order) -> Self {
        let (mut resolution, mut offset) = (6u8, 0i64);
        let options = &body[8..];
        let mut at = 0;
        while at + 4 <= options.len() {
            let (code, length) = (order.u16(options, at), usize::from(order.u16(options, at + 2)));
            if code == 0 {
                break;
            }
            let value = &options[(at + 4).min(options.len())..(at + 4 + length).min(options.len())];
            match code {
                TSRESOL => resolution = value.first().copied().unwrap_or(6),
                TSOFFSET => {
                    offset = match <[u8; 8]>::try_from(value) {
                        Ok(raw) if order.0 => i64::from_be_bytes(raw),
                        Ok(raw) => i64::from_le_bytes(raw),
                        Err(_) => 0,
                    }
                }
                _ => {}
            }
            at += 4 + length.div_ceil(4) * 4;
        }
        let ticks = if resolution & 0x80 != 0 {
            1u128.checked_shl(u32::from(resolution & 0x7F))
        } else {
            10u128.checked_pow(u32::from(resolution))
        };
        Interface { link: u32::from(order.u16(body, 0)), snaplen: order.u32(body, 4), ticks, offset }
    }

    /// Seconds of a timestamp of `stamp` ticks, as Python divides integers: correctly
    /// rounded, then the offset added.
    fn seconds(&self, stamp: u64) -> f64 {
        let quotient = match self.ticks {
            Some(ticks) => divide(stamp, ticks),
            None => 0.0,
        };
        quotient + self.offset as f64
    }
}

/// `n / d` correctly rounded to the nearest double (ties to even), as Python's `int / int`.
fn divide(n: u64, d: u128) -> f64 {
    const EXACT: u64 = 1 << 53;
    if n < EXACT && d < u128::from(EXACT) {
        return n as f64 / d as f64;
    }
    if n == 0 || d == 0 {
        return 0.0;
    }
    // n shifted to the top of 128 bits: below 2^64 ticks the quotient keeps 63 bits or
    // more, and a sticky bit stands for the remainder
    let shift = u128::from(n).leading_zeros();
    let scaled = u128::from(n) << shift;
    let (quotient, rest) = (scaled / d, scaled % d);
    let rounded = (quotient | u128::from(rest != 0)) as f64; // rounds to nearest, ties to even
    rounded / 2f64.powi(shift as i32)
}

enum Format {
    Pcap { order: Order, ticks: u32, link: u32 },
    Pcapng { order: Order, interfaces: Vec<Interface>, last: f64, block_type: Option<u32> },
}

/// A capture read record by record.
pub struct Capture<R> {
    blocks: Blocks<R>,
    format: Format,
    done: bool,
    skipped: [u64; Skip::ALL.len()],
}

impl<R: Read> Capture<R> {
    /// The capture in `input`, told apart by its first bytes.
    pub fn open(input: R) -> Result<Self, OpenError> {
        let mut blocks = Blocks { input, buf: Vec::new(), pos: 0, eof: false };
        let head = blocks.read(4)?;
        if head.len() < 4 {
            return Err(OpenError::Format("not a pcap or pcapng file (too short)".into()));
        }
        let magic = Order(false).u32(&blocks.buf, head.start);
        let mut capture = Capture {
            blocks,
            format: Format::Pcapng {
                order: Order(false),
                interfaces: Vec::new(),
                last: 0.0,
                block_type: Some(SECTION),
            },
            done: false,
            skipped: [0; Skip::ALL.len()],
        };
        let (order, ticks) = match magic {
            SECTION => return Ok(capture),
            0xA1B2_C3D4 => (Order(false), 1_000_000),
            0xD4C3_B2A1 => (Order(true), 1_000_000),
            0xA1B2_3C4D => (Order(false), 1_000_000_000),
            0x4D3C_B2A1 => (Order(true), 1_000_000_000),
            _ => return Err(OpenError::Format(format!("not a pcap or pcapng file (magic {magic:#010x})"))),
        };
        let head = capture.blocks.read(20)?;
        if head.len() < 20 {
            capture.skip(Skip::CutShort);
            capture.done = true;
            return Ok(capture);
        }
        let link = order.u32(&capture.blocks.buf, head.start + 16) & 0xFFFF;
        if !link_read(link) {
            return Err(OpenError::Format(format!("unsupported link type {link}")));
        }
        capture.format = Format::Pcap { order, ticks, link };
        Ok(capture)
    }

    /// How many packets were skipped for each reason so far.
    pub fn skipped(&self) -> impl Iterator<Item = (Skip, u64)> + '_ {
        Skip::ALL.into_iter().zip(self.skipped)
    }

    fn skip(&mut self, reason: Skip) {
        self.skipped[reason as usize] += 1;
    }

    /// The next UDP datagram into `out`; false at the end of the capture.
    pub fn next_udp(&mut self, out: &mut Udp) -> io::Result<bool> {
        while let Some((at, link, frame)) = self.next_frame()? {
            match udp(link, &self.blocks.buf[frame]) {
                Ok(found) => {
                    out.at = at;
                    out.source.clear();
                    out.source.extend_from_slice(found.source);
                    (out.sport, out.dport) = (found.sport, found.dport);
                    out.payload.clear();
                    out.payload.extend_from_slice(found.payload);
                    return Ok(true);
                }
                Err(reason) => self.skip(reason),
            }
        }
        Ok(false)
    }

    /// The next packet record: its time, link type and bytes (a range of the buffer).
    fn next_frame(&mut self) -> io::Result<Option<(f64, u32, Range<usize>)>> {
        if self.done {
            return Ok(None);
        }
        let found = match self.format {
            Format::Pcap { order, ticks, link } => self.pcap_record(order, ticks, link)?,
            Format::Pcapng { .. } => self.pcapng_block()?,
        };
        if found.is_none() {
            self.done = true;
        }
        Ok(found)
    }

    fn pcap_record(
        &mut self,
        order: Order,
        ticks: u32,
        link: u32,
    ) -> io::Result<Option<(f64, u32, Range<usize>)>> {
        self.blocks.release();
        let have = self.blocks.fill(16)?;
        if have >= 16 {
            let (buf, at) = (&self.blocks.buf, self.blocks.pos);
            let (seconds, fraction) = (order.u32(buf, at), order.u32(buf, at + 4));
            let captured = order.u32(buf, at + 8) as usize;
            if self.blocks.fill(16 + captured)? >= 16 + captured {
                let start = self.blocks.read(16)?.end;
                let data = start..self.blocks.read(captured)?.end;
                let time = f64::from(seconds) + f64::from(fraction) / f64::from(ticks);
                return Ok(Some((time, link, data)));
            }
        }
        if !self.blocks.at_end()? {
            self.skip(Skip::CutShort); // the capture ends inside a record
        }
        Ok(None)
    }

    fn pcapng_block(&mut self) -> io::Result<Option<(f64, u32, Range<usize>)>> {
        loop {
            self.blocks.release();
            let Format::Pcapng { order, block_type, .. } = &mut self.format else { return Ok(None) };
            let (mut order, block) = (*order, *block_type);
            let Some(block) = block else {
                let raw = self.blocks.read(4)?;
                if raw.is_empty() {
                    return Ok(None);
                }
                if raw.len() < 4 {
                    self.skip(Skip::CutShort);
                    return Ok(None);
                }
                let next = order.u32(&self.blocks.buf, raw.start);
                self.set_block_type(Some(next), None);
                continue;
            };
            let (length, body) = if block == SECTION {
                // the byte order is the section's: read it first
                let head = self.blocks.read(8)?;
                if head.len() < 8 {
                    self.skip(Skip::CutShort);
                    return Ok(None);
                }
                let buf = &self.blocks.buf;
                order = Order(Order(false).u32(buf, head.start + 4) != BYTE_ORDER_MAGIC);
                let length = order.u32(buf, head.start) as usize;
                // the body (the byte-order magic and what follows) is what came after
                // the length; keep it contiguous: read it right after the head
                let body = if length >= 16 {
                    let rest = self.blocks.read(length - 16)?;
                    head.start + 4..rest.end
                } else {
                    head.end..head.end
                };
                self.set_block_type(None, Some(order));
                (length, body)
            } else {
                let raw = self.blocks.read(4)?;
                if raw.len() < 4 {
                    self.skip(Skip::CutShort);
                    return Ok(None);
                }
                let length = order.u32(&self.blocks.buf, raw.start) as usize;
                let body = if length >= 12 { self.blocks.read(length - 12)? } else { raw.end..raw.end };
                (length, body)
            };
            let trailer = self.blocks.read(4)?;
            if length < 12 || body.len() < length - 12 || trailer.len() < 4 {
                self.skip(Skip::CutShort);
                return Ok(None);
            }
            self.set_block_type(None, None);
            if let Some(found) = self.packet(block, order, body) {
                return Ok(Some(found));
            }
        }
    }

    /// Records the next block type (None: read it) and a new section's byte order.
    fn set_block_type(&mut self, next: Option<u32>, section: Option<Order>) {
        if let Format::Pcapng { order, interfaces, block_type, .. } = &mut self.format {
            *block_type = next;
            if let Some(new) = section {
                *order = new;
                interfaces.clear();
            }
        }
    }

    /// The packet of one pcapng block whose body is `body`, if it holds one.
    fn packet(&mut self, block: u32, order: Order, body: Range<usize>) -> Option<(f64, u32, Range<usize>)> {
        let Format::Pcapng { interfaces, last, .. } = &mut self.format else { return None };
        let bytes = &self.blocks.buf[body.clone()];
        let (interface, data) = match block {
            INTERFACE if bytes.len() >= 8 => {
                interfaces.push(Interface::new(bytes, order));
                return None;
            }
            ENHANCED if bytes.len() >= 20 => {
                let index = order.u32(bytes, 0) as usize;
                let interface = *interfaces.get(index)?;
                let stamp = u64::from(order.u32(bytes, 4)) << 32 | u64::from(order.u32(bytes, 8));
                let captured = order.u32(bytes, 12) as usize;
                *last = interface.seconds(stamp);
                let start = body.start + 20;
                (interface, start..(start + captured).min(body.end))
            }
            SIMPLE if bytes.len() >= 4 && !interfaces.is_empty() => {
                // no timestamp: the previous packet's; captured is the rest, up to the snap length
                let interface = interfaces[0];
                let original = order.u32(bytes, 0);
                let wanted = if interface.snaplen == 0 { original } else { original.min(interface.snaplen) };
                let start = body.start + 4;
                (interface, start..(start + wanted as usize).min(body.end))
            }
            _ => return None,
        };
        let at = *last;
        if !link_read(interface.link) {
            self.skip(Skip::UnsupportedLink);
            return None;
        }
        Some((at, interface.link, data))
    }
}

/// A UDP datagram found in a frame, borrowing the frame.
struct Found<'a> {
    source: &'a [u8],
    sport: u16,
    dport: u16,
    payload: &'a [u8],
}

fn be16(data: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([data[at], data[at + 1]])
}

/// The UDP datagram in a frame of `link`, or why there is none.
fn udp(link: u32, data: &[u8]) -> Result<Found<'_>, Skip> {
    let (ethertype, mut offset) = network(link, data);
    let (source, end) = if ethertype == IPV4 && data.len() >= offset + 20 {
        let ihl = usize::from(data[offset] & 0x0F) * 4;
        let total = usize::from(be16(data, offset + 2));
        if be16(data, offset + 6) & 0x3FFF != 0 {
            return Err(Skip::Fragment); // more fragments, or an offset
        }
        if data[offset + 9] != UDP {
            return Err(Skip::NotUdp);
        }
        let found = (&data[offset + 12..offset + 16], offset + total);
        offset += ihl;
        found
    } else if ethertype == IPV6 && data.len() >= offset + 40 {
        let found = (&data[offset + 8..offset + 24], offset + 40 + usize::from(be16(data, offset + 4)));
        let mut after = data[offset + 6];
        offset += 40;
        while matches!(after, 0 | 43 | 60) && data.len() >= offset + 8 {
            (after, offset) = (data[offset], offset + (usize::from(data[offset + 1]) + 1) * 8);
        }
        if after == IPV6_FRAGMENT {
            return Err(Skip::Fragment);
        }
        if after != UDP {
            return Err(Skip::NotUdp);
        }
        found
    } else {
        return Err(Skip::NotIp);
    };
    if data.len() < offset + 8 {
        return Err(Skip::Truncated);
    }
    let (sport, dport, length) =
        (be16(data, offset), be16(data, offset + 2), usize::from(be16(data, offset + 4)));
    if length < 8 || offset + length > end.min(data.len()) {
        return Err(Skip::Truncated);
    }
    Ok(Found { source, sport, dport, payload: &data[offset + 8..offset + length] })
}

/// (ethertype, offset) of the network-layer packet; ethertype 0 when unknown.
fn network(link: u32, data: &[u8]) -> (u16, usize) {
    match link {
        RAW => match data.first().map(|b| b >> 4) {
            Some(4) => (IPV4, 0),
            Some(6) => (IPV6, 0),
            _ => (0, 0),
        },
        LINUX_SLL if data.len() >= 16 => (be16(data, 14), 16),
        LINUX_SLL2 if data.len() >= 20 => (be16(data, 0), 20),
        LINUX_SLL | LINUX_SLL2 => (0, 0),
        _ => {
            let mut offset = 12;
            while data.len() >= offset + 2 {
                let ethertype = be16(data, offset);
                if !matches!(ethertype, 0x8100 | 0x88A8 | 0x9100) {
                    return (ethertype, offset + 2);
                }
                offset += 4;
            }
            (0, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_rounds_as_python() {
        // Python: 1767229200123456789 / 10**9 == 1767229200.1234567
        assert_eq!(divide(1_767_229_200_123_456_789, 1_000_000_000), 1_767_229_200.123_456_7);
        assert_eq!(divide(3, 2), 1.5);
        assert_eq!(divide(u64::MAX, 1 << 32), 4_294_967_296.0);
    }

    #[test]
    fn a_pcap_record_gives_its_datagram() {
        let mut file = Vec::new();
        file.extend_from_slice(&0xA1B2_C3D4u32.to_le_bytes());
        file.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 101, 0, 0, 0]);
        let mut packet = vec![0x45, 0, 0, 31, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        packet.extend_from_slice(&[0x18, 0xC7, 0x18, 0xC7, 0, 11, 0, 0, b'a', b'b', b'c']);
        for word in [7u32, 500_000, packet.len() as u32, packet.len() as u32] {
            file.extend_from_slice(&word.to_le_bytes());
        }
        file.extend_from_slice(&packet);
        file.extend_from_slice(&[1, 2, 3]); // cut short
        let mut capture = Capture::open(&file[..]).map_err(|_| "open").unwrap();
        let mut udp = Udp::default();
        assert!(capture.next_udp(&mut udp).unwrap());
        assert_eq!(
            (udp.at, udp.source.as_slice(), udp.dport, udp.payload.as_slice()),
            (7.5, &[10, 0, 0, 1][..], 6343, &b"abc"[..])
        );
        assert!(!capture.next_udp(&mut udp).unwrap());
        assert_eq!(capture.skipped().find(|(s, _)| *s == Skip::CutShort), Some((Skip::CutShort, 1)));
    }
}

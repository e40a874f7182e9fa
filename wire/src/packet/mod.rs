//! Sampled headers (sFlow v5 sampled_header): what fabcorr uses of a copied packet.
//!
//! A header is cut anywhere by the switch: whatever is missing keeps its "absent" value,
//! never a guess. Every packet gets a [`Traffic`] class: RoCEv2 by BTH opcode, else by
//! IP protocol, else non-IP. Mirrors `correlator/sflow/packet.py`.

pub mod bth;
pub mod ethernet;
pub mod ip;

pub use bth::Traffic;

/// sFlow v5 header_protocol values fabcorr parses.
pub const HEADER_PROTOCOL_ETHERNET_ISO88023: u32 = 1;
pub const HEADER_PROTOCOL_IPV4: u32 = 11;
pub const HEADER_PROTOCOL_IPV6: u32 = 12;

/// An IPv4 or IPv6 address as packed bytes; `len` 0 for none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Addr {
    len: u8,
    bytes: [u8; 16],
}

impl std::hash::Hash for Addr {
    /// Two words and the length: a key of the hot path's tables (no length prefix).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let (head, tail) = self.bytes.split_at(8);
        state.write_u64(u64::from_le_bytes(head.try_into().unwrap_or_default()));
        state.write_u64(u64::from_le_bytes(tail.try_into().unwrap_or_default()) ^ u64::from(self.len));
    }
}

impl Addr {
    pub const NONE: Addr = Addr { len: 0, bytes: [0; 16] };

    /// The address in `b` (4 or 16 bytes; anything else is no address).
    pub fn from_slice(b: &[u8]) -> Addr {
        let mut bytes = [0u8; 16];
        match b.len() {
            4 | 16 => {
                bytes[..b.len()].copy_from_slice(b);
                Addr { len: b.len() as u8, bytes }
            }
            _ => Addr::NONE,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// The parts of a sampled header fabcorr uses (`records.Packet` in Python).
///
/// `ip_version` 0 for a non-IP frame (addresses then [`Addr::NONE`]); `opcode` -1
/// unless the packet is RoCEv2 (UDP 4791 with a whole BTH); `vlan` -1 when untagged
/// (the outer tag of a QinQ frame otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub traffic: Traffic,
    pub vlan: i32,
    pub ip_version: u8,
    pub src_ip: Addr,
    pub dst_ip: Addr,
    pub dscp: u8,
    pub ecn: u8,
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
    pub opcode: i16,
    pub dest_qp: u32,
    pub psn: u32,
    pub becn: bool,
}

impl Packet {
    /// A frame that is not IP, with its VLAN (-1 untagged).
    pub fn non_ip(vlan: i32) -> Packet {
        Packet::ip(Traffic::NonIp, vlan, 0, Addr::NONE, Addr::NONE, 0, 0)
    }

    /// An IP packet known down to its IP header (no transport ports, no BTH).
    pub fn ip(
        traffic: Traffic,
        vlan: i32,
        version: u8,
        src: Addr,
        dst: Addr,
        tos: u8,
        protocol: u8,
    ) -> Packet {
        Packet {
            traffic,
            vlan,
            ip_version: version,
            src_ip: src,
            dst_ip: dst,
            dscp: tos >> 2,
            ecn: tos & 3,
            protocol,
            src_port: 0,
            dst_port: 0,
            opcode: -1,
            dest_qp: 0,
            psn: 0,
            becn: false,
        }
    }
}

/// The packet of a sampled header of `protocol`, `None` for protocols not parsed
/// (802.11, MPLS, ...).
pub fn parse(protocol: u32, header: &[u8]) -> Option<Packet> {
    match protocol {
        HEADER_PROTOCOL_ETHERNET_ISO88023 => Some(ethernet::parse_ethernet(header)),
        HEADER_PROTOCOL_IPV4 => Some(ip::parse_ipv4(header, -1)),
        HEADER_PROTOCOL_IPV6 => Some(ip::parse_ipv6(header, -1)),
        _ => None,
    }
}

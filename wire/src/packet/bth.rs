//! The InfiniBand Base Transport Header of RoCEv2 (IBTA Vol. 1, Annex A17) and the
//! traffic classes of every packet.

use super::{Addr, Packet};
use crate::xdr::u32_at;

/// UDP destination port of RoCEv2.
pub const ROCE_V2_PORT: u16 = 4791;
/// Length of the BTH.
pub const BTH_LENGTH: usize = 12;
/// Congestion Notification Packet opcode.
pub const OPCODE_CNP: u8 = 0x81;
/// BECN bit of BTH byte 4.
const BECN: u8 = 0x40;

/// Traffic class of a sampled packet; [`Traffic::name`] is the Python label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Traffic {
    RoceSend,
    RoceWrite,
    RoceReadRequest,
    RoceReadResponse,
    RoceAck,
    RoceAtomic,
    RoceCnp,
    RoceOther,
    Udp,
    Tcp,
    Icmp,
    IpOther,
    NonIp,
    /// A flow sample without a sampled header (the accumulator's class).
    NoHeader,
}

impl Traffic {
    pub const ALL: [Traffic; 14] = [
        Traffic::RoceSend,
        Traffic::RoceWrite,
        Traffic::RoceReadRequest,
        Traffic::RoceReadResponse,
        Traffic::RoceAck,
        Traffic::RoceAtomic,
        Traffic::RoceCnp,
        Traffic::RoceOther,
        Traffic::Udp,
        Traffic::Tcp,
        Traffic::Icmp,
        Traffic::IpOther,
        Traffic::NonIp,
        Traffic::NoHeader,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Traffic::RoceSend => "roce-send",
            Traffic::RoceWrite => "roce-write",
            Traffic::RoceReadRequest => "roce-read-request",
            Traffic::RoceReadResponse => "roce-read-response",
            Traffic::RoceAck => "roce-ack",
            Traffic::RoceAtomic => "roce-atomic",
            Traffic::RoceCnp => "roce-cnp",
            Traffic::RoceOther => "roce-other",
            Traffic::Udp => "udp",
            Traffic::Tcp => "tcp",
            Traffic::Icmp => "icmp",
            Traffic::IpOther => "ip-other",
            Traffic::NonIp => "non-ip",
            Traffic::NoHeader => "no-header",
        }
    }

    /// The class of IP `protocol` when it carries no BTH.
    pub fn of_ip_protocol(protocol: u8) -> Traffic {
        match protocol {
            17 => Traffic::Udp,
            6 => Traffic::Tcp,
            1 | 58 => Traffic::Icmp,
            _ => Traffic::IpOther,
        }
    }

    /// The class of a BTH opcode: RC, UC, RD and UD share the low five bits; of the
    /// manufacturer range (0x80 up) only CNP has a class of its own.
    pub fn of_opcode(opcode: u8) -> Traffic {
        if opcode == OPCODE_CNP {
            return Traffic::RoceCnp;
        }
        if opcode >= 0x80 {
            return Traffic::RoceOther;
        }
        match opcode & 0x1F {
            0x00..=0x05 | 0x15 | 0x16 => Traffic::RoceSend,
            0x06..=0x0B => Traffic::RoceWrite,
            0x0C => Traffic::RoceReadRequest,
            0x0D..=0x10 => Traffic::RoceReadResponse,
            0x11 | 0x12 => Traffic::RoceAck,
            0x13 | 0x14 => Traffic::RoceAtomic,
            _ => Traffic::RoceOther,
        }
    }
}

/// The packet whose BTH is `bth` (at least [`BTH_LENGTH`] bytes; `None` otherwise).
#[allow(clippy::too_many_arguments)]
pub fn roce_packet(
    bth: &[u8],
    vlan: i32,
    ip_version: u8,
    src_ip: Addr,
    dst_ip: Addr,
    tos: u8,
    src_port: u16,
) -> Option<Packet> {
    let opcode = *bth.first()?;
    let flags = *bth.get(4)?;
    let dest_qp = u32_at(bth, 4)? & 0x00FF_FFFF;
    let psn = u32_at(bth, 8)? & 0x00FF_FFFF;
    Some(Packet {
        traffic: Traffic::of_opcode(opcode),
        vlan,
        ip_version,
        src_ip,
        dst_ip,
        dscp: tos >> 2,
        ecn: tos & 3,
        protocol: 17,
        src_port,
        dst_port: ROCE_V2_PORT,
        opcode: i16::from(opcode),
        dest_qp,
        psn,
        becn: flags & BECN != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_classes() {
        let cases = [
            (0x04, Traffic::RoceSend),
            (0x06, Traffic::RoceWrite),
            (0x0A, Traffic::RoceWrite),
            (0x0C, Traffic::RoceReadRequest),
            (0x10, Traffic::RoceReadResponse),
            (0x11, Traffic::RoceAck),
            (0x14, Traffic::RoceAtomic),
            (0x16, Traffic::RoceSend),
            (0x17, Traffic::RoceOther),
            (0x64, Traffic::RoceSend),
            (0x2A, Traffic::RoceWrite),
            (0x81, Traffic::RoceCnp),
            (0x80, Traffic::RoceOther),
        ];
        for (opcode, class) in cases {
            assert_eq!(Traffic::of_opcode(opcode), class, "opcode {opcode:#x}");
        }
    }

    #[test]
    fn a_bth_shorter_than_twelve_bytes_is_none() {
        let bth = [0x81, 0, 0xff, 0xff, 0x40, 0x12, 0x34, 0x56, 0, 0, 0, 9];
        let p = roce_packet(&bth, -1, 4, Addr::NONE, Addr::NONE, 0xC2, 1).unwrap();
        assert_eq!(
            (p.traffic, p.dest_qp, p.psn, p.becn, p.dscp, p.ecn),
            (Traffic::RoceCnp, 0x123456, 9, true, 48, 2)
        );
        assert_eq!(roce_packet(&bth[..11], -1, 4, Addr::NONE, Addr::NONE, 0, 1), None);
    }
}

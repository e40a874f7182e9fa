//! Ethernet II with 802.1Q / 802.1ad (QinQ) tags: the link layer of a sampled header.

use super::{ip, Packet};
use crate::xdr::u16_at;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_8021Q: u16 = 0x8100;
pub const ETHERTYPE_8021AD: u16 = 0x88A8;
/// The pre-standard QinQ outer tag some switches still send.
pub const ETHERTYPE_QINQ_LEGACY: u16 = 0x9100;
const MAC_HEADER: usize = 14;
const TAG: usize = 4;

fn is_tag(ethertype: u16) -> bool {
    matches!(ethertype, ETHERTYPE_8021Q | ETHERTYPE_8021AD | ETHERTYPE_QINQ_LEGACY)
}

/// The packet of an Ethernet frame's first bytes (header_protocol 1); the VLAN is the
/// outer tag's.
pub fn parse_ethernet(h: &[u8]) -> Packet {
    let Some(mut ethertype) = u16_at(h, 12) else {
        return Packet::non_ip(-1);
    };
    let mut at = MAC_HEADER;
    let mut vlan = -1;
    while is_tag(ethertype) {
        let (Some(tci), Some(inner)) = (u16_at(h, at), u16_at(h, at + 2)) else {
            break;
        };
        if vlan < 0 {
            vlan = i32::from(tci & 0x0FFF);
        }
        ethertype = inner;
        at += TAG;
    }
    let rest = h.get(at..).unwrap_or(&[]);
    match ethertype {
        ETHERTYPE_IPV4 => ip::parse_ipv4(rest, vlan),
        ETHERTYPE_IPV6 => ip::parse_ipv6(rest, vlan),
        _ => Packet::non_ip(vlan),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Traffic;

    fn udp_roce_v4(tags: &[u16]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        for (i, tpid) in tags.iter().enumerate() {
            f.extend_from_slice(&tpid.to_be_bytes());
            f.extend_from_slice(&(100 + i as u16).to_be_bytes()); // TCI: the VID
        }
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        // IPv4: 0x45, TOS 0xA2, len, id, flags 0x4000 (DF), ttl, UDP, csum, src, dst
        f.extend_from_slice(&[0x45, 0xA2, 0, 60, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0xC0, 0x00, 0x12, 0xB7, 0, 40, 0, 0]); // 49152 -> 4791
        f.extend_from_slice(&[0x0A, 0, 0xFF, 0xFF, 0, 0x01, 0x23, 0x45, 0x80, 0, 0, 77]);
        f
    }

    #[test]
    fn untagged_roce_write() {
        let p = parse_ethernet(&udp_roce_v4(&[]));
        assert_eq!((p.traffic, p.vlan, p.ip_version, p.dscp, p.ecn), (Traffic::RoceWrite, -1, 4, 40, 2));
        assert_eq!((p.src_ip.as_bytes(), p.dst_ip.as_bytes()), (&[10, 0, 0, 1][..], &[10, 0, 0, 2][..]));
        assert_eq!(
            (p.src_port, p.dst_port, p.opcode, p.dest_qp, p.psn, p.becn),
            (49152, 4791, 0x0A, 0x12345, 77, false)
        );
    }

    #[test]
    fn qinq_keeps_the_outer_tag() {
        let p = parse_ethernet(&udp_roce_v4(&[ETHERTYPE_8021AD, ETHERTYPE_8021Q]));
        assert_eq!((p.traffic, p.vlan, p.dest_qp), (Traffic::RoceWrite, 100, 0x12345));
    }

    #[test]
    fn every_truncation_degrades_without_guessing() {
        let f = udp_roce_v4(&[ETHERTYPE_8021Q]);
        let classes: Vec<Traffic> = (0..=f.len()).map(|n| parse_ethernet(&f[..n]).traffic).collect();
        // < 14 B: non-IP; tag and IP header cut: non-IP (VLAN kept); UDP ports cut:
        // udp; BTH cut: udp; whole: roce-write
        assert!(classes[..18 + 20].iter().all(|&c| c == Traffic::NonIp));
        assert!(classes[38..42 + 12 + 4].iter().all(|&c| c == Traffic::Udp));
        assert_eq!(classes[f.len()], Traffic::RoceWrite);
        assert_eq!(parse_ethernet(&f[..17]).vlan, -1); // the tag itself cut
        assert_eq!(parse_ethernet(&f[..18]).vlan, 100);
        let udp = parse_ethernet(&f[..42]);
        assert_eq!((udp.src_port, udp.dst_port, udp.opcode), (49152, 4791, -1));
    }
}

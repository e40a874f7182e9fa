//! IPv4 and IPv6 headers and the transport ports after them (UDP, TCP).

use super::{bth, Addr, Packet, Traffic};
use crate::xdr::u16_at;

pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;
const IPV4_HEADER: usize = 20;
const IPV6_HEADER: usize = 40;
const UDP_HEADER: usize = 8;

/// The packet of an IPv4 header in `h` (header_protocol 11, or after Ethernet).
pub fn parse_ipv4(h: &[u8], vlan: i32) -> Packet {
    let Some(ip) = h.get(..IPV4_HEADER).filter(|ip| ip[0] >> 4 == 4) else {
        return Packet::non_ip(vlan);
    };
    let (tos, protocol) = (ip[1], ip[9]);
    let (src, dst) = (Addr::from_slice(&ip[12..16]), Addr::from_slice(&ip[16..20]));
    if ip[6] & 0x1F != 0 || ip[7] != 0 {
        // a later fragment: no transport header
        return Packet::ip(Traffic::IpOther, vlan, 4, src, dst, tos, protocol);
    }
    let transport = usize::from(ip[0] & 0x0F) * 4;
    transport_packet(h.get(transport..).unwrap_or(&[]), vlan, 4, src, dst, tos, protocol)
}

/// The packet of an IPv6 header in `h` (header_protocol 12, or after Ethernet);
/// extension headers are not followed (RoCEv2 sends none).
pub fn parse_ipv6(h: &[u8], vlan: i32) -> Packet {
    let Some(ip) = h.get(..IPV6_HEADER).filter(|ip| ip[0] >> 4 == 6) else {
        return Packet::non_ip(vlan);
    };
    let tc = (ip[0] & 0x0F) << 4 | ip[1] >> 4;
    let (src, dst) = (Addr::from_slice(&ip[8..24]), Addr::from_slice(&ip[24..40]));
    transport_packet(&h[IPV6_HEADER..], vlan, 6, src, dst, tc, ip[6])
}

/// The packet whose transport header starts `t`: ports of UDP and TCP, the BTH of
/// UDP 4791 when all 12 bytes of it are there.
fn transport_packet(t: &[u8], vlan: i32, version: u8, src: Addr, dst: Addr, tos: u8, protocol: u8) -> Packet {
    let traffic = Traffic::of_ip_protocol(protocol);
    let ports = (u16_at(t, 0), u16_at(t, 2));
    let (Some(src_port), Some(dst_port)) = ports else {
        return Packet::ip(traffic, vlan, version, src, dst, tos, protocol);
    };
    if protocol != IPPROTO_TCP && protocol != IPPROTO_UDP {
        return Packet::ip(traffic, vlan, version, src, dst, tos, protocol);
    }
    if protocol == IPPROTO_UDP && dst_port == bth::ROCE_V2_PORT {
        let bth_bytes = t.get(UDP_HEADER..UDP_HEADER + bth::BTH_LENGTH).unwrap_or(&[]);
        if let Some(p) = bth::roce_packet(bth_bytes, vlan, version, src, dst, tos, src_port) {
            return p;
        }
    }
    Packet { src_port, dst_port, ..Packet::ip(traffic, vlan, version, src, dst, tos, protocol) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_udp_roce_cnp() {
        let mut h = vec![0x6C, 0x20, 0, 0, 0, 20, IPPROTO_UDP, 64]; // TC 0xC2: DSCP 48, ECT(0)
        h.extend((1..=16).collect::<Vec<u8>>());
        h.extend((17..=32).collect::<Vec<u8>>());
        h.extend_from_slice(&[0x12, 0x34, 0x12, 0xB7, 0, 20, 0, 0]);
        h.extend_from_slice(&[0x81, 0, 0xFF, 0xFF, 0x40, 0, 0, 5, 0, 0, 0, 0]);
        let p = parse_ipv6(&h, -1);
        assert_eq!(
            (p.traffic, p.ip_version, p.dscp, p.ecn, p.becn, p.dest_qp),
            (Traffic::RoceCnp, 6, 48, 2, true, 5)
        );
        assert_eq!(p.src_ip.as_bytes()[0], 1);
        assert_eq!(p.dst_ip.as_bytes()[15], 32);
        assert_eq!(parse_ipv6(&h[..39], 7), Packet::non_ip(7));
        let cut = parse_ipv6(&h[..59], -1);
        assert_eq!((cut.traffic, cut.src_port, cut.opcode), (Traffic::Udp, 0x1234, -1));
    }

    #[test]
    fn ipv4_fragment_tcp_icmp_and_short_ihl() {
        let mut h = vec![0x45, 0, 0, 40, 0, 0, 0, 1, 64, IPPROTO_TCP, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        h.extend_from_slice(&[0, 80, 0x1F, 0x90]);
        let frag = parse_ipv4(&h, -1);
        assert_eq!((frag.traffic, frag.src_port, frag.protocol), (Traffic::IpOther, 0, 6));
        h[7] = 0;
        let tcp = parse_ipv4(&h, 3);
        assert_eq!((tcp.traffic, tcp.src_port, tcp.dst_port, tcp.vlan), (Traffic::Tcp, 80, 8080, 3));
        h[9] = 1;
        assert_eq!(parse_ipv4(&h, -1).traffic, Traffic::Icmp);
        h[9] = 6;
        h[0] = 0x40; // IHL 0: ports read where the header says they start, as Python does
        let odd = parse_ipv4(&h, -1);
        assert_eq!((odd.src_port, odd.dst_port), (0x4000, 40));
        h[0] = 0x55;
        assert_eq!(parse_ipv4(&h, -1), Packet::non_ip(-1));
    }
}

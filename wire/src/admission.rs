//! Which datagrams are believed, as `correlator/sflow/admission.py`: those of known agents,
//! from one of their own addresses or a declared relay.
//!
//! The agent address is whatever the datagram says; the UDP source is what the kernel
//! saw. An IPv4-mapped IPv6 source (a dual-stack socket reports those) is its IPv4 address.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use crate::packet::Addr;

/// Why a datagram's agent is not believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// No known switch has this agent address.
    UnknownAgent,
    /// A known agent, from neither its own addresses nor a relay.
    SpoofedSource,
}

impl Refusal {
    pub const ALL: [Refusal; 2] = [Refusal::UnknownAgent, Refusal::SpoofedSource];

    pub fn name(self) -> &'static str {
        match self {
            Refusal::UnknownAgent => "unknown-agent",
            Refusal::SpoofedSource => "spoofed-source",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// An address or CIDR range that may send for any known agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relay {
    pub network: IpAddr,
    pub prefix: u8,
}

impl Relay {
    fn holds(&self, address: IpAddr) -> bool {
        match (self.network, address) {
            (IpAddr::V4(n), IpAddr::V4(a)) => prefix_match(&n.octets(), &a.octets(), self.prefix),
            (IpAddr::V6(n), IpAddr::V6(a)) => prefix_match(&n.octets(), &a.octets(), self.prefix),
            _ => false,
        }
    }
}

fn prefix_match(network: &[u8], address: &[u8], prefix: u8) -> bool {
    let bits = usize::from(prefix).min(network.len() * 8);
    let (whole, rest) = (bits / 8, bits % 8);
    if network.get(..whole) != address.get(..whole) {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xFFu8 << (8 - rest);
    match (network.get(whole), address.get(whole)) {
        (Some(n), Some(a)) => n & mask == a & mask,
        _ => false,
    }
}

/// The IPv4 address of an IPv4-mapped IPv6 one; any other as it is.
pub fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// Known agents, the sources each may send from, and the relays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Admission {
    agents: HashMap<Addr, HashSet<IpAddr>>,
    relays: Vec<Relay>,
}

impl Admission {
    /// `agents`: each agent address (packed) with the addresses it may send from.
    pub fn new(agents: impl IntoIterator<Item = (Addr, Vec<IpAddr>)>, relays: Vec<Relay>) -> Self {
        let mut known: HashMap<Addr, HashSet<IpAddr>> = HashMap::new();
        for (agent, sources) in agents {
            known.entry(agent).or_default().extend(sources.into_iter().map(canonical));
        }
        Admission { agents: known, relays }
    }

    pub fn len(&self) -> usize {
        self.agents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// Why a datagram of `agent` from UDP `source` (None: no address) is refused, or None.
    pub fn check(&self, agent: &Addr, source: Option<IpAddr>) -> Option<Refusal> {
        let Some(allowed) = self.agents.get(agent) else {
            return Some(Refusal::UnknownAgent);
        };
        let Some(source) = source.map(canonical) else {
            return Some(Refusal::SpoofedSource);
        };
        if allowed.contains(&source) || self.relays.iter().any(|r| r.holds(source)) {
            None
        } else {
            Some(Refusal::SpoofedSource)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    #[test]
    fn as_admission_py() {
        let relays = vec![Relay { network: ip("198.51.100.0"), prefix: 24 }];
        let a = Admission::new(
            [(Addr::from_slice(&[10, 0, 0, 11]), vec![ip("10.0.0.11"), ip("192.0.2.11")])],
            relays,
        );
        let agent = Addr::from_slice(&[10, 0, 0, 11]);
        let verdicts: Vec<_> =
            ["10.0.0.11", "::ffff:192.0.2.11", "198.51.100.9", "198.51.101.9", "127.0.0.2"]
                .into_iter()
                .map(|s| a.check(&agent, Some(ip(s))))
                .collect();
        assert_eq!(verdicts, [None, None, None, Some(Refusal::SpoofedSource), Some(Refusal::SpoofedSource)]);
        assert_eq!(a.check(&agent, None), Some(Refusal::SpoofedSource));
        assert_eq!(
            a.check(&Addr::from_slice(&[10, 0, 0, 12]), Some(ip("10.0.0.12"))),
            Some(Refusal::UnknownAgent)
        );
    }

    #[test]
    fn prefixes() {
        assert!(prefix_match(&[10, 1, 0, 0], &[10, 1, 200, 3], 16));
        assert!(prefix_match(&[10, 1, 0, 0], &[10, 1, 127, 3], 17));
        assert!(!prefix_match(&[10, 1, 0, 0], &[10, 1, 128, 3], 17));
        assert!(prefix_match(&[10, 1, 0, 0], &[99, 1, 128, 3], 0));
    }
}

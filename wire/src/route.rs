//! Where the inlet sends a datagram: the shard owning its agent, as the Python side
//! computed it (`correlator/inlet/`), once the header alone says the agent is a known
//! switch's sending from its own address ([`Admission`], the receive path's rule).
//!
//! Only the header is read ([`datagram::header`]): the datagram goes on unchanged.

use std::net::IpAddr;

use crate::admission::{Admission, Refusal};
use crate::datagram;
use crate::hash::FastMap;
use crate::packet::Addr;

/// Why a datagram is not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Not an sFlow v5 header (too short, another version, an unknown agent type).
    BadHeader,
    /// No known switch has this agent address.
    UnknownAgent,
    /// A known agent, not from one of its switch's addresses.
    SpoofedSource,
    /// The owning shard has no address (not resolved, or none given).
    Unresolved,
    /// The kernel refused to send it (the shard's port refused an earlier one, ...).
    SendError,
}

impl Cause {
    pub const ALL: [Cause; 5] =
        [Cause::BadHeader, Cause::UnknownAgent, Cause::SpoofedSource, Cause::Unresolved, Cause::SendError];

    pub fn name(self) -> &'static str {
        match self {
            Cause::BadHeader => "bad-header",
            Cause::UnknownAgent => "unknown-agent",
            Cause::SpoofedSource => "spoofed-source",
            Cause::Unresolved => "unresolved",
            Cause::SendError => "send-error",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// The known agents, the sources each may send from, and each agent's shard.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    admission: Admission,
    shards: FastMap<Addr, usize>,
}

impl Routes {
    /// `agents`: each agent (packed) with the addresses it may send from and its shard.
    pub fn new(agents: impl IntoIterator<Item = (Addr, Vec<IpAddr>, usize)>) -> Self {
        let mut shards = FastMap::default();
        let mut known = Vec::new();
        for (agent, sources, shard) in agents {
            shards.insert(agent, shard);
            known.push((agent, sources));
        }
        Routes { admission: Admission::new(known, Vec::new()), shards }
    }

    /// The shard of a datagram from UDP `source` and the samples it declares, or why it
    /// goes nowhere (any cause but [`Cause::Unresolved`] and [`Cause::SendError`], which
    /// are the sender's to find). A dropped datagram with a known agent names its shard.
    pub fn route(&self, data: &[u8], source: Option<IpAddr>) -> Result<(usize, u32), (Cause, Option<usize>)> {
        let header = datagram::header(data).map_err(|_| (Cause::BadHeader, None))?;
        let shard = self.shards.get(&header.agent).copied();
        match self.admission.check(&header.agent, source) {
            None => shard.map(|s| (s, header.samples)).ok_or((Cause::UnknownAgent, None)),
            Some(Refusal::UnknownAgent) => Err((Cause::UnknownAgent, None)),
            Some(Refusal::SpoofedSource) => Err((Cause::SpoofedSource, shard)),
        }
    }
}

/// What an inlet did since it started: per shard, datagrams and samples forwarded and
/// datagrams dropped by cause; drops no shard can be named for (a bad header, an unknown
/// agent) under `unrouted`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub forwarded: Vec<u64>,
    pub samples: Vec<u64>,
    pub dropped: Vec<[u64; Cause::ALL.len()]>,
    pub unrouted: [u64; Cause::ALL.len()],
}

impl Counts {
    /// Room for shards `0..count` (more are added as met).
    pub fn grow(&mut self, count: usize) {
        if self.forwarded.len() < count {
            self.forwarded.resize(count, 0);
            self.samples.resize(count, 0);
            self.dropped.resize(count, [0; Cause::ALL.len()]);
        }
    }

    pub fn forward(&mut self, shard: usize, samples: u32) {
        self.grow(shard + 1);
        self.forwarded[shard] += 1;
        self.samples[shard] += u64::from(samples);
    }

    pub fn drop(&mut self, cause: Cause, shard: Option<usize>) {
        match shard {
            Some(shard) => {
                self.grow(shard + 1);
                self.dropped[shard][cause.index()] += 1;
            }
            None => self.unrouted[cause.index()] += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(agent: [u8; 4], samples: u32) -> Vec<u8> {
        let mut data = Vec::new();
        for word in [5u32, 1] {
            data.extend(word.to_be_bytes());
        }
        data.extend(agent);
        for word in [0u32, 7, 1000, samples] {
            data.extend(word.to_be_bytes());
        }
        data
    }

    fn ip(text: &str) -> Option<IpAddr> {
        text.parse().ok()
    }

    #[test]
    fn routes_known_agents_from_their_own_addresses() {
        let leaf = Addr::from_slice(&[10, 0, 0, 1]);
        let spine = Addr::from_slice(&[10, 0, 0, 2]);
        let routes = Routes::new([
            (leaf, vec![IpAddr::from([10, 0, 0, 1]), IpAddr::from([192, 0, 2, 1])], 2),
            (spine, vec![IpAddr::from([10, 0, 0, 2])], 0),
        ]);
        assert_eq!(routes.route(&header([10, 0, 0, 1], 3), ip("10.0.0.1")), Ok((2, 3)));
        assert_eq!(routes.route(&header([10, 0, 0, 1], 3), ip("::ffff:192.0.2.1")), Ok((2, 3)));
        assert_eq!(routes.route(&header([10, 0, 0, 2], 9), ip("10.0.0.2")), Ok((0, 9)));
        assert_eq!(
            routes.route(&header([10, 0, 0, 1], 3), ip("10.0.0.2")),
            Err((Cause::SpoofedSource, Some(2)))
        );
        assert_eq!(routes.route(&header([10, 0, 0, 3], 1), ip("10.0.0.3")), Err((Cause::UnknownAgent, None)));
        assert_eq!(
            routes.route(&header([10, 0, 0, 1], 3)[..27], ip("10.0.0.1")),
            Err((Cause::BadHeader, None))
        );
        let mut v4 = header([10, 0, 0, 1], 3);
        v4[3] = 4;
        assert_eq!(routes.route(&v4, ip("10.0.0.1")), Err((Cause::BadHeader, None)));
    }

    #[test]
    fn counts_per_shard() {
        let mut counts = Counts::default();
        counts.grow(2);
        counts.forward(1, 4);
        counts.drop(Cause::SendError, Some(1));
        counts.forward(3, 1);
        counts.drop(Cause::SpoofedSource, Some(0));
        counts.drop(Cause::UnknownAgent, None);
        assert_eq!(counts.forwarded, [0, 1, 0, 1]);
        assert_eq!(counts.samples, [0, 4, 0, 1]);
        assert_eq!(counts.dropped[1][Cause::SendError.index()], 1);
        assert_eq!(counts.dropped[0][Cause::SpoofedSource.index()], 1);
        assert_eq!(counts.unrouted[Cause::UnknownAgent.index()], 1);
    }
}

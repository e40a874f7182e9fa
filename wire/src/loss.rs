//! The loss sFlow itself reveals, as `correlator/sflow/accounting.py` counts it.
//!
//! Datagram sequence numbers run per (agent, sub-agent): a gap is datagrams lost on the
//! way. A sequence that does not go on from where it was is a new one, a restart (not a
//! loss): uptime falling, the sequence going back, or a jump further ahead than the agent
//! can have sent in the uptime between the two datagrams. A jump further than
//! [`JUMP_SLACK`] that the uptime allows is a loss only once the next datagram goes on
//! from it. Several sources on one (agent, sub-agent) send interleaved sequences: each
//! is followed on its own (up to [`STREAMS_KEPT`]), the pair is named once, and datagrams
//! that switch between them are counted. Flow samples carry their data source's drop
//! counter: its increase is what the agent shed. Both tables are bounded ([`Lru`]).

use crate::datagram::{Datagram, Sample};
use crate::lru::Lru;
use crate::packet::Addr;

/// Sequence numbers are u32 and wrap.
const SEQUENCES: i64 = 1 << 32;
/// Datagrams a sequence may skip beyond what its uptime allows.
pub const JUMP_SLACK: i64 = 1024;
/// Datagrams per millisecond of uptime: more than any agent sends.
const PER_MS: i64 = 100;
/// Sequences followed per (agent, sub-agent).
pub const STREAMS_KEPT: usize = 4;
/// Default bound of (agent, sub-agent) pairs followed.
pub const MAX_AGENTS: usize = 16384;
/// Default bound of data sources whose drop counters are followed.
pub const MAX_SOURCES: usize = 262_144;

/// What loss accounting counted over some span.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loss {
    pub datagrams: u64,
    pub bytes: u64,
    pub lost_datagrams: u64,
    pub agent_restarts: u64,
    pub agent_drops: u64,
    pub interleaved: u64,
    /// (agent, sub-agent) pairs found interleaving, each named once ever.
    pub named: Vec<(Addr, u32)>,
}

/// One sequence: where it is, how many it had; `parent`, while it is unconfirmed, the id
/// of the sequence it jumped ahead of by `pending` datagrams.
#[derive(Clone, Debug)]
struct Sequence {
    id: u64,
    seq: i64,
    uptime: i64,
    datagrams: u64,
    parent: Option<u64>,
    pending: i64,
}

impl Sequence {
    /// How far `seq` is ahead, if it can go on this sequence at `uptime` (else 0).
    fn ahead(&self, seq: i64, uptime: i64) -> i64 {
        let elapsed = uptime - self.uptime;
        let ahead = (seq - self.seq).rem_euclid(SEQUENCES);
        if elapsed >= 0 && ahead <= JUMP_SLACK + elapsed * PER_MS {
            ahead
        } else {
            0
        }
    }
}

/// The sequences of one (agent, sub-agent), the latest last.
#[derive(Clone, Debug)]
struct Pair {
    streams: Vec<Sequence>,
    named: bool,
    ids: u64,
}

impl Pair {
    fn new(seq: i64, uptime: i64) -> Self {
        let first = Sequence { id: 0, seq, uptime, datagrams: 1, parent: None, pending: 0 };
        Pair { streams: vec![first], named: false, ids: 1 }
    }
}

/// Follows sequence numbers and drop counters across datagrams.
#[derive(Clone, Debug)]
pub struct LossTracker {
    pub loss: Loss,
    pairs: Lru<(Addr, u32), Pair>,
    drops: Lru<(Addr, u32, u32), u32>,
}

impl LossTracker {
    /// At most `max_agents` (agent, sub-agent) pairs and `max_sources` data sources.
    pub fn new(max_agents: usize, max_sources: usize) -> Self {
        LossTracker { loss: Loss::default(), pairs: Lru::new(max_agents), drops: Lru::new(max_sources) }
    }

    /// Accounts one decoded datagram of `size` bytes.
    pub fn observe(&mut self, datagram: &Datagram, size: usize) {
        self.loss.datagrams += 1;
        self.loss.bytes += size as u64;
        let key = (datagram.agent, datagram.sub_agent);
        let (seq, uptime) = (i64::from(datagram.seq), i64::from(datagram.uptime_ms));
        match self.pairs.get_mut(&key) {
            None => self.pairs.put(key, Pair::new(seq, uptime)),
            Some(pair) => match pair.streams.last_mut() {
                Some(last) if seq - last.seq == 1 && uptime >= last.uptime && last.parent.is_none() => {
                    (last.seq, last.uptime) = (seq, uptime); // the common case: the next one
                    last.datagrams += 1;
                }
                _ => Self::follow(&mut self.loss, key, pair, seq, uptime),
            },
        }
        for sample in &datagram.samples {
            let Sample::Flow(flow) = sample else { continue };
            // only sources that ever dropped are followed: the common case costs one test
            if flow.drops == 0 && self.drops.is_empty() {
                continue;
            }
            let source = (datagram.agent, flow.source_type, flow.source_index);
            let before = self.drops.pop(&source);
            if let Some(before) = before {
                if flow.drops > before {
                    self.loss.agent_drops += u64::from(flow.drops - before);
                }
            }
            if flow.drops != 0 || before.is_some() {
                self.drops.put(source, flow.drops);
            }
        }
    }

    /// A datagram that is not simply the next of the latest sequence: it goes on with the
    /// sequence it is least ahead of (a loss; another source's sequence when that is not
    /// the latest), or jumps far ahead of it (unconfirmed), or starts a new one (a restart).
    fn follow(loss: &mut Loss, key: (Addr, u32), pair: &mut Pair, seq: i64, uptime: i64) {
        let mut best: Option<(usize, i64)> = None;
        for (i, stream) in pair.streams.iter().enumerate() {
            let ahead = stream.ahead(seq, uptime);
            if ahead != 0 && best.is_none_or(|(_, gap)| ahead < gap) {
                best = Some((i, ahead));
            }
        }
        let (index, gap) = match best {
            Some((index, gap)) if gap <= JUMP_SLACK => (index, gap),
            _ => {
                let (parent, pending) = match best {
                    None => {
                        loss.agent_restarts += 1;
                        (None, 0)
                    }
                    Some((index, gap)) => (Some(pair.streams[index].id), gap - 1),
                };
                let id = pair.ids;
                pair.ids += 1;
                pair.streams.push(Sequence { id, seq, uptime, datagrams: 1, parent, pending });
                if pair.streams.len() > STREAMS_KEPT {
                    pair.streams.remove(0);
                }
                return;
            }
        };
        loss.lost_datagrams += (gap - 1) as u64;
        let latest = pair.streams.len() - 1;
        if index != latest {
            if pair.streams[index].datagrams > 1 && pair.streams[latest].datagrams > 1 {
                // not one stray datagram
                loss.interleaved += 1;
                if !pair.named {
                    pair.named = true;
                    loss.named.push(key);
                }
            }
            let moved = pair.streams.remove(index);
            pair.streams.push(moved);
        }
        let best_id = pair.streams[latest].id;
        for other in pair.streams.iter_mut() {
            // what jumped ahead of this sequence was not its future
            if other.parent == Some(best_id) {
                (other.parent, other.pending) = (None, 0);
            }
        }
        let (parent, pending) = (pair.streams[latest].parent, pair.streams[latest].pending);
        if let Some(parent) = parent {
            // the jump to here is confirmed: a loss
            loss.lost_datagrams += pending as u64;
            pair.streams.retain(|s| s.id != parent);
        }
        if let Some(best) = pair.streams.last_mut() {
            (best.parent, best.pending) = (None, 0);
            (best.seq, best.uptime) = (seq, uptime);
            best.datagrams += 1;
        }
    }

    /// What was counted so far, and the evictions of the (sequences, sources) tables;
    /// counting starts over (sequence state is kept).
    pub fn take(&mut self) -> (Loss, u64, u64) {
        (std::mem::take(&mut self.loss), self.pairs.take_evictions(), self.drops.take_evictions())
    }

    /// Entries in the (sequences, sources) tables.
    pub fn sizes(&self) -> (usize, usize) {
        (self.pairs.len(), self.drops.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn follow(tracker: &mut LossTracker, datagrams: &[(u32, u32)]) -> (u64, u64, u64, u64) {
        for &(seq, uptime_ms) in datagrams {
            let d =
                Datagram { agent: Addr::from_slice(&[127, 0, 0, 1]), seq, uptime_ms, ..Datagram::default() };
            tracker.observe(&d, 64);
        }
        let l = &tracker.loss;
        (l.datagrams, l.lost_datagrams, l.agent_restarts, l.interleaved)
    }

    #[test]
    fn as_the_doctest_of_accounting_py() {
        let mut t = LossTracker::new(MAX_AGENTS, MAX_SOURCES);
        let seen = follow(&mut t, &[(1, 100), (2, 200), (5, 500), (1, 10), (2, 20), (1 << 30, 30)]);
        assert_eq!(seen, (6, 2, 2, 0));
    }

    #[test]
    fn a_long_outage_is_a_loss_once_the_sequence_goes_on() {
        let mut t = LossTracker::new(MAX_AGENTS, MAX_SOURCES);
        assert_eq!(follow(&mut t, &[(1, 1000), (2, 2000), (100_002, 1_002_000)]), (3, 0, 0, 0));
        assert_eq!(follow(&mut t, &[(100_003, 1_003_000), (100_005, 1_005_000)]), (5, 100_000, 0, 0));
    }

    #[test]
    fn wrap_and_restart() {
        let mut t = LossTracker::new(MAX_AGENTS, MAX_SOURCES);
        let seen = follow(&mut t, &[(u32::MAX - 1, 5000), (1, 6000), (2, 7000), (1, 10), (2, 20)]);
        assert_eq!(seen, (5, 2, 1, 0));
    }
}

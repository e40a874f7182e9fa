//! When an sFlow agent sent a datagram, in wall time: the agent's uptime, carried in every
//! datagram, moved by what each agent's clock is learnt to be off by
//! (`correlator/sflow/clock.py` tells the method).
//!
//! Each datagram gives one guess of the offset (wall time - uptime): its arrival minus its
//! uptime, late by however long it travelled and waited. The least of an agent's recent
//! guesses is the one least delayed; an agent restart (uptime going back) starts anew.

use std::collections::VecDeque;

use crate::hash::FastMap;
use crate::packet::Addr;

/// How many recent guesses of an agent's offset are kept.
pub const KEPT: usize = 8;

/// Per (agent, sub-agent): its last uptime and its recent guesses, oldest first.
#[derive(Clone, Debug)]
pub struct AgentClocks {
    kept: usize,
    agents: FastMap<(Addr, u32), (u32, VecDeque<f64>)>,
}

/// The least of `guesses` as Python's `min` finds it: the first unless a later one is less.
fn least(guesses: &VecDeque<f64>) -> f64 {
    guesses.iter().skip(1).fold(guesses[0], |found, &g| if g < found { g } else { found })
}

impl AgentClocks {
    /// Clocks that keep `kept` guesses per agent (at least one).
    pub fn new(kept: usize) -> Self {
        AgentClocks { kept: kept.max(1), agents: FastMap::default() }
    }

    /// The wall time of `uptime_ms` on the agent, given a datagram of it that arrived at
    /// `arrival` (an agent's datagrams in the order they arrived; several samples of one
    /// datagram make one guess).
    pub fn date(&mut self, agent: Addr, sub_agent: u32, arrival: f64, uptime_ms: u32) -> f64 {
        let uptime = f64::from(uptime_ms) / 1000.0;
        let kept = self.kept;
        let (last, guesses) = self
            .agents
            .entry((agent, sub_agent))
            .or_insert_with(|| (uptime_ms, VecDeque::with_capacity(kept)));
        if guesses.is_empty() || uptime_ms != *last {
            if uptime_ms < *last {
                guesses.clear();
            }
            if guesses.len() == kept {
                guesses.pop_front();
            }
            guesses.push_back(arrival - uptime);
            *last = uptime_ms;
        }
        uptime + least(guesses)
    }
}

impl Default for AgentClocks {
    fn default() -> Self {
        AgentClocks::new(KEPT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(last: u8) -> Addr {
        Addr::from_slice(&[192, 0, 2, last])
    }

    #[test]
    fn the_least_delayed_recent_guess_dates_a_datagram() {
        let mut clocks = AgentClocks::default();
        let dated: Vec<f64> =
            [(100.30, 5000), (101.25, 6000), (102.90, 7000), (102.95, 7000), (103.00, 1000)]
                .iter()
                .map(|&(arrival, uptime)| clocks.date(agent(1), 0, arrival, uptime))
                .map(|t| (t * 1000.0).round() / 1000.0)
                .collect();
        // held up 0.65 s: dated by 95.25; the same uptime again: the same guess; a
        // restart: learnt anew
        assert_eq!(dated, [100.3, 101.25, 102.25, 102.25, 103.0]);
    }

    #[test]
    fn only_the_kept_guesses_count() {
        let mut clocks = AgentClocks::new(3);
        clocks.date(agent(1), 0, 50.0, 10_000); // offset 40.0
        clocks.date(agent(1), 0, 51.5, 11_000); // 40.5
        assert_eq!(clocks.date(agent(1), 0, 52.5, 12_000), 52.0); // 40.0 still kept
        assert_eq!(clocks.date(agent(1), 0, 53.5, 13_000), 53.5); // pushed out
        assert_eq!(clocks.date(agent(2), 0, 9.0, 1_000), 9.0); // its own clock
        assert_eq!(clocks.date(agent(1), 1, 9.0, 1_000), 9.0); // so is a sub-agent's
    }
}

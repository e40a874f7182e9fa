//! The join of an interval's flow table to the fabric: each row's port from its (agent,
//! ifIndex), its source and destination addresses to the pod interfaces that owned them
//! at the segment's start, summed per link direction by sender tenant, job and pod, by
//! (sender job, receiver job), by the job a CNP throttles (its receiver) and by traffic
//! class, as `correlator/attribution/attribute.py` apportions them.
//!
//! The [`Index`] is built once per fabric (or ownership change) from integer ids the
//! caller chose: ports, owners (pod, job, tenant) and the claims on each address (from,
//! until, owner), oldest first. Owner 0 is nobody: an address no pod interface owned.
//! Sums are exact integers; the variance saturates at `u128::MAX` (reached only by
//! frame lengths and rates no switch sends).

use crate::accumulate::Direction;
use crate::hash::FastMap;
use crate::packet::{Addr, Traffic};

/// The owner of an address nobody owned.
pub const NOBODY: u32 = 0;

/// One pod interface's claim on an address over `[from, until)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Claim {
    pub from: f64,
    pub until: f64,
    pub owner: u32,
}

/// Ports by (agent, ifIndex), owners' (pod, job, tenant), claims by address, and the
/// rank of each pod and job id in the order of their names.
#[derive(Clone, Debug, Default)]
pub struct Index {
    ports: FastMap<(Addr, u32), u32>,
    owners: Vec<[u32; 3]>,
    claims: FastMap<Addr, Vec<Claim>>,
    pub pod_ranks: Vec<u32>,
    pub job_ranks: Vec<u32>,
    pub tenant_ranks: Vec<u32>,
}

impl Index {
    /// `owners[0]` is nobody's (pod, job, tenant); `claims` of one address oldest first
    /// (when claims overlap, the latest that covers a moment wins, as in Python).
    pub fn new(
        ports: impl IntoIterator<Item = (Addr, u32, u32)>,
        owners: Vec<[u32; 3]>,
        claims: impl IntoIterator<Item = (Addr, Claim)>,
    ) -> Result<Self, String> {
        if owners.is_empty() {
            return Err("owner 0 (nobody) is missing".into());
        }
        let mut by_address: FastMap<Addr, Vec<Claim>> = FastMap::default();
        for (address, claim) in claims {
            if claim.owner as usize >= owners.len() {
                return Err(format!("claim of an unknown owner {}", claim.owner));
            }
            by_address.entry(address).or_default().push(claim);
        }
        let ports = ports.into_iter().map(|(agent, ifindex, port)| ((agent, ifindex), port)).collect();
        Ok(Index { ports, owners, claims: by_address, ..Index::default() })
    }

    /// The same index, pods, jobs and tenants ranked by name: `pod_ranks[id]` is pod
    /// `id`'s place in the sorted names (likewise jobs, tenants); every id of an owner
    /// must have one.
    pub fn ranked(
        mut self,
        pod_ranks: Vec<u32>,
        job_ranks: Vec<u32>,
        tenant_ranks: Vec<u32>,
    ) -> Result<Self, String> {
        for [pod, job, tenant] in &self.owners {
            if *pod as usize >= pod_ranks.len()
                || *job as usize >= job_ranks.len()
                || *tenant as usize >= tenant_ranks.len()
            {
                return Err(format!("pod {pod}, job {job} or tenant {tenant} has no rank"));
            }
        }
        self.pod_ranks = pod_ranks;
        self.job_ranks = job_ranks;
        self.tenant_ranks = tenant_ranks;
        Ok(self)
    }

    /// Who owned `address` at `at` ([`NOBODY`] when no claim covers it).
    pub fn owner(&self, address: &Addr, at: f64) -> u32 {
        self.claims
            .get(address)
            .and_then(|claims| claims.iter().rev().find(|c| c.from <= at && at < c.until))
            .map_or(NOBODY, |c| c.owner)
    }

    pub fn port(&self, agent: &Addr, ifindex: u32) -> Option<u32> {
        self.ports.get(&(*agent, ifindex)).copied()
    }
}

/// Samples, estimated bytes and packets, and the estimate's variance of one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    pub samples: u64,
    pub bytes: u128,
    pub packets: u128,
    pub variance: u128,
}

impl Sums {
    /// The sums of one flow-table row: `samples` at `rate`, frame lengths summing to
    /// `length`, their squares to `squares`.
    pub fn of_row(samples: u64, length: u64, squares: u128, rate: u32) -> Self {
        let rate = u128::from(rate);
        Sums {
            samples,
            bytes: u128::from(length) * rate,
            packets: u128::from(samples) * rate,
            variance: squares.saturating_mul(rate * rate),
        }
    }

    fn add(&mut self, other: &Sums) {
        self.samples += other.samples;
        self.bytes += other.bytes;
        self.packets += other.packets;
        self.variance = self.variance.saturating_add(other.variance);
    }
}

/// A table of groups ranked and cut: the `top` largest by estimated bytes (ties by name
/// rank), the sums of the rest (`None` when nothing was cut), and the sums of them all.
#[derive(Clone, Debug, PartialEq)]
pub struct Cut<K> {
    pub top: Vec<(K, Sums)>,
    pub other: Option<Sums>,
    pub total: Sums,
}

/// `table` ranked largest first (ties by `rank` of the key, then the key) and cut to
/// `top`, as `correlator/attribution/estimate.py` ranks shares.
pub fn cut<K: Copy + Ord, R: Ord>(table: &FastMap<K, Sums>, top: usize, rank: impl Fn(K) -> R) -> Cut<K> {
    let mut total = Sums::default();
    let mut ranked: Vec<(K, Sums)> = table.iter().map(|(k, s)| (*k, *s)).collect();
    for (_, s) in &ranked {
        total.add(s);
    }
    let order = |a: &(K, Sums), b: &(K, Sums)| {
        b.1.bytes.cmp(&a.1.bytes).then_with(|| rank(a.0).cmp(&rank(b.0))).then_with(|| a.0.cmp(&b.0))
    };
    let other = if ranked.len() > top {
        if top > 0 {
            ranked.select_nth_unstable_by(top - 1, order);
        }
        let mut rest = Sums::default();
        for (_, s) in &ranked[top..] {
            rest.add(s);
        }
        ranked.truncate(top);
        Some(rest)
    } else {
        None
    };
    ranked.sort_unstable_by(order);
    Cut { top: ranked, other, total }
}

/// One link direction's sums, the groups keyed by owner parts (pod, job, tenant ids).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Group {
    pub total: Sums,
    pub tenants: FastMap<u32, Sums>,
    pub jobs: FastMap<u32, Sums>,
    pub pods: FastMap<u32, Sums>,
    pub pairs: FastMap<(u32, u32), Sums>,
    pub throttled: FastMap<u32, Sums>,
    pub traffic: [u64; Traffic::ALL.len()],
}

impl Group {
    fn add(&mut self, sums: &Sums, sender: [u32; 3], receiver: [u32; 3], traffic: Traffic) {
        let [pod, job, tenant] = sender;
        self.total.add(sums);
        self.tenants.entry(tenant).or_default().add(sums);
        self.jobs.entry(job).or_default().add(sums);
        self.pods.entry(pod).or_default().add(sums);
        self.pairs.entry((job, receiver[1])).or_default().add(sums);
        if traffic == Traffic::RoceCnp {
            self.throttled.entry(receiver[1]).or_default().add(sums);
        }
        self.traffic[traffic as usize] += sums.samples;
    }
}

/// One flow-table row: its agent and addresses as indexes into its segment's tables.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub agent: u32,
    pub ifindex: u32,
    pub direction: Direction,
    pub src: u32,
    pub dst: u32,
    pub traffic: Traffic,
    pub sums: Sums,
}

/// What one interval's rows add up to: per (port, direction) group, the samples of ports
/// the index does not know per (agent, ifIndex), and the samples nobody sent.
#[derive(Clone, Debug, Default)]
pub struct Joined {
    pub groups: Vec<((u32, Direction), Group)>,
    slots: FastMap<(u32, Direction), usize>,
    pub unknown: FastMap<(Addr, u32), u64>,
    pub unattributed: u64,
}

impl Joined {
    /// Add the rows of a segment that started at `at`, whose agents and addresses are
    /// `agents` and `addresses` (each address resolved once); a row naming an index
    /// beyond them is an error.
    pub fn add(
        &mut self,
        index: &Index,
        at: f64,
        agents: &[Addr],
        addresses: &[Addr],
        rows: impl IntoIterator<Item = Row>,
    ) -> Result<(), String> {
        let owners: Vec<u32> =
            addresses.iter().map(|a| if *a == Addr::NONE { NOBODY } else { index.owner(a, at) }).collect();
        let mut rows: Vec<Row> = rows.into_iter().collect();
        // a port's rows together: its group's tables stay in the cache, found once
        rows.sort_unstable_by_key(|row| (row.agent, row.ifindex, row.direction));
        let mut last: Option<((u32, u32, Direction), Option<usize>)> = None;
        for row in rows {
            let (Some(&sender), Some(&receiver), Some(agent)) =
                (owners.get(row.src as usize), owners.get(row.dst as usize), agents.get(row.agent as usize))
            else {
                return Err(format!(
                    "a row names agent {} or address {} / {} beyond its tables",
                    row.agent, row.src, row.dst
                ));
            };
            let key = (row.agent, row.ifindex, row.direction);
            let slot = match last {
                Some((previous, slot)) if previous == key => slot,
                _ => {
                    let slot = index.port(agent, row.ifindex).map(|port| self.slot(port, row.direction));
                    last = Some((key, slot));
                    slot
                }
            };
            let Some(slot) = slot else {
                *self.unknown.entry((*agent, row.ifindex)).or_default() += row.sums.samples;
                continue;
            };
            if sender == NOBODY {
                self.unattributed += row.sums.samples;
            }
            let (sender, receiver) = (index.owners[sender as usize], index.owners[receiver as usize]);
            self.groups[slot].1.add(&row.sums, sender, receiver, row.traffic);
        }
        Ok(())
    }

    fn slot(&mut self, port: u32, direction: Direction) -> usize {
        let groups = &mut self.groups;
        *self.slots.entry((port, direction)).or_insert_with(|| {
            groups.push(((port, direction), Group::default()));
            groups.len() - 1
        })
    }

    /// The group of `port` and `direction`, if it had samples.
    pub fn group(&self, port: u32, direction: Direction) -> Option<&Group> {
        self.slots.get(&(port, direction)).map(|slot| &self.groups[*slot].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(last: u8) -> Addr {
        Addr::from_slice(&[10, 0, 0, last])
    }

    fn index() -> Index {
        // owners: 0 nobody, 1 pod a (job 1, tenant 1), 2 pod b (job 2, tenant 1)
        let owners = vec![[0, 0, 0], [1, 1, 1], [2, 2, 1]];
        let claims = [
            (v4(1), Claim { from: 0.0, until: 100.0, owner: 1 }),
            (v4(1), Claim { from: 100.0, until: f64::INFINITY, owner: 2 }),
            (v4(2), Claim { from: 0.0, until: f64::INFINITY, owner: 2 }),
        ];
        Index::new([(v4(254), 7, 3)], owners, claims).unwrap()
    }

    /// Addresses: 0 none, 1 10.0.0.1, 2 10.0.0.2, 3 10.0.0.9; agent 1 10.0.0.254.
    fn row(src: u32, traffic: Traffic, ifindex: u32) -> Row {
        Row {
            agent: 1,
            ifindex,
            direction: Direction::In,
            src,
            dst: 2,
            traffic,
            sums: Sums::of_row(2, 3000, 4_500_000, 10),
        }
    }

    #[test]
    fn owners_by_time_and_the_latest_claim() {
        let index = index();
        assert_eq!(index.owner(&v4(1), 99.9), 1);
        assert_eq!(index.owner(&v4(1), 100.0), 2);
        assert_eq!(index.owner(&v4(9), 5.0), NOBODY);
    }

    #[test]
    fn rows_summed_per_port_by_sender_and_pair() {
        let index = index();
        let (agents, addresses) = ([Addr::NONE, v4(254)], [Addr::NONE, v4(1), v4(2), v4(9)]);
        let mut joined = Joined::default();
        let first = [row(1, Traffic::RoceWrite, 7), row(3, Traffic::RoceCnp, 7)];
        joined.add(&index, 50.0, &agents, &addresses, first).unwrap();
        let second = [row(1, Traffic::RoceWrite, 7), row(1, Traffic::RoceWrite, 8)];
        joined.add(&index, 150.0, &agents, &addresses, second).unwrap();
        assert!(joined.add(&index, 150.0, &agents, &addresses, [row(4, Traffic::RoceWrite, 7)]).is_err());
        let one = Sums { samples: 2, bytes: 30_000, packets: 20, variance: 450_000_000 };
        let two = Sums { samples: 4, bytes: 60_000, packets: 40, variance: 900_000_000 };
        let group = joined.group(3, Direction::In).unwrap();
        assert_eq!(group.total.samples, 6);
        assert_eq!(group.pods, FastMap::from_iter([(1, one), (0, one), (2, one)]));
        assert_eq!(group.tenants, FastMap::from_iter([(1, two), (0, one)]));
        assert_eq!(group.pairs, FastMap::from_iter([((1, 2), one), ((0, 2), one), ((2, 2), one)]));
        assert_eq!(group.throttled, FastMap::from_iter([(2, one)]));
        assert_eq!(group.traffic[Traffic::RoceWrite as usize], 4);
        assert_eq!(joined.unattributed, 2);
        assert_eq!(joined.unknown, FastMap::from_iter([((v4(254), 8), 2)]));
    }

    #[test]
    fn cut_to_the_top_largest_then_by_rank() {
        let sums = |bytes| Sums { samples: 1, bytes, packets: 1, variance: 1 };
        let table = FastMap::from_iter([(1, sums(5)), (2, sums(9)), (3, sums(5)), (4, sums(1))]);
        let found = cut(&table, 2, |k: u32| 10 - k); // 3 ranks before 1
        assert_eq!(found.top, vec![(2, sums(9)), (3, sums(5))]);
        assert_eq!(found.other, Some(Sums { samples: 2, bytes: 6, packets: 2, variance: 2 }));
        assert_eq!(found.total.bytes, 20);
        let all = cut(&table, 4, |k: u32| k);
        assert_eq!(all.top.iter().map(|(k, _)| *k).collect::<Vec<_>>(), vec![2, 1, 3, 4]);
        assert_eq!(all.other, None);
    }

    #[test]
    fn the_variance_saturates() {
        let sums = Sums::of_row(1, u64::MAX, u128::MAX / 2, u32::MAX);
        assert_eq!(sums.variance, u128::MAX);
    }
}

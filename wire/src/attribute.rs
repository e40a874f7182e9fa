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
        ranked.shrink_to_fit(); // a link's tables live on with the interval: not its groups' room
        Some(rest)
    } else {
        None
    };
    ranked.sort_unstable_by(order);
    Cut { top: ranked, other, total }
}

/// One link direction's sums while it is joined, the groups keyed by owner parts (pod,
/// job, tenant ids).
#[derive(Clone, Debug, Default, PartialEq)]
struct Group {
    total: Sums,
    tenants: FastMap<u32, Sums>,
    jobs: FastMap<u32, Sums>,
    pods: FastMap<u32, Sums>,
    pairs: FastMap<(u32, u32), Sums>,
    throttled: FastMap<u32, Sums>,
    traffic: [u64; Traffic::ALL.len()],
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

    /// Empty again, its tables' room kept for the next link direction.
    fn clear(&mut self) {
        self.total = Sums::default();
        self.tenants.clear();
        self.jobs.clear();
        self.pods.clear();
        self.pairs.clear();
        self.throttled.clear();
        self.traffic = [0; Traffic::ALL.len()];
    }
}

/// A link direction's tables, ranked (ties by name rank) and cut: tenants and jobs
/// whole, pods, (sender job, receiver job) pairs and throttled jobs to the top K.
#[derive(Clone, Debug, PartialEq)]
pub struct Tables {
    pub tenants: Cut<u32>,
    pub jobs: Cut<u32>,
    pub pods: Cut<u32>,
    pub pairs: Cut<(u32, u32)>,
    pub throttled: Cut<u32>,
}

impl Tables {
    fn of(index: &Index, group: &Group, top: usize) -> Self {
        let place = |ranks: &Vec<u32>, k: u32| ranks.get(k as usize).copied().unwrap_or(u32::MAX);
        let job = |k: u32| place(&index.job_ranks, k);
        Tables {
            tenants: cut(&group.tenants, usize::MAX, |k| place(&index.tenant_ranks, k)),
            jobs: cut(&group.jobs, usize::MAX, job),
            pods: cut(&group.pods, top, |k| place(&index.pod_ranks, k)),
            pairs: cut(&group.pairs, top, |(a, r)| (job(a), job(r))),
            throttled: cut(&group.throttled, top, job),
        }
    }
}

/// One flow-table row: its agent and addresses as indexes into its segment's tables,
/// its sums as the accumulator keeps them.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub agent: u32,
    pub ifindex: u32,
    pub direction: Direction,
    pub src: u32,
    pub dst: u32,
    pub traffic: Traffic,
    pub rate: u32,
    pub samples: u64,
    pub length: u64,
    pub squares: u128,
}

/// Where a row was given to [`Joiner::add`]: the piece it came in and its place there
/// (as the caller numbers them), for [`Joiner::finish`] to read it again.
pub type Place = (u32, u32);

/// A row of a known port, resolved: its link direction's place, its sender's and
/// receiver's owners, and where the row is. Kept until every segment is in, then sorted
/// by link direction: 20 bytes a row, its sums left where they are (a copy took 56).
#[derive(Clone, Copy, Debug)]
struct Resolved {
    link: u32,
    sender: u32,
    receiver: u32,
    place: Place,
}

/// One link direction of a join: its port and direction, its sums, samples per traffic
/// class, and its tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub port: u32,
    pub direction: Direction,
    pub total: Sums,
    pub traffic: [u64; Traffic::ALL.len()],
    pub tables: Tables,
}

/// An interval's rows being joined, segment by segment ([`Joiner::add`]), then summed
/// per link direction ([`Joiner::finish`]).
#[derive(Debug)]
pub struct Joiner<'a> {
    index: &'a Index,
    rows: Vec<Resolved>,
    links: Vec<(u32, Direction)>,
    slots: FastMap<(u32, Direction), u32>,
    unknown: FastMap<(Addr, u32), u64>,
    unattributed: u64,
}

/// What one interval's rows add up to: every link direction with samples, the samples
/// of ports the index does not know per (agent, ifIndex), and the samples nobody sent.
#[derive(Clone, Debug, Default)]
pub struct Joined {
    pub links: Vec<Link>,
    pub unknown: FastMap<(Addr, u32), u64>,
    pub unattributed: u64,
}

impl<'a> Joiner<'a> {
    pub fn new(index: &'a Index) -> Self {
        Joiner {
            index,
            rows: Vec::new(),
            links: Vec::new(),
            slots: FastMap::default(),
            unknown: FastMap::default(),
            unattributed: 0,
        }
    }

    /// Room for `rows` more rows (the rows of [`Joiner::add`] may not know their count).
    pub fn reserve(&mut self, rows: usize) {
        self.rows.reserve(rows);
    }

    /// Add the rows of a segment that started at `at`, whose agents and addresses are
    /// `agents` and `addresses` (each address resolved once, each port once), each with
    /// its place; a row naming an index beyond them is an error.
    pub fn add(
        &mut self,
        at: f64,
        agents: &[Addr],
        addresses: &[Addr],
        rows: impl IntoIterator<Item = (Place, Row)>,
    ) -> Result<(), String> {
        let index = self.index;
        let owners: Vec<u32> =
            addresses.iter().map(|a| if *a == Addr::NONE { NOBODY } else { index.owner(a, at) }).collect();
        let mut ports: FastMap<(u32, u32, Direction), Option<u32>> = FastMap::default();
        let rows = rows.into_iter();
        let (least, most) = rows.size_hint();
        self.rows.reserve(most.unwrap_or(least));
        for (place, row) in rows {
            let (Some(&sender), Some(&receiver), Some(agent)) =
                (owners.get(row.src as usize), owners.get(row.dst as usize), agents.get(row.agent as usize))
            else {
                return Err(format!(
                    "a row names agent {} or address {} / {} beyond its tables",
                    row.agent, row.src, row.dst
                ));
            };
            let link = *ports
                .entry((row.agent, row.ifindex, row.direction))
                .or_insert_with(|| index.port(agent, row.ifindex).map(|port| self.link(port, row.direction)));
            let Some(link) = link else {
                *self.unknown.entry((*agent, row.ifindex)).or_default() += row.samples;
                continue;
            };
            if sender == NOBODY {
                self.unattributed += row.samples;
            }
            self.rows.push(Resolved { link, sender, receiver, place });
        }
        Ok(())
    }

    fn link(&mut self, port: u32, direction: Direction) -> u32 {
        let links = &mut self.links;
        *self.slots.entry((port, direction)).or_insert_with(|| {
            links.push((port, direction));
            (links.len() - 1) as u32
        })
    }

    /// Every link direction's sums and tables (cut to `top`), one link direction at a
    /// time: its rows together (each read again where [`Joiner::add`] was given it,
    /// `row_at` its place), its groups summed in tables used again for the next.
    pub fn finish(mut self, top: usize, row_at: impl Fn(Place) -> Row) -> Joined {
        self.rows.sort_unstable_by_key(|row| row.link);
        let owners = &self.index.owners;
        let mut links = Vec::with_capacity(self.links.len());
        let mut group = Group::default();
        for run in self.rows.chunk_by(|a, b| a.link == b.link) {
            group.clear();
            for resolved in run {
                let row = row_at(resolved.place);
                group.add(
                    &Sums::of_row(row.samples, row.length, row.squares, row.rate),
                    owners[resolved.sender as usize],
                    owners[resolved.receiver as usize],
                    row.traffic,
                );
            }
            let (port, direction) = self.links[run[0].link as usize];
            let tables = Tables::of(self.index, &group, top);
            links.push(Link { port, direction, total: group.total, traffic: group.traffic, tables });
        }
        Joined { links, unknown: self.unknown, unattributed: self.unattributed }
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
            rate: 10,
            samples: 2,
            length: 3000,
            squares: 4_500_000,
        }
    }

    #[test]
    fn owners_by_time_and_the_latest_claim() {
        let index = index();
        assert_eq!(index.owner(&v4(1), 99.9), 1);
        assert_eq!(index.owner(&v4(1), 100.0), 2);
        assert_eq!(index.owner(&v4(9), 5.0), NOBODY);
    }

    /// The rows of `pieces[piece]`, each with its place.
    fn placed(pieces: &[Vec<Row>], piece: u32) -> impl Iterator<Item = (Place, Row)> + '_ {
        pieces[piece as usize].iter().enumerate().map(move |(at, row)| ((piece, at as u32), *row))
    }

    /// A table nothing was cut from.
    fn whole<K>(top: Vec<(K, Sums)>, total: Sums) -> Cut<K> {
        Cut { top, other: None, total }
    }

    #[test]
    fn rows_summed_per_port_by_sender_and_pair() {
        let index = index();
        let (agents, addresses) = ([Addr::NONE, v4(254)], [Addr::NONE, v4(1), v4(2), v4(9)]);
        let mut joiner = Joiner::new(&index);
        let pieces = [
            vec![row(1, Traffic::RoceWrite, 7), row(3, Traffic::RoceCnp, 7)],
            vec![row(1, Traffic::RoceWrite, 7), row(1, Traffic::RoceWrite, 8)],
            vec![row(4, Traffic::RoceWrite, 7)],
        ];
        joiner.add(50.0, &agents, &addresses, placed(&pieces, 0)).unwrap();
        joiner.add(150.0, &agents, &addresses, placed(&pieces, 1)).unwrap();
        assert!(joiner.add(150.0, &agents, &addresses, placed(&pieces, 2)).is_err());
        let joined = joiner.finish(10, |(piece, at)| pieces[piece as usize][at as usize]);
        let one = Sums { samples: 2, bytes: 30_000, packets: 20, variance: 450_000_000 };
        let two = Sums { samples: 4, bytes: 60_000, packets: 40, variance: 900_000_000 };
        let three = Sums { samples: 6, bytes: 90_000, packets: 60, variance: 1_350_000_000 };
        let [link] = &joined.links[..] else { panic!("one link direction, not {:?}", joined.links) };
        assert_eq!((link.port, link.direction, link.total), (3, Direction::In, three));
        assert_eq!(link.tables.pods, whole(vec![(0, one), (1, one), (2, one)], three));
        assert_eq!(link.tables.tenants, whole(vec![(1, two), (0, one)], three));
        assert_eq!(link.tables.pairs, whole(vec![((0, 2), one), ((1, 2), one), ((2, 2), one)], three));
        assert_eq!(link.tables.throttled, whole(vec![(2, one)], one));
        assert_eq!(link.traffic[Traffic::RoceWrite as usize], 4);
        assert_eq!(joined.unattributed, 2);
        assert_eq!(joined.unknown, FastMap::from_iter([((v4(254), 8), 2)]));
    }

    #[test]
    fn each_link_direction_cut_on_its_own() {
        let index = index();
        let (agents, addresses) = ([Addr::NONE, v4(254)], [Addr::NONE, v4(1), v4(2), v4(9)]);
        let out = Row { direction: Direction::Out, ..row(2, Traffic::RoceWrite, 7) };
        let mut joiner = Joiner::new(&index);
        let pieces = [vec![row(1, Traffic::RoceWrite, 7), out, row(3, Traffic::RoceWrite, 7)]];
        joiner.add(50.0, &agents, &addresses, placed(&pieces, 0)).unwrap();
        let joined = joiner.finish(1, |(piece, at)| pieces[piece as usize][at as usize]);
        let one = Sums { samples: 2, bytes: 30_000, packets: 20, variance: 450_000_000 };
        let two = Sums { samples: 4, bytes: 60_000, packets: 40, variance: 900_000_000 };
        let found: Vec<_> = joined.links.iter().map(|l| (l.direction, l.tables.pods.clone())).collect();
        assert_eq!(
            found,
            vec![
                (Direction::In, Cut { top: vec![(0, one)], other: Some(one), total: two }),
                (Direction::Out, whole(vec![(2, one)], one)),
            ]
        );
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

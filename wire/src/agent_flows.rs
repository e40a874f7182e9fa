//! One agent's flow sums of an interval segment, in the order their keys came: the
//! entries in a vector, found through a table of their places.
//!
//! A hash map of 56-byte entries holds between 1.14 and 2.3 buckets per key (its
//! capacity doubles): an x-large shard's 3.66 M keys over 234 leaves, 15.6 k a leaf,
//! just past a power of two, took 119 bytes a key. Here the table holds a 4-byte place a
//! bucket, and the vector grows by a quarter: about 72 bytes a key. Lookups still go
//! through the same hash (`hash::Fold`) and a SIMD-probed table (hashbrown's).

use std::hash::BuildHasher;

use hashbrown::hash_table::{Entry, HashTable};

use crate::accumulate::{FlowKey, Sums};
use crate::hash::Fold;

/// What [`AgentFlows::add`] did with a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// To a key the table held.
    Summed,
    /// As a new key.
    Inserted,
    /// Nothing: a new key, and no room for one.
    Full,
}

/// Flow keys and their sums, in the order the keys came.
#[derive(Clone, Debug, Default)]
pub struct AgentFlows {
    entries: Vec<(FlowKey, Sums)>,
    places: HashTable<u32>,
    hash: Fold,
}

impl AgentFlows {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every key and its sums, in the order the keys came.
    pub fn iter(&self) -> impl Iterator<Item = &(FlowKey, Sums)> {
        self.entries.iter()
    }

    /// Adds a sample of `length` bytes to `key`, inserting it when new and `room`.
    pub fn add(&mut self, key: FlowKey, length: u32, room: bool) -> Added {
        let (entries, hash) = (&mut self.entries, self.hash);
        let found = self.places.entry(
            hash.hash_one(key),
            |&place| entries[place as usize].0 == key,
            |&place| hash.hash_one(entries[place as usize].0),
        );
        match found {
            Entry::Occupied(place) => {
                entries[*place.get() as usize].1.add(length);
                Added::Summed
            }
            Entry::Vacant(_) if !room => Added::Full,
            Entry::Vacant(slot) => {
                if entries.len() == entries.capacity() {
                    entries.reserve_exact(entries.len() / 4 + 16);
                }
                slot.insert(entries.len() as u32);
                entries.push((key, Sums::of(length)));
                Added::Inserted
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::Direction;
    use crate::packet::Traffic;

    fn key(src: u32) -> FlowKey {
        FlowKey {
            agent: 1,
            ifindex: 7,
            src,
            dst: src ^ 0xFF,
            rate: 4096,
            direction: Direction::In,
            traffic: Traffic::NoHeader,
        }
    }

    #[test]
    fn sums_per_key_in_the_order_keys_came() {
        let mut table = AgentFlows::default();
        let lengths = [(3, 100), (1, 200), (3, 50), (2, 10), (1, 1)];
        let added: Vec<Added> = lengths.iter().map(|&(k, n)| table.add(key(k), n, true)).collect();
        use Added::{Inserted, Summed};
        assert_eq!(added, [Inserted, Inserted, Summed, Inserted, Summed]);
        let found: Vec<(u32, u64, u64, u128)> =
            table.iter().map(|(k, s)| (k.src, s.samples, s.bytes, s.squares())).collect();
        assert_eq!(found, [(3, 2, 150, 12_500), (1, 2, 201, 40_001), (2, 1, 10, 100)]);
    }

    #[test]
    fn a_full_table_sums_known_keys_and_refuses_new_ones() {
        let mut table = AgentFlows::default();
        assert_eq!(table.add(key(1), 10, true), Added::Inserted);
        assert_eq!(table.add(key(2), 10, false), Added::Full);
        assert_eq!(table.add(key(1), 10, false), Added::Summed);
        assert_eq!((table.len(), table.iter().next().map(|(_, s)| s.samples)), (1, Some(2)));
    }

    #[test]
    fn a_hundred_thousand_keys_each_found_again() {
        let mut table = AgentFlows::default();
        for src in 0..100_000 {
            assert_eq!(table.add(key(src), src, true), Added::Inserted);
        }
        for src in (0..100_000).rev() {
            assert_eq!(table.add(key(src), 1, true), Added::Summed);
        }
        assert_eq!(table.len(), 100_000);
        assert!(table
            .iter()
            .enumerate()
            .all(|(i, (k, s))| k.src == i as u32 && s.samples == 2 && s.bytes == u64::from(k.src) + 1));
        // places and entries, not the hash map's 56-byte buckets
        assert!(table.entries.capacity() < 100_000 * 5 / 4 + 16);
        assert!(table.places.allocation_size() < 100_000 * 5 * 2 + 64);
    }
}

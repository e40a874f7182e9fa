//! Bounded tables for state keyed by what datagrams claim (agents, sub-agents, formats),
//! as `correlator/sflow/tables.py`: the least recently used entry goes beyond the bound,
//! and every eviction is counted.

use std::collections::BTreeMap;

use crate::hash::FastMap;
use std::hash::Hash;

/// At most `bound` entries; [`Lru::put`] makes an entry the most recent.
#[derive(Clone, Debug)]
pub struct Lru<K, V> {
    bound: usize,
    entries: FastMap<K, (V, u64)>,
    order: BTreeMap<u64, K>,
    clock: u64,
    /// Entries evicted since the last [`Lru::take_evictions`].
    pub evictions: u64,
}

impl<K: Clone + Eq + Hash, V> Lru<K, V> {
    /// A table of at most `bound` entries (at least one).
    pub fn new(bound: usize) -> Self {
        Lru {
            bound: bound.max(1),
            entries: FastMap::default(),
            order: BTreeMap::new(),
            clock: 0,
            evictions: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|(v, _)| v)
    }

    /// The value of `key`, its entry made the most recent: a use in place, one lookup.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let (value, stamp) = self.entries.get_mut(key)?;
        self.clock += 1;
        if let Some(key) = self.order.remove(stamp) {
            self.order.insert(self.clock, key);
        }
        *stamp = self.clock;
        Some(value)
    }

    /// Removes `key`; with a [`Lru::put`] after it, a use of the entry.
    pub fn pop(&mut self, key: &K) -> Option<V> {
        let (value, stamp) = self.entries.remove(key)?;
        self.order.remove(&stamp);
        Some(value)
    }

    /// Sets `key` as the most recent entry, evicting the least recent beyond the bound.
    pub fn put(&mut self, key: K, value: V) {
        self.clock += 1;
        if let Some((_, stamp)) = self.entries.insert(key.clone(), (value, self.clock)) {
            self.order.remove(&stamp);
        }
        self.order.insert(self.clock, key);
        while self.entries.len() > self.bound {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            self.entries.remove(&oldest);
            self.evictions += 1;
        }
    }

    /// Evictions since the last call.
    pub fn take_evictions(&mut self) -> u64 {
        std::mem::take(&mut self.evictions)
    }

    /// Entries, least recent first.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.order.values().filter_map(|k| self.entries.get_key_value(k).map(|(k, (v, _))| (k, v)))
    }
}

impl<K: Eq + Hash, V: PartialEq> PartialEq for Lru<K, V> {
    /// The same entries and bound (recency aside).
    fn eq(&self, other: &Self) -> bool {
        self.bound == other.bound
            && self.entries.len() == other.entries.len()
            && self.entries.iter().all(|(k, (v, _))| other.entries.get(k).is_some_and(|(w, _)| v == w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_tables_py() {
        let mut t = Lru::new(2);
        t.put("a", 1);
        t.put("b", 2);
        let a = t.pop(&"a").unwrap_or(0);
        t.put("a", a + 1);
        t.put("c", 3);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(&"a", &2), (&"c", &3)]);
        assert_eq!((t.len(), t.take_evictions(), t.take_evictions()), (2, 1, 0));
    }

    #[test]
    fn get_mut_is_a_use() {
        let mut t = Lru::new(2);
        t.put("a", 1);
        t.put("b", 2);
        *t.get_mut(&"a").unwrap_or(&mut 0) += 10;
        assert_eq!(t.get_mut(&"x"), None);
        t.put("c", 3); // evicts b, the least recently used
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(&"a", &11), (&"c", &3)]);
        assert_eq!(t.take_evictions(), 1);
    }
}

//! The hash of every table on the hot path: a multiply-and-fold of 8-byte words, seeded
//! once per process at random.
//!
//! SipHash (the standard `RandomState`) was close to half of the accumulate time. This
//! one reads a key eight bytes at a time and mixes each word with one 64x64->128-bit
//! multiply whose halves are folded together. Its per-process seed keeps the bucket of a
//! key unknown to whoever sends datagrams, so keys cannot be chosen to collide as they
//! can against a fixed hash; it is not SipHash-strong, and every table a datagram can
//! fill is bounded besides (`accumulate::Limits`, the LRU tables).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

/// The process's seed, drawn from the standard library's random keys on first use.
fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x5EED_u64) | 1)
}

/// Builds [`FoldHasher`]s with the process's seed.
#[derive(Clone, Copy, Debug)]
pub struct Fold(u64);

impl Default for Fold {
    fn default() -> Self {
        Fold(seed())
    }
}

impl BuildHasher for Fold {
    type Hasher = FoldHasher;

    fn build_hasher(&self) -> FoldHasher {
        FoldHasher { state: self.0, seed: self.0 }
    }
}

/// The hasher [`Fold`] builds.
#[derive(Clone, Copy, Debug)]
pub struct FoldHasher {
    state: u64,
    seed: u64,
}

impl FoldHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        let product = u128::from(self.state ^ word) * u128::from(MULTIPLIER ^ self.seed);
        self.state = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for FoldHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // one more round: the last word's high bits reach the low bits the table uses
        let product = u128::from(self.state) * u128::from(MULTIPLIER);
        (product as u64) ^ ((product >> 64) as u64)
    }
}

/// A map hashed with [`Fold`].
pub type FastMap<K, V> = HashMap<K, V, Fold>;
/// A set hashed with [`Fold`].
pub type FastSet<K> = HashSet<K, Fold>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_and_near_keys_apart() {
        let fold = Fold::default();
        assert_eq!(fold.hash_one((7u32, [1u8; 16])), fold.hash_one((7u32, [1u8; 16])));
        let hashes: FastSet<u64> = (0u32..10_000).map(|n| fold.hash_one(n)).collect();
        assert_eq!(hashes.len(), 10_000);
        let buckets: FastSet<u64> = (0u32..4096).map(|n| fold.hash_one([n; 4]) & 0xFFF).collect();
        assert!(buckets.len() > 2400, "{} of 4096 low-bit buckets used", buckets.len());
    }

    #[test]
    fn a_map_keeps_what_it_was_given() {
        let mut map: FastMap<[u8; 17], u32> = FastMap::default();
        for n in 0..1000u32 {
            let mut key = [0u8; 17];
            key[..4].copy_from_slice(&n.to_le_bytes());
            map.insert(key, n);
        }
        assert_eq!(map.len(), 1000);
        assert!(map.iter().all(|(k, v)| u32::from_le_bytes([k[0], k[1], k[2], k[3]]) == *v));
    }
}

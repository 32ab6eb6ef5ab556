//! A set of keyed deadlines. Each key has at most one deadline; the earliest is found in
//! O(log n). Ties are broken by key order, so expiry order is deterministic.

use crate::Time;
use std::collections::{BTreeMap, BTreeSet};

/// Deadlines by key `K` (a protocol's timer names), at most one per key.
#[derive(Debug, Clone)]
pub struct TimerSet<K: Ord + Copy> {
    by_time: BTreeSet<(Time, K)>,
    by_key: BTreeMap<K, Time>,
}

impl<K: Ord + Copy> Default for TimerSet<K> {
    fn default() -> Self {
        TimerSet {
            by_time: BTreeSet::new(),
            by_key: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Copy> TimerSet<K> {
    /// No timer armed.
    pub fn new() -> Self {
        Self::default()
    }
    /// Arm (or re-arm) `key` to fire at `at`.
    pub fn set(&mut self, key: K, at: Time) {
        if let Some(old) = self.by_key.insert(key, at) {
            self.by_time.remove(&(old, key));
        }
        self.by_time.insert((at, key));
    }
    /// Disarm `key`; returns its deadline if it was armed.
    pub fn cancel(&mut self, key: K) -> Option<Time> {
        let at = self.by_key.remove(&key)?;
        self.by_time.remove(&(at, key));
        Some(at)
    }
    /// Deadline of `key`, if armed.
    pub fn deadline(&self, key: K) -> Option<Time> {
        self.by_key.get(&key).copied()
    }
    /// Whether `key` has a deadline.
    pub fn is_armed(&self, key: K) -> bool {
        self.by_key.contains_key(&key)
    }
    /// Earliest deadline of all.
    pub fn next(&self) -> Option<Time> {
        self.by_time.first().map(|&(t, _)| t)
    }
    /// Remove and return one key whose deadline is `<= now` (earliest first).
    pub fn pop_expired(&mut self, now: Time) -> Option<K> {
        let &(t, k) = self.by_time.first()?;
        if t > now {
            return None;
        }
        self.by_time.remove(&(t, k));
        self.by_key.remove(&k);
        Some(k)
    }
    /// How many keys are armed.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }
    /// Whether no key is armed.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
    /// Disarm every key.
    pub fn clear(&mut self) {
        self.by_key.clear();
        self.by_time.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn rearm_replaces_and_expiry_is_ordered() {
        let mut t = TimerSet::new();
        t.set(1u32, Time::from_millis(10));
        t.set(2, Time::from_millis(5));
        t.set(1, Time::from_millis(3));
        assert_eq!(t.next(), Some(Time::from_millis(3)));
        assert_eq!(t.pop_expired(Time::from_millis(4)), Some(1));
        assert_eq!(t.pop_expired(Time::from_millis(4)), None);
        assert_eq!(t.cancel(2), Some(Time::from_millis(5)));
        assert!(t.is_empty());
    }

    proptest! {
        #[test]
        fn matches_map_model(ops in proptest::collection::vec((0u8..8, 0u64..100, 0u8..3), 0..300)) {
            let mut t = TimerSet::new();
            let mut m: BTreeMap<u8, u64> = BTreeMap::new();
            for (k, at, op) in ops {
                match op {
                    0 => { t.set(k, Time::from_nanos(at)); m.insert(k, at); }
                    1 => { prop_assert_eq!(t.cancel(k).map(|x| x.as_nanos()), m.remove(&k)); }
                    _ => {
                        let now = Time::from_nanos(at);
                        let expect = m.iter().filter(|(_, &v)| v <= at).min_by_key(|(&k, &v)| (v, k)).map(|(&k, _)| k);
                        let got = t.pop_expired(now);
                        prop_assert_eq!(got, expect);
                        if let Some(k) = got { m.remove(&k); }
                    }
                }
                prop_assert_eq!(t.next().map(|x| x.as_nanos()), m.values().min().copied());
                prop_assert_eq!(t.len(), m.len());
            }
        }
    }
}

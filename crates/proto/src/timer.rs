//! A set of keyed deadlines. Each key has at most one deadline; the earliest is found in
//! O(log n). Ties are broken by key order, so expiry order is deterministic.
//!
//! Most agents hold a handful of timers, and a simulation holds millions of agents: up to
//! [`SMALL`] deadlines live in one sorted vector (a few dozen bytes, no tree nodes); a set
//! that grows past it moves to two B-trees for good. Both give the same answers.

use crate::Time;
use std::collections::{BTreeMap, BTreeSet};

/// Deadlines a set keeps in its sorted vector before it moves to B-trees.
pub const SMALL: usize = 16;

/// Deadlines by key `K` (a protocol's timer names), at most one per key.
#[derive(Debug, Clone)]
pub struct TimerSet<K: Ord + Copy> {
    repr: Repr<K>,
}

#[derive(Debug, Clone)]
enum Repr<K: Ord + Copy> {
    /// At most [`SMALL`] deadlines, sorted by (deadline, key).
    Small(Vec<(Time, K)>),
    /// More: boxed, so that the set costs a vector's size in every agent.
    Large(Box<Large<K>>),
}

#[derive(Debug, Clone)]
struct Large<K: Ord + Copy> {
    by_time: BTreeSet<(Time, K)>,
    by_key: BTreeMap<K, Time>,
}

impl<K: Ord + Copy> Default for TimerSet<K> {
    fn default() -> Self {
        TimerSet {
            repr: Repr::Small(Vec::new()),
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
        if let Repr::Small(v) = &mut self.repr {
            if let Some(i) = v.iter().position(|e| e.1 == key) {
                v.remove(i);
            } else if v.len() >= SMALL {
                let by_time: BTreeSet<(Time, K)> = v.drain(..).collect();
                let by_key = by_time.iter().map(|&(t, k)| (k, t)).collect();
                self.repr = Repr::Large(Box::new(Large { by_time, by_key }));
            }
        }
        match &mut self.repr {
            Repr::Small(v) => {
                let i = v.partition_point(|e| *e < (at, key));
                // Room for one more, not four: most agents arm one timer or two.
                crate::seqmap::reserve_one_while_small(v, 4);
                v.insert(i, (at, key));
            }
            Repr::Large(l) => {
                let Large { by_time, by_key } = &mut **l;
                if let Some(old) = by_key.insert(key, at) {
                    by_time.remove(&(old, key));
                }
                by_time.insert((at, key));
            }
        }
    }
    /// Disarm `key`; returns its deadline if it was armed.
    pub fn cancel(&mut self, key: K) -> Option<Time> {
        match &mut self.repr {
            Repr::Small(v) => {
                let i = v.iter().position(|e| e.1 == key)?;
                let at = v.remove(i).0;
                self.release_if_empty();
                Some(at)
            }
            Repr::Large(l) => {
                let Large { by_time, by_key } = &mut **l;
                let at = by_key.remove(&key)?;
                by_time.remove(&(at, key));
                self.release_if_empty();
                Some(at)
            }
        }
    }
    /// With nothing armed, hold no buffer (and go back to the small form): most agents of a
    /// large simulation arm a timer or two once and then never again.
    fn release_if_empty(&mut self) {
        if self.is_empty() {
            self.repr = Repr::Small(Vec::new());
        }
    }
    /// Deadline of `key`, if armed.
    pub fn deadline(&self, key: K) -> Option<Time> {
        match &self.repr {
            Repr::Small(v) => v.iter().find(|e| e.1 == key).map(|e| e.0),
            Repr::Large(l) => l.by_key.get(&key).copied(),
        }
    }
    /// Whether `key` has a deadline.
    pub fn is_armed(&self, key: K) -> bool {
        self.deadline(key).is_some()
    }
    /// Earliest deadline of all.
    pub fn next(&self) -> Option<Time> {
        match &self.repr {
            Repr::Small(v) => v.first().map(|e| e.0),
            Repr::Large(l) => l.by_time.first().map(|&(t, _)| t),
        }
    }
    /// Remove and return one key whose deadline is `<= now` (earliest first).
    pub fn pop_expired(&mut self, now: Time) -> Option<K> {
        match &mut self.repr {
            Repr::Small(v) => {
                let &(t, k) = v.first()?;
                if t > now {
                    return None;
                }
                v.remove(0);
                self.release_if_empty();
                Some(k)
            }
            Repr::Large(l) => {
                let Large { by_time, by_key } = &mut **l;
                let &(t, k) = by_time.first()?;
                if t > now {
                    return None;
                }
                by_time.remove(&(t, k));
                by_key.remove(&k);
                self.release_if_empty();
                Some(k)
            }
        }
    }
    /// How many keys are armed.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Small(v) => v.len(),
            Repr::Large(l) => l.by_key.len(),
        }
    }
    /// Whether no key is armed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Disarm every key.
    pub fn clear(&mut self) {
        self.repr = Repr::Small(Vec::new());
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
        fn matches_map_model(ops in proptest::collection::vec((0u8..40, 0u64..100, 0u8..3), 0..400)) {
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
                for k in 0..40u8 {
                    prop_assert_eq!(t.deadline(k).map(|x| x.as_nanos()), m.get(&k).copied());
                }
            }
        }
    }
}

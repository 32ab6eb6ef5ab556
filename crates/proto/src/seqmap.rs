//! A compact map keyed by sequence number, for per-packet state of a receiver: what it
//! holds while a packet is outstanding (a request's attempt count, a loss's repair phase),
//! or the data an LMS receiver keeps to serve as a replier.

/// Values by sequence number, as a vector sorted by key: a receiver often holds none or a
/// handful, so one exact-sized buffer (freed when the map empties) replaces a B-tree node
/// sized for eleven. Finding is O(log len); inserting in order (the common case) is
/// amortized O(1), out of order and removing O(len).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeqMap<V> {
    entries: Vec<(u64, V)>,
}

impl<V> Default for SeqMap<V> {
    fn default() -> Self {
        SeqMap {
            entries: Vec::new(),
        }
    }
}

/// Below this many entries the map grows by one at a time; beyond, by doubling.
const EXACT_UP_TO: usize = 8;

/// Make room for one more item in `v`: exactly one while it holds fewer than `up_to`, so that
/// a buffer of a few items (most receivers' state in a large simulation) is exactly their
/// size; beyond, the usual doubling of `push`.
pub(crate) fn reserve_one_while_small<T>(v: &mut Vec<T>, up_to: usize) {
    if v.len() == v.capacity() && v.len() < up_to {
        v.reserve_exact(1);
    }
}

/// [`reserve_one_while_small`] for a deque.
pub(crate) fn reserve_one_while_small_deque<T>(
    v: &mut std::collections::VecDeque<T>,
    up_to: usize,
) {
    if v.len() == v.capacity() && v.len() < up_to {
        v.reserve_exact(1);
    }
}

impl<V> SeqMap<V> {
    /// An empty map (allocates nothing).
    pub fn new() -> Self {
        Self::default()
    }

    fn find(&self, seq: u64) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&seq, |(s, _)| *s)
    }

    /// The value of `seq`, if any.
    pub fn get(&self, seq: u64) -> Option<&V> {
        let i = self.find(seq).ok()?;
        self.entries.get(i).map(|(_, v)| v)
    }

    /// The value of `seq`, if any, to change.
    pub fn get_mut(&mut self, seq: u64) -> Option<&mut V> {
        let i = self.find(seq).ok()?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    /// Whether `seq` has a value.
    pub fn contains_key(&self, seq: u64) -> bool {
        self.find(seq).is_ok()
    }

    /// The value of `seq`, inserted from `make` first if it has none.
    pub fn get_or_insert_with(&mut self, seq: u64, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(seq) {
            Ok(i) => i,
            Err(i) => {
                self.grow();
                self.entries.insert(i, (seq, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Set the value of `seq`; returns the one it replaces.
    pub fn insert(&mut self, seq: u64, value: V) -> Option<V> {
        match self.find(seq) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.grow();
                self.entries.insert(i, (seq, value));
                None
            }
        }
    }

    /// Remove the value of `seq`; the map's buffer goes with its last entry.
    pub fn remove(&mut self, seq: u64) -> Option<V> {
        let i = self.find(seq).ok()?;
        let (_, v) = self.entries.remove(i);
        if self.entries.is_empty() {
            self.entries = Vec::new();
        }
        Some(v)
    }

    /// Whether the map holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many sequence numbers have a value.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries in ascending order of sequence number.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> + '_ {
        self.entries.iter().map(|(s, v)| (*s, v))
    }

    fn grow(&mut self) {
        reserve_one_while_small(&mut self.entries, EXACT_UP_TO);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn an_empty_map_holds_no_buffer_and_a_small_one_is_exact() {
        let mut m = SeqMap::new();
        assert_eq!(m.entries.capacity(), 0);
        for s in [5u64, 1, 3] {
            m.insert(s, s * 10);
        }
        assert_eq!(m.entries.capacity(), 3);
        assert_eq!(m.iter().map(|(s, _)| s).collect::<Vec<_>>(), vec![1, 3, 5]);
        for s in [3u64, 1, 5] {
            assert_eq!(m.remove(s), Some(s * 10));
        }
        assert_eq!(m.entries.capacity(), 0);
    }

    proptest! {
        #[test]
        fn matches_a_btree_map(ops in proptest::collection::vec((0u8..5, 0u64..40, any::<u16>()), 0..300)) {
            let mut m = SeqMap::new();
            let mut model: BTreeMap<u64, u16> = BTreeMap::new();
            for (op, k, v) in ops {
                match op {
                    0 => prop_assert_eq!(m.insert(k, v), model.insert(k, v)),
                    1 => prop_assert_eq!(m.remove(k), model.remove(&k)),
                    2 => {
                        let a = m.get_or_insert_with(k, || v);
                        *a = a.wrapping_add(1);
                        let b = model.entry(k).or_insert(v);
                        *b = b.wrapping_add(1);
                    }
                    3 => {
                        if let Some(x) = m.get_mut(k) { *x = v; }
                        if let Some(x) = model.get_mut(&k) { *x = v; }
                    }
                    _ => prop_assert_eq!(m.get(k), model.get(&k)),
                }
                prop_assert_eq!(m.contains_key(k), model.contains_key(&k));
                prop_assert_eq!(m.len(), model.len());
                prop_assert_eq!(m.is_empty(), model.is_empty());
                let a: Vec<(u64, u16)> = m.iter().map(|(s, v)| (s, *v)).collect();
                let b: Vec<(u64, u16)> = model.iter().map(|(s, v)| (*s, *v)).collect();
                prop_assert_eq!(a, b);
            }
        }
    }
}

//! Sequence windows and bitmaps.
//!
//! [`Bitmap`] is a plain fixed-size bit set (status bitmaps such as seed 001's LOB are built
//! on it). [`SeqWindow`] is the receive-side window every NAK/ACK protocol needs: everything
//! below `base` has been received; a ring bitmap records what has arrived in
//! `[base, base + capacity)`. [`HeldWindow`] is a `SeqWindow` that also keeps each message's
//! data until it can be delivered in order (the receivers that reorder: ff, prmp, pgm).

use bytes::Bytes;
use std::collections::VecDeque;

/// A fixed-size set of bits.
///
/// Storage grows on demand: words are allocated only up to the highest bit ever set, so a
/// large receive window (64 Ki sequence numbers by default) costs nothing until used —
/// with a million receivers in one simulation that is 8 GiB saved. Equality and hashing
/// look at the bits, not at how much storage happens to be allocated.
#[derive(Debug, Clone)]
pub struct Bitmap {
    /// At most `len.div_ceil(64)` words; missing words are all clear.
    words: Vec<u64>,
    len: usize,
}

impl PartialEq for Bitmap {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.used() == other.used()
    }
}

impl Eq for Bitmap {}

impl core::hash::Hash for Bitmap {
    fn hash<H: core::hash::Hasher>(&self, h: &mut H) {
        self.len.hash(h);
        self.used().hash(h);
    }
}

impl Bitmap {
    /// `len` bits, all clear.
    pub fn new(len: usize) -> Self {
        Bitmap {
            words: Vec::new(),
            len,
        }
    }
    /// The allocated words without trailing all-clear ones.
    fn used(&self) -> &[u64] {
        let n = self
            .words
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |i| i + 1);
        &self.words[..n]
    }
    /// Bits in the map.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the map has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Value of bit `i`; bits beyond the end read as clear.
    pub fn get(&self, i: usize) -> bool {
        i < self.len
            && self
                .words
                .get(i / 64)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    /// Set bit `i` to `v`; ignored beyond the end. Returns the previous value.
    pub fn set(&mut self, i: usize, v: bool) -> bool {
        if i >= self.len {
            return false;
        }
        if v && i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        let Some(w) = self.words.get_mut(i / 64) else {
            // Clearing a bit in storage never allocated: it is already clear.
            return false;
        };
        let mask = 1u64 << (i % 64);
        let old = *w & mask != 0;
        if v {
            *w |= mask;
        } else {
            *w &= !mask;
        }
        old
    }
    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Clear every bit.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
    /// Indices of set bits, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(move |(wi, &w)| {
            let mut w = w;
            core::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + b)
            })
        })
    }
    /// `self &= other` over the common length.
    pub fn and_assign(&mut self, other: &Bitmap) {
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
        }
    }
    /// `self |= other` over the common length.
    pub fn or_assign(&mut self, other: &Bitmap) {
        let want = other.used().len().min(self.len.div_ceil(64));
        if self.words.len() < want {
            self.words.resize(want, 0);
        }
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w |= o;
        }
        self.mask_tail();
    }
    fn mask_tail(&mut self) {
        if self.words.len() < self.len.div_ceil(64) {
            return; // the last word is not allocated, so nothing lies beyond the end
        }
        let extra = self.words.len() * 64 - self.len;
        if extra > 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= u64::MAX >> extra;
            }
        }
    }
}

/// What [`SeqWindow::insert`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// First arrival of a sequence number inside the window.
    New,
    /// Already recorded (inside the window, or below its base).
    Duplicate,
    /// Beyond `base + capacity`: the window cannot hold it.
    TooFar,
}

/// Receive window over 64-bit sequence numbers.
#[derive(Debug, Clone)]
pub struct SeqWindow {
    base: u64,
    bits: Bitmap,
    highest: Option<u64>,
}

impl SeqWindow {
    /// A window starting at sequence 0 that can track `capacity` sequence numbers ahead of
    /// its base (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self::starting_at(0, capacity)
    }
    /// A window starting at 0 for a configured `window`, bounded to `1..=max`.
    pub fn bounded(window: u64, max: u64) -> Self {
        Self::new(usize::try_from(window.clamp(1, max)).unwrap_or(1))
    }
    /// A window whose first expected sequence number is `base`.
    pub fn starting_at(base: u64, capacity: usize) -> Self {
        SeqWindow {
            base,
            bits: Bitmap::new(capacity.max(1)),
            highest: None,
        }
    }
    /// Lowest sequence number not yet received; everything below it has been.
    pub fn base(&self) -> u64 {
        self.base
    }
    /// Sequence numbers the window holds from its base.
    pub fn capacity(&self) -> usize {
        self.bits.len()
    }
    /// Highest sequence number ever inserted.
    pub fn highest(&self) -> Option<u64> {
        self.highest
    }
    fn slot(&self, seq: u64) -> usize {
        (seq % self.bits.len() as u64) as usize
    }
    /// Whether `seq` has been received.
    pub fn contains(&self, seq: u64) -> bool {
        if seq < self.base {
            return true;
        }
        if seq - self.base >= self.bits.len() as u64 {
            return false;
        }
        self.bits.get(self.slot(seq))
    }
    /// Record the arrival of `seq`. `u64::MAX`, the end of the sequence space, is always
    /// [`Insert::TooFar`]: the window could not move past it.
    pub fn insert(&mut self, seq: u64) -> Insert {
        if seq < self.base {
            return Insert::Duplicate;
        }
        if seq == u64::MAX || seq - self.base >= self.bits.len() as u64 {
            return Insert::TooFar;
        }
        let slot = self.slot(seq);
        if self.bits.set(slot, true) {
            return Insert::Duplicate;
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        Insert::New
    }
    /// Take back the arrival of `seq` at or above the base (a peer that said it held `seq`
    /// says now that it does not); `highest` stays. Whether it was marked.
    pub fn forget(&mut self, seq: u64) -> bool {
        if seq < self.base || seq - self.base >= self.bits.len() as u64 {
            return false;
        }
        let slot = self.slot(seq);
        self.bits.set(slot, false)
    }
    /// If `base` has been received, move past it and return it. Call repeatedly to consume
    /// everything that is now in order.
    pub fn pop_in_order(&mut self) -> Option<u64> {
        let slot = self.slot(self.base);
        if self.bits.get(slot) {
            self.bits.set(slot, false);
            let s = self.base;
            self.base += 1;
            Some(s)
        } else {
            None
        }
    }
    /// Packets below `next` exist; `known` counts those known to exist so far (a source's
    /// leading edge as the receiver has learnt it). Raises `known` to `next` and returns the
    /// sequence numbers newly known at or above the base, ascending: the ones to check for
    /// loss (some may have arrived out of order; see [`SeqWindow::contains`]). Empty when
    /// `next` tells nothing new.
    pub fn newly_known(&self, known: &mut u64, next: u64) -> core::ops::Range<u64> {
        if next <= *known {
            return next..next;
        }
        let from = (*known).max(self.base);
        *known = next;
        from..next
    }
    /// Sequence numbers in `[base, highest]` not yet received, ascending.
    pub fn missing(&self) -> impl Iterator<Item = u64> + '_ {
        let end = self.highest.map_or(self.base, |h| h + 1).max(self.base);
        (self.base..end).filter(move |&s| !self.contains(s))
    }
}

/// A receive window that keeps the data of what arrived out of order until the gap before
/// it fills: a [`SeqWindow`] and the held messages, kept in step.
///
/// The held data is the lowest message in place and the others in ascending order in a
/// deque that is freed whenever it empties: a message that arrives in order is held and
/// delivered without an allocation, and a receiver of a simulation with millions of them
/// keeps no buffer after its last gap filled.
#[derive(Debug, Clone)]
pub struct HeldWindow {
    w: SeqWindow,
    /// The lowest held message.
    first: Option<(u64, Bytes)>,
    /// The other held messages, ascending.
    rest: VecDeque<(u64, Bytes)>,
}

impl HeldWindow {
    /// A window starting at 0 that can track `capacity` sequence numbers ahead of its base.
    pub fn new(capacity: usize) -> Self {
        Self::over(SeqWindow::new(capacity))
    }
    /// A window starting at 0 for a configured `window`, bounded to `1..=max`.
    pub fn bounded(window: u64, max: u64) -> Self {
        Self::over(SeqWindow::bounded(window, max))
    }
    /// A window whose first expected sequence number is `base`, tracking `capacity` ahead.
    pub fn starting_at(base: u64, capacity: usize) -> Self {
        Self::over(SeqWindow::starting_at(base, capacity))
    }
    fn over(w: SeqWindow) -> Self {
        HeldWindow {
            w,
            first: None,
            rest: VecDeque::new(),
        }
    }
    /// The sequence window (what arrived, the base, the highest).
    pub fn window(&self) -> &SeqWindow {
        &self.w
    }
    /// Record the arrival of `seq`; its data (`data()`, called only then) is kept when it is
    /// new.
    pub fn insert(&mut self, seq: u64, data: impl FnOnce() -> Bytes) -> Insert {
        let found = self.w.insert(seq);
        if found == Insert::New {
            let m = (seq, data());
            match &mut self.first {
                None => self.first = Some(m),
                Some(first) if seq < first.0 => {
                    let old = std::mem::replace(first, m);
                    self.rest.push_front(old);
                }
                Some(_) => {
                    // New, so not held yet: the search ends where it belongs.
                    let at = self.rest.partition_point(|(s, _)| *s < seq);
                    self.rest.insert(at, m);
                }
            }
        }
        found
    }
    /// If the base has arrived, move past it and return it with its data.
    pub fn pop_in_order(&mut self) -> Option<(u64, Bytes)> {
        let seq = self.w.pop_in_order()?;
        // The held messages are the window's arrivals above its base, so the base, once it
        // has arrived, is the lowest.
        let data = match self.first.take() {
            Some((s, d)) if s == seq => {
                self.first = self.rest.pop_front();
                if self.rest.is_empty() && self.rest.capacity() > 0 {
                    self.rest = VecDeque::new();
                }
                d
            }
            other => {
                self.first = other;
                Bytes::default()
            }
        };
        Some((seq, data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #[test]
        fn a_held_window_delivers_every_message_once_in_order_with_its_data(
            order in Just((0u64..40).collect::<Vec<_>>()).prop_shuffle(),
            dup in 0usize..40,
        ) {
            let mut w = HeldWindow::bounded(64, 64);
            let mut out = Vec::new();
            for (i, &seq) in order.iter().enumerate() {
                let data = || Bytes::from(seq.to_be_bytes().to_vec());
                prop_assert_eq!(w.insert(seq, data), Insert::New);
                if i == dup {
                    // A second copy is a duplicate and its data is not asked for.
                    prop_assert_eq!(w.insert(seq, || unreachable!()), Insert::Duplicate);
                }
                while let Some(m) = w.pop_in_order() {
                    out.push(m);
                }
            }
            let want: Vec<(u64, Bytes)> =
                (0..40u64).map(|s| (s, Bytes::from(s.to_be_bytes().to_vec()))).collect();
            prop_assert_eq!(out, want);
            prop_assert_eq!(w.insert(200, || unreachable!()), Insert::TooFar);
        }
    }

    #[test]
    fn newly_known_is_what_a_leading_edge_adds_above_the_base() {
        let mut w = SeqWindow::new(16);
        let mut known = 0;
        assert_eq!(w.newly_known(&mut known, 3), 0..3);
        assert_eq!(known, 3);
        assert!(w.newly_known(&mut known, 2).is_empty(), "an older edge");
        assert_eq!(known, 3);
        for s in 0..5 {
            w.insert(s);
            w.pop_in_order();
        }
        assert_eq!(w.newly_known(&mut known, 7), 5..7, "from the base");
        assert_eq!(known, 7);
    }

    #[test]
    fn bitmap_basics() {
        let mut b = Bitmap::new(70);
        assert!(!b.set(3, true));
        assert!(b.set(3, true));
        b.set(69, true);
        b.set(70, true); // beyond the end: ignored
        assert_eq!(b.iter_ones().collect::<Vec<_>>(), vec![3, 69]);
        assert_eq!(b.count_ones(), 2);
        let mut c = Bitmap::new(70);
        c.set(69, true);
        let mut and = b.clone();
        and.and_assign(&c);
        assert_eq!(and.iter_ones().collect::<Vec<_>>(), vec![69]);
        c.set(1, true);
        b.or_assign(&c);
        assert_eq!(b.iter_ones().collect::<Vec<_>>(), vec![1, 3, 69]);
    }

    proptest! {
        /// The window agrees with a plain set model on every operation.
        #[test]
        fn window_matches_set_model(cap in 1usize..200, ops in proptest::collection::vec((0u64..400, any::<bool>()), 0..500)) {
            let mut w = SeqWindow::new(cap);
            let mut got = BTreeSet::new();
            let mut base = 0u64;
            for (seq, pop) in ops {
                let expect = if seq < base || got.contains(&seq) {
                    Insert::Duplicate
                } else if seq - base >= cap as u64 {
                    Insert::TooFar
                } else {
                    Insert::New
                };
                prop_assert_eq!(w.insert(seq), expect);
                if expect == Insert::New {
                    got.insert(seq);
                }
                if pop {
                    while got.contains(&base) {
                        prop_assert_eq!(w.pop_in_order(), Some(base));
                        got.remove(&base);
                        base += 1;
                    }
                    prop_assert_eq!(w.pop_in_order(), None);
                }
                prop_assert_eq!(w.base(), base);
                for s in base..base + cap as u64 {
                    prop_assert_eq!(w.contains(s), got.contains(&s));
                }
                let hi = got.iter().next_back().copied().unwrap_or(0).max(w.highest().unwrap_or(0));
                let missing: Vec<u64> = (base..=hi).filter(|s| !got.contains(s)).collect();
                if w.highest().is_some_and(|h| h >= base) {
                    prop_assert_eq!(w.missing().collect::<Vec<_>>(), missing);
                }
            }
        }

        #[test]
        fn bitmap_matches_set_model(len in 0usize..300, ops in proptest::collection::vec((0usize..320, any::<bool>()), 0..200)) {
            let mut b = Bitmap::new(len);
            let mut m = BTreeSet::new();
            for (i, v) in ops {
                b.set(i, v);
                if i < len { if v { m.insert(i); } else { m.remove(&i); } }
            }
            prop_assert_eq!(b.iter_ones().collect::<Vec<_>>(), m.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(b.count_ones(), m.len());
            // Equality is by bits, whatever storage the history left allocated.
            let mut fresh = Bitmap::new(len);
            for &i in &m {
                fresh.set(i, true);
            }
            prop_assert_eq!(&b, &fresh);
        }

        #[test]
        fn and_or_match_set_model(la in 0usize..300, lb in 0usize..300,
                                  xs in proptest::collection::vec(0usize..320, 0..60),
                                  ys in proptest::collection::vec(0usize..320, 0..60)) {
            let (mut a, mut b) = (Bitmap::new(la), Bitmap::new(lb));
            for &x in &xs { a.set(x, true); }
            for &y in &ys { b.set(y, true); }
            let sa: BTreeSet<usize> = xs.iter().copied().filter(|&x| x < la).collect();
            let sb: BTreeSet<usize> = ys.iter().copied().filter(|&y| y < lb).collect();
            let mut and = a.clone();
            and.and_assign(&b);
            prop_assert_eq!(and.iter_ones().collect::<Vec<_>>(), sa.intersection(&sb).copied().collect::<Vec<_>>());
            let mut or = a.clone();
            or.or_assign(&b);
            let want: Vec<usize> = sa.union(&sb).copied().filter(|&i| i < la).collect();
            prop_assert_eq!(or.iter_ones().collect::<Vec<_>>(), want);
        }
    }
}

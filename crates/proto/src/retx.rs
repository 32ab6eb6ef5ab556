//! Retransmission buffer: the data a sender must keep until every receiver has it.

use crate::{Stats, Time};
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};

/// One buffered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The message.
    pub data: Bytes,
    /// First transmission.
    pub first_sent: Time,
    /// Most recent transmission.
    pub last_sent: Time,
    /// Transmissions so far, the first included.
    pub sends: u32,
}

/// Below this many entries a store grows by one at a time (cheap reallocations of a few
/// entries); beyond, by doubling.
const EXACT_UP_TO: usize = 8;

/// Messages by sequence number, with a limit on how many bytes it holds.
///
/// Kept as a deque sorted by sequence number: messages arrive mostly in order and leave
/// mostly from the front, and a handful of entries (a receiver's store in a simulation of
/// millions) takes one small buffer instead of a B-tree node sized for eleven.
#[derive(Debug, Clone)]
pub struct RetransmitBuffer {
    entries: VecDeque<(u64, Entry)>,
    bytes: usize,
    max_bytes: usize,
}

impl RetransmitBuffer {
    /// A buffer that refuses new entries beyond `max_bytes` of data.
    pub fn new(max_bytes: usize) -> Self {
        RetransmitBuffer {
            entries: VecDeque::new(),
            bytes: 0,
            max_bytes,
        }
    }
    /// Whether `len` more bytes fit.
    pub fn has_room(&self, len: usize) -> bool {
        self.bytes.saturating_add(len) <= self.max_bytes
    }
    /// Record the first transmission of `seq`. Returns `false` (and stores nothing) if the
    /// buffer is full or `seq` is already held.
    pub fn insert(&mut self, seq: u64, data: Bytes, now: Time) -> bool {
        if !self.has_room(data.len()) {
            return false;
        }
        let Err(at) = self.find(seq) else {
            return false;
        };
        self.bytes += data.len();
        let e = Entry {
            data,
            first_sent: now,
            last_sent: now,
            sends: 1,
        };
        // A small store grows one entry at a time (a receiver that buffers a handful of
        // messages keeps exactly those, not the next power of two).
        crate::seqmap::reserve_one_while_small_deque(&mut self.entries, EXACT_UP_TO);
        self.entries.insert(at, (seq, e));
        true
    }
    /// The entry of `seq`, if held.
    pub fn get(&self, seq: u64) -> Option<&Entry> {
        let i = self.find(seq).ok()?;
        self.entries.get(i).map(|(_, e)| e)
    }
    /// Note a retransmission of `seq`; returns its data.
    pub fn mark_resent(&mut self, seq: u64, now: Time) -> Option<Bytes> {
        let i = self.find(seq).ok()?;
        let (_, e) = self.entries.get_mut(i)?;
        e.sends += 1;
        e.last_sent = now;
        Some(e.data.clone())
    }
    /// Drop `seq` (acknowledged by all, or abandoned).
    pub fn remove(&mut self, seq: u64) -> Option<Entry> {
        let i = self.find(seq).ok()?;
        let (_, e) = self.entries.remove(i)?;
        self.bytes -= e.data.len();
        self.release_if_empty();
        Some(e)
    }
    /// Drop every entry below `seq` (a cumulative acknowledgment); returns them in order.
    pub fn remove_below(&mut self, seq: u64) -> Vec<(u64, Entry)> {
        let k = self.entries.partition_point(|(s, _)| *s < seq);
        let gone: Vec<(u64, Entry)> = self.entries.drain(..k).collect();
        self.bytes -= gone.iter().map(|(_, e)| e.data.len()).sum::<usize>();
        self.release_if_empty();
        gone
    }
    /// Sequence numbers held, ascending.
    pub fn seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|(s, _)| *s)
    }
    /// Messages held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Whether no message is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Bytes of data held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// Where `seq` is held (`Ok`) or would go (`Err`).
    fn find(&self, seq: u64) -> Result<usize, usize> {
        match self.entries.back() {
            // The common case: a new message above every held one.
            Some((last, _)) if *last < seq => Err(self.entries.len()),
            None => Err(0),
            _ => self.entries.binary_search_by_key(&seq, |(s, _)| *s),
        }
    }
    /// Emptied: hold no buffer.
    fn release_if_empty(&mut self) {
        if self.entries.is_empty() {
            self.entries = VecDeque::new();
        }
    }

    /// A windowed sender takes a new message `data` from its queue at `now`: it gets the
    /// number `*next_seq` (which advances) and is kept here for retransmission. Its number.
    pub fn keep_new(&mut self, next_seq: &mut u64, data: Bytes, now: Time) -> u64 {
        let seq = *next_seq;
        *next_seq += 1;
        let _ = self.insert(seq, data, now);
        seq
    }

    /// A sender transmitted the data of `seq`: a retransmission counts in `repairs_sent`
    /// and as sent again here, an original in `data_sent`.
    pub fn count_sent(&mut self, seq: u64, now: Time, retransmission: bool, stats: &mut Stats) {
        if retransmission {
            stats.repairs_sent += 1;
            let _ = self.mark_resent(seq, now);
        } else {
            stats.data_sent += 1;
        }
    }

    /// A sender's settle step: take every message `settled` says all receivers have out of
    /// `outstanding` (ascending) and drop its data here; the caller reports each one done and
    /// clears its own per-message state.
    pub fn settle<T>(
        &mut self,
        outstanding: &mut BTreeMap<u64, T>,
        settled: impl Fn(&T) -> bool,
    ) -> Vec<(u64, T)> {
        self.settle_where(outstanding, |_, m| settled(m))
    }

    /// [`RetransmitBuffer::settle`], with `settled` told each message's sequence number too.
    pub fn settle_where<T>(
        &mut self,
        outstanding: &mut BTreeMap<u64, T>,
        settled: impl Fn(u64, &T) -> bool,
    ) -> Vec<(u64, T)> {
        let done: Vec<u64> = outstanding
            .iter()
            .filter(|&(&seq, m)| settled(seq, m))
            .map(|(&seq, _)| seq)
            .collect();
        let mut taken = Vec::with_capacity(done.len());
        for seq in done {
            if let Some(m) = outstanding.remove(&seq) {
                self.remove(seq);
                taken.push((seq, m));
            }
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keep_new_numbers_and_keeps_each_new_message() {
        let mut b = RetransmitBuffer::new(usize::MAX);
        let mut next = 7;
        assert_eq!(
            b.keep_new(&mut next, Bytes::from_static(b"a"), Time::ZERO),
            7
        );
        assert_eq!(
            b.keep_new(&mut next, Bytes::from_static(b"b"), Time::ZERO),
            8
        );
        assert_eq!(next, 9);
        assert_eq!(
            b.get(8).map(|e| e.data.clone()),
            Some(Bytes::from_static(b"b"))
        );
    }

    #[test]
    fn settle_takes_the_settled_messages_and_their_data() {
        let mut b = RetransmitBuffer::new(usize::MAX);
        let mut outstanding = BTreeMap::new();
        for (seq, acks) in [(0u64, 3u32), (1, 1), (2, 3)] {
            b.insert(seq, Bytes::from_static(b"x"), Time::ZERO);
            outstanding.insert(seq, acks);
        }
        assert_eq!(b.settle(&mut outstanding, |&a| a >= 3), [(0, 3), (2, 3)]);
        assert_eq!(outstanding.keys().copied().collect::<Vec<_>>(), [1]);
        assert!(b.get(0).is_none() && b.get(2).is_none());
        assert!(b.get(1).is_some(), "the unsettled message keeps its data");
    }

    #[test]
    fn capacity_and_bookkeeping() {
        let mut b = RetransmitBuffer::new(10);
        assert!(b.insert(0, Bytes::from_static(b"hello"), Time::ZERO));
        assert!(!b.insert(0, Bytes::from_static(b"x"), Time::ZERO));
        assert!(b.insert(1, Bytes::from_static(b"world"), Time::ZERO));
        assert!(!b.insert(2, Bytes::from_static(b"!"), Time::ZERO));
        assert_eq!(
            b.mark_resent(1, Time::from_millis(3)),
            Some(Bytes::from_static(b"world"))
        );
        assert_eq!(
            b.get(1).map(|e| (e.sends, e.last_sent)),
            Some((2, Time::from_millis(3)))
        );
        let gone = b.remove_below(1);
        assert_eq!(gone.len(), 1);
        assert_eq!(b.bytes(), 5);
        assert!(b.insert(2, Bytes::from_static(b"!"), Time::ZERO));
    }

    proptest! {
        #[test]
        fn matches_a_map_model_and_counts_bytes(ops in proptest::collection::vec((0u64..50, 0usize..20, 0u8..3), 0..200)) {
            let mut b = RetransmitBuffer::new(200);
            // A map model: what is held, and each message's length.
            let mut model: BTreeMap<u64, usize> = BTreeMap::new();
            for (seq, len, op) in ops {
                match op {
                    0 => {
                        let room = model.values().sum::<usize>() + len <= 200;
                        let fresh = room && !model.contains_key(&seq);
                        prop_assert_eq!(b.insert(seq, Bytes::from(vec![0u8; len]), Time::ZERO), fresh);
                        if fresh {
                            model.insert(seq, len);
                        }
                    }
                    1 => {
                        prop_assert_eq!(b.remove(seq).map(|e| e.data.len()), model.remove(&seq));
                    }
                    _ => {
                        let keep = model.split_off(&seq);
                        let gone: Vec<(u64, usize)> = std::mem::replace(&mut model, keep).into_iter().collect();
                        let got: Vec<(u64, usize)> = b.remove_below(seq).into_iter().map(|(s, e)| (s, e.data.len())).collect();
                        prop_assert_eq!(got, gone);
                    }
                }
                prop_assert_eq!(b.seqs().collect::<Vec<_>>(), model.keys().copied().collect::<Vec<_>>());
                let sum: usize = b.seqs().filter_map(|s| b.get(s)).map(|e| e.data.len()).sum();
                prop_assert_eq!(b.bytes(), sum);
                let seqs: Vec<u64> = b.seqs().collect();
                prop_assert!(seqs.windows(2).all(|w| w[0] < w[1]), "held in order, once");
                prop_assert!(b.bytes() <= 200);
            }
        }
    }
}

//! The event kernel: a priority queue ordered by (time, insertion order).
//!
//! Ties in time are served first-in first-out, so a run never depends on how the queue breaks
//! ties. One refinement: events scheduled with [`Kernel::schedule_late`] run after all
//! ordinary events of the same instant (in insertion order among themselves). Time is integer
//! nanoseconds ([`Time`]); there is no floating-point time anywhere.
//!
//! The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan): the kernel never schedules
//! before now, so every pending time is at least the reference time `last` (the time of the
//! earliest pending event once it is found), and an event sits in bucket `b` = the position
//! of the highest bit in which its time differs from `last`. Bucket 0 holds the events at
//! `last` itself, sorted by their insertion key; the others are unsorted. When bucket 0 runs
//! dry, the lowest non-empty bucket is emptied: `last` becomes its earliest time and its
//! events move to strictly lower buckets, so each event moves at most 64 times and in
//! practice a handful. Pushes and the moves are appends to vectors: no comparisons along a
//! heap path, no cache-missing walk down a tree of 10^5 entries.

use rmcast_proto::Time;
use std::collections::VecDeque;

const LATE: u64 = 1 << 63;
/// Buckets: 0 for time == `last`, then 1..=64 by the highest differing bit.
const BUCKETS: usize = 65;

#[derive(Clone, Copy)]
struct Entry<E> {
    at: u64,
    /// Insertion number, with the top bit set for late events.
    key: u64,
    ev: E,
}

/// The bucket of time `at` relative to reference time `last` (`at >= last`).
#[inline(always)]
fn bucket(at: u64, last: u64) -> usize {
    (64 - (at ^ last).leading_zeros()) as usize
}

/// A bucket emptied by a refill keeps its buffer up to this many entries.
const KEEP_BUCKET: usize = 1 << 12;

/// A deterministic event queue (a radix heap over times, FIFO within a time). `E` is the
/// event payload.
pub struct Kernel<E: Copy> {
    /// Events at time `last`, ascending by key (ordinary ones in insertion order, then late
    /// ones in insertion order).
    now_q: VecDeque<Entry<E>>,
    /// Buckets 1..=64 (index 0 unused: bucket 0 is `now_q`).
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit `b - 1` set: `buckets[b]` is not empty.
    occupied: u64,
    /// The reference time: no pending event is earlier.
    last: u64,
    len: usize,
    seq: u64,
    now: Time,
    processed: u64,
}

impl<E: Copy> Default for Kernel<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Kernel<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Kernel {
            now_q: VecDeque::new(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: 0,
            len: 0,
            seq: 0,
            now: Time::ZERO,
            processed: 0,
        }
    }

    /// The time of the event being processed (or last processed).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn push(&mut self, at: Time, late: bool, ev: E) {
        let at = at.max(self.now).as_nanos();
        let key = self.seq | if late { LATE } else { 0 };
        self.seq += 1;
        if at < self.last {
            // Only after `peek_time` found an event later than now and something was then
            // scheduled before it: re-base the buckets on the new earliest time.
            self.rebase(at);
        }
        let e = Entry { at, key, ev };
        self.len += 1;
        if at == self.last {
            // The newest key: after every ordinary event at this instant; an ordinary event
            // goes before the late ones.
            if late {
                self.now_q.push_back(e);
            } else {
                let mut i = self.now_q.len();
                while i > 0 && self.now_q[i - 1].key & LATE != 0 {
                    i -= 1;
                }
                self.now_q.insert(i, e);
            }
        } else {
            let b = bucket(at, self.last);
            self.buckets[b].push(e);
            self.occupied |= 1 << (b - 1);
        }
    }

    /// Make `at` (earlier than every pending event) the reference time and re-bucket.
    #[cold]
    fn rebase(&mut self, at: u64) {
        let mut all: Vec<Entry<E>> = self.now_q.drain(..).collect();
        for b in self.buckets.iter_mut() {
            all.append(b);
        }
        self.occupied = 0;
        self.last = at;
        for e in all {
            // Every pending event is later than `at`: bucket 1 or above.
            let b = bucket(e.at, at);
            self.buckets[b].push(e);
            self.occupied |= 1 << (b - 1);
        }
    }

    /// Schedule `ev` at `at`. An instant in the past is clamped to now: the kernel never
    /// moves time backwards.
    pub fn schedule(&mut self, at: Time, ev: E) {
        self.push(at, false, ev);
    }

    /// Schedule `ev` at the *end* of instant `at`: after every ordinary event at `at`, even
    /// ones scheduled later. Late events at the same instant are FIFO among themselves. The
    /// bus uses this to gather every transmission request made at an instant before it
    /// decides between a lone transmission and a collision.
    pub fn schedule_late(&mut self, at: Time, ev: E) {
        self.push(at, true, ev);
    }

    /// Fill `now_q` from the lowest non-empty bucket if it is empty. Returns false if no
    /// event is pending.
    #[inline]
    fn refill(&mut self) -> bool {
        if !self.now_q.is_empty() {
            return true;
        }
        if self.occupied == 0 {
            return false;
        }
        let b = self.occupied.trailing_zeros() as usize + 1;
        let mut src = std::mem::take(&mut self.buckets[b]);
        self.occupied &= !(1 << (b - 1));
        let last = src.iter().map(|e| e.at).min().unwrap_or(self.last);
        self.last = last;
        // `now_q` is empty: the events at `last` go straight into it, then get sorted.
        for e in src.drain(..) {
            if e.at == last {
                self.now_q.push_back(e);
            } else {
                let nb = bucket(e.at, last);
                self.buckets[nb].push(e);
                self.occupied |= 1 << (nb - 1);
            }
        }
        // Keep the bucket's allocation for its next use, unless it is large: a run of
        // millions of nodes would otherwise keep room for all its events in several buckets.
        if src.capacity() <= KEEP_BUCKET {
            self.buckets[b] = src;
        }
        if self.now_q.len() > 1 {
            self.now_q.make_contiguous().sort_unstable_by_key(|e| e.key);
        }
        true
    }

    /// Time of the next pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.refill() {
            Some(Time::from_nanos(self.last))
        } else {
            None
        }
    }

    /// Remove the next event and advance time to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if !self.refill() {
            return None;
        }
        let top = self.now_q.pop_front()?;
        self.len -= 1;
        self.now = Time::from_nanos(top.at);
        self.processed += 1;
        Some((self.now, top.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_by_time_then_insertion() {
        let mut k = Kernel::new();
        for (ns, e) in [(5, 'a'), (3, 'b'), (5, 'c'), (3, 'd'), (4, 'e')] {
            k.schedule(Time::from_nanos(ns), e);
        }
        let order: Vec<char> = std::iter::from_fn(|| k.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'e', 'a', 'c']);
        assert_eq!(k.now(), Time::from_nanos(5));
        assert_eq!(k.processed(), 5);
    }

    #[test]
    fn late_events_close_the_instant() {
        let mut k = Kernel::new();
        k.schedule_late(Time::from_nanos(5), 'L');
        k.schedule(Time::from_nanos(5), 'a');
        k.schedule(Time::from_nanos(6), 'z');
        let (_, e) = k.pop().unwrap();
        assert_eq!(e, 'a');
        k.schedule(Time::from_nanos(5), 'b'); // scheduled during the instant
        let order: Vec<char> = std::iter::from_fn(|| k.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'L', 'z']);
    }

    #[test]
    fn matches_a_reference_model_on_random_workloads() {
        // Reference: an ordered set of (time, late, insertion number).
        let mut rng = crate::rng::SimRng::new(3, 0, 0, 0);
        let mut k = Kernel::new();
        let mut model = std::collections::BTreeSet::new();
        let mut id = 0u64;
        for round in 0..5000 {
            for _ in 0..rng.below(5) {
                let at = k.now().as_nanos() + rng.below(50);
                let late = rng.chance(0.2);
                if late {
                    k.schedule_late(Time::from_nanos(at), id);
                } else {
                    k.schedule(Time::from_nanos(at), id);
                }
                model.insert((at, late, id));
                id += 1;
            }
            if round % 3 != 0 {
                let want = model.pop_first().map(|(t, _, i)| (Time::from_nanos(t), i));
                assert_eq!(k.pop(), want);
                assert_eq!(k.len(), model.len());
            }
        }
        while let Some((t, _, i)) = model.pop_first() {
            assert_eq!(k.pop(), Some((Time::from_nanos(t), i)));
        }
        assert!(k.pop().is_none());
    }

    #[test]
    fn scheduling_before_a_peeked_event_rebases() {
        let mut k = Kernel::new();
        k.schedule(Time::from_nanos(100), 'x');
        k.schedule(Time::from_nanos(1000), 'y');
        assert_eq!(k.peek_time(), Some(Time::from_nanos(100)));
        // Now is still 0: an event at 50 comes first, one at 100 after 'x'.
        k.schedule(Time::from_nanos(50), 'a');
        k.schedule(Time::from_nanos(100), 'b');
        k.schedule_late(Time::from_nanos(50), 'L');
        k.schedule(Time::from_nanos(50), 'c');
        let order: Vec<(u64, char)> =
            std::iter::from_fn(|| k.pop().map(|(t, e)| (t.as_nanos(), e))).collect();
        assert_eq!(
            order,
            vec![
                (50, 'a'),
                (50, 'c'),
                (50, 'L'),
                (100, 'x'),
                (100, 'b'),
                (1000, 'y')
            ]
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// Schedule at now + delta (`late`: at the end of that instant; `back`: delta
        /// before now, clamped).
        Schedule {
            delta: u64,
            late: bool,
            back: bool,
        },
        Pop,
        Peek,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            // Small deltas: many equal times; large ones: many buckets.
            4 => (0u64..4, any::<bool>(), proptest::bool::weighted(0.05))
                .prop_map(|(delta, late, back)| Op::Schedule { delta, late, back }),
            2 => (0u64..1 << 40, any::<bool>())
                .prop_map(|(delta, late)| Op::Schedule { delta, late, back: false }),
            1 => Just(Op::Schedule { delta: u64::MAX / 4, late: false, back: false }),
            5 => Just(Op::Pop),
            1 => Just(Op::Peek),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// The kernel pops in exactly the order of a reference `BinaryHeap` ordered by
        /// (time, late, insertion number), times clamped to now, whatever the schedule.
        #[test]
        fn pops_in_the_order_of_a_reference_heap(
            ops in proptest::collection::vec(op(), 1..600)
        ) {
            use std::cmp::Reverse;
            let mut k = Kernel::new();
            let mut model = std::collections::BinaryHeap::new();
            let mut now = 0u64;
            for (id, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Schedule { delta, late, back } => {
                        let at = if back { now.saturating_sub(delta + 1) } else { now.saturating_add(delta) };
                        if late {
                            k.schedule_late(Time::from_nanos(at), id);
                        } else {
                            k.schedule(Time::from_nanos(at), id);
                        }
                        model.push(Reverse((at.max(now), late, id)));
                    }
                    Op::Pop => {
                        let want = model.pop().map(|Reverse((t, _, i))| (Time::from_nanos(t), i));
                        if let Some((t, _)) = want {
                            now = t.as_nanos();
                        }
                        proptest::prop_assert_eq!(k.pop(), want);
                    }
                    Op::Peek => {
                        let want = model.peek().map(|Reverse((t, _, _))| Time::from_nanos(*t));
                        proptest::prop_assert_eq!(k.peek_time(), want);
                    }
                }
                proptest::prop_assert_eq!(k.len(), model.len());
            }
            while let Some(Reverse((t, _, i))) = model.pop() {
                proptest::prop_assert_eq!(k.pop(), Some((Time::from_nanos(t), i)));
            }
            proptest::prop_assert!(k.pop().is_none());
        }
    }

    #[test]
    fn past_is_clamped_to_now() {
        let mut k = Kernel::new();
        k.schedule(Time::from_nanos(10), 1);
        k.pop();
        k.schedule(Time::from_nanos(2), 2);
        assert_eq!(k.pop(), Some((Time::from_nanos(10), 2)));
    }
}

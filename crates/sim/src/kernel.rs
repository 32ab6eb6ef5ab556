//! The event kernel: a priority queue ordered by (time, insertion order).
//!
//! Ties in time are served first-in first-out, so a run never depends on how the heap breaks
//! ties. One refinement: events scheduled with [`Kernel::schedule_late`] run after all
//! ordinary events of the same instant (in insertion order among themselves). Time is integer nanoseconds ([`Time`]); there is no floating-point time anywhere.

use rmcast_proto::Time;

const LATE: u64 = 1 << 63;
/// Children per heap node.
const ARITY: usize = 4;

#[derive(Clone, Copy)]
struct Entry<E> {
    at: u64,
    /// Insertion number, with the top bit set for late events.
    key: u64,
    ev: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn before(&self, o: &Self) -> bool {
        (self.at, self.key) < (o.at, o.key)
    }
}

/// A deterministic event queue (a 4-ary min-heap). `E` is the event payload.
pub struct Kernel<E: Copy> {
    heap: Vec<Entry<E>>,
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
            heap: Vec::new(),
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
        self.heap.len()
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    fn push(&mut self, at: Time, late: bool, ev: E) {
        let at = at.max(self.now).as_nanos();
        let key = self.seq | if late { LATE } else { 0 };
        self.seq += 1;
        self.heap.push(Entry { at, key, ev });
        self.sift_up(self.heap.len() - 1);
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

    /// Time of the next pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| Time::from_nanos(e.at))
    }

    /// Remove the next event and advance time to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first_mut() {
            Some(first) => {
                let top = *first;
                *first = last;
                self.sift_down_to_bottom();
                top
            }
            None => last,
        };
        self.now = Time::from_nanos(top.at);
        self.processed += 1;
        Some((self.now, top.ev))
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let h = &mut self.heap;
        let x = h[i];
        while i > 0 {
            let p = (i - 1) / ARITY;
            if x.before(&h[p]) {
                h[i] = h[p];
                i = p;
            } else {
                break;
            }
        }
        h[i] = x;
    }

    /// Move the root's hole down to a leaf along the smallest children, then put the
    /// displaced last element there and sift it up (it usually belongs near the bottom).
    #[inline]
    fn sift_down_to_bottom(&mut self) {
        let h = &mut self.heap;
        let n = h.len();
        let x = h[0];
        let mut i = 0;
        loop {
            let c = ARITY * i + 1;
            if c >= n {
                break;
            }
            let end = (c + ARITY).min(n);
            let mut m = c;
            for j in c + 1..end {
                if h[j].before(&h[m]) {
                    m = j;
                }
            }
            h[i] = h[m];
            i = m;
        }
        h[i] = x;
        self.sift_up(i);
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
    fn past_is_clamped_to_now() {
        let mut k = Kernel::new();
        k.schedule(Time::from_nanos(10), 1);
        k.pop();
        k.schedule(Time::from_nanos(2), 2);
        assert_eq!(k.pop(), Some((Time::from_nanos(10), 2)));
    }
}

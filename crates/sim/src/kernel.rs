//! The event kernel: a priority queue ordered by (time, insertion order).
//!
//! Ties in time are served first-in first-out, so a run never depends on how the heap breaks
//! ties. One refinement: events scheduled with [`Kernel::schedule_late`] run after all
//! ordinary events of the same instant (in insertion order among themselves). Time is integer nanoseconds ([`Time`]); there is no floating-point time anywhere.

use rmcast_proto::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: u64,
    late: bool,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.late == o.late && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
        (o.at, o.late, o.seq).cmp(&(self.at, self.late, self.seq))
    }
}

/// A deterministic event queue. `E` is the event payload.
pub struct Kernel<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    processed: u64,
}

impl<E> Default for Kernel<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Kernel<E> {
    pub fn new() -> Self {
        Kernel {
            heap: BinaryHeap::new(),
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

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `ev` at `at`. An instant in the past is clamped to now: the kernel never
    /// moves time backwards.
    pub fn schedule(&mut self, at: Time, ev: E) {
        let at = at.max(self.now).as_nanos();
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Entry {
            at,
            late: false,
            seq,
            ev,
        });
    }

    /// Schedule `ev` at the *end* of instant `at`: after every ordinary event at `at`, even
    /// ones scheduled later. Late events at the same instant are FIFO among themselves. The
    /// bus uses this to gather every transmission request made at an instant before it
    /// decides between a lone transmission and a collision.
    pub fn schedule_late(&mut self, at: Time, ev: E) {
        let at = at.max(self.now).as_nanos();
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Entry {
            at,
            late: true,
            seq,
            ev,
        });
    }

    /// Time of the next pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| Time::from_nanos(e.at))
    }

    /// Remove the next event and advance time to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.now = Time::from_nanos(e.at);
        self.processed += 1;
        Some((self.now, e.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_by_time_then_insertion() {
        let mut k = Kernel::new();
        k.schedule(Time::from_nanos(5), 'a');
        k.schedule(Time::from_nanos(3), 'b');
        k.schedule(Time::from_nanos(5), 'c');
        k.schedule(Time::from_nanos(3), 'd');
        k.schedule(Time::from_nanos(4), 'e');
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
    fn past_is_clamped_to_now() {
        let mut k = Kernel::new();
        k.schedule(Time::from_nanos(10), 1);
        k.pop();
        k.schedule(Time::from_nanos(2), 2);
        assert_eq!(k.pop(), Some((Time::from_nanos(10), 2)));
    }
}

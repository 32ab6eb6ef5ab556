//! A receiver's budget of loss recovery per round, shared by `pgm`'s NAKs and `srm`'s
//! REQUESTs: in one round at most [`REQUESTS_PER_ROUND`] requests go out and at most as many
//! new losses are detected; the other requests wait for later rounds, oldest first, and the
//! sequence numbers not yet examined wait as one range. Losses are never forgotten, only
//! detected and asked for over several rounds, and a round's work is bounded by the budget,
//! not by how far ahead a leading edge was announced.
//!
//! The two protocols that use it are the ones whose receivers learn a leading edge from a
//! control packet (PGM's SPM and NCF, SRM's SESSION).

use crate::timer::TimerSet;
use crate::window::SeqWindow;
use crate::Time;
use core::ops::Range;
use core::time::Duration;
use std::collections::VecDeque;

/// Most repair requests (PGM NAKs, SRM REQUESTs) one receiver sends in one round, and most
/// new losses it detects in one; the rest wait for the next rounds.
///
/// A defence limit, not a protocol parameter (neither RFC 3208 nor the SRM paper has one):
/// one forged or corrupted packet announcing a leading edge far ahead — a PGM SPM or NCF, an
/// SRM SESSION's `next_seq` — but still inside the 65,536-packet receive window makes a
/// receiver detect up to 65,536 losses at once, and without a budget send as many datagrams in
/// one instant and again every round (the `receiver` fuzz target's slow inputs,
/// `docs/fuzzing.md`). 1,024 is far above what real loss asks for in one round (a round is a
/// NAK repeat interval, or SRM's first request interval), so no scenario of the simulator
/// reaches it, and far below the window, so a storm costs a 64th per round.
pub const REQUESTS_PER_ROUND: usize = 1024;

/// The round a receiver is in, the losses whose request waits for a later one, and the
/// sequence numbers known to exist but not yet examined for loss.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestBudget {
    /// Requests still allowed in the current round.
    left: usize,
    /// New losses still allowed in the current round.
    fresh: usize,
    /// When the current round ends (the next one starts with the first request after it).
    ends: Time,
    /// Losses whose request the budget deferred, oldest first. An entry may be stale (its
    /// data or an answer came meanwhile): the owner checks before asking again.
    waiting: VecDeque<u64>,
    /// Known to exist (below a leading edge the receiver learnt), not yet examined.
    unseen: Range<u64>,
}

impl RequestBudget {
    /// A new round of `len` (at least 1 ns, so a round timer never re-fires at the same
    /// instant) starts at `now` if the current one is over; a current round ends no later
    /// than `len` from `now`. The length is the owner's repeat interval, which falls once
    /// round trips are measured: the first round, begun on the initial estimate (PGM's 500
    /// ms, before any sample), would otherwise hold the losses past its budget for that
    /// long though the measured interval is a few milliseconds. The owner re-arms its round
    /// timer ([`RequestBudget::arm`]) after each call, as the round may have been cut.
    fn roll(&mut self, now: Time, len: Duration) {
        let len = len.max(Duration::from_nanos(1));
        if now >= self.ends {
            self.ends = now + len;
            self.left = REQUESTS_PER_ROUND;
            self.fresh = REQUESTS_PER_ROUND;
        } else {
            self.ends = self.ends.min(now + len);
        }
    }

    /// Whether the request for `seq` may go out at `now`, in a round of `len`; if not, `seq`
    /// waits for a later round (see [`RequestBudget::arm`]).
    pub(crate) fn admit(&mut self, now: Time, len: Duration, seq: u64) -> bool {
        self.roll(now, len);
        if self.left == 0 {
            self.waiting.push_back(seq);
            return false;
        }
        self.left -= 1;
        true
    }

    /// When the next round starts, if requests or unexamined sequence numbers wait for it.
    fn next_round(&self) -> Option<Time> {
        (!self.waiting.is_empty() || !self.unseen.is_empty()).then_some(self.ends)
    }

    /// Packets below `next` exist (a leading edge learnt; `known` counts those known so far,
    /// as in [`SeqWindow::newly_known`]): the owner examines the new ones through
    /// [`RequestBudget::next_unseen`]. Only up to the end of the receive `window`, where data
    /// can still be accepted: a forged edge far ahead must not make a receiver track up to
    /// 2^64 losses (the next edge announces what the moving window makes room for).
    pub(crate) fn learn(&mut self, window: &SeqWindow, known: &mut u64, next: u64) {
        let end = window.base().saturating_add(window.capacity() as u64);
        self.add_unseen(window.newly_known(known, next.min(end)));
    }

    fn add_unseen(&mut self, known: Range<u64>) {
        if self.unseen.is_empty() {
            self.unseen = known;
        } else {
            self.unseen.end = self.unseen.end.max(known.end);
        }
    }

    /// The next sequence number to examine for loss, while the round (of `len`, started at
    /// `now` if due) may detect more; those below `base` (delivered meanwhile) are skipped.
    /// The owner calls [`RequestBudget::detected`] for each that it finds lost.
    pub(crate) fn next_unseen(&mut self, now: Time, len: Duration, base: u64) -> Option<u64> {
        self.roll(now, len);
        self.unseen.start = self.unseen.start.max(base);
        if self.fresh == 0 || self.unseen.is_empty() {
            return None;
        }
        let s = self.unseen.start;
        self.unseen.start += 1;
        Some(s)
    }

    /// One new loss detected in this round.
    pub(crate) fn detected(&mut self) {
        self.fresh = self.fresh.saturating_sub(1);
    }

    /// Arm the owner's round timer `key` for the next round if requests wait for it, and
    /// cancel it if none do.
    pub(crate) fn arm<K: Ord + Copy>(&self, timers: &mut TimerSet<K>, key: K) {
        match self.next_round() {
            Some(at) => timers.set(key, at),
            None => {
                timers.cancel(key);
            }
        }
    }

    /// At the round timer: the oldest waiting loss while the round (of `len`, started at
    /// `now` if due) has room. The owner asks for it through [`RequestBudget::admit`] if it is
    /// still missing and nothing else is scheduled for it.
    pub(crate) fn next_waiting(&mut self, now: Time, len: Duration) -> Option<u64> {
        self.roll(now, len);
        if self.left == 0 {
            return None;
        }
        self.waiting.pop_front()
    }
}

/// Test helper of the `pgm` and `srm` receivers' window tests: how many losses `agent`
/// reported ([`Event::LossDetected`](crate::Event::LossDetected)) since its events were last
/// drained.
#[cfg(test)]
pub(crate) fn losses_detected(agent: &mut dyn crate::Agent) -> usize {
    std::iter::from_fn(|| agent.poll_event())
        .filter(|e| matches!(e, crate::Event::LossDetected { .. }))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_admits_the_budget_and_the_rest_waits_in_order() {
        let mut b = RequestBudget::default();
        let len = Duration::from_millis(10);
        let now = Time::from_millis(1);
        let admitted = (0..REQUESTS_PER_ROUND as u64 + 3)
            .filter(|&s| b.admit(now, len, s))
            .count();
        assert_eq!(admitted, REQUESTS_PER_ROUND);
        assert_eq!(b.next_round(), Some(Time::from_millis(11)));
        assert_eq!(
            b.next_waiting(now, len),
            None,
            "no room before the next round"
        );
        let next = Time::from_millis(11);
        let again: Vec<u64> = std::iter::from_fn(|| b.next_waiting(next, len)).collect();
        let first = REQUESTS_PER_ROUND as u64;
        assert_eq!(again, vec![first, first + 1, first + 2], "oldest first");
        assert_eq!(b.next_round(), None);
    }

    #[test]
    fn a_round_begun_on_a_long_estimate_ends_once_a_shorter_one_is_measured() {
        let mut b = RequestBudget::default();
        let start = Time::from_millis(1);
        let (initial, measured) = (Duration::from_millis(500), Duration::from_millis(4));
        for s in 0..REQUESTS_PER_ROUND as u64 + 1 {
            b.admit(start, initial, s);
        }
        assert_eq!(b.next_round(), Some(Time::from_millis(501)));
        // A request asked 10 ms in, with the interval now measured at 4 ms: the round ends
        // 4 ms later, not at 501 ms.
        let later = Time::from_millis(11);
        assert!(
            !b.admit(later, measured, 9_999),
            "the budget is still spent"
        );
        assert_eq!(b.next_round(), Some(Time::from_millis(15)));
        // A longer length never stretches the round.
        b.admit(later, initial, 10_000);
        assert_eq!(b.next_round(), Some(Time::from_millis(15)));
        let next = Time::from_millis(15);
        let again: Vec<u64> = std::iter::from_fn(|| b.next_waiting(next, measured)).collect();
        assert_eq!(again, vec![REQUESTS_PER_ROUND as u64, 9_999, 10_000]);
    }

    #[test]
    fn a_round_detects_the_budget_and_the_rest_of_a_leading_edge_waits_as_a_range() {
        let mut b = RequestBudget::default();
        let len = Duration::from_millis(10);
        b.add_unseen(0..60_000);
        let mut examined = Vec::new();
        while let Some(s) = b.next_unseen(Time::ZERO, len, 0) {
            examined.push(s);
            if s % 2 == 0 {
                b.detected(); // odd ones had arrived: examined, not counted
            }
        }
        assert_eq!(examined.len(), 2 * REQUESTS_PER_ROUND - 1);
        assert_eq!(b.next_round(), Some(Time::from_millis(10)));
        b.add_unseen(60_000..60_010);
        // Ten rounds later the base moved past some: they are skipped.
        let next = b.next_unseen(Time::from_millis(100), len, 50_000);
        assert_eq!(next, Some(50_000));
    }
}

//! The polling planner of §2.3 and §2.4: epochs of length ε, the response quota `RQ`, the
//! anticipated response count `ARC` and the planned polling table `PPT`.
//!
//! Children are identified by their index in the sender's child table. Times are [`Time`];
//! epoch `n` is the interval `[n·ε, (n+1)·ε)`.
//!
//! Invariant (tested): `ARC[n] <= RQ` for every epoch `n`, whatever the sequence of normal
//! plans, priority repolls, cancellations and polls taken.

use crate::Time;
use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet};

/// One row of the planned polling table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    /// Estimated sending time `est_i`.
    pub est: Time,
    /// The epoch in which the response is expected.
    pub epoch: u64,
    /// High priority: the child is in REPOLL.
    pub repoll: bool,
}

/// ARC and PPT together.
#[derive(Debug, Clone)]
pub struct Planner {
    epoch_ns: u64,
    rq: u32,
    /// Anticipated responses per epoch (only epochs with a non-zero count are stored).
    arc: BTreeMap<u64, u32>,
    ppt: BTreeMap<usize, Planned>,
    by_est: BTreeSet<(Time, usize)>,
    by_epoch: BTreeSet<(u64, Time, usize)>,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Planner {
    /// `epoch` must be non-zero and `rq` at least 1 (the sender's configuration checks both).
    pub fn new(epoch: Duration, rq: u32) -> Self {
        Planner {
            epoch_ns: ns(epoch).max(1),
            rq: rq.max(1),
            arc: BTreeMap::new(),
            ppt: BTreeMap::new(),
            by_est: BTreeSet::new(),
            by_epoch: BTreeSet::new(),
        }
    }

    /// The response quota RQ: responses planned per epoch at most.
    pub fn rq(&self) -> u32 {
        self.rq
    }

    /// `ARC[n]`.
    pub fn arc(&self, n: u64) -> u32 {
        self.arc.get(&n).copied().unwrap_or(0)
    }

    /// Every epoch with anticipated responses, with its count.
    pub fn arc_entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.arc.iter().map(|(&n, &c)| (n, c))
    }

    /// The epoch containing `t`.
    pub fn epoch_of(&self, t: Time) -> u64 {
        t.as_nanos() / self.epoch_ns
    }

    fn epoch_start(&self, n: u64) -> Time {
        Time::from_nanos(n.saturating_mul(self.epoch_ns))
    }

    /// `est = max(clock, n·ε − RTT)`.
    fn est(&self, n: u64, clock: Time, rtt: Duration) -> Time {
        clock.max(self.epoch_start(n) - rtt)
    }

    /// `child`'s planned poll, if it has one.
    pub fn planned(&self, child: usize) -> Option<Planned> {
        self.ppt.get(&child).copied()
    }

    /// Whether `child` has a planned poll.
    pub fn is_planned(&self, child: usize) -> bool {
        self.ppt.contains_key(&child)
    }

    /// Children with a planned poll.
    pub fn len(&self) -> usize {
        self.ppt.len()
    }

    /// Whether no poll is planned.
    pub fn is_empty(&self) -> bool {
        self.ppt.is_empty()
    }

    /// Earliest `est` in the PPT.
    pub fn next_est(&self) -> Option<Time> {
        self.by_est.first().map(|&(t, _)| t)
    }

    /// Record `child`'s row for a response expected in epoch `n` (its quota already taken).
    fn place(&mut self, child: usize, n: u64, clock: Time, rtt: Duration, repoll: bool) -> Planned {
        let p = Planned {
            est: self.est(n, clock, rtt),
            epoch: n,
            repoll,
        };
        self.insert(child, p);
        p
    }

    fn insert(&mut self, child: usize, p: Planned) {
        self.ppt.insert(child, p);
        self.by_est.insert((p.est, child));
        self.by_epoch.insert((p.epoch, p.est, child));
    }

    /// Remove `child`'s row without touching ARC.
    fn unlink(&mut self, child: usize) -> Option<Planned> {
        let p = self.ppt.remove(&child)?;
        self.by_est.remove(&(p.est, child));
        self.by_epoch.remove(&(p.epoch, p.est, child));
        Some(p)
    }

    fn arc_inc(&mut self, n: u64) {
        *self.arc.entry(n).or_insert(0) += 1;
    }

    fn arc_dec(&mut self, n: u64) {
        if let Some(c) = self.arc.get_mut(&n) {
            *c = c.saturating_sub(1);
            if *c == 0 {
                self.arc.remove(&n);
            }
        }
    }

    /// Normal planning (§2.3 (i)–(iii)): the earliest epoch `E_n` containing or following
    /// `clock + RTT_i` with `ARC[n] < RQ`; `ARC[n] += 1`; `est_i = max(clock, n·ε − RTT_i)`.
    /// A child already in the PPT keeps its row (at most one planned poll per child).
    pub fn plan(&mut self, child: usize, clock: Time, rtt: Duration) -> Planned {
        if let Some(p) = self.planned(child) {
            return p;
        }
        let mut n = self.epoch_of(clock + rtt);
        while self.arc(n) >= self.rq {
            n += 1;
        }
        self.arc_inc(n);
        self.place(child, n, clock, rtt, false)
    }

    /// Priority planning of a repoll (§2.4): starting with the epoch `E_m` the response would
    /// reach if the poll went now, take the first epoch that either (c1) has quota left, or
    /// (c2) holds a response planned for a child not in REPOLL, whose quota is stolen (that
    /// child is then planned again normally). A row `child` already had is replaced (its
    /// quota released first). Returns the new row and the child stolen from, if any.
    ///
    /// Among several victims in one epoch the one planned latest (largest `est`, then highest
    /// index) is chosen — the paper does not say which.
    pub fn plan_repoll(
        &mut self,
        child: usize,
        clock: Time,
        rtt: Duration,
        rtt_of: impl Fn(usize) -> Duration,
    ) -> (Planned, Option<usize>) {
        self.cancel(child);
        let mut m = self.epoch_of(clock + rtt);
        loop {
            if self.arc(m) < self.rq {
                self.arc_inc(m);
                return (self.place(child, m, clock, rtt, true), None);
            }
            let victim = self
                .by_epoch
                .range((m, Time::ZERO, 0)..=(m, Time::MAX, usize::MAX))
                .rev()
                .map(|&(_, _, c)| c)
                .find(|c| self.ppt.get(c).is_some_and(|p| !p.repoll));
            if let Some(v) = victim {
                // The slot passes from v to child: ARC[m] is unchanged.
                self.unlink(v);
                let p = self.place(child, m, clock, rtt, true);
                self.plan(v, clock, rtt_of(v));
                return (p, Some(v));
            }
            m += 1;
        }
    }

    /// Drop `child`'s planned poll and release its quota.
    pub fn cancel(&mut self, child: usize) -> Option<Planned> {
        let p = self.unlink(child)?;
        self.arc_dec(p.epoch);
        Some(p)
    }

    /// Remove from the PPT every child with `est <= t` that `include` accepts, in `est` order:
    /// their polls are being sent. Their quota stays counted (the responses are anticipated).
    pub fn take_due(&mut self, t: Time, include: impl Fn(usize) -> bool) -> Vec<usize> {
        self.take_due_rows(t, include)
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    }

    /// [`take_due`](Self::take_due), returning the rows too (for [`restore`](Self::restore)).
    pub fn take_due_rows(
        &mut self,
        t: Time,
        include: impl Fn(usize) -> bool,
    ) -> Vec<(usize, Planned)> {
        let due: Vec<usize> = self
            .by_est
            .range(..=(t, usize::MAX))
            .map(|&(_, c)| c)
            .filter(|&c| include(c))
            .collect();
        due.into_iter()
            .filter_map(|c| self.unlink(c).map(|p| (c, p)))
            .collect()
    }

    /// Put back a row taken by [`take_due_rows`](Self::take_due_rows) whose poll could not be
    /// sent after all (ARC already counts it). Ignored if the child was planned meanwhile.
    pub fn restore(&mut self, child: usize, p: Planned) {
        if !self.ppt.contains_key(&child) {
            self.insert(child, p);
        }
    }

    /// Drop every planned poll (nothing is left to acknowledge), releasing the quota.
    pub fn clear(&mut self) {
        let all: Vec<usize> = self.ppt.keys().copied().collect();
        for c in all {
            self.cancel(c);
        }
    }

    /// Forget ARC entries of epochs that ended before `clock` (nothing can be planned there).
    pub fn prune(&mut self, clock: Time) {
        let now = self.epoch_of(clock);
        let keep = self.arc.split_off(&now);
        self.arc = keep;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Duration = Duration::from_millis(1);

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn normal_planning_follows_the_paper() {
        // ε = 10 ms, RQ = 3 (Figure 2's quota).
        let mut p = Planner::new(10 * MS, 3);
        // RTT 25 ms from clock 100 ms: earliest epoch containing 125 ms is E_12; est = clock.
        let a = p.plan(0, ms(100), 25 * MS);
        assert_eq!((a.epoch, a.est), (12, ms(100)));
        p.plan(1, ms(100), 25 * MS);
        p.plan(2, ms(100), 25 * MS);
        assert_eq!(p.arc(12), 3);
        // E_12 is full: the fourth goes to E_13 and is sent at 13·ε − RTT = 105 ms, so that
        // its response arrives at the start of E_13.
        let d = p.plan(3, ms(100), 25 * MS);
        assert_eq!((d.epoch, d.est), (13, ms(105)));
        // At most one planned poll per child.
        assert_eq!(p.plan(3, ms(200), MS), d);
        assert_eq!(p.arc(13), 1);
        assert_eq!(p.next_est(), Some(ms(100)));
        // Taking the due polls at 100 ms leaves the 105 ms one; ARC is unchanged.
        assert_eq!(p.take_due(ms(100), |_| true), vec![0, 1, 2]);
        assert_eq!(p.arc(12), 3);
        assert_eq!(p.next_est(), Some(ms(105)));
        // A filter keeps children outside a packet's destination set planned.
        assert!(p.take_due(ms(200), |c| c != 3).is_empty());
        assert_eq!(p.cancel(3).map(|x| x.epoch), Some(13));
        assert_eq!(p.arc(13), 0);
    }

    #[test]
    fn repoll_takes_free_quota_then_steals_from_a_normal_poll() {
        let mut p = Planner::new(10 * MS, 2);
        let rtt = |_| 5 * MS;
        // E_1 (10–20 ms) holds two normal polls planned at clock 8 ms with RTT 5 ms.
        p.plan(0, ms(8), 5 * MS);
        p.plan(1, ms(8), 5 * MS);
        assert_eq!(p.arc(1), 2);
        // Child 2 repolls at clock 9 ms (response would land in E_1): (c1) fails, (c2)
        // succeeds; it steals from the latest-planned normal child (1), which is re-planned
        // normally into E_2.
        let (r, victim) = p.plan_repoll(2, ms(9), 5 * MS, rtt);
        assert_eq!(victim, Some(1));
        assert_eq!((r.epoch, r.est, r.repoll), (1, ms(9), true));
        assert_eq!(p.arc(1), 2);
        let v = p.planned(1).unwrap();
        assert_eq!((v.epoch, v.repoll), (2, false));
        // Child 3 repolls too: E_1 holds one repoll and one normal poll (child 0): steal it.
        let (_, victim) = p.plan_repoll(3, ms(9), 5 * MS, rtt);
        assert_eq!(victim, Some(0));
        // Child 4: E_1 is all repolls; E_2 holds child 1 (normal) and child 0 (normal,
        // re-planned) — full, so steal from the later of them.
        assert_eq!(p.arc(2), 2);
        let (r, victim) = p.plan_repoll(4, ms(9), 5 * MS, rtt);
        assert!(victim.is_some());
        assert_eq!((r.epoch, r.est), (2, ms(15)));
        // E_2 now holds child 4 (repoll) and child 0 (normal): child 5 steals from child 0.
        let (_, v5) = p.plan_repoll(5, ms(9), 5 * MS, rtt);
        assert_eq!(v5, Some(0));
        // Repolls are never stolen from.
        for c in [2, 3, 4, 5] {
            assert!(p.planned(c).unwrap().repoll, "child {c}");
        }
        for (_, c) in p.arc_entries() {
            assert!(c <= 2);
        }
    }

    #[test]
    fn repolling_a_planned_child_replaces_its_row() {
        let mut p = Planner::new(10 * MS, 5);
        p.plan(0, ms(0), 50 * MS);
        assert_eq!(p.arc(5), 1);
        let (r, _) = p.plan_repoll(0, ms(1), MS, |_| MS);
        assert_eq!((r.epoch, r.est, r.repoll), (0, ms(1), true));
        assert_eq!(p.arc(5), 0);
        assert_eq!(p.arc(0), 1);
        assert_eq!(p.len(), 1);
    }

    proptest! {
        /// The number of responses planned in any epoch never exceeds RQ, and ARC counts
        /// exactly the rows planned plus the polls taken (sent), per epoch.
        #[test]
        fn arc_never_exceeds_rq(
            rq in 1u32..6,
            ops in proptest::collection::vec((0u8..4, 0usize..12, 0u64..40, 0u64..60), 1..300),
        ) {
            let mut p = Planner::new(10 * MS, rq);
            let mut clock = 0u64;
            let mut sent: BTreeMap<u64, u32> = BTreeMap::new();
            let rtts = |c: usize| Duration::from_millis(1 + (c as u64 * 7) % 45);
            for (op, child, dt, rtt) in ops {
                clock += dt;
                let now = ms(clock);
                let rtt = Duration::from_millis(rtt);
                match op {
                    0 => { p.plan(child, now, rtt); }
                    1 => { p.plan_repoll(child, now, rtt, rtts); }
                    2 => { p.cancel(child); }
                    _ => {
                        let rows: Vec<(usize, Planned)> = p.ppt.iter().map(|(&c, &r)| (c, r)).collect();
                        for c in p.take_due(now, |c| c % 2 == 0) {
                            let r = rows.iter().find(|(x, _)| *x == c).unwrap().1;
                            prop_assert!(r.est <= now);
                            *sent.entry(r.epoch).or_insert(0) += 1;
                        }
                    }
                }
                for (n, c) in p.arc_entries() {
                    prop_assert!(c <= rq, "ARC[{}] = {} > RQ = {}", n, c, rq);
                    let planned = p.ppt.values().filter(|r| r.epoch == n).count() as u32;
                    prop_assert_eq!(c, planned + sent.get(&n).copied().unwrap_or(0));
                }
                for r in p.ppt.values() {
                    prop_assert!(r.est >= Time::ZERO);
                }
            }
        }
    }
}

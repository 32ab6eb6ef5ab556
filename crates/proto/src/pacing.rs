//! Rate pacing: a token bucket that is a pure function of [`Time`].
//!
//! Drivers ask [`Pacer::ready_at`] when a datagram of a given size may leave, and call
//! [`Pacer::on_send`] when it does. The bucket fills at `rate` bytes per second up to `burst`
//! bytes; a send may take it into debt (a datagram larger than the burst still goes out, the
//! next one waits longer), so the long-run rate never exceeds `rate`. Integer arithmetic only:
//! the same calls give the same answers.

use crate::Time;

const NANOS: u128 = 1_000_000_000;

/// Token-bucket pacer. Credit is kept in byte·nanoseconds so no precision is lost.
#[derive(Debug, Clone)]
pub struct Pacer {
    /// Bytes per second; 0 means unlimited.
    rate: u64,
    /// Bucket depth in byte·ns.
    depth: i128,
    /// Current credit in byte·ns (negative: debt).
    credit: i128,
    last: Time,
}

impl Pacer {
    /// A pacer for `rate` bytes per second (0 = unlimited) with a bucket of `burst` bytes,
    /// full at time zero.
    pub fn new(rate: u64, burst: u64) -> Self {
        let depth = i128::from(burst) * NANOS as i128;
        Pacer {
            rate,
            depth,
            credit: depth,
            last: Time::ZERO,
        }
    }

    /// Bytes per second (0 = unlimited).
    pub fn rate(&self) -> u64 {
        self.rate
    }

    fn refill(&self, now: Time) -> i128 {
        let dt = i128::from(now.as_nanos().saturating_sub(self.last.as_nanos()));
        (self.credit + dt * i128::from(self.rate)).min(self.depth)
    }

    /// Earliest time at or after `now` at which a datagram of `len` bytes may be sent.
    pub fn ready_at(&self, now: Time, len: usize) -> Time {
        if self.rate == 0 {
            return now;
        }
        let credit = self.refill(now);
        // Allowed once the credit is non-negative after paying for at most the burst: a
        // datagram larger than the bucket waits for a full bucket, then goes into debt.
        let need = (len as i128 * NANOS as i128).min(self.depth);
        if credit >= need {
            return now;
        }
        let missing = need - credit;
        let rate = i128::from(self.rate);
        let wait = (missing + rate - 1) / rate;
        now + core::time::Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
    }

    /// From `now` on, fill at `rate` bytes per second into a bucket of `burst` bytes. The
    /// credit (or debt) earned at the old rate until `now` is kept, capped at the new depth:
    /// bytes already sent are paid for at the new rate.
    pub fn set_rate(&mut self, now: Time, rate: u64, burst: u64) {
        if self.rate != 0 {
            self.credit = self.refill(now);
        }
        if now > self.last {
            self.last = now;
        }
        self.rate = rate;
        self.depth = i128::from(burst) * NANOS as i128;
        self.credit = self.credit.min(self.depth);
    }

    /// A datagram of `len` bytes left at `now`.
    pub fn on_send(&mut self, now: Time, len: usize) {
        if self.rate == 0 {
            return;
        }
        let credit = self.refill(now);
        self.credit = credit - len as i128 * NANOS as i128;
        if now > self.last {
            self.last = now;
        }
    }
}

/// The pacing of a congestion-controlled sender that wraps an agent which does not pace
/// itself (pgm's TFMCC source, norm's NORM-CC sender): a [`Pacer`] at the controller's rate,
/// charged for every byte the agent queued (data, repairs, commands) at the time the wrapper
/// last heard from the driver. The bucket holds 1 ms of the rate, at least two datagrams of
/// the typical size (the largest data packet so far).
#[derive(Debug, Clone)]
pub struct QueuePacer {
    pacer: Pacer,
    rate: u64,
    now: Time,
    size: usize,
    charged: u64,
}

impl QueuePacer {
    /// Pacing at `rate` bytes per second from time zero, the bucket full.
    pub fn new(rate: u64) -> Self {
        QueuePacer {
            pacer: Pacer::new(rate, Self::burst(rate, 1_500)),
            rate,
            now: Time::ZERO,
            size: 64,
            charged: 0,
        }
    }

    fn burst(rate: u64, size: usize) -> u64 {
        (rate / 1_000).max(2 * size as u64)
    }

    /// The driver called in at `now` (time never goes back).
    pub fn at(&mut self, now: Time) {
        self.now = self.now.max(now);
    }

    /// The last time the driver called in.
    pub fn now(&self) -> Time {
        self.now
    }

    /// A data packet of `len` bytes was queued: the typical size is at least that.
    pub fn note_size(&mut self, len: usize) {
        self.size = self.size.max(len);
    }

    /// Follow the controller's `rate` (bytes per second) from now on.
    pub fn follow(&mut self, rate: u64) {
        if rate != self.rate {
            self.pacer
                .set_rate(self.now, rate, Self::burst(rate, self.size));
            self.rate = rate;
        }
    }

    /// The agent has queued `queued` bytes in all: charge what is new since the last charge.
    pub fn charge(&mut self, queued: u64) {
        let new = queued.saturating_sub(self.charged);
        if new > 0 {
            let new = usize::try_from(new).unwrap_or(usize::MAX);
            self.pacer.on_send(self.now, new);
            self.charged = queued;
        }
    }

    /// When a data packet may go next (at or before [`QueuePacer::now`]: now).
    pub fn ready_at(&self) -> Time {
        self.pacer.ready_at(self.now, self.size)
    }

    /// Whether a data packet may go now.
    pub fn ready(&self) -> bool {
        self.ready_at() <= self.now
    }
}

/// Transmissions at least `gap` apart (PRMP's and FF's inter-packet gap, IPG), with
/// `slack` to catch up: a sender woken late — a driver whose sleeps are coarser than the
/// gap, as `poll`'s millisecond is to a 12-µs IPG — sends the gaps it missed, up to `slack`
/// of them, back to back instead of losing them. With no slack the next transmission may go
/// exactly one gap after the last (the seeds' rule, and the simulator's, which wakes on
/// time).
#[derive(Debug, Clone)]
pub struct GapPacer {
    gap: core::time::Duration,
    slack: core::time::Duration,
    /// Earliest time of the next transmission (`None`: nothing sent yet).
    next: Option<Time>,
}

impl GapPacer {
    /// Transmissions `gap` apart, catching up on at most `slack` of lateness.
    pub fn new(gap: core::time::Duration, slack: core::time::Duration) -> Self {
        GapPacer {
            gap,
            slack,
            next: None,
        }
    }

    /// Earliest time the next transmission may go ([`Time::ZERO`] before the first).
    pub fn allowed(&self) -> Time {
        self.next.unwrap_or(Time::ZERO)
    }

    /// A transmission at `now`: the next may go one gap later, less the lateness of this
    /// one (how long after [`GapPacer::allowed`] it went) up to the slack.
    pub fn on_send(&mut self, now: Time) {
        let late = self
            .next
            .map_or(core::time::Duration::ZERO, |n| now.saturating_since(n));
        self.next = Some(now + self.gap - late.min(self.slack));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_gap_pacer_without_slack_spaces_from_the_last_send_and_with_slack_catches_up() {
        let us = core::time::Duration::from_micros;
        let mut p = GapPacer::new(us(10), core::time::Duration::ZERO);
        assert_eq!(p.allowed(), Time::ZERO);
        p.on_send(Time::from_micros(100));
        assert_eq!(p.allowed(), Time::from_micros(110));
        // Woken 1 ms late: the next is one gap after this send, as the seeds say.
        p.on_send(Time::from_micros(1_110));
        assert_eq!(p.allowed(), Time::from_micros(1_120));

        let mut q = GapPacer::new(us(10), us(50));
        q.on_send(Time::from_micros(100));
        // 1 ms late: 50 µs of it made up, so five more gaps are due at once.
        q.on_send(Time::from_micros(1_110));
        assert_eq!(q.allowed(), Time::from_micros(1_070));
        let mut sent = 1;
        let now = Time::from_micros(1_110);
        while q.allowed() <= now {
            q.on_send(now);
            sent += 1;
        }
        assert_eq!(sent, 6, "the late send and the five gaps the slack made up");
        assert_eq!(q.allowed(), Time::from_micros(1_120));
    }

    /// A queue pacer charges only what was queued since its last charge, at the time the
    /// driver last called in, and holds data back until the rate has paid for it.
    #[test]
    fn a_queue_pacer_charges_what_is_new_at_the_last_call() {
        // 1,000,000 B/s: a bucket of 3,000 bytes (two 1,500-byte datagrams over 1 ms's 1,000).
        let mut q = QueuePacer::new(1_000_000);
        q.note_size(1_500);
        assert!(q.ready());
        q.charge(3_000);
        q.charge(3_000);
        assert!(
            q.ready_at() > Time::ZERO,
            "the bucket is empty after 3,000 bytes"
        );
        // 1,500 bytes take 1.5 ms at 1 MB/s.
        assert_eq!(q.ready_at(), Time::from_micros(1_500));
        q.at(Time::from_micros(1_000));
        q.at(Time::from_micros(500));
        assert_eq!(q.now(), Time::from_micros(1_000), "time never goes back");
        assert!(!q.ready());
        q.at(Time::from_micros(1_500));
        assert!(q.ready());
        // Half the rate from now: the next 1,500 bytes take 3 ms.
        q.charge(4_500);
        q.follow(500_000);
        assert_eq!(q.ready_at(), Time::from_micros(4_500));
    }

    #[test]
    fn unlimited_never_waits() {
        let mut p = Pacer::new(0, 0);
        for i in 0..100 {
            let t = Time::from_micros(i);
            assert_eq!(p.ready_at(t, 65_000), t);
            p.on_send(t, 65_000);
        }
    }

    #[test]
    fn burst_then_rate() {
        // 1 MB/s, 3000-byte bucket: three 1000-byte datagrams at once, then one per ms.
        let mut p = Pacer::new(1_000_000, 3000);
        let t0 = Time::ZERO;
        for _ in 0..3 {
            assert_eq!(p.ready_at(t0, 1000), t0);
            p.on_send(t0, 1000);
        }
        assert_eq!(p.ready_at(t0, 1000), Time::from_millis(1));
        p.on_send(Time::from_millis(1), 1000);
        assert_eq!(p.ready_at(Time::from_millis(1), 1000), Time::from_millis(2));
    }

    #[test]
    fn oversize_datagram_goes_into_debt() {
        let mut p = Pacer::new(1_000_000, 1000);
        assert_eq!(p.ready_at(Time::ZERO, 5000), Time::ZERO);
        p.on_send(Time::ZERO, 5000);
        // 4000 bytes of debt plus a full bucket for the next one: 5 ms.
        assert_eq!(p.ready_at(Time::ZERO, 5000), Time::from_millis(5));
    }

    proptest! {
        /// Sending as early as allowed never beats the rate by more than one bucket.
        #[test]
        fn long_run_rate_is_bounded(rate in 1_000u64..1_000_000_000, burst in 1u64..100_000, sizes in proptest::collection::vec(1usize..65_000, 1..200)) {
            let mut p = Pacer::new(rate, burst);
            let mut now = Time::ZERO;
            let mut total: u128 = 0;
            for &s in &sizes {
                let at = p.ready_at(now, s);
                prop_assert!(at >= now);
                now = at;
                p.on_send(now, s);
                total += s as u128;
            }
            let last = *sizes.last().unwrap() as u128;
            let allowed = (now.as_nanos() as u128 * rate as u128) / NANOS + burst as u128 + last;
            prop_assert!(total <= allowed, "sent {} allowed {}", total, allowed);
        }
    }
}

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

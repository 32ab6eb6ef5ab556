//! Round-trip time estimation and retransmission timeout (RFC 6298 arithmetic: smoothed RTT
//! with gain 1/8, variance with gain 1/4, RTO = SRTT + max(G, 4·RTTVAR), bounded, doubled on
//! each timeout until a fresh sample arrives).

use crate::Time;
use core::time::Duration;

/// Bounds and starting value for an [`RttEstimator`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RttConfig {
    /// RTO before the first sample.
    pub initial_rto: Duration,
    /// Smallest RTO.
    pub min_rto: Duration,
    /// Largest RTO, back-off included.
    pub max_rto: Duration,
    /// Clock granularity G.
    pub granularity: Duration,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(1),
            max_rto: Duration::from_secs(60),
            granularity: Duration::from_micros(1),
        }
    }
}

/// Smoothed RTT, RTT variance, and the RTO derived from them.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    cfg: RttConfig,
    srtt: Option<Duration>,
    rttvar: Duration,
    backoff: u32,
    /// When [`RttEstimator::on_timeout_at`] last doubled the RTO (since the last sample).
    backed_off_at: Option<Time>,
}

impl RttEstimator {
    /// An estimator without samples (RTO: `cfg.initial_rto`).
    pub fn new(cfg: RttConfig) -> Self {
        RttEstimator {
            cfg,
            srtt: None,
            rttvar: Duration::ZERO,
            backoff: 0,
            backed_off_at: None,
        }
    }
    /// Smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// RTT variance (zero before the first sample).
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// Feed one measured round trip. Resets the timeout back-off.
    pub fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + err) / 4;
                self.srtt = Some((srtt * 7 + rtt) / 8);
            }
        }
        self.backoff = 0;
        self.backed_off_at = None;
    }
    /// Double the RTO (a retransmission timer expired).
    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(32);
    }
    /// One of several retransmission timers expired at `now`: double the RTO once per RTO.
    /// Expiries within the (doubled) RTO of the last back-off are the same event, as when a
    /// receiver with a timer per loss finds a burst of them unanswered: TCP's single timer
    /// would back off once for it, where [`RttEstimator::on_timeout`] per expiry would
    /// reach `max_rto` at once (hundreds of losses, hundreds of doublings) and keep it
    /// there while Karn's rule finds no fresh sample among the repeated requests.
    pub fn on_timeout_at(&mut self, now: Time) {
        if self.backed_off_at.is_some_and(|t| now < t + self.rto()) {
            return;
        }
        self.on_timeout();
        self.backed_off_at = Some(now);
    }
    /// Current retransmission timeout, within `[min_rto, max_rto]`.
    pub fn rto(&self) -> Duration {
        let base = match self.srtt {
            None => self.cfg.initial_rto,
            Some(srtt) => srtt + self.cfg.granularity.max(self.rttvar * 4),
        };
        let backed = base
            .checked_mul(1u32 << self.backoff.min(31))
            .unwrap_or(self.cfg.max_rto);
        backed.clamp(self.cfg.min_rto, self.cfg.max_rto.max(self.cfg.min_rto))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn follows_rfc6298() {
        let mut e = RttEstimator::new(RttConfig::default());
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(200));
        // rttvar = 3/4·50 + 1/4·100 = 62.5 ms; srtt = 7/8·100 + 1/8·200 = 112.5 ms
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        e.on_timeout();
        assert_eq!(
            e.rto(),
            (Duration::from_micros(112_500) + Duration::from_millis(250)) * 2
        );
        e.sample(Duration::from_millis(112));
        assert!(e.rto() < Duration::from_millis(400));
    }

    #[test]
    fn expiries_within_one_rto_back_off_once() {
        let cfg = RttConfig {
            min_rto: Duration::from_millis(30),
            max_rto: Duration::from_secs(1),
            ..RttConfig::default()
        };
        let mut e = RttEstimator::new(cfg);
        e.sample(Duration::from_millis(2));
        assert_eq!(e.rto(), Duration::from_millis(30));
        // 600 timers expire in the same millisecond: one doubling, not the cap
        for k in 0..600u64 {
            e.on_timeout_at(Time::from_micros(30_000 + k));
        }
        assert_eq!(e.rto(), Duration::from_millis(30));
        // (the base, 6 ms, doubled is 12 ms: still the floor; the back-off counts once)
        for _ in 0..3 {
            e.on_timeout_at(Time::from_millis(31));
        }
        assert_eq!(e.backoff, 1);
        // one RTO (30 ms) after the back-off, the repeats' timers expire: doubled again
        e.on_timeout_at(Time::from_millis(60));
        assert_eq!(e.backoff, 2);
        // a fresh sample starts over
        e.sample(Duration::from_millis(2));
        e.on_timeout_at(Time::from_millis(61));
        assert_eq!(e.backoff, 1);
        // on_timeout counts every call
        for _ in 0..5 {
            e.on_timeout();
        }
        assert_eq!(e.backoff, 6);
    }

    proptest! {
        #[test]
        fn rto_stays_in_bounds(samples in proptest::collection::vec(0u64..10_000_000_000, 0..50), timeouts in 0u32..80) {
            let cfg = RttConfig { min_rto: Duration::from_millis(5), max_rto: Duration::from_secs(3), ..RttConfig::default() };
            let mut e = RttEstimator::new(cfg);
            for s in samples { e.sample(Duration::from_nanos(s)); }
            for _ in 0..timeouts { e.on_timeout(); }
            prop_assert!(e.rto() >= cfg.min_rto && e.rto() <= cfg.max_rto);
        }
    }
}

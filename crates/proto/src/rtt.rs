//! Round-trip time estimation and retransmission timeout (RFC 6298 arithmetic: smoothed RTT
//! with gain 1/8, variance with gain 1/4, RTO = SRTT + max(G, 4·RTTVAR), bounded, doubled on
//! each timeout until a fresh sample arrives).

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
    samples: u64,
}

impl RttEstimator {
    /// An estimator without samples (RTO: `cfg.initial_rto`).
    pub fn new(cfg: RttConfig) -> Self {
        RttEstimator {
            cfg,
            srtt: None,
            rttvar: Duration::ZERO,
            backoff: 0,
            samples: 0,
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
    /// How many round trips were fed so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// Feed one measured round trip. Resets the timeout back-off.
    pub fn sample(&mut self, rtt: Duration) {
        self.samples += 1;
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
    }
    /// Double the RTO (a retransmission timer expired).
    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(32);
    }
    /// Current retransmission timeout, within `[min_rto, max_rto]`.
    pub fn rto(&self) -> Duration {
        self.rto_doubled(0)
    }
    /// The retransmission timeout doubled `extra` more times than the back-off says (a
    /// caller that keeps its own back-off per packet), within `[min_rto, max_rto]`: the
    /// doublings apply before the bounds, as the back-off's do, so a timeout far below
    /// `min_rto` stays there for its first doublings.
    pub fn rto_doubled(&self, extra: u32) -> Duration {
        let base = match self.srtt {
            None => self.cfg.initial_rto,
            Some(srtt) => srtt + self.cfg.granularity.max(self.rttvar * 4),
        };
        let backed = base
            .checked_mul(1u32 << self.backoff.saturating_add(extra).min(31))
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
    fn extra_doublings_apply_before_the_bounds_and_samples_are_counted() {
        let cfg = RttConfig {
            min_rto: Duration::from_millis(30),
            max_rto: Duration::from_millis(500),
            ..RttConfig::default()
        };
        let mut e = RttEstimator::new(cfg);
        assert_eq!(e.samples(), 0);
        // 4 ms round trip: RTO 4 + 4·2 = 12 ms, below the floor
        e.sample(Duration::from_millis(4));
        assert_eq!(e.samples(), 1);
        assert_eq!(e.rto(), Duration::from_millis(30));
        assert_eq!(e.rto_doubled(0), e.rto());
        assert_eq!(
            e.rto_doubled(1),
            Duration::from_millis(30),
            "24 ms: the floor"
        );
        assert_eq!(e.rto_doubled(2), Duration::from_millis(48));
        assert_eq!(e.rto_doubled(6), Duration::from_millis(500), "the cap");
        assert_eq!(e.rto_doubled(u32::MAX), Duration::from_millis(500));
        // the estimator's own back-off adds to them
        e.on_timeout();
        assert_eq!(e.rto_doubled(2), Duration::from_millis(96));
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

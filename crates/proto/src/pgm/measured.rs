//! What a PGM receiver with adaptive NAK timers ([`super::ReceiverConfig::nak_rto_min`])
//! measures of its repairs: the repair round trip, each NAKed loss's record and back-off, and
//! the delay from an NCF to its repair.

use super::ReceiverConfig;
use crate::rtt::{RttConfig, RttEstimator};
use crate::Time;
use core::time::Duration;
use std::collections::BTreeMap;

/// What a receiver with adaptive NAK timers ([`ReceiverConfig::nak_rto_min`]) measures of
/// its repairs.
#[derive(Debug)]
pub(super) struct Measured {
    /// The repair round trip, from a NAK sent once to its NCF.
    pub(super) rtt: RttEstimator,
    /// Each outstanding loss's [`Naked`] record.
    pub(super) naked: NakedAt,
    /// Repairs that arrived for NAKed losses: with the round trip's samples, what clears the
    /// losses' back-offs ([`Measured::epoch`]).
    pub(super) repaired: u64,
    /// How long repairs take to follow their NCF (the source's queue of repairs), which a
    /// wait for a repair adds to the repair round trip's timeout.
    pub(super) rdata_delay: RttEstimator,
}

impl Measured {
    pub(super) fn new(cfg: &ReceiverConfig, floor: Duration) -> Self {
        let rtt = |initial_rto, min_rto, max_rto| {
            RttEstimator::new(RttConfig {
                initial_rto,
                min_rto,
                max_rto,
                granularity: Duration::from_micros(1),
            })
        };
        Measured {
            rtt: rtt(
                cfg.nak_repeat.min(cfg.nak_rdata),
                floor,
                cfg.nak_repeat.max(cfg.nak_rdata),
            ),
            naked: BTreeMap::new(),
            repaired: 0,
            rdata_delay: rtt(Duration::ZERO, Duration::ZERO, cfg.nak_rdata),
        }
    }

    /// What clears the back-offs: the round trip's samples and the repairs that arrived for
    /// NAKed losses. A repair getting through says answers are coming as a fresh sample
    /// does: what ran out was lost on the way, not late. Behind a slow port, where most NAKs
    /// are repeats (no sample, by Karn's rule) while repairs stream in, counting samples alone
    /// let a loss whose repair was lost four or five times wait 0.5-1 s for its next NAK while
    /// the port idled (issue 59).
    pub(super) fn epoch(&self) -> u64 {
        self.rtt.samples() + self.repaired
    }
}

/// A loss (or FEC block) NAKed at least once.
#[derive(Debug, Clone, Copy)]
pub(super) struct Naked {
    /// When it was first NAKed.
    pub(super) at: Time,
    /// NAKed again since, which makes its answer no sample (Karn's rule).
    pub(super) again: bool,
    /// Its back-off.
    pub(super) backoff: Backoff,
    /// When its last NCF arrived (the wait for its repair began).
    pub(super) confirmed: Option<Time>,
}

/// A loss's (or FEC block's) own back-off with adaptive NAK timers: how many of its waits for
/// an answer ran out since the receiver last measured a repair round trip or received a
/// repair for a NAKed loss, each doubling its next wait ([`RttEstimator::rto_doubled`]:
/// before the floor, so on a LAN, whose round trip is far below it, the first doublings cost
/// nothing). Per loss, as TCP's is per segment: a burst of losses that times out together (a
/// link down for a moment) waits twice the timeout next, not the cap, as one estimator backing
/// off per expiry made it. A fresh sample clears it, as RFC 6298's, and so does a repair
/// arriving: answers are coming, so what ran out was lost on the way rather than late, and a
/// loss whose repairs were lost several times is asked for again after one timeout, not after
/// its doublings.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Backoff {
    pub(super) expired: u32,
    /// The receiver's [`Receiver::epoch`] when it last ran out.
    pub(super) epoch: u64,
}

impl Backoff {
    /// The doublings of its next wait, the receiver being at `epoch`.
    pub(super) fn doublings(self, epoch: u64) -> u32 {
        if self.epoch == epoch {
            self.expired
        } else {
            0
        }
    }

    /// A wait ran out, the receiver being at `epoch`.
    pub(super) fn expire(&mut self, epoch: u64) {
        self.expired = self.doublings(epoch).saturating_add(1);
        self.epoch = epoch;
    }
}

impl Naked {
    /// NAKed for the first time at `at`.
    pub(super) fn first(at: Time) -> Self {
        Naked {
            at,
            again: false,
            backoff: Backoff::default(),
            confirmed: None,
        }
    }

    /// NAKed again: its answer is no sample.
    pub(super) fn repeat(&mut self) {
        self.again = true;
    }

    /// An answer (NCF; FEC: BNCF or parity) to its NAK at `now`: a round-trip sample for
    /// `rtt` if it was NAKed once and this is the first answer; later answers (the RDATA
    /// after its NCF) are none.
    pub(super) fn answer(&mut self, now: Time, rtt: &mut RttEstimator) {
        if !self.again {
            rtt.sample(now.saturating_since(self.at));
            self.again = true;
        }
    }
}

/// The outstanding losses NAKed at least once (adaptive timers only), by sequence number.
pub(super) type NakedAt = BTreeMap<u64, Naked>;

//! New data on a fixed schedule (`rmcast send --data-interval-us`): message k may enter the
//! agent from `first + k × interval`, where `first` is when the first one did, and a message
//! that could not go at its time (the agent's window was full, the socket blocked) goes as
//! soon as it can, without moving the ones after it. This is what a scenario's
//! `[traffic] interval_ms` means in the simulator (`rmcast_sim`'s `Traffic`: one message
//! generated every interval, queued at the source while the agent cannot take it), and what
//! `rmcast testbed` asks of the socket sender. Repairs and control packets are not charged to
//! it: they leave as the agent makes them, at `--rate` (the link's, on the testbed).
//!
//! Without an interval every message may go at once (the default: `--rate` alone paces).

use rmcast_proto::Time;
use std::time::Duration;

#[derive(Debug, Clone)]
pub(super) struct Schedule {
    interval: Option<Duration>,
    /// When the first message entered the agent.
    first: Option<Time>,
    /// Messages handed to the agent so far.
    offered: u64,
}

impl Schedule {
    /// One message per `interval` (`None` or zero: no schedule).
    pub(super) fn new(interval: Option<Duration>) -> Self {
        Schedule {
            interval: interval.filter(|d| !d.is_zero()),
            first: None,
            offered: 0,
        }
    }

    /// When the next message may enter the agent (`Time::ZERO`: now, whatever now is).
    pub(super) fn next_at(&self) -> Time {
        match (self.interval, self.first) {
            (Some(d), Some(first)) => {
                let nanos = d.as_nanos().saturating_mul(u128::from(self.offered));
                first + Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }
            _ => Time::ZERO,
        }
    }

    /// Whether a message may enter the agent at `now`.
    pub(super) fn allows(&self, now: Time) -> bool {
        self.next_at() <= now
    }

    /// A message entered the agent at `now`.
    pub(super) fn offered(&mut self, now: Time) {
        self.first.get_or_insert(now);
        self.offered += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    #[test]
    fn without_an_interval_every_message_may_go_at_once() {
        for iv in [None, Some(Duration::ZERO)] {
            let mut s = Schedule::new(iv);
            for _ in 0..5 {
                assert!(s.allows(ms(3)));
                s.offered(ms(3));
            }
        }
    }

    #[test]
    fn one_message_per_interval_from_the_first() {
        let mut s = Schedule::new(Some(Duration::from_millis(10)));
        assert!(s.allows(ms(500)));
        s.offered(ms(500));
        assert!(!s.allows(ms(509)));
        assert_eq!(s.next_at(), ms(510));
        assert!(s.allows(ms(510)));
        s.offered(ms(510));
        assert_eq!(s.next_at(), ms(520));
    }

    #[test]
    fn a_late_message_does_not_move_the_ones_after_it() {
        // The agent could not take message 1 until 535 ms: messages 1, 2 and 3 (due at 510,
        // 520, 530) go at once, message 4 at 540 as planned, as the simulator's source
        // queues what it generated while the agent's window was full.
        let mut s = Schedule::new(Some(Duration::from_millis(10)));
        s.offered(ms(500));
        let mut at_535 = 0;
        while s.allows(ms(535)) {
            s.offered(ms(535));
            at_535 += 1;
        }
        assert_eq!(at_535, 3);
        assert_eq!(s.next_at(), ms(540));
    }
}

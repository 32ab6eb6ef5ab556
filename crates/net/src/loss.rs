//! Loss injection for experiments and tests: Bernoulli (`--drop-rate P`) and deterministic
//! "one in N" (`--drop-one-in N`), on transmit or on receive, seeded.
//!
//! It applies to protocol packets (the agents' data and feedback), not to the session
//! control packets that find and account for receivers.

use rmcast_proto::rng::AgentRng;

/// Where injected loss applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Drop datagrams this endpoint would send.
    Tx,
    /// Drop datagrams this endpoint received, before the agent sees them.
    #[default]
    Rx,
}

/// Loss injection settings.
#[derive(Debug, Clone, Default)]
pub struct LossConfig {
    /// Probability of dropping each packet, in [0, 1].
    pub rate: f64,
    /// Drop every N-th packet (N ≥ 1); `None` for off.
    pub one_in: Option<u64>,
    /// Whether it drops what is sent or what is received.
    pub direction: Direction,
    /// Seed of the random drops.
    pub seed: u64,
}

impl LossConfig {
    /// Whether it drops nothing.
    pub fn is_off(&self) -> bool {
        self.rate <= 0.0 && self.one_in.is_none()
    }
}

/// The running injector.
#[derive(Debug)]
pub struct Injector {
    cfg: LossConfig,
    rng: AgentRng,
    seen: u64,
    /// Packets it dropped.
    pub dropped: u64,
}

impl Injector {
    /// An injector for `cfg`.
    pub fn new(cfg: LossConfig) -> Self {
        let rng = AgentRng::from_seed(cfg.seed);
        Injector {
            cfg,
            rng,
            seen: 0,
            dropped: 0,
        }
    }

    /// Decide for one packet travelling in direction `dir`.
    pub fn drop(&mut self, dir: Direction) -> bool {
        if dir != self.cfg.direction || self.cfg.is_off() {
            return false;
        }
        self.seen += 1;
        let by_count = self
            .cfg
            .one_in
            .is_some_and(|n| self.seen.is_multiple_of(n.max(1)));
        let by_chance = self.cfg.rate > 0.0 && self.rng.chance(self.cfg.rate);
        let d = by_count || by_chance;
        if d {
            self.dropped += 1;
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_in_n_is_exact_and_direction_filtered() {
        let mut i = Injector::new(LossConfig {
            one_in: Some(4),
            direction: Direction::Tx,
            ..Default::default()
        });
        let drops: Vec<bool> = (0..8).map(|_| i.drop(Direction::Tx)).collect();
        assert_eq!(
            drops,
            [false, false, false, true, false, false, false, true]
        );
        assert!(!i.drop(Direction::Rx));
    }

    #[test]
    fn rate_is_seeded_and_roughly_right() {
        let cfg = LossConfig {
            rate: 0.1,
            seed: 9,
            ..Default::default()
        };
        let run = |c: LossConfig| {
            let mut i = Injector::new(c);
            (0..10_000)
                .map(|_| i.drop(Direction::Rx))
                .collect::<Vec<_>>()
        };
        let a = run(cfg.clone());
        assert_eq!(a, run(cfg));
        let n = a.iter().filter(|&&d| d).count();
        assert!((800..1200).contains(&n), "{n}");
    }
}

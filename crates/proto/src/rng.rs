//! Seeded, per-agent randomness. A driver derives one [`AgentRng`] per agent from the run
//! seed and the agent's node id, so a run is reproducible bit for bit and no two agents share
//! a stream.

use crate::NodeId;
use core::time::Duration;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// SplitMix64 finalizer: a bijective mixer used to turn (seed, node, stream) into seeds.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// True with probability `p` (clamped to `[0, 1]`), given `unit`, a draw uniform in `[0, 1)`;
/// the draw is made only when `0 < p < 1`, so a certain or impossible outcome spends none.
pub fn chance_with(p: f64, unit: impl FnOnce() -> f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        unit() < p
    }
}

/// A seeded random number generator owned by one agent (ChaCha8).
///
/// The generator (320 bytes with its block buffer) is made from the seed at the first draw:
/// the stream is the same, and an agent that never draws — most receivers of a large
/// simulation — keeps only the seed.
#[derive(Debug, Clone)]
pub struct AgentRng {
    seed: u64,
    live: Option<Box<ChaCha8Rng>>,
}

impl AgentRng {
    /// A generator seeded with `seed` directly (tests and single-agent drivers).
    pub fn from_seed(seed: u64) -> Self {
        AgentRng { seed, live: None }
    }
    fn rng(&mut self) -> &mut ChaCha8Rng {
        let seed = self.seed;
        self.live
            .get_or_insert_with(|| Box::new(ChaCha8Rng::seed_from_u64(seed)))
    }
    /// The stream for `node`'s agent number `stream` in a run seeded with `run_seed`.
    pub fn derive(run_seed: u64, node: NodeId, stream: u64) -> Self {
        let s = mix64(mix64(run_seed ^ 0x726d_6361_7374) ^ u64::from(node.0)) ^ mix64(stream);
        Self::from_seed(mix64(s))
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.rng().random::<f64>()
    }
    /// True with probability `p` (clamped to `[0, 1]`).
    pub fn chance(&mut self, p: f64) -> bool {
        chance_with(p, || self.unit())
    }
    /// Uniform integer in `[lo, hi]` (inclusive); `lo` if `hi < lo`.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            lo
        } else {
            self.rng().random_range(lo..=hi)
        }
    }
    /// Uniform duration in `[lo, hi]`, at nanosecond resolution.
    pub fn duration_between(&mut self, lo: Duration, hi: Duration) -> Duration {
        let lo_ns = u64::try_from(lo.as_nanos()).unwrap_or(u64::MAX);
        let hi_ns = u64::try_from(hi.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(self.range_inclusive(lo_ns, hi_ns))
    }
}

impl RngCore for AgentRng {
    fn next_u32(&mut self) -> u32 {
        self.rng().next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.rng().next_u64()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.rng().fill_bytes(dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_different_nodes_differ() {
        let a: Vec<u64> = (0..4)
            .map(|_| AgentRng::derive(7, NodeId(1), 0).next_u64())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = AgentRng::derive(7, NodeId(1), 0);
        let mut y = AgentRng::derive(7, NodeId(2), 0);
        let mut z = AgentRng::derive(7, NodeId(1), 1);
        let (vx, vy, vz) = (x.next_u64(), y.next_u64(), z.next_u64());
        assert!(vx != vy && vx != vz && vy != vz);
    }

    #[test]
    fn the_stream_is_chacha8_of_the_seed_made_at_the_first_draw() {
        let mut lazy = AgentRng::from_seed(99);
        assert!(lazy.live.is_none(), "no generator before a draw");
        assert_eq!(
            lazy.range_inclusive(4, 4),
            4,
            "a certain outcome draws nothing"
        );
        assert!(lazy.live.is_none());
        let mut eager = ChaCha8Rng::seed_from_u64(99);
        for _ in 0..100 {
            assert_eq!(lazy.next_u64(), eager.next_u64());
        }
        assert_eq!(lazy.clone().next_u32(), eager.clone().next_u32());
    }

    #[test]
    fn ranges_and_chance() {
        let mut r = AgentRng::from_seed(1);
        for _ in 0..1000 {
            let v = r.range_inclusive(3, 5);
            assert!((3..=5).contains(&v));
            let d = r.duration_between(Duration::from_micros(1), Duration::from_micros(2));
            assert!(d >= Duration::from_micros(1) && d <= Duration::from_micros(2));
        }
        assert_eq!(r.range_inclusive(9, 2), 9);
        assert!(!r.chance(0.0) && r.chance(1.0));
        let hits = (0..10_000).filter(|_| r.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
    }
}

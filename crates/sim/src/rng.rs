//! Driver-side randomness (loss draws, jitter, bus backoff): a small SplitMix64 stream per
//! site, seeded from the run seed with [`rmcast_proto::rng::mix64`]. Agents never see these
//! streams; they get their own [`rmcast_proto::rng::AgentRng`].

use rmcast_proto::rng::mix64;

/// Stream tags so that different uses of the same (seed, site) never share a stream.
#[allow(dead_code)]
pub(crate) mod tag {
    pub const LOSS: u64 = 0x4c4f_5353;
    pub const JITTER: u64 = 0x4a49_5454;
    pub const BACKOFF: u64 = 0x4241_434b;
    pub const TOPOLOGY: u64 = 0x544f_504f;
    pub const MEMBERS: u64 = 0x4d45_4d42;
    /// A host's late timer wake-ups.
    pub const LATENESS: u64 = 0x4c41_5445;
    /// Seed 003 placements with replacement (the value the lms study has always used).
    pub const PLACE_WITH_REPLACEMENT: u64 = 0x1a7_7ac4;
}

/// SplitMix64: tiny, fast, and good enough for drops and backoff draws.
#[derive(Debug, Clone)]
pub struct SimRng(u64);

impl SimRng {
    /// The stream for (`seed`, `tag`, `a`, `b`): a run's seed, the stream's purpose and two
    /// numbers that tell its instances apart (e.g. a link and a direction).
    pub fn new(seed: u64, tag: u64, a: u64, b: u64) -> Self {
        SimRng(mix64(
            mix64(mix64(seed ^ tag) ^ a) ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ))
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        // SplitMix64's step: the finalizer of the state before the golden-ratio increment.
        let z = self.0;
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(z)
    }
    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// True with probability `p` (never for `p <= 0`).
    pub fn chance(&mut self, p: f64) -> bool {
        rmcast_proto::rng::chance_with(p, || self.unit())
    }
    /// Uniform integer in `[0, n)`; 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Lemire's nearly divisionless multiply-shift with rejection: unbiased.
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let t = n.wrapping_neg() % n;
            while (m as u64) < t {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
    /// Normal(mean, sd) by Box–Muller.
    pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]
        let u2 = self.unit();
        mean + sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = {
            let mut r = SimRng::new(1, tag::LOSS, 2, 3);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = SimRng::new(1, tag::LOSS, 2, 3);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = SimRng::new(1, tag::LOSS, 2, 4);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn distributions_are_plausible() {
        let mut r = SimRng::new(9, 0, 0, 0);
        let n = 100_000;
        let hits = (0..n).filter(|_| r.chance(0.1)).count();
        assert!((9_500..10_500).contains(&hits), "{hits}");
        let mut counts = [0u32; 5];
        for _ in 0..n {
            counts[r.below(5) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (19_000..21_000).contains(&c)),
            "{counts:?}"
        );
        let xs: Vec<f64> = (0..n).map(|_| r.normal(5.0, 2.0)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.05, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.05, "{var}");
    }
}

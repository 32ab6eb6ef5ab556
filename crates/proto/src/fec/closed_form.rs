//! Expected repair traffic for independent loss: the closed forms the simulator's FEC
//! measurements are compared with (docs/fec.md).
//!
//! A source multicasts to `R` receivers; each receiver loses each packet independently with
//! probability `p` (q = 1 − p). Feedback is perfect: the source learns what each receiver lacks.
//!
//! **Retransmission** (every repair a copy of the lost packet, sent until every receiver has
//! it): the transmissions `T` of one packet satisfy P(T ≤ t) = (1 − p^t)^R, so
//! E\[T\] = Σ_{t≥0} [1 − (1 − p^t)^R] and the repairs per packet are E\[T\] − 1.
//!
//! **On-demand parity** (integrated FEC, Nonnenmacher, Biersack and Towsley 1998): the block's
//! `k` source packets go out, then in each round as many new parity packets as the receiver
//! that lacks most still needs, until every receiver holds `k` symbols (any `k` decode). Let
//! `N_r` be the packets sent until receiver `r` holds `k`: P(N_r ≤ n) = P(Bin(n, q) ≥ k) =:
//! F(n). Every round sends at most what every receiver still needs, so no round overshoots
//! the first `n` at which all receivers hold `k`, and the rounds stop exactly there: the block
//! costs M = max_r N_r packets, P(M ≤ n) = F(n)^R, E\[M\] = k + Σ_{n≥k} [1 − F(n)^R], and the
//! repairs per source packet are (E\[M\] − k)/k. (A property test below checks this against a
//! simulation of the rounds.)

/// Repairs per packet with retransmission: E\[T\] − 1.
pub fn retransmission_repairs(p: f64, receivers: u64) -> f64 {
    let r = receivers as f64;
    let mut sum = 0.0;
    let mut pt = p; // p^t for t = 1, 2, ...
    for _ in 1..10_000 {
        let term = 1.0 - (1.0 - pt).powf(r);
        sum += term;
        if term < 1e-16 {
            break;
        }
        pt *= p;
    }
    sum
}

/// P(Bin(n, q) ≥ k), q = 1 − p.
fn at_least(n: u64, k: u64, p: f64) -> f64 {
    if n < k {
        return 0.0;
    }
    // 1 − Σ_{j<k} C(n, j) q^j p^(n−j), summed in logs for large n.
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut below = 0.0;
    let mut log_c = 0.0; // ln C(n, j)
    for j in 0..k {
        if j > 0 {
            log_c += ((n - j + 1) as f64).ln() - (j as f64).ln();
        }
        below += (log_c + j as f64 * lq + (n - j) as f64 * lp).exp();
    }
    (1.0 - below).max(0.0)
}

/// Repairs (parity packets) per source packet with ideal on-demand parity over blocks of
/// `k`: (E\[M\] − k)/k.
pub fn parity_repairs(p: f64, receivers: u64, k: u64) -> f64 {
    let r = receivers as f64;
    let mut extra = 0.0;
    for n in k..k + 100_000 {
        let term = 1.0 - at_least(n, k, p).powf(r);
        extra += term;
        if term < 1e-16 {
            break;
        }
    }
    extra / k as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_receiver_needs_p_over_q_repairs_either_way() {
        for p in [0.01, 0.1, 0.5] {
            let want = p / (1.0 - p);
            assert!((retransmission_repairs(p, 1) - want).abs() < 1e-12);
            assert!((parity_repairs(p, 1, 16) - want).abs() < 1e-9, "{p}");
        }
        // a block of one is a packet: parity is a retransmission
        for r in [10, 1000] {
            let (a, b) = (retransmission_repairs(0.01, r), parity_repairs(0.01, r, 1));
            assert!((a - b).abs() < 1e-9, "{a} {b}");
        }
    }

    /// The rounds as the protocol runs them (each round sends the largest remaining need as
    /// new symbols) against the closed form, for a small group where sampling is cheap.
    #[test]
    fn the_closed_form_matches_rounds_of_the_largest_need() {
        let (p, r, k, blocks) = (0.1, 20usize, 8usize, 20_000);
        let mut x: u64 = 0x2545F4914F6CDD1D;
        let mut lost = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 <= p
        };
        let mut sent = 0usize;
        for _ in 0..blocks {
            let mut need = vec![k; r];
            let mut round = k;
            while round > 0 {
                sent += round;
                for n in need.iter_mut() {
                    let got = (0..round).filter(|_| !lost()).count();
                    *n = n.saturating_sub(got);
                }
                round = need.iter().copied().max().unwrap_or(0);
            }
        }
        let measured = (sent - blocks * k) as f64 / (blocks * k) as f64;
        let exact = parity_repairs(p, r as u64, k as u64);
        assert!(
            (measured - exact).abs() < 0.02 * exact,
            "{measured} vs {exact}"
        );
    }

    proptest! {
        /// Parity never costs more than retransmission, and both grow with the group.
        #[test]
        fn parity_costs_less_and_both_grow_with_the_group(
            p in 0.001f64..0.2, r in 1u64..5000, k in 1u64..64,
        ) {
            let (a, b) = (retransmission_repairs(p, r), parity_repairs(p, r, k));
            prop_assert!(b <= a + 1e-9, "{} > {}", b, a);
            prop_assert!(retransmission_repairs(p, r * 2) >= a - 1e-12);
            prop_assert!(parity_repairs(p, r * 2, k) >= b - 1e-12);
        }
    }
}

//! `demo`: multicast stop-and-wait (`rmcast_proto::saw`) against closed forms.
//!
//! A small, real check of the machinery end to end, kept beside the seed studies. Part A
//! drives `saw` on the `testkit` harness (every copy takes exactly δ; each copy is lost
//! independently with probability p); part B runs it on the simulator's shared 10 Mb/s
//! Ethernet bus against seed 000's analytic bounds.
//!
//! Closed form for part A (multicast retransmission, timeout T > 2δ): receiver i finishes
//! in a round when its data copy and its ACK both arrive, probability q = (1 − p)²; a receiver
//! that already ACKed re-ACKs the duplicate, which changes nothing. The rounds R a message
//! needs are the maximum of r independent geometric(q) variables:
//!
//! E\[R\] = Σ_{k ≥ 0} (1 − (1 − (1 − q)^k)^r),   E\[message time\] = (E\[R\] − 1)·T + 2δ.
//!
//! Part A is `harness` (its runs, measures and plots), part B is `bus`; this file holds the
//! closed forms and the study's phases.

use crate::study::{About, RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::sweep::join;
use crate::Measures;
use rmcast_proto::rng::mix64;
use rmcast_proto::GroupId;

mod bus;
mod harness;

use bus::{BUS_TIMEOUT_MS, DATA_FRAME};

/// The demonstration study.
pub struct Demo;

const DELTA_US: u64 = 100;
const TIMEOUT_US: u64 = 1_000;
const GROUP: GroupId = GroupId(1);
const RECEIVERS: [usize; 3] = [1, 5, 20];

crate::plan! {
    struct Plan {
        seeds: u64 = quick 5, full 10;
        messages: u64 = quick 400, full 2000;
        losses: Vec<f64> =
            quick vec![0.02, 0.1, 0.2],
            full vec![0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3];
        lossless_receivers: Vec<usize> = quick vec![1, 5, 20], full vec![1, 2, 5, 10, 20, 50];
        bus_receivers: Vec<usize> =
            quick vec![1, 2, 5, 10, 20],
            full vec![1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60];
        bus_seeds: u64 = quick 5, full 10;
        bus_messages: u64 = quick 100, full 500;
    }
    runs: seeds, bus_seeds;
}

/// The demo's declared mutants (`rmcast repro demo --mutants`).
const MUTANTS: &[crate::Mutant] = &[
    crate::Mutant {
        name: "no_loss",
        what: "the harness loses nothing (the loss its transmission counts are about)",
    },
    crate::Mutant {
        name: "double_delta",
        what: "every copy on the harness takes 2δ; the closed forms keep δ (the delay the \
               lossless message time and rate are about)",
    },
    crate::Mutant {
        name: "one_receiver",
        what: "every run has one receiver (the group size both parts sweep)",
    },
];

/// E\[R\]: expected transmissions of one message to `r` receivers, per-copy loss `p`.
pub fn expected_rounds(p: f64, r: usize) -> f64 {
    let q = (1.0 - p) * (1.0 - p);
    let miss = 1.0 - q;
    let mut sum = 0.0;
    let mut miss_k: f64 = 1.0; // (1 − q)^k
    for _ in 0..100_000 {
        let term = 1.0 - (1.0 - miss_k).powi(r as i32);
        sum += term;
        if term < 1e-15 {
            break;
        }
        miss_k *= miss;
    }
    sum
}

/// The seed of run `k` at group size `r` and loss `p` (the bus runs use p = −1).
fn seed_of(r: usize, p: f64, k: u64) -> u64 {
    mix64(mix64(r as u64) ^ p.to_bits() ^ k)
}

/// Seed 000 eq. 4.5: MSAW relative-throughput upper bound (r·d + r·a)/(d + r·a).
pub fn ubrt(r: f64, d: f64, a: f64) -> f64 {
    r * (d + a) / (d + r * a)
}

/// Seed 000 eq. 4.18: MSAW latency lower bound d + r·a (bit times).
pub fn lbl(r: f64, d: f64, a: f64) -> f64 {
    d + r * a
}

/// The demo's setup table: both parts' topology, parameters and choices, with the run counts
/// and the bus's frame sizes and retransmissions as measured.
fn setup(plan: &Plan, part_a: &harness::Runs, part_b: &bus::Runs, retx: u64) -> Setup {
    let (runs, lossy_runs) = (
        part_a.results.len(),
        part_a.results.len() - part_a.lossy_start,
    );
    let (payload, d, a) = (part_b.payload, part_b.d, part_b.a);
    Setup {
        summary: "A built-in check of the repro machinery that is also a real test of \
                  `rmcast_proto::saw`: multicast stop-and-wait with multicast \
                  retransmission (seed 000 §2.5.2), driven to completion, compared with \
                  closed forms derived from the protocol's rules."
            .into(),
        topology: format!(
            "Part A: `rmcast_proto::testkit::Harness`, one sender and r receivers on a full \
             mesh; every copy of every packet takes exactly δ = {DELTA_US} µs and is lost \
             independently with probability p (data and ACKs alike). Part B: \
             `rmcast_sim`, one sender and r receivers on one shared 10 Mb/s Ethernet bus \
             with seed 000's rules (frame time 8 × bytes bit times, no gap, no \
             propagation delay, 1-persistent, 32-bit-time collisions, binary exponential \
             backoff in 512-bit slots), no loss."
        ),
        parameters: vec![
            ("one-way delay δ".into(), format!("{DELTA_US} µs")),
            (
                "retransmission timeout T".into(),
                format!("{TIMEOUT_US} µs (> 2δ)"),
            ),
            (
                "receivers r".into(),
                "1, 5, 20 (lossy sweep); lossless sweep as listed in the plot".into(),
            ),
            (
                "loss p".into(),
                join(&plan.losses),
            ),
            ("messages per run".into(), plan.messages.to_string()),
            (
                "runs (seeds) per point".into(),
                format!("{} lossy, {} lossless", plan.seeds, plan.seeds.min(3)),
            ),
            (
                "runs in total".into(),
                format!("{runs} ({lossy_runs} lossy)"),
            ),
            ("bus: receivers r".into(), join(&plan.bus_receivers)),
            ("bus: frames".into(), format!("data {DATA_FRAME} bytes (d = {d} bit times, saw message of {payload} bytes), ACK {} bytes (a = {a} bit times)", a / 8)),
            ("bus: messages per run, runs per point".into(), format!("{}, {}", plan.bus_messages, plan.bus_seeds)),
            ("bus: timeout".into(), format!("{BUS_TIMEOUT_MS} ms (far above any message time; retransmissions observed: {retx})")),
        ],
        choices: vec![
            (
                "retransmission limit".into(),
                "none: every message completes".into(),
            ),
            (
                "message size".into(),
                "8 bytes on the harness (it has no bandwidth); on the bus the message fills a 1518-byte frame".into(),
            ),
            ("bus backoff range".into(), "the simulator's default: uniform in [0, 2^min(i,10)] slots, inclusive (the thesis's words)".into()),
            ("ACK frame".into(), "saw's ACK datagram padded to the 64-byte minimum frame, as the thesis's 64-byte ACKs".into()),
        ],
        unstated: Vec::new(),
    }
}

impl Study for Demo {
    fn mutants(&self) -> Vec<crate::Mutant> {
        MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::for_ctx(ctx);
        let mutant = ctx.mutant_of(MUTANTS);
        let mut m = Measures::new();
        let part_a = harness::run(ctx, &plan, mutant)?;
        let mut plots = vec![
            part_a.measure_lossless(&plan, &mut m)?,
            part_a.measure_lossy(&plan, &mut m)?,
        ];
        let part_b = bus::run(ctx, &plan, mutant)?;
        let table_xs = ctx.paper("t4_1_ubrt")?.x.clone();
        let measured = part_b.measure(&plan, &table_xs, &mut m)?;
        plots.extend(part_b.plots(&plan, ctx, &measured)?);
        Ok(StudyOutput {
            setup: setup(&plan, &part_a, &part_b, measured.retransmissions),
            measures: m,
            plots,
            notes: vec![
                "The throughput of the harness is 1/(2δ) messages per second whatever the \
                 group size, because the harness has no shared medium: the r ACKs of a \
                 message travel in parallel. The bus (part B) is where group size costs time."
                    .into(),
            ],
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "demo",
            "Demonstration: multicast stop-and-wait against its closed forms",
            "seed 000 (Segovia 1996), §2.5.2 protocol rule and §4.1 bounds; closed forms derived here",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::bus::{bus_frames, run_bus, BusJob};
    use super::harness::{run_harness, HarnessJob};
    use super::*;
    use crate::study::{run_study, NoProgress};
    use rmcast_sim::BusConfig;

    #[test]
    fn expected_rounds_closed_form() {
        // No loss: one round.
        assert!((expected_rounds(0.0, 20) - 1.0).abs() < 1e-12);
        // One receiver: geometric with success q, mean 1/q.
        let q = 0.9f64 * 0.9;
        assert!((expected_rounds(0.1, 1) - 1.0 / q).abs() < 1e-9);
        // Two receivers: E[max] = 2/q − 1/(1 − (1 − q)²).
        let e2 = 2.0 / q - 1.0 / (1.0 - (1.0 - q) * (1.0 - q));
        assert!((expected_rounds(0.1, 2) - e2).abs() < 1e-9);
        assert!(expected_rounds(0.1, 20) > expected_rounds(0.1, 5));
    }

    #[test]
    fn bus_frames_are_the_thesis_sizes() {
        let (payload, d, a) = bus_frames(&BusConfig::default()).unwrap();
        assert_eq!((d, a), (8 * 1518, 8 * 64));
        assert!(payload > 1400 && payload < 1518);
        // Table 4.1 at r = 5: UBRT 4.304, LBL 14704.
        assert!((ubrt(5.0, d as f64, a as f64) - 4.304).abs() < 5e-4);
        assert_eq!(lbl(5.0, d as f64, a as f64), 14704.0);
    }

    #[test]
    fn one_receiver_on_the_bus_takes_d_plus_a() {
        let (payload, d, a) = bus_frames(&BusConfig::default()).unwrap();
        let r = run_bus(
            &BusJob {
                receivers: 1,
                messages: 20,
                payload,
                seed: 3,
            },
            d,
            a,
        )
        .unwrap();
        assert_eq!((r.lat_min, r.lat_max), ((d + a) as f64, (d + a) as f64));
        assert_eq!(r.collisions_per_msg, 0.0);
        assert_eq!(r.retransmissions, 0);
    }

    #[test]
    fn lossless_harness_message_time_is_two_delta() {
        let r = run_harness(&HarnessJob {
            receivers: 5,
            delta_us: DELTA_US,
            loss: 0.0,
            messages: 50,
            seed: 1,
        })
        .unwrap();
        assert_eq!(r.msg_time_us, 2.0 * DELTA_US as f64);
        assert_eq!(r.transmissions, 1.0);
        assert!(r.reliable);
    }

    #[test]
    fn a_runs_factor_multiplies_every_claim_s_runs_and_keeps_the_first_ones() {
        let claims = Demo.about().claims_toml;
        let run = |k| {
            crate::study::run_study_with_claims(&Demo, claims, crate::Sweeps::Quick, k, &NoProgress)
        };
        let (one, two) = (run(1), run(2));
        assert!(two.error.is_none(), "{:?}", two.error);
        let seeds = |r: &crate::StudyReport| {
            r.setup
                .parameters
                .iter()
                .find(|(k, _)| k.starts_with("runs (seeds) per point"))
                .map(|(_, v)| v.clone())
        };
        assert_eq!(seeds(&one).as_deref(), Some("5 lossy, 3 lossless"));
        assert_eq!(seeds(&two).as_deref(), Some("10 lossy, 3 lossless"));
        let mut doubled = 0;
        for (a, b) in one.claims.iter().zip(&two.claims) {
            assert_eq!(a.spec.id, b.spec.id);
            let (Some(ea), Some(eb)) = (a.measured, b.measured) else {
                continue;
            };
            if ea.n > 3 {
                // The mode's runs plus as many new ones: twice the runs, a different mean.
                assert_eq!(eb.n, 2 * ea.n, "{}", a.spec.id);
                doubled += 1;
            }
        }
        assert!(doubled > 0, "no claim measured over several runs");
        // The default factor is the mode itself.
        assert_eq!(
            serde_json::to_string(&one).unwrap(),
            serde_json::to_string(&run_study(&Demo, crate::Sweeps::Quick, &NoProgress)).unwrap()
        );
    }

    #[test]
    fn quick_demo_holds_every_claim_and_is_deterministic() {
        let a = run_study(&Demo, crate::Sweeps::Quick, &NoProgress);
        assert!(a.error.is_none(), "{:?}", a.error);
        // Every mean holds; a few quick-mode intervals lie across a band (inconclusive).
        for c in &a.claims {
            assert!(c.means_hold && !c.failed(), "{}: {}", c.spec.id, c.detail);
        }
        // Same results on one thread and on three.
        let b = crate::with_jobs(Some(1), || {
            run_study(&Demo, crate::Sweeps::Quick, &NoProgress)
        })
        .unwrap();
        let c = crate::with_jobs(Some(3), || {
            run_study(&Demo, crate::Sweeps::Quick, &NoProgress)
        })
        .unwrap();
        let ja = serde_json::to_string(&a).unwrap();
        assert_eq!(ja, serde_json::to_string(&b).unwrap(), "1 thread differs");
        assert_eq!(ja, serde_json::to_string(&c).unwrap(), "3 threads differ");
    }
}

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

use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::{mix64, AgentRng};
use rmcast_proto::saw::{Receiver, ReceiverConfig, Sender, SenderConfig};
use rmcast_proto::testkit::Harness;
use rmcast_proto::{Bytes, Event, GroupId, NodeId, Time};

/// The demonstration study.
pub struct Demo;

const DELTA_US: u64 = 100;
const TIMEOUT_US: u64 = 1_000;
const GROUP: GroupId = GroupId(1);
const RECEIVERS: [usize; 3] = [1, 5, 20];

struct Plan {
    seeds: u64,
    messages: u64,
    losses: Vec<f64>,
    lossless_receivers: Vec<usize>,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Plan {
                seeds: 4,
                messages: 400,
                losses: vec![0.02, 0.1, 0.2],
                lossless_receivers: vec![1, 5, 20],
            }
        } else {
            Plan {
                seeds: 10,
                messages: 2000,
                losses: vec![0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3],
                lossless_receivers: vec![1, 2, 5, 10, 20, 50],
            }
        }
    }
}

/// E[R]: expected transmissions of one message to `r` receivers, per-copy loss `p`.
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

#[derive(Debug, Clone, Copy)]
struct HarnessJob {
    receivers: usize,
    loss: f64,
    messages: u64,
    seed: u64,
}

#[derive(Debug, Clone, Copy)]
struct HarnessResult {
    /// Mean message time (first send to last ACK), µs.
    msg_time_us: f64,
    /// Mean transmissions per message.
    transmissions: f64,
    /// Messages per second over the whole run.
    rate: f64,
    /// Every receiver delivered every message once, in order, and no message failed.
    reliable: bool,
}

fn run_harness(job: &HarnessJob) -> Result<HarnessResult, String> {
    let delta = Duration::from_micros(DELTA_US);
    let mut h = Harness::new(delta, job.loss, job.seed);
    let receivers: Vec<NodeId> = (1..=job.receivers as u32).map(NodeId).collect();
    let mut cfg = SenderConfig::new(
        NodeId(0),
        GROUP,
        receivers.clone(),
        Duration::from_micros(TIMEOUT_US),
    );
    cfg.queue_limit = usize::MAX;
    let s = h.add(Box::new(Sender::new(cfg)));
    for &r in &receivers {
        h.add(Box::new(Receiver::new(
            ReceiverConfig::new(r),
            AgentRng::derive(job.seed, r, 0),
        )));
    }
    h.set_group(GROUP, receivers);
    let n = job.messages;
    let mut refused = false;
    h.with_agent(s, |a, now| {
        for i in 0..n {
            if a.send(now, Bytes::from(i.to_be_bytes().to_vec())).is_err() {
                refused = true;
            }
        }
        a.close(now);
    });
    if refused {
        return Err("the saw sender refused a message".into());
    }
    h.run_until(Time::from_secs(24 * 3600));
    let mut times = Vec::new();
    let mut tx = 0u64;
    let mut failed = 0u64;
    let mut last = Time::ZERO;
    for (_, e) in h.events.first().map(Vec::as_slice).unwrap_or(&[]) {
        if let Event::MessageDone {
            sent_at,
            done_at,
            transmissions,
            failed: f,
            ..
        } = e
        {
            times.push((*done_at - *sent_at).as_nanos() as f64 / 1e3);
            tx += u64::from(*transmissions);
            failed += u64::from(*f);
            last = last.max(*done_at);
        }
    }
    if times.len() as u64 != n {
        return Err(format!(
            "{} of {n} messages finished (r = {}, p = {})",
            times.len(),
            job.receivers,
            job.loss
        ));
    }
    let reliable = failed == 0
        && h.events.iter().skip(1).all(|ev| {
            let seqs: Vec<u64> = ev
                .iter()
                .filter_map(|(_, e)| match e {
                    Event::Delivered { seq, .. } => Some(*seq),
                    _ => None,
                })
                .collect();
            seqs.len() as u64 == n && seqs.iter().enumerate().all(|(i, &s)| s == i as u64)
        });
    Ok(HarnessResult {
        msg_time_us: times.iter().sum::<f64>() / n as f64,
        transmissions: tx as f64 / n as f64,
        rate: n as f64 / last.as_secs_f64(),
        reliable,
    })
}

fn summarize<F: Fn(&HarnessResult) -> f64>(
    runs: &[HarnessResult],
    f: F,
) -> Result<Estimate, StudyError> {
    let v: Vec<f64> = runs.iter().map(f).collect();
    Estimate::from_samples(&v)
        .ok_or_else(|| StudyError::Run("a summary over zero runs or non-finite values".into()))
}

impl Study for Demo {
    fn name(&self) -> &'static str {
        "demo"
    }

    fn title(&self) -> &'static str {
        "Demonstration: multicast stop-and-wait against its closed forms"
    }

    fn source(&self) -> &'static str {
        "seed 000 (Segovia 1996), §2.5.2 protocol rule and §4.1 bounds; closed forms derived here"
    }

    fn claims_toml(&self) -> &'static str {
        include_str!("../../../../scenarios/repro/demo/claims.toml")
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.quick);
        let mut m = Measures::new();
        let mut plots = Vec::new();
        let seed_of = |r: usize, p: f64, k: u64| mix64(mix64(r as u64) ^ p.to_bits() ^ k);

        // Part A1: lossless, message time against 2δ for several group sizes.
        let mut jobs = Vec::new();
        for &r in &plan.lossless_receivers {
            for k in 0..plan.seeds.min(3) {
                jobs.push(HarnessJob {
                    receivers: r,
                    loss: 0.0,
                    messages: plan.messages,
                    seed: seed_of(r, 0.0, k),
                });
            }
        }
        // Part A2: lossy sweep.
        let lossy_start = jobs.len();
        for &r in &RECEIVERS {
            for &p in &plan.losses {
                for k in 0..plan.seeds {
                    jobs.push(HarnessJob {
                        receivers: r,
                        loss: p,
                        messages: plan.messages,
                        seed: seed_of(r, p, k),
                    });
                }
            }
        }
        let results = ctx.map(&jobs, run_harness);
        let mut runs = Vec::with_capacity(results.len());
        for r in results {
            runs.push(r.map_err(StudyError::Run)?);
        }
        let group = |pred: &dyn Fn(&HarnessJob) -> bool| -> Vec<HarnessResult> {
            jobs.iter()
                .zip(&runs)
                .filter(|(j, _)| pred(j))
                .map(|(_, r)| *r)
                .collect()
        };

        let two_delta_us = 2.0 * DELTA_US as f64;
        let mut time_pts = Vec::new();
        let mut rate_pts = Vec::new();
        for &r in &plan.lossless_receivers {
            let g = group(&|j| j.receivers == r && j.loss == 0.0);
            time_pts.push((r as f64, summarize(&g, |x| x.msg_time_us)?));
            rate_pts.push((r as f64, summarize(&g, |x| x.rate)?));
        }
        let exact = |v: f64| -> Vec<(f64, Estimate)> {
            plan.lossless_receivers
                .iter()
                .map(|&r| (r as f64, Estimate::exact(v)))
                .collect()
        };
        m.series(
            "harness.lossless.msg_time",
            "µs",
            "receivers",
            time_pts.clone(),
        );
        m.series(
            "analytic.lossless.msg_time",
            "µs",
            "receivers",
            exact(two_delta_us),
        );
        m.series("harness.lossless.rate", "messages/s", "receivers", rate_pts);
        m.series(
            "analytic.lossless.rate",
            "messages/s",
            "receivers",
            exact(1e6 / two_delta_us),
        );
        plots.push(Plot {
            id: "demo-harness-lossless".into(),
            title: "Stop-and-wait on the harness without loss".into(),
            caption: format!(
                "Mean time per message (first send to last ACK) against the number of \
                 receivers, fixed one-way delay δ = {DELTA_US} µs; the dashed line is the \
                 closed form 2δ."
            ),
            x: Axis::new("receivers", "count"),
            y: Axis::new("message time", "µs"),
            series: vec![
                PlotSeries::measured("rmcast saw (harness)", 0, &time_pts),
                PlotSeries::bound(
                    "closed form 2δ",
                    1,
                    &plan
                        .lossless_receivers
                        .iter()
                        .map(|&r| (r as f64, two_delta_us))
                        .collect::<Vec<_>>(),
                ),
            ],
        });

        let mut tx_series = Vec::new();
        for (ci, &r) in RECEIVERS.iter().enumerate() {
            let mut tx = Vec::new();
            let mut time = Vec::new();
            let mut tx_an = Vec::new();
            let mut time_an = Vec::new();
            for &p in &plan.losses {
                let g = group(&|j| j.receivers == r && j.loss == p);
                tx.push((p, summarize(&g, |x| x.transmissions)?));
                time.push((p, summarize(&g, |x| x.msg_time_us)?));
                let er = expected_rounds(p, r);
                tx_an.push((p, Estimate::exact(er)));
                time_an.push((
                    p,
                    Estimate::exact((er - 1.0) * TIMEOUT_US as f64 + two_delta_us),
                ));
            }
            m.series(format!("harness.tx.r{r}"), "transmissions", "p", tx.clone());
            m.series(
                format!("analytic.tx.r{r}"),
                "transmissions",
                "p",
                tx_an.clone(),
            );
            m.series(format!("harness.time.r{r}"), "µs", "p", time);
            m.series(format!("analytic.time.r{r}"), "µs", "p", time_an);
            tx_series.push(PlotSeries::measured(format!("rmcast, r = {r}"), ci, &tx));
            tx_series.push(PlotSeries::bound(
                format!("E[R], r = {r}"),
                ci,
                &tx_an.iter().map(|(p, e)| (*p, e.mean)).collect::<Vec<_>>(),
            ));
        }
        let lossy_runs = runs.len() - lossy_start;
        let reliable: Vec<f64> = runs[lossy_start..]
            .iter()
            .map(|r| if r.reliable { 1.0 } else { 0.0 })
            .collect();
        m.scalar(
            "harness.reliable",
            "fraction of runs",
            Estimate::from_samples(&reliable)
                .ok_or_else(|| StudyError::Run("no lossy runs".into()))?,
        );
        plots.push(Plot {
            id: "demo-harness-transmissions".into(),
            title: "Stop-and-wait transmissions per message under loss".into(),
            caption: "Mean transmissions per message (first send included) against the \
                      per-copy loss probability, for 1, 5 and 20 receivers; dashed lines are \
                      the closed form E[R] = Σₖ (1 − (1 − (1 − q)ᵏ)ʳ) with q = (1 − p)²."
                .into(),
            x: Axis::new("loss probability per copy p", "fraction"),
            y: Axis::new("transmissions per message", "count"),
            series: tx_series,
        });

        let setup = Setup {
            summary: "A built-in check of the repro machinery that is also a real test of \
                      `rmcast_proto::saw`: multicast stop-and-wait with multicast \
                      retransmission (seed 000 §2.5.2), driven to completion, compared with \
                      closed forms derived from the protocol's rules."
                .into(),
            topology: format!(
                "`rmcast_proto::testkit::Harness`: one sender and r receivers on a full mesh; \
                 every copy of every packet takes exactly δ = {DELTA_US} µs and is lost \
                 independently with probability p (data and ACKs alike)."
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
                    plan.losses
                        .iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                ("messages per run".into(), plan.messages.to_string()),
                (
                    "runs (seeds) per point".into(),
                    format!("{} lossy, {} lossless", plan.seeds, plan.seeds.min(3)),
                ),
                (
                    "runs in total".into(),
                    format!("{} ({} lossy)", runs.len(), lossy_runs),
                ),
            ],
            choices: vec![
                (
                    "retransmission limit".into(),
                    "none: every message completes".into(),
                ),
                (
                    "message size".into(),
                    "8 bytes (size does not matter on the harness: it has no bandwidth)".into(),
                ),
            ],
        };
        Ok(StudyOutput {
            setup,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{run_study, NoProgress};

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
    fn lossless_harness_message_time_is_two_delta() {
        let r = run_harness(&HarnessJob {
            receivers: 5,
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
    fn quick_demo_passes_all_claims_and_is_deterministic() {
        let a = run_study(&Demo, true, &NoProgress);
        assert!(a.error.is_none(), "{:?}", a.error);
        for c in &a.claims {
            assert!(c.passed(), "{}: {}", c.spec.id, c.detail);
        }
        let b = run_study(&Demo, true, &NoProgress);
        let ja = serde_json::to_string(&a).unwrap();
        let jb = serde_json::to_string(&b).unwrap();
        assert_eq!(ja, jb, "two runs differ");
    }
}

//! Part A of the demo: `saw` on the `testkit` harness (every copy takes exactly δ, each copy
//! lost independently with probability p), against the closed forms 2δ and E[R].

use super::{expected_rounds, seed_of, Plan, DELTA_US, GROUP, RECEIVERS, TIMEOUT_US};
use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::sweep::est_of;
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::saw::{Receiver, ReceiverConfig, Sender, SenderConfig};
use rmcast_proto::testkit::Harness;
use rmcast_proto::{Bytes, Event, NodeId, Time};

#[derive(Debug, Clone, Copy)]
pub(super) struct HarnessJob {
    pub(super) receivers: usize,
    /// One-way delay of every copy, µs.
    pub(super) delta_us: u64,
    pub(super) loss: f64,
    pub(super) messages: u64,
    pub(super) seed: u64,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct HarnessResult {
    /// Mean message time (first send to last ACK), µs.
    pub(super) msg_time_us: f64,
    /// Mean transmissions per message.
    pub(super) transmissions: f64,
    /// Messages per second over the whole run.
    pub(super) rate: f64,
    /// Every receiver delivered every message once, in order, and no message failed.
    pub(super) reliable: bool,
}

pub(super) fn run_harness(job: &HarnessJob) -> Result<HarnessResult, String> {
    let delta = Duration::from_micros(job.delta_us);
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
        let Some(a) = a.as_sender() else {
            refused = true;
            return;
        };
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

/// The harness runs: the lossless sweep (part A1) and the lossy one (part A2), each run's
/// job beside its result.
pub(super) struct Runs {
    pub(super) jobs: Vec<HarnessJob>,
    pub(super) results: Vec<HarnessResult>,
    /// Where the lossy runs start in `jobs` and `results`.
    pub(super) lossy_start: usize,
}

/// Message time (first send to last ACK) with 2δ, two copies, as the closed form.
fn two_delta_us() -> f64 {
    2.0 * DELTA_US as f64
}

/// The jobs of part A: lossless, message time against 2δ for several group sizes (A1); then
/// the lossy sweep (A2). Returns them with where the lossy ones start.
fn jobs(plan: &Plan) -> (Vec<HarnessJob>, usize) {
    let mut jobs = Vec::new();
    for &r in &plan.lossless_receivers {
        for k in 0..plan.seeds.min(3) {
            jobs.push(HarnessJob {
                receivers: r,
                delta_us: DELTA_US,
                loss: 0.0,
                messages: plan.messages,
                seed: seed_of(r, 0.0, k),
            });
        }
    }
    let lossy_start = jobs.len();
    for &r in &RECEIVERS {
        for &p in &plan.losses {
            for k in 0..plan.seeds {
                jobs.push(HarnessJob {
                    receivers: r,
                    delta_us: DELTA_US,
                    loss: p,
                    messages: plan.messages,
                    seed: seed_of(r, p, k),
                });
            }
        }
    }
    (jobs, lossy_start)
}

/// Plan and run part A, each job as `mutant` (if any) changes it.
pub(super) fn run(ctx: &RunCtx<'_>, plan: &Plan, mutant: Option<&str>) -> Result<Runs, StudyError> {
    let (jobs, lossy_start) = jobs(plan);
    let results = ctx.try_map(&jobs, |j| {
        let mut j = *j;
        match mutant {
            Some("no_loss") => j.loss = 0.0,
            Some("one_receiver") => j.receivers = 1,
            Some("double_delta") => j.delta_us *= 2,
            _ => {}
        }
        run_harness(&j)
    })?;
    Ok(Runs {
        jobs,
        results,
        lossy_start,
    })
}

impl Runs {
    /// The results of the runs whose job `pred` accepts.
    fn group(&self, pred: &dyn Fn(&HarnessJob) -> bool) -> Vec<HarnessResult> {
        self.jobs
            .iter()
            .zip(&self.results)
            .filter(|(j, _)| pred(j))
            .map(|(_, r)| *r)
            .collect()
    }

    /// Record part A1's message time and rate with their closed forms; returns the plot of
    /// the message time.
    pub(super) fn measure_lossless(
        &self,
        plan: &Plan,
        m: &mut Measures,
    ) -> Result<Plot, StudyError> {
        let mut time_pts = Vec::new();
        let mut rate_pts = Vec::new();
        for &r in &plan.lossless_receivers {
            let g = self.group(&|j| j.receivers == r && j.loss == 0.0);
            time_pts.push((r as f64, est_of(&g, |x| x.msg_time_us)?));
            rate_pts.push((r as f64, est_of(&g, |x| x.rate)?));
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
            exact(two_delta_us()),
        );
        m.series("harness.lossless.rate", "messages/s", "receivers", rate_pts);
        m.series(
            "analytic.lossless.rate",
            "messages/s",
            "receivers",
            exact(1e6 / two_delta_us()),
        );
        Ok(lossless_plot(plan, &time_pts))
    }

    /// Record part A2's transmissions and message time per group size against E[R], and the
    /// share of reliable runs; returns the plot of the transmissions.
    pub(super) fn measure_lossy(&self, plan: &Plan, m: &mut Measures) -> Result<Plot, StudyError> {
        let mut tx_series = Vec::new();
        for (ci, &r) in RECEIVERS.iter().enumerate() {
            let mut tx = Vec::new();
            let mut time = Vec::new();
            let mut tx_an = Vec::new();
            let mut time_an = Vec::new();
            for &p in &plan.losses {
                let g = self.group(&|j| j.receivers == r && j.loss == p);
                tx.push((p, est_of(&g, |x| x.transmissions)?));
                time.push((p, est_of(&g, |x| x.msg_time_us)?));
                let er = expected_rounds(p, r);
                tx_an.push((p, Estimate::exact(er)));
                time_an.push((
                    p,
                    Estimate::exact((er - 1.0) * TIMEOUT_US as f64 + two_delta_us()),
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
        let reliable: Vec<f64> = self.results[self.lossy_start..]
            .iter()
            .map(|r| if r.reliable { 1.0 } else { 0.0 })
            .collect();
        m.scalar(
            "harness.reliable",
            "fraction of runs",
            Estimate::from_samples(&reliable)
                .ok_or_else(|| StudyError::Run("no lossy runs".into()))?,
        );
        Ok(transmissions_plot(tx_series))
    }
}

/// Part A1's figure: message time against the group size, with the closed form 2δ.
fn lossless_plot(plan: &Plan, time_pts: &[(f64, Estimate)]) -> Plot {
    Plot {
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
            PlotSeries::measured("rmcast saw (harness)", 0, time_pts),
            PlotSeries::bound(
                "closed form 2δ",
                1,
                &plan
                    .lossless_receivers
                    .iter()
                    .map(|&r| (r as f64, two_delta_us()))
                    .collect::<Vec<_>>(),
            ),
        ],
    }
}

/// Part A2's figure: transmissions per message against the loss, with E[R].
fn transmissions_plot(series: Vec<PlotSeries>) -> Plot {
    Plot {
        id: "demo-harness-transmissions".into(),
        title: "Stop-and-wait transmissions per message under loss".into(),
        caption: "Mean transmissions per message (first send included) against the \
                  per-copy loss probability, for 1, 5 and 20 receivers; dashed lines are \
                  the closed form E[R] = Σₖ (1 − (1 − (1 − q)ᵏ)ʳ) with q = (1 − p)²."
            .into(),
        x: Axis::new("loss probability per copy p", "fraction"),
        y: Axis::new("transmissions per message", "count"),
        series,
    }
}

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
use crate::study::{About, RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::sweep::{est_of, join};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::{mix64, AgentRng};
use rmcast_proto::saw::{Receiver, ReceiverConfig, Sender, SenderConfig};
use rmcast_proto::testkit::Harness;
use rmcast_proto::{Agent, Bytes, Event, GroupId, NodeId, Time};
use rmcast_sim::{BusConfig, Stop, Traffic};

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

/// Data frame size on the bus, as in every experiment of seed 000 (bytes).
const DATA_FRAME: usize = 1518;
/// Timeout for the bus runs: the thesis's Table 4.1 runs use a timeout far above any
/// message time so that no retransmission happens without loss.
const BUS_TIMEOUT_MS: u64 = 1_000;

/// Datagram lengths of a `saw` DATA packet carrying `payload` bytes and of its ACK, read off
/// the real encoder (a sender and a receiver driven by hand).
fn saw_datagram_lengths(payload: usize) -> Result<(usize, usize), String> {
    let mut s = Sender::new(SenderConfig::new(
        NodeId(0),
        GROUP,
        vec![NodeId(1)],
        Duration::from_millis(1),
    ));
    s.send(Time::ZERO, Bytes::from(vec![0u8; payload]))
        .map_err(|e| format!("saw refused a {payload}-byte message: {e:?}"))?;
    let data = s
        .poll_transmit()
        .ok_or("the saw sender sent no DATA packet")?;
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1)), AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data.payload);
    let ack = r.poll_transmit().ok_or("the saw receiver sent no ACK")?;
    Ok((data.payload.len(), ack.payload.len()))
}

/// Frame sizes on the bus: (message payload giving a 1518-byte data frame, d bits, a bits).
fn bus_frames(bus: &BusConfig) -> Result<(usize, u64, u64), String> {
    let (empty, _) = saw_datagram_lengths(0)?;
    let payload = DATA_FRAME
        .checked_sub(bus.overhead + empty)
        .ok_or("saw's header is larger than a 1518-byte frame")?;
    let (data_len, ack_len) = saw_datagram_lengths(payload)?;
    let d = 8 * bus.frame_bytes(data_len) as u64;
    let a = 8 * bus.frame_bytes(ack_len) as u64;
    Ok((payload, d, a))
}

/// Seed 000 eq. 4.5: MSAW relative-throughput upper bound (r·d + r·a)/(d + r·a).
pub fn ubrt(r: f64, d: f64, a: f64) -> f64 {
    r * (d + a) / (d + r * a)
}

/// Seed 000 eq. 4.18: MSAW latency lower bound d + r·a (bit times).
pub fn lbl(r: f64, d: f64, a: f64) -> f64 {
    d + r * a
}

#[derive(Debug, Clone, Copy)]
struct BusJob {
    receivers: usize,
    messages: u64,
    payload: usize,
    seed: u64,
}

#[derive(Debug, Clone, Copy)]
struct BusResult {
    /// Per-message latency in bit times: mean, min, max.
    lat_mean: f64,
    lat_min: f64,
    lat_max: f64,
    /// Mean over messages of r·(d + a)/latency (the thesis's "mean RT", digest §1.9).
    rt_mean: f64,
    /// Largest per-message RT.
    rt_max: f64,
    collisions_per_msg: f64,
    retransmissions: u64,
}

fn run_bus(job: &BusJob, d: u64, a: u64) -> Result<BusResult, String> {
    let bus = BusConfig::default();
    let bit_ns = 1e9 / bus.bandwidth_bps as f64;
    let (mut sim, sender, receivers) = super::bus_sim(job.receivers, bus, GROUP, job.seed)?;
    let cfg = SenderConfig::new(
        sender,
        GROUP,
        receivers.clone(),
        Duration::from_millis(BUS_TIMEOUT_MS),
    );
    sim.add_agent(sender, Box::new(Sender::new(cfg)))
        .map_err(|e| format!("{e}"))?;
    for &r in &receivers {
        let rng = sim.agent_rng(r, 0);
        sim.add_agent(r, Box::new(Receiver::new(ReceiverConfig::new(r), rng)))
            .map_err(|e| format!("{e}"))?;
    }
    sim.add_traffic(sender, Traffic::saturated(job.messages, job.payload))
        .map_err(|e| format!("{e}"))?;
    let out = sim.run(&Stop::when_complete().until(Time::from_secs(3600)));
    if !out.completed {
        return Err(format!(
            "bus run with {} receivers did not complete: {}",
            job.receivers, out.reason
        ));
    }
    let r = job.receivers as f64;
    let lats: Vec<f64> = sim
        .events(sender)
        .iter()
        .filter_map(|(_, e)| match e {
            Event::MessageDone {
                sent_at, done_at, ..
            } => Some((*done_at - *sent_at).as_nanos() as f64 / bit_ns),
            _ => None,
        })
        .collect();
    if lats.len() as u64 != job.messages || lats.iter().any(|&l| l <= 0.0) {
        return Err(format!(
            "{} of {} messages finished on the bus",
            lats.len(),
            job.messages
        ));
    }
    let n = lats.len() as f64;
    let rts: Vec<f64> = lats.iter().map(|l| r * (d + a) as f64 / l).collect();
    let repairs = sim
        .agent(sender)
        .map(|ag| ag.stats().repairs_sent)
        .unwrap_or(0);
    Ok(BusResult {
        lat_mean: lats.iter().sum::<f64>() / n,
        lat_min: lats.iter().copied().fold(f64::INFINITY, f64::min),
        lat_max: lats.iter().copied().fold(0.0, f64::max),
        rt_mean: rts.iter().sum::<f64>() / n,
        rt_max: rts.iter().copied().fold(0.0, f64::max),
        collisions_per_msg: sim.counters().bus_collisions as f64 / n,
        retransmissions: repairs,
    })
}

#[derive(Debug, Clone, Copy)]
struct HarnessJob {
    receivers: usize,
    /// One-way delay of every copy, µs.
    delta_us: u64,
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

impl Study for Demo {
    fn mutants(&self) -> Vec<crate::Mutant> {
        MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::for_ctx(ctx);
        let mut m = Measures::new();
        let mut plots = Vec::new();
        let seed_of = |r: usize, p: f64, k: u64| mix64(mix64(r as u64) ^ p.to_bits() ^ k);

        // Part A1: lossless, message time against 2δ for several group sizes.
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
        // Part A2: lossy sweep.
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
        let mutant = ctx.mutant_of(MUTANTS);
        let runs = ctx.try_map(&jobs, |j| {
            let mut j = *j;
            match mutant {
                Some("no_loss") => j.loss = 0.0,
                Some("one_receiver") => j.receivers = 1,
                Some("double_delta") => j.delta_us *= 2,
                _ => {}
            }
            run_harness(&j)
        })?;
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
                tx.push((p, est_of(&g, |x| x.transmissions)?));
                time.push((p, est_of(&g, |x| x.msg_time_us)?));
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

        // Part B: saw on the simulator's 10 Mb/s Ethernet bus (seed 000 §3), no loss.
        let bus = BusConfig::default();
        let (payload, d, a) = bus_frames(&bus).map_err(StudyError::Run)?;
        let (df, af) = (d as f64, a as f64);
        let mut bus_jobs = Vec::new();
        for &r in &plan.bus_receivers {
            for k in 0..plan.bus_seeds {
                bus_jobs.push(BusJob {
                    receivers: r,
                    messages: plan.bus_messages,
                    payload,
                    seed: seed_of(r, -1.0, k),
                });
            }
        }
        let bus_runs = ctx.try_map(&bus_jobs, |j| {
            let mut j = *j;
            if mutant == Some("one_receiver") {
                j.receivers = 1;
            }
            run_bus(&j, d, a)
        })?;
        let bus_group = |r: usize| -> Vec<BusResult> {
            bus_jobs
                .iter()
                .zip(&bus_runs)
                .filter(|(j, _)| j.receivers == r)
                .map(|(_, x)| *x)
                .collect()
        };
        let (mut rt, mut rt_max, mut lat, mut lat_min, mut lat_max, mut coll) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        let mut retx = 0u64;
        for &r in &plan.bus_receivers {
            let g = bus_group(r);
            let x = r as f64;
            rt.push((x, est_of(&g, |b| b.rt_mean)?));
            rt_max.push((x, est_of(&g, |b| b.rt_max)?));
            lat.push((x, est_of(&g, |b| b.lat_mean)?));
            lat_min.push((x, est_of(&g, |b| b.lat_min)?));
            lat_max.push((x, est_of(&g, |b| b.lat_max)?));
            coll.push((x, est_of(&g, |b| b.collisions_per_msg)?));
            retx += g.iter().map(|b| b.retransmissions).sum::<u64>();
        }
        let t41_rt = ctx.paper("t4_1_mean_rt")?;
        let t41_lat = ctx.paper("t4_1_mean_lat")?;
        let t41_ubrt = ctx.paper("t4_1_ubrt")?;
        let t41_lbl = ctx.paper("t4_1_lbl")?;
        // Bounds at our sweep points and at the thesis's tabulated points.
        let mut xs_all: Vec<f64> = plan.bus_receivers.iter().map(|&r| r as f64).collect();
        xs_all.extend(t41_ubrt.x.iter().copied());
        xs_all.sort_by(f64::total_cmp);
        xs_all.dedup();
        let ub: Vec<(f64, Estimate)> = xs_all
            .iter()
            .map(|&x| (x, Estimate::exact(ubrt(x, df, af))))
            .collect();
        let lb: Vec<(f64, Estimate)> = xs_all
            .iter()
            .map(|&x| (x, Estimate::exact(lbl(x, df, af))))
            .collect();
        m.series("bus.rt_mean", "dimensionless", "receivers", rt.clone());
        m.series("bus.rt_max", "dimensionless", "receivers", rt_max);
        m.series("bus.latency_mean", "bit times", "receivers", lat.clone());
        m.series("bus.latency_min", "bit times", "receivers", lat_min.clone());
        m.series("bus.latency_max", "bit times", "receivers", lat_max);
        m.series(
            "bus.collisions_per_message",
            "collisions",
            "receivers",
            coll,
        );
        m.series("analytic.ubrt", "dimensionless", "receivers", ub.clone());
        m.series("analytic.lbl", "bit times", "receivers", lb.clone());
        let r1 = bus_group(1);
        if r1.is_empty() {
            return Err(StudyError::Run("the bus sweep must include r = 1".into()));
        }
        m.scalar(
            "bus.r1.latency_min",
            "bit times",
            est_of(&r1, |b| b.lat_min)?,
        );
        m.scalar(
            "bus.r1.latency_max",
            "bit times",
            est_of(&r1, |b| b.lat_max)?,
        );
        m.scalar("analytic.d_plus_a", "bit times", Estimate::exact(df + af));
        let line = |v: &[(f64, Estimate)]| -> Vec<(f64, f64)> {
            v.iter().map(|(x, e)| (*x, e.mean)).collect()
        };
        plots.push(Plot {
            id: "demo-bus-rt".into(),
            title: "saw on the 10 Mb/s bus: relative throughput".into(),
            caption: format!(
                "Mean over messages of r·(d + a)/latency (the thesis's relative throughput) \
                 against the number of receivers, d = {d} and a = {a} bit times, no loss, \
                 {} runs of {} messages per point; dashed: the upper bound UBRT \
                 (seed 000 eq. 4.5); diamonds: the thesis's Table 4.1 (mean RT, and its UBRT \
                 column on the bound). The `segovia` study tests the thesis's numbers; here \
                 only the bound is a claim.",
                plan.bus_seeds, plan.bus_messages
            ),
            x: Axis::new("receivers r", "count"),
            y: Axis::new("relative throughput", "dimensionless"),
            series: vec![
                PlotSeries::measured("rmcast saw, mean RT", 0, &rt),
                PlotSeries::bound("UBRT (eq. 4.5)", 1, &line(&ub)),
                PlotSeries::paper("thesis Table 4.1 mean RT", 0, &t41_rt.points()),
                PlotSeries::paper("thesis Table 4.1 UBRT", 1, &t41_ubrt.points()),
            ],
        });
        plots.push(Plot {
            id: "demo-bus-latency".into(),
            title: "saw on the 10 Mb/s bus: message latency".into(),
            caption: "Mean and minimum message latency (first send to last ACK) against the \
                      number of receivers; dashed: the lower bound LBL = d + r·a (seed 000 eq. \
                      4.18); diamonds: the thesis's Table 4.1 mean latency and LBL columns."
                .into(),
            x: Axis::new("receivers r", "count"),
            y: Axis::new("message latency", "bit times"),
            series: vec![
                PlotSeries::measured("rmcast saw, mean latency", 0, &lat),
                PlotSeries::measured("rmcast saw, min latency", 2, &lat_min),
                PlotSeries::bound("LBL = d + r·a (eq. 4.18)", 1, &line(&lb)),
                PlotSeries::paper("thesis Table 4.1 mean latency", 0, &t41_lat.points()),
                PlotSeries::paper("thesis Table 4.1 LBL", 1, &t41_lbl.points()),
            ],
        });

        let setup = Setup {
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
                    format!("{} ({} lossy)", runs.len(), lossy_runs),
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

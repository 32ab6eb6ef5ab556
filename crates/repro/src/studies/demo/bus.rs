//! Part B of the demo: `saw` on the simulator's shared 10 Mb/s Ethernet bus (seed 000 §3), no
//! loss, against the thesis's bounds UBRT and LBL and its Table 4.1.

use super::{lbl, seed_of, ubrt, Plan, GROUP};
use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::sweep::est_of;
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::saw::{Receiver, ReceiverConfig, Sender, SenderConfig};
use rmcast_proto::SenderAgent;
use rmcast_proto::{Agent, Bytes, Event, NodeId, Time};
use rmcast_sim::{BusConfig, Stop, Traffic};

/// Data frame size on the bus, as in every experiment of seed 000 (bytes).
pub(super) const DATA_FRAME: usize = 1518;
/// Timeout for the bus runs: the thesis's Table 4.1 runs use a timeout far above any
/// message time so that no retransmission happens without loss.
pub(super) const BUS_TIMEOUT_MS: u64 = 1_000;

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
pub(super) fn bus_frames(bus: &BusConfig) -> Result<(usize, u64, u64), String> {
    let (empty, _) = saw_datagram_lengths(0)?;
    let payload = DATA_FRAME
        .checked_sub(bus.overhead + empty)
        .ok_or("saw's header is larger than a 1518-byte frame")?;
    let (data_len, ack_len) = saw_datagram_lengths(payload)?;
    let d = 8 * bus.frame_bytes(data_len) as u64;
    let a = 8 * bus.frame_bytes(ack_len) as u64;
    Ok((payload, d, a))
}

#[derive(Debug, Clone, Copy)]
pub(super) struct BusJob {
    pub(super) receivers: usize,
    pub(super) messages: u64,
    pub(super) payload: usize,
    pub(super) seed: u64,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct BusResult {
    /// Per-message latency in bit times: mean, min, max.
    pub(super) lat_mean: f64,
    pub(super) lat_min: f64,
    pub(super) lat_max: f64,
    /// Mean over messages of r·(d + a)/latency (the thesis's "mean RT", digest §1.9).
    pub(super) rt_mean: f64,
    /// Largest per-message RT.
    pub(super) rt_max: f64,
    pub(super) collisions_per_msg: f64,
    pub(super) retransmissions: u64,
}

pub(super) fn run_bus(job: &BusJob, d: u64, a: u64) -> Result<BusResult, String> {
    let bus = BusConfig::default();
    let bit_ns = 1e9 / bus.bandwidth_bps as f64;
    let (mut sim, sender, receivers) = super::super::bus_sim(job.receivers, bus, GROUP, job.seed)?;
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

/// The bus runs of part B, each job beside its result, with the frame sizes they used.
pub(super) struct Runs {
    jobs: Vec<BusJob>,
    results: Vec<BusResult>,
    /// The message payload that fills a 1518-byte data frame (bytes).
    pub(super) payload: usize,
    /// Data and ACK frame times (bit times).
    pub(super) d: u64,
    pub(super) a: u64,
}

/// What part B records and draws: per group size, the mean and largest RT, the mean, least
/// and largest latency, the collisions per message, the bounds at the sweep's and the
/// thesis's points, and the retransmissions seen in all runs.
pub(super) struct Measured {
    rt: Vec<(f64, Estimate)>,
    lat: Vec<(f64, Estimate)>,
    lat_min: Vec<(f64, Estimate)>,
    ub: Vec<(f64, Estimate)>,
    lb: Vec<(f64, Estimate)>,
    pub(super) retransmissions: u64,
}

/// Plan and run part B, each job as `mutant` (if any) changes it.
pub(super) fn run(ctx: &RunCtx<'_>, plan: &Plan, mutant: Option<&str>) -> Result<Runs, StudyError> {
    let bus = BusConfig::default();
    let (payload, d, a) = bus_frames(&bus).map_err(StudyError::Run)?;
    let mut jobs = Vec::new();
    for &r in &plan.bus_receivers {
        for k in 0..plan.bus_seeds {
            jobs.push(BusJob {
                receivers: r,
                messages: plan.bus_messages,
                payload,
                seed: seed_of(r, -1.0, k),
            });
        }
    }
    let results = ctx.try_map(&jobs, |j| {
        let mut j = *j;
        if mutant == Some("one_receiver") {
            j.receivers = 1;
        }
        run_bus(&j, d, a)
    })?;
    Ok(Runs {
        jobs,
        results,
        payload,
        d,
        a,
    })
}

impl Runs {
    /// The results of the runs with `r` receivers.
    fn group(&self, r: usize) -> Vec<BusResult> {
        self.jobs
            .iter()
            .zip(&self.results)
            .filter(|(j, _)| j.receivers == r)
            .map(|(_, x)| *x)
            .collect()
    }

    /// Record part B's series and the bounds at the sweep's points and at `table_xs` (the
    /// thesis's tabulated group sizes), and the one-receiver latencies against d + a.
    pub(super) fn measure(
        &self,
        plan: &Plan,
        table_xs: &[f64],
        m: &mut Measures,
    ) -> Result<Measured, StudyError> {
        let (df, af) = (self.d as f64, self.a as f64);
        let (mut rt, mut rt_max, mut lat, mut lat_min, mut lat_max, mut coll) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        let mut retx = 0u64;
        for &r in &plan.bus_receivers {
            let g = self.group(r);
            let x = r as f64;
            rt.push((x, est_of(&g, |b| b.rt_mean)?));
            rt_max.push((x, est_of(&g, |b| b.rt_max)?));
            lat.push((x, est_of(&g, |b| b.lat_mean)?));
            lat_min.push((x, est_of(&g, |b| b.lat_min)?));
            lat_max.push((x, est_of(&g, |b| b.lat_max)?));
            coll.push((x, est_of(&g, |b| b.collisions_per_msg)?));
            retx += g.iter().map(|b| b.retransmissions).sum::<u64>();
        }
        // Bounds at our sweep points and at the thesis's tabulated points.
        let mut xs_all: Vec<f64> = plan.bus_receivers.iter().map(|&r| r as f64).collect();
        xs_all.extend(table_xs.iter().copied());
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
        let r1 = self.group(1);
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
        Ok(Measured {
            rt,
            lat,
            lat_min,
            ub,
            lb,
            retransmissions: retx,
        })
    }

    /// Part B's figures: relative throughput against UBRT and latency against LBL, each with
    /// the thesis's Table 4.1 columns.
    pub(super) fn plots(
        &self,
        plan: &Plan,
        ctx: &RunCtx<'_>,
        got: &Measured,
    ) -> Result<Vec<Plot>, StudyError> {
        let (d, a) = (self.d, self.a);
        let t41_rt = ctx.paper("t4_1_mean_rt")?;
        let t41_lat = ctx.paper("t4_1_mean_lat")?;
        let t41_ubrt = ctx.paper("t4_1_ubrt")?;
        let t41_lbl = ctx.paper("t4_1_lbl")?;
        let line = |v: &[(f64, Estimate)]| -> Vec<(f64, f64)> {
            v.iter().map(|(x, e)| (*x, e.mean)).collect()
        };
        let rt = Plot {
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
                PlotSeries::measured("rmcast saw, mean RT", 0, &got.rt),
                PlotSeries::bound("UBRT (eq. 4.5)", 1, &line(&got.ub)),
                PlotSeries::paper("thesis Table 4.1 mean RT", 0, &t41_rt.points()),
                PlotSeries::paper("thesis Table 4.1 UBRT", 1, &t41_ubrt.points()),
            ],
        };
        let latency = Plot {
            id: "demo-bus-latency".into(),
            title: "saw on the 10 Mb/s bus: message latency".into(),
            caption: "Mean and minimum message latency (first send to last ACK) against the \
                      number of receivers; dashed: the lower bound LBL = d + r·a (seed 000 eq. \
                      4.18); diamonds: the thesis's Table 4.1 mean latency and LBL columns."
                .into(),
            x: Axis::new("receivers r", "count"),
            y: Axis::new("message latency", "bit times"),
            series: vec![
                PlotSeries::measured("rmcast saw, mean latency", 0, &got.lat),
                PlotSeries::measured("rmcast saw, min latency", 2, &got.lat_min),
                PlotSeries::bound("LBL = d + r·a (eq. 4.18)", 1, &line(&got.lb)),
                PlotSeries::paper("thesis Table 4.1 mean latency", 0, &t41_lat.points()),
                PlotSeries::paper("thesis Table 4.1 LBL", 1, &t41_lbl.points()),
            ],
        };
        Ok(vec![rt, latency])
    }
}

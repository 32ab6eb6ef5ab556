//! `xtp`: seed 002 (Johnstone & Williams 1997) — reliable multicast with the Xpress Transport
//! Protocol, measured with SandiaXTP's `metric` on four workstations on one 10 Mb/s Ethernet.
//!
//! **Simulation** (`sim.*` measures): one sender and 1–3 receivers on `rmcast_sim`'s seed-000
//! Ethernet bus (10 Mb/s, 1-persistent CSMA/CD, binary exponential backoff), driven by
//! `rmcast_proto::xtp`. The application is the thesis's `metric`: it sends a 51,200- or
//! 1,024,000-byte message in writes of 64–8192 bytes; each write call first costs
//! [`PER_CALL_COST`] (the user-space daemon's per-call cost on the 1997 SPARCs, derived from the
//! thesis's Appendix) and then blocks until every receiver holds the write (block on
//! acknowledgment). One receiver drops 0, 1/25, 1/10 or 1/5 of the packets it receives.
//! Timing runs from the start (FIRST) to the last write's acknowledgment; throughput is
//! message bytes × 8 / timing, as in the thesis. A run that CTIMEOUT aborts has failed and is
//! left out of the throughput averages, as the thesis did.
//!
//! **Real network** (`net.*` measures, see `xtp_net.rs`): the same agent through
//! `rmcast-net` on this machine's loopback interface, real UDP multicast sockets, loss injected
//! on receive at one receiver, no modelled per-call cost.
//!
//! Two protocol settings: `thesis` (go-back-N, uncapped WTIMER back-off, no periodic SREQ,
//! CTIMEOUT 60 s) and `improved` (the thesis's recommendations: selective repeat, back-off
//! capped at 1 s, an SREQ every 8 packets; CTIMEOUT stays 60 s).

use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::mix64;
use rmcast_proto::{xtp, Agent, Bytes, Event, GroupId, NodeId, Outbox, SendError, Time};
use rmcast_sim::{BusConfig, LossModel, LossRule, LossSite, Network, Sim, Stop, Traffic};
use std::collections::BTreeMap;

/// The seed 002 study.
pub struct Xtp;

const GROUP: GroupId = GroupId(1);

/// Cost of one write call before its data reaches the protocol: the thesis's no-loss runs of
/// the 1 MB message spend 4.59–4.91 ms per call at 64–512-byte writes in all four modes
/// (digest §2.7.3, mean Timing / calls), flat in the write size, i.e. a per-call floor of the
/// user-space daemon; the digest rounds it to 4.7 ms. The simulated network adds its own
/// transmission and round-trip time on top.
pub const PER_CALL_COST: Duration = Duration::from_micros(4_700);

/// Ethernet framing added to each datagram on the bus: IP header 20 + Ethernet header and
/// FCS 18, so a full 1,448-byte packet (32-byte header) is a 1,518-byte frame.
pub const FRAME_OVERHEAD: usize = 38;

/// The thesis's message sizes ("50K" and "1 Meg").
pub const MESSAGES: [u64; 2] = [51_200, 1_024_000];
/// The thesis's write (buffer) sizes.
pub const WRITES: [usize; 8] = [64, 128, 256, 512, 1024, 2048, 4096, 8192];
/// Loss at one receiver: none, 1/25, 1/10, 1/5.
pub const LOSSES: [(u32, f64); 4] = [(0, 0.0), (4, 0.04), (10, 0.1), (20, 0.2)];

/// Transmission method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Unicast,
    /// Multicast to this many receivers.
    Multi(usize),
}

impl Mode {
    pub fn key(self) -> String {
        match self {
            Mode::Unicast => "uni".into(),
            Mode::Multi(n) => format!("m{n}"),
        }
    }
    pub fn receivers(self) -> usize {
        match self {
            Mode::Unicast => 1,
            Mode::Multi(n) => n,
        }
    }
    fn label(self) -> String {
        match self {
            Mode::Unicast => "unicast".into(),
            Mode::Multi(n) => format!("multicast 1:{n}"),
        }
    }
}

pub const MODES: [Mode; 4] = [
    Mode::Unicast,
    Mode::Multi(1),
    Mode::Multi(2),
    Mode::Multi(3),
];

/// Protocol settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    Thesis,
    Improved,
    /// T7's variant: the thesis setting (go-back-N, FASTNAK, uncapped back-off) with writes
    /// that do not block on acknowledgment (up to 64 queued) and small queued writes coalesced
    /// into shared packets — what the thesis says SandiaXTP did at 1/25 loss.
    Coalesce,
}

impl Setting {
    pub fn key(self) -> &'static str {
        match self {
            Setting::Thesis => "thesis",
            Setting::Improved => "improved",
            Setting::Coalesce => "coalesce",
        }
    }
    pub fn config(self, node: NodeId, rx: Vec<NodeId>, multicast: bool) -> xtp::SenderConfig {
        match self {
            Setting::Thesis => xtp::SenderConfig::thesis(node, GROUP, rx, multicast),
            Setting::Improved => xtp::SenderConfig::improved(node, GROUP, rx, multicast),
            Setting::Coalesce => xtp::SenderConfig {
                block_on_ack: false,
                coalesce: true,
                ..xtp::SenderConfig::thesis(node, GROUP, rx, multicast)
            },
        }
    }
}

pub fn msg_key(m: u64) -> &'static str {
    if m < 100_000 {
        "50k"
    } else {
        "1mb"
    }
}

/// A grid column: setting, message, method, loss key.
type GroupKey = (Setting, u64, Mode, u32);

/// One simulated run.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    pub message: u64,
    pub write: usize,
    pub mode: Mode,
    /// Loss key (0, 4, 10, 20) and probability at receiver 1.
    pub loss: (u32, f64),
    pub setting: Setting,
    pub seed: u64,
}

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOut {
    /// Completed: every write acknowledged, every receiver delivered the whole message.
    pub ok: bool,
    pub aborted: bool,
    /// Start to last acknowledgment, seconds.
    pub seconds: f64,
    pub mbps: f64,
    pub calls: u64,
    pub ms_per_call: f64,
    pub repairs: u64,
    pub wtimer_expiries: u64,
}

/// The application of the thesis's `metric`: each write call costs [`PER_CALL_COST`] before it
/// reaches the protocol and returns when the protocol takes the next one (block on
/// acknowledgment); the last write is cut to the message's remainder.
pub struct PerCall {
    inner: xtp::Sender,
    cost: Duration,
    pending: Option<(Time, Bytes)>,
    remaining: u64,
    closing: bool,
}

impl PerCall {
    pub fn new(inner: xtp::Sender, cost: Duration, message: u64) -> Self {
        PerCall {
            inner,
            cost,
            pending: None,
            remaining: message,
            closing: false,
        }
    }
    pub fn sender(&self) -> &xtp::Sender {
        &self.inner
    }
    fn release(&mut self, now: Time) {
        if self.pending.as_ref().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, d)) = self.pending.take() {
                // Refused only after an abort; the run has then failed anyway.
                let _ = self.inner.send(now, d);
            }
            if self.closing {
                self.inner.close(now);
            }
        }
    }
}

impl Agent for PerCall {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        self.inner.handle_packet(now, from, packet);
    }
    fn handle_timeout(&mut self, now: Time) {
        self.release(now);
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        let p = self.pending.as_ref().map(|(t, _)| *t);
        match (p, self.inner.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn outbox(&self) -> &Outbox {
        self.inner.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.inner.outbox_mut()
    }
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        if self.pending.is_some() || !self.inner.can_send() {
            return Err(SendError::Full(data));
        }
        if self.remaining == 0 || self.inner.aborted() {
            return Err(SendError::Closed);
        }
        let n = (data.len() as u64).min(self.remaining) as usize;
        self.remaining -= n as u64;
        self.pending = Some((now + self.cost, data.slice(..n)));
        Ok(())
    }
    fn can_send(&self) -> bool {
        self.pending.is_none() && self.remaining > 0 && self.inner.can_send()
    }
    fn close(&mut self, now: Time) {
        if self.pending.is_some() {
            self.closing = true;
        } else {
            self.inner.close(now);
        }
    }
}

/// Run one simulated cell.
pub fn run_sim(c: &Cell) -> Result<RunOut, String> {
    let n = c.mode.receivers();
    let bus = BusConfig {
        overhead: FRAME_OVERHEAD,
        ..BusConfig::default()
    };
    let mut net = Network::new();
    let nodes: Vec<NodeId> = (0..=n).map(|_| net.add_host()).collect();
    net.add_bus(&nodes, bus)
        .map_err(|e| format!("building the bus: {e}"))?;
    let (sender, receivers) = match nodes.split_first() {
        Some((a, b)) => (*a, b.to_vec()),
        None => return Err("no nodes".into()),
    };
    let mut sim = Sim::new(net, c.seed);
    sim.set_group(GROUP, &receivers)
        .map_err(|e| e.to_string())?;
    let multicast = matches!(c.mode, Mode::Multi(_));
    let cfg = c.setting.config(sender, receivers.clone(), multicast);
    let calls = c.message.div_ceil(c.write as u64);
    sim.add_agent(
        sender,
        Box::new(PerCall::new(
            xtp::Sender::new(cfg),
            PER_CALL_COST,
            c.message,
        )),
    )
    .map_err(|e| e.to_string())?;
    for &r in &receivers {
        sim.add_agent(r, Box::new(xtp::Receiver::new(xtp::ReceiverConfig::new(r))))
            .map_err(|e| e.to_string())?;
    }
    if c.loss.1 > 0.0 {
        if let Some(&lossy) = receivers.first() {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Rx {
                        node: lossy,
                        iface: None,
                    },
                    LossModel::Bernoulli { p: c.loss.1 },
                )
                .cause("induced"),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    sim.add_traffic(sender, Traffic::saturated(calls, c.write))
        .map_err(|e| e.to_string())?;
    let out = sim.run(&Stop::when_complete().until(Time::from_secs(6 * 3600)));
    let events = sim.events(sender);
    let done: Vec<(Time, bool)> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::MessageDone {
                done_at, failed, ..
            } => Some((*done_at, *failed)),
            _ => None,
        })
        .collect();
    let failed = done.iter().any(|d| d.1) || (done.len() as u64) < calls;
    let last = done.iter().map(|d| d.0).max().unwrap_or(Time::ZERO);
    let mut delivered_ok = true;
    for &r in &receivers {
        let bytes: u64 = sim
            .events(r)
            .iter()
            .map(|(_, e)| match e {
                Event::Delivered { data, .. } => data.len() as u64,
                _ => 0,
            })
            .sum();
        delivered_ok &= bytes == c.message;
    }
    let seconds = last.as_secs_f64();
    let ss = sim
        .agent(sender)
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    let ok = out.completed && !failed && delivered_ok && seconds > 0.0;
    Ok(RunOut {
        ok,
        aborted: failed,
        seconds,
        mbps: if seconds > 0.0 {
            c.message as f64 * 8.0 / seconds / 1e6
        } else {
            0.0
        },
        calls,
        ms_per_call: seconds * 1e3 / calls as f64,
        repairs: ss.repairs_sent,
        wtimer_expiries: ss.timeouts,
    })
}

// ------------------------------------------------------------------------------ the plan

struct Plan {
    writes: Vec<usize>,
    reps: u64,
    scale_ns: Vec<usize>,
    scale_writes: Vec<usize>,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Plan {
                writes: vec![64, 256, 1024, 2048, 8192],
                reps: 1,
                scale_ns: vec![1, 10],
                scale_writes: vec![8192],
            }
        } else {
            Plan {
                writes: WRITES.to_vec(),
                reps: 3,
                scale_ns: vec![1, 2, 3, 10, 100, 1000],
                scale_writes: vec![1024, 8192],
            }
        }
    }

    fn cells(&self) -> Vec<Cell> {
        let mut v = Vec::new();
        for setting in [Setting::Thesis, Setting::Improved] {
            for &message in &MESSAGES {
                for &mode in &MODES {
                    for &loss in &LOSSES {
                        for &write in &self.writes {
                            for k in 0..self.reps {
                                let seed = mix64(
                                    message
                                        ^ (write as u64) << 20
                                        ^ (mode.receivers() as u64) << 40
                                        ^ u64::from(matches!(mode, Mode::Unicast)) << 50
                                        ^ u64::from(loss.0) << 52
                                        ^ k << 60,
                                );
                                v.push(Cell {
                                    message,
                                    write,
                                    mode,
                                    loss,
                                    setting,
                                    seed,
                                });
                                // T7's coalescing variant: unicast, writes up to 1024 B, the
                                // same seeds (same loss draws) as the thesis setting.
                                if setting == Setting::Thesis
                                    && mode == Mode::Unicast
                                    && write <= 1024
                                {
                                    v.push(Cell {
                                        message,
                                        write,
                                        mode,
                                        loss,
                                        setting: Setting::Coalesce,
                                        seed,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        v
    }

    fn scale_cells(&self) -> Vec<Cell> {
        let mut v = Vec::new();
        for &n in &self.scale_ns {
            // 1,000 receivers in 1024-B writes take minutes of simulation (a CNTL storm on
            // the bus per write): only the 8192-B writes there.
            for &write in self.scale_writes.iter().filter(|&&w| n < 1000 || w == 8192) {
                for loss in [(0, 0.0), (10, 0.1)] {
                    v.push(Cell {
                        message: 1_024_000,
                        write,
                        mode: Mode::Multi(n),
                        loss,
                        setting: Setting::Improved,
                        seed: mix64(
                            0x5ca1e ^ (n as u64) << 8 ^ (write as u64) << 24 ^ u64::from(loss.0),
                        ),
                    });
                }
            }
        }
        v
    }
}

fn est(v: &[f64]) -> Option<Estimate> {
    Estimate::from_samples(v)
}

/// Series name of a grid cell's measure.
pub fn key(setting: Setting, message: u64, mode: Mode, loss: u32) -> String {
    format!(
        "sim.{}.{}.{}.l{}",
        setting.key(),
        msg_key(message),
        mode.key(),
        loss
    )
}

fn log2(x: f64) -> f64 {
    x.log2()
}

impl Study for Xtp {
    fn name(&self) -> &'static str {
        "xtp"
    }

    fn title(&self) -> &'static str {
        "Seed 002: XTP-style transmitter-driven reliable multicast (Johnstone & Williams 1997)"
    }

    fn source(&self) -> &'static str {
        "seed 002: G. S. Johnstone and G. D. Williams, Applied Reliable Multicast Using the \
         Xpress Transport Protocol (XTP), M.S. thesis, Naval Postgraduate School, 1997"
    }

    fn claims_toml(&self) -> &'static str {
        include_str!("../../../../scenarios/repro/xtp/claims.toml")
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.quick);
        let cells = plan.cells();
        let results: Vec<RunOut> = ctx
            .map(&cells, run_sim)
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(StudyError::Run)?;
        let scale = plan.scale_cells();
        let scale_out: Vec<RunOut> = ctx
            .map(&scale, run_sim)
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(StudyError::Run)?;

        let mut m = Measures::new();
        let mut notes = Vec::new();
        // Group runs by (setting, message, mode, loss) and write.
        let mut groups: BTreeMap<GroupKey, BTreeMap<usize, Vec<RunOut>>> = BTreeMap::new();
        for (c, o) in cells.iter().zip(&results) {
            groups
                .entry((c.setting, c.message, c.mode, c.loss.0))
                .or_default()
                .entry(c.write)
                .or_default()
                .push(*o);
        }
        let mut mbps: BTreeMap<GroupKey, Vec<(f64, Estimate)>> = BTreeMap::new();
        for (&(setting, message, mode, loss), by_w) in &groups {
            let k = key(setting, message, mode, loss);
            let mut thr = Vec::new();
            let mut succ = Vec::new();
            let mut mpc = Vec::new();
            let mut rep = Vec::new();
            for (&w, runs) in by_w {
                let good: Vec<f64> = runs.iter().filter(|o| o.ok).map(|o| o.mbps).collect();
                if let Some(e) = est(&good) {
                    thr.push((w as f64, e));
                }
                let ok = runs.iter().filter(|o| o.ok).count() as f64 / runs.len().max(1) as f64;
                succ.push((w as f64, Estimate::exact(ok)));
                let calls: Vec<f64> = runs
                    .iter()
                    .filter(|o| o.ok)
                    .map(|o| o.ms_per_call)
                    .collect();
                if let Some(e) = est(&calls) {
                    mpc.push((w as f64, e));
                }
                let r: Vec<f64> = runs.iter().map(|o| o.repairs as f64).collect();
                if let Some(e) = est(&r) {
                    rep.push((w as f64, e));
                }
            }
            m.series(format!("{k}.mbps"), "Mbit/s", "write bytes", thr.clone());
            m.series(format!("{k}.success"), "fraction", "write bytes", succ);
            m.series(format!("{k}.ms_per_call"), "ms", "write bytes", mpc);
            m.series(format!("{k}.repairs"), "packets", "write bytes", rep);
            mbps.insert((setting, message, mode, loss), thr);
        }
        let at = |s: Setting, msg: u64, mode: Mode, loss: u32, w: usize| -> Option<f64> {
            mbps.get(&(s, msg, mode, loss))?
                .iter()
                .find(|(x, _)| *x == w as f64)
                .map(|(_, e)| e.mean)
        };
        let th = Setting::Thesis;
        let big = 1_024_000;
        let small_ws: Vec<usize> = plan.writes.iter().copied().filter(|&w| w <= 1024).collect();
        // T1: spread of the four modes at each write size <= 1024, no loss, both messages.
        for &msg in &MESSAGES {
            let mut pts = Vec::new();
            for &w in &small_ws {
                let v: Vec<f64> = MODES
                    .iter()
                    .filter_map(|&md| at(th, msg, md, 0, w))
                    .collect();
                if v.len() == MODES.len() {
                    pts.push((w as f64, Estimate::exact(spread(&v))));
                }
            }
            m.series(
                format!("sim.t1.spread_{}", msg_key(msg)),
                "fraction",
                "write bytes",
                pts,
            );
        }
        // T1: throughput ratio per doubling of the write size (1 MB, 1:3, no loss).
        let mut dbl = Vec::new();
        for w in small_ws.windows(2) {
            if let (Some(a), Some(b)) = (
                at(th, big, Mode::Multi(3), 0, w[0]),
                at(th, big, Mode::Multi(3), 0, w[1]),
            ) {
                let steps = (w[1] as f64 / w[0] as f64).log2();
                dbl.push((w[1] as f64, Estimate::exact((b / a).powf(1.0 / steps))));
            }
        }
        m.series(
            "sim.t1.gain_per_doubling_1mb_m3",
            "ratio",
            "write bytes",
            dbl,
        );
        // T2: spread over 1, 2, 3 receivers, 1 MB, no loss, every write size.
        let mut t2 = Vec::new();
        for &w in &plan.writes {
            let v: Vec<f64> = (1..=3)
                .filter_map(|n| at(th, big, Mode::Multi(n), 0, w))
                .collect();
            if v.len() == 3 {
                t2.push((w as f64, Estimate::exact(spread(&v))));
            }
        }
        m.series("sim.t2.spread_1mb", "fraction", "write bytes", t2);
        // T3: multicast 1:3 / unicast at the largest writes.
        for &msg in &MESSAGES {
            let mut pts = Vec::new();
            for &w in plan.writes.iter().filter(|&&w| w >= 4096) {
                if let (Some(a), Some(b)) = (
                    at(th, msg, Mode::Multi(3), 0, w),
                    at(th, msg, Mode::Unicast, 0, w),
                ) {
                    pts.push((w as f64, Estimate::exact(a / b)));
                }
            }
            m.series(
                format!("sim.t3.m3_over_uni_{}", msg_key(msg)),
                "ratio",
                "write bytes",
                pts,
            );
        }
        // Failure counts.
        let count = |f: &dyn Fn(&Cell) -> bool| -> (f64, f64) {
            let mut n = 0.0;
            let mut bad = 0.0;
            for (c, o) in cells.iter().zip(&results) {
                if f(c) {
                    n += 1.0;
                    if !o.ok {
                        bad += 1.0;
                    }
                }
            }
            (bad, n)
        };
        let (small_bad, small_n) = count(&|c| c.setting == th && c.write <= 1024);
        m.scalar(
            "sim.t4.failed_runs_small_writes",
            "runs",
            Estimate::exact(small_bad),
        );
        notes.push(format!(
            "sim, thesis setting: {small_bad} of {small_n} runs with writes ≤ 1024 B failed."
        ));
        // T4: worst loss-induced change for 1 MB multicast at 512-1024 B.
        let mut worst: Option<f64> = None;
        for n in 1..=3 {
            for &w in plan.writes.iter().filter(|&&w| (512..=1024).contains(&w)) {
                if let Some(clean) = at(th, big, Mode::Multi(n), 0, w) {
                    for l in [4, 10, 20] {
                        let ch =
                            at(th, big, Mode::Multi(n), l, w).map_or(-1.0, |v| v / clean - 1.0);
                        worst = Some(worst.map_or(ch, |x: f64| x.min(ch)));
                    }
                }
            }
        }
        m.scalar(
            "sim.t4.worst_change_1mb_mc_512_1024",
            "fraction",
            Estimate::exact(worst.unwrap_or(-1.0)),
        );
        // T5: failures of the thesis setting on lossy multicast with writes >= 2048.
        let (t5_bad, t5_n) = count(&|c| {
            c.setting == th && c.write >= 2048 && c.loss.0 > 0 && matches!(c.mode, Mode::Multi(_))
        });
        m.scalar(
            "sim.t5.thesis_failed_frac_lossy_mc_large",
            "fraction",
            Estimate::exact(t5_bad / t5_n.max(1.0)),
        );
        let (other_bad, _) = count(&|c| {
            c.setting == th
                && !(c.write >= 2048 && c.loss.0 > 0 && matches!(c.mode, Mode::Multi(_)))
        });
        m.scalar(
            "sim.t5.thesis_failed_runs_elsewhere",
            "runs",
            Estimate::exact(other_bad),
        );
        let (imp_bad, imp_n) = count(&|c| c.setting == Setting::Improved);
        m.scalar(
            "sim.t5.improved_failed_runs",
            "runs",
            Estimate::exact(imp_bad),
        );
        notes.push(format!(
            "sim: thesis setting failed {t5_bad} of {t5_n} lossy multicast runs at ≥ 2048 B and \
             {other_bad} elsewhere; improved setting failed {imp_bad} of {imp_n} runs."
        ));
        // T5/T6: large writes against the 1024-B value at 1/5 loss.
        let ratio_min = |s: Setting, msg: u64, mode: Mode| -> Option<f64> {
            let base = at(s, msg, mode, 20, 1024)?;
            plan.writes
                .iter()
                .filter(|&&w| w >= 2048)
                .map(|&w| at(s, msg, mode, 20, w).map_or(0.0, |v| v / base))
                .reduce(f64::min)
        };
        let put = |m: &mut Measures, name: &str, v: Option<f64>| {
            m.scalar(name, "ratio", Estimate::exact(v.unwrap_or(0.0)));
        };
        put(
            &mut m,
            "sim.t5.improved_1mb_m3_l20_large_over_1024",
            ratio_min(Setting::Improved, big, Mode::Multi(3)),
        );
        put(
            &mut m,
            "sim.t6.thesis_1mb_uni_l20_large_over_1024",
            ratio_min(th, big, Mode::Unicast),
        );
        put(
            &mut m,
            "sim.t6.improved_1mb_uni_l20_large_over_1024",
            ratio_min(Setting::Improved, big, Mode::Unicast),
        );
        // T7: unicast at 1/25 loss against no loss, 1 MB, 1024 B.
        put(
            &mut m,
            "sim.t7.uni_l4_over_l0_1mb_1024",
            at(th, big, Mode::Unicast, 4, 1024)
                .zip(at(th, big, Mode::Unicast, 0, 1024))
                .map(|(a, b)| a / b),
        );

        // T7 measured: non-blocking writes with coalescing, unicast, 1/25 against no loss.
        for &msg in &MESSAGES {
            let pts: Vec<(f64, Estimate)> = small_ws
                .iter()
                .filter_map(|&w| {
                    let a = at(Setting::Coalesce, msg, Mode::Unicast, 4, w)?;
                    let b = at(Setting::Coalesce, msg, Mode::Unicast, 0, w)?;
                    Some((w as f64, Estimate::exact(a / b)))
                })
                .collect();
            m.series(
                format!("sim.t7.coalesce_uni_l4_over_l0_{}", msg_key(msg)),
                "ratio",
                "write bytes",
                pts,
            );
        }
        put(
            &mut m,
            "sim.t7.coalesce_uni_l4_over_l0_1mb_1024",
            at(Setting::Coalesce, big, Mode::Unicast, 4, 1024)
                .zip(at(Setting::Coalesce, big, Mode::Unicast, 0, 1024))
                .map(|(a, b)| a / b),
        );
        put(
            &mut m,
            "sim.t7.coalesce_over_thesis_1mb_uni_l0_1024",
            at(Setting::Coalesce, big, Mode::Unicast, 0, 1024)
                .zip(at(th, big, Mode::Unicast, 0, 1024))
                .map(|(a, b)| a / b),
        );
        if let (Some(c0), Some(c4), Some(t4)) = (
            at(Setting::Coalesce, big, Mode::Unicast, 0, 1024),
            at(Setting::Coalesce, big, Mode::Unicast, 4, 1024),
            at(th, big, Mode::Unicast, 4, 1024),
        ) {
            notes.push(format!(
                "T7 variant (non-blocking writes, coalescing), 1 MB unicast in 1024-B writes: \
                 {c0:.3} Mbit/s without loss, {c4:.3} at 1/25 (ratio {:.3}; the thesis: 1.500 -> \
                 2.025, ratio 1.35); the blocking thesis setting at 1/25: {t4:.3}.",
                c4 / c0
            ));
        }

        // Beyond the thesis: many receivers.
        let mut scale_series: BTreeMap<(usize, u32), Vec<(f64, Estimate)>> = BTreeMap::new();
        for (c, o) in scale.iter().zip(&scale_out) {
            let y = if o.ok { o.mbps } else { 0.0 };
            scale_series
                .entry((c.write, c.loss.0))
                .or_default()
                .push((c.mode.receivers() as f64, Estimate::exact(y)));
            if !o.ok {
                notes.push(format!(
                    "sim scale: {} receivers, {} B writes, loss {}: failed (aborted: {})",
                    c.mode.receivers(),
                    c.write,
                    c.loss.1,
                    o.aborted
                ));
            }
        }
        for (&(w, l), pts) in &scale_series {
            m.series(
                format!("sim.scale.w{w}.l{l}.mbps"),
                "Mbit/s",
                "receivers",
                pts.clone(),
            );
        }
        let at_n = |n: usize| -> Option<f64> {
            scale_series
                .get(&(8192, 0))?
                .iter()
                .find(|(x, _)| *x == n as f64)
                .map(|(_, e)| e.mean)
        };
        if let (Some(a), Some(b)) = (at_n(10), at_n(1)) {
            m.scalar(
                "sim.scale.n10_over_n1_8192",
                "ratio",
                Estimate::exact(a / b),
            );
        }

        // Real network: loopback, then namespace hosts.
        let net = super::xtp_net::run(ctx, &mut m, &mut notes)?;

        let plots = plots(ctx, &m, &plan)?;
        Ok(StudyOutput {
            setup: setup(&plan, cells.len() + scale.len(), &net),
            measures: m,
            plots,
            notes,
        })
    }
}

/// (max − min) / mean.
pub fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    if mean > 0.0 {
        (max - min) / mean
    } else {
        0.0
    }
}

fn plots(ctx: &RunCtx<'_>, m: &Measures, _plan: &Plan) -> Result<Vec<Plot>, StudyError> {
    let series_of = |name: &str| -> Vec<(f64, Estimate)> {
        match m.get(name) {
            Some(crate::measure::Measure::Series { points, .. }) => {
                points.iter().map(|&(x, e)| (log2(x), e)).collect()
            }
            _ => Vec::new(),
        }
    };
    let paper = |name: &str| -> Vec<(f64, f64)> {
        ctx.paper(name)
            .map(|t| t.points().into_iter().map(|(x, y)| (log2(x), y)).collect())
            .unwrap_or_default()
    };
    let x = Axis::new("write size, log2 bytes (6 = 64 B, 13 = 8192 B)", "log2 B");
    let y = Axis::new("throughput", "Mbit/s");
    let mut out = Vec::new();
    let loss_label = |l: u32| match l {
        0 => "no induced errors".to_string(),
        4 => "1 of 25 dropped".to_string(),
        10 => "1 of 10 dropped".to_string(),
        _ => "1 of 5 dropped".to_string(),
    };
    // Figures 4.1-4.8: by loss, the four methods.
    let mut fig = 1;
    for &msg in &MESSAGES {
        for &(l, _) in &LOSSES {
            let mut series = Vec::new();
            for (i, &md) in MODES.iter().enumerate() {
                let k = key(Setting::Thesis, msg, md, l);
                series.push(PlotSeries::measured(
                    format!("rmcast sim, {}", md.label()),
                    i,
                    &series_of(&format!("{k}.mbps")),
                ));
                let p = paper(&format!("mbps_{}_l{}_{}", msg_key(msg), l, md.key()));
                if !p.is_empty() {
                    series.push(PlotSeries::paper(format!("thesis, {}", md.label()), i, &p));
                }
            }
            out.push(Plot {
                id: format!("xtp-fig4_{fig}"),
                title: format!("Figure 4.{fig}: {} message, {}", if msg < 100_000 { "50 KB" } else { "1 MB" }, loss_label(l)),
                caption: "Throughput against write size; lines: rmcast's simulation (thesis setting: go-back-N, uncapped WTIMER back-off, 4.7 ms per call, 10 Mb/s bus), points: the thesis's table (failed cells absent).".into(),
                x: x.clone(),
                y: y.clone(),
                series,
            });
            fig += 1;
        }
    }
    // Figures 4.9-4.16: by method, the four loss levels.
    for &msg in &MESSAGES {
        for &md in &MODES {
            let mut series = Vec::new();
            for (i, &(l, _)) in LOSSES.iter().enumerate() {
                let k = key(Setting::Thesis, msg, md, l);
                series.push(PlotSeries::measured(
                    format!("rmcast sim, {}", loss_label(l)),
                    i,
                    &series_of(&format!("{k}.mbps")),
                ));
                let p = paper(&format!("mbps_{}_l{}_{}", msg_key(msg), l, md.key()));
                if !p.is_empty() {
                    series.push(PlotSeries::paper(
                        format!("thesis, {}", loss_label(l)),
                        i,
                        &p,
                    ));
                }
            }
            out.push(Plot {
                id: format!("xtp-fig4_{fig}"),
                title: format!("Figure 4.{fig}: {} message, {}", if msg < 100_000 { "50 KB" } else { "1 MB" }, md.label()),
                caption: "Throughput against write size for the four loss levels at one receiver; lines: rmcast's simulation (thesis setting), points: the thesis's table.".into(),
                x: x.clone(),
                y: y.clone(),
                series,
            });
            fig += 1;
        }
    }
    // Thesis setting against the recommendations, 1 MB, 1:3, every loss level.
    let mut series = Vec::new();
    for (i, &(l, _)) in LOSSES.iter().enumerate() {
        for (s, tag) in [(Setting::Thesis, "thesis"), (Setting::Improved, "improved")] {
            let pts = series_of(&format!("{}.mbps", key(s, 1_024_000, Mode::Multi(3), l)));
            let mut ps = PlotSeries::measured(format!("{tag}, {}", loss_label(l)), i, &pts);
            if s == Setting::Improved {
                ps.style = crate::plot::Style::Bound;
            }
            series.push(ps);
        }
    }
    out.push(Plot {
        id: "xtp-improved_vs_thesis".into(),
        title: "1 MB, multicast 1:3: thesis setting against the thesis's recommendations".into(),
        caption: "Solid: go-back-N with uncapped back-off; dashed: selective repeat, back-off capped at 1 s, SREQ every 8 packets (rmcast simulation). Missing points: every run failed.".into(),
        x: x.clone(),
        y: y.clone(),
        series,
    });
    // Receivers beyond the thesis.
    let mut series = Vec::new();
    let mut i = 0;
    for (name, meas) in m.iter() {
        if let (Some(rest), crate::measure::Measure::Series { points, .. }) =
            (name.strip_prefix("sim.scale."), meas)
        {
            series.push(PlotSeries::measured(
                rest.trim_end_matches(".mbps").to_string(),
                i,
                points,
            ));
            i += 1;
        }
    }
    if !series.is_empty() {
        out.push(Plot {
            id: "xtp-receivers".into(),
            title: "Beyond the thesis: 1 MB to many receivers (improved setting, simulated bus)".into(),
            caption: "Throughput against the number of receivers; w = write bytes, l = loss at one receiver in %. 0 = the run failed.".into(),
            x: Axis::new("receivers", "count"),
            y: y.clone(),
            series,
        });
    }
    // The three places side by side: simulation, loopback, namespace hosts.
    let mut series = Vec::new();
    for (i, (tag, prefix)) in [
        ("simulated 10 Mb/s bus", "sim"),
        ("loopback sockets", "net"),
        ("namespace hosts on a bridge", "ns"),
    ]
    .iter()
    .enumerate()
    {
        for (l, what) in [(0, "no loss"), (10, "1/10 at one receiver")] {
            let pts = series_of(&format!("{prefix}.thesis.50k.m3.l{l}.mbps"));
            if pts.is_empty() {
                continue;
            }
            let mut ps = PlotSeries::measured(format!("{tag}, {what}"), i, &pts);
            if l > 0 {
                ps.style = crate::plot::Style::Bound;
            }
            series.push(ps);
        }
    }
    if !series.is_empty() {
        out.push(Plot {
            id: "xtp-places".into(),
            title: "50 KB to 3 receivers: simulation, loopback and namespace hosts".into(),
            caption: "Thesis setting (block on acknowledgment, go-back-N). Simulation: 10 Mb/s bus plus 4.7 ms per call (the 1997 hardware); loopback and namespace hosts: real UDP multicast sockets on this machine, no modelled per-call cost, one run per point. Solid: no loss; dashed: 1/10 dropped at one receiver.".into(),
            x: x.clone(),
            y: y.clone(),
            series,
        });
    }
    let mut series = Vec::new();
    for (i, (l, what)) in [(0, "no loss"), (10, "1/10 at one receiver")]
        .iter()
        .enumerate()
    {
        if let Some(crate::measure::Measure::Series { points, .. }) =
            m.get(&format!("ns.scale.l{l}.mbps"))
        {
            series.push(PlotSeries::measured(
                format!("namespace hosts, {what}"),
                i,
                points,
            ));
        }
    }
    if !series.is_empty() {
        out.push(Plot {
            id: "xtp-ns-receivers".into(),
            title: "Beyond the thesis on real sockets: 1 MB to up to 10 namespace hosts".into(),
            caption: "Thesis setting, 8192-B writes, the sender and each receiver in its own network namespace on one bridge (this machine's 2 cores run every endpoint). 0 = the run failed.".into(),
            x: Axis::new("receivers", "count"),
            y: y.clone(),
            series,
        });
    }
    for p in &out {
        p.check()?;
    }
    Ok(out)
}

fn setup(plan: &Plan, runs: usize, net: &super::xtp_net::NetSummary) -> Setup {
    let join = |v: &[usize]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Setup {
        summary: "Seed 002's Chapter IV grid — 50 KB and 1 MB messages sent in writes of 64–8192 B \
                  by unicast and by multicast to 1, 2 and 3 receivers, 0, 1/25, 1/10 or 1/5 of \
                  packets dropped at one receiver — re-run with rmcast's xtp agent in the \
                  simulator (10 Mb/s Ethernet bus plus a per-call cost model: `sim.*`), on \
                  this machine's loopback interface with real sockets (`net.*`) and on network-\
                  namespace hosts on a Linux bridge (`ns.*`). Three separate series: \
                  simulation, loopback, namespace hosts."
            .into(),
        topology: "sim: 1 sender + n receivers on rmcast_sim's seed-000 bus (10 Mb/s, CSMA/CD, \
                   64-byte minimum frame, 38 bytes of IP+Ethernet framing per datagram); net: \
                   one thread per endpoint on loopback (239.255.x.y multicast), loss \
                   injected on receive; ns: the sender and each receiver in its own network \
                   namespace (its own IP stack, a veth pair on one Linux bridge with IGMP \
                   snooping off, multicast crossing the bridge), one thread per endpoint, \
                   all on this machine's cores."
            .into(),
        parameters: vec![
            ("write sizes (sim)".into(), join(&plan.writes)),
            ("repetitions per cell (sim)".into(), plan.reps.to_string()),
            ("simulated runs".into(), runs.to_string()),
            ("real-network runs, loopback".into(), net.loopback_runs.to_string()),
            (
                "real-network runs, namespace hosts".into(),
                match &net.ns_skipped {
                    Some(why) => format!("skipped: {why}"),
                    None => format!(
                        "{} (up to {} receivers)",
                        net.ns_runs, net.ns_max_receivers
                    ),
                },
            ),
            ("receivers beyond the thesis (sim)".into(), join(&plan.scale_ns)),
            ("per-call cost".into(), "4.7 ms before each write reaches the protocol".into()),
            ("CTIMEOUT".into(), "60 s (SandiaXTP)".into()),
        ],
        choices: vec![
            ("per-call cost".into(), "4.7 ms, the thesis's Appendix's flat ms/call at 64–512 B (1 MB, no loss, every mode; digest §2.7.3), applied before each write; the call returns when every receiver holds the write (block on acknowledgment, -g)".into()),
            ("flags".into(), "FIRST with SREQ (-f), block on acknowledgment (-g), FASTNAK (-F), go-back-N, as the digest's common setup; the thesis confirms only -F".into()),
            ("WTIMER".into(), "base = max(100 ms, 2·SRTT), ×2 per expiry, reset only by a fresh RTT sample (an answer to a first transmission's SREQ); 100 ms from the Appendix's ≈0.1 s per lost 64-B write (1 MB 1:1 at 1/10: 245 s against 78 s)".into()),
            ("loss".into(), "Bernoulli on receive at receiver 1, data and control alike (the thesis does not say whether control packets were dropped)".into()),
            ("packet size".into(), "1448 data bytes (the thesis's maximum), window 64 packets, no rate control".into()),
            ("timing".into(), "from the sender's start (FIRST) to the last write's acknowledgment; failed (aborted) runs are left out of throughput means, as the thesis did".into()),
            ("improved setting".into(), "selective repeat, WTIMER back-off capped at 1 s, an SREQ every 8 packets; CTIMEOUT unchanged at 60 s".into()),
        ],
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn cell(message: u64, write: usize, mode: Mode, loss: (u32, f64), setting: Setting) -> Cell {
        Cell {
            message,
            write,
            mode,
            loss,
            setting,
            seed: 1,
        }
    }

    #[test]
    fn a_write_call_costs_the_per_call_cost_plus_the_network() {
        let o = run_sim(&cell(
            51_200,
            1024,
            Mode::Multi(3),
            (0, 0.0),
            Setting::Thesis,
        ))
        .unwrap();
        assert!(o.ok);
        assert_eq!(o.calls, 50);
        // 4.7 ms per call, plus a 1,094-byte frame (0.9 ms) and three CNTL frames.
        assert!(
            o.ms_per_call > 4.7 && o.ms_per_call < 7.0,
            "{} ms per call",
            o.ms_per_call
        );
        // Every write is one packet; nothing is retransmitted without loss.
        assert_eq!(o.repairs, 0);
    }

    #[test]
    fn lossy_multicast_delivers_the_whole_message_with_the_recommendations() {
        for w in [1024, 8192] {
            let o = run_sim(&cell(
                51_200,
                w,
                Mode::Multi(3),
                (20, 0.2),
                Setting::Improved,
            ))
            .unwrap();
            assert!(o.ok, "{w}: {o:?}");
            assert!(o.repairs > 0);
        }
    }

    #[test]
    fn the_last_write_is_cut_to_the_message() {
        // 51,200 = 6 x 8192 + 2048: seven calls.
        let o = run_sim(&cell(
            51_200,
            8192,
            Mode::Unicast,
            (0, 0.0),
            Setting::Thesis,
        ))
        .unwrap();
        assert!(o.ok);
        assert_eq!(o.calls, 7);
    }

    #[test]
    fn coalescing_variant_is_bound_by_the_per_call_cost() {
        // Writes do not block: each call costs the 4.7 ms, and 1/5 loss adds only the last
        // write's repair round (FASTNAK from the next packet, no WTIMER wait), while the
        // blocking thesis setting waits for WTIMER (>= 100 ms) per lost write.
        let c = |loss, setting| run_sim(&cell(51_200, 1024, Mode::Unicast, loss, setting)).unwrap();
        let clean = c((0, 0.0), Setting::Coalesce);
        let lossy = c((20, 0.2), Setting::Coalesce);
        assert!(clean.ok && lossy.ok, "{clean:?} {lossy:?}");
        assert!(clean.ms_per_call < 4.8, "{clean:?}");
        assert!(lossy.repairs > 0, "{lossy:?}");
        assert!(lossy.seconds < clean.seconds + 0.02, "{clean:?} {lossy:?}");
        let blocking = c((20, 0.2), Setting::Thesis);
        assert!(blocking.seconds > clean.seconds + 0.1, "{blocking:?}");
    }

    #[test]
    fn spread_is_range_over_mean() {
        assert_eq!(spread(&[1.0, 1.0]), 0.0);
        assert!((spread(&[0.9, 1.1]) - 0.2).abs() < 1e-12);
    }

    /// `cargo test --release -p rmcast-repro explore_xtp -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn explore_xtp() {
        for setting in [Setting::Thesis, Setting::Improved] {
            for msg in MESSAGES {
                for mode in [Mode::Unicast, Mode::Multi(3)] {
                    for loss in LOSSES {
                        let mut line = format!("{:?} {} {:?} l{}:", setting, msg, mode, loss.0);
                        for w in WRITES {
                            let o = run_sim(&cell(msg, w, mode, loss, setting)).unwrap();
                            if o.ok {
                                line += &format!(" {:.3}", o.mbps);
                            } else {
                                line += " FAIL";
                            }
                        }
                        println!("{line}");
                    }
                }
            }
        }
    }
}

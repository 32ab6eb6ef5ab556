//! Seed 001 (Paul, Sabnani & Kristol): DSP, CSP and CP on the §7 topology — six local
//! exchanges at round-trip delays of 10, 25, 30, 40, 50 and 60 ms, 25 destinations, 150 Mb/s,
//! 1024-byte blocks, r_f = 1.2, block error rate 10⁻³, status every 4–6 ms — with the sweeps
//! of Figures 4–12, the analytic throughput of §6 (eq. 1–4) beside every throughput figure,
//! and, beyond the paper, DSP and CP with 1,000 and 10,000 destinations over 100 exchanges.

use crate::claim::fmt_num;
use crate::plot::{Axis, Plot, PlotSeries};
use crate::plot_spec::PlotSpec;
use crate::sampling::Feed;
use crate::stats::Estimate;
use crate::study::{About, RunCtx, Setup, Study, StudyError, StudyOutput, Sweeps};
use crate::sweep::{est, fmt_series, join};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::mix64;
use rmcast_proto::tree::{deploy, Endpoint, Exchange, Region, Settings, Source, Variant};
use rmcast_proto::{Agent, Event, Gauge, GroupId, NodeId, Outbox, Time};
use rmcast_sim::{topo, KindFilter, LossModel, LossRule, LossSite, Sim, Stop, Traffic};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// The paper's round-trip delays (ms), New Jersey to MA, FL, IL, TX, CO, CA.
pub const RTDS_MS: [f64; 6] = [10.0, 25.0, 30.0, 40.0, 50.0, 60.0];
/// Block size (bytes of data per block).
pub const BLOCK: usize = 1024;
/// DATA header bytes on rmcast's wire (20 common + 12 tree).
pub const DATA_OVERHEAD: usize = 32;
/// Links are this many times faster than the connection's transmission speed: the source
/// sends at the speed (its multicast VC's peak rate) and status packets, ASSIGNs and local
/// re-multicasts travel beside it (ATM: a 150 Mb/s VC on a 622 Mb/s link).
pub const LINK_FACTOR: u64 = 4;
/// Mean of the uniform 4–6 ms status interval.
pub const STATUS_MEAN_S: f64 = 0.005;

const G: GroupId = GroupId(1);

/// One simulation run.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The protocol: DSP, CSP or CP.
    pub variant: Variant,
    /// Window `W = L` as a multiple of the largest RTD in blocks at `window_ref_mbps`.
    pub window: f64,
    /// Speed at which the window's block count is computed (Figure 10 keeps the window's
    /// block count fixed while the speed changes).
    pub window_ref_mbps: f64,
    /// The paper's r_f (1.2 unless Figure 9 sweeps it).
    pub r_f: f64,
    /// Transmission speed, Mb/s.
    pub rate_mbps: f64,
    /// Block error rate: each endpoint loses each data block it is sent with this probability.
    pub err: f64,
    /// Destinations (endpoints).
    pub dests: usize,
    /// Round-trip delays of the exchanges, ms.
    pub rtds_ms: Vec<f64>,
    /// Data blocks the source sends.
    pub blocks: u64,
    /// Seed of the run's random choices.
    pub seed: u64,
    /// Keep every delivery (for the end-to-end delay and the exactly-once check).
    pub record: bool,
    /// Multiplies the status interval (1: the paper's 4–6 ms; `--mutants` doubles it).
    pub status_scale: f64,
}

impl Spec {
    /// The paper's Figure 4–8 point at window `window`.
    pub fn paper(variant: Variant, window: f64, blocks: u64, seed: u64) -> Self {
        Spec {
            variant,
            window,
            window_ref_mbps: 150.0,
            r_f: 1.2,
            rate_mbps: 150.0,
            err: 1e-3,
            dests: 25,
            rtds_ms: RTDS_MS.to_vec(),
            blocks,
            seed,
            record: true,
            status_scale: 1.0,
        }
    }
    /// Seconds to send one block (its datagram) at `mbps`.
    pub fn ipt_at(mbps: f64) -> f64 {
        (BLOCK + DATA_OVERHEAD) as f64 * 8.0 / (mbps * 1e6)
    }
    /// The time to send one data block at `rate_mbps`, seconds.
    pub fn ipt(&self) -> f64 {
        Self::ipt_at(self.rate_mbps)
    }
    /// The largest exchange RTD, seconds.
    pub fn max_rtd_s(&self) -> f64 {
        self.rtds_ms.iter().copied().fold(0.0, f64::max) / 1e3
    }
    /// `L` in blocks.
    pub fn l(&self) -> u32 {
        let blocks = self.window * self.max_rtd_s() / Self::ipt_at(self.window_ref_mbps);
        (blocks.round() as u32).max(1)
    }
}

/// An endpoint that notes when each block first reaches it (the source's DATA or a local
/// re-multicast), for the paper's per-block delay; everything passes through unchanged.
struct Noting {
    ep: Endpoint,
    first: Rc<RefCell<Vec<Option<Time>>>>,
}

impl Agent for Noting {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        use rmcast_wire::{tree::Message as T, Message, Packet};
        if let Ok(Packet {
            message: Message::Tree(T::Data { seq, .. } | T::LocalData { seq, .. }),
            ..
        }) = Packet::decode(packet)
        {
            let mut first = self.first.borrow_mut();
            if let Some(slot) = usize::try_from(seq).ok().and_then(|k| first.get_mut(k)) {
                slot.get_or_insert(now);
            }
        }
        self.ep.handle_packet(now, from, packet);
    }
    fn handle_timeout(&mut self, now: Time) {
        self.ep.handle_timeout(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.ep.poll_timeout()
    }
    fn outbox(&self) -> &Outbox {
        self.ep.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.ep.outbox_mut()
    }
    fn gauge(&self, gauge: Gauge) -> Option<f64> {
        self.ep.gauge(gauge)
    }
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        self.ep.remove_receiver(now, node)
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        self.ep.as_any_mut()
    }
}

/// The mean of `n` delays summing to `sum` seconds, in ms (0 without any).
fn mean_ms(sum: f64, n: u64) -> f64 {
    if n > 0 {
        sum / n as f64 * 1e3
    } else {
        0.0
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOut {
    /// Normalized throughput: new blocks per block time in steady state.
    pub rho: f64,
    /// Mean end-to-end delay of a block, the paper's measure (§7: "once a block is not
    /// received, the destination has to wait" for its re-multicast): first transmission to
    /// the block's first arrival at the destination, from the source or a local
    /// re-multicast, ms.
    pub delay_ms: f64,
    /// Mean delay to in-order delivery (first transmission to the delivery of a block, which
    /// also waits for every block before it), ms.
    pub delivery_delay_ms: f64,
    /// Global re-multicasts per second.
    pub global_rate: f64,
    /// Local re-multicasts per second (all endpoints).
    pub local_rate: f64,
    /// Status packets reaching the source per second.
    pub status_rate: f64,
    /// Data packets the source sent per second (new and re-multicast).
    pub data_rate: f64,
    /// Peak and time-mean of the source's outstanding blocks.
    pub src_peak: f64,
    /// Time-mean of the source's outstanding blocks (see `src_peak`).
    pub src_mean: f64,
    /// Mean over regions of the largest peak buffer (reassembly + retransmission) of the
    /// region's endpoints: the local source's buffer for DSP and CP.
    pub local_peak: f64,
    /// Source peak plus every endpoint's peak (reassembly + retransmission).
    pub buffer_total: f64,
    /// Sum over endpoints of the peak retransmission buffer (blocks kept for others): what
    /// DSP adds at `E_i1` and CP at every endpoint.
    pub retx_total: f64,
    /// Blocks that arrived beyond an endpoint's reassembly buffer.
    pub overflow: f64,
    /// The source completed every block within the run.
    pub completed: bool,
    /// Every endpoint got every block once, in order (from its events when recording, else from
    /// its delivered count).
    pub exactly_once: bool,
    /// Simulated time to completion, s.
    pub duration_s: f64,
}

/// Equation (4) of §6: `ρ = ((b·n)⁻¹ + W) / ((b·n)⁻¹ + (1 − ln n / ln b)(r_f·w̄_s + 1) +
/// w_s,max)`, capped at 1 (observation 3: ρ = 1 once W reaches w_x). Windows in blocks.
pub fn rho_model(w: f64, b: f64, n: f64, r_f: f64, wbar_s: f64, ws_max: f64) -> f64 {
    let bn_inv = 1.0 / (b * n);
    let wx = (1.0 - n.ln() / b.ln()) * (r_f * wbar_s + 1.0) + ws_max;
    ((bn_inv + w) / (bn_inv + wx)).min(1.0)
}

/// The model's inputs rmcast derives for a spec: `w̄_s` = blocks sent during the mean RTD
/// plus half a mean status interval, `w_s,max` = the same with the largest RTD.
pub fn model_inputs(s: &Spec) -> (f64, f64) {
    let ipt = s.ipt();
    let mean_rtd = s.rtds_ms.iter().sum::<f64>() / s.rtds_ms.len().max(1) as f64 / 1e3;
    let wbar = (mean_rtd + STATUS_MEAN_S / 2.0) / ipt;
    let wmax = (s.max_rtd_s() + STATUS_MEAN_S / 2.0) / ipt;
    (wbar, wmax)
}

/// ρ from eq. (4) for a spec.
pub fn rho_model_for(s: &Spec) -> f64 {
    let (wbar, wmax) = model_inputs(s);
    rho_model(f64::from(s.l()), s.err, s.dests as f64, s.r_f, wbar, wmax)
}

/// Run one simulation.
pub fn run_one(s: &Spec) -> Result<RunOut, String> {
    let rtds: Vec<Duration> = s
        .rtds_ms
        .iter()
        .map(|&m| Duration::from_secs_f64(m / 1e3))
        .collect();
    let per = topo::spread(s.dests, rtds.len());
    let bps = (s.rate_mbps * 1e6) as u64;
    let t = topo::local_exchanges(&rtds, &per, bps * LINK_FACTOR, Duration::ZERO)
        .map_err(|e| e.to_string())?;
    let mut regions = Vec::new();
    let mut it = t.receivers.iter().copied();
    for (i, &x) in t.attach_points.iter().enumerate() {
        let k = per.get(i).copied().unwrap_or(0);
        let eps: Vec<NodeId> = it.by_ref().take(k).collect();
        regions.push(Region {
            exchange: x,
            rtd_endpoints: vec![rtds[i]; eps.len()],
            endpoints: eps,
            rtd_exchange: rtds[i],
        });
    }
    let mut set = Settings::new(s.variant, s.l());
    set.rate_bps = bps;
    set.block_datagram = BLOCK + DATA_OVERHEAD;
    set.r_f = s.r_f;
    set.status_min = set.status_min.mul_f64(s.status_scale);
    set.status_max = set.status_max.mul_f64(s.status_scale);
    let d = deploy(t.source, G, 100, &regions, &set);
    let mut sim = Sim::new(t.net, s.seed);
    if s.record {
        // Deliveries' numbers and times, not their blocks (a copy of every block at every
        // destination: 3 GB for 100 destinations of 30,000 blocks).
        sim.record_events(true);
        sim.record_payloads(false);
    } else {
        // Large runs: only the source's events (its MessageDone times give ρ).
        sim.record_events_of(&[t.source]);
    }
    sim.set_group(G, &t.receivers).map_err(|e| e.to_string())?;
    for (g, m) in &d.local_groups {
        sim.set_group(*g, m).map_err(|e| e.to_string())?;
    }
    for x in d.exchanges {
        let rng = sim.agent_rng(x.node, 1);
        sim.add_router_agent(x.node, Box::new(Exchange::new(x, rng)))
            .map_err(|e| e.to_string())?;
    }
    let mut endpoints: BTreeSet<NodeId> = BTreeSet::new();
    // First arrival of each block at each endpoint (recorded runs only).
    let mut arrivals: BTreeMap<NodeId, Rc<RefCell<Vec<Option<Time>>>>> = BTreeMap::new();
    for e in d.endpoints {
        let rng = sim.agent_rng(e.node, 0);
        let node = e.node;
        endpoints.insert(node);
        let ep = Endpoint::new(e, rng);
        let agent: Box<dyn Agent> = if s.record {
            let first = Rc::new(RefCell::new(vec![None; s.blocks as usize]));
            arrivals.insert(node, Rc::clone(&first));
            Box::new(Noting { ep, first })
        } else {
            Box::new(ep)
        };
        sim.add_agent(node, agent).map_err(|e| e.to_string())?;
    }
    sim.add_agent(t.source, Box::new(Source::new(d.source)))
        .map_err(|e| e.to_string())?;
    if s.err > 0.0 {
        for &r in &t.receivers {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Rx {
                        node: r,
                        iface: None,
                    },
                    LossModel::Bernoulli { p: s.err },
                )
                .filter(KindFilter::Data),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    let mut traffic = Traffic::saturated(s.blocks, BLOCK);
    traffic.stamp = s.record;
    sim.add_traffic(t.source, traffic)
        .map_err(|e| e.to_string())?;
    let ipt = s.ipt();
    // Generous limit: 40 × the error-free transfer time plus 20 s.
    let limit = Time::from_nanos(((s.blocks as f64 * ipt * 40.0 + 20.0) * 1e9) as u64);
    let out = sim.run(&Stop::when_complete().until(limit));
    let end = out.end;
    let src_stats = sim
        .agent(t.source)
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    let local_sent: u64 = t
        .receivers
        .iter()
        .filter_map(|&r| sim.agent(r).map(|a| a.stats().repairs_sent))
        .sum();
    // Let local repairs after the source's last acknowledgment finish.
    let tail = sim.now() + Duration::from_millis(300);
    sim.run(&Stop::at(tail));

    // Steady state: the rate at which new blocks leave the source, from block N/5 on.
    let mut sent_at: Vec<Option<Time>> = vec![None; s.blocks as usize];
    let mut last_done = Time::ZERO;
    for (_, e) in sim.events(t.source) {
        if let Event::MessageDone {
            seq,
            sent_at: t0,
            done_at,
            ..
        } = e
        {
            if let Some(slot) = sent_at.get_mut(*seq as usize) {
                *slot = Some(*t0);
            }
            last_done = last_done.max(*done_at);
        }
    }
    let k1 = (s.blocks / 5) as usize;
    let k2 = s.blocks.saturating_sub(1) as usize;
    let rho = match (
        sent_at.get(k1).copied().flatten(),
        sent_at.get(k2).copied().flatten(),
    ) {
        (Some(a), Some(b)) if b > a => (k2 - k1) as f64 * ipt / (b - a).as_secs_f64(),
        _ => 0.0,
    };
    let dur = if out.completed {
        last_done.as_secs_f64()
    } else {
        end.as_secs_f64()
    }
    .max(1e-9);
    let mut exactly_once = true;
    let mut delay_sum = 0.0;
    let mut delay_n = 0u64;
    let (mut receipt_sum, mut receipt_n) = (0.0, 0u64);
    for first in arrivals.values() {
        for (k, at) in first.borrow().iter().enumerate().skip(k1) {
            if let (Some(at), Some(Some(t0))) = (at, sent_at.get(k)) {
                receipt_sum += at.saturating_since(*t0).as_secs_f64();
                receipt_n += 1;
            }
        }
    }
    if s.record {
        for &r in &t.receivers {
            let mut next = 0u64;
            for (at, e) in sim.events(r) {
                if let Event::Delivered { seq, .. } = e {
                    if *seq != next {
                        exactly_once = false;
                    }
                    next = seq + 1;
                    if *seq as usize >= k1 {
                        if let Some(Some(t0)) = sent_at.get(*seq as usize) {
                            delay_sum += at.saturating_since(*t0).as_secs_f64();
                            delay_n += 1;
                        }
                    }
                }
            }
            if next != s.blocks {
                exactly_once = false;
            }
        }
    } else {
        // Without receivers' events: every receiver delivered every block (agents deliver
        // in order, so the count is the check).
        exactly_once = t
            .receivers
            .iter()
            .all(|&r| sim.metrics(r).is_some_and(|m| m.delivered == s.blocks));
    }
    // Buffer occupancy from the agents' gauges (0 for a node without the agent).
    let gauge = |n: NodeId, g: Gauge| sim.agent(n).and_then(|a| a.gauge(g)).unwrap_or(0.0);
    let endpoint_sum = |g: Gauge| endpoints.iter().map(|&e| gauge(e, g)).sum::<f64>();
    let mut local_peak = 0.0;
    for reg in &regions {
        let m = reg
            .endpoints
            .iter()
            .filter(|e| endpoints.contains(e))
            .map(|&e| gauge(e, Gauge::HeldPeak))
            .fold(0.0, f64::max);
        local_peak += m;
    }
    local_peak /= regions.len().max(1) as f64;
    let src_peak = gauge(t.source, Gauge::HeldPeak);
    let buffer_total = src_peak + endpoint_sum(Gauge::HeldPeak);
    Ok(RunOut {
        rho,
        delay_ms: mean_ms(receipt_sum, receipt_n),
        delivery_delay_ms: mean_ms(delay_sum, delay_n),
        global_rate: src_stats.repairs_sent as f64 / dur,
        local_rate: local_sent as f64 / dur,
        status_rate: src_stats.packets_received as f64 / dur,
        data_rate: (src_stats.data_sent + src_stats.repairs_sent) as f64 / dur,
        src_peak,
        src_mean: gauge(
            t.source,
            Gauge::HeldMean {
                until: Time::from_nanos((dur * 1e9) as u64),
            },
        ),
        local_peak,
        buffer_total,
        retx_total: endpoint_sum(Gauge::RetxPeak),
        overflow: endpoint_sum(Gauge::Overflow),
        completed: out.completed,
        exactly_once: exactly_once && out.completed,
        duration_s: dur,
    })
}

// ----------------------------------------------------------------------------- study

const VARIANTS: [Variant; 3] = [Variant::Dsp, Variant::Csp, Variant::Cp];

/// A sweep family: which parameter moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fam {
    /// Figures 4–8: window 0.5–3.0 × the largest RTD.
    Win,
    /// Figure 9: r_f.
    Rf,
    /// Figure 10: transmission speed (Mb/s), window fixed in blocks.
    Speed,
    /// Figure 11: block error rate (x = log10).
    Err,
    /// Figure 12: number of destinations.
    Dests,
    /// Beyond the paper: destinations over 100 exchanges.
    Beyond,
}

impl Fam {
    fn key(self) -> &'static str {
        match self {
            Fam::Win => "win",
            Fam::Rf => "rf",
            Fam::Speed => "speed",
            Fam::Err => "err",
            Fam::Dests => "dests",
            Fam::Beyond => "beyond",
        }
    }
    fn x_label(self) -> &'static str {
        match self {
            Fam::Win => "window (× largest RTD in blocks)",
            Fam::Rf => "retransmission timeout factor r_f",
            Fam::Speed => "transmission speed (Mb/s)",
            Fam::Err => "log10 block error rate",
            Fam::Dests | Fam::Beyond => "destinations",
        }
    }
}

struct Plan {
    seeds: u64,
    blocks: u64,
    windows: Vec<f64>,
    rfs: Vec<f64>,
    speeds: Vec<f64>,
    errs: Vec<f64>,
    dests: Vec<f64>,
    beyond: Vec<f64>,
    beyond_blocks: u64,
}

impl Plan {
    fn new(sweeps: Sweeps) -> Plan {
        let common = Plan {
            // 5 seeds per point, and more where a claim is undecided (sequential sampling,
            // up to `--runs-cap` times): with 5 everywhere four claims whose means hold stayed
            // inconclusive; 20 everywhere (`--runs-factor 4`) decided all four.
            seeds: 5,
            blocks: 30_000,
            windows: vec![0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
            rfs: vec![1.2, 1.5, 2.0, 2.5, 3.0],
            speeds: vec![50.0, 100.0, 150.0, 300.0, 600.0],
            errs: vec![1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
            // Figure 12's range is not given; §7's network has 3 to 5 destinations per
            // exchange (18–30), and the sweep goes on to 100 from there.
            dests: vec![18.0, 25.0, 30.0, 50.0, 100.0],
            // 10,000 destinations only in extended mode: no claim uses the beyond-the-paper
            // points, and those are full mode's longest runs.
            beyond: vec![1_000.0],
            beyond_blocks: 5_000,
        };
        match sweeps {
            Sweeps::Quick => Plan {
                seeds: 5,
                blocks: 4_000,
                rfs: vec![1.2, 2.0, 3.0],
                dests: vec![18.0, 25.0, 50.0],
                beyond: Vec::new(),
                ..common
            },
            Sweeps::Full => common,
            Sweeps::Extended => Plan {
                beyond: vec![1_000.0, 10_000.0],
                ..common
            },
        }
    }

    fn xs(&self, f: Fam) -> Vec<f64> {
        match f {
            Fam::Win => self.windows.clone(),
            Fam::Rf => self.rfs.clone(),
            Fam::Speed => self.speeds.clone(),
            Fam::Err => self.errs.iter().map(|e| e.log10()).collect(),
            Fam::Dests => self.dests.clone(),
            Fam::Beyond => self.beyond.clone(),
        }
    }

    fn spec(&self, f: Fam, v: Variant, x: f64, seed: u64) -> Spec {
        let mut s = Spec::paper(v, 2.0, self.blocks, seed);
        match f {
            Fam::Win => s.window = x,
            Fam::Rf => s.r_f = x,
            Fam::Speed => s.rate_mbps = x,
            Fam::Err => s.err = 10f64.powf(x),
            Fam::Dests => s.dests = x as usize,
            Fam::Beyond => {
                s.dests = x as usize;
                s.rtds_ms = (0..100)
                    .map(|i| 10.0 + 50.0 * f64::from(i) / 99.0)
                    .collect();
                s.blocks = self.beyond_blocks;
                s.record = false;
            }
        }
        s
    }
}

/// Mean, SD and CI of per-run values.
const METRICS: [(&str, &str); 14] = [
    ("rho", "normalized throughput"),
    ("delay", "ms"),
    ("delivery_delay", "ms"),
    ("global", "re-multicasts/s"),
    ("local", "re-multicasts/s"),
    ("status", "packets/s"),
    ("data", "packets/s"),
    ("throughput_pps", "blocks/s"),
    ("status_over_data", "ratio"),
    ("src_peak", "blocks"),
    ("local_peak", "blocks"),
    ("retx_total", "blocks"),
    ("buffer_total", "blocks"),
    ("wasted", "fraction of bandwidth"),
];

fn metric(o: &RunOut, s: &Spec, name: &str) -> f64 {
    let pps = o.rho / s.ipt();
    match name {
        "rho" => o.rho,
        "delay" => o.delay_ms,
        "delivery_delay" => o.delivery_delay_ms,
        "global" => o.global_rate,
        "local" => o.local_rate,
        "status" => o.status_rate,
        "data" => o.data_rate,
        "throughput_pps" => pps,
        "status_over_data" => o.status_rate / (pps + o.global_rate).max(1e-9),
        "src_peak" => o.src_peak,
        "local_peak" => o.local_peak,
        "retx_total" => o.retx_total,
        "buffer_total" => o.buffer_total,
        _ => 1.0 - o.rho,
    }
}

/// The paper's study (see the module doc).
pub struct Paul;

impl Study for Paul {
    /// Its wall time in the full run of 2026-11-29 (sharing two cores), in seconds.
    fn cost_hint(&self) -> u32 {
        244
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.sweeps);
        let mutant = ctx.mutant_of(mutants::MUTANTS);
        let fams = [
            Fam::Win,
            Fam::Rf,
            Fam::Speed,
            Fam::Err,
            Fam::Dests,
            Fam::Beyond,
        ];
        // Points: (family, protocol, x); run k of a point uses a seed of the point and k
        // alone. The paper's families start with `plan.seeds` runs per point and gain runs
        // where a claim on them is undecided (sequential sampling); the beyond-the-paper
        // points, which no claim uses, run once.
        let mut points: Vec<(usize, Fam, usize, Variant, f64)> = Vec::new();
        for (fi, &f) in fams.iter().enumerate() {
            let variants: &[Variant] = if f == Fam::Beyond {
                &[Variant::Dsp, Variant::Cp]
            } else {
                &VARIANTS
            };
            for (vi, &v) in variants.iter().enumerate() {
                for x in plan.xs(f) {
                    points.push((fi, f, vi, v, x));
                }
            }
        }
        let spec_of = |&(fi, f, vi, v, x): &(usize, Fam, usize, Variant, f64), k: u64| {
            let seed = mix64(mix64(0x9a01_0000 ^ (fi as u64) << 8 ^ vi as u64) ^ x.to_bits() ^ k);
            let mut s = plan.spec(f, v, x, seed);
            mutants::apply(mutant, &mut s);
            s
        };
        let (paper, beyond): (Vec<_>, Vec<_>) =
            points.into_iter().partition(|p| p.1 != Fam::Beyond);
        let feeds = |&(_, f, _, v, x): &(usize, Fam, usize, Variant, f64)| {
            vec![
                Feed::at(format!("{}.*.{}", f.key(), v.name()), x),
                Feed::all("runs.*"),
            ]
        };
        let run = |p: &(usize, Fam, usize, Variant, f64), k: u64| {
            let s = spec_of(p, k);
            run_one(&s).map(|o| (s, o))
        };
        let mut sampled = ctx.sample(&paper, plan.seeds, feeds, run)?;
        sampled.extend(ctx.sample(&beyond, 1, |_| Vec::new(), run)?);
        let mut jobs: Vec<(Fam, Variant, f64, Spec)> = Vec::new();
        let mut results: Vec<RunOut> = Vec::new();
        for (p, runs) in paper.iter().chain(&beyond).zip(sampled) {
            for (s, o) in runs {
                jobs.push((p.1, p.3, p.4, s));
                results.push(o);
            }
        }

        let mut m = Measures::new();
        let mut series: BTreeMap<String, Vec<(f64, Estimate)>> = BTreeMap::new();
        let mut runs_ok = Vec::new();
        let mut bad = Vec::new();
        let mut overflow = 0.0;
        for &f in &fams {
            for v in VARIANTS {
                for x in plan.xs(f) {
                    let runs: Vec<(&Spec, &RunOut)> = jobs
                        .iter()
                        .zip(&results)
                        .filter(|((jf, jv, jx, _), _)| *jf == f && *jv == v && *jx == x)
                        .map(|((_, _, _, s), o)| (s, o))
                        .collect();
                    if runs.is_empty() {
                        continue;
                    }
                    for (name, _) in METRICS {
                        if matches!(name, "delay" | "delivery_delay") && !runs[0].0.record {
                            continue;
                        }
                        let vals: Vec<f64> = runs.iter().map(|(s, o)| metric(o, s, name)).collect();
                        series
                            .entry(format!("{}.{name}.{}", f.key(), v.name()))
                            .or_default()
                            .push((x, est(&vals)?));
                    }
                    for (s, o) in &runs {
                        overflow += o.overflow;
                        let ok = o.completed && o.exactly_once;
                        runs_ok.push(if ok { 1.0 } else { 0.0 });
                        if !ok {
                            bad.push(format!(
                                "{} {} x = {x} seed {:#x}",
                                f.key(),
                                v.name(),
                                s.seed
                            ));
                        }
                    }
                }
                // The analytic eq. (4) beside the measurements (protocol-independent).
                if v == Variant::Dsp {
                    let pts: Vec<(f64, Estimate)> = plan
                        .xs(f)
                        .into_iter()
                        .map(|x| (x, Estimate::exact(rho_model_for(&plan.spec(f, v, x, 0)))))
                        .collect();
                    series.insert(format!("model.{}.rho", f.key()), pts);
                }
            }
        }
        for (name, pts) in &series {
            let fam = fams
                .iter()
                .find(|f| {
                    name.starts_with(&format!("{}.", f.key()))
                        || name.starts_with(&format!("model.{}.", f.key()))
                })
                .copied()
                .unwrap_or(Fam::Win);
            let metric_name = name.split('.').nth(1).unwrap_or("");
            let unit = METRICS
                .iter()
                .find(|(n, _)| *n == metric_name)
                .map_or("normalized throughput", |(_, u)| *u);
            m.series(name.clone(), unit, fam.x_label(), pts.clone());
        }
        m.scalar(
            "runs.delivered_exactly_once",
            "fraction of runs",
            est(&runs_ok)?,
        );
        // Derived: the smallest window reaching 95 % of the protocol's best throughput.
        for v in VARIANTS {
            if let Some(pts) = series.get(&format!("win.rho.{}", v.name())) {
                let best = pts.iter().map(|(_, e)| e.mean).fold(0.0, f64::max);
                if let Some((x, _)) = pts.iter().find(|(_, e)| e.mean >= 0.95 * best) {
                    m.scalar(
                        format!("win.peak_window.{}", v.name()),
                        "× largest RTD",
                        Estimate::exact(*x),
                    );
                }
            }
            if let Some(pts) = series.get(&format!("err.rho.{}", v.name())) {
                let at = |x: f64| {
                    pts.iter()
                        .find(|(px, _)| (px - x).abs() < 1e-9)
                        .map(|(_, e)| e.mean)
                };
                if let (Some(a), Some(b)) = (at(-3.0), at(-4.0)) {
                    m.scalar(
                        format!("err.rho_ratio_1e3_1e4.{}", v.name()),
                        "ratio",
                        Estimate::exact(a / b.max(1e-9)),
                    );
                }
            }
        }
        let plots = plots(ctx, &series, &m)?;
        let s0 = Spec::paper(Variant::Dsp, 2.0, plan.blocks, 0);
        let (wbar, wmax) = model_inputs(&s0);
        let mut notes = vec![
            format!(
                "{} runs; {} completed with every destination receiving every block exactly \
                 once and in order{}.",
                results.len(),
                runs_ok.iter().filter(|&&v| v > 0.0).count(),
                if bad.is_empty() { String::new() } else { format!(" (not: {})", bad.join("; ")) }
            ),
            format!(
                "eq. (4) inputs at the paper's point (150 Mb/s, 1056-byte datagrams, ipt = {:.2} µs): \
                 w̄_s = {wbar:.0} blocks (mean RTD 35.8 ms + 2.5 ms, half the mean status interval), \
                 w_s,max = {wmax:.0} blocks (60 ms + 2.5 ms), b = block error rate, n = destinations.",
                s0.ipt() * 1e6
            ),
            format!("blocks dropped for arriving beyond a reassembly buffer, all runs: {overflow:.0}"),
        ];
        // The delay to in-order delivery beside the paper's per-block delay (Figure 5).
        let by_window = |name: &str| -> String {
            VARIANTS
                .iter()
                .map(|v| {
                    let pts = series
                        .get(&format!("win.{name}.{}", v.name()))
                        .map(|p| fmt_series(p, "", &[]))
                        .unwrap_or_default();
                    format!("{}: {pts}", v.name().to_uppercase())
                })
                .collect::<Vec<_>>()
                .join(" | ")
        };
        notes.push(format!(
            "End-to-end delay by window, ms: to in-order delivery (a block also waits for \
             every block before it; Figure 5 and its claims, `delivery_delay`): {}. Per block \
             to its first arrival, from the source or a local re-multicast (`delay`; with \
             b = 1e-3 it is the propagation delay plus a few hundredths of a ms for every \
             protocol): {}.",
            by_window("delivery_delay"),
            by_window("delay")
        ));
        if ctx.quick() {
            notes.push(format!(
                "quick mode: {} seeds, {} blocks per run, fewer r_f and destination points, no \
                 beyond-the-paper runs.",
                plan.seeds, plan.blocks
            ));
        }
        Ok(StudyOutput {
            setup: setup(
                &Plan {
                    seeds: plan.seeds * u64::from(ctx.runs_factor()),
                    ..plan
                },
                results.len(),
            )?,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "paul",
            "Tree-based ACK consolidation and local re-multicast: DSP, CSP, CP",
            "seed 001 (Paul, Sabnani & Kristol: Multicast Transport Protocols for High Speed \
             Networks), §3–§7, eq. (1)–(4), Figures 4–12, Table 3",
        )
    }
}

/// Figures 5–7 (traffic and delay over the window size), declared as data.
const PLOTS_TOML: &str = include_str!("../../../../../scenarios/repro/paul/plots.toml");

fn plots(
    ctx: &RunCtx<'_>,
    series: &BTreeMap<String, Vec<(f64, Estimate)>>,
    m: &Measures,
) -> Result<Vec<Plot>, StudyError> {
    let get = |k: &str| series.get(k).cloned().unwrap_or_default();
    let per_protocol = |fam: &str, metric: &str, vs: &[Variant]| -> Vec<PlotSeries> {
        vs.iter()
            .map(|v| {
                let i = VARIANTS.iter().position(|w| w == v).unwrap_or(0);
                PlotSeries::measured(
                    format!("rmcast {}", v.name().to_uppercase()),
                    i,
                    &get(&format!("{fam}.{metric}.{}", v.name())),
                )
            })
            .collect()
    };
    let model = |fam: &str| {
        let pts: Vec<(f64, f64)> = get(&format!("model.{fam}.rho"))
            .iter()
            .map(|(x, e)| (*x, e.mean))
            .collect();
        PlotSeries::bound("eq. (4), capped at 1", 3, &pts)
    };
    let rho_plot = |id: &str, fig: &str, fam: Fam, what: &str| {
        let mut s = per_protocol(fam.key(), "rho", &VARIANTS);
        s.push(model(fam.key()));
        Plot {
            id: format!("paul-{id}"),
            title: format!("{fig}: normalized throughput vs {what}"),
            caption: format!(
                "Steady-state rate of new blocks at the source × block time, mean of the runs \
                 with 95 % CI, for DSP, CSP and CP on the §7 topology; dashed: eq. (4) of §6 \
                 with rmcast's w̄_s and w_s,max (setup). {}",
                match fam {
                    Fam::Speed =>
                        "The window is fixed at 2 × 60 ms of blocks at 150 Mb/s (2131 blocks).",
                    Fam::Err => "x is log10 of the block error rate.",
                    _ => "",
                }
            ),
            x: Axis::new(fam.x_label(), "see label"),
            y: Axis::new("normalized throughput ρ", "dimensionless"),
            series: s,
        }
    };
    let mut out = vec![rho_plot("fig4", "Figure 4", Fam::Win, "window size")];
    // Figures 5–7, declared as data.
    for spec in PlotSpec::parse_all("scenarios/repro/paul/plots.toml", PLOTS_TOML)? {
        out.push(spec.plot(m, ctx)?);
    }
    let mut fig8 = per_protocol("win", "status", &VARIANTS);
    if let Ok(t) = ctx.paper("status_rate") {
        fig8.push(PlotSeries::paper("paper (≈ typical)", 4, &t.points()));
    }
    out.push(Plot {
        id: "paul-fig8".into(),
        title: "Figure 8: acknowledgment (status) traffic vs window size".into(),
        caption: "Status packets arriving at the source per second (from the six E_i1 or \
                  exchanges); diamond: the paper's typical ≈ 1,500 packets/s."
            .into(),
        x: Axis::new(Fam::Win.x_label(), "× RTD"),
        y: Axis::new("status traffic", "packets/s"),
        series: fig8,
    });
    out.push(rho_plot(
        "fig9",
        "Figure 9",
        Fam::Rf,
        "retransmission timeout factor",
    ));
    out.push(rho_plot(
        "fig10",
        "Figure 10",
        Fam::Speed,
        "transmission speed",
    ));
    out.push(rho_plot("fig11", "Figure 11", Fam::Err, "block error rate"));
    out.push(rho_plot(
        "fig12",
        "Figure 12",
        Fam::Dests,
        "number of destinations",
    ));
    if series.contains_key("beyond.rho.dsp") {
        out.push(Plot {
            id: "paul-beyond".into(),
            title: "Beyond the paper: 1,000 and 10,000 destinations over 100 exchanges".into(),
            caption: "DSP and CP, window 2 × 60 ms, 150 Mb/s, block error rate 10⁻³, exchange \
                      RTDs spread evenly over 10–60 ms; one run each."
                .into(),
            x: Axis::new("destinations", "count"),
            y: Axis::new("normalized throughput ρ", "dimensionless"),
            series: per_protocol("beyond", "rho", &[Variant::Dsp, Variant::Cp]),
        });
    }
    Ok(out)
}

/// The study's setup as reported: `scenarios/repro/paul/setup.toml`, filled with the plan's
/// numbers.
fn setup(plan: &Plan, runs: usize) -> Result<Setup, StudyError> {
    // The fixed values as the runs use them: Figures 4–8's point and the protocols' defaults.
    let p = Spec::paper(Variant::Dsp, 2.0, plan.blocks, 0);
    let set = Settings::new(p.variant, p.l());
    let ms = |d: Duration| fmt_num(d.as_secs_f64() * 1e3);
    crate::setup!(
        "paul",
        &[
            ("speed", fmt_num(p.rate_mbps)),
            ("block", BLOCK.to_string()),
            ("datagram", (BLOCK + DATA_OVERHEAD).to_string()),
            ("header", DATA_OVERHEAD.to_string()),
            ("rf", fmt_num(p.r_f)),
            ("err", fmt_num(p.err)),
            ("status_min", ms(set.status_min.mul_f64(p.status_scale))),
            ("status_max", ms(set.status_max.mul_f64(p.status_scale))),
            ("rtds", join(&RTDS_MS)),
            ("link_factor", LINK_FACTOR.to_string()),
            ("windows", join(&plan.windows)),
            ("rfs", join(&plan.rfs)),
            ("speeds", join(&plan.speeds)),
            ("errs", join(&plan.errs)),
            ("dests", join(&plan.dests)),
            ("seeds", plan.seeds.to_string()),
            ("blocks", plan.blocks.to_string()),
            ("runs", runs.to_string()),
        ]
    )
}

mod mutants;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

//! `segovia`: seed 000 (Segovia 1996) — multicast stop-and-wait (MSAW) and block
//! acknowledgment (MBAP) on one shared 10 Mb/s Ethernet, Tables 4.1–4.13, plus the
//! round-robin acknowledgment protocol (RRA) the thesis proposed but never built.
//!
//! Every run is one sender and `r` receivers on `rmcast_sim`'s bus (seed 000 §3: frame time
//! 8 × bytes bit times, no gap, no propagation delay, 1-persistent deferral, 32-bit-time
//! collisions, truncated binary exponential backoff in 512-bit slots, 16 attempts), driven
//! by `rmcast_proto::{saw, bap, rra}` with a saturated source. Per-record metrics are those of
//! `rmcast_proto::metrics::segovia` (means of per-record ratios, block records for MBAP).
//! Failure rates are Bernoulli drops on transmit and on receive at every interface.

use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::metrics::segovia::{self as met, Params, Record};
use rmcast_proto::rng::mix64;
use rmcast_proto::saw::{RetransmitMode, TimeoutMethod, BIT_TIME_10MBPS};
use rmcast_proto::{bap, rra, saw, Agent, Bytes, Event, GroupId, NodeId, Time};
use rmcast_sim::{Backoff, BusConfig, LossModel, LossRule, LossSite, Network, Sim, Stop, Traffic};

/// The seed 000 study.
pub struct Segovia;

const GROUP: GroupId = GroupId(1);
/// ACK frames are 64 bytes in every experiment (the protocols' ACK datagrams are shorter and
/// the bus pads them to the 64-byte minimum frame).
pub const ACK_FRAME: u64 = 64;
/// The thesis's error-free timeout increment (digest §4.0), bit times.
pub const INCREMENT_ERROR_FREE: u64 = 600_000;
/// BAP receiver ACK-delay timeout `t`: not stated for the experiments; the thesis's sample
/// command file uses 95,000 bit times (digest §1.7, §4.0).
pub const BAP_ACK_TIMEOUT: u64 = 95_000;
/// Retransmission limits: not stated for the experiments; the sample command file uses
/// SAW 10 and BAP 20 (compared as "count ≤ max", so SAW allows 11 retransmissions, which
/// matches Table 4.6's largest Max Retr of 11).
pub const SAW_LIMIT: u32 = 10;
pub const BAP_LIMIT: u32 = 20;
/// RRA: unanswered requests allowed per receiver (rmcast's choice, = BAP's limit).
pub const RRA_LIMIT: u32 = 20;

/// Which protocol a run uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Proto {
    Saw,
    Bap {
        window: u16,
    },
    /// Round-robin acknowledgment with a window of `window` messages.
    Rra {
        window: usize,
    },
}

impl Proto {
    fn block(&self) -> u64 {
        match *self {
            Proto::Bap { window } => u64::from(window),
            _ => 1,
        }
    }
}

/// One simulation run.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    pub proto: Proto,
    pub receivers: usize,
    /// Data frame size on the bus, bytes (the datagram is sized to fill it exactly).
    pub data_frame: u64,
    /// SAWrand / BAPrand, bit times.
    pub rand_bits: u64,
    /// Failure probability per interface, on transmit and on receive.
    pub fail: f64,
    /// Timeout increment of the thesis's formula, bit times.
    pub increment_bits: u64,
    pub messages: u64,
    /// BAP receivers' ACK-delay timeout, bit times.
    pub ack_timeout_bits: u64,
    /// Retransmission limit (SAW, BAP) or unanswered-request limit (RRA).
    pub max_retx: Option<u32>,
    /// Backoff bound inclusive (thesis wording) or exclusive (IEEE 802.3).
    pub inclusive_backoff: bool,
    /// BAP receivers stop their ACK-delay timer when they send a full window's ACK
    /// (`bap::ReceiverConfig::disarm_on_window_ack`; rmcast's reading of the thesis).
    pub bap_disarm: bool,
    pub seed: u64,
}

impl RunSpec {
    /// The thesis's defaults for `proto` with `r` receivers: 1518-byte data, no random
    /// wait, no failures, increment 600,000, 500 packets (450 for BAP).
    pub fn thesis(proto: Proto, receivers: usize, seed: u64) -> Self {
        RunSpec {
            proto,
            receivers,
            data_frame: 1518,
            rand_bits: 0,
            fail: 0.0,
            increment_bits: INCREMENT_ERROR_FREE,
            messages: if matches!(proto, Proto::Bap { .. }) {
                450
            } else {
                500
            },
            ack_timeout_bits: BAP_ACK_TIMEOUT,
            max_retx: Some(match proto {
                Proto::Saw => SAW_LIMIT,
                Proto::Bap { .. } => BAP_LIMIT,
                Proto::Rra { .. } => RRA_LIMIT,
            }),
            inclusive_backoff: true,
            bap_disarm: true,
            seed,
        }
    }

    fn params(&self) -> Params {
        Params {
            receivers: self.receivers as u64,
            data_bytes: self.data_frame,
            ack_bytes: ACK_FRAME,
            window: self.proto.block(),
            bit_time: BIT_TIME_10MBPS,
        }
    }

    fn bus(&self) -> BusConfig {
        BusConfig {
            backoff: Backoff::Exponential {
                inclusive: self.inclusive_backoff,
            },
            ..BusConfig::default()
        }
    }
}

fn saw_params(s: &RunSpec) -> saw::ThesisParams {
    saw::ThesisParams {
        data_bytes: s.data_frame,
        ack_bytes: ACK_FRAME,
        rand_bits: s.rand_bits,
        timeout: TimeoutMethod::Formula {
            increment_bits: s.increment_bits,
        },
        mode: RetransmitMode::Multicast,
        max_retransmissions: s.max_retx,
        bit_time: BIT_TIME_10MBPS,
    }
}

fn bap_params(s: &RunSpec, window: u16) -> bap::ThesisParams {
    bap::ThesisParams {
        window,
        data_bytes: s.data_frame,
        ack_bytes: ACK_FRAME,
        ack_timeout_bits: s.ack_timeout_bits,
        rand_bits: s.rand_bits,
        timeout: TimeoutMethod::Formula {
            increment_bits: s.increment_bits,
        },
        max_retransmissions: s.max_retx,
        bit_time: BIT_TIME_10MBPS,
    }
}

/// RRA's per-request timeout: the MSAW formula `d + r·a + increment` (rmcast's choice; a
/// solicited ACK is one frame, so this is generous).
fn rra_timeout(s: &RunSpec) -> Duration {
    let bits = 8 * s.data_frame + 8 * ACK_FRAME * s.receivers as u64 + s.increment_bits;
    saw::timeout::bits_to_duration(bits, BIT_TIME_10MBPS)
}

fn sender_for(s: &RunSpec, node: NodeId, receivers: Vec<NodeId>) -> Box<dyn Agent> {
    match s.proto {
        Proto::Saw => {
            let mut c = saw_params(s).sender_config(node, GROUP, receivers);
            c.queue_limit = 4;
            Box::new(saw::Sender::new(c))
        }
        Proto::Bap { window } => {
            let mut c = bap_params(s, window).sender_config(node, GROUP, receivers);
            c.queue_limit = 4;
            Box::new(bap::Sender::new(c))
        }
        Proto::Rra { window } => {
            let mut c = rra::SenderConfig::new(node, GROUP, receivers, window, rra_timeout(s));
            c.max_retransmissions = s.max_retx;
            c.queue_limit = 4;
            Box::new(rra::Sender::new(c))
        }
    }
}

fn receiver_for(s: &RunSpec, node: NodeId, sim: &Sim) -> Box<dyn Agent> {
    let rng = sim.agent_rng(node, 0);
    match s.proto {
        Proto::Saw => Box::new(saw::Receiver::new(saw_params(s).receiver_config(node), rng)),
        Proto::Bap { window } => {
            let mut rc = bap_params(s, window).receiver_config(node);
            rc.disarm_on_window_ack = s.bap_disarm;
            Box::new(bap::Receiver::new(rc, rng))
        }
        Proto::Rra { window } => {
            Box::new(rra::Receiver::new(rra::ReceiverConfig::new(node, window)))
        }
    }
}

/// Length of the DATA datagram `proto` sends for a message of `payload` bytes, read off the
/// real encoder.
pub fn data_datagram_len(proto: Proto, payload: usize) -> Result<usize, String> {
    let spec = RunSpec::thesis(proto, 1, 0);
    let mut s = sender_for(&spec, NodeId(0), vec![NodeId(1)]);
    s.send(Time::ZERO, Bytes::from(vec![0u8; payload]))
        .map_err(|e| format!("{proto:?} refused a {payload}-byte message: {e:?}"))?;
    let t = s
        .poll_transmit()
        .ok_or_else(|| format!("{proto:?} sent no DATA"))?;
    Ok(t.payload.len())
}

/// The message size that makes `proto`'s DATA frame exactly `frame` bytes on `bus`: the
/// frame is the datagram plus the bus's overhead, so payload = frame − overhead − header.
pub fn payload_for_frame(proto: Proto, frame: u64, bus: &BusConfig) -> Result<usize, String> {
    let header = data_datagram_len(proto, 0)?;
    let frame = usize::try_from(frame).map_err(|_| "frame size too large".to_string())?;
    let payload = frame
        .checked_sub(bus.overhead + header)
        .ok_or_else(|| format!("{proto:?}'s {header}-byte header exceeds a {frame}-byte frame"))?;
    let check = bus.frame_bytes(data_datagram_len(proto, payload)?);
    if check != frame {
        return Err(format!(
            "{proto:?}: a {payload}-byte message gives a {check}-byte frame, not {frame}"
        ));
    }
    Ok(payload)
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct RunOut {
    pub summary: met::Summary,
    /// Ratio of totals: messages·r·(d + a) / (last finish − first send), bit times.
    pub rt_aggregate: f64,
    pub collisions_per_msg: f64,
    pub acks_per_msg: f64,
    /// Fraction of messages given up on (retransmission limit).
    pub failed_frac: f64,
    /// Every receiver got every message the sender did not give up on, exactly once and in
    /// order, and nothing else twice.
    pub delivery_ok: bool,
    /// Per-receiver delivered message numbers (only kept when asked for).
    pub delivered: Vec<Vec<u64>>,
    pub failed_seqs: Vec<u64>,
}

/// Run one scenario to completion.
pub fn run_one(s: &RunSpec, keep_deliveries: bool) -> Result<RunOut, String> {
    let bus = s.bus();
    let payload = payload_for_frame(s.proto, s.data_frame, &bus)?;
    let mut net = Network::new();
    let nodes: Vec<NodeId> = (0..=s.receivers).map(|_| net.add_host()).collect();
    net.add_bus(&nodes, bus.clone())
        .map_err(|e| format!("building the bus: {e}"))?;
    let (sender, receivers) = match nodes.split_first() {
        Some((a, b)) => (*a, b.to_vec()),
        None => return Err("no nodes".into()),
    };
    let mut sim = Sim::new(net, s.seed);
    sim.set_group(GROUP, &receivers)
        .map_err(|e| e.to_string())?;
    sim.add_agent(sender, sender_for(s, sender, receivers.clone()))
        .map_err(|e| e.to_string())?;
    for &r in &receivers {
        let a = receiver_for(s, r, &sim);
        sim.add_agent(r, a).map_err(|e| e.to_string())?;
    }
    if s.fail > 0.0 {
        for &n in &nodes {
            for site in [
                LossSite::Tx {
                    node: n,
                    iface: None,
                },
                LossSite::Rx {
                    node: n,
                    iface: None,
                },
            ] {
                sim.add_loss(
                    &LossRule::new(site, LossModel::Bernoulli { p: s.fail }).cause("failure_rate"),
                )
                .map_err(|e| e.to_string())?;
            }
        }
    }
    sim.add_traffic(sender, Traffic::saturated(s.messages, payload))
        .map_err(|e| e.to_string())?;
    let out = sim.run(&Stop::when_complete().until(Time::from_secs(24 * 3600)));
    if !out.completed {
        return Err(format!(
            "{:?} with {} receivers, failure {} did not complete: {}",
            s.proto, s.receivers, s.fail, out.reason
        ));
    }
    let records: Vec<Record> = sim
        .events(sender)
        .iter()
        .filter_map(|(_, e)| Record::from_event(e))
        .collect();
    if records.len() as u64 != s.messages {
        return Err(format!(
            "{} of {} messages finished",
            records.len(),
            s.messages
        ));
    }
    let p = s.params();
    let per_block = matches!(s.proto, Proto::Bap { .. });
    let summary = met::summarize(&p, &records, per_block).ok_or("no records or a zero latency")?;
    let first = records
        .iter()
        .map(|r| r.sent_at)
        .min()
        .unwrap_or(Time::ZERO);
    let last = records
        .iter()
        .map(|r| r.done_at)
        .max()
        .unwrap_or(Time::ZERO);
    let span = p.bits(last - first);
    let per_msg = Params { window: 1, ..p };
    let rt_aggregate = if span > 0.0 {
        s.messages as f64 * per_msg.rt(1.0) / span
    } else {
        0.0
    };
    let failed_seqs: Vec<u64> = records.iter().filter(|r| r.failed).map(|r| r.seq).collect();
    let mut delivery_ok = true;
    let mut delivered = Vec::new();
    let mut rx_stats = Vec::new();
    for &r in &receivers {
        let got: Vec<u64> = sim
            .events(r)
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Delivered { data, .. } => data
                    .get(..8)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map(u64::from_be_bytes)
                    .or(Some(u64::MAX)),
                _ => None,
            })
            .collect();
        // Strictly increasing (in order, no duplicate) and nothing missing but failures.
        let inorder = got.windows(2).all(|w| w[0] < w[1]);
        let complete = (0..s.messages)
            .all(|k| failed_seqs.binary_search(&k).is_ok() || got.binary_search(&k).is_ok());
        let bounded = got.iter().all(|&k| k < s.messages);
        delivery_ok &= inorder && complete && bounded;
        if keep_deliveries {
            delivered.push(got);
        }
        if let Some(a) = sim.agent(r) {
            rx_stats.push(a.stats().clone());
        }
    }
    let sstats = sim
        .agent(sender)
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    let refs: Vec<&rmcast_proto::Stats> = rx_stats.iter().collect();
    let fb = met::feedback(&sstats, &refs, s.messages);
    Ok(RunOut {
        rt_aggregate,
        collisions_per_msg: sim.counters().bus_collisions as f64 / s.messages as f64,
        acks_per_msg: fb.map_or(0.0, |f| f.acks_per_message),
        failed_frac: failed_seqs.len() as f64 / s.messages as f64,
        delivery_ok,
        delivered,
        failed_seqs,
        summary,
    })
}

// ------------------------------------------------------------------------------ the sweep

/// A sweep point family: one configuration over a varying x (receivers or failure rate).
#[derive(Debug, Clone)]
struct Family {
    /// Measure prefix, e.g. `t4_1` or `err.saw_r20_rand0`.
    key: String,
    /// x values (receivers, or failure rate in %).
    xs: Vec<f64>,
    /// The run for (x, seed).
    make: fn(&FamilyCfg, f64, u64) -> RunSpec,
    cfg: FamilyCfg,
}

#[derive(Debug, Clone, Copy)]
struct FamilyCfg {
    proto: Proto,
    data_frame: u64,
    rand_bits: u64,
    receivers: usize,
    ack_timeout_bits: u64,
    max_retx_override: Option<Option<u32>>,
    inclusive_backoff: bool,
    bap_disarm: bool,
    messages: u64,
}

impl FamilyCfg {
    fn new(proto: Proto, messages_saw: u64) -> Self {
        let messages = match proto {
            Proto::Bap { .. } => messages_saw * 9 / 10,
            _ => messages_saw,
        };
        FamilyCfg {
            proto,
            data_frame: 1518,
            rand_bits: 0,
            receivers: 0,
            ack_timeout_bits: BAP_ACK_TIMEOUT,
            max_retx_override: None,
            inclusive_backoff: true,
            bap_disarm: true,
            messages,
        }
    }
    fn base(&self, r: usize, seed: u64) -> RunSpec {
        let mut s = RunSpec::thesis(self.proto, r, seed);
        s.data_frame = self.data_frame;
        s.rand_bits = self.rand_bits;
        s.ack_timeout_bits = self.ack_timeout_bits;
        if let Some(m) = self.max_retx_override {
            s.max_retx = m;
        }
        s.inclusive_backoff = self.inclusive_backoff;
        s.bap_disarm = self.bap_disarm;
        s.messages = self.messages;
        s
    }
}

/// x = receivers, error-free, increment 600,000.
fn by_receivers(c: &FamilyCfg, x: f64, seed: u64) -> RunSpec {
    let r = x as usize;
    let mut s = c.base(r, seed);
    if let Proto::Rra { .. } = c.proto {
        s.proto = Proto::Rra { window: 2 * r };
    }
    s
}

/// Timeout increments of the error experiments: 45,000 / 90,000 / 135,000 bit times for
/// 20 / 40 / 60 receivers (digest §4.6), i.e. 2,250 per receiver.
pub fn error_increment(r: usize) -> u64 {
    2_250 * r as u64
}

/// x = failure rate in %, at `c.receivers`, with the error experiments' increments.
fn by_failure(c: &FamilyCfg, x: f64, seed: u64) -> RunSpec {
    let mut s = c.base(c.receivers, seed);
    s.fail = x / 100.0;
    s.increment_bits = error_increment(c.receivers);
    s
}

struct Plan {
    seeds: u64,
    messages: u64,
    rs: Vec<f64>,
    err_rs: Vec<usize>,
    err_fails: Vec<f64>,
    err_windows: Vec<u16>,
    sens_rs: Vec<f64>,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Plan {
                seeds: 3,
                messages: 200,
                rs: vec![5.0, 10.0, 20.0, 30.0, 60.0],
                err_rs: vec![20],
                err_fails: vec![0.0, 1.0],
                err_windows: vec![10],
                sens_rs: vec![5.0, 20.0, 60.0],
            }
        } else {
            Plan {
                seeds: 10,
                messages: 500,
                rs: (1..=12).map(|k| 5.0 * k as f64).collect(),
                err_rs: vec![20, 40, 60],
                err_fails: vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                err_windows: vec![5, 10, 15],
                sens_rs: vec![5.0, 10.0, 20.0, 30.0, 40.0, 60.0],
            }
        }
    }

    fn families(&self) -> Vec<Family> {
        let mut f = Vec::new();
        let m = self.messages;
        let fam =
            |key: String, xs: &Vec<f64>, make: fn(&FamilyCfg, f64, u64) -> RunSpec, cfg| Family {
                key,
                xs: xs.clone(),
                make,
                cfg,
            };
        f.push(fam(
            "t4_1".into(),
            &self.rs,
            by_receivers,
            FamilyCfg::new(Proto::Saw, m),
        ));
        for d in [64u64, 848, 1436] {
            let mut c = FamilyCfg::new(Proto::Saw, m);
            c.data_frame = d;
            f.push(fam(format!("t4_2_d{d}"), &self.rs, by_receivers, c));
        }
        for rd in [12_000u64, 22_000, 32_000] {
            let mut c = FamilyCfg::new(Proto::Saw, m);
            c.rand_bits = rd;
            f.push(fam(format!("t4_3_rand{rd}"), &self.rs, by_receivers, c));
        }
        for w in [5u16, 10, 15] {
            let c = FamilyCfg::new(Proto::Bap { window: w }, m);
            f.push(fam(format!("t4_4_w{w}"), &self.rs, by_receivers, c));
        }
        for rd in [12_000u64, 22_000, 32_000] {
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.rand_bits = rd;
            f.push(fam(format!("t4_5_rand{rd}"), &self.rs, by_receivers, c));
        }
        f.push(fam(
            "rra".into(),
            &self.rs,
            by_receivers,
            FamilyCfg::new(Proto::Rra { window: 2 }, m),
        ));
        // Error experiments (Tables 4.6–4.13): 500 packets for both protocols (digest §4.6).
        for &r in &self.err_rs {
            for rd in [0u64, 22_000] {
                let mut c = FamilyCfg::new(Proto::Saw, m);
                c.receivers = r;
                c.rand_bits = rd;
                f.push(fam(
                    format!("err.saw_r{r}_rand{rd}"),
                    &self.err_fails,
                    by_failure,
                    c,
                ));
                for &w in &self.err_windows {
                    let mut c = FamilyCfg::new(Proto::Bap { window: w }, m);
                    c.messages = m;
                    c.receivers = r;
                    c.rand_bits = rd;
                    f.push(fam(
                        format!("err.bap_w{w}_r{r}_rand{rd}"),
                        &self.err_fails,
                        by_failure,
                        c,
                    ));
                }
            }
        }
        // Sensitivity to the choices the thesis leaves open.
        let mut c = FamilyCfg::new(Proto::Saw, m);
        c.inclusive_backoff = false;
        f.push(fam(
            "sens.saw_exclusive".into(),
            &self.sens_rs,
            by_receivers,
            c,
        ));
        let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
        c.inclusive_backoff = false;
        f.push(fam(
            "sens.bap_w10_exclusive".into(),
            &self.sens_rs,
            by_receivers,
            c,
        ));
        for t in [25_000u64, 300_000] {
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.ack_timeout_bits = t;
            f.push(fam(
                format!("sens.bap_w10_t{t}"),
                &self.sens_rs,
                by_receivers,
                c,
            ));
        }
        let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
        c.bap_disarm = false;
        f.push(fam(
            "sens.bap_w10_running".into(),
            &self.sens_rs,
            by_receivers,
            c,
        ));
        let fails = vec![0.0, 1.0, 5.0];
        let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
        c.messages = m;
        c.receivers = 20;
        c.bap_disarm = false;
        f.push(fam(
            "sens.bap_w10_r20_running".into(),
            &fails,
            by_failure,
            c,
        ));
        for (name, lim) in [("lim5", Some(5u32)), ("lim40", Some(40))] {
            let mut c = FamilyCfg::new(Proto::Saw, m);
            c.receivers = 20;
            c.max_retx_override = Some(lim);
            f.push(fam(format!("sens.saw_r20_{name}"), &fails, by_failure, c));
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.messages = m;
            c.receivers = 20;
            c.max_retx_override = Some(lim);
            f.push(fam(
                format!("sens.bap_w10_r20_{name}"),
                &fails,
                by_failure,
                c,
            ));
        }
        for t in [25_000u64, 300_000] {
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.messages = m;
            c.receivers = 20;
            c.ack_timeout_bits = t;
            f.push(fam(format!("sens.bap_w10_r20_t{t}"), &fails, by_failure, c));
        }
        f
    }
}

/// Per-point summaries across seeds.
#[derive(Default)]
struct Agg {
    pts: std::collections::BTreeMap<String, Vec<(f64, Estimate)>>,
}

impl Agg {
    fn push(&mut self, name: String, x: f64, e: Estimate) {
        self.pts.entry(name).or_default().push((x, e));
    }
    fn get(&self, name: &str) -> Vec<(f64, Estimate)> {
        self.pts.get(name).cloned().unwrap_or_default()
    }
}

fn est(v: &[f64]) -> Result<Estimate, StudyError> {
    Estimate::from_samples(v)
        .ok_or_else(|| StudyError::Run("a summary over zero runs or non-finite values".into()))
}

/// x of the largest mean.
fn peak_x(pts: &[(f64, Estimate)]) -> Option<f64> {
    pts.iter()
        .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
        .map(|p| p.0)
}

/// The thesis's tabulated receiver counts (bounds are checked at these).
const TABLE_RS: [f64; 12] = [
    5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0,
];

impl Study for Segovia {
    fn name(&self) -> &'static str {
        "segovia"
    }

    fn title(&self) -> &'static str {
        "Multicast stop-and-wait and block acknowledgment on a shared Ethernet (Segovia 1996)"
    }

    fn source(&self) -> &'static str {
        "seed 000 (Segovia 1996, MSc thesis): §4.1 bounds, Tables 4.1–4.13; RRA from Ch. 5"
    }

    fn claims_toml(&self) -> &'static str {
        include_str!("../../../../scenarios/repro/segovia/claims.toml")
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.quick);
        let fams = plan.families();
        let mut jobs: Vec<(usize, f64, RunSpec)> = Vec::new();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                for k in 0..plan.seeds {
                    let seed = mix64(mix64(fi as u64 ^ 0x5e60_0000) ^ x.to_bits() ^ k);
                    jobs.push((fi, x, (f.make)(&f.cfg, x, seed)));
                }
            }
        }
        let results: Vec<RunOut> = ctx
            .map(&jobs, |(_, _, s)| run_one(s, false))
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(StudyError::Run)?;

        let mut agg = Agg::default();
        let mut all_ok = Vec::new();
        let mut failed_any_free = 0usize;
        let mut bad_runs: Vec<String> = Vec::new();
        let mut free_fail_runs: Vec<String> = Vec::new();
        // Per-seed latency at each failure rate, for the ratio claims.
        let mut per_seed_lat: std::collections::BTreeMap<(usize, u64), Vec<(f64, f64)>> =
            Default::default();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                let runs: Vec<(&RunSpec, &RunOut)> = jobs
                    .iter()
                    .zip(&results)
                    .filter(|((j, jx, _), _)| *j == fi && *jx == x)
                    .map(|((_, _, s), o)| (s, o))
                    .collect();
                let col = |g: &dyn Fn(&RunOut) -> f64| -> Vec<f64> {
                    runs.iter().map(|(_, o)| g(o)).collect()
                };
                let k = &f.key;
                let items: Vec<(&str, Vec<f64>)> = vec![
                    ("rt_mean", col(&|o| o.summary.rt.mean)),
                    ("rt_min", col(&|o| o.summary.rt.min)),
                    ("rt_max", col(&|o| o.summary.rt.max)),
                    ("at_mean", col(&|o| o.summary.at.mean)),
                    ("lat_mean", col(&|o| o.summary.latency.mean)),
                    ("lat_min", col(&|o| o.summary.latency.min)),
                    ("lat_max", col(&|o| o.summary.latency.max)),
                    ("lat_p25", col(&|o| o.summary.latency_percentiles[1])),
                    ("lat_p50", col(&|o| o.summary.latency_percentiles[2])),
                    ("lat_p75", col(&|o| o.summary.latency_percentiles[3])),
                    ("retx_mean", col(&|o| o.summary.retransmissions.mean)),
                    ("retx_max", col(&|o| o.summary.retransmissions.max)),
                    ("failed_frac", col(&|o| o.failed_frac)),
                    ("rt_aggregate", col(&|o| o.rt_aggregate)),
                    ("collisions", col(&|o| o.collisions_per_msg)),
                    ("acks", col(&|o| o.acks_per_msg)),
                ];
                for (name, v) in items {
                    agg.push(format!("{k}.{name}"), x, est(&v)?);
                }
                for (s, o) in &runs {
                    all_ok.push(if o.delivery_ok { 1.0 } else { 0.0 });
                    if !o.delivery_ok {
                        bad_runs.push(format!(
                            "{} at x = {x} (seed {:#x}, {} failed messages)",
                            f.key,
                            s.seed,
                            o.failed_seqs.len()
                        ));
                    }
                    if s.fail == 0.0 && o.failed_frac > 0.0 {
                        failed_any_free += 1;
                        free_fail_runs.push(format!("{} at x = {x}", f.key));
                    }
                }
                for (i, (_, o)) in runs.iter().enumerate() {
                    per_seed_lat
                        .entry((fi, i as u64))
                        .or_default()
                        .push((x, o.summary.latency.mean));
                }
            }
        }

        let mut m = Measures::new();
        for (name, pts) in &agg.pts {
            let (unit, xl) = unit_of(name);
            m.series(name.clone(), unit, xl, pts.clone());
        }
        m.scalar("runs.delivery_ok", "fraction of runs", est(&all_ok)?);
        m.scalar(
            "runs.error_free_failures",
            "runs",
            Estimate::exact(failed_any_free as f64),
        );

        // Analytic bounds at the thesis's tabulated r, with our frames (d from the encoder).
        let bound_fams: Vec<(&str, Proto, u64)> = vec![
            ("t4_1", Proto::Saw, 1518),
            ("t4_2_d64", Proto::Saw, 64),
            ("t4_2_d848", Proto::Saw, 848),
            ("t4_2_d1436", Proto::Saw, 1436),
            ("t4_3", Proto::Saw, 1518),
            ("t4_4_w5", Proto::Bap { window: 5 }, 1518),
            ("t4_4_w10", Proto::Bap { window: 10 }, 1518),
            ("t4_4_w15", Proto::Bap { window: 15 }, 1518),
        ];
        for (key, proto, frame) in &bound_fams {
            let mut ub = Vec::new();
            let mut ua = Vec::new();
            let mut lb = Vec::new();
            let mut lim = 0.0;
            for &r in &TABLE_RS {
                let mut s = RunSpec::thesis(*proto, r as usize, 0);
                s.data_frame = *frame;
                let p = s.params();
                ub.push((r, Estimate::exact(p.ubrt())));
                ua.push((r, Estimate::exact(p.ubat())));
                lb.push((r, Estimate::exact(p.lbl())));
                lim = p.ubrt_limit();
            }
            m.series(
                format!("analytic.{key}.ubrt"),
                "dimensionless",
                "receivers",
                ub,
            );
            m.series(format!("analytic.{key}.ubat"), "Mb/s", "receivers", ua);
            m.series(format!("analytic.{key}.lbl"), "bit times", "receivers", lb);
            m.scalar(
                format!("analytic.{key}.limit"),
                "dimensionless",
                Estimate::exact(lim),
            );
        }
        // The frames the runs really used: d and a on the bus, from the encoders.
        let bus = BusConfig::default();
        for (name, proto) in [
            ("saw", Proto::Saw),
            ("bap", Proto::Bap { window: 10 }),
            ("rra", Proto::Rra { window: 120 }),
        ] {
            for frame in [64u64, 848, 1436, 1518] {
                if name != "saw" && frame != 1518 {
                    continue;
                }
                let pl = payload_for_frame(proto, frame, &bus).map_err(StudyError::Run)?;
                let len = data_datagram_len(proto, pl).map_err(StudyError::Run)?;
                m.scalar(
                    format!("frames.{name}.data{frame}"),
                    "bytes",
                    Estimate::exact(bus.frame_bytes(len) as f64),
                );
            }
        }

        // Peaks (x of the largest mean RT).
        for key in [
            "t4_1",
            "t4_2_d64",
            "t4_2_d848",
            "t4_2_d1436",
            "t4_3_rand12000",
            "t4_3_rand22000",
            "t4_3_rand32000",
        ] {
            if let Some(px) = peak_x(&agg.get(&format!("{key}.rt_mean"))) {
                m.scalar(format!("{key}.peak_r"), "receivers", est(&[px])?);
            }
        }
        // Error experiments: latency at 1 % over latency at 0 %, per seed.
        for (fi, f) in fams.iter().enumerate() {
            if !f.key.starts_with("err.") {
                continue;
            }
            let mut ratios = Vec::new();
            for k in 0..plan.seeds {
                if let Some(v) = per_seed_lat.get(&(fi, k)) {
                    let at = |x: f64| v.iter().find(|p| p.0 == x).map(|p| p.1);
                    if let (Some(a), Some(b)) = (at(0.0), at(1.0)) {
                        ratios.push(b / a);
                    }
                }
            }
            if !ratios.is_empty() {
                m.scalar(format!("{}.lat_ratio_1pct", f.key), "ratio", est(&ratios)?);
            }
        }

        let plots = plots(ctx, &agg, &m, &plan)?;
        let setup = setup(&plan, jobs.len());
        let mut notes = vec![
            format!(
                "The thesis ran one repetition per point (its SAS notes: reps \"always 1\"); \
                 rmcast averages {} seeds per point and shows the 95 % confidence interval of \
                 the mean across seeds. The thesis's Min/Max columns are per-packet extremes \
                 within its single run.",
                plan.seeds
            ),
            format!(
                "Error-free runs in which a message hit the retransmission limit: \
                 {failed_any_free} ({}).",
                free_fail_runs.join("; ")
            ),
        ];
        // Measured against the thesis, compactly, for the reader.
        let fmt_pts = |name: &str, paper: Option<&str>| -> String {
            let pts = agg.get(name);
            let pp = paper.and_then(|k| ctx.paper(k).ok());
            pts.iter()
                .map(|(x, e)| {
                    let t = pp
                        .and_then(|p| p.points().into_iter().find(|q| q.0 == *x))
                        .map(|q| format!(" [thesis {}]", crate::claim::fmt_num(q.1)))
                        .unwrap_or_default();
                    format!(
                        "{}: {} ± {}{t}",
                        crate::claim::fmt_num(*x),
                        crate::claim::fmt_num(e.mean),
                        crate::claim::fmt_num(e.sd)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        for (name, paper) in [
            ("t4_1.rt_mean", Some("t4_1_mean_rt")),
            ("t4_1.lat_mean", Some("t4_1_mean_lat")),
            ("t4_4_w10.rt_mean", Some("t4_4_w10_mean_rt")),
            ("t4_1.collisions", None),
            ("t4_4_w10.collisions", None),
            ("rra.collisions", None),
            ("t4_1.rt_aggregate", None),
            ("rra.rt_aggregate", None),
        ] {
            notes.push(format!("{name} by receivers: {}.", fmt_pts(name, paper)));
        }
        for f in fams
            .iter()
            .filter(|f| f.key.starts_with("err.") || f.key.contains("_r20_"))
        {
            let fam = f.key.trim_start_matches("err.");
            let pl = paper_err_key(fam);
            let pr = pl.as_ref().map(|k| k.replace("_mean_lat", "_mean_retr"));
            notes.push(format!(
                "{} by failure rate %: mean latency {}; mean retransmissions {}; failed fraction {}.",
                f.key,
                fmt_pts(&format!("{}.lat_mean", f.key), pl.as_deref()),
                fmt_pts(&format!("{}.retx_mean", f.key), pr.as_deref()),
                fmt_pts(&format!("{}.failed_frac", f.key), None),
            ));
        }
        if !bad_runs.is_empty() {
            notes.push(format!(
                "Runs whose delivery check failed (a receiver missed a message the sender \
                 did not give up on, or got one twice or out of order): {}.",
                bad_runs.join("; ")
            ));
        }
        if ctx.quick {
            notes.push(
                "Quick mode: fewer receiver counts, 3 seeds, 200 messages (180 for BAP), \
                 error experiments at r = 20 and 0–1 % only, window 10 only."
                    .into(),
            );
        }
        Ok(StudyOutput {
            setup,
            measures: m,
            plots,
            notes,
        })
    }
}

fn unit_of(name: &str) -> (&'static str, &'static str) {
    let xl = if name.starts_with("err.") || name.contains("_r20_") {
        "failure rate %"
    } else {
        "receivers"
    };
    let unit = if name.contains(".rt_") {
        "dimensionless"
    } else if name.contains(".at_") {
        "Mb/s"
    } else if name.contains(".lat_") {
        "bit times"
    } else if name.contains(".retx") {
        "retransmissions per message"
    } else if name.contains(".collisions") {
        "collisions per message"
    } else if name.contains(".acks") {
        "ACKs per message"
    } else {
        "fraction"
    };
    (unit, xl)
}

fn plots(ctx: &RunCtx<'_>, agg: &Agg, m: &Measures, _plan: &Plan) -> Result<Vec<Plot>, StudyError> {
    let mut out = Vec::new();
    let bound = |key: &str| -> Vec<(f64, f64)> {
        m.get(&format!("analytic.{key}.ubrt"))
            .map(|s| {
                s.points()
                    .into_iter()
                    .filter_map(|(x, e)| x.map(|x| (x, e.mean)))
                    .collect()
            })
            .unwrap_or_default()
    };
    // (plot id, title, [(family, label, paper table, bound key)])
    type Curve<'a> = (&'a str, &'a str, &'a str, &'a str);
    let rt_plots: Vec<(&str, &str, Vec<Curve>)> = vec![
        (
            "t4_1",
            "Table 4.1: MSAW relative throughput",
            vec![("t4_1", "MSAW 1518 B", "t4_1_mean_rt", "t4_1")],
        ),
        (
            "t4_2",
            "Table 4.2: MSAW with 64, 848 and 1436-byte data",
            vec![
                ("t4_2_d64", "64 B", "t4_2_d64_mean_rt", "t4_2_d64"),
                ("t4_2_d848", "848 B", "t4_2_d848_mean_rt", "t4_2_d848"),
                ("t4_2_d1436", "1436 B", "t4_2_d1436_mean_rt", "t4_2_d1436"),
            ],
        ),
        (
            "t4_3",
            "Table 4.3: MSAW with random ACK delay (SAWrand)",
            vec![
                ("t4_1", "SAWrand 0", "t4_1_mean_rt", "t4_1"),
                (
                    "t4_3_rand12000",
                    "SAWrand 12,000",
                    "t4_3_rand12000_mean_rt",
                    "",
                ),
                (
                    "t4_3_rand22000",
                    "SAWrand 22,000",
                    "t4_3_rand22000_mean_rt",
                    "",
                ),
                (
                    "t4_3_rand32000",
                    "SAWrand 32,000",
                    "t4_3_rand32000_mean_rt",
                    "",
                ),
            ],
        ),
        (
            "t4_4",
            "Table 4.4: MBAP with windows 5, 10, 15",
            vec![
                ("t4_4_w5", "window 5", "t4_4_w5_mean_rt", "t4_4_w5"),
                ("t4_4_w10", "window 10", "t4_4_w10_mean_rt", "t4_4_w10"),
                ("t4_4_w15", "window 15", "t4_4_w15_mean_rt", "t4_4_w15"),
            ],
        ),
        (
            "t4_5",
            "Table 4.5: MBAP window 10 with random ACK delay (BAPrand)",
            vec![
                ("t4_4_w10", "BAPrand 0", "t4_4_w10_mean_rt", "t4_4_w10"),
                (
                    "t4_5_rand12000",
                    "BAPrand 12,000",
                    "t4_5_rand12000_mean_rt",
                    "",
                ),
                (
                    "t4_5_rand22000",
                    "BAPrand 22,000",
                    "t4_5_rand22000_mean_rt",
                    "",
                ),
                (
                    "t4_5_rand32000",
                    "BAPrand 32,000",
                    "t4_5_rand32000_mean_rt",
                    "",
                ),
            ],
        ),
    ];
    for (id, title, fams) in rt_plots {
        let mut series = Vec::new();
        for (c, (fam, label, paper, bkey)) in fams.iter().enumerate() {
            series.push(PlotSeries::measured(
                format!("rmcast {label}"),
                c,
                &agg.get(&format!("{fam}.rt_mean")),
            ));
            series.push(PlotSeries::paper(
                format!("thesis {label}"),
                c,
                &ctx.paper(paper)?.points(),
            ));
            if !bkey.is_empty() {
                series.push(PlotSeries::bound(format!("UBRT {label}"), c, &bound(bkey)));
            }
        }
        out.push(Plot {
            id: format!("segovia-rt-{id}"),
            title: title.into(),
            caption: "Mean over records of the per-record relative throughput r·(n·d + a)/latency \
                      (records are messages for MSAW, blocks of n for MBAP) against the number \
                      of receivers, mean and 95 % CI across seeds; diamonds: the thesis's \
                      Mean RT column (one run each); dashed: the upper bound UBRT (eq. 4.5/4.13)."
                .into(),
            x: Axis::new("receivers r", "count"),
            y: Axis::new("relative throughput", "dimensionless"),
            series,
        });
    }
    // Fig. 4.4 style latency percentiles.
    let lbl: Vec<(f64, f64)> = m
        .get("analytic.t4_1.lbl")
        .map(|s| {
            s.points()
                .into_iter()
                .filter_map(|(x, e)| x.map(|x| (x, e.mean)))
                .collect()
        })
        .unwrap_or_default();
    out.push(Plot {
        id: "segovia-latency-percentiles".into(),
        title: "MSAW message latency percentiles (Fig. 4.4 style)".into(),
        caption: "Per-run 0/25/50/75/100th percentiles of message latency (1518-byte data, no \
                  random delay, no failures), each averaged across seeds; dashed: LBL = d + r·a; \
                  diamonds: the thesis's Table 4.1 min, mean and max latency."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("message latency", "bit times"),
        series: vec![
            PlotSeries::measured("min", 0, &agg.get("t4_1.lat_min")),
            PlotSeries::measured("25th percentile", 1, &agg.get("t4_1.lat_p25")),
            PlotSeries::measured("median", 2, &agg.get("t4_1.lat_p50")),
            PlotSeries::measured("75th percentile", 3, &agg.get("t4_1.lat_p75")),
            PlotSeries::measured("max", 4, &agg.get("t4_1.lat_max")),
            PlotSeries::bound("LBL = d + r·a", 5, &lbl),
            PlotSeries::paper("thesis min", 0, &ctx.paper("t4_1_min_lat")?.points()),
            PlotSeries::paper("thesis mean", 2, &ctx.paper("t4_1_mean_lat")?.points()),
            PlotSeries::paper("thesis max", 4, &ctx.paper("t4_1_max_lat")?.points()),
        ],
    });
    out.push(Plot {
        id: "segovia-collisions".into(),
        title: "Collisions per message (never reported by the thesis)".into(),
        caption: "Bus collisions per application message, error-free, 1518-byte data: MSAW, \
                  MBAP window 10 and RRA (window 2r); mean and 95 % CI across seeds."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("collisions", "per message"),
        series: vec![
            PlotSeries::measured("MSAW", 0, &agg.get("t4_1.collisions")),
            PlotSeries::measured("MBAP window 10", 1, &agg.get("t4_4_w10.collisions")),
            PlotSeries::measured("RRA", 2, &agg.get("rra.collisions")),
        ],
    });
    out.push(Plot {
        id: "segovia-rra".into(),
        title: "RRA against MSAW and MBAP: aggregate relative throughput".into(),
        caption: "Messages·r·(d + a) over the run's duration (ratio of totals, so pipelined \
                  RRA is comparable), error-free, 1518-byte data; dashed: MSAW's UBRT."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("aggregate relative throughput", "dimensionless"),
        series: vec![
            PlotSeries::measured("MSAW", 0, &agg.get("t4_1.rt_aggregate")),
            PlotSeries::measured("MBAP window 10", 1, &agg.get("t4_4_w10.rt_aggregate")),
            PlotSeries::measured("RRA window 2r", 2, &agg.get("rra.rt_aggregate")),
            PlotSeries::bound("MSAW UBRT", 0, &bound("t4_1")),
        ],
    });
    // Error experiments: latency against failure rate.
    let mut saw_s = Vec::new();
    let mut bap_s = Vec::new();
    for (c, (key, _)) in agg
        .pts
        .iter()
        .filter(|(k, _)| k.starts_with("err.") && k.ends_with(".lat_mean"))
        .enumerate()
    {
        let fam = key.trim_start_matches("err.").trim_end_matches(".lat_mean");
        let paper_key = paper_err_key(fam);
        let target = if fam.starts_with("saw") {
            &mut saw_s
        } else {
            &mut bap_s
        };
        target.push(PlotSeries::measured(
            fam.replace('_', " "),
            c,
            &agg.get(key),
        ));
        if let Some(p) = paper_key.and_then(|k| ctx.paper(&k).ok()) {
            target.push(PlotSeries::paper(
                format!("thesis {}", fam.replace('_', " ")),
                c,
                &p.points(),
            ));
        }
    }
    out.push(Plot {
        id: "segovia-errors-msaw".into(),
        title: "Tables 4.6–4.7: MSAW mean message latency under failures".into(),
        caption: "Mean message latency against the per-interface failure rate (transmit and \
                  receive), timeout increment 2,250·r bit times; diamonds: the thesis."
            .into(),
        x: Axis::new("failure rate", "%"),
        y: Axis::new("mean message latency", "bit times"),
        series: saw_s,
    });
    out.push(Plot {
        id: "segovia-errors-mbap".into(),
        title: "Tables 4.8–4.13: MBAP mean block latency under failures".into(),
        caption: "Mean block latency against the per-interface failure rate, ACK-delay timeout \
                  95,000 bit times, retransmission limit 20; diamonds: the thesis."
            .into(),
        x: Axis::new("failure rate", "%"),
        y: Axis::new("mean block latency", "bit times"),
        series: bap_s,
    });
    // Sensitivity.
    out.push(Plot {
        id: "segovia-sensitivity".into(),
        title: "Sensitivity to choices the thesis leaves open".into(),
        caption: "Mean RT, error-free: MSAW and MBAP (window 10) with the backoff bound \
                  inclusive (rmcast's choice, the thesis's words) or exclusive (IEEE 802.3), \
                  and MBAP with the receivers' ACK-delay timeout t = 25,000, 95,000 (chosen, \
                  the sample command file's) and 300,000 bit times. Retransmission-limit \
                  sensitivity under failures is in the measures sens.*_lim5 / _lim40."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("relative throughput", "dimensionless"),
        series: vec![
            PlotSeries::measured("MSAW inclusive (chosen)", 0, &agg.get("t4_1.rt_mean")),
            PlotSeries::measured("MSAW exclusive", 1, &agg.get("sens.saw_exclusive.rt_mean")),
            PlotSeries::measured(
                "MBAP-10 t=95k inclusive (chosen)",
                2,
                &agg.get("t4_4_w10.rt_mean"),
            ),
            PlotSeries::measured(
                "MBAP-10 exclusive",
                3,
                &agg.get("sens.bap_w10_exclusive.rt_mean"),
            ),
            PlotSeries::measured("MBAP-10 t=25k", 4, &agg.get("sens.bap_w10_t25000.rt_mean")),
            PlotSeries::measured(
                "MBAP-10 t=300k",
                5,
                &agg.get("sens.bap_w10_t300000.rt_mean"),
            ),
            PlotSeries::measured(
                "MBAP-10 t=95k, timer kept running after the block ACK",
                6,
                &agg.get("sens.bap_w10_running.rt_mean"),
            ),
        ],
    });
    let err_fam = |k: &str| agg.get(&format!("{k}.lat_mean"));
    out.push(Plot {
        id: "segovia-sensitivity-errors".into(),
        title: "Sensitivity under failures (r = 20)".into(),
        caption: "Mean latency (block latency for MBAP) against the failure rate at r = 20 for \
                  the choices the thesis leaves open: retransmission limit (chosen SAW 10 / \
                  BAP 20; also 5 and 40), MBAP ACK-delay timeout t (chosen 95,000; also 25,000 \
                  and 300,000, which also enter the sender's formula timeout) and whether the \
                  MBAP receiver's ACK-delay timer stops with its block ACK (chosen) or keeps \
                  running."
            .into(),
        x: Axis::new("failure rate", "%"),
        y: Axis::new("mean latency", "bit times"),
        series: vec![
            PlotSeries::measured("MSAW limit 10 (chosen)", 0, &err_fam("err.saw_r20_rand0")),
            PlotSeries::measured("MSAW limit 5", 1, &err_fam("sens.saw_r20_lim5")),
            PlotSeries::measured("MSAW limit 40", 2, &err_fam("sens.saw_r20_lim40")),
            PlotSeries::measured(
                "MBAP-10 limit 20, t=95k (chosen)",
                3,
                &err_fam("err.bap_w10_r20_rand0"),
            ),
            PlotSeries::measured("MBAP-10 limit 5", 4, &err_fam("sens.bap_w10_r20_lim5")),
            PlotSeries::measured("MBAP-10 limit 40", 5, &err_fam("sens.bap_w10_r20_lim40")),
            PlotSeries::measured("MBAP-10 t=25k", 6, &err_fam("sens.bap_w10_r20_t25000")),
            PlotSeries::measured("MBAP-10 t=300k", 7, &err_fam("sens.bap_w10_r20_t300000")),
            PlotSeries::measured(
                "MBAP-10 timer kept running",
                1,
                &err_fam("sens.bap_w10_r20_running"),
            ),
        ],
    });
    Ok(out)
}

/// The claims file's paper table for an error family such as `bap_w10_r20_rand0`.
fn paper_err_key(fam: &str) -> Option<String> {
    let r = if fam.contains("_r20_") {
        20
    } else if fam.contains("_r40_") {
        40
    } else if fam.contains("_r60_") {
        60
    } else {
        return None;
    };
    let rand = fam.ends_with("rand22000");
    let table = if fam.starts_with("saw") {
        if rand {
            "4_7"
        } else {
            "4_6"
        }
    } else {
        match (r, rand) {
            (20, false) => "4_8",
            (40, false) => "4_9",
            (60, false) => "4_10",
            (20, true) => "4_11",
            (40, true) => "4_12",
            _ => "4_13",
        }
    };
    Some(format!("t{table}_{fam}_mean_lat"))
}

fn setup(plan: &Plan, runs: usize) -> Setup {
    let join = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Setup {
        summary: "Seed 000's simulation study re-run on rmcast's simulator: multicast \
                  stop-and-wait (saw, multicast retransmission) and multicast block \
                  acknowledgment (bap) between one saturated sender and r receivers on one \
                  10 Mb/s Ethernet segment, with the thesis's timeouts and metrics; plus \
                  round-robin acknowledgment (rra), which the thesis proposed and never built."
            .into(),
        topology: "rmcast_sim: 1 sender + r receivers on one shared bus with seed 000 §3's \
                   rules: a frame of S bytes takes 8·S bit times (100 ns each), no interframe \
                   gap, no propagation delay, 1-persistent deferral (requests during a busy \
                   period all start at its end), a collision costs 32 bit times, binary \
                   exponential backoff of k slots of 512 bit times after the i-th collision, \
                   counted from the end of the collision, frame discarded after 16 attempts; \
                   no host processing delay; receive events only at addressed nodes."
            .into(),
        parameters: vec![
            ("receivers r".into(), join(&plan.rs)),
            ("runs (seeds) per point".into(), plan.seeds.to_string()),
            (
                "messages per run".into(),
                format!(
                    "{} (MSAW, RRA and every error run), {} (MBAP error-free)",
                    plan.messages,
                    plan.messages * 9 / 10
                ),
            ),
            ("runs in total".into(), runs.to_string()),
            (
                "data frame".into(),
                "1518 bytes (Table 4.2: 64, 848, 1436): the message size is the frame minus \
                 the protocol's DATA header (read off its encoder) minus the bus overhead (0), \
                 so the frame is exactly the thesis's size; checked per protocol (measures \
                 frames.*)"
                    .into(),
            ),
            (
                "ACK frame".into(),
                "64 bytes: every protocol's ACK datagram is shorter and the bus pads it to the \
                 64-byte minimum frame"
                    .into(),
            ),
            (
                "timeouts".into(),
                "the thesis's formula: MSAW d + a·r + i + increment, MBAP n·d + a·r + i + t + \
                 increment; increment 600,000 bit times error-free, 45,000/90,000/135,000 for \
                 20/40/60 receivers in the error runs (Tables 4.6–4.13)"
                    .into(),
            ),
            (
                "failure rates".into(),
                format!(
                    "{} % per interface, Bernoulli on transmit and on receive at every node, \
                     all packets (a frame dropped on transmit never reaches the medium)",
                    join(&plan.err_fails)
                ),
            ),
            (
                "error runs".into(),
                format!(
                    "r = {:?}, MBAP windows {:?}, SAWrand/BAPrand 0 and 22,000",
                    plan.err_rs, plan.err_windows
                ),
            ),
        ],
        choices: vec![
            (
                "BAP ACK-delay timer after a block ACK".into(),
                "stopped when the receiver's counter reaches the window and it sends the block \
                 ACK, armed again by the next DATA (bap's `disarm_on_window_ack`). The thesis \
                 says in-sequence DATA \"resets\" the timer and that, error-free, it fires only \
                 when the sender cannot fill its window; with a timer that keeps running, t = \
                 95,000 fires during the block ACKs' collision resolution from r ≈ 30 on \
                 (the thesis's own r = 60 block latencies leave > 95,000 bit times after the \
                 last DATA), doubling the ACKs. Sensitivity: both readings are plotted."
                    .into(),
            ),
            (
                "BAP ACK-delay timeout t".into(),
                "95,000 bit times (the thesis's sample command file); sensitivity: 25,000 and \
                 300,000. The receiver re-arms it after firing at most 3 times with no DATA \
                 in between (rmcast's bap default)."
                    .into(),
            ),
            (
                "retransmission limits".into(),
                "SAW 10, BAP 20 (the sample command file), compared as count ≤ max (so up to \
                 11 / 21 retransmissions; Table 4.6's Max Retr of 11 fits); a message over the \
                 limit is recorded failed and the run continues; sensitivity: 5 and 40."
                    .into(),
            ),
            (
                "random ACK delay distribution".into(),
                "uniform on [0, SAWrand] / [0, BAPrand] (the protocols implement only this; \
                 other distributions were not tried)"
                    .into(),
            ),
            (
                "backoff bound".into(),
                "inclusive, k uniform in [0, 2^min(i,10)] (the thesis's words); sensitivity: \
                 exclusive [0, 2^min(i,10) − 1] as IEEE 802.3."
                    .into(),
            ),
            (
                "packets in the error runs".into(),
                "500 for both protocols (all Mean Retr values are multiples of 1/500)".into(),
            ),
            (
                "RRA".into(),
                "window 2r messages, per-request timeout d + r·a + increment, unanswered \
                 request limit 20; throughput compared as a ratio of totals (aggregate RT), \
                 since its per-message latency includes waiting for r turns"
                    .into(),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_delivery(proto: Proto, fail: f64, r: usize, messages: u64, seed: u64) -> RunOut {
        let mut s = RunSpec::thesis(proto, r, seed);
        s.messages = messages;
        s.fail = fail;
        if fail > 0.0 {
            s.increment_bits = error_increment(r);
        }
        let o = run_one(&s, true).unwrap();
        assert_eq!(o.delivered.len(), r);
        for got in &o.delivered {
            // Exactly once, in order.
            assert!(
                got.windows(2).all(|w| w[0] < w[1]),
                "{proto:?}: out of order or twice"
            );
            // Everything the sender did not give up on arrived.
            for k in 0..messages {
                if o.failed_seqs.binary_search(&k).is_err() {
                    assert!(
                        got.binary_search(&k).is_ok(),
                        "{proto:?}: message {k} missing"
                    );
                }
            }
        }
        assert!(o.delivery_ok);
        o
    }

    #[test]
    fn frames_are_the_thesis_sizes() {
        let bus = BusConfig::default();
        for proto in [
            Proto::Saw,
            Proto::Bap { window: 10 },
            Proto::Rra { window: 120 },
        ] {
            for frame in [64u64, 848, 1436, 1518] {
                let pl = payload_for_frame(proto, frame, &bus).unwrap();
                let len = data_datagram_len(proto, pl).unwrap();
                assert_eq!(bus.frame_bytes(len) as u64, frame, "{proto:?}");
            }
        }
        // Table 4.1 bounds with these frames.
        let p = RunSpec::thesis(Proto::Saw, 5, 0).params();
        assert!((p.ubrt() - 4.304).abs() < 5e-4);
        assert_eq!(p.lbl(), 14704.0);
        let p = RunSpec::thesis(Proto::Bap { window: 10 }, 60, 0).params();
        assert!((p.ubrt() - 48.088).abs() < 5e-4);
    }

    #[test]
    fn error_increments_match_the_thesis() {
        assert_eq!(
            [
                error_increment(20),
                error_increment(40),
                error_increment(60)
            ],
            [45_000, 90_000, 135_000]
        );
    }

    #[test]
    fn saw_on_the_bus_exactly_once_in_order_0_and_5_percent() {
        let o = check_delivery(Proto::Saw, 0.0, 5, 60, 1);
        assert!(o.failed_seqs.is_empty());
        assert_eq!(o.summary.retransmissions.max, 0.0);
        let o = check_delivery(Proto::Saw, 0.05, 5, 60, 2);
        assert!(
            o.summary.retransmissions.mean > 0.0,
            "5 % failures but no retransmission"
        );
    }

    #[test]
    fn bap_on_the_bus_exactly_once_in_order_0_and_5_percent() {
        let o = check_delivery(Proto::Bap { window: 5 }, 0.0, 5, 60, 3);
        assert!(o.failed_seqs.is_empty());
        let o = check_delivery(Proto::Bap { window: 5 }, 0.05, 5, 60, 4);
        assert!(o.summary.retransmissions.mean > 0.0);
    }

    #[test]
    fn rra_on_the_bus_exactly_once_in_order_0_and_5_percent() {
        let o = check_delivery(Proto::Rra { window: 10 }, 0.0, 5, 60, 5);
        assert!(o.failed_seqs.is_empty());
        check_delivery(Proto::Rra { window: 10 }, 0.05, 5, 60, 6);
    }

    #[test]
    fn a_tight_limit_under_heavy_loss_is_recorded_as_failures() {
        let mut s = RunSpec::thesis(Proto::Saw, 5, 9);
        s.messages = 40;
        s.fail = 0.3;
        s.max_retx = Some(0);
        s.increment_bits = error_increment(5);
        let o = run_one(&s, true).unwrap();
        assert!(
            !o.failed_seqs.is_empty(),
            "30 % loss with no retransmissions allowed"
        );
    }

    #[test]
    fn one_receiver_msaw_takes_d_plus_a() {
        let mut s = RunSpec::thesis(Proto::Saw, 1, 1);
        s.messages = 20;
        let o = run_one(&s, false).unwrap();
        assert_eq!(o.summary.latency.min, 12656.0);
        assert_eq!(o.summary.latency.max, 12656.0);
    }
}

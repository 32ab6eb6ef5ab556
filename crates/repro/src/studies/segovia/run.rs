//! One run of the study: a sender and r receivers on seed 000's bus, and what it measured.

use super::metrics::{self as met, Params, Record};
use core::time::Duration;
use rmcast_proto::saw::{RetransmitMode, TimeoutMethod, TimeoutRule, BIT_TIME_10MBPS};
use rmcast_proto::{bap, rra, saw, Agent, Bytes, Event, GroupId, NodeId, Time};
use rmcast_sim::{Backoff, BusConfig, LossModel, LossRule, LossSite, Sim, Stop, Traffic};

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
/// BAP's retransmission limit.
pub const BAP_LIMIT: u32 = 20;
/// RRA: unanswered requests allowed per receiver (rmcast's choice, = BAP's limit).
pub const RRA_LIMIT: u32 = 20;

/// Which protocol a run uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Proto {
    /// Multicast stop-and-wait (MSAW).
    Saw,
    /// Multicast block acknowledgment (MBAP).
    Bap {
        /// Messages per block.
        window: u16,
    },
    /// Round-robin acknowledgment with a window of `window` messages.
    Rra {
        /// Messages that may be outstanding.
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
    /// The protocol.
    pub proto: Proto,
    /// Receivers r.
    pub receivers: usize,
    /// Data frame size on the bus, bytes (the datagram is sized to fill it exactly).
    pub data_frame: u64,
    /// SAWrand / BAPrand, bit times.
    pub rand_bits: u64,
    /// Failure probability per interface, on transmit and on receive.
    pub fail: f64,
    /// How many independent failure draws each interface makes on a frame it transmits and
    /// on one it receives: 1 is the thesis's text (§3.4, "on receipt or transmittal of a
    /// packet"); 2 is a sensitivity reading, a MAC that draws once when it takes a frame in
    /// and once when it passes it on, in each direction.
    pub drop_checks: u32,
    /// Timeout increment of the thesis's formula, bit times.
    pub increment_bits: u64,
    /// Messages the sender sends.
    pub messages: u64,
    /// BAP receivers' ACK-delay timeout, bit times.
    pub ack_timeout_bits: u64,
    /// Retransmission limit (SAW, BAP) or unanswered-request limit (RRA).
    pub max_retx: Option<u32>,
    /// Backoff bound inclusive (thesis wording) or exclusive (IEEE 802.3).
    pub inclusive_backoff: bool,
    /// Frames sent at the same instant collide (the thesis's CSMA/CD bus); false only under
    /// the `no_collisions` mutant (ideal arbitration, `BusConfig::collisions`).
    pub collisions: bool,
    /// BAP receivers stop their ACK-delay timer when they send a full window's ACK
    /// (`bap::ReceiverConfig::disarm_on_window_ack`; rmcast's reading of the thesis).
    pub bap_disarm: bool,
    /// BAP receivers follow the thesis's text to the letter where rmcast reads or adds
    /// (timer reset only by in-sequence DATA and re-armed forever, the message counter reset
    /// only by the window's ACK, no skip past messages the sender gave up on; the timer
    /// keeps running after a block ACK).
    pub bap_literal: bool,
    /// Seed of the run's random choices.
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
            drop_checks: 1,
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
            collisions: true,
            bap_disarm: true,
            bap_literal: false,
            seed,
        }
    }

    pub(super) fn params(&self) -> Params {
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
            collisions: self.collisions,
            ..BusConfig::default()
        }
    }
}

/// The run's thesis timing: its frame sizes and random interval, formula timeouts, 10 Mb/s.
fn timing(s: &RunSpec) -> TimeoutRule {
    TimeoutRule {
        method: TimeoutMethod::Formula {
            increment_bits: s.increment_bits,
        },
        data_bytes: s.data_frame,
        ack_bytes: ACK_FRAME,
        rand_bits: s.rand_bits,
        bit_time: BIT_TIME_10MBPS,
    }
}

fn saw_params(s: &RunSpec) -> saw::ThesisParams {
    saw::ThesisParams {
        timing: timing(s),
        mode: RetransmitMode::Multicast,
        max_retransmissions: s.max_retx,
    }
}

fn bap_params(s: &RunSpec, window: u16) -> bap::ThesisParams {
    bap::ThesisParams {
        window,
        timing: timing(s),
        ack_timeout_bits: s.ack_timeout_bits,
        max_retransmissions: s.max_retx,
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
            if s.bap_literal {
                rc.disarm_on_window_ack = false;
                rc.idle_ack_limit = None;
                rc.arm_on_any_data = false;
                rc.skip_to_first = false;
                rc.timer_ack_resets_counter = false;
            }
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
    s.as_sender()
        .ok_or_else(|| format!("{proto:?}'s sender has no sender side"))?
        .send(Time::ZERO, Bytes::from(vec![0u8; payload]))
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
    /// The thesis's columns.
    pub summary: met::Summary,
    /// Ratio of totals: messages·r·(d + a) / (last finish − first send), bit times.
    pub rt_aggregate: f64,
    /// Bus collisions per message.
    pub collisions_per_msg: f64,
    /// ACK frames per message.
    pub acks_per_msg: f64,
    /// Fraction of messages given up on (retransmission limit).
    pub failed_frac: f64,
    /// Fraction of messages transmitted more than once (the thesis's criterion for its
    /// timeout increments: under 2 % error-free).
    pub retransmitted_frac: f64,
    /// Every receiver got every message the sender did not give up on, exactly once and in
    /// order, and nothing else twice.
    pub delivery_ok: bool,
    /// Per-receiver delivered message numbers (only kept when asked for).
    pub delivered: Vec<Vec<u64>>,
    /// The messages given up on.
    pub failed_seqs: Vec<u64>,
}

/// Run one scenario to completion.
pub fn run_one(s: &RunSpec, keep_deliveries: bool) -> Result<RunOut, String> {
    let bus = s.bus();
    let payload = payload_for_frame(s.proto, s.data_frame, &bus)?;
    let (mut sim, sender, receivers) =
        crate::studies::bus_sim(s.receivers, bus.clone(), GROUP, s.seed)?;
    sim.add_agent(sender, sender_for(s, sender, receivers.clone()))
        .map_err(|e| e.to_string())?;
    for &r in &receivers {
        let a = receiver_for(s, r, &sim);
        sim.add_agent(r, a).map_err(|e| e.to_string())?;
    }
    if s.fail > 0.0 {
        // every node: the sender, then the receivers
        for &n in std::iter::once(&sender).chain(&receivers) {
            let sites = [
                LossSite::Tx {
                    node: n,
                    iface: None,
                },
                LossSite::Rx {
                    node: n,
                    iface: None,
                },
            ];
            for site in sites
                .into_iter()
                .flat_map(|x| std::iter::repeat_n(x, s.drop_checks.max(1) as usize))
            {
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
        .filter_map(|(_, e)| e.message_done())
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
        retransmitted_frac: records.iter().filter(|r| r.retransmissions() > 0).count() as f64
            / records.len().max(1) as f64,
        delivery_ok,
        delivered,
        failed_seqs,
        summary,
    })
}

//! Seed 000's metrics, exactly as the thesis computes them (Segovia 1996, §4.1 and the SAS
//! program of Appendix A; digest §1.9 and §3).
//!
//! Units are the thesis's: times in *bit times* (`d = 8 × data bytes`, `a = 8 × ACK bytes`),
//! absolute throughput (AT) in Mb/s of "effective" data (`r` receivers each get `d`), relative
//! throughput (RT) against the ideal collision-free unicast equivalent, without unit.
//!
//! For one record (a SAW message, or a BAP block of `n` messages) with latency `L` bit times:
//!
//! * `AT = rate · r·n·d / L`, `RT = r·(n·d + a) / L` (the SAS `s_athru`, `s_rthru`, with
//!   `n = 1` for SAW — for BAP "d is replaced by n·d", verified against Tables 4.4–4.5);
//! * the bounds: `LBL = n·d + r·a` (eq. 4.18/4.19), `UBAT = rate · r·n·d / LBL`,
//!   `UBRT = r·(n·d + a) / LBL` (eq. 4.5/4.13), and the limit of UBRT as `r → ∞`,
//!   `(n·d + a)/a` (eq. 4.6/4.14);
//! * the summary is the **mean, minimum and maximum over records of the per-record values**,
//!   not a ratio of totals (the thesis's Mean RT 3.504 at r = 5 against the 3.424 a ratio of
//!   totals gives); [`Summary::aggregate_rt`] is the ratio of totals for comparison.
//!
//! Records come from [`Event::MessageDone`](rmcast_proto::Event::MessageDone). For BAP the thesis
//! measures whole blocks — a window of messages handed over together and acknowledged
//! together; [`blocks`] groups consecutive messages that finished at the same instant into one
//! record (first send to the common finish), which for SAW leaves every message on its own.
//! Retransmissions and failures are counted per *message* (the thesis's `retrans`/`fail`
//! fields are per record of `winStats`, one per message).

use core::time::Duration;
use rmcast_proto::Time;

/// The run's parameters the formulas need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Receivers `r`.
    pub receivers: u64,
    /// Data frame bytes.
    pub data_bytes: u64,
    /// ACK frame bytes.
    pub ack_bytes: u64,
    /// Messages per block `n` (1 for SAW, the window for BAP).
    pub window: u64,
    /// One bit time (100 ns at 10 Mb/s).
    pub bit_time: Duration,
}

impl Params {
    /// The thesis's defaults: 1518-byte data, 64-byte ACKs, window 1, 10 Mb/s.
    pub fn ethernet(receivers: u64) -> Self {
        Params {
            receivers,
            data_bytes: 1518,
            ack_bytes: 64,
            window: 1,
            bit_time: Duration::from_nanos(100),
        }
    }

    fn d(&self) -> f64 {
        8.0 * self.data_bytes as f64
    }
    fn a(&self) -> f64 {
        8.0 * self.ack_bytes as f64
    }
    fn n(&self) -> f64 {
        self.window.max(1) as f64
    }
    fn r(&self) -> f64 {
        self.receivers as f64
    }
    /// Medium rate in Mb/s (10 for a 100 ns bit time).
    pub fn rate_mbps(&self) -> f64 {
        1e3 / self.bit_time.as_nanos().max(1) as f64
    }

    /// Lower-bound latency `n·d + r·a`, bit times.
    pub fn lbl(&self) -> f64 {
        self.n() * self.d() + self.r() * self.a()
    }
    /// Upper-bound absolute throughput, Mb/s.
    pub fn ubat(&self) -> f64 {
        self.rate_mbps() * self.r() * self.n() * self.d() / self.lbl()
    }
    /// Upper-bound relative throughput.
    pub fn ubrt(&self) -> f64 {
        self.r() * (self.n() * self.d() + self.a()) / self.lbl()
    }
    /// The limit of UBRT as the number of receivers grows, `(n·d + a)/a`.
    pub fn ubrt_limit(&self) -> f64 {
        (self.n() * self.d() + self.a()) / self.a()
    }
    /// The ideal unicast throughput in Mb/s that RT divides by, `rate·n·d/(n·d + a)`.
    pub fn unicast_mbps(&self) -> f64 {
        self.rate_mbps() * self.n() * self.d() / (self.n() * self.d() + self.a())
    }

    /// A duration in bit times.
    pub fn bits(&self, d: Duration) -> f64 {
        d.as_nanos() as f64 / self.bit_time.as_nanos().max(1) as f64
    }
    /// Absolute throughput of one record of latency `bits`, Mb/s.
    pub fn at(&self, bits: f64) -> f64 {
        self.rate_mbps() * self.r() * self.n() * self.d() / bits
    }
    /// Relative throughput of one record of latency `bits`.
    pub fn rt(&self, bits: f64) -> f64 {
        self.r() * (self.n() * self.d() + self.a()) / bits
    }
}

/// One finished message, as `Event::MessageDone` reports it (`Event::message_done`).
pub use rmcast_proto::MessageDone as Record;

/// A group of messages acknowledged together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// The first message's number.
    pub first_seq: u64,
    /// How many messages.
    pub messages: u64,
    /// The earliest send.
    pub sent_at: Time,
    /// When they were acknowledged.
    pub done_at: Time,
}

impl Block {
    /// From the earliest send to the acknowledgment.
    pub fn latency(&self) -> Duration {
        self.done_at - self.sent_at
    }
}

/// Group records (in sequence order) into blocks: consecutive messages with the same
/// `done_at`. Each block runs from its earliest `sent_at` to the common `done_at`.
pub fn blocks(records: &[Record]) -> Vec<Block> {
    let mut sorted: Vec<&Record> = records.iter().collect();
    sorted.sort_by_key(|r| r.seq);
    let mut out: Vec<Block> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(b) if b.done_at == r.done_at => {
                b.messages += 1;
                b.sent_at = b.sent_at.min(r.sent_at);
            }
            _ => out.push(Block {
                first_seq: r.seq,
                messages: 1,
                sent_at: r.sent_at,
                done_at: r.done_at,
            }),
        }
    }
    out
}

/// Mean, minimum and maximum of a set of values.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
}

impl Spread {
    /// `None` for an empty set.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let sum: f64 = values.iter().sum();
        Some(Spread {
            mean: sum / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// Nearest-rank percentile `p` (0–100) of `values`; `None` for an empty set.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let p = p.clamp(0.0, 100.0);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v.get(rank.saturating_sub(1).min(v.len() - 1)).copied()
}

/// One run's metrics, in the thesis's columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Records the throughput and latency columns are over (blocks for BAP).
    pub records: usize,
    /// Messages behind them.
    pub messages: usize,
    /// Absolute throughput per record, Mb/s.
    pub at: Spread,
    /// Relative throughput per record.
    pub rt: Spread,
    /// Latency per record, bit times.
    pub latency: Spread,
    /// Latency percentiles 0, 25, 50, 75, 100 (the thesis's box plots), bit times.
    pub latency_percentiles: [f64; 5],
    /// Retransmissions per message.
    pub retransmissions: Spread,
    /// Messages given up on.
    pub failures: usize,
    /// Ratio of totals, `records · r·(n·d + a) / Σ latency`, for comparison with the mean.
    pub aggregate_rt: f64,
    /// LBL, §4.1's lower bound on latency, bit times.
    pub lbl: f64,
    /// UBAT, §4.1's upper bound on absolute throughput.
    pub ubat: f64,
    /// UBRT, §4.1's upper bound on relative throughput.
    pub ubrt: f64,
}

/// Compute the thesis's metrics for one run. `per_block` groups messages into [`blocks`]
/// (BAP); otherwise each message is a record (SAW, RRA). Returns `None` without records or
/// when a record has zero latency (throughput undefined).
pub fn summarize(params: &Params, records: &[Record], per_block: bool) -> Option<Summary> {
    let lat: Vec<f64> = if per_block {
        blocks(records)
            .iter()
            .map(|b| params.bits(b.latency()))
            .collect()
    } else {
        records
            .iter()
            .map(|r| params.bits(r.done_at - r.sent_at))
            .collect()
    };
    if lat.iter().any(|&l| l <= 0.0) {
        return None;
    }
    let at: Vec<f64> = lat.iter().map(|&l| params.at(l)).collect();
    let rt: Vec<f64> = lat.iter().map(|&l| params.rt(l)).collect();
    let retx: Vec<f64> = records
        .iter()
        .map(|r| f64::from(r.retransmissions()))
        .collect();
    let total: f64 = lat.iter().sum();
    let pct = |p| percentile(&lat, p).unwrap_or(0.0);
    Some(Summary {
        records: lat.len(),
        messages: records.len(),
        at: Spread::of(&at)?,
        rt: Spread::of(&rt)?,
        latency: Spread::of(&lat)?,
        latency_percentiles: [pct(0.0), pct(25.0), pct(50.0), pct(75.0), pct(100.0)],
        retransmissions: Spread::of(&retx)?,
        failures: records.iter().filter(|r| r.failed).count(),
        aggregate_rt: lat.len() as f64 * params.rt(1.0) / total,
        lbl: params.lbl(),
        ubat: params.ubat(),
        ubrt: params.ubrt(),
    })
}

/// Feedback the thesis explains its results with but never reported (digest §5.4): ACKs per
/// message and receive events per node (frames a node's adapter had to take in — drivers
/// hand an agent only what is addressed to it, as the thesis's physical layer does).
/// Collisions are the medium's business and come from the simulator, not from agents.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    /// Control packets (ACKs, status reports) the receivers sent, per finished message.
    pub acks_per_message: f64,
    /// Receive events at the sender.
    pub sender_receive_events: u64,
    /// Receive events per receiver: mean, min, max.
    pub receiver_receive_events: Spread,
}

/// [`Feedback`] from the sender's and the receivers' [`Stats`](rmcast_proto::Stats) after a run
/// that finished `messages` messages. `None` without receivers or messages.
pub fn feedback(
    sender: &rmcast_proto::Stats,
    receivers: &[&rmcast_proto::Stats],
    messages: u64,
) -> Option<Feedback> {
    if receivers.is_empty() || messages == 0 {
        return None;
    }
    let acks: u64 = receivers.iter().map(|s| s.control_sent).sum();
    let rx: Vec<f64> = receivers
        .iter()
        .map(|s| s.packets_received as f64)
        .collect();
    Some(Feedback {
        acks_per_message: acks as f64 / messages as f64,
        sender_receive_events: sender.packets_received,
        receiver_receive_events: Spread::of(&rx)?,
    })
}

#[cfg(test)]
mod tests;

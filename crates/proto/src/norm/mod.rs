//! `norm` — NACK-Oriented Reliable Multicast (RFC 5740, with the RFC 5401 building blocks),
//! as NRL's libnorm runs it with the settings of `bench/norm/normfile.cc`: one object (the
//! transfer, object 0) cut in segments (one application message each), blocks of `k` = 64
//! source segments, Reed–Solomon parity (RFC 5510, [`crate::fec`]) sent only on demand, up to
//! 16 per block, receivers multicasting their NACKs so that others suppress theirs.
//!
//! * [`Sender`] multicasts each segment at once as DATA (the driver paces the rate), block =
//!   seq / k, symbol = seq mod k. Its CMD(CC) probes, every `probe`, carry its clock; NACKs and
//!   ACKs echo it, and the GRTT (RFC 5740 §5.5.2) is the largest round trip of a probe
//!   interval: a larger one at once, a smaller one halving the distance (our smoothing; the RFC
//!   leaves it open), never below `grtt_min`. A NACK starts the repair aggregation ((K + 1)·GRTT,
//!   §5.3); then each block is repaired with parity no receiver has seen, as many as the
//!   largest request (beyond `parity_max`, asked parity again; explicit segments as asked).
//!   Closed, it multicasts FLUSH and the watermark request ACK REQ to the acking nodes not yet
//!   acknowledged every 2·GRTT, `flush_count` rounds (a repair restarts them); all acked, every
//!   message is done and it reports [`Event::Completed`] (else they are done as failed).
//! * [`Receiver`] decodes a block from any `k` symbols ([`BlockDecoder`]) and delivers in
//!   order. A block is ready for repair once a later block, FLUSH or ACK REQ passed its end or
//!   its parity came; missing symbols start RFC 5401's random back-off (exponential over
//!   `[0, K·GRTT)` for the group size estimate, as libnorm draws it), during which another's
//!   NACK asking as many symbols of a block suppresses it. Then it multicasts a NACK (per block
//!   the parity ids after those it saw, or its missing segments once `parity_max` is spent)
//!   and holds off (K + 2)·GRTT. A probe is answered by ACK(CC) after the same back-off,
//!   suppressed by another's answer; ACK REQ naming it by ACK(FLUSH) once it holds the mark.
//!
//! NORM-CC (RFC 5740 §5.5.2, parameter `cc`): [`cc`] (the state), [`cc_agent`] (the roles).

pub mod cc;
pub mod cc_agent;
mod deploy;
pub mod rfc5740;
pub mod spec;
#[cfg(test)]
mod tests;

use crate::fec::{self, BlockDecoder};
use crate::outbox::envelope;
use crate::retx::RetransmitBuffer;
use crate::rng::AgentRng;
use crate::spec::{ms, typed_params};
use crate::timer::TimerSet;
use crate::{hold, Agent, Dest, Event, NodeId, Outbox, SendError, SenderAgent, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::norm::{self as wire, AckType, Nodes, Request, Requests};
use rmcast_wire::rfc5740::quant;
use rmcast_wire::{Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::{BTreeMap, BTreeSet};

pub use cc_agent::{CcReceiver, CcSender};
pub use deploy::{deploy, Deployment, Norm};

/// Largest segment one DATA carries: its parity symbol (the segment and a two-byte length
/// prefix) fits a datagram beside DATA's 10 bytes of fields.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 10 - fec::LEN_PREFIX;

/// Parity indices a block can have.
const MAX_PARITY: u16 = fec::MAX_SYMBOLS as u16;
/// `rtt` as a sender message's quantized `grtt` byte (RFC 5740 §4.1, rounded up).
pub fn quantize_rtt(rtt: Duration) -> u8 {
    quant::quantize_rtt(rtt.as_secs_f64())
}
/// The round trip a quantized `grtt` byte stands for (RFC 5740 §4.1).
pub fn unquantize_rtt(q: u8) -> Duration {
    Duration::from_secs_f64(quant::unquantize_rtt(q))
}

/// RFC 5401's random back-off (RFC 5740 §5.3), as libnorm draws it: a truncated exponential
/// over `[0, max)` whose weight moves toward `max` as the group grows, so that among
/// `gsize` receivers few draw early.
pub fn random_backoff(rng: &mut AgentRng, max: Duration, gsize: f64) -> Duration {
    let max_s = max.as_secs_f64();
    if max_s <= 0.0 {
        return Duration::ZERO;
    }
    let lambda = gsize.max(1.0).ln() + 1.0;
    let e = lambda.exp() - 1.0;
    let x = rng.unit() * lambda / max_s + lambda / (max_s * e);
    let t = (max_s / lambda) * (x * e * (max_s / lambda)).ln();
    Duration::from_secs_f64(t.clamp(0.0, max_s))
}

/// DATA of object 0.
fn data(block: u32, symbol: u16, block_len: u16, payload: &[u8]) -> wire::Message<'_> {
    let object = 0;
    wire::Message::Data {
        object,
        block,
        symbol,
        block_len,
        payload,
    }
}

/// A duration as whole microseconds (saturating).
fn micros(t: Time) -> u64 {
    t.as_nanos() / 1_000
}

typed_params! {
    /// `norm`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Source segments per block.
        block_len: u64 = int("block_len") or spec::BLOCK_LEN,
        /// Most parity symbols per block.
        parity_max: u64 = int("parity_max") or spec::PARITY_MAX,
        /// The GRTT before one is measured.
        grtt_initial: Duration = ms("grtt_initial_ms") or ms(spec::GRTT_INITIAL_MS),
        /// The smallest GRTT advertised.
        grtt_min: Duration = ms("grtt_min_ms") or ms(spec::GRTT_MIN_MS),
        /// The back-off factor K.
        backoff_k: f64 = real("backoff_k") or spec::BACKOFF_K,
        /// The group size estimate.
        gsize: u64 = int("gsize") or spec::GSIZE,
        /// Interval of the GRTT probes.
        probe: Duration = ms("probe_ms") or ms(spec::PROBE_MS),
        /// Rounds of FLUSH and watermark request.
        flush_count: u64 = int("flush_count") or spec::FLUSH_COUNT,
        /// NORM-CC (RFC 5740 §5.5.2).
        cc: bool = switch("cc") or spec::CC,
    }
}

/// The FEC settings both sides share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fec {
    /// Source segments per block (1 to 200).
    pub k: u16,
    /// Most parity symbols per block.
    pub parity_max: u16,
    /// The back-off factor K.
    pub backoff_k: f64,
    /// The GRTT before one is known.
    pub grtt_initial: Duration,
}

impl Fec {
    fn of(p: &Params) -> Fec {
        let k = p.block_len.clamp(1, 200) as u16;
        Fec {
            k,
            parity_max: (p.parity_max as u16).min(fec::max_parity(usize::from(k)) as u16),
            backoff_k: p.backoff_k,
            grtt_initial: p.grtt_initial,
        }
    }
}

crate::config::group_config! {
    /// Sender configuration.
    pub struct SenderConfig {
        /// The acking nodes: every receiver, whose watermark ACK completes the transfer.
        pub receivers: Vec<NodeId> = Vec::new(),
        /// FEC and back-off settings.
        pub fec: Fec = Fec::of(p),
        /// The smallest GRTT advertised.
        pub grtt_min: Duration = p.grtt_min,
        /// Interval of the GRTT probes.
        pub probe: Duration = p.probe,
        /// Rounds of FLUSH and watermark request before missing ACKs are given up.
        pub flush_count: u32 = p.flush_count.min(u64::from(u32::MAX)) as u32,
        /// NORM-CC (`None`: off): wrap the sender in a [`CcSender`].
        pub cc: Option<cc::Config> = cc_agent::config(p),
    }
    pub fn new() from p: Params;
}

crate::config::receiver_config! {
    /// Receiver configuration.
    pub struct ReceiverConfig {
        /// The sender (where ACKs go, whose NACKs count).
        pub source: NodeId = source,
        /// The data group (where NACKs and probe answers go).
        pub group: crate::GroupId = crate::GroupId(0),
        /// FEC and back-off settings.
        pub fec: Fec = Fec::of(p),
        /// The group size estimate of the back-off.
        pub gsize: f64 = p.gsize as f64,
        /// NORM-CC (`None`: off): wrap the receiver in a [`CcReceiver`].
        pub cc: Option<cc::Config> = cc_agent::config(p),
    }
    pub fn new(source: NodeId) from p: Params;
}

/// The sender's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SKey {
    Probe,
    Repair,
    Flush,
}
/// What NACKs asked of one block in the current aggregation.
#[derive(Debug, Clone, Default)]
struct Asked {
    /// The largest parity index end asked (ids `k .. k + top`).
    top: u16,
    /// The most parity symbols one NACK asked.
    count: u16,
    /// Parity indices asked (to send again those the parity cap leaves no new ones for).
    parity: BTreeSet<u16>,
    /// Source segments asked by id.
    sources: BTreeSet<u16>,
}

/// The NORM sender.
pub struct Sender {
    cfg: SenderConfig,
    out: Outbox,
    buf: RetransmitBuffer,
    next: u64,
    closed: bool,
    timers: TimerSet<SKey>,
    grtt: Duration,
    peak: Option<Duration>,
    probe_seq: u16,
    asked: BTreeMap<u32, Asked>,
    parity_sent: BTreeMap<u32, u16>,
    pending: BTreeSet<NodeId>,
    rounds: u32,
    done: bool,
    /// NACKs received.
    pub nacks_received: u64,
    /// Parity symbols sent.
    pub parity_sent_total: u64,
}

impl Sender {
    /// A sender built from `cfg`; its first probe goes out at once.
    pub fn new(cfg: SenderConfig) -> Self {
        let mut timers = TimerSet::new();
        timers.set(SKey::Probe, Time::ZERO);
        Sender {
            grtt: cfg.fec.grtt_initial,
            pending: cfg.receivers.iter().copied().collect(),
            cfg,
            out: Outbox::new(),
            buf: RetransmitBuffer::new(usize::MAX),
            next: 0,
            closed: false,
            timers,
            peak: None,
            probe_seq: 0,
            asked: BTreeMap::new(),
            parity_sent: BTreeMap::new(),
            rounds: 0,
            done: false,
            nacks_received: 0,
            parity_sent_total: 0,
        }
    }

    /// The GRTT the sender advertises.
    pub fn grtt(&self) -> Duration {
        self.grtt
    }

    fn k(&self) -> u64 {
        u64::from(self.cfg.fec.k)
    }

    fn push(&mut self, msg: wire::Message<'_>, flags: u8) {
        let env = envelope(self.cfg.session, self.cfg.node, flags);
        self.out
            .transmit(Dest::Group(self.cfg.group), env, &Message::Norm(msg));
    }

    /// A command (counted as control).
    fn command(&mut self, msg: wire::Message<'_>) {
        self.out.stats.control_sent += 1;
        self.push(msg, 0);
    }

    /// Block and symbol of segment `seq`.
    fn position(&self, seq: u64) -> (u32, u16) {
        ((seq / self.k()) as u32, (seq % self.k()) as u16)
    }

    /// Source segments of `block` as sent so far (the last block's length once closed).
    fn block_len(&self, block: u32) -> u16 {
        let first = u64::from(block) * self.k();
        self.next.saturating_sub(first).min(self.k()) as u16
    }

    /// A round-trip sample from a NACK's or ACK's echoed probe time.
    fn grtt_response(&mut self, now: Time, echoed_us: u64) {
        if echoed_us == 0 || echoed_us > micros(now) {
            return;
        }
        let rtt = Duration::from_micros(micros(now) - echoed_us);
        self.peak = Some(self.peak.map_or(rtt, |p| p.max(rtt)));
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Nack {
                server,
                grtt_response_us,
                requests,
            } if server == self.cfg.node.0 => {
                self.grtt_response(now, grtt_response_us);
                self.nack(now, requests);
            }
            wire::Message::Ack {
                server,
                grtt_response_us,
                ack_type,
                object,
                block,
                symbol,
                ..
            } if server == self.cfg.node.0 => {
                self.grtt_response(now, grtt_response_us);
                let mark = self.next.checked_sub(1).map(|s| self.position(s));
                if ack_type == AckType::Flush && object == 0 && mark == Some((block, symbol)) {
                    self.pending.remove(&from);
                    self.maybe_complete(now);
                }
            }
            _ => self.out.ignore(),
        }
    }

    /// A NACK's requests join the aggregation; the first starts it ((K + 1)·GRTT).
    fn nack(&mut self, now: Time, requests: Requests<'_>) {
        self.nacks_received += 1;
        let mut squelch = false;
        for r in requests.iter() {
            let k_b = self.block_len(r.block);
            if r.object != 0 || k_b == 0 {
                squelch = true;
                continue;
            }
            let a = self.asked.entry(r.block).or_default();
            if r.first >= k_b {
                let from = r.first - k_b;
                a.top = a.top.max(from.saturating_add(r.count));
                a.count = a.count.max(r.count);
                a.parity
                    .extend(from..from.saturating_add(r.count).min(MAX_PARITY));
            } else {
                let end = r.first.saturating_add(r.count).min(k_b);
                a.sources.extend(r.first..end);
            }
        }
        if squelch {
            let (object, block, symbol) = (0, 0, 0);
            self.command(wire::Message::Squelch {
                object,
                block,
                symbol,
            });
        }
        // Someone misses data: flush rounds restart; repair (K + 1)·GRTT-of-now on, not later.
        if !self.asked.is_empty() {
            self.rounds = 0;
            let due = now + self.grtt.mul_f64(self.cfg.fec.backoff_k + 1.0);
            if self.timers.deadline(SKey::Repair).is_none_or(|at| at > due) {
                self.timers.set(SKey::Repair, due);
            }
        }
    }

    /// The aggregation ended: repair every block asked for.
    fn repair(&mut self, now: Time) {
        // Repairs restart the flush rounds (as libnorm's flush count restarts).
        self.rounds = 0;
        for (block, a) in std::mem::take(&mut self.asked) {
            let k_b = self.block_len(block);
            let first = u64::from(block) * self.k();
            let sent = self.parity_sent.get(&block).copied().unwrap_or(0);
            let to = if a.top > sent { a.top } else { sent + a.count };
            let to = to.min(self.cfg.fec.parity_max);
            // Beyond the cap, the parity asked is sent again (its earlier copies were lost).
            let again = a.count.saturating_sub(to.saturating_sub(sent));
            let again: Vec<u16> = a
                .parity
                .range(..sent)
                .take(usize::from(again))
                .copied()
                .collect();
            if (to > sent || !again.is_empty()) && self.closed_or_whole(block) {
                let sources: Option<Vec<Bytes>> = (first..first + u64::from(k_b))
                    .map(|s| self.buf.get(s).map(|e| e.data.clone()))
                    .collect();
                if let Some(sources) = sources {
                    for j in again {
                        self.send_parity(block, k_b, &sources, j, j + 1);
                    }
                    self.send_parity(block, k_b, &sources, sent, to);
                }
            }
            for id in a.sources {
                let seq = first + u64::from(id);
                if let Some(data) = self.buf.mark_resent(seq, now) {
                    self.out.stats.repairs_sent += 1;
                    self.push(self.data(seq, k_b, &data), FLAG_RETRANSMISSION);
                }
            }
        }
    }

    /// Whether every source segment of `block` is sent (parity can be made).
    fn closed_or_whole(&self, block: u32) -> bool {
        self.closed || u64::from(self.block_len(block)) == self.k()
    }

    /// Parity `from .. to` of `block`; the next unused index becomes at least `to`.
    fn send_parity(&mut self, block: u32, k_b: u16, sources: &[Bytes], from: u16, to: u16) {
        let count = usize::from(to.saturating_sub(from));
        if count == 0 {
            return;
        }
        let Ok(parity) = fec::parity(sources, usize::from(from), count) else {
            return;
        };
        for (j, payload) in (from..to).zip(parity) {
            self.out.stats.repairs_sent += 1;
            self.parity_sent_total += 1;
            self.push(data(block, k_b + j, k_b, &payload), FLAG_RETRANSMISSION);
        }
        let sent = self.parity_sent.entry(block).or_insert(0);
        *sent = (*sent).max(to);
    }

    /// DATA of segment `seq` in a block of `block_len`.
    fn data<'a>(&self, seq: u64, block_len: u16, payload: &'a [u8]) -> wire::Message<'a> {
        let (block, symbol) = self.position(seq);
        data(block, symbol, block_len, payload)
    }

    /// A probe: the GRTT from the last interval's peak, then CMD(CC) with the clock.
    fn probe(&mut self, now: Time) {
        if let Some(peak) = self.peak.take() {
            self.grtt = if peak >= self.grtt {
                peak
            } else {
                (self.grtt + peak) / 2
            }
            .max(self.cfg.grtt_min);
        }
        self.probe_seq = self.probe_seq.wrapping_add(1);
        let (cc_sequence, grtt) = (self.probe_seq, quantize_rtt(self.grtt));
        let send_ts_us = micros(now).max(1);
        self.command(wire::Message::Cc {
            cc_sequence,
            send_ts_us,
            grtt,
        });
        if !self.done {
            self.timers.set(SKey::Probe, now + self.cfg.probe);
        }
    }

    /// A FLUSH and watermark-request round, the next 2·GRTT later.
    fn flush(&mut self, now: Time) {
        if self.maybe_complete(now) {
            return;
        }
        self.rounds += 1;
        if self.rounds > self.cfg.flush_count {
            return self.finish(now, true);
        }
        let Some(last) = self.next.checked_sub(1) else {
            return;
        };
        let (block, symbol) = self.position(last);
        let (object, grtt) = (0, quantize_rtt(self.grtt));
        self.command(wire::Message::Flush {
            object,
            block,
            symbol,
            grtt,
        });
        let pending: Vec<u32> = self.pending.iter().map(|n| n.0).collect();
        for chunk in pending.chunks(wire::MAX_ACKING) {
            let mut raw = Vec::with_capacity(4 * chunk.len());
            Nodes::encode(chunk.iter().copied(), &mut raw);
            let Some(nodes) = Nodes::from_raw(&raw) else {
                continue;
            };
            let object = 0;
            self.command(wire::Message::AckReq {
                object,
                block,
                symbol,
                nodes,
            });
        }
        self.timers.set(SKey::Flush, now + 2 * self.grtt);
    }

    /// Done once closed and every acking node acknowledged the watermark.
    fn maybe_complete(&mut self, now: Time) -> bool {
        if self.closed && !self.done && self.pending.is_empty() {
            self.finish(now, false);
        }
        self.done
    }

    /// Every message is done (`failed`: some acking node never acknowledged).
    fn finish(&mut self, now: Time, failed: bool) {
        self.done = true;
        for seq in 0..self.next {
            let (sent_at, sends) = self
                .buf
                .get(seq)
                .map_or((now, 1), |e| (e.first_sent, e.sends));
            self.out.message_done(seq, sent_at, now, sends, failed);
        }
        self.timers.clear();
        self.out.event(Event::Completed);
    }

    fn on_timer(&mut self, now: Time, key: SKey) {
        match key {
            SKey::Probe => self.probe(now),
            SKey::Repair => self.repair(now),
            SKey::Flush => self.flush(now),
        }
    }
}

impl Agent for Sender {
    crate::outbox::agent_io!(out, on_message, timers => on_timer);
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
    fn as_sender(&mut self) -> Option<&mut dyn SenderAgent> {
        Some(self)
    }
}

impl SenderAgent for Sender {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        crate::sendq::admit(self.closed, &data, MAX_MESSAGE)?;
        let seq = self.next;
        self.next += 1;
        self.out.stats.data_sent += 1;
        self.push(self.data(seq, self.cfg.fec.k, &data), 0);
        self.buf.insert(seq, data, now);
        Ok(())
    }

    fn can_send(&self) -> bool {
        !self.closed
    }

    fn close(&mut self, now: Time) {
        if !std::mem::replace(&mut self.closed, true) {
            self.timers.set(SKey::Flush, now);
        }
    }

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let removed = self.pending.remove(&node);
        self.maybe_complete(now);
        removed
    }
}

/// A receiver's block, until every segment of it is delivered.
struct RxBlock {
    dec: BlockDecoder,
    /// Parity ids (from the block's length) the receiver knows were sent: `0 .. known`.
    known: u16,
    /// The most symbols of this block another receiver's NACK asked in this cycle.
    heard: u16,
    /// Its parity came (the sender holds it whole).
    repaired: bool,
}

/// Where the receiver's NACK cycle stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cycle {
    Idle,
    BackOff,
    HoldOff,
}
/// The receiver's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RKey {
    Nack,
    ProbeAnswer,
}

/// The last probe heard: its sequence, its time (the sender's clock) and when it came.
#[derive(Debug, Clone, Copy)]
struct Probe {
    seq: u16,
    ts_us: u64,
    at: Time,
}

/// A NORM receiver.
pub struct Receiver {
    cfg: ReceiverConfig,
    rng: AgentRng,
    out: Outbox,
    timers: TimerSet<RKey>,
    blocks: BTreeMap<u32, RxBlock>,
    /// Segments delivered (the next one to deliver).
    next: u64,
    /// The furthest block seen.
    front: Option<u32>,
    /// The object's last symbol, from FLUSH or ACK REQ.
    last: Option<(u32, u16)>,
    grtt: Duration,
    probe: Option<Probe>,
    cycle: Cycle,
    /// NACKs suppressed whole by others' NACKs.
    pub suppressed: u64,
}

impl Receiver {
    /// A receiver built from `cfg`, drawing its back-offs from `rng`.
    pub fn new(cfg: ReceiverConfig, rng: AgentRng) -> Self {
        Receiver {
            grtt: cfg.fec.grtt_initial,
            cfg,
            rng,
            out: Outbox::new(),
            timers: TimerSet::new(),
            blocks: BTreeMap::new(),
            next: 0,
            front: None,
            last: None,
            probe: None,
            cycle: Cycle::Idle,
            suppressed: 0,
        }
    }

    fn k(&self) -> u64 {
        u64::from(self.cfg.fec.k)
    }

    /// Source segments of `block`: the last block's from FLUSH, else `k`.
    fn k_of(&self, block: u32) -> u16 {
        match self.last {
            Some((b, s)) if b == block => s.saturating_add(1).min(self.cfg.fec.k),
            _ => self.cfg.fec.k,
        }
    }

    /// Whether every segment is delivered.
    pub fn is_complete(&self) -> bool {
        self.last
            .is_some_and(|(b, s)| self.next > u64::from(b) * self.k() + u64::from(s))
    }

    /// The state of `block` (made, with `k_b` segments, if missing; `None` once delivered).
    fn block(&mut self, block: u32, k_b: u16) -> Option<&mut RxBlock> {
        if u64::from(block) < self.next / self.k() {
            return None;
        }
        let e = self.blocks.entry(block);
        let b = match e {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(RxBlock {
                dec: BlockDecoder::new(usize::from(k_b)).ok()?,
                known: 0,
                heard: 0,
                repaired: false,
            }),
        };
        if usize::from(k_b) < b.dec.k() {
            // The last block is shorter than the `k` it was made with: remake it.
            let mut dec = BlockDecoder::new(usize::from(k_b)).ok()?;
            for i in 0..usize::from(k_b) {
                if let Some(d) = b.dec.source(i) {
                    dec.add_source(i, d.clone());
                }
            }
            b.dec = dec;
        }
        Some(b)
    }

    fn on_message(
        &mut self,
        now: Time,
        from: NodeId,
        m: wire::Message<'_>,
        shared: Option<&Bytes>,
    ) {
        let from_source = from == self.cfg.source;
        match m {
            wire::Message::Data {
                object: 0,
                block,
                symbol,
                block_len,
                payload,
            } if from_source => self.data(now, block, symbol, block_len, hold(shared, payload)),
            wire::Message::Flush {
                object: 0,
                block,
                symbol,
                grtt,
            } if from_source => {
                self.grtt = unquantize_rtt(grtt);
                self.position(now, block, symbol);
            }
            wire::Message::AckReq {
                object: 0,
                block,
                symbol,
                nodes,
            } if from_source => {
                self.position(now, block, symbol);
                if nodes.iter().any(|n| n == self.cfg.node.0) && self.is_complete() {
                    self.ack(now, AckType::Flush, 0, (block, symbol));
                }
            }
            // A NORM-CC probe (CC RATE) is a probe to a receiver without NORM-CC.
            wire::Message::Cc {
                cc_sequence,
                send_ts_us,
                grtt,
            }
            | wire::Message::CcRate {
                cc_sequence,
                send_ts_us,
                grtt,
                ..
            } if from_source => {
                self.grtt = unquantize_rtt(grtt);
                self.probe = Some(Probe {
                    seq: cc_sequence,
                    ts_us: send_ts_us,
                    at: now,
                });
                if !self.timers.is_armed(RKey::ProbeAnswer) {
                    let wait = self.backoff();
                    self.timers.set(RKey::ProbeAnswer, now + wait);
                }
            }
            wire::Message::Nack {
                server, requests, ..
            } if server == self.cfg.source.0 => self.heard_nack(requests),
            wire::Message::Ack {
                ack_type: AckType::Cc,
                cc_sequence,
                ..
            } if self.probe.is_some_and(|p| p.seq == cc_sequence) => {
                self.timers.cancel(RKey::ProbeAnswer);
            }
            wire::Message::Squelch { .. } => {}
            _ => self.out.ignore(),
        }
    }

    /// A segment or parity symbol of `block`.
    fn data(&mut self, now: Time, block: u32, symbol: u16, block_len: u16, payload: Bytes) {
        let k_b = block_len.min(self.k_of(block)).max(1);
        if symbol >= k_b && block_len != k_b {
            // Parity carries its block's true length; a segment beyond the end is none.
            return self.out.ignore();
        }
        self.front = Some(self.front.map_or(block, |f| f.max(block)));
        if let Some(b) = self.block(block, k_b) {
            if symbol < k_b {
                b.dec.add_source(usize::from(symbol), payload);
            } else {
                let j = symbol - k_b;
                b.known = b.known.max(j + 1);
                b.repaired = true;
                let _ = b.dec.add_parity(usize::from(j), payload);
            }
            if b.dec.needed() == 0 && !b.dec.is_complete() && b.dec.decode().is_err() {
                b.dec.clear_parity();
            }
        }
        self.deliver();
        self.check(now);
    }

    /// Deliver the segments that are next in order, dropping whole blocks.
    fn deliver(&mut self) {
        loop {
            let (block, i) = (
                (self.next / self.k()) as u32,
                (self.next % self.k()) as usize,
            );
            if self.is_complete() {
                return;
            }
            let Some(b) = self.blocks.get(&block) else {
                return;
            };
            let Some(d) = b.dec.source(i).cloned() else {
                return;
            };
            self.out.deliver(self.next, d);
            self.next += 1;
            if i + 1 >= b.dec.k() {
                self.blocks.remove(&block);
                // A short block is the last: the next block number starts after it.
                self.next = (u64::from(block) + 1) * self.k();
            }
        }
    }

    /// The sender's position (FLUSH, ACK REQ): the object's last symbol.
    fn position(&mut self, now: Time, block: u32, symbol: u16) {
        self.last = Some((block, symbol));
        self.front = Some(self.front.map_or(block, |f| f.max(block)));
        let k_b = self.k_of(block);
        let _ = self.block(block, k_b);
        self.deliver();
        self.check(now);
    }

    /// Whether `block` is ready for repair: a later block was seen, the object's end is in
    /// it or beyond, or its parity came.
    fn ready(&self, block: u32, b: &RxBlock) -> bool {
        self.front.is_some_and(|f| f > block)
            || self.last.is_some_and(|(l, _)| l >= block)
            || b.repaired
    }

    /// Ready blocks with symbols missing, each with what it needs.
    fn wanting(&self) -> Vec<(u32, u16)> {
        self.blocks
            .iter()
            .filter(|(&n, b)| self.ready(n, b) && b.dec.needed() > 0)
            .map(|(&n, b)| (n, b.dec.needed() as u16))
            .collect()
    }

    /// Make sure every block up to the front exists (wholly lost ones too), and start a NACK
    /// cycle if something is wanted and none runs.
    fn check(&mut self, now: Time) {
        let first = (self.next / self.k()) as u32;
        if let Some(front) = self.front {
            for b in first..front {
                if !self.blocks.contains_key(&b) {
                    let k_b = self.k_of(b);
                    let _ = self.block(b, k_b);
                }
            }
        }
        if self.cycle == Cycle::Idle && !self.wanting().is_empty() {
            self.cycle = Cycle::BackOff;
            let wait = self.backoff();
            self.timers.set(RKey::Nack, now + wait);
        }
    }

    /// RFC 5401's random back-off over `[0, K·GRTT)`.
    fn backoff(&mut self) -> Duration {
        let max = self.grtt.mul_f64(self.cfg.fec.backoff_k);
        random_backoff(&mut self.rng, max, self.cfg.gsize)
    }

    /// Another receiver's NACK: during the back-off, it suppresses blocks it asks as much of.
    fn heard_nack(&mut self, requests: Requests<'_>) {
        if self.cycle != Cycle::BackOff {
            return;
        }
        for r in requests.iter().filter(|r| r.object == 0) {
            if let Some(b) = self.blocks.get_mut(&r.block) {
                b.heard = b.heard.max(r.count);
            }
        }
    }

    /// The last probe's time plus how long it was held (0: none).
    fn grtt_response(&self, now: Time) -> u64 {
        self.probe.map_or(0, |p| {
            let held = now.saturating_since(p.at).as_micros();
            p.ts_us
                .saturating_add(u64::try_from(held).unwrap_or(u64::MAX))
        })
    }

    /// The back-off ended: NACK what others did not ask, then hold off (K + 2)·GRTT.
    fn nack(&mut self, now: Time) {
        let mut requests = Vec::new();
        for (n, need) in self.wanting() {
            let Some(b) = self.blocks.get(&n) else {
                continue;
            };
            if b.heard >= need {
                continue;
            }
            let k_b = b.dec.k() as u16;
            if b.known.saturating_add(need) <= self.cfg.fec.parity_max {
                requests.push(Request {
                    object: 0,
                    block: n,
                    first: k_b + b.known,
                    count: need,
                });
            } else {
                missing_runs(&b.dec, n, &mut requests);
            }
        }
        requests.truncate(wire::MAX_REQUESTS);
        for b in self.blocks.values_mut() {
            b.heard = 0;
        }
        if requests.is_empty() {
            self.suppressed += 1;
        } else {
            let mut raw = Vec::with_capacity(wire::REQUEST_LEN * requests.len());
            Requests::encode(requests, &mut raw);
            if let Some(requests) = Requests::from_raw(&raw) {
                let msg = wire::Message::Nack {
                    server: self.cfg.source.0,
                    grtt_response_us: self.grtt_response(now),
                    requests,
                };
                self.out.stats.control_sent += 1;
                let env = envelope(self.cfg.session, self.cfg.node, 0);
                self.out
                    .transmit(Dest::Group(self.cfg.group), env, &Message::Norm(msg));
            }
        }
        self.cycle = Cycle::HoldOff;
        let hold = self.grtt.mul_f64(self.cfg.fec.backoff_k + 2.0);
        self.timers.set(RKey::Nack, now + hold);
    }

    /// An ACK to the sender: a probe's answer (multicast, so others suppress theirs) or the
    /// watermark held (unicast).
    fn ack(&mut self, now: Time, ack_type: AckType, cc_sequence: u16, mark: (u32, u16)) {
        let msg = wire::Message::Ack {
            server: self.cfg.source.0,
            grtt_response_us: self.grtt_response(now),
            ack_type,
            cc_sequence,
            object: 0,
            block: mark.0,
            symbol: mark.1,
        };
        let dest = match ack_type {
            AckType::Cc => Dest::Group(self.cfg.group),
            AckType::Flush => Dest::Node(self.cfg.source),
        };
        self.out.stats.control_sent += 1;
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        self.out.transmit(dest, env, &Message::Norm(msg));
    }

    fn on_timer(&mut self, now: Time, key: RKey) {
        match (key, self.cycle) {
            (RKey::Nack, Cycle::BackOff) => self.nack(now),
            (RKey::Nack, _) => {
                self.cycle = Cycle::Idle;
                self.check(now);
            }
            (RKey::ProbeAnswer, _) => {
                if let Some(p) = self.probe {
                    self.ack(now, AckType::Cc, p.seq, (0, 0));
                }
            }
        }
    }
}

/// The missing segments of `block` as requests of runs of ids.
fn missing_runs(dec: &BlockDecoder, block: u32, out: &mut Vec<Request>) {
    for i in (0..dec.k() as u16).filter(|&i| !dec.has_source(usize::from(i))) {
        match out.last_mut() {
            Some(r) if r.block == block && r.first + r.count == i => r.count += 1,
            _ => out.push(Request {
                object: 0,
                block,
                first: i,
                count: 1,
            }),
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message with from and bytes, timers => on_timer);
}

//! Seed 001 (Paul, Sabnani & Kristol): reliable multicast with tree-based ACK consolidation
//! and local re-multicast — the Designated Status Protocol (`dsp`), the Consolidated Status
//! Protocol (`csp`) and the Combined Protocol (`cp`), wire family 4 ([`rmcast_wire::tree`]).
//!
//! All three share one machinery, written once here:
//!
//! * **Block-based selective repeat.** One block is one DATA datagram (`seq` numbers blocks).
//!   The [`Source`] keeps every *outstanding* block (multicast at least once, not yet
//!   acknowledged by every reporter) and never holds more than `L` of them.
//! * **Periodic exchange of complete state.** Every reporter sends a status (`LW_r`, the LOB
//!   bitmap of `L` bits aligned at `LW_r`, `buffer_available`) at regular intervals (the paper
//!   simulates "once every 4 to 6 ms": each interval is drawn uniformly from
//!   `[status_min, status_max]`). Status packets are never acknowledged; a lost one is
//!   superseded by the next.
//! * **Loss detection at the source, on status arrival.** When a status from reporter `i`
//!   arrives and shows an outstanding block not received although it was (re)multicast at
//!   least `r_f × RTD_i` ago, the source re-multicasts it globally (seed 001 §3.1 point 2:
//!   "S globally multicasts a block again if there exists an E_i1 which has not received the
//!   block within the expected time … a multiple of the round-trip delay"). Deciding when a
//!   status arrives (rather than on a bare timer) means the status was generated after the
//!   block should have reached the reporter whenever `r_f > 1`, so stale status never causes a
//!   re-multicast.
//! * **Flow control.** A reporter's reassembly buffer holds `R` blocks (default `L`) in the
//!   sequence range `[rel, rel + R)`, where `rel` is the first block it has not released;
//!   `buffer_available = R − (LW_r − rel)`, the number of blocks from `LW_r` on it can still
//!   take. The source sends new block `s` only while `s < LW_r,i + buffer_available_i` for
//!   every reporter `i` (before the first status: `LW_r = 0`, `buffer_available = R`) and
//!   fewer than `L` blocks are outstanding. An endpoint that keeps a retransmission buffer
//!   (DSP's `E_i1`, every CP endpoint) releases an in-order block into it only when it has
//!   room (`C` blocks, default `L`); until then the block stays in the reassembly buffer and
//!   `buffer_available` shrinks (seed 001 §3.1 point 4). A block arriving beyond an endpoint's
//!   reassembly range is dropped (`Probe::overflow`) and recovered like a loss.
//! * **Pacing.** The source sends at most one block per `ipt` (its negotiated peak rate,
//!   [`crate::pacing::Pacer`]), re-multicasts before new blocks.
//!
//! The three protocols differ in who reports to the source and who repairs:
//!
//! | | reports to S | consolidation | local repair |
//! |---|---|---|---|
//! | `dsp` | each region's designated endpoint `E_i1` (its *own* status) | none | `E_i1` re-multicasts on its local group what its members' statuses (to `E_i1`) lack |
//! | `csp` | the local exchange `L_i` ([`Exchange`], a router agent) | `LW_r` = min, LOB = AND, buffer = min | none: the source repairs everything |
//! | `cp`  | the local exchange `L_i` | `LW_r` = max, LOB = OR, buffer = min | `L_i` orders an endpoint that has the block to re-multicast it locally (ASSIGN) |
//!
//! **Choices where the paper is silent** (also listed in the study's setup):
//! * DSP's `E_i1` re-multicasts block `s` locally when a member's status shows it missing and
//!   at least `r_f × local_rtd` has passed since `E_i1` received or last re-multicast it.
//! * CP's exchange sends each endpoint an ASSIGN after each consolidation when it has blocks
//!   for it: the blocks it must re-multicast now (each block to the first endpoint, in
//!   configuration order, whose status shows it). A block is not assigned again before
//!   `reassign_after` (default `status_max + r_f × local_rtd`, the time by which a status
//!   reflects the repair); "until told to stop" is thus "while the exchange keeps assigning
//!   it". ASSIGN's `base` is the region's pessimistic `LW_r` (the minimum): endpoints free
//!   retransmission-buffer blocks below it (an ASSIGN with no bits is sent when `base` moved by
//!   `L/8` blocks or more).
//! * An endpoint delivers blocks in order (one [`Event::Delivered`] per block).

use crate::pacing::Pacer;
use crate::rng::AgentRng;
use crate::sendq::SendQueue;
use crate::window::{Insert, SeqWindow};
use crate::{
    Agent, Dest, Event, GroupId, IfaceId, NodeId, Outbox, RouteDecision, RouterAgent,
    RouterTransmit, SendError, Time,
};
use bytes::Bytes;
use core::cell::Cell;
use core::time::Duration;
use rmcast_wire::{
    tree as wire, Envelope, Message, Packet, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM,
};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

#[cfg(test)]
mod tests;

/// Largest block one DATA packet carries.
pub const MAX_BLOCK: usize = MAX_DATAGRAM - HEADER_LEN - 12;

/// Which of the three protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    Dsp,
    Csp,
    Cp,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Dsp => "dsp",
            Variant::Csp => "csp",
            Variant::Cp => "cp",
        }
    }
    pub fn parse(s: &str) -> Option<Variant> {
        match s {
            "dsp" => Some(Variant::Dsp),
            "csp" => Some(Variant::Csp),
            "cp" => Some(Variant::Cp),
            _ => None,
        }
    }
}

fn envelope(session: u32, node: NodeId, flags: u8) -> Envelope {
    Envelope {
        session,
        source: node.0,
        flags,
    }
}

fn secs_mul(d: Duration, f: f64) -> Duration {
    Duration::from_secs_f64((d.as_secs_f64() * f).max(0.0))
}

/// `k` of Table 1: the status interval in units of `T_IN = max(RTD/kou, ipt)`.
pub fn k_field(interval: Duration, rtd: Duration, kou: u32, ipt: Duration) -> u16 {
    let t_in = (rtd / kou.max(1)).max(ipt);
    if t_in.is_zero() {
        return 1;
    }
    let k = (interval.as_secs_f64() / t_in.as_secs_f64()).round();
    k.clamp(1.0, f64::from(u16::MAX)) as u16
}

// ------------------------------------------------------------------------ status and merge

/// One reporter's complete state: `LW_r`, the LOB (`L` bits from `LW_r`, set = received)
/// and `buffer_available`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStatus {
    pub lw: u64,
    pub lob: Vec<u8>,
    pub buf: u32,
}

impl BlockStatus {
    /// Nothing received yet, `buf` blocks of room.
    pub fn initial(l: u32, buf: u32) -> Self {
        BlockStatus {
            lw: 0,
            lob: vec![0; wire::bitmap_bytes(l)],
            buf,
        }
    }
    /// Whether block `s` is received according to this status (`l` = bits in the LOB).
    pub fn received(&self, s: u64, l: u32) -> bool {
        s < self.lw || (s - self.lw < u64::from(l) && wire::bit(&self.lob, (s - self.lw) as usize))
    }
    /// Highest block this status shows received (`None`: nothing at or above `LW_r`, and
    /// nothing below it either when `LW_r` is 0).
    pub fn highest(&self, l: u32) -> Option<u64> {
        let bytes = wire::bitmap_bytes(l).min(self.lob.len());
        let top = self.lob[..bytes]
            .iter()
            .rposition(|&b| b != 0)
            .and_then(|i| {
                let b = self.lob[i];
                let bit = 7 - b.leading_zeros() as usize;
                let idx = (8 * i + bit) as u64;
                (idx < u64::from(l)).then_some(self.lw + idx)
            });
        top.or_else(|| self.lw.checked_sub(1))
    }
    fn from_wire(s: &wire::Status<'_>) -> Self {
        BlockStatus {
            lw: s.lw_r,
            lob: s.lob.to_vec(),
            buf: s.buffer_available,
        }
    }
}

/// How a local exchange merges its endpoints' statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// CSP: `LW_r = min`, LOB = AND of the aligned LOBs, `buffer_available = min`.
    Pessimistic,
    /// CP: `LW_r = max`, LOB = OR of the aligned LOBs, `buffer_available = min`.
    Optimistic,
}

/// Consolidate endpoint statuses (seed 001 §4 and §5). Each LOB is re-aligned at the
/// consolidated `LW_r` before the bitwise AND / OR: a block below an endpoint's own `LW_r`
/// counts as received by it. `None` for no statuses.
pub fn consolidate(merge: Merge, l: u32, statuses: &[BlockStatus]) -> Option<BlockStatus> {
    let lw = match merge {
        Merge::Pessimistic => statuses.iter().map(|s| s.lw).min()?,
        Merge::Optimistic => statuses.iter().map(|s| s.lw).max()?,
    };
    let buf = statuses.iter().map(|s| s.buf).min()?;
    let (and, or) = aligned_and_or(statuses, lw, l);
    let words = match merge {
        Merge::Pessimistic => and,
        Merge::Optimistic => or,
    };
    Some(BlockStatus {
        lw,
        lob: words_to_lob(&words, l),
        buf,
    })
}

/// 64 bits of `st`'s received set starting at block `start` (bit `i` = block `start + i`),
/// `l` = bits in its LOB.
fn received_word(st: &BlockStatus, start: u64, l: u32) -> u64 {
    let mut w = 0u64;
    // Blocks below the endpoint's own LW_r are received.
    if start < st.lw {
        let n = st.lw - start;
        w = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        if n >= 64 {
            return w;
        }
    }
    let first = start.max(st.lw);
    let end = (start + 64).min(st.lw.saturating_add(u64::from(l)));
    let mut b = first;
    while b < end {
        let off = (b - st.lw) as usize;
        let byte = st.lob.get(off / 8).copied().unwrap_or(0) >> (off % 8);
        let take = (8 - off % 8).min((end - b) as usize);
        let mask = if take >= 8 { 0xff } else { (1u64 << take) - 1 };
        w |= (u64::from(byte) & mask) << (b - start);
        b += take as u64;
    }
    w
}

/// Bitwise AND and OR of the statuses' received sets over `[lw, lw + l)`, 64 blocks a word.
fn aligned_and_or(statuses: &[BlockStatus], lw: u64, l: u32) -> (Vec<u64>, Vec<u64>) {
    let n = (l as usize).div_ceil(64);
    let mut and = vec![u64::MAX; n];
    let mut or = vec![0u64; n];
    for st in statuses {
        for (i, (a, o)) in and.iter_mut().zip(or.iter_mut()).enumerate() {
            let w = received_word(st, lw + 64 * i as u64, l);
            *a &= w;
            *o |= w;
        }
    }
    (and, or)
}

fn words_to_lob(words: &[u64], l: u32) -> Vec<u8> {
    let mut lob = vec![0u8; wire::bitmap_bytes(l)];
    for (i, b) in lob.iter_mut().enumerate() {
        *b = words.get(i / 8).map_or(0, |w| (w >> (8 * (i % 8))) as u8);
    }
    if !l.is_multiple_of(8) {
        if let Some(last) = lob.last_mut() {
            *last &= (1u8 << (l % 8)) - 1;
        }
    }
    lob
}

// ------------------------------------------------------------------------------- probe

/// Instrumentation a driver may share with an agent (the study reads buffer occupancy
/// through it): the number of blocks the agent holds over time and drops for overflow.
#[derive(Debug, Clone, Default)]
pub struct Probe(Rc<ProbeCell>);

#[derive(Debug, Default)]
struct ProbeCell {
    level: Cell<u64>,
    peak: Cell<u64>,
    since: Cell<u64>,
    area: Cell<u128>,
    overflow: Cell<u64>,
    retx_peak: Cell<u64>,
}

impl Probe {
    pub fn new() -> Self {
        Probe::default()
    }
    fn set(&self, now: Time, level: usize) {
        let c = &self.0;
        let t = now.as_nanos();
        let dt = t.saturating_sub(c.since.get());
        c.area
            .set(c.area.get() + u128::from(c.level.get()) * u128::from(dt));
        c.since.set(t.max(c.since.get()));
        c.level.set(level as u64);
        c.peak.set(c.peak.get().max(level as u64));
    }
    fn set_retx(&self, level: usize) {
        self.0
            .retx_peak
            .set(self.0.retx_peak.get().max(level as u64));
    }
    /// Most blocks held at once in the retransmission buffer (kept for other endpoints).
    pub fn retx_peak(&self) -> u64 {
        self.0.retx_peak.get()
    }
    fn overflowed(&self) {
        self.0.overflow.set(self.0.overflow.get() + 1);
    }
    /// Most blocks held at once.
    pub fn peak(&self) -> u64 {
        self.0.peak.get()
    }
    /// Blocks held now.
    pub fn level(&self) -> u64 {
        self.0.level.get()
    }
    /// Time-average of the blocks held from 0 to `until`.
    pub fn mean(&self, until: Time) -> f64 {
        let c = &self.0;
        let t = until.as_nanos();
        let area =
            c.area.get() + u128::from(c.level.get()) * u128::from(t.saturating_sub(c.since.get()));
        if t == 0 {
            0.0
        } else {
            area as f64 / t as f64
        }
    }
    /// Blocks dropped because they arrived beyond the reassembly buffer.
    pub fn overflow(&self) -> u64 {
        self.0.overflow.get()
    }
}

// ------------------------------------------------------------------------------ source

/// A reporter the source waits for: a DSP designated endpoint or a CSP/CP local exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reporter {
    /// Its EPI (the id field of its STATUS; rmcast uses the node id).
    pub epi: u32,
    /// Round-trip delay between the source and it (`RTD_i`).
    pub rtd: Duration,
    /// Added to `r_f × RTD_i` before a missing block counts as lost: how old the state in
    /// its status may be when it is sent. Zero for a DSP designated endpoint (its own
    /// state); one endpoint status interval for a local exchange, whose consolidated status
    /// merges endpoint statuses received up to one interval earlier.
    pub slack: Duration,
}

/// Source configuration.
#[derive(Debug, Clone)]
pub struct SourceConfig {
    pub node: NodeId,
    /// The global multicast tree (MVC).
    pub group: GroupId,
    pub session: u32,
    pub mvci: u32,
    pub reporters: Vec<Reporter>,
    /// Largest number of outstanding blocks (`L`, the window).
    pub l: u32,
    /// Retransmission timeout factor `r_f`.
    pub r_f: f64,
    /// Peak rate in bits per second (0: unpaced).
    pub rate_bps: u64,
    /// `buffer_available` assumed for a reporter before its first status.
    pub initial_buffer: u32,
    /// Messages queued at the source before [`Agent::send`] refuses.
    pub queue_limit: usize,
    /// Delay between the last acknowledgment and [`Event::Completed`] (lets DSP's designated
    /// endpoints finish their local repairs before a driver stops).
    pub linger: Duration,
}

impl SourceConfig {
    pub fn new(node: NodeId, group: GroupId, reporters: Vec<Reporter>, l: u32) -> Self {
        SourceConfig {
            node,
            group,
            session: 0,
            mvci: 1,
            reporters,
            l: l.max(1),
            r_f: 1.2,
            rate_bps: 0,
            initial_buffer: l.max(1),
            queue_limit: 64,
            linger: Duration::ZERO,
        }
    }
}

struct SBlock {
    data: Bytes,
    first_sent: Time,
    last_sent: Time,
    sends: u32,
    acked: Vec<bool>,
    unacked: usize,
    queued: bool,
}

struct Rep {
    rtd: Duration,
    slack: Duration,
    lw: u64,
    buf: u32,
    /// Removed by the driver ([`Agent::remove_receiver`]): no longer waited for.
    removed: bool,
}

/// The global source `S` (all three protocols).
pub struct Source {
    cfg: SourceConfig,
    sendq: SendQueue,
    next_seq: u64,
    blocks: BTreeMap<u64, SBlock>,
    reps: Vec<Rep>,
    by_epi: BTreeMap<u32, usize>,
    retx: VecDeque<u64>,
    pacer: Pacer,
    block_len: usize,
    wake: Option<Time>,
    done_at: Option<Time>,
    completed: bool,
    out: Outbox,
    probe: Option<Probe>,
    max_outstanding: usize,
}

impl Source {
    pub fn new(cfg: SourceConfig) -> Self {
        let reps = cfg
            .reporters
            .iter()
            .map(|r| Rep {
                rtd: r.rtd,
                slack: r.slack,
                lw: 0,
                buf: cfg.initial_buffer,
                removed: false,
            })
            .collect();
        let by_epi = cfg
            .reporters
            .iter()
            .enumerate()
            .map(|(i, r)| (r.epi, i))
            .collect();
        Source {
            sendq: SendQueue::new(cfg.queue_limit, MAX_BLOCK),
            next_seq: 0,
            blocks: BTreeMap::new(),
            reps,
            by_epi,
            retx: VecDeque::new(),
            pacer: Pacer::new(cfg.rate_bps / 8, 0),
            block_len: 0,
            wake: None,
            done_at: None,
            completed: false,
            out: Outbox::new(),
            probe: None,
            max_outstanding: 0,
            cfg,
        }
    }
    /// Share a probe that follows the number of outstanding blocks.
    pub fn with_probe(mut self, p: Probe) -> Self {
        self.probe = Some(p);
        self
    }
    /// Blocks outstanding now.
    pub fn outstanding(&self) -> usize {
        self.blocks.len()
    }
    /// The most blocks ever outstanding at once.
    pub fn max_outstanding(&self) -> usize {
        self.max_outstanding
    }

    fn window_open(&self) -> bool {
        if self.blocks.len() >= self.cfg.l as usize {
            return false;
        }
        self.reps
            .iter()
            .all(|r| r.removed || self.next_seq < r.lw.saturating_add(u64::from(r.buf)))
    }

    fn emit_block(&mut self, seq: u64, data: &Bytes, repair: bool) {
        let flags = if repair { FLAG_RETRANSMISSION } else { 0 };
        let msg = Message::Tree(wire::Message::Data {
            mvci: self.cfg.mvci,
            seq,
            payload: data,
        });
        let env = envelope(self.cfg.session, self.cfg.node, flags);
        self.block_len = 0;
        if self.out.transmit(Dest::Group(self.cfg.group), env, &msg) {
            self.block_len = Packet::encoded_len(&msg);
            if repair {
                self.out.stats.repairs_sent += 1;
            } else {
                self.out.stats.data_sent += 1;
            }
        }
    }

    /// Send what the pacer allows now: re-multicasts first, then new blocks.
    fn pump(&mut self, now: Time) {
        loop {
            let ready = self.pacer.ready_at(now, self.block_len.max(1));
            if ready > now {
                self.wake = Some(ready);
                return;
            }
            self.wake = None;
            if let Some(seq) = self.retx.pop_front() {
                let Some(b) = self.blocks.get_mut(&seq) else {
                    continue;
                };
                b.queued = false;
                b.last_sent = now;
                b.sends += 1;
                let data = b.data.clone();
                self.emit_block(seq, &data, true);
                self.pacer.on_send(now, self.block_len);
                continue;
            }
            if !self.window_open() {
                return;
            }
            let Some(data) = self.sendq.pop_front() else {
                return;
            };
            let seq = self.next_seq;
            self.next_seq += 1;
            self.emit_block(seq, &data, false);
            self.pacer.on_send(now, self.block_len);
            let acked: Vec<bool> = self.reps.iter().map(|r| r.removed).collect();
            let n = acked.iter().filter(|a| !**a).count();
            self.blocks.insert(
                seq,
                SBlock {
                    data,
                    first_sent: now,
                    last_sent: now,
                    sends: 1,
                    acked,
                    unacked: n,
                    queued: false,
                },
            );
            self.max_outstanding = self.max_outstanding.max(self.blocks.len());
            if let Some(p) = &self.probe {
                p.set(now, self.blocks.len());
            }
            if n == 0 {
                self.finish_block(now, seq);
            }
        }
    }

    fn finish_block(&mut self, now: Time, seq: u64) {
        if let Some(b) = self.blocks.remove(&seq) {
            self.out.stats.completed += 1;
            self.out.event(Event::MessageDone {
                seq,
                sent_at: b.first_sent,
                done_at: now,
                transmissions: b.sends,
                failed: false,
            });
            if let Some(p) = &self.probe {
                p.set(now, self.blocks.len());
            }
        }
    }

    fn check_done(&mut self, now: Time) {
        if self.sendq.is_closed()
            && self.sendq.is_empty()
            && self.blocks.is_empty()
            && self.done_at.is_none()
        {
            self.done_at = Some(now + self.cfg.linger);
        }
        if let Some(t) = self.done_at {
            if !self.completed && now >= t {
                self.completed = true;
                self.out.event(Event::Completed);
            }
        }
    }

    fn on_status(&mut self, now: Time, st: &wire::Status<'_>) {
        let Some(&i) = self.by_epi.get(&st.id).filter(|&&i| !self.reps[i].removed) else {
            self.out.stats.ignored += 1;
            return;
        };
        let status = BlockStatus::from_wire(st);
        let timeout = secs_mul(self.reps[i].rtd, self.cfg.r_f) + self.reps[i].slack;
        {
            let r = &mut self.reps[i];
            r.lw = status.lw;
            r.buf = status.buf;
        }
        let mut done = Vec::new();
        for (&seq, b) in self.blocks.iter_mut() {
            if b.acked[i] {
                continue;
            }
            if status.received(seq, st.l) {
                b.acked[i] = true;
                b.unacked -= 1;
                if b.unacked == 0 {
                    done.push(seq);
                }
            } else if !b.queued && now >= b.last_sent + timeout {
                b.queued = true;
                self.retx.push_back(seq);
                self.out.event(Event::LossDetected { seq });
            }
        }
        for seq in done {
            self.finish_block(now, seq);
        }
    }
}

impl Agent for Source {
    fn handle_packet(&mut self, now: Time, _from: NodeId, packet: &[u8]) {
        match self.out.accept(packet, self.cfg.session) {
            Some(wire::Message::Status(st)) => self.on_status(now, &st),
            Some(_) => self.out.ignore(),
            None => {}
        }
        self.pump(now);
        self.check_done(now);
    }
    fn handle_timeout(&mut self, now: Time) {
        self.pump(now);
        self.check_done(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        let linger = if self.completed { None } else { self.done_at };
        match (self.wake, linger) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn outbox(&self) -> &Outbox {
        &self.out
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.out
    }
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        self.sendq.offer(data)?;
        self.pump(now);
        Ok(())
    }
    fn can_send(&self) -> bool {
        self.sendq.can_accept()
    }
    fn close(&mut self, now: Time) {
        self.sendq.close();
        self.check_done(now);
    }
    /// Stop waiting for reporter `node` (a DSP designated endpoint, or a local exchange):
    /// its outstanding blocks count as acknowledged by it and its window no longer limits
    /// new blocks.
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(&i) = self.by_epi.get(&node.0) else {
            return false;
        };
        if self.reps[i].removed {
            return false;
        }
        self.reps[i].removed = true;
        let mut done = Vec::new();
        for (&seq, b) in self.blocks.iter_mut() {
            if !b.acked[i] {
                b.acked[i] = true;
                b.unacked -= 1;
                if b.unacked == 0 {
                    done.push(seq);
                }
            }
        }
        for seq in done {
            self.finish_block(now, seq);
        }
        self.pump(now);
        self.check_done(now);
        true
    }
}

// ---------------------------------------------------------------------------- endpoint

/// What an endpoint `E_ij` does besides receiving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// DSP `E_i1`: reports its own status to the source, collects its members' statuses and
    /// re-multicasts on `local_group` what they lack.
    Designated {
        members: Vec<NodeId>,
        local_group: GroupId,
    },
    /// DSP `E_ij`, `j ≠ 1`: reports to its designated endpoint.
    Member { designated: NodeId },
    /// CSP endpoint: reports to its local exchange.
    Consolidated { exchange: NodeId },
    /// CP endpoint: reports to its local exchange and re-multicasts on `local_group` what the
    /// exchange assigns it.
    Combined {
        exchange: NodeId,
        local_group: GroupId,
    },
}

impl Role {
    /// Whether the endpoint keeps delivered blocks for others (a designated endpoint with
    /// no members has nobody to keep them for).
    fn keeps_retx(&self) -> bool {
        match self {
            Role::Designated { members, .. } => !members.is_empty(),
            Role::Combined { .. } => true,
            _ => false,
        }
    }
}

/// Endpoint configuration.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    pub node: NodeId,
    pub source: NodeId,
    pub session: u32,
    pub mvci: u32,
    /// LMVCI of the endpoint's local multicast tree.
    pub lmvci: u32,
    pub role: Role,
    /// Bits in a LOB (`L`).
    pub l: u32,
    /// Reassembly buffer `R`, blocks.
    pub reassembly: u32,
    /// Retransmission buffer `C`, blocks (designated DSP and CP endpoints).
    pub retx_capacity: u32,
    /// Status interval, drawn uniformly from `[status_min, status_max]` each time.
    pub status_min: Duration,
    pub status_max: Duration,
    /// Round-trip delay to the source, `kou` and `ipt` (for the `k` field only).
    pub rtd: Duration,
    pub kou: u32,
    pub ipt: Duration,
    /// Round-trip delay inside the region (DSP local re-multicast hold-off `r_f × local_rtd`).
    pub local_rtd: Duration,
    pub r_f: f64,
}

impl EndpointConfig {
    pub fn new(node: NodeId, source: NodeId, role: Role, l: u32) -> Self {
        EndpointConfig {
            node,
            source,
            session: 0,
            mvci: 1,
            lmvci: 1,
            role,
            l: l.max(1),
            reassembly: l.max(1),
            retx_capacity: l.max(1),
            status_min: Duration::from_millis(4),
            status_max: Duration::from_millis(6),
            rtd: Duration::ZERO,
            kou: 8,
            ipt: Duration::ZERO,
            local_rtd: Duration::from_millis(1),
            r_f: 1.2,
        }
    }
}

struct Have {
    data: Bytes,
    got: Time,
    last_local: Option<Time>,
}

/// An endpoint (destination) `E_ij` of any of the three protocols.
pub struct Endpoint {
    cfg: EndpointConfig,
    win: SeqWindow,
    /// Every block held: `≥ lw` reassembly (out of order), `[rel, lw)` delivered and waiting
    /// for room in the retransmission buffer, `< rel` retransmission buffer.
    have: BTreeMap<u64, Have>,
    rel: u64,
    retx_len: usize,
    /// DSP designated: latest status of each member.
    members: BTreeMap<u32, BlockStatus>,
    status_at: Time,
    rng: AgentRng,
    out: Outbox,
    probe: Option<Probe>,
}

impl Endpoint {
    pub fn new(cfg: EndpointConfig, mut rng: AgentRng) -> Self {
        let first = rng.duration_between(Duration::ZERO, cfg.status_max);
        let members = match &cfg.role {
            Role::Designated { members, .. } => members
                .iter()
                .map(|m| (m.0, BlockStatus::initial(cfg.l, cfg.reassembly)))
                .collect(),
            _ => BTreeMap::new(),
        };
        Endpoint {
            win: SeqWindow::new(cfg.reassembly.max(cfg.l) as usize),
            have: BTreeMap::new(),
            rel: 0,
            retx_len: 0,
            members,
            status_at: Time::ZERO + first,
            rng,
            out: Outbox::new(),
            probe: None,
            cfg,
        }
    }
    /// Share a probe that follows the blocks held (reassembly + retransmission buffers).
    pub fn with_probe(mut self, p: Probe) -> Self {
        self.probe = Some(p);
        self
    }
    /// `LW_r`: the first block not yet received.
    pub fn lw(&self) -> u64 {
        self.win.base()
    }
    /// Blocks in the retransmission buffer.
    pub fn retx_len(&self) -> usize {
        self.retx_len
    }
    /// `buffer_available`.
    pub fn buffer_available(&self) -> u32 {
        let used = self.lw().saturating_sub(self.rel);
        u64::from(self.cfg.reassembly).saturating_sub(used) as u32
    }

    fn status(&self) -> BlockStatus {
        let lw = self.lw();
        let mut lob = vec![0u8; wire::bitmap_bytes(self.cfg.l)];
        // Every received block at or above LW_r is held (reassembly buffer).
        for (&s, _) in self
            .have
            .range(lw..lw.saturating_add(u64::from(self.cfg.l)))
        {
            wire::set_bit(&mut lob, (s - lw) as usize);
        }
        BlockStatus {
            lw,
            lob,
            buf: self.buffer_available(),
        }
    }

    fn update_probe(&self, now: Time) {
        if let Some(p) = &self.probe {
            p.set(now, self.have.len());
            p.set_retx(self.retx_len);
        }
    }

    fn on_data(&mut self, now: Time, seq: u64, payload: &[u8]) {
        if seq < self.lw() {
            self.out.stats.duplicates += 1;
            return;
        }
        if seq >= self.rel.saturating_add(u64::from(self.cfg.reassembly)) {
            if let Some(p) = &self.probe {
                p.overflowed();
            }
            return;
        }
        match self.win.insert(seq) {
            Insert::New => {}
            Insert::Duplicate => {
                self.out.stats.duplicates += 1;
                return;
            }
            Insert::TooFar => {
                if let Some(p) = &self.probe {
                    p.overflowed();
                }
                return;
            }
        }
        self.have.insert(
            seq,
            Have {
                data: Bytes::copy_from_slice(payload),
                got: now,
                last_local: None,
            },
        );
        while let Some(s) = self.win.pop_in_order() {
            if let Some(h) = self.have.get(&s) {
                self.out.stats.delivered += 1;
                self.out.event(Event::Delivered {
                    seq: s,
                    data: h.data.clone(),
                });
            }
        }
        self.release();
        self.update_probe(now);
    }

    /// Move delivered blocks into the retransmission buffer while it has room (or drop them
    /// for endpoints that keep none).
    fn release(&mut self) {
        let lw = self.lw();
        if !self.cfg.role.keeps_retx() {
            while self.rel < lw {
                self.have.remove(&self.rel);
                self.rel += 1;
            }
            return;
        }
        while self.rel < lw && self.retx_len < self.cfg.retx_capacity as usize {
            self.rel += 1;
            self.retx_len += 1;
        }
    }

    /// Free retransmission-buffer blocks below `floor` (every endpoint of the region has them).
    fn free_below(&mut self, now: Time, floor: u64) {
        let limit = floor.min(self.rel);
        while let Some((&s, _)) = self.have.first_key_value() {
            if s >= limit {
                break;
            }
            self.have.remove(&s);
            self.retx_len = self.retx_len.saturating_sub(1);
        }
        self.release();
        self.update_probe(now);
    }

    /// DSP designated: free the blocks every member has (below the lowest member `LW_r`).
    fn free_held_by_members(&mut self, now: Time) {
        let floor = self
            .members
            .values()
            .map(|m| m.lw)
            .min()
            .unwrap_or(u64::MAX);
        self.free_below(now, floor);
    }

    fn local_multicast(&mut self, now: Time, seq: u64, group: GroupId) -> bool {
        let Some(h) = self.have.get_mut(&seq) else {
            return false;
        };
        h.last_local = Some(now);
        let msg = Message::Tree(wire::Message::LocalData {
            lmvci: self.cfg.lmvci,
            seq,
            payload: &h.data,
        });
        let env = envelope(self.cfg.session, self.cfg.node, FLAG_RETRANSMISSION);
        if self.out.transmit(Dest::Group(group), env, &msg) {
            self.out.stats.repairs_sent += 1;
        }
        true
    }

    fn on_member_status(&mut self, now: Time, st: &wire::Status<'_>) {
        let Role::Designated { local_group, .. } = self.cfg.role else {
            self.out.stats.ignored += 1;
            return;
        };
        let Some(slot) = self.members.get_mut(&st.id) else {
            self.out.stats.ignored += 1;
            return;
        };
        let status = BlockStatus::from_wire(st);
        *slot = status.clone();
        let quick = secs_mul(self.cfg.local_rtd, self.cfg.r_f);
        let hold = self.cfg.status_max + quick;
        let highest = status.highest(st.l);
        let mut todo = Vec::new();
        let end = status.lw.saturating_add(u64::from(st.l));
        for (&s, h) in self.have.range(status.lw..end) {
            if status.received(s, st.l) {
                continue;
            }
            // A gap below a block the member holds is a loss; a block beyond everything
            // it holds may still be queued on its access link, so wait longer for it.
            let gap = highest.is_some_and(|hi| s < hi);
            let ready = match h.last_local {
                Some(t) => now >= t + hold,
                None => now >= h.got + if gap { quick } else { hold },
            };
            if ready {
                todo.push(s);
            }
        }
        for s in todo {
            self.local_multicast(now, s, local_group);
        }
        self.free_held_by_members(now);
    }

    fn on_assign(&mut self, now: Time, lepi: u32, l: u32, base: u64, bits: &[u8]) {
        let Role::Combined { local_group, .. } = self.cfg.role else {
            self.out.stats.ignored += 1;
            return;
        };
        if lepi != self.cfg.node.0 {
            self.out.stats.ignored += 1;
            return;
        }
        for i in 0..l as usize {
            if wire::bit(bits, i) {
                self.local_multicast(now, base + i as u64, local_group);
            }
        }
        self.free_below(now, base);
    }

    fn send_status(&mut self, now: Time) {
        let st = self.status();
        let interval = self
            .rng
            .duration_between(self.cfg.status_min, self.cfg.status_max);
        let k = k_field(interval, self.cfg.rtd, self.cfg.kou, self.cfg.ipt);
        self.status_at = now + interval.max(Duration::from_nanos(1));
        let (dest, vc, msg_kind_status) = match &self.cfg.role {
            Role::Designated { .. } => (self.cfg.source, self.cfg.mvci, true),
            Role::Member { designated } => (*designated, self.cfg.lmvci, false),
            Role::Consolidated { exchange } | Role::Combined { exchange, .. } => {
                (*exchange, self.cfg.lmvci, false)
            }
        };
        let body = wire::Status {
            vc,
            id: self.cfg.node.0,
            k,
            l: self.cfg.l,
            lw_r: st.lw,
            buffer_available: st.buf,
            lob: &st.lob,
        };
        let msg = if msg_kind_status {
            wire::Message::Status(body)
        } else {
            wire::Message::LocalStatus(body)
        };
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        if self
            .out
            .transmit(Dest::Node(dest), env, &Message::Tree(msg))
        {
            self.out.stats.control_sent += 1;
        }
    }
}

impl Agent for Endpoint {
    fn handle_packet(&mut self, now: Time, _from: NodeId, packet: &[u8]) {
        match self.out.accept(packet, self.cfg.session) {
            Some(wire::Message::Data { seq, payload, .. })
            | Some(wire::Message::LocalData { seq, payload, .. }) => {
                self.on_data(now, seq, payload)
            }
            Some(wire::Message::LocalStatus(st)) => self.on_member_status(now, &st),
            Some(wire::Message::Assign {
                lepi,
                l,
                base,
                bits,
                ..
            }) => self.on_assign(now, lepi, l, base, bits),
            Some(wire::Message::Status(_)) => self.out.ignore(),
            None => {}
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if now >= self.status_at {
            self.send_status(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.status_at)
    }
    /// A DSP designated endpoint stops waiting for member `node` (the driver evicted it):
    /// its status no longer holds blocks in the retransmission buffer.
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        if self.members.remove(&node.0).is_none() {
            return false;
        }
        self.free_held_by_members(now);
        true
    }
    fn outbox(&self) -> &Outbox {
        &self.out
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.out
    }
}

// ---------------------------------------------------------------------------- exchange

/// Local exchange configuration (CSP and CP).
#[derive(Debug, Clone)]
pub struct ExchangeConfig {
    pub node: NodeId,
    pub source: NodeId,
    pub session: u32,
    pub mvci: u32,
    pub lmvci: u32,
    pub merge: Merge,
    /// The endpoints in its jurisdiction (their LEPI is their node id).
    pub endpoints: Vec<NodeId>,
    pub l: u32,
    pub status_min: Duration,
    pub status_max: Duration,
    pub rtd: Duration,
    pub kou: u32,
    pub ipt: Duration,
    /// Buffer each endpoint is assumed to have before its first status.
    pub initial_buffer: u32,
    /// CP: a block is not assigned again before this long.
    pub reassign_after: Duration,
}

impl ExchangeConfig {
    pub fn new(node: NodeId, source: NodeId, merge: Merge, endpoints: Vec<NodeId>, l: u32) -> Self {
        let l = l.max(1);
        ExchangeConfig {
            node,
            source,
            session: 0,
            mvci: 1,
            lmvci: 1,
            merge,
            endpoints,
            l,
            status_min: Duration::from_millis(4),
            status_max: Duration::from_millis(6),
            rtd: Duration::ZERO,
            kou: 8,
            ipt: Duration::ZERO,
            initial_buffer: l,
            reassign_after: Duration::from_millis(6) + Duration::from_micros(1200),
        }
    }
}

/// A local exchange `L_i` as a router agent: it consumes its endpoints' statuses, sends the
/// consolidated status to the source and (CP) assigns local re-multicasts.
pub struct Exchange {
    cfg: ExchangeConfig,
    statuses: Vec<BlockStatus>,
    index: BTreeMap<u32, usize>,
    assigned: BTreeMap<u64, Time>,
    first_seen: BTreeMap<u64, Time>,
    floor_sent: Vec<u64>,
    status_at: Time,
    rng: AgentRng,
    out: Outbox<RouterTransmit>,
    /// Local re-multicasts ordered (CP).
    pub assignments: u64,
}

impl Exchange {
    pub fn new(cfg: ExchangeConfig, mut rng: AgentRng) -> Self {
        let first = rng.duration_between(Duration::ZERO, cfg.status_max);
        let statuses = cfg
            .endpoints
            .iter()
            .map(|_| BlockStatus::initial(cfg.l, cfg.initial_buffer))
            .collect();
        let index = cfg
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, n)| (n.0, i))
            .collect();
        Exchange {
            statuses,
            index,
            assigned: BTreeMap::new(),
            first_seen: BTreeMap::new(),
            floor_sent: vec![0; cfg.endpoints.len()],
            status_at: Time::ZERO + first,
            rng,
            out: Outbox::new(),
            assignments: 0,
            cfg,
        }
    }

    /// The consolidated status it would send now.
    pub fn consolidated(&self) -> Option<BlockStatus> {
        consolidate(self.cfg.merge, self.cfg.l, &self.statuses)
    }

    fn emit(&mut self, dest: NodeId, msg: wire::Message<'_>) {
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        if self
            .out
            .transmit_via(Dest::Node(dest), None, env, &Message::Tree(msg))
        {
            self.out.stats.control_sent += 1;
        }
    }

    fn report(&mut self, now: Time) {
        let interval = self
            .rng
            .duration_between(self.cfg.status_min, self.cfg.status_max);
        self.status_at = now + interval.max(Duration::from_nanos(1));
        if let Some(c) = self.consolidated() {
            let k = k_field(interval, self.cfg.rtd, self.cfg.kou, self.cfg.ipt);
            let body = wire::Status {
                vc: self.cfg.mvci,
                id: self.cfg.node.0,
                k,
                l: self.cfg.l,
                lw_r: c.lw,
                buffer_available: c.buf,
                lob: &c.lob,
            };
            self.emit(self.cfg.source, wire::Message::Status(body));
        }
        if self.cfg.merge == Merge::Optimistic {
            self.assign(now);
        }
    }

    /// CP: for each block some endpoint lacks and another has, order the first holder to
    /// re-multicast it locally.
    fn assign(&mut self, now: Time) {
        let l = self.cfg.l;
        let Some(floor) = self.statuses.iter().map(|s| s.lw).min() else {
            return;
        };
        self.assigned.retain(|&s, _| s >= floor);
        self.first_seen.retain(|&s, _| s >= floor);
        let highest: Vec<Option<u64>> = self.statuses.iter().map(|st| st.highest(l)).collect();
        let n = self.statuses.len();
        let mut bits: Vec<Vec<u8>> = vec![Vec::new(); n];
        // Candidates: held by some endpoint (OR) and lacked by some (not AND).
        let (and, or) = aligned_and_or(&self.statuses, floor, l);
        let mut candidates = Vec::new();
        for (wi, (a, o)) in and.iter().zip(&or).enumerate() {
            let mut c = o & !a;
            while c != 0 {
                let off = 64 * wi as u64 + u64::from(c.trailing_zeros());
                c &= c - 1;
                if off < u64::from(l) {
                    candidates.push(floor + off);
                }
            }
        }
        for s in candidates {
            let mut holder = None;
            let mut gap = false;
            for (j, st) in self.statuses.iter().enumerate() {
                if st.received(s, l) {
                    holder.get_or_insert(j);
                } else {
                    gap |= highest[j].is_some_and(|hi| s < hi);
                }
            }
            let Some(h) = holder else {
                continue;
            };
            let seen = *self.first_seen.entry(s).or_insert(now);
            // A gap below a block the endpoint holds is a loss; a block beyond everything it
            // holds may still be queued on its access link: wait `reassign_after` for it.
            if !gap && now < seen + self.cfg.reassign_after {
                continue;
            }
            if self
                .assigned
                .get(&s)
                .is_some_and(|&t| now < t + self.cfg.reassign_after)
            {
                continue;
            }
            self.assigned.insert(s, now);
            self.assignments += 1;
            let Some(b) = bits.get_mut(h) else {
                continue;
            };
            if b.is_empty() {
                b.resize(wire::bitmap_bytes(l), 0);
            }
            // The ASSIGN bitmap starts at `floor` and covers L blocks.
            wire::set_bit(b, (s - floor) as usize);
        }
        let step = u64::from(l / 8).max(1);
        for (j, b) in bits.into_iter().enumerate() {
            let has_bits = !b.is_empty();
            let Some(&sent) = self.floor_sent.get(j) else {
                continue;
            };
            if !has_bits && floor < sent.saturating_add(step) {
                continue;
            }
            if let Some(f) = self.floor_sent.get_mut(j) {
                *f = floor;
            }
            let b = if has_bits {
                b
            } else {
                vec![0; wire::bitmap_bytes(l)]
            };
            let to = self.cfg.endpoints[j];
            self.emit(
                to,
                wire::Message::Assign {
                    lmvci: self.cfg.lmvci,
                    lepi: to.0,
                    l,
                    base: floor,
                    bits: &b,
                },
            );
        }
    }
}

impl RouterAgent for Exchange {
    fn on_packet(
        &mut self,
        _now: Time,
        _ingress: IfaceId,
        _from: NodeId,
        dest: Dest,
        packet: &[u8],
    ) -> RouteDecision {
        if dest != Dest::Node(self.cfg.node) {
            return RouteDecision::Forward;
        }
        match self.out.accept(packet, self.cfg.session) {
            Some(wire::Message::LocalStatus(st)) => match self.index.get(&st.id) {
                Some(&j) => self.statuses[j] = BlockStatus::from_wire(&st),
                None => self.out.stats.ignored += 1,
            },
            Some(_) => self.out.ignore(),
            None => {}
        }
        RouteDecision::Consume
    }
    fn handle_timeout(&mut self, now: Time) {
        if now >= self.status_at {
            self.report(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.status_at)
    }
    fn outbox(&self) -> &Outbox<RouterTransmit> {
        &self.out
    }
    fn outbox_mut(&mut self) -> &mut Outbox<RouterTransmit> {
        &mut self.out
    }
}

// -------------------------------------------------------------------------- deployment

/// One region (local exchange `L_i` and its jurisdiction) as a driver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The local exchange (a router node; CSP and CP put an [`Exchange`] there).
    pub exchange: NodeId,
    /// Its endpoints; for DSP the first one is the designated endpoint `E_i1` (put the one
    /// closest to the source first).
    pub endpoints: Vec<NodeId>,
    /// Round-trip delay between the source and the exchange.
    pub rtd_exchange: Duration,
    /// Round-trip delay between the source and each endpoint (same order as `endpoints`).
    pub rtd_endpoints: Vec<Duration>,
}

/// Parameters shared by every role of one connection.
#[derive(Debug, Clone)]
pub struct Settings {
    pub variant: Variant,
    pub session: u32,
    /// `L`: window (largest number of outstanding blocks) and LOB length.
    pub l: u32,
    /// Retransmission buffer of DSP designated and CP endpoints, blocks.
    pub retx_capacity: u32,
    pub r_f: f64,
    /// Source peak rate, bits per second (0: unpaced).
    pub rate_bps: u64,
    /// Datagram length of one block (for `ipt` in the `k` field).
    pub block_datagram: usize,
    pub status_min: Duration,
    pub status_max: Duration,
    pub local_rtd: Duration,
    pub kou: u32,
    pub linger: Duration,
    pub queue_limit: usize,
}

impl Settings {
    pub fn new(variant: Variant, l: u32) -> Self {
        Settings {
            variant,
            session: 0,
            l: l.max(1),
            retx_capacity: l.max(1),
            r_f: crate::spec::dsp::R_F,
            rate_bps: 0,
            block_datagram: crate::spec::dsp::BLOCK_BYTES + HEADER_LEN + 12,
            status_min: crate::spec::ms(crate::spec::dsp::STATUS_MIN_MS),
            status_max: crate::spec::ms(crate::spec::dsp::STATUS_MAX_MS),
            local_rtd: crate::spec::ms(crate::spec::dsp::LOCAL_RTD_MS),
            kou: crate::spec::dsp::KOU,
            linger: Duration::ZERO,
            queue_limit: 64,
        }
    }
    /// Time to send one block at the peak rate.
    pub fn ipt(&self) -> Duration {
        if self.rate_bps == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(self.block_datagram as f64 * 8.0 / self.rate_bps as f64)
        }
    }
}

/// Every agent configuration of one connection: build the agents from it and add the local
/// groups to the driver.
#[derive(Debug, Clone)]
pub struct Deployment {
    pub source: SourceConfig,
    pub endpoints: Vec<EndpointConfig>,
    pub exchanges: Vec<ExchangeConfig>,
    /// Local multicast groups (region `i` gets `GroupId(first_local_group + i)`) and their
    /// members: DSP — the region's endpoints but `E_i1`; CP — all its endpoints; CSP uses none.
    pub local_groups: Vec<(GroupId, Vec<NodeId>)>,
}

/// Lay out the roles of `s.variant` on `regions` (empty regions are skipped).
pub fn deploy(
    source: NodeId,
    group: GroupId,
    first_local_group: u32,
    regions: &[Region],
    s: &Settings,
) -> Deployment {
    let ipt = s.ipt();
    let mut reporters = Vec::new();
    let mut endpoints = Vec::new();
    let mut exchanges = Vec::new();
    let mut local_groups = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        let Some(&designated) = r.endpoints.first() else {
            continue;
        };
        let local_group = GroupId(first_local_group.saturating_add(i as u32));
        let lmvci = 2 + i as u32;
        let rtd_of = |j: usize| r.rtd_endpoints.get(j).copied().unwrap_or(r.rtd_exchange);
        let endpoint = |j: usize, m: NodeId, role: Role| {
            let mut c = EndpointConfig::new(m, source, role, s.l);
            c.session = s.session;
            c.lmvci = lmvci;
            c.retx_capacity = s.retx_capacity;
            c.status_min = s.status_min;
            c.status_max = s.status_max;
            c.rtd = rtd_of(j);
            c.kou = s.kou;
            c.ipt = ipt;
            c.local_rtd = s.local_rtd;
            c.r_f = s.r_f;
            c
        };
        match s.variant {
            Variant::Dsp => {
                let others: Vec<NodeId> = r.endpoints.iter().skip(1).copied().collect();
                reporters.push(Reporter {
                    epi: designated.0,
                    rtd: rtd_of(0),
                    slack: Duration::ZERO,
                });
                endpoints.push(endpoint(
                    0,
                    designated,
                    Role::Designated {
                        members: others.clone(),
                        local_group,
                    },
                ));
                for (j, &m) in r.endpoints.iter().enumerate().skip(1) {
                    endpoints.push(endpoint(j, m, Role::Member { designated }));
                }
                local_groups.push((local_group, others));
            }
            Variant::Csp | Variant::Cp => {
                let merge = if s.variant == Variant::Csp {
                    Merge::Pessimistic
                } else {
                    Merge::Optimistic
                };
                reporters.push(Reporter {
                    epi: r.exchange.0,
                    rtd: r.rtd_exchange,
                    slack: s.status_max,
                });
                let mut x =
                    ExchangeConfig::new(r.exchange, source, merge, r.endpoints.clone(), s.l);
                x.session = s.session;
                x.lmvci = lmvci;
                x.status_min = s.status_min;
                x.status_max = s.status_max;
                x.rtd = r.rtd_exchange;
                x.kou = s.kou;
                x.ipt = ipt;
                x.reassign_after = s.status_max + secs_mul(s.local_rtd, s.r_f);
                exchanges.push(x);
                for (j, &m) in r.endpoints.iter().enumerate() {
                    let role = if s.variant == Variant::Csp {
                        Role::Consolidated {
                            exchange: r.exchange,
                        }
                    } else {
                        Role::Combined {
                            exchange: r.exchange,
                            local_group,
                        }
                    };
                    endpoints.push(endpoint(j, m, role));
                }
                if s.variant == Variant::Cp {
                    local_groups.push((local_group, r.endpoints.clone()));
                }
            }
        }
    }
    let mut sc = SourceConfig::new(source, group, reporters, s.l);
    sc.session = s.session;
    sc.r_f = s.r_f;
    sc.rate_bps = s.rate_bps;
    sc.linger = s.linger;
    sc.queue_limit = s.queue_limit;
    Deployment {
        source: sc,
        endpoints,
        exchanges,
        local_groups,
    }
}

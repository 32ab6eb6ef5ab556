//! The NORM sender (RFC 5740 §5.1, §5.3, §5.5): data, repair aggregation, probes, flush rounds.

use super::{data, micros, quantize_rtt, SenderConfig, MAX_MESSAGE, MAX_PARITY};
use crate::fec;
use crate::outbox::envelope;
use crate::retx::RetransmitBuffer;
use crate::timer::TimerSet;
use crate::{Agent, Dest, Event, NodeId, Outbox, SendError, SenderAgent, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::norm::{self as wire, AckType, Nodes, Requests};
use rmcast_wire::{Message, FLAG_RETRANSMISSION};
use std::collections::{BTreeMap, BTreeSet};

/// The sender's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum SKey {
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
    pub(super) cfg: SenderConfig,
    pub(super) out: Outbox,
    buf: RetransmitBuffer,
    next: u64,
    closed: bool,
    pub(super) timers: TimerSet<SKey>,
    pub(super) grtt: Duration,
    pub(super) peak: Option<Duration>,
    pub(super) probe_seq: u16,
    asked: BTreeMap<u32, Asked>,
    parity_sent: BTreeMap<u32, u16>,
    pending: BTreeSet<NodeId>,
    pub(super) rounds: u32,
    pub(super) done: bool,
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
    pub(super) fn command(&mut self, msg: wire::Message<'_>) {
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
    pub(super) fn grtt_response(&mut self, now: Time, echoed_us: u64) {
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

    /// A new probe's sequence number, the GRTT updated from the last interval's peak (up at
    /// once, down halfway, never below `grtt_min`) first; plain probes and NORM-CC's CC RATE
    /// alike.
    pub(super) fn next_probe(&mut self) -> u16 {
        if let Some(peak) = self.peak.take() {
            self.grtt = if peak >= self.grtt {
                peak
            } else {
                (self.grtt + peak) / 2
            }
            .max(self.cfg.grtt_min);
        }
        self.probe_seq = self.probe_seq.wrapping_add(1);
        self.probe_seq
    }

    /// A probe: the GRTT from the last interval's peak, then CMD(CC) with the clock.
    fn probe(&mut self, now: Time) {
        let cc_sequence = self.next_probe();
        let grtt = quantize_rtt(self.grtt);
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

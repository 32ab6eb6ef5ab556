//! The NORM receiver (RFC 5740 §5.2, §5.3): decoding, in-order delivery, NACK back-off and
//! suppression, probe answers, watermark ACKs.

use super::{random_backoff, unquantize_rtt, ReceiverConfig};
use crate::fec::BlockDecoder;
use crate::outbox::envelope;
use crate::rng::AgentRng;
use crate::timer::TimerSet;
use crate::{hold, Agent, Dest, NodeId, Outbox, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::norm::{self as wire, AckType, Request, Requests};
use rmcast_wire::Message;
use std::collections::BTreeMap;

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
pub(super) struct Probe {
    pub(super) seq: u16,
    pub(super) ts_us: u64,
    pub(super) at: Time,
}

/// A NORM receiver.
pub struct Receiver {
    pub(super) cfg: ReceiverConfig,
    rng: AgentRng,
    pub(super) out: Outbox,
    timers: TimerSet<RKey>,
    blocks: BTreeMap<u32, RxBlock>,
    /// Segments delivered (the next one to deliver).
    next: u64,
    /// The furthest block seen.
    front: Option<u32>,
    /// The object's last symbol, from FLUSH or ACK REQ.
    last: Option<(u32, u16)>,
    pub(super) grtt: Duration,
    pub(super) probe: Option<Probe>,
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
    pub(super) fn grtt_response(&self, now: Time) -> u64 {
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

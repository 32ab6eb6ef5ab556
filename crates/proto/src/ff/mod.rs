//! `ff` — the full-feedback baseline of seed 004 (§4), after Towsley & Mithal (1987) as used
//! by Pingali, Towsley & Kurose (1994): (a) a sliding window with selective retransmission (no
//! go-back-N), (b) every receiver acknowledges every packet it receives, (c) loss detection by
//! timeout and recovery by global (multicast) retransmission.
//!
//! * The sender multicasts data packets, at most `IPG` apart, while the packet's sequence
//!   number is below `base + S`, where `base` is the oldest packet not yet acknowledged by
//!   every receiver. Retransmissions go before new data.
//! * Each receiver keeps a window of `S` packets, delivers in order (a "hungry" upper layer),
//!   and answers every data packet it can hold — new or duplicate — with an ACK naming that
//!   packet and echoing its timestamp. A packet beyond its window is dropped unacknowledged.
//! * Every packet copy arms a timer of `RTO = 2 × the largest RTT estimate` over the receivers
//!   still in the group (§4: "both PF and FF protocols calculate RTO as twice the largest
//!   estimated RTT_i"); each receiver's RTT estimate is the SRTT of the shared
//!   [`RttEstimator`], fed by the echoed timestamps. When the timer fires and the packet is
//!   not acknowledged by all, it is multicast again.
//!
//! Variants ([`Variant`]): FF (`S = 64`), FF-IW (`S` = number of packets), FF-IW-IT (FF-IW
//! with no implosion limit). The implosion limit is not a protocol property: §4 models it as a
//! 16-packet response buffer at the parent host served at `ITR` per second, which is the
//! simulator's host receive queue. So FF-IW-IT is the same agent as FF-IW; the driver runs it
//! with that queue disabled ([`Variant::implosion_limited`] returns `false`).
//!
//! Choices where the paper is silent: `RTT` before the first ACK is
//! [`SenderConfig::initial_rtt`]; the RTO is floored at [`SenderConfig::min_rto`]; there is no
//! retransmission limit (the paper's FF has none; a driver may evict a receiver with
//! [`SenderAgent::remove_receiver`](crate::SenderAgent::remove_receiver)); one wire family of its
//! own (10) because the ACK is a plain per-packet acknowledgment (see `rmcast_wire::ff`).
//!
//! Beyond the paper, a receiver built with [`ReceiverConfig::cumulative`] sends CUMACK: the
//! same ACK plus its cumulative point (every packet below it received), so that an ACK lost
//! to implosion is made good by the next one instead of by a timeout. The sender accepts
//! both kinds from any receiver.

use crate::retx::RetransmitBuffer;
use crate::roster::Roster;
use crate::rtt::{RttConfig, RttEstimator};
use crate::sendq::SendQueue;
use crate::timer::TimerSet;
use crate::window::{Bitmap, HeldWindow, Insert};
use crate::{Agent, Dest, Event, NodeId, Outbox, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{ff as wire, Message, HEADER_LEN, MAX_DATAGRAM};
use std::collections::{BTreeMap, BTreeSet};

/// Largest application message one DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 16;

/// Largest window `S`.
pub const MAX_WINDOW: u64 = 1 << 24;

/// The three full-feedback variants of §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// FF: window `S` (64 in the paper).
    Ff,
    /// FF-IW: window = all packets.
    FfIw,
    /// FF-IW-IT: FF-IW with an infinite implosion threshold rate.
    FfIwIt,
}

impl Variant {
    /// The window size for a transfer of `packets` packets (`s` for FF).
    pub fn window(self, s: u64, packets: u64) -> u64 {
        match self {
            Variant::Ff => s,
            Variant::FfIw | Variant::FfIwIt => packets.max(1),
        }
    }

    /// Whether the driver should model implosion (the parent's response buffer at `ITR`).
    pub fn implosion_limited(self) -> bool {
        !matches!(self, Variant::FfIwIt)
    }
}

/// Bad parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("window size S must be between 1 and {MAX_WINDOW}")]
    /// The window is 0 or above [`MAX_WINDOW`].
    Window,
}

crate::config::sender_config! {
    /// Sender parameters. [`SenderConfig::new`] gives §4's values.
    pub struct SenderConfig {
        /// Window `S` in packets.
        pub window: u64 = crate::ff::spec::WINDOW,
        /// Minimum interval between two transmissions.
        pub ipg: Duration = crate::spec::ms(crate::ff::spec::IPG_MS),
        /// Lateness a transmission may make up ([`crate::pacing::GapPacer`]): 0 spaces every
        /// transmission `ipg` after the last, as the seed and the simulator do; a driver whose
        /// sleeps are coarser than `ipg` gives a few milliseconds, so a late wake-up sends
        /// the gaps it missed.
        pub ipg_slack: Duration = Duration::ZERO,
        /// RTT assumed for a receiver before its first ACK.
        pub initial_rtt: Duration = crate::spec::ms(crate::ff::spec::INITIAL_RTT_MS),
        /// Lower bound of the RTO.
        pub min_rto: Duration = Duration::from_millis(1),
    }
    /// `S = 64`, `IPG = 1 ms` (§4); initial RTT 100 ms and minimum RTO 1 ms (rmcast's).
    pub fn new();
}

#[derive(Debug)]
struct Rx {
    active: bool,
    rtt: RttEstimator,
    /// The estimate currently counted in the sender's multiset.
    counted: Duration,
    /// The highest cumulative point this receiver has reported (CUMACK).
    cum: u64,
}

#[derive(Debug)]
struct Pending {
    acked: Bitmap,
    count: u64,
    sent_at: Time,
    transmissions: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Tx,
    Rto(u64),
}

/// The FF sender.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    index: Roster,
    rx: Vec<Rx>,
    n_active: u64,
    /// Multiset of the active receivers' RTT estimates (for the largest).
    rtts: BTreeMap<Duration, u32>,
    queue: SendQueue,
    next_seq: u64,
    outstanding: BTreeMap<u64, Pending>,
    buffer: RetransmitBuffer,
    retx: BTreeSet<u64>,
    timers: TimerSet<Key>,
    /// The inter-packet gap since the last transmission.
    tx: crate::pacing::GapPacer,
    out: Outbox,
}

impl Sender {
    /// A sender built from `cfg`; an error if `cfg` is out of range.
    pub fn new(cfg: SenderConfig) -> Result<Self, ConfigError> {
        if cfg.window == 0 || cfg.window > MAX_WINDOW {
            return Err(ConfigError::Window);
        }
        let mut nodes = cfg.receivers.clone();
        nodes.sort_unstable();
        nodes.dedup();
        let rx: Vec<Rx> = nodes
            .iter()
            .map(|_| Rx {
                active: true,
                rtt: RttEstimator::new(RttConfig::default()),
                counted: cfg.initial_rtt,
                cum: 0,
            })
            .collect();
        let mut rtts = BTreeMap::new();
        if !rx.is_empty() {
            rtts.insert(cfg.initial_rtt, rx.len() as u32);
        }
        let queue = SendQueue::new(cfg.queue_limit, MAX_MESSAGE);
        Ok(Sender {
            index: Roster::new(&nodes),
            n_active: rx.len() as u64,
            rx,
            rtts,
            queue,
            next_seq: 0,
            outstanding: BTreeMap::new(),
            buffer: RetransmitBuffer::new(usize::MAX),
            retx: BTreeSet::new(),
            timers: TimerSet::new(),
            tx: crate::pacing::GapPacer::new(cfg.ipg, cfg.ipg_slack),
            out: Outbox::new(),
            cfg,
        })
    }

    /// `RTO = max(2 × largest RTT estimate, min_rto)`.
    pub fn rto(&self) -> Duration {
        let largest = self
            .rtts
            .keys()
            .next_back()
            .copied()
            .unwrap_or(self.cfg.initial_rtt);
        (largest * 2).max(self.cfg.min_rto)
    }

    fn base(&self) -> u64 {
        self.outstanding
            .keys()
            .next()
            .copied()
            .unwrap_or(self.next_seq)
    }

    fn transmit(&mut self, now: Time, seq: u64, retransmission: bool) {
        let Some(data) = self.buffer.get(seq).map(|e| e.data.clone()) else {
            return;
        };
        let env = crate::outbox::envelope(
            self.cfg.session,
            self.cfg.node,
            crate::outbox::data_flags(retransmission),
        );
        let msg = wire::Message::Data {
            seq,
            ts: now.as_nanos(),
            payload: &data,
        };
        if !self
            .out
            .transmit(Dest::Group(self.cfg.group), env, &Message::Ff(msg))
        {
            return;
        }
        self.buffer
            .count_sent(seq, now, retransmission, &mut self.out.stats);
        if let Some(p) = self.outstanding.get_mut(&seq) {
            p.transmissions += 1;
        }
        self.timers.set(Key::Rto(seq), now + self.rto());
        self.tx.on_send(now);
    }

    fn pump(&mut self, now: Time) {
        self.timers.cancel(Key::Tx);
        loop {
            let can_new = !self.queue.is_empty()
                && self.next_seq < self.base().saturating_add(self.cfg.window);
            if self.retx.is_empty() && !can_new {
                return;
            }
            let allowed = self.tx.allowed();
            if now < allowed {
                self.timers.set(Key::Tx, allowed);
                return;
            }
            if let Some(seq) = self.retx.pop_first() {
                if self.outstanding.contains_key(&seq) {
                    self.transmit(now, seq, true);
                }
                continue;
            }
            if let Some(data) = self.queue.pop_front() {
                let seq = self.buffer.keep_new(&mut self.next_seq, data, now);
                self.outstanding.insert(
                    seq,
                    Pending {
                        acked: Bitmap::new(self.rx.len()),
                        count: 0,
                        sent_at: now,
                        transmissions: 0,
                    },
                );
                self.transmit(now, seq, false);
                self.settle(now);
            }
        }
    }

    fn settle(&mut self, now: Time) {
        let n = self.n_active;
        for (seq, p) in self.buffer.settle(&mut self.outstanding, |p| p.count >= n) {
            self.timers.cancel(Key::Rto(seq));
            self.retx.remove(&seq);
            self.out
                .message_done(seq, p.sent_at, now, p.transmissions, false);
        }
        if self.queue.complete(self.outstanding.is_empty()) {
            self.out.event(Event::Completed);
        }
    }

    /// An ACK of `seq` from `from`, and with `cum` (CUMACK) of every packet below `cum`.
    fn on_ack(&mut self, now: Time, from: NodeId, seq: u64, ts: u64, cum: Option<u64>) {
        let Some(i) = self.index.slot(from) else {
            self.out.stats.ignored += 1;
            return;
        };
        let ts = Time::from_nanos(ts);
        let Some(r) = self.rx.get_mut(i).filter(|r| r.active) else {
            self.out.stats.ignored += 1;
            return;
        };
        if ts <= now {
            r.rtt.sample(now - ts);
            let new = r.rtt.srtt().unwrap_or(self.cfg.initial_rtt);
            if new != r.counted {
                let old = core::mem::replace(&mut r.counted, new);
                multiset_remove(&mut self.rtts, old);
                *self.rtts.entry(new).or_insert(0) += 1;
            }
        }
        match self.outstanding.get_mut(&seq) {
            Some(p) if !p.acked.get(i) => {
                p.acked.set(i, true);
                p.count += 1;
            }
            _ => self.out.stats.duplicates += 1,
        }
        if let Some(cum) = cum.filter(|&c| c > r.cum) {
            // Only the packets between the last cumulative point and this one are new.
            let from = core::mem::replace(&mut r.cum, cum);
            for p in self.outstanding.range_mut(from..cum).map(|(_, p)| p) {
                if !p.acked.get(i) {
                    p.acked.set(i, true);
                    p.count += 1;
                }
            }
        }
        self.settle(now);
        self.pump(now);
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Ack { seq, ts } => self.on_ack(now, from, seq, ts, None),
            wire::Message::CumAck { seq, ts, cum } => self.on_ack(now, from, seq, ts, Some(cum)),
            _ => self.out.ignore(),
        }
    }
}

fn multiset_remove(m: &mut BTreeMap<Duration, u32>, k: Duration) {
    if let Some(c) = m.get_mut(&k) {
        *c -= 1;
        if *c == 0 {
            m.remove(&k);
        }
    }
}

impl Agent for Sender {
    crate::outbox::agent_io!(out, on_message);
    fn handle_timeout(&mut self, now: Time) {
        while let Some(key) = self.timers.pop_expired(now) {
            match key {
                Key::Tx => {}
                Key::Rto(seq) => {
                    if self.outstanding.contains_key(&seq) {
                        self.out.stats.timeouts += 1;
                        self.out.event(Event::LossDetected { seq });
                        self.retx.insert(seq);
                    }
                }
            }
        }
        self.pump(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Sender {
    crate::sendq::send_queue_field!(queue, take: pump, after_close: Self::settle);

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(i) = self.index.slot(node) else {
            return false;
        };
        let Some(r) = self.rx.get_mut(i).filter(|r| r.active) else {
            return false;
        };
        r.active = false;
        let counted = r.counted;
        multiset_remove(&mut self.rtts, counted);
        self.n_active -= 1;
        for p in self.outstanding.values_mut() {
            if p.acked.get(i) {
                p.count -= 1;
            }
        }
        self.settle(now);
        self.pump(now);
        true
    }
}

crate::config::receiver_config! {
    /// Receiver parameters.
    pub struct ReceiverConfig {
        /// Window (buffer) size `S`.
        pub window: u64 = window,
        /// Send CUMACK (with the cumulative point) instead of the paper's per-packet ACK.
        pub cumulative: bool = false,
    }
    pub fn new(window: u64);
}

/// The FF receiver.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    w: HeldWindow,
    out: Outbox,
}

impl Receiver {
    /// A receiver built from `cfg`.
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            w: HeldWindow::bounded(cfg.window, MAX_WINDOW),
            cfg,
            out: Outbox::new(),
        }
    }

    fn ack(&mut self, to: NodeId, seq: u64, ts: u64) {
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
        let msg = if self.cfg.cumulative {
            wire::Message::CumAck {
                seq,
                ts,
                cum: self.w.window().base(),
            }
        } else {
            wire::Message::Ack { seq, ts }
        };
        self.out.control(to, env, &Message::Ff(msg));
    }

    fn on_message(&mut self, _now: Time, from: NodeId, m: wire::Message<'_>) {
        let wire::Message::Data { seq, ts, payload } = m else {
            self.out.ignore();
            return;
        };
        let found = self.w.insert(seq, || Bytes::copy_from_slice(payload));
        // Beyond the window: counted and not acknowledged (a duplicate is acknowledged again).
        if found == Insert::TooFar {
            self.out.count_arrival(found);
            return;
        }
        if self.out.count_arrival(found) {
            self.out.deliver_held(&mut self.w);
        }
        self.ack(from, seq, ts);
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message, no_timers);
}

mod deploy;
pub mod spec;
#[cfg(test)]
mod tests;

pub use deploy::{deploy, Deployment, Ff, Params};

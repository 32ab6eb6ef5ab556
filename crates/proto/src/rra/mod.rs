//! `rra` — round-robin acknowledgment (seed 000: Segovia 1996, Ch. 5, proposed as future work
//! and never built; digest §2.8).
//!
//! The thesis's whole specification: "The sender sends a multicast message along with an
//! indicator of which receiver should send the acknowledgment. The selected receiver
//! acknowledges this message and all previous messages successfully received since it last sent
//! an acknowledgment." Receivers take turns in round-robin order, so each DATA solicits exactly
//! one ACK and receivers never contend with each other to acknowledge — the thesis's answer to
//! the ACK collisions that cap MSAW and MBAP.
//!
//! Everything else is rmcast's design, chosen as the simplest sound version:
//!
//! * **Turns.** Message `k` names the next receiver in round-robin order (configuration order,
//!   skipping removed receivers). A message is finished when every receiver has reported
//!   holding it, so with `r` receivers a message is confirmed after at most `r` more DATA
//!   packets: the window should be at least `r` for the pipeline never to wait on polls.
//! * **Window.** At most [`SenderConfig::window`] messages are unfinished; sequence numbers are
//!   absolute `u64` on the wire (no wrap-around reasoning, no ordering assumption).
//! * **What an ACK says.** Not a single number but the receiver's whole status: `cum` (every
//!   message below it held) and a bitmap for `cum + 1 ..= upto`, where `upto` is the highest
//!   message it has seen announced. That is "this message and all previous messages received
//!   since it last sent an acknowledgment", and more: it also tells the sender what is missing,
//!   which is how a receiver reports a loss (a positive ACK with holes acts as a NAK).
//! * **Receivers buffer out of order** within a window of the same size and deliver in order
//!   (unlike MBAP's discard rule), so one loss costs one repair, not a go-back-N.
//! * **Repairs.** For every message an ACK shows missing the sender multicasts the message again
//!   (the thesis prefers multicast retransmission, §2.5.2); the last repair of the batch names
//!   the same receiver as acker, so the repair is itself confirmed; the others name nobody
//!   ([`rra::NO_ACKER`](rmcast_wire::rra::NO_ACKER)).
//! * **Polls.** When the sender cannot send new data because its window is full, every
//!   receiver that holds back the oldest message and has no request outstanding gets a unicast
//!   POLL (the others get turns as the window moves); once the application has closed the
//!   stream and the queue is empty, every receiver that has not confirmed the whole window and
//!   has no request outstanding is polled. A polled receiver answers with an ACK. Polls finish
//!   the tail of a transfer, and carry the protocol when the window is smaller than the group. (An
//!   application that pauses without closing leaves its last messages unfinished until more data,
//!   carrying more turns, follows.)
//! * **Repair pacing.** A message repaired less than one timeout ago is not repaired again on
//!   another report (the first repair may still be on its way); the reporting receiver's
//!   request stays open, so a lost repair is found by its timer.
//! * **Lost DATA or ACK.** Every request (a DATA naming a receiver, a repair naming it, a POLL)
//!   arms that receiver's timer ([`SenderConfig::timeout`]) unless one is already running; an
//!   answer covering the request cancels it. On expiry the sender re-polls the receiver, and
//!   counts the unanswered request; once the count no longer passes the [`LimitRule`] the
//!   sender gives up on that receiver for the messages it has not confirmed (they finish with
//!   `failed: true`) and continues, as the thesis's simulator does for MSAW and MBAP. The same
//!   limit bounds each message's repairs: a receiver that keeps reporting a message missing
//!   after its repairs reached the limit is given up on for that message.
//! * **Skipping.** DATA and POLL carry `low`, the oldest message the sender still holds; a
//!   receiver missing something older skips it (reporting [`Event::LossDetected`]) and keeps
//!   absolute numbers in [`Event::Delivered`], so the gap is visible to the application. A
//!   claimed skip of more than [`MAX_SKIP`] messages is treated as malformed.
//! * **No random ACK delay**: answers are solicited one at a time, there is nothing to spread.

use crate::roster::Roster;
use crate::saw::timeout::LimitRule;
use crate::sendq::SendQueue;
use crate::timer::TimerSet;
use crate::window::Bitmap;
use crate::{Agent, Dest, Event, NodeId, Outbox, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{rra as wire, Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::{BTreeMap, VecDeque};

/// Largest application message one `rra` DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 20;

/// Largest window (its ACK bitmap is then 8 KiB).
pub const MAX_WINDOW: usize = 1 << 16;

/// Largest skip a receiver accepts from one packet's `low`.
pub const MAX_SKIP: u64 = 1 << 20;

crate::config::sender_config! {
    /// Sender parameters.
    pub struct SenderConfig {
        /// Unfinished messages at most (1..=[`MAX_WINDOW`]).
        pub window: usize = window,
        /// How long to wait for a solicited ACK.
        pub timeout: Duration = timeout,
        /// Unanswered requests in a row allowed per receiver; `None` for no limit.
        pub max_retransmissions: Option<u32> = None,
        /// `count <= max` (thesis wording, default) or `count < max`.
        pub limit_rule: LimitRule = LimitRule::default(),
    }
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be
    /// changed before building.
    pub fn new(window: usize, timeout: Duration);
}

#[derive(Debug)]
struct Slot {
    data: Bytes,
    sent_at: Time,
    transmissions: u32,
    /// Receivers (by configuration index) that reported holding it or were given up on.
    confirmed: Bitmap,
    failed: bool,
    /// Last repair of this message.
    repaired_at: Option<Time>,
}

#[derive(Debug, Default, Clone)]
struct Peer {
    active: bool,
    /// Highest `upto` requested and not yet answered.
    asked: Option<u64>,
    /// Unanswered requests in a row.
    tries: u32,
}

/// The `rra` sender.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    index: Roster,
    peers: Vec<Peer>,
    active: usize,
    turn: usize,
    queue: SendQueue,
    base: u64,
    window: VecDeque<Slot>,
    timers: TimerSet<usize>,
    out: Outbox,
}

impl Sender {
    /// Build a sender; the window is clamped to `1..=`[`MAX_WINDOW`].
    pub fn new(cfg: SenderConfig) -> Self {
        let mut cfg = cfg;
        cfg.window = cfg.window.clamp(1, MAX_WINDOW);
        let index = Roster::new(&cfg.receivers);
        let mut peers = vec![Peer::default(); cfg.receivers.len()];
        for i in index.slots() {
            if let Some(p) = peers.get_mut(i) {
                p.active = true;
            }
        }
        let queue = SendQueue::new(cfg.queue_limit, MAX_MESSAGE);
        Sender {
            active: index.len(),
            cfg,
            index,
            peers,
            turn: 0,
            queue,
            base: 0,
            window: VecDeque::new(),
            timers: TimerSet::new(),
            out: Outbox::new(),
        }
    }

    /// Messages queued or unfinished.
    pub fn backlog(&self) -> usize {
        self.queue.len() + self.window.len()
    }

    fn next_seq(&self) -> u64 {
        self.base + self.window.len() as u64
    }

    fn node_of(&self, i: usize) -> NodeId {
        self.cfg.receivers.get(i).copied().unwrap_or_default()
    }

    fn emit(&mut self, dest: Dest, flags: u8, msg: wire::Message<'_>) {
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, flags);
        self.out.transmit(dest, env, &Message::Rra(msg));
    }

    /// Record a request to receiver `i` covering messages up to `upto`.
    fn ask(&mut self, now: Time, i: usize, upto: u64) {
        if let Some(p) = self.peers.get_mut(i) {
            p.asked = Some(p.asked.map_or(upto, |a| a.max(upto)));
        }
        if !self.timers.is_armed(i) {
            self.timers.set(i, now + self.cfg.timeout);
        }
    }

    fn send_data(&mut self, now: Time, seq: u64, acker: Option<usize>, repair: bool) {
        let low = self.base;
        let Some(slot) = self.window.get_mut((seq - low) as usize) else {
            return;
        };
        slot.transmissions += 1;
        let data = slot.data.clone();
        if repair {
            self.out.stats.repairs_sent += 1;
        } else {
            self.out.stats.data_sent += 1;
        }
        let acker_id = acker.map_or(wire::NO_ACKER, |i| self.node_of(i).0);
        self.emit(
            Dest::Group(self.cfg.group),
            if repair { FLAG_RETRANSMISSION } else { 0 },
            wire::Message::Data {
                seq,
                low,
                acker: acker_id,
                payload: &data,
            },
        );
        if let Some(i) = acker {
            self.ask(now, i, seq);
        }
    }

    fn poll(&mut self, now: Time, i: usize) {
        let Some(upto) = self.next_seq().checked_sub(1) else {
            return;
        };
        self.out.stats.control_sent += 1;
        let low = self.base;
        self.emit(
            Dest::Node(self.node_of(i)),
            0,
            wire::Message::Poll { upto, low },
        );
        self.ask(now, i, upto);
    }

    fn next_turn(&mut self) -> Option<usize> {
        let n = self.peers.len();
        for _ in 0..n {
            let i = self.turn % n.max(1);
            self.turn = (i + 1) % n.max(1);
            if self.peers.get(i).is_some_and(|p| p.active) {
                return Some(i);
            }
        }
        None
    }

    /// Send new messages while the window has room; then poll receivers that owe a report.
    fn fill(&mut self, now: Time) {
        while self.window.len() < self.cfg.window {
            let Some(data) = self.queue.pop_front() else {
                break;
            };
            let mut confirmed = Bitmap::new(self.peers.len());
            for (i, p) in self.peers.iter().enumerate() {
                if !p.active {
                    confirmed.set(i, true);
                }
            }
            self.window.push_back(Slot {
                data,
                sent_at: now,
                transmissions: 0,
                confirmed,
                failed: false,
                repaired_at: None,
            });
            let seq = self.next_seq() - 1;
            let acker = self.next_turn();
            self.send_data(now, seq, acker, false);
            self.advance(now);
        }
        self.poll_idle(now);
        self.maybe_complete();
    }

    fn poll_idle(&mut self, now: Time) {
        let closing = self.queue.is_closed() && self.queue.is_empty();
        let full = self.window.len() >= self.cfg.window;
        if self.window.is_empty() || !(closing || full) {
            return;
        }
        for i in 0..self.peers.len() {
            let idle = self
                .peers
                .get(i)
                .is_some_and(|p| p.active && p.asked.is_none());
            // Window full: only a receiver holding back the oldest message must be asked
            // now (the others get turns as the window moves). Closing: everyone who has
            // not confirmed everything.
            let owes = idle
                && if closing {
                    self.window.iter().any(|s| !s.confirmed.get(i))
                } else {
                    self.window.front().is_some_and(|s| !s.confirmed.get(i))
                };
            if owes {
                self.poll(now, i);
            }
        }
    }

    /// Finish messages at the front that every receiver confirmed.
    fn advance(&mut self, now: Time) {
        let r = self.peers.len();
        while self
            .window
            .front()
            .is_some_and(|s| s.confirmed.count_ones() >= r)
        {
            let Some(slot) = self.window.pop_front() else {
                break;
            };
            self.out.message_done(
                self.base,
                slot.sent_at,
                now,
                slot.transmissions,
                slot.failed,
            );
            self.base += 1;
        }
    }

    fn on_ack(&mut self, now: Time, from: NodeId, cum: u64, upto: u64, bitmap: &[u8]) {
        let Some(i) = self.index.slot(from) else {
            self.out.stats.ignored += 1;
            return;
        };
        let next = self.next_seq();
        if cum > next || (upto >= next && cum <= upto) {
            // Reports messages never sent.
            self.out.stats.malformed += 1;
            return;
        }
        let base = self.base;
        let holds = |seq: u64| -> bool {
            if seq < cum {
                return true;
            }
            let Some(bit) = seq.checked_sub(cum + 1) else {
                return false;
            };
            usize::try_from(bit / 8)
                .ok()
                .and_then(|b| bitmap.get(b))
                .is_some_and(|byte| byte >> (bit % 8) & 1 == 1)
        };
        let mut missing = Vec::new();
        for (k, slot) in self.window.iter_mut().enumerate() {
            let seq = base + k as u64;
            if holds(seq) {
                slot.confirmed.set(i, true);
            } else if seq <= upto && !slot.confirmed.get(i) {
                missing.push(seq);
            }
        }
        let answered = self
            .peers
            .get(i)
            .and_then(|p| p.asked)
            .is_none_or(|a| upto >= a || cum > a);
        if answered {
            if let Some(p) = self.peers.get_mut(i) {
                p.asked = None;
                p.tries = 0;
            }
            self.timers.cancel(i);
        } else {
            // An answer to an older request: the receiver is alive; wait a full timeout
            // for the newer one.
            self.out.stats.duplicates += 1;
            if let Some(p) = self.peers.get_mut(i) {
                p.tries = 0;
            }
            self.timers.set(i, now + self.cfg.timeout);
        }
        // Repair what it lacks, except messages repaired less than a timeout ago (their
        // repair may still be on its way; the request below re-polls if it was lost).
        let timeout = self.cfg.timeout;
        let (limit, rule) = (self.cfg.max_retransmissions, self.cfg.limit_rule);
        // A message whose repairs reached the limit is given up on for this receiver.
        missing.retain(|&seq| {
            let Some(slot) = self.window.get_mut((seq - base) as usize) else {
                return false;
            };
            if rule.allows(slot.transmissions.saturating_sub(1), limit) {
                return true;
            }
            slot.confirmed.set(i, true);
            slot.failed = true;
            false
        });
        missing.retain(|&seq| {
            self.window
                .get((seq - base) as usize)
                .is_some_and(|s| s.repaired_at.is_none_or(|t| now >= t + timeout))
        });
        if let Some(&first) = missing.first() {
            self.out.event(Event::LossDetected { seq: first });
        }
        let n = missing.len();
        for (k, &seq) in missing.iter().enumerate() {
            let acker = (k + 1 == n).then_some(i);
            if let Some(slot) = self.window.get_mut((seq - base) as usize) {
                slot.repaired_at = Some(now);
            }
            self.send_data(now, seq, acker, true);
        }
        let still = self
            .window
            .iter()
            .enumerate()
            .any(|(k, s)| !s.confirmed.get(i) && base + k as u64 <= upto);
        if still {
            self.ask(now, i, upto);
        }
        self.advance(now);
        self.fill(now);
    }

    fn on_timer(&mut self, now: Time, i: usize) {
        let (limit, rule) = (self.cfg.max_retransmissions, self.cfg.limit_rule);
        let Some(p) = self.peers.get_mut(i) else {
            return;
        };
        if p.asked.is_none() || !p.active {
            return;
        }
        self.out.stats.timeouts += 1;
        if rule.allows(p.tries, limit) {
            p.tries += 1;
            p.asked = None;
            let first_missing = self
                .window
                .iter()
                .position(|s| !s.confirmed.get(i))
                .map(|k| self.base + k as u64);
            if let Some(seq) = first_missing {
                self.out.event(Event::LossDetected { seq });
            }
            self.poll(now, i);
            return;
        }
        // Give up on receiver i for everything it has not confirmed.
        p.asked = None;
        p.tries = 0;
        for slot in &mut self.window {
            if !slot.confirmed.get(i) {
                slot.confirmed.set(i, true);
                slot.failed = true;
            }
        }
        self.advance(now);
        self.fill(now);
    }

    fn maybe_complete(&mut self) {
        if self.queue.complete(self.window.is_empty()) {
            self.timers.clear();
            self.out.event(Event::Completed);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Ack { cum, upto, bitmap } => self.on_ack(now, from, cum, upto, bitmap),
            _ => self.out.ignore(),
        }
    }
}

impl Agent for Sender {
    crate::outbox::agent_io!(out, on_message, timers => on_timer);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Sender {
    crate::sendq::send_queue_field!(queue, take: fill, after_close: |s, now| {
        s.poll_idle(now);
        s.maybe_complete();
    });

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(i) = self.index.remove(node) else {
            return false;
        };
        if let Some(p) = self.peers.get_mut(i) {
            *p = Peer::default();
        }
        self.active = self.active.saturating_sub(1);
        self.timers.cancel(i);
        for slot in &mut self.window {
            slot.confirmed.set(i, true);
        }
        self.advance(now);
        self.fill(now);
        true
    }
}

crate::config::receiver_config! {
    /// Receiver parameters.
    pub struct ReceiverConfig {
        /// Messages buffered beyond the next expected one (the sender's window).
        pub window: usize = window,
    }
    pub fn new(window: usize);
}

/// The `rra` receiver.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// Next message to deliver; everything below is delivered or skipped.
    cum: u64,
    buffer: BTreeMap<u64, Bytes>,
    highest: Option<u64>,
    out: Outbox,
}

impl Receiver {
    /// Build a receiver; the window is clamped to `1..=`[`MAX_WINDOW`].
    pub fn new(cfg: ReceiverConfig) -> Self {
        let mut cfg = cfg;
        cfg.window = cfg.window.clamp(1, MAX_WINDOW);
        Receiver {
            cfg,
            cum: 0,
            buffer: BTreeMap::new(),
            highest: None,
            out: Outbox::new(),
        }
    }

    /// Messages delivered or skipped so far.
    pub fn next_expected(&self) -> u64 {
        self.cum
    }

    fn deliver_ready(&mut self) {
        while let Some(data) = self.buffer.remove(&self.cum) {
            self.out.deliver(self.cum, data);
            self.cum += 1;
        }
    }

    /// The sender no longer holds anything below `low`. Returns false if the claim is
    /// implausible.
    fn skip_to(&mut self, low: u64) -> bool {
        if low <= self.cum {
            return true;
        }
        if low - self.cum > MAX_SKIP {
            return false;
        }
        while self.cum < low {
            match self.buffer.remove(&self.cum) {
                Some(data) => self.out.deliver(self.cum, data),
                None => self.out.event(Event::LossDetected { seq: self.cum }),
            }
            self.cum += 1;
        }
        self.deliver_ready();
        true
    }

    fn send_ack(&mut self, to: NodeId) {
        let cum = self.cum;
        let upto = self
            .highest
            .unwrap_or(0)
            .min(cum.saturating_add(self.cfg.window as u64))
            .max(cum.saturating_sub(1));
        let len = wire::bitmap_bytes(cum, upto) as usize;
        let mut bitmap = vec![0u8; len];
        let range = if upto > cum {
            self.buffer.range(cum + 1..=upto)
        } else {
            self.buffer.range(0..0)
        };
        for (&seq, _) in range {
            let bit = seq - cum - 1;
            if let Some(b) = bitmap.get_mut((bit / 8) as usize) {
                *b |= 1 << (bit % 8);
            }
        }
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
        let msg = Message::Rra(wire::Message::Ack {
            cum,
            upto,
            bitmap: &bitmap,
        });
        self.out.control(to, env, &msg);
    }

    fn saw(&mut self, seq: u64) {
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
    }

    fn on_message(&mut self, _now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Data {
                seq,
                low,
                acker,
                payload,
            } => {
                if !self.skip_to(low) {
                    self.out.stats.malformed += 1;
                    return;
                }
                if seq < self.cum || self.buffer.contains_key(&seq) {
                    self.out.stats.duplicates += 1;
                } else if seq - self.cum < self.cfg.window as u64 {
                    self.buffer.insert(seq, Bytes::copy_from_slice(payload));
                    self.deliver_ready();
                } else {
                    self.out.stats.ignored += 1;
                }
                self.saw(seq);
                if acker == self.cfg.node.0 {
                    self.send_ack(from);
                }
            }
            wire::Message::Poll { upto, low } => {
                if !self.skip_to(low) {
                    self.out.stats.malformed += 1;
                    return;
                }
                self.saw(upto);
                self.send_ack(from);
            }
            _ => self.out.ignore(),
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message, no_timers);
}

mod deploy;
pub mod spec;
#[cfg(test)]
mod tests;

pub use deploy::{deploy, Deployment, Params, Rra};

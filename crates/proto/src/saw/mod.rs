//! `saw` — multicast stop-and-wait (seed 000: Segovia 1996, §2.5, §2.5.1, §2.5.2).
//!
//! One message is outstanding at a time. The sender multicasts it with a 1-bit sequence
//! number and waits for a unicast ACK from every receiver. On timeout it retransmits:
//!
//! * [`RetransmitMode::Multicast`] (§2.5.2, used in all of the thesis's experiments): one
//!   timer and one retransmission count for the group; on expiry with any ACK missing the
//!   data is re-multicast to everyone, and the limit bounds the total per message;
//! * [`RetransmitMode::Unicast`] (§2.5): a timer and a count per receiver; on expiry the
//!   data is unicast to that receiver only.
//!
//! The timeout is either a plain [`Duration`] ([`SenderConfig::timeout`]) or the thesis's
//! `constant`/`formula` method ([`SenderConfig::timeout_rule`], see [`timeout`]): with a rule the
//! sender computes `d + a·r + i + increment` (or the constant) for its receiver count and bit
//! time when it is built. The retransmission limit is compared as the thesis words it
//! ([`LimitRule::NotExceeded`]: retransmit while `count <= max`, so `max + 1` retransmissions);
//! [`LimitRule::AtMost`] gives the stricter `count < max`.
//!
//! When the limit is reached the message is recorded as failed ([`Event::MessageDone`] with
//! `failed: true`) and the sender continues with the next one, as the thesis's simulator does.
//!
//! A receiver that gets the sequence number it expects delivers the message, ACKs it and flips
//! its expected bit; any other sequence number is a duplicate (its earlier ACK was lost) and is
//! re-ACKed without delivering. With `ack_delay_max > 0` each ACK is held back for a uniform
//! random delay in `[0, ack_delay_max]` (§2.5.1, randomly timed ACKs).
//!
//! A 1-bit sequence number is only safe on channels that keep order between two nodes, which
//! holds on the thesis's Ethernet and on every rmcast driver's per-pair links.

use crate::rng::AgentRng;
use crate::roster::Roster;
use crate::sendq::SendQueue;
use crate::timer::TimerSet;
use crate::{Agent, Dest, Event, GroupId, NodeId, Outbox, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{saw as wire, Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};

mod deploy;
pub mod spec;
pub mod timeout;

pub use deploy::{deploy, Deployment, Params, Saw};
pub use timeout::{LimitRule, TimeoutMethod, TimeoutRule, BIT_TIME_10MBPS};

/// Largest application message one `saw` DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 1;

/// How lost data is repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetransmitMode {
    /// One group timer; re-multicast to all (§2.5.2).
    #[default]
    Multicast,
    /// One timer per receiver; unicast to the one that is missing (§2.5).
    Unicast,
}

crate::config::sender_config! {
    /// Sender parameters.
    pub struct SenderConfig {
        /// Whether a retransmission is multicast or unicast to each receiver lacking it.
        pub mode: RetransmitMode = RetransmitMode::Multicast,
        /// Retransmission timeout, used when [`timeout_rule`](Self::timeout_rule) is `None`.
        pub timeout: Duration = timeout,
        /// The thesis's `constant`/`formula` timeout method; when set it replaces `timeout`,
        /// evaluated for this sender's receiver count.
        pub timeout_rule: Option<TimeoutRule> = None,
        /// Retransmission limit per message (multicast mode) or per receiver and message
        /// (unicast mode); `None` for no limit. How it is compared:
        /// [`limit_rule`](Self::limit_rule).
        pub max_retransmissions: Option<u32> = None,
        /// `count <= max` (thesis, default) or `count < max`.
        pub limit_rule: LimitRule = LimitRule::default(),
    }
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be
    /// changed before building.
    pub fn new(timeout: Duration);
}

/// The thesis's SAW parameters in its own units (command-file names in brackets, §3.6), to
/// build consistent sender and receiver configurations: the formula timeout includes the
/// random ACK interval `i` that the receivers use as their delay bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThesisParams {
    /// Frame sizes \[DATAPKTSIZE, ACKPKTSIZE\], random ACK interval \[SAWRANDWAIT\], timeout
    /// method and value \[SAWTIMEOUTMETHOD, SAWTIMEOUT\] and bit time.
    pub timing: TimeoutRule,
    /// Unicast or multicast retransmission \[SAWRETRANS\].
    pub mode: RetransmitMode,
    /// Retransmission limit, compared as the thesis words it \[SAWRETRANSLIM\].
    pub max_retransmissions: Option<u32>,
}

impl ThesisParams {
    /// The sender's configuration for this group.
    pub fn sender_config(
        &self,
        node: NodeId,
        group: GroupId,
        receivers: Vec<NodeId>,
    ) -> SenderConfig {
        let mut cfg = SenderConfig::new(node, group, receivers, Duration::ZERO);
        cfg.timeout_rule = Some(self.timing);
        cfg.mode = self.mode;
        cfg.max_retransmissions = self.max_retransmissions;
        cfg.limit_rule = LimitRule::NotExceeded;
        cfg
    }

    /// A receiver's configuration.
    pub fn receiver_config(&self, node: NodeId) -> ReceiverConfig {
        let mut rc = ReceiverConfig::new(node);
        rc.ack_delay_max = self.timing.rand();
        rc
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TimerKey {
    Group,
    Receiver(usize),
}

#[derive(Debug)]
struct Outstanding {
    seq: u64,
    bit: u8,
    data: Bytes,
    acked: Vec<bool>,
    missing: usize,
    /// Per-receiver retransmission counts (unicast mode) or one shared count (index 0).
    retransmissions: Vec<u32>,
    /// Receivers given up on (unicast mode).
    failed_any: bool,
    transmissions: u32,
    sent_at: Time,
}

/// The `saw` sender.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    /// Receivers, sorted, for lookups by node id.
    index: Roster,
    queue: SendQueue,
    current: Option<Outstanding>,
    next_seq: u64,
    timers: TimerSet<TimerKey>,
    out: Outbox,
}

impl Sender {
    /// A sender built from `cfg`.
    pub fn new(cfg: SenderConfig) -> Self {
        let index = Roster::new(&cfg.receivers);
        let mut cfg = cfg;
        if let Some(rule) = cfg.timeout_rule {
            cfg.timeout = rule.saw(index.len() as u64);
        }
        let queue = SendQueue::new(cfg.queue_limit, MAX_MESSAGE);
        Sender {
            cfg,
            index,
            queue,
            current: None,
            next_seq: 0,
            timers: TimerSet::new(),
            out: Outbox::new(),
        }
    }

    /// The retransmission timeout in use.
    pub fn timeout(&self) -> Duration {
        self.cfg.timeout
    }

    /// Messages queued or outstanding.
    pub fn backlog(&self) -> usize {
        self.queue.len() + usize::from(self.current.is_some())
    }

    fn emit(&mut self, dest: Dest, flags: u8, msg: wire::Message<'_>) {
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, flags);
        // Sizes were checked in `send`, so encoding cannot fail; if it ever did, the packet
        // is dropped and counted rather than panicking.
        self.out.transmit(dest, env, &Message::Saw(msg));
    }

    fn transmit_current(&mut self, dest: Dest, retransmission: bool) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        cur.transmissions += 1;
        let (bit, data) = (cur.bit, cur.data.clone());
        if retransmission {
            self.out.stats.repairs_sent += 1;
        } else {
            self.out.stats.data_sent += 1;
        }
        let flags = if retransmission {
            FLAG_RETRANSMISSION
        } else {
            0
        };
        self.emit(
            dest,
            flags,
            wire::Message::Data {
                seq: bit,
                payload: &data,
            },
        );
    }

    fn start_next(&mut self, now: Time) {
        if self.current.is_some() {
            return;
        }
        let Some(data) = self.queue.pop_front() else {
            self.maybe_complete();
            return;
        };
        let n = self.cfg.receivers.len();
        let seq = self.next_seq;
        self.next_seq += 1;
        let counters = match self.cfg.mode {
            RetransmitMode::Multicast => 1,
            RetransmitMode::Unicast => n,
        };
        self.current = Some(Outstanding {
            seq,
            bit: (seq & 1) as u8,
            data,
            acked: vec![false; n],
            missing: self.index.len(),
            retransmissions: vec![0; counters],
            failed_any: false,
            transmissions: 0,
            sent_at: now,
        });
        if self.index.is_empty() {
            // Nobody to wait for: the message is trivially done.
            self.finish(now);
            return;
        }
        self.transmit_current(Dest::Group(self.cfg.group), false);
        let at = now + self.cfg.timeout;
        match self.cfg.mode {
            RetransmitMode::Multicast => self.timers.set(TimerKey::Group, at),
            RetransmitMode::Unicast => {
                for i in self.index.slots() {
                    self.timers.set(TimerKey::Receiver(i), at);
                }
            }
        }
    }

    fn finish(&mut self, now: Time) {
        self.timers.clear();
        if let Some(cur) = self.current.take() {
            let failed = cur.failed_any;
            self.out
                .message_done(cur.seq, cur.sent_at, now, cur.transmissions, failed);
        }
        self.start_next(now);
    }

    fn maybe_complete(&mut self) {
        if self.queue.complete(self.current.is_none()) {
            self.out.event(Event::Completed);
        }
    }

    fn on_ack(&mut self, now: Time, from: NodeId, bit: u8) {
        let Some(i) = self.index.slot(from) else {
            self.out.stats.ignored += 1;
            return;
        };
        let Some(cur) = self.current.as_mut() else {
            self.out.stats.duplicates += 1;
            return;
        };
        if bit != cur.bit {
            self.out.stats.duplicates += 1;
            return;
        }
        match cur.acked.get_mut(i) {
            Some(a) if !*a => {
                *a = true;
                cur.missing -= 1;
            }
            _ => {
                self.out.stats.duplicates += 1;
                return;
            }
        }
        let done = cur.missing == 0;
        if self.cfg.mode == RetransmitMode::Unicast {
            self.timers.cancel(TimerKey::Receiver(i));
        }
        if done {
            self.finish(now);
        }
    }

    fn on_timer(&mut self, now: Time, key: TimerKey) {
        let (limit, rule) = (self.cfg.max_retransmissions, self.cfg.limit_rule);
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        self.out.stats.timeouts += 1;
        self.out.event(Event::LossDetected { seq: cur.seq });
        let slot = match key {
            TimerKey::Group => 0,
            TimerKey::Receiver(i) => i,
        };
        let Some(count) = cur.retransmissions.get_mut(slot) else {
            return;
        };
        if !rule.allows(*count, limit) {
            cur.failed_any = true;
            match key {
                TimerKey::Group => self.finish(now),
                TimerKey::Receiver(i) => {
                    // Give up on this receiver for this message: count it as settled.
                    if let Some(a) = cur.acked.get_mut(i) {
                        if !*a {
                            *a = true;
                            cur.missing -= 1;
                        }
                    }
                    if cur.missing == 0 {
                        self.finish(now);
                    }
                }
            }
            return;
        }
        *count += 1;
        let dest = match key {
            TimerKey::Group => Dest::Group(self.cfg.group),
            TimerKey::Receiver(i) => match self.cfg.receivers.get(i) {
                Some(&n) => Dest::Node(n),
                None => return,
            },
        };
        self.transmit_current(dest, true);
        self.timers.set(key, now + self.cfg.timeout);
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Ack { seq } => self.on_ack(now, from, seq),
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
    crate::sendq::send_queue_field!(queue, take: start_next, after_close: |s, _| s.maybe_complete());

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(i) = self.index.remove(node) else {
            return false;
        };
        self.timers.cancel(TimerKey::Receiver(i));
        let settled = match self.current.as_mut() {
            Some(cur) => {
                if let Some(a) = cur.acked.get_mut(i) {
                    if !*a {
                        *a = true;
                        cur.missing -= 1;
                    }
                }
                cur.missing == 0
            }
            None => false,
        };
        if settled {
            self.finish(now);
        }
        true
    }
}

crate::config::receiver_config! {
    /// Receiver parameters.
    pub struct ReceiverConfig {
        /// Upper bound of the random ACK delay (§2.5.1); zero ACKs at once.
        pub ack_delay_max: Duration = Duration::ZERO,
    }
    pub fn new();
}

/// The `saw` receiver.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    rng: AgentRng,
    expected: u8,
    delivered: u64,
    /// ACKs held back by the random delay, keyed by arrival order.
    pending: TimerSet<u64>,
    pending_acks: std::collections::BTreeMap<u64, (NodeId, u8)>,
    pending_counter: u64,
    out: Outbox,
}

impl Receiver {
    /// A receiver built from `cfg`, drawing its random delays from `rng`.
    pub fn new(cfg: ReceiverConfig, rng: AgentRng) -> Self {
        Receiver {
            cfg,
            rng,
            expected: 0,
            delivered: 0,
            pending: TimerSet::new(),
            pending_acks: Default::default(),
            pending_counter: 0,
            out: Outbox::new(),
        }
    }

    fn send_ack(&mut self, to: NodeId, bit: u8) {
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
        self.out
            .control(to, env, &Message::Saw(wire::Message::Ack { seq: bit }));
    }

    fn ack(&mut self, now: Time, to: NodeId, bit: u8) {
        if self.cfg.ack_delay_max.is_zero() {
            self.send_ack(to, bit);
            return;
        }
        let due = now
            + self
                .rng
                .duration_between(Duration::ZERO, self.cfg.ack_delay_max);
        let key = self.pending_counter;
        self.pending_counter += 1;
        self.pending.set(key, due);
        self.pending_acks.insert(key, (to, bit));
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Data { seq, payload } => {
                if seq == self.expected {
                    let data = Bytes::copy_from_slice(payload);
                    self.out.deliver(self.delivered, data);
                    self.delivered += 1;
                    self.expected ^= 1;
                } else {
                    self.out.stats.duplicates += 1;
                }
                self.ack(now, from, seq);
            }
            _ => self.out.ignore(),
        }
    }

    fn on_ack_timer(&mut self, _now: Time, key: u64) {
        if let Some((to, bit)) = self.pending_acks.remove(&key) {
            self.send_ack(to, bit);
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message, pending => on_ack_timer);
}

#[cfg(test)]
mod tests;

//! `bap` — multicast block acknowledgment, MBAP (seed 000: Segovia 1996, §2.6, §2.6.1;
//! digest §2.4–2.5). The thesis's tables call it "GBN".
//!
//! **Sender.** A window of at most `n` messages; sequence numbers run modulo `2n`
//! (eq. 2.1). Every DATA is multicast; as each one is sent the single *packet timer* is set
//! to the packet timeout (so it runs from the most recent transmission). The sender keeps an
//! *ACK vector* — per receiver a validity bit and the last sequence number it acknowledged —
//! and finds the newest message every receiver has acknowledged by the **minimum-rank rule**:
//! map each receiver's sequence number to its rank (offset from the window's first message,
//! modulo `2n`), take the minimum, map it back ([`all_acked_rank`]). The messages up to that
//! point are finished ([`Event::MessageDone`]), the window advances, ACK-vector slots that no
//! longer point into the window are cleared, and queued messages fill the window. An ACK whose
//! sequence number is not in the active window, or not newer than the receiver's slot, is a
//! duplicate and ignored. When the packet timer expires the sender retransmits **the whole
//! active window** in order (go-back-N) and increments each message's retransmission count.
//!
//! **Retransmission limit** (thesis: "the protocol fails if the retransmission count is
//! exceeded"; its simulator records `fail = 1` and continues). At a timeout, every message at
//! the front of the window whose count no longer passes the [`LimitRule`] is finished with
//! `failed: true` and leaves the window; the rest is retransmitted and the window refilled.
//! Counts are non-increasing from the front of the window, so this gives up on exactly the
//! messages that reached the limit.
//!
//! **Receiver.** It delivers only the next message in sequence and **discards anything else
//! without an ACK**. Each in-sequence message increments a counter and resets the ACK-delay
//! timer `t`; when the counter reaches the window size `n` the receiver unicasts an ACK naming
//! the last message received in sequence and resets the counter. When the ACK-delay timer fires
//! (nothing in sequence arrived for `t`: a loss, a lost ACK, or a sender that could not fill
//! its window) the receiver ACKs its current status and **re-arms the timer**. With
//! `ack_delay_max > 0` every ACK is held back by a uniform random delay in `[0, ack_delay_max]`
//! (§2.6.1, BAPrand); an ACK already waiting is not doubled, and it carries the status at the
//! moment it leaves (cumulative, so never wrong, possibly newer).
//!
//! **Timeout.** [`SenderConfig::timeout`], or the thesis's method via
//! [`SenderConfig::timeout_rule`]: `formula` gives `n·d + a·r + i + t + increment` bit times
//! (`t` = [`SenderConfig::ack_delay_timeout_bits`]).
//!
//! **Metrics.** The thesis measures MBAP per *block* (a window's worth of messages sent
//! together and acknowledged together, digest §1.9). The sender reports one
//! [`Event::MessageDone`] per message with `sent_at` (first transmission) and `done_at` (the
//! ACK that finished it); messages of one block share both times under a saturated source, so a
//! collector can reconstruct blocks by grouping consecutive messages with equal `done_at`, or
//! average per-message records, which weights every block by its size, as the thesis's
//! per-record averages do.
//!
//! **Choices where the thesis is silent** (documented here, tested in `tests.rs`):
//!
//! * The ACK-delay timer is armed by any DATA arrival when it is idle (the thesis only says it
//!   is reset by in-sequence data and re-armed after firing), so a receiver whose last ACK was
//!   lost answers the sender's go-back-N retransmission, which it otherwise discards silently
//!   ([`ReceiverConfig::arm_on_any_data`]).
//! * The ACK the ACK-delay timer sends resets the message counter, as the window's ACK does
//!   ([`ReceiverConfig::timer_ack_resets_counter`]; the thesis names only the latter).
//! * Re-arming after firing stops after [`ReceiverConfig::idle_ack_limit`] consecutive firings
//!   with no DATA in between (default 3; `None` = the thesis's literal "re-arm forever"). The
//!   stop cannot stall the protocol: the sender keeps retransmitting, and its DATA re-arms it.
//! * A receiver that has received nothing yet has no status (the thesis's "last received
//!   = −1") and sends no ACK.
//! * DATA carries `first`, the oldest sequence number still in the sender's window (an rmcast
//!   addition). A receiver waiting for a message the sender gave up on finds its expected number
//!   before `first` and skips to it, reporting [`Event::LossDetected`] for each skipped message;
//!   application sequence numbers in [`Event::Delivered`] stay absolute, so the gap is visible.
//!   Modulo `2n` this is exact while the receiver lags by fewer than `n` messages.
//! * Like the thesis (which cites Tanenbaum's go-back-N), the modulo-`2n` numbering assumes
//!   each sender→receiver path keeps packet order, as the thesis's Ethernet and every rmcast
//!   driver's per-pair links do.

mod deploy;
pub mod spec;

use crate::rng::AgentRng;
use crate::roster::Roster;
use crate::saw::timeout::{LimitRule, TimeoutRule};
use crate::sendq::SendQueue;
use crate::timer::TimerSet;
use crate::{Agent, Dest, Event, GroupId, NodeId, Outbox, Time};
use bytes::Bytes;
use core::time::Duration;
pub use deploy::{deploy, Bap, Deployment, Params};
use rmcast_wire::{bap as wire, Message, HEADER_LEN, MAX_DATAGRAM};
use std::collections::VecDeque;

/// Largest application message one `bap` DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 4;

/// Largest window: sequence numbers modulo `2n` must fit the wire's `u16`.
pub const MAX_WINDOW: u16 = 32_767;

/// Rank of `seq` in a window whose first message is `first`, modulo `modulus` (= 2n).
pub fn rank(seq: u16, first: u16, modulus: u16) -> u16 {
    let m = u32::from(modulus.max(1));
    ((u32::from(seq) + m - u32::from(first) % m) % m) as u16
}

/// The minimum-rank rule: given the window's first sequence number, its current size and each
/// receiver's ACK-vector slot (`None` = no valid ACK), the rank of the newest message every
/// receiver has acknowledged, or `None` if some receiver has acknowledged nothing in the window.
pub fn all_acked_rank(
    first: u16,
    size: u16,
    modulus: u16,
    slots: impl IntoIterator<Item = Option<u16>>,
) -> Option<u16> {
    let mut min: Option<u16> = None;
    for slot in slots {
        let r = rank(slot?, first, modulus);
        if r >= size {
            return None;
        }
        min = Some(min.map_or(r, |m| m.min(r)));
    }
    min
}

crate::config::sender_config! {
    /// Sender parameters.
    pub struct SenderConfig {
        /// Maximum window `n` (1..=[`MAX_WINDOW`]); sequence numbers run modulo `2n`.
        pub window: u16 = window,
        /// Packet timeout, used when [`timeout_rule`](Self::timeout_rule) is `None`.
        pub timeout: Duration = timeout,
        /// The thesis's `constant`/`formula` method; replaces `timeout` when set.
        pub timeout_rule: Option<TimeoutRule> = None,
        /// The receivers' ACK-delay timeout `t` in bit times, for the formula.
        pub ack_delay_timeout_bits: u64 = 0,
        /// Retransmission limit per message; `None` for none.
        pub max_retransmissions: Option<u32> = None,
        /// `count <= max` (thesis, default) or `count < max`.
        pub limit_rule: LimitRule = LimitRule::default(),
    }
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be
    /// changed before building.
    pub fn new(window: u16, timeout: Duration);
}

/// The thesis's BAP parameters in its own units (command-file names in brackets, §3.6), to
/// build consistent sender and receiver configurations: the packet timeout's formula uses the
/// receivers' ACK-delay timeout `t` and random interval `i`, which the receivers must use too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThesisParams {
    /// Window `n` \[BAPWIN\].
    pub window: u16,
    /// Frame sizes \[DATAPKTSIZE, ACKPKTSIZE\], random ACK interval \[BAPRANDWAIT\],
    /// packet-timeout method and value \[BAPPKTIMEOUTMETHOD, BAPPKTIMEOUT\] and bit time.
    pub timing: TimeoutRule,
    /// Receiver ACK-delay timeout `t`, bit times \[BAPACKTIMEOUT\].
    pub ack_timeout_bits: u64,
    /// Retransmission limit, compared as the thesis words it \[BAPRETRANSLIM\].
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
        let mut cfg = SenderConfig::new(node, group, receivers, self.window, Duration::ZERO);
        cfg.timeout_rule = Some(self.timing);
        cfg.ack_delay_timeout_bits = self.ack_timeout_bits;
        cfg.max_retransmissions = self.max_retransmissions;
        cfg.limit_rule = LimitRule::NotExceeded;
        cfg
    }

    /// A receiver's configuration.
    pub fn receiver_config(&self, node: NodeId) -> ReceiverConfig {
        let mut rc = ReceiverConfig::new(
            node,
            self.window,
            crate::saw::timeout::bits_to_duration(self.ack_timeout_bits, self.timing.bit_time),
        );
        rc.ack_delay_max = self.timing.rand();
        rc
    }
}

#[derive(Debug)]
struct Slot {
    data: Bytes,
    sent_at: Time,
    retransmissions: u32,
    transmissions: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct PacketTimer;

/// The `bap` sender.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    modulus: u16,
    /// Receivers, sorted, for lookups by node id: (node, slot index).
    index: Roster,
    /// ACK vector: per receiver (by configuration order) the last sequence number it
    /// acknowledged, `None` when the validity bit is clear.
    acks: Vec<Option<u16>>,
    queue: SendQueue,
    /// Absolute number of the window's first message.
    base: u64,
    window: VecDeque<Slot>,
    timer: TimerSet<PacketTimer>,
    out: Outbox,
}

impl Sender {
    /// Build a sender. A window of 0 is raised to 1 and one above [`MAX_WINDOW`] lowered to it.
    pub fn new(cfg: SenderConfig) -> Self {
        let mut cfg = cfg;
        cfg.window = cfg.window.clamp(1, MAX_WINDOW);
        let index = Roster::new(&cfg.receivers);
        if let Some(rule) = cfg.timeout_rule {
            cfg.timeout = rule.bap(
                u64::from(cfg.window),
                index.len() as u64,
                cfg.ack_delay_timeout_bits,
            );
        }
        let acks = vec![None; cfg.receivers.len()];
        let queue = SendQueue::new(cfg.queue_limit, MAX_MESSAGE);
        Sender {
            modulus: cfg.window * 2,
            cfg,
            index,
            acks,
            queue,
            base: 0,
            window: VecDeque::new(),
            timer: TimerSet::new(),
            out: Outbox::new(),
        }
    }

    /// The packet timeout in use.
    pub fn timeout(&self) -> Duration {
        self.cfg.timeout
    }

    /// Messages queued or in the window.
    pub fn backlog(&self) -> usize {
        self.queue.len() + self.window.len()
    }

    /// Current window size `c`.
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    fn wire_seq(&self, abs: u64) -> u16 {
        (abs % u64::from(self.modulus)) as u16
    }

    fn first(&self) -> u16 {
        self.wire_seq(self.base)
    }

    fn transmit(&mut self, now: Time, k: usize, retransmission: bool) {
        let abs = self.base + k as u64;
        let (seq, first) = (self.wire_seq(abs), self.first());
        let Some(slot) = self.window.get_mut(k) else {
            return;
        };
        slot.transmissions += 1;
        if retransmission {
            slot.retransmissions += 1;
            self.out.stats.repairs_sent += 1;
        } else {
            self.out.stats.data_sent += 1;
        }
        let data = slot.data.clone();
        let env = crate::outbox::envelope(
            self.cfg.session,
            self.cfg.node,
            crate::outbox::data_flags(retransmission),
        );
        let msg = Message::Bap(wire::Message::Data {
            seq,
            first,
            payload: &data,
        });
        self.out.transmit(Dest::Group(self.cfg.group), env, &msg);
        // "As each message is sent, the sender's packet timer is set to the packet timeout."
        self.timer.set(PacketTimer, now + self.cfg.timeout);
    }

    /// Send queued messages while the window has room.
    fn fill(&mut self, now: Time) {
        while self.window.len() < usize::from(self.cfg.window) {
            let Some(data) = self.queue.pop_front() else {
                break;
            };
            self.window.push_back(Slot {
                data,
                sent_at: now,
                retransmissions: 0,
                transmissions: 0,
            });
            if self.index.is_empty() {
                // Nobody to wait for.
                self.finish_front(now, 1, false);
                continue;
            }
            self.transmit(now, self.window.len() - 1, false);
        }
        if self.window.is_empty() {
            self.timer.clear();
            self.maybe_complete();
        }
    }

    /// Finish the first `k` messages of the window and advance it.
    fn finish_front(&mut self, now: Time, k: usize, failed: bool) {
        for _ in 0..k {
            let Some(slot) = self.window.pop_front() else {
                break;
            };
            self.out
                .message_done(self.base, slot.sent_at, now, slot.transmissions, failed);
            self.base += 1;
        }
        // Clear ACK-vector slots that no longer point into the active window.
        let (first, size, m) = (self.first(), self.window.len() as u16, self.modulus);
        for a in &mut self.acks {
            if a.is_some_and(|s| rank(s, first, m) >= size) {
                *a = None;
            }
        }
    }

    fn active_slots(&self) -> impl Iterator<Item = Option<u16>> + '_ {
        self.index
            .slots()
            .map(|i| self.acks.get(i).copied().flatten())
    }

    fn on_ack(&mut self, now: Time, from: NodeId, seq: u16) {
        let Some(i) = self.index.slot(from) else {
            self.out.stats.ignored += 1;
            return;
        };
        if seq >= self.modulus {
            self.out.stats.malformed += 1;
            return;
        }
        let (first, size, m) = (self.first(), self.window.len() as u16, self.modulus);
        let r = rank(seq, first, m);
        let old = self.acks.get(i).copied().flatten();
        if r >= size || old.is_some_and(|o| rank(o, first, m) >= r) {
            // Outside the active window, or already processed.
            self.out.stats.duplicates += 1;
            return;
        }
        if let Some(a) = self.acks.get_mut(i) {
            *a = Some(seq);
        }
        if let Some(k) = all_acked_rank(first, size, m, self.active_slots()) {
            self.finish_front(now, usize::from(k) + 1, false);
            self.fill(now);
        }
    }

    fn on_timeout(&mut self, now: Time, _: PacketTimer) {
        if self.window.is_empty() {
            return;
        }
        self.out.stats.timeouts += 1;
        self.out.event(Event::LossDetected { seq: self.base });
        let (limit, rule) = (self.cfg.max_retransmissions, self.cfg.limit_rule);
        let spent = self
            .window
            .iter()
            .take_while(|s| !rule.allows(s.retransmissions, limit))
            .count();
        if spent > 0 {
            self.finish_front(now, spent, true);
        }
        // Go-back-N: everything still in the window, oldest first, then new messages.
        for k in 0..self.window.len() {
            self.transmit(now, k, true);
        }
        self.fill(now);
    }

    fn maybe_complete(&mut self) {
        if self.queue.complete(self.window.is_empty()) {
            self.out.event(Event::Completed);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Ack { seq } => self.on_ack(now, from, seq),
            _ => self.out.ignore(),
        }
    }
}

impl Agent for Sender {
    crate::outbox::agent_io!(out, on_message, timer => on_timeout);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Sender {
    crate::sendq::send_queue_field!(queue, take: fill, after_close: |s, _| s.maybe_complete());

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(i) = self.index.remove(node) else {
            return false;
        };
        if let Some(a) = self.acks.get_mut(i) {
            *a = None;
        }
        if self.window.is_empty() {
            return true;
        }
        let (first, size, m) = (self.first(), self.window.len() as u16, self.modulus);
        let k = if self.index.is_empty() {
            Some(size - 1)
        } else {
            all_acked_rank(first, size, m, self.active_slots())
        };
        if let Some(k) = k {
            self.finish_front(now, usize::from(k) + 1, false);
            self.fill(now);
        }
        true
    }
}

crate::config::receiver_config! {
    /// Receiver parameters.
    pub struct ReceiverConfig {
        /// The sender's maximum window `n`, agreed beforehand.
        pub window: u16 = window,
        /// ACK-delay timeout `t`.
        pub ack_timeout: Duration = ack_timeout,
        /// Upper bound of the random ACK delay (BAPrand); zero ACKs at once.
        pub ack_delay_max: Duration = Duration::ZERO,
        /// Stop re-arming the ACK-delay timer after this many consecutive firings with no DATA
        /// in between; `None` re-arms forever (the thesis's literal rule).
        pub idle_ack_limit: Option<u32> = Some(3),
        /// Stop the ACK-delay timer when the counter reaches the window and the block ACK is
        /// sent (it is armed again by the next DATA). The thesis's "reset the ACK-delay timer"
        /// can be read either way; this reading keeps the timer quiet while a full window's ACK
        /// is still contending for the medium, which matches its remark that the timer fires
        /// (error-free) only when the sender cannot fill its window. Default `false`: the timer
        /// keeps running from the last in-sequence DATA.
        pub disarm_on_window_ack: bool = false,
        /// Arm an idle ACK-delay timer on out-of-sequence DATA too (rmcast's choice, above);
        /// `false` is the thesis's literal rule: only in-sequence DATA resets it.
        pub arm_on_any_data: bool = true,
        /// Skip to the sender's `first` when it gave up on what the receiver waits for (an
        /// rmcast addition); `false` waits for the message forever, as the thesis's receiver.
        pub skip_to_first: bool = true,
        /// The ACK the ACK-delay timer sends resets the message counter too (rmcast's
        /// reading). The thesis resets the counter only after the full window's ACK
        /// (`false`): a receiver whose counter was not reset then sends its next block ACK
        /// before the sender's block ends, out of phase with the sender's windows.
        pub timer_ack_resets_counter: bool = true,
    }
    pub fn new(window: u16, ack_timeout: Duration);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum RxTimer {
    /// The ACK-delay timer `t`.
    AckDelay,
    /// A randomly delayed ACK is due.
    SendAck,
}

/// The `bap` receiver.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    modulus: u16,
    rng: AgentRng,
    /// Next sequence number expected in order.
    expected: u16,
    /// Last sequence number received in order (`None` = the thesis's −1).
    last: Option<u16>,
    /// Application number of the next message to deliver.
    delivered: u64,
    /// In-sequence messages since the last ACK.
    counter: u16,
    sender: Option<NodeId>,
    /// ACK-delay firings since the last DATA arrival.
    idle_firings: u32,
    timers: TimerSet<RxTimer>,
    out: Outbox,
}

impl Receiver {
    /// Build a receiver. The window is clamped to `1..=`[`MAX_WINDOW`] as the sender's is.
    pub fn new(cfg: ReceiverConfig, rng: AgentRng) -> Self {
        let mut cfg = cfg;
        cfg.window = cfg.window.clamp(1, MAX_WINDOW);
        Receiver {
            modulus: cfg.window * 2,
            cfg,
            rng,
            expected: 0,
            last: None,
            delivered: 0,
            counter: 0,
            sender: None,
            idle_firings: 0,
            timers: TimerSet::new(),
            out: Outbox::new(),
        }
    }

    /// Messages delivered so far (the next application sequence number).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    fn send_ack(&mut self) {
        let (Some(seq), Some(to)) = (self.last, self.sender) else {
            return;
        };
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
        self.out
            .control(to, env, &Message::Bap(wire::Message::Ack { seq }));
    }

    fn request_ack(&mut self, now: Time, reset_counter: bool) {
        if reset_counter {
            self.counter = 0;
        }
        if self.cfg.ack_delay_max.is_zero() {
            self.send_ack();
        } else if !self.timers.is_armed(RxTimer::SendAck) {
            let d = self
                .rng
                .duration_between(Duration::ZERO, self.cfg.ack_delay_max);
            self.timers.set(RxTimer::SendAck, now + d);
        }
    }

    fn on_data(&mut self, now: Time, from: NodeId, seq: u16, first: u16, payload: &[u8]) {
        let m = self.modulus;
        if seq >= m || first >= m {
            self.out.stats.malformed += 1;
            return;
        }
        self.sender = Some(from);
        self.idle_firings = 0;
        // Behind the sender's window: the sender gave up on what we are waiting for.
        let behind = rank(self.expected, first, m);
        if behind > self.cfg.window && self.cfg.skip_to_first {
            let skipped = u64::from(m - behind);
            for k in 0..skipped {
                self.out.event(Event::LossDetected {
                    seq: self.delivered + k,
                });
            }
            self.delivered += skipped;
            self.expected = first;
        }
        if seq == self.expected {
            let data = Bytes::copy_from_slice(payload);
            self.out.deliver(self.delivered, data);
            self.delivered += 1;
            self.last = Some(seq);
            self.expected = (seq + 1) % m;
            self.counter += 1;
            self.timers
                .set(RxTimer::AckDelay, now + self.cfg.ack_timeout);
            if self.counter >= self.cfg.window {
                self.request_ack(now, true);
                if self.cfg.disarm_on_window_ack {
                    self.timers.cancel(RxTimer::AckDelay);
                }
            }
        } else {
            // Out of sequence: discarded without an ACK.
            if rank(seq, self.expected, m) < self.cfg.window {
                self.out.stats.ignored += 1; // ahead of a gap
            } else {
                self.out.stats.duplicates += 1; // already delivered
            }
            if self.cfg.arm_on_any_data && !self.timers.is_armed(RxTimer::AckDelay) {
                self.timers
                    .set(RxTimer::AckDelay, now + self.cfg.ack_timeout);
            }
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Data {
                seq,
                first,
                payload,
            } => self.on_data(now, from, seq, first, payload),
            _ => self.out.ignore(),
        }
    }

    fn on_timer(&mut self, now: Time, t: RxTimer) {
        match t {
            RxTimer::SendAck => self.send_ack(),
            RxTimer::AckDelay => {
                if self
                    .cfg
                    .idle_ack_limit
                    .is_some_and(|l| self.idle_firings >= l)
                {
                    return;
                }
                self.idle_firings += 1;
                self.request_ack(now, self.cfg.timer_ack_resets_counter);
                self.timers
                    .set(RxTimer::AckDelay, now + self.cfg.ack_timeout);
            }
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message, timers => on_timer);
}

#[cfg(test)]
pub(crate) mod tests;

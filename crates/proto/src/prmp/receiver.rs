//! The PRMP child (§3, RXM): receive window, answers only when polled.

use super::*;
use crate::window::HeldWindow;

crate::config::receiver_config! {
    /// Child parameters.
    pub struct ReceiverConfig {
        /// Buffer and window size `S` (the parent's).
        pub window: u64 = window,
        /// Packets per second the upper layer consumes; `None` = hungry (immediate).
        pub consume_rate: Option<u64> = None,
    }
    pub fn new(window: u64);
}

/// The PRMP child (§3 RXM).
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// `W_i`: base = `LE_i`.
    w: HeldWindow,
    hr: Option<u64>,
    consume_at: Option<Time>,
    last_consume: Option<Time>,
    /// The upper layer takes nothing for now ([`Receiver::set_paused`]).
    paused: bool,
    /// The highest left edge it reports ([`Receiver::set_ack_cap`]).
    ack_cap: Option<u64>,
    out: Outbox,
}

impl Receiver {
    /// A receiver built from `cfg`.
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            w: HeldWindow::bounded(cfg.window, MAX_WINDOW),
            cfg,
            hr: None,
            consume_at: None,
            last_consume: None,
            paused: false,
            ack_cap: None,
            out: Outbox::new(),
        }
    }

    /// `LE_i`.
    pub fn le(&self) -> u64 {
        self.w.window().base()
    }

    /// `HR_i`.
    pub fn hr(&self) -> Option<u64> {
        self.hr
    }

    fn on_data(&mut self, seq: u64, payload: &[u8]) {
        if self
            .out
            .arrived_held(&mut self.w, seq, || Bytes::copy_from_slice(payload))
        {
            self.hr = self.hr.max(Some(seq));
        }
    }

    fn consume_one(&mut self) -> bool {
        let Some((seq, data)) = self.w.pop_in_order() else {
            return false;
        };
        self.out.deliver(seq, data);
        true
    }

    /// Stop or resume the upper layer's consumption (a relay whose children's backlog is
    /// full). Paused, received packets stay in `W_i` unconsumed and hold `LE_i`, so the
    /// parent's window closes as for any slow consumer (§2.2) and nothing is lost or resent.
    /// Resuming consumes what is in order at once; returns whether anything was delivered.
    pub fn set_paused(&mut self, now: Time, paused: bool) -> bool {
        self.paused = paused;
        if paused {
            return false;
        }
        let le = self.le();
        self.consume(now);
        self.le() != le
    }

    /// Report a left edge no higher than `cap` (`None`: `LE_i` itself), the packets between
    /// it and `LE_i` as received: a relay that acknowledges only what its own children hold
    /// ([`super::tree::Relay::end_to_end`]), so its parent keeps the rest. Only what the
    /// parent may release changes: nothing received is asked for again.
    pub fn set_ack_cap(&mut self, cap: Option<u64>) {
        self.ack_cap = cap;
    }

    /// Expect sequence number `base` first (a relay taking over children that are part-way
    /// through the transfer, [`super::Sender::resume_children`]). Only before anything
    /// arrived; `false` (and nothing changes) after.
    pub fn start_at(&mut self, base: u64) -> bool {
        if self.hr.is_some() || self.le() != 0 {
            return false;
        }
        let cap = self.w.window().capacity();
        self.w = HeldWindow::starting_at(base, cap);
        true
    }

    fn consume(&mut self, now: Time) {
        if self.paused {
            return;
        }
        match self.cfg.consume_rate {
            None => while self.consume_one() {},
            Some(rate) => {
                if self.consume_at.is_none() && self.w.window().contains(self.w.window().base()) {
                    let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
                    let at = self.last_consume.map_or(now, |t| (t + period).max(now));
                    self.consume_at = Some(at);
                }
            }
        }
    }

    fn respond(&mut self, to: NodeId, ts: u64, poll_seq: u64) {
        let base = self.w.window().base();
        let le = self.ack_cap.map_or(base, |c| c.min(base));
        let hr = self.hr;
        let mut bitmap = Vec::new();
        if let Some(h) = hr.filter(|&h| h >= le) {
            let n = (h - le + 1) as usize;
            bitmap.resize(n.div_ceil(8), 0u8);
            for k in 0..n {
                if self.w.window().contains(le + k as u64) {
                    if let Some(b) = bitmap.get_mut(k / 8) {
                        *b |= 1 << (k % 8);
                    }
                }
            }
        }
        let msg = wire::Message::Resp {
            ts,
            seq: poll_seq,
            le,
            hr: hr.unwrap_or(wire::NO_HR),
            bitmap: &bitmap,
        };
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
        self.out.control(to, env, &Message::Prmp(msg));
    }

    fn on_poll(&mut self, from: NodeId, ts: u64, poll_seq: u64, cld: wire::ChildList<'_>) {
        // A legitimate POLL.SEQ is inside the window: the parent never sends past LE_i + S.
        if poll_seq >= self.w.window().base().saturating_add(self.cfg.window) {
            self.out.stats.ignored += 1;
            return;
        }
        // Choice 1: a poll raises HR_i to POLL.SEQ.
        self.hr = self.hr.max(Some(poll_seq));
        if cld.contains(self.cfg.node.0) {
            self.respond(from, ts, poll_seq);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Data { seq, payload } | wire::Message::DataPoll { seq, payload, .. } => {
                self.on_data(seq, payload);
                self.consume(now);
            }
            wire::Message::Poll { .. } => {}
            _ => return self.out.ignore(),
        }
        if let Some((ts, poll_seq, cld)) = poll_of(&m) {
            self.on_poll(from, ts, poll_seq, cld);
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message);
    fn handle_timeout(&mut self, now: Time) {
        if self.consume_at.is_some_and(|t| t <= now) {
            self.consume_at = None;
            if !self.paused && self.consume_one() {
                self.last_consume = Some(now);
            }
            self.consume(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.consume_at
    }
}

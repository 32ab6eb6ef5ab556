//! The PRMP child (§3, RXM): receive window, answers only when polled.

use super::*;

/// Child parameters.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    /// This agent's node id (the source of every datagram it sends).
    pub node: NodeId,
    /// Session id: carried in every datagram, and datagrams of another session are ignored.
    pub session: u32,
    /// Buffer and window size `S` (the parent's).
    pub window: u64,
    /// Packets per second the upper layer consumes; `None` = hungry (immediate).
    pub consume_rate: Option<u64>,
}

impl ReceiverConfig {
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be changed before building.
    pub fn new(node: NodeId, window: u64) -> Self {
        ReceiverConfig {
            node,
            session: 0,
            window,
            consume_rate: None,
        }
    }
}

/// The PRMP child (§3 RXM).
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// `W_i`: base = `LE_i`.
    w: SeqWindow,
    hr: Option<u64>,
    held: BTreeMap<u64, Bytes>,
    consume_at: Option<Time>,
    last_consume: Option<Time>,
    out: Outbox,
}

impl Receiver {
    /// A receiver built from `cfg`.
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            w: SeqWindow::bounded(cfg.window, MAX_WINDOW),
            cfg,
            hr: None,
            held: BTreeMap::new(),
            consume_at: None,
            last_consume: None,
            out: Outbox::new(),
        }
    }

    /// `LE_i`.
    pub fn le(&self) -> u64 {
        self.w.base()
    }

    /// `HR_i`.
    pub fn hr(&self) -> Option<u64> {
        self.hr
    }

    fn on_data(&mut self, seq: u64, payload: &[u8]) {
        match self.w.insert(seq) {
            Insert::New => {
                self.held.insert(seq, Bytes::copy_from_slice(payload));
                self.hr = self.hr.max(Some(seq));
            }
            Insert::Duplicate => self.out.stats.duplicates += 1,
            Insert::TooFar => self.out.stats.ignored += 1,
        }
    }

    fn consume_one(&mut self) -> bool {
        let Some(seq) = self.w.pop_in_order() else {
            return false;
        };
        let data = self.held.remove(&seq).unwrap_or_default();
        self.out.deliver(seq, data);
        true
    }

    fn consume(&mut self, now: Time) {
        match self.cfg.consume_rate {
            None => while self.consume_one() {},
            Some(rate) => {
                if self.consume_at.is_none() && self.w.contains(self.w.base()) {
                    let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
                    let at = self.last_consume.map_or(now, |t| (t + period).max(now));
                    self.consume_at = Some(at);
                }
            }
        }
    }

    fn respond(&mut self, to: NodeId, ts: u64, poll_seq: u64) {
        let le = self.w.base();
        let hr = self.hr;
        let mut bitmap = Vec::new();
        if let Some(h) = hr.filter(|&h| h >= le) {
            let n = (h - le + 1) as usize;
            bitmap.resize(n.div_ceil(8), 0u8);
            for k in 0..n {
                if self.w.contains(le + k as u64) {
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
        if poll_seq >= self.w.base().saturating_add(self.cfg.window) {
            self.out.stats.ignored += 1;
            return;
        }
        // Choice 1: a poll raises HR_i to POLL.SEQ.
        self.hr = self.hr.max(Some(poll_seq));
        if cld.contains(self.cfg.node.0) {
            self.respond(from, ts, poll_seq);
        }
    }
}

impl Agent for Receiver {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        let Some(m) = self.out.accept(packet, self.cfg.session) else {
            return;
        };
        match m {
            wire::Message::Data { seq, payload } => {
                self.on_data(seq, payload);
                self.consume(now);
            }
            wire::Message::DataPoll {
                seq,
                ts,
                poll_seq,
                cld,
                payload,
            } => {
                self.on_data(seq, payload);
                self.consume(now);
                self.on_poll(from, ts, poll_seq, cld);
            }
            wire::Message::Poll { ts, seq, cld } => {
                self.on_poll(from, ts, seq, cld);
            }
            _ => self.out.ignore(),
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.consume_at.is_some_and(|t| t <= now) {
            self.consume_at = None;
            if self.consume_one() {
                self.last_consume = Some(now);
            }
            self.consume(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.consume_at
    }
    crate::outbox_field!(out);
}

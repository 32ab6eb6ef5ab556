//! `lms` — Light-weight Multicast Services (Papadopoulos, Parulkar, Varghese), the router-
//! assisted scheme seed 003 evaluates: routers pick repliers, requests turn at the *turning
//! point*, repairs come back by *directed subcast*.
//!
//! * Each [`Router`] keeps one **replier link** per group (an interface leading down toward
//!   its replier). Static repliers, as the seed ran them: the link toward the closest
//!   downstream receiver ([`choose_replier`]; the driver computes the candidates from the
//!   topology).
//! * A [`Receiver`] that detects a gap (DATA, REPAIR or the source's HEARTBEAT leading edge)
//!   sends a REQUEST toward the source at once (LMS has no back-off) and repeats it every
//!   [`ReceiverConfig::request_timeout`] until the data arrives.
//! * A router that sees a REQUEST come up **on its replier link** forwards it upstream. The
//!   first router where it arrives on another link is the **turning point**: it absorbs the
//!   request and sends a DREQ naming itself and that incoming interface down its replier
//!   link; routers below pass the DREQ down their own replier links until it reaches the
//!   replier (a receiver).
//! * The replier, if it holds the data, **unicasts** a REPAIR to the turning point, which
//!   **subcasts** it down the interface the request came in on (the subtree that asked). A
//!   replier that lacks the data drops the DREQ; it is recovering the packet itself and the
//!   requester's timer repeats the request.
//! * A REQUEST that reaches the source (every router on the way had it on its replier link)
//!   is answered with a REPAIR multicast to the whole group.
//!
//! Routers hold no per-packet state. Duplicates a receiver gets (repairs for data it holds)
//! are counted in `Stats::duplicates` — the raw material of the seed's *exposure*.
//!
//! Choices where the seed is silent: requests travel as unicast datagrams to the source and
//! routers on the path see them; the DREQ travels as a group-addressed datagram pinned to
//! replier links; ties among equally close repliers go to the lowest interface number; the
//! adaptive replier option of issue 7 is not implemented (static repliers only).

#[cfg(test)]
mod tests;

use crate::retx::RetransmitBuffer;
use crate::timer::TimerSet;
use crate::window::{Insert, SeqWindow};
use crate::{
    Agent, Dest, Event, GroupId, IfaceId, NodeId, RouteDecision, RouterAgent, RouterTransmit,
    SendError, Stats, Time, Transmit,
};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{
    lms as wire, Envelope, Message, Packet, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM,
};
use std::collections::VecDeque;

/// Largest application message one DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 16;

fn encode(session: u32, node: NodeId, msg: wire::Message<'_>, flags: u8) -> Option<Bytes> {
    let env = Envelope {
        session,
        source: node.0,
        flags,
    };
    Packet::to_vec(env, &Message::Lms(msg))
        .ok()
        .map(Bytes::from)
}

fn decode(packet: &[u8], session: u32) -> Option<wire::Message<'_>> {
    let p = Packet::decode(packet).ok()?;
    match p.message {
        Message::Lms(m) if p.header.session == session => Some(m),
        _ => None,
    }
}

/// Static replier selection: among downstream interfaces with the distance to the closest
/// receiver behind each, the closest; ties go to the lowest interface.
pub fn choose_replier(candidates: &[(IfaceId, Duration)]) -> Option<IfaceId> {
    candidates
        .iter()
        .min_by_key(|&&(i, d)| (d, i))
        .map(|&(i, _)| i)
}

/// Source configuration.
#[derive(Debug, Clone)]
pub struct SourceConfig {
    pub node: NodeId,
    pub group: GroupId,
    pub session: u32,
    /// HEARTBEAT period (`None`: none).
    pub heartbeat: Option<Duration>,
    /// How long after [`Agent::close`] the source reports [`Event::Completed`] (and stops
    /// heartbeats): LMS has no acknowledgments, so the source cannot know when receivers finish.
    pub linger: Duration,
}

impl SourceConfig {
    pub fn new(node: NodeId, group: GroupId) -> Self {
        SourceConfig {
            node,
            group,
            session: 0,
            heartbeat: Some(Duration::from_millis(500)),
            linger: Duration::from_secs(5),
        }
    }
}

/// The LMS source.
pub struct Source {
    cfg: SourceConfig,
    buf: RetransmitBuffer,
    next: u64,
    hb_at: Option<Time>,
    linger_at: Option<Time>,
    out: VecDeque<Transmit>,
    events: VecDeque<Event>,
    stats: Stats,
    closed: bool,
}

impl Source {
    pub fn new(cfg: SourceConfig) -> Self {
        Source {
            hb_at: cfg.heartbeat.map(|_| Time::ZERO),
            linger_at: None,
            cfg,
            buf: RetransmitBuffer::new(usize::MAX),
            next: 0,
            out: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            closed: false,
        }
    }

    fn push(&mut self, msg: wire::Message<'_>, flags: u8) {
        if let Some(payload) = encode(self.cfg.session, self.cfg.node, msg, flags) {
            let t = Transmit {
                dest: Dest::Group(self.cfg.group),
                payload,
            };
            self.stats.count_sent(&t);
            self.out.push_back(t);
        }
    }
}

impl Agent for Source {
    fn handle_packet(&mut self, now: Time, _from: NodeId, packet: &[u8]) {
        self.stats.count_received(packet);
        match decode(packet, self.cfg.session) {
            Some(wire::Message::Request { seq }) => {
                if let Some(data) = self.buf.mark_resent(seq, now) {
                    self.stats.repairs_sent += 1;
                    self.push(
                        wire::Message::Repair {
                            seq,
                            tp: wire::NO_TP,
                            tp_iface: 0,
                            payload: &data,
                        },
                        FLAG_RETRANSMISSION,
                    );
                }
            }
            Some(_) => self.stats.ignored += 1,
            None => self.stats.malformed += 1,
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if self.linger_at.is_some_and(|t| now >= t) {
            self.linger_at = None;
            self.hb_at = None;
            self.events.push_back(Event::Completed);
        }
        if let (Some(at), Some(i)) = (self.hb_at, self.cfg.heartbeat) {
            if now >= at {
                self.stats.control_sent += 1;
                let lead = self.next;
                self.push(wire::Message::Heartbeat { lead }, 0);
                self.hb_at = Some(now + i.max(Duration::from_micros(1)));
            }
        }
    }
    fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop_front()
    }
    fn poll_timeout(&self) -> Option<Time> {
        match (self.hb_at, self.linger_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
    fn stats(&self) -> &Stats {
        &self.stats
    }
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        if self.closed {
            return Err(SendError::Closed);
        }
        if data.len() > MAX_MESSAGE {
            return Err(SendError::TooLarge {
                len: data.len(),
                max: MAX_MESSAGE,
            });
        }
        let seq = self.next;
        self.next += 1;
        self.stats.data_sent += 1;
        self.push(
            wire::Message::Data {
                seq,
                payload: &data,
            },
            0,
        );
        self.buf.insert(seq, data, now);
        Ok(())
    }
    fn can_send(&self) -> bool {
        !self.closed
    }
    /// LMS has no positive acknowledgments: the source reports `Completed` `linger` later.
    fn close(&mut self, now: Time) {
        if !self.closed {
            self.closed = true;
            self.linger_at = Some(now + self.cfg.linger);
        }
    }
}

/// Receiver configuration.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    pub node: NodeId,
    pub source: NodeId,
    pub session: u32,
    /// Repeat a request after this long without the data.
    pub request_timeout: Duration,
    pub window: usize,
}

impl ReceiverConfig {
    pub fn new(node: NodeId, source: NodeId) -> Self {
        ReceiverConfig {
            node,
            source,
            session: 0,
            request_timeout: Duration::from_millis(500),
            window: 1 << 16,
        }
    }
}

/// Counters specific to LMS receivers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LmsStats {
    pub requests_sent: u64,
    /// DREQs answered with a repair.
    pub dreqs_served: u64,
    /// DREQs for data this receiver lacks.
    pub dreqs_unserved: u64,
}

/// An LMS receiver (and potential replier).
pub struct Receiver {
    cfg: ReceiverConfig,
    window: SeqWindow,
    store: RetransmitBuffer,
    known: u64,
    timers: TimerSet<u64>,
    out: VecDeque<Transmit>,
    events: VecDeque<Event>,
    stats: Stats,
    lms: LmsStats,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            window: SeqWindow::new(cfg.window),
            cfg,
            store: RetransmitBuffer::new(usize::MAX),
            known: 0,
            timers: TimerSet::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            lms: LmsStats::default(),
        }
    }

    pub fn lms_stats(&self) -> &LmsStats {
        &self.lms
    }

    fn send_to(&mut self, dest: NodeId, msg: wire::Message<'_>, flags: u8) {
        if let Some(payload) = encode(self.cfg.session, self.cfg.node, msg, flags) {
            let t = Transmit {
                dest: Dest::Node(dest),
                payload,
            };
            self.stats.count_sent(&t);
            self.out.push_back(t);
        }
    }

    fn request(&mut self, now: Time, seq: u64) {
        self.lms.requests_sent += 1;
        self.stats.control_sent += 1;
        self.send_to(self.cfg.source, wire::Message::Request { seq }, 0);
        self.timers.set(seq, now + self.cfg.request_timeout);
    }

    fn learn(&mut self, now: Time, next: u64) {
        if next <= self.known {
            return;
        }
        let from = self.known.max(self.window.base());
        self.known = next;
        for s in from..next {
            if !self.window.contains(s) && !self.timers.is_armed(s) {
                self.events.push_back(Event::LossDetected { seq: s });
                self.request(now, s);
            }
        }
    }

    fn data(&mut self, now: Time, seq: u64, payload: &[u8]) {
        match self.window.insert(seq) {
            Insert::New => {
                self.timers.cancel(seq);
                self.store.insert(seq, Bytes::copy_from_slice(payload), now);
                self.learn(now, seq + 1);
                while let Some(s) = self.window.pop_in_order() {
                    let data = self
                        .store
                        .get(s)
                        .map(|e| e.data.clone())
                        .unwrap_or_default();
                    self.stats.delivered += 1;
                    self.events.push_back(Event::Delivered { seq: s, data });
                }
            }
            Insert::Duplicate => self.stats.duplicates += 1,
            Insert::TooFar => self.stats.ignored += 1,
        }
    }
}

impl Agent for Receiver {
    fn handle_packet(&mut self, now: Time, _from: NodeId, packet: &[u8]) {
        self.stats.count_received(packet);
        match decode(packet, self.cfg.session) {
            Some(
                wire::Message::Data { seq, payload } | wire::Message::Repair { seq, payload, .. },
            ) => self.data(now, seq, payload),
            Some(wire::Message::Heartbeat { lead }) => self.learn(now, lead),
            Some(wire::Message::Dreq {
                seq, tp, tp_iface, ..
            }) => match self.store.mark_resent(seq, now) {
                Some(data) => {
                    self.lms.dreqs_served += 1;
                    self.stats.repairs_sent += 1;
                    self.send_to(
                        NodeId(tp),
                        wire::Message::Repair {
                            seq,
                            tp,
                            tp_iface,
                            payload: &data,
                        },
                        FLAG_RETRANSMISSION,
                    );
                }
                None => {
                    self.lms.dreqs_unserved += 1;
                    self.learn(now, seq + 1);
                }
            },
            Some(wire::Message::Request { .. }) => self.stats.ignored += 1,
            None => self.stats.malformed += 1,
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        while let Some(seq) = self.timers.pop_expired(now) {
            if !self.window.contains(seq) {
                self.stats.timeouts += 1;
                self.request(now, seq);
            }
        }
    }
    fn poll_transmit(&mut self) -> Option<Transmit> {
        self.out.pop_front()
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }
    fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
    fn stats(&self) -> &Stats {
        &self.stats
    }
}

/// Router configuration.
#[derive(Debug, Clone)]
pub struct RouterConfig {
    pub node: NodeId,
    pub group: GroupId,
    pub session: u32,
    /// The replier link (`None`: no receiver below; requests are passed upstream).
    pub replier: Option<IfaceId>,
}

/// Counters specific to LMS routers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouterStats {
    /// Requests this router turned (it was their turning point).
    pub turned: u64,
    /// Requests passed upstream (they came on the replier link).
    pub passed_up: u64,
    /// DREQs passed down the replier link.
    pub dreqs_down: u64,
    /// Repairs subcast from here.
    pub subcasts: u64,
}

/// An LMS router agent: one replier link per group, no per-packet state.
pub struct Router {
    cfg: RouterConfig,
    out: VecDeque<RouterTransmit>,
    stats: Stats,
    lms: RouterStats,
}

impl Router {
    pub fn new(cfg: RouterConfig) -> Self {
        Router {
            cfg,
            out: VecDeque::new(),
            stats: Stats::default(),
            lms: RouterStats::default(),
        }
    }
    pub fn replier(&self) -> Option<IfaceId> {
        self.cfg.replier
    }
    /// Change the replier link (a driver's or a refresh protocol's decision).
    pub fn set_replier(&mut self, iface: Option<IfaceId>) {
        self.cfg.replier = iface;
    }
    pub fn router_stats(&self) -> &RouterStats {
        &self.lms
    }

    fn emit(&mut self, payload: Bytes, via: IfaceId) {
        let t = Transmit {
            dest: Dest::Group(self.cfg.group),
            payload,
        };
        self.stats.count_sent(&t);
        self.out.push_back(RouterTransmit {
            transmit: t,
            via: Some(vec![via]),
        });
    }
}

impl RouterAgent for Router {
    fn on_packet(
        &mut self,
        _now: Time,
        ingress: IfaceId,
        from: NodeId,
        dest: Dest,
        packet: &[u8],
    ) -> RouteDecision {
        self.stats.count_received(packet);
        let Some(m) = decode(packet, self.cfg.session) else {
            self.stats.ignored += 1;
            return RouteDecision::Forward;
        };
        match m {
            wire::Message::Request { seq } => match self.cfg.replier {
                Some(r) if r != ingress => {
                    self.lms.turned += 1;
                    self.stats.control_sent += 1;
                    let dreq = wire::Message::Dreq {
                        seq,
                        requester: from.0,
                        tp: self.cfg.node.0,
                        tp_iface: ingress.0,
                    };
                    if let Some(p) = encode(self.cfg.session, self.cfg.node, dreq, 0) {
                        self.emit(p, r);
                    }
                    RouteDecision::Consume
                }
                _ => {
                    self.lms.passed_up += 1;
                    RouteDecision::Forward
                }
            },
            wire::Message::Dreq { .. } => match self.cfg.replier {
                Some(r) if r != ingress => {
                    self.lms.dreqs_down += 1;
                    RouteDecision::ForwardOn(vec![r])
                }
                _ => RouteDecision::Consume,
            },
            wire::Message::Repair { tp, tp_iface, .. }
                if tp == self.cfg.node.0 && dest == Dest::Node(self.cfg.node) =>
            {
                self.lms.subcasts += 1;
                self.stats.repairs_sent += 1;
                self.emit(Bytes::copy_from_slice(packet), IfaceId(tp_iface));
                RouteDecision::Consume
            }
            _ => RouteDecision::Forward,
        }
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self) -> Option<RouterTransmit> {
        self.out.pop_front()
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn stats(&self) -> &Stats {
        &self.stats
    }
    /// One replier link per group, when the router has one.
    fn state_entries(&self) -> usize {
        usize::from(self.cfg.replier.is_some())
    }
    fn peak_state_entries(&self) -> usize {
        usize::from(self.cfg.replier.is_some())
    }
}

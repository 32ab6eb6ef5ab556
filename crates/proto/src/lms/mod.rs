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
//!   replier (a receiver). A router whose own node holds a receiver (members on routers, as
//!   in an imported graph) has that receiver as its replier ([`IfaceId::LOCAL`]): none below
//!   is closer. Requests from below turn there and DREQs from above end there, as with the
//!   authors' ns-2 LMS, whose per-node agent sees the node's own receiver.
//! * The replier, if it holds the data, **unicasts** a REPAIR to the turning point, which
//!   **subcasts** it down the interface the request came in on (the subtree that asked). A
//!   replier that lacks the data drops the DREQ; it is recovering the packet itself and the
//!   requester's timer repeats the request.
//! * A replier does not answer a *first* request (attempt 0) that its own recovery or its
//!   last answer already covers: when it received the packet itself as a repair, or when it
//!   already answered the same packet for the same turning point and interface. Every
//!   router between the turning point and the replier has its replier link toward the
//!   replier, so the replier's own request turned *above* the turning point, and the repair
//!   it got was subcast over a subtree that holds the requester; a second answer to the same
//!   (turning point, interface) goes down the same subtree again. Repeated requests
//!   (attempt ≥ 1: the requester's timer expired) are always answered. This is the rule of
//!   the authors' ns-2 LMS receiver (`lms-receiver.cc`: the request list and the list of
//!   retransmissions received, consulted for requests whose `nak_seqn_` is 0); without it a
//!   loss at the source link drew one redundant repair from nearly every replier.
//! * A REQUEST that reaches the source (every router on the way had it on its replier link)
//!   is answered with a REPAIR multicast to the whole group.
//!
//! **Adaptive repliers** (an option; the seed ran static repliers, §5.8): every
//! [`ReceiverConfig::refresh_every`] packets a receiver sends a REFRESH carrying its replier
//! *cost* — the losses it detected during that interval — toward the source, as in the
//! authors' ns-2 code (`LMS_REFRESH`, cost = requests in the last loss-sampling interval).
//! A router with [`RouterConfig::adaptive`] remembers the last cost heard on each downstream
//! interface and keeps its replier link on the cheapest one; on equal cost it keeps the
//! current link, then prefers the interface with the closer receiver
//! ([`RouterConfig::candidates`]), then the lowest number. A replier that lost packets in
//! the last interval (it had to ask itself, so it could not have answered) is therefore
//! replaced at the next refresh by a neighbour that lost none. The router passes a cost
//! upstream (a REFRESH of its own, toward the source) when the refresh came from its replier
//! link or its replier link changed, so upstream routers see the cost of the replier each
//! link leads to. The router's state stays per group: the replier link and one cost per
//! downstream interface. A receiver on a router's own node stays that router's replier (its
//! REFRESH goes up past it, so the routers above weigh its cost).
//!
//! Routers hold no per-packet state. Duplicates a receiver gets (repairs for data it holds)
//! are counted in `Stats::duplicates` — the raw material of the seed's *exposure*.
//!
//! Set-up: [`deploy`] lays the roles out on a [`Layout`](crate::deploy::Layout) (the driver's
//! topology as plain data) with typed [`Params`], whose defaults are the spec's.
//!
//! Choices where the seed is silent: requests travel as unicast datagrams to the source and
//! routers on the path see them; the DREQ travels as a group-addressed datagram pinned to
//! replier links; ties among equally close repliers go to the lowest interface number; a
//! replier remembers the last [`REMEMBER`] repaired packets and answered requests.

mod deploy;
pub mod spec;
#[cfg(test)]
mod tests;

pub use deploy::{deploy, Deployment, Lms, Params, Replier};

use crate::outbox::envelope;
use crate::retx::RetransmitBuffer;
use crate::sendq::{DataFormat, Originals, SourceTimer};
use crate::seqmap::SeqMap;
use crate::timer::TimerSet;
use crate::window::SeqWindow;
use crate::{
    hold, Agent, Dest, Event, IfaceId, NodeId, Outbox, RouteDecision, RouterAgent, RouterTransmit,
    Time, Transmit,
};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{lms as wire, Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::BTreeMap;

/// How many repaired packets and answered DREQs a replier remembers (ns-2 keeps 10 of each).
pub const REMEMBER: usize = 64;

/// Default refresh interval of adaptive repliers, in packets received (1 s at the seed's
/// 10 packets/s).
pub const DEFAULT_REFRESH_PACKETS: u64 = spec::REFRESH_PACKETS;

/// Largest application message one DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 16;

/// Original data: DATA packets of at most [`MAX_MESSAGE`] bytes.
const DATA: DataFormat = DataFormat {
    max_message: MAX_MESSAGE,
    data: |seq, payload| Message::Lms(wire::Message::Data { seq, payload }),
};

/// Static replier selection: among downstream interfaces with the distance to the closest
/// receiver behind each, the closest; ties go to the lowest interface.
pub fn choose_replier(candidates: &[(IfaceId, Duration)]) -> Option<IfaceId> {
    candidates
        .iter()
        .min_by_key(|&&(i, d)| (d, i))
        .map(|&(i, _)| i)
}

crate::config::group_config! {
    /// Source configuration.
    pub struct SourceConfig {
        /// HEARTBEAT period (`None`: none).
        pub heartbeat: Option<Duration> = p.heartbeat,
        /// How long after [`SenderAgent::close`](crate::SenderAgent::close) the source reports
        /// [`Event::Completed`] (and stops heartbeats): LMS has no acknowledgments, so the source
        /// cannot know when receivers finish.
        pub linger: Duration = p.linger,
    }
    pub fn new() from p: Params;
}

/// The LMS source.
pub struct Source {
    cfg: SourceConfig,
    sent: Originals,
    buf: RetransmitBuffer,
    timers: TimerSet<SourceTimer>,
    out: Outbox,
}

impl Source {
    /// A source built from `cfg`.
    pub fn new(cfg: SourceConfig) -> Self {
        Source {
            timers: Originals::timers(cfg.heartbeat),
            sent: Originals::new(cfg.node, cfg.group, cfg.session, DATA),
            cfg,
            buf: RetransmitBuffer::new(usize::MAX),
            out: Outbox::new(),
        }
    }

    fn push(&mut self, msg: wire::Message<'_>, flags: u8) {
        self.sent.push(&mut self.out, &Message::Lms(msg), flags);
    }

    fn on_message(&mut self, now: Time, _from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::Request { seq, .. } => {
                if let Some(data) = self.buf.mark_resent(seq, now) {
                    self.out.stats.repairs_sent += 1;
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
            _ => self.out.ignore(),
        }
    }

    fn heartbeat(&mut self, _now: Time) {
        self.out.stats.control_sent += 1;
        let lead = self.sent.next();
        self.push(wire::Message::Heartbeat { lead }, 0);
    }
}

impl Agent for Source {
    crate::outbox::agent_io!(out, on_message);
    crate::sendq::source_timers!(sent, timers, announce: heartbeat every heartbeat);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Source {
    crate::sendq::originals_field!(sent, buf: buf, timers: timers);

    fn can_send(&self) -> bool {
        !self.sent.is_closed()
    }
}

crate::config::receiver_config! {
    /// Receiver configuration.
    pub struct ReceiverConfig {
        /// The data source (where requests that no replier answers end).
        pub source: NodeId = source,
        /// Repeat a request after this long without the data.
        pub request_timeout: Duration = p.request_timeout,
        /// Packets of receive window beyond the next expected one.
        pub window: usize = crate::config::RECEIVE_WINDOW,
        /// Adaptive repliers: send a REFRESH with this receiver's cost (losses detected in the
        /// interval) every this many packets received. `None`: static repliers, no refreshes
        /// (the default).
        pub refresh_every: Option<u64> = p.adaptive().then_some(p.refresh_packets),
    }
    pub fn new(source: NodeId) from p: Params;
}

/// Counters specific to LMS receivers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LmsStats {
    /// Requests sent (first ones and repeats).
    pub requests_sent: u64,
    /// DREQs answered with a repair.
    pub dreqs_served: u64,
    /// DREQs for data this receiver lacks.
    pub dreqs_unserved: u64,
    /// First DREQs left unanswered because this receiver got the packet as a repair or
    /// already answered the same (packet, turning point, interface).
    pub dreqs_covered: u64,
    /// REFRESH messages sent (adaptive repliers).
    pub refreshes_sent: u64,
}

/// An LMS receiver (and potential replier).
pub struct Receiver {
    cfg: ReceiverConfig,
    window: SeqWindow,
    /// Every packet received (the receiver may be a replier): the data alone, kept for good.
    store: SeqMap<Bytes>,
    known: u64,
    timers: TimerSet<u64>,
    /// Requests sent so far for each packet still missing.
    attempts: SeqMap<u16>,
    /// Packets received first as a repair (the last [`REMEMBER`]).
    repaired: Vec<u64>,
    /// DREQs answered: (packet, turning point, interface) (the last [`REMEMBER`]).
    answered: Vec<(u64, u32, u32)>,
    /// Packets received and losses detected since the last REFRESH.
    interval_packets: u64,
    interval_losses: u32,
    out: Outbox,
    lms: LmsStats,
}

/// Add `item` to a list of the last [`REMEMBER`] items, oldest first (a vector: 64 entries
/// at most, and most receivers keep one or none, in a buffer of exactly that).
fn remember<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        if list.len() >= REMEMBER {
            list.remove(0);
        } else {
            crate::seqmap::reserve_one_while_small(list, 4);
        }
        list.push(item);
    }
}

impl Receiver {
    /// A receiver built from `cfg`.
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            window: SeqWindow::new(cfg.window),
            cfg,
            store: SeqMap::new(),
            known: 0,
            timers: TimerSet::new(),
            attempts: SeqMap::new(),
            repaired: Vec::new(),
            answered: Vec::new(),
            interval_packets: 0,
            interval_losses: 0,
            out: Outbox::new(),
            lms: LmsStats::default(),
        }
    }

    /// Counters specific to LMS receivers.
    pub fn lms_stats(&self) -> &LmsStats {
        &self.lms
    }

    fn send_to(&mut self, dest: NodeId, msg: wire::Message<'_>, flags: u8) {
        let env = envelope(self.cfg.session, self.cfg.node, flags);
        self.out.transmit(Dest::Node(dest), env, &Message::Lms(msg));
    }

    fn request(&mut self, now: Time, seq: u64) {
        self.lms.requests_sent += 1;
        self.out.stats.control_sent += 1;
        let n = self.attempts.get_or_insert_with(seq, || 0);
        let attempt = *n;
        *n = n.saturating_add(1);
        self.send_to(self.cfg.source, wire::Message::Request { seq, attempt }, 0);
        self.timers.set(seq, now + self.cfg.request_timeout);
    }

    /// Count a new packet toward the refresh interval; at its end, report the cost.
    fn count_packet(&mut self) {
        let Some(every) = self.cfg.refresh_every else {
            return;
        };
        self.interval_packets += 1;
        if self.interval_packets >= every.max(1) {
            let cost = self.interval_losses;
            self.interval_packets = 0;
            self.interval_losses = 0;
            self.lms.refreshes_sent += 1;
            self.out.stats.control_sent += 1;
            self.send_to(self.cfg.source, wire::Message::Refresh { cost }, 0);
        }
    }

    fn learn(&mut self, now: Time, next: u64) {
        for s in self.window.newly_known(&mut self.known, next) {
            if !self.window.contains(s) && !self.timers.is_armed(s) {
                self.out.event(Event::LossDetected { seq: s });
                self.interval_losses = self.interval_losses.saturating_add(1);
                self.request(now, s);
            }
        }
    }

    fn data(&mut self, now: Time, seq: u64, payload: &[u8], shared: Option<&Bytes>, repair: bool) {
        if self.out.arrived(&mut self.window, seq) {
            self.timers.cancel(seq);
            self.attempts.remove(seq);
            if repair {
                remember(&mut self.repaired, seq);
            }
            self.store.get_or_insert_with(seq, || hold(shared, payload));
            self.learn(now, seq + 1);
            self.count_packet();
            let store = &self.store;
            self.out
                .deliver_in_order(&mut self.window, |s| store.get(s).cloned());
        }
    }
}

impl Receiver {
    fn on_message(&mut self, now: Time, m: wire::Message<'_>, shared: Option<&Bytes>) {
        match m {
            wire::Message::Data { seq, payload } => self.data(now, seq, payload, shared, false),
            wire::Message::Repair { seq, payload, .. } => {
                self.data(now, seq, payload, shared, true)
            }
            wire::Message::Heartbeat { lead } => self.learn(now, lead),
            wire::Message::Dreq {
                seq,
                tp,
                tp_iface,
                attempt,
                ..
            } if attempt == 0
                && self.store.contains_key(seq)
                && (self.repaired.contains(&seq)
                    || self.answered.contains(&(seq, tp, tp_iface))) =>
            {
                self.lms.dreqs_covered += 1;
            }
            wire::Message::Dreq {
                seq, tp, tp_iface, ..
            } => match self.store.get(seq).cloned() {
                Some(data) => {
                    remember(&mut self.answered, (seq, tp, tp_iface));
                    self.lms.dreqs_served += 1;
                    self.out.stats.repairs_sent += 1;
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
            wire::Message::Request { .. } | wire::Message::Refresh { .. } => self.out.ignore(),
        }
    }

    fn on_timer(&mut self, now: Time, seq: u64) {
        if !self.window.contains(seq) {
            self.out.stats.timeouts += 1;
            self.request(now, seq);
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message with bytes, timers => on_timer);
}

crate::config::group_config! {
    /// Router configuration.
    pub struct RouterConfig {
        /// The replier link (`None`: no receiver below; requests are passed upstream;
        /// [`IfaceId::LOCAL`]: the receiver on this router's own node, which
        /// [`deploy`](super::deploy) chooses wherever there is one).
        pub replier: Option<IfaceId> = replier,
        /// Adaptive repliers: follow the costs receivers report in REFRESH messages (see the
        /// module documentation). `false`: the replier link never changes and REFRESH passes.
        pub adaptive: bool = false,
        /// Downstream interfaces with the distance to the closest receiver behind each (what
        /// [`choose_replier`] chose from); an adaptive router breaks cost ties with it.
        pub candidates: Vec<(IfaceId, Duration)> = Vec::new(),
    }
    /// A static router with replier link `replier`.
    pub fn new(replier: Option<IfaceId>);
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
    /// DREQs handed to the receiver on this router's node (replier [`IfaceId::LOCAL`]).
    pub dreqs_here: u64,
    /// Repairs subcast from here.
    pub subcasts: u64,
    /// Replier-link changes (adaptive repliers).
    pub switches: u64,
    /// REFRESH messages passed upstream (adaptive repliers).
    pub refreshes_up: u64,
}

/// An LMS router agent: one replier link per group, no per-packet state.
pub struct Router {
    cfg: RouterConfig,
    /// Adaptive: the last cost heard on each downstream interface.
    costs: BTreeMap<IfaceId, u32>,
    out: Outbox<RouterTransmit>,
    lms: RouterStats,
}

impl Router {
    /// A router built from `cfg`.
    pub fn new(cfg: RouterConfig) -> Self {
        let mut costs = BTreeMap::new();
        if let (true, Some(r)) = (cfg.adaptive, cfg.replier) {
            // The static choice starts as a replier without losses.
            costs.insert(r, 0);
        }
        Router {
            cfg,
            costs,
            out: Outbox::new(),
            lms: RouterStats::default(),
        }
    }

    /// The cheapest interface heard from: on equal cost the current replier, then the
    /// closer candidate, then the lowest interface.
    fn cheapest(&self) -> Option<IfaceId> {
        let dist = |i: IfaceId| {
            self.cfg
                .candidates
                .iter()
                .find(|&&(c, _)| c == i)
                .map_or(Duration::MAX, |&(_, d)| d)
        };
        self.costs
            .iter()
            .min_by_key(|&(&i, &c)| (c, Some(i) != self.cfg.replier, dist(i), i))
            .map(|(&i, _)| i)
    }

    /// A REFRESH with `cost` arrived on `ingress` (adaptive routers).
    fn refresh(&mut self, ingress: IfaceId, dest: Dest, cost: u32) {
        self.costs.insert(ingress, cost);
        let old = self.cfg.replier;
        let best = self.cheapest();
        if best != old {
            self.cfg.replier = best;
            self.lms.switches += 1;
        }
        if old == Some(ingress) || best != old {
            let Some(c) = best.and_then(|b| self.costs.get(&b).copied()) else {
                return;
            };
            let env = envelope(self.cfg.session, self.cfg.node, 0);
            let refresh = Message::Lms(wire::Message::Refresh { cost: c });
            if self.out.transmit_via(dest, None, env, &refresh) {
                self.out.stats.control_sent += 1;
                self.lms.refreshes_up += 1;
            }
        }
    }
    /// The interface the replier link points down, if there is one.
    pub fn replier(&self) -> Option<IfaceId> {
        self.cfg.replier
    }
    /// Change the replier link (a driver's or a refresh protocol's decision).
    pub fn set_replier(&mut self, iface: Option<IfaceId>) {
        self.cfg.replier = iface;
    }
    /// Counters specific to LMS routers.
    pub fn router_stats(&self) -> &RouterStats {
        &self.lms
    }
}

impl Router {
    fn on_message(
        &mut self,
        _now: Time,
        ingress: IfaceId,
        from: NodeId,
        dest: Dest,
        m: wire::Message<'_>,
        packet: &[u8],
    ) -> RouteDecision {
        match m {
            wire::Message::Request { seq, attempt } => match self.cfg.replier {
                Some(r) if r != ingress => {
                    self.lms.turned += 1;
                    self.out.stats.control_sent += 1;
                    let dreq = wire::Message::Dreq {
                        seq,
                        requester: from.0,
                        tp: self.cfg.node.0,
                        tp_iface: ingress.0,
                        attempt,
                    };
                    let env = envelope(self.cfg.session, self.cfg.node, 0);
                    let dest = Dest::Group(self.cfg.group);
                    self.out
                        .transmit_via(dest, Some(vec![r]), env, &Message::Lms(dreq));
                    RouteDecision::Consume
                }
                _ => {
                    self.lms.passed_up += 1;
                    RouteDecision::Forward
                }
            },
            wire::Message::Dreq { .. } => match self.cfg.replier {
                // This node's own receiver replies: the DREQ goes to it and on no link
                // (consuming it left the receiver without it: on a graph whose members sit
                // on routers no DREQ ever reached a replier).
                Some(IfaceId::LOCAL) => {
                    self.lms.dreqs_here += 1;
                    RouteDecision::ForwardOn(vec![IfaceId::LOCAL])
                }
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
                self.out.stats.repairs_sent += 1;
                let subcast = Transmit {
                    dest: Dest::Group(self.cfg.group),
                    payload: Bytes::copy_from_slice(packet),
                };
                self.out.push_via(subcast, Some(vec![IfaceId(tp_iface)]));
                RouteDecision::Consume
            }
            wire::Message::Refresh { cost } if self.cfg.adaptive => {
                self.refresh(ingress, dest, cost);
                RouteDecision::Consume
            }
            _ => RouteDecision::Forward,
        }
    }
}

impl RouterAgent for Router {
    crate::outbox::router_io!(out, on_message);
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// One replier link per group, when the router has one; an adaptive router also holds
    /// one cost per downstream interface heard from (other than the replier link).
    fn state_entries(&self) -> usize {
        let r = self.cfg.replier;
        usize::from(r.is_some()) + self.costs.keys().filter(|&&i| Some(i) != r).count()
    }
    fn peak_state_entries(&self) -> usize {
        self.state_entries()
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
}

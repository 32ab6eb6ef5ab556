//! [`Outbox`]: what an agent has for its driver — datagrams to send, events to report — and
//! its [`Stats`], with the counting rules every agent shares written once: a sent datagram
//! is counted when it is queued, a received one when it arrives, and an arriving datagram
//! that does not decode is `malformed` while a well-formed one of another session or family
//! is `ignored`.

use crate::window::{HeldWindow, Insert, SeqWindow};
use crate::{Dest, Event, IfaceId, NodeId, RouterTransmit, Stats, Time, Transmit};
use bytes::Bytes;
use rmcast_wire::{Envelope, Message, Packet};
use std::collections::VecDeque;

/// The header flags of a data packet: [`rmcast_wire::FLAG_RETRANSMISSION`] on a retransmission.
pub(crate) fn data_flags(retransmission: bool) -> u8 {
    if retransmission {
        rmcast_wire::FLAG_RETRANSMISSION
    } else {
        0
    }
}

/// The envelope of a datagram `node` sends in `session` with `flags`.
pub(crate) fn envelope(session: u32, node: NodeId, flags: u8) -> Envelope {
    Envelope {
        session,
        source: node.0,
        flags,
    }
}

/// Implements the outbox accessors of [`Agent`](crate::Agent) (`outbox`, `outbox_mut`) — or,
/// with `field: RouterTransmit`, those of [`RouterAgent`](crate::RouterAgent) — through the
/// agent's [`Outbox`] field `field`; write it inside the trait impl: `outbox_field!(out);`.
#[macro_export]
macro_rules! outbox_field {
    ($field:tt) => {
        $crate::outbox_field!($field: $crate::Transmit);
    };
    ($field:tt: $t:ty) => {
        fn outbox(&self) -> &$crate::Outbox<$t> {
            &self.$field
        }
        fn outbox_mut(&mut self) -> &mut $crate::Outbox<$t> {
            &mut self.$field
        }
    };
}

/// Writes the packet and timer entry points of an [`Agent`](crate::Agent) impl, with its
/// outbox accessors ([`outbox_field!`]), for an agent whose datagrams are one family's
/// messages in its session `self.cfg.session`: `handle_packet` counts and decodes a datagram
/// with the outbox's [`accept`](Outbox::accept) and hands an accepted message to the agent's
/// method `$on(now, from, message)`; with `$on with bytes`, to `$on(now, message, shared)`,
/// where `shared` is the datagram as shared [`Bytes`] when the driver has it
/// (`handle_packet_bytes`; `None` from `handle_packet`), for a receiver that keeps part of it
/// (and does not ask who sent it); with `$on with from and bytes`, to
/// `$on(now, from, message, shared)`.
/// Then, for the timers:
///
/// * `$timers => $fire`: `handle_timeout` hands every expired key of the
///   [`TimerSet`](crate::timer::TimerSet) field `$timers` to `$fire(now, key)`, in order, and
///   `poll_timeout` is that set's next deadline;
/// * `no_timers`: the agent arms none;
/// * nothing: the agent writes its own `handle_timeout` and `poll_timeout`.
///
/// Write it inside the trait impl: `agent_io!(out, on_message, timers => on_timer);`.
macro_rules! agent_io {
    ($out:ident, $on:ident $(with $($bytes:ident)+)? $(, $($timers:tt)+)?) => {
        $crate::outbox::agent_io!(@packet $out, $on $(with $($bytes)+)?);
        $crate::outbox_field!($out);
        $crate::outbox::agent_io!(@timers $($($timers)+)?);
    };
    (@packet $out:ident, $on:ident) => {
        fn handle_packet(&mut self, now: $crate::Time, from: $crate::NodeId, packet: &[u8]) {
            if let Some(m) = self.$out.accept(packet, self.cfg.session) {
                self.$on(now, from, m);
            }
        }
    };
    (@packet $out:ident, $on:ident with from and bytes) => {
        fn handle_packet(&mut self, now: $crate::Time, from: $crate::NodeId, packet: &[u8]) {
            if let Some(m) = self.$out.accept(packet, self.cfg.session) {
                self.$on(now, from, m, None);
            }
        }
        fn handle_packet_bytes(
            &mut self,
            now: $crate::Time,
            from: $crate::NodeId,
            packet: &$crate::Bytes,
        ) {
            if let Some(m) = self.$out.accept(packet, self.cfg.session) {
                self.$on(now, from, m, Some(packet));
            }
        }
    };
    (@packet $out:ident, $on:ident with bytes) => {
        fn handle_packet(&mut self, now: $crate::Time, _from: $crate::NodeId, packet: &[u8]) {
            if let Some(m) = self.$out.accept(packet, self.cfg.session) {
                self.$on(now, m, None);
            }
        }
        fn handle_packet_bytes(
            &mut self,
            now: $crate::Time,
            _from: $crate::NodeId,
            packet: &$crate::Bytes,
        ) {
            if let Some(m) = self.$out.accept(packet, self.cfg.session) {
                self.$on(now, m, Some(packet));
            }
        }
    };
    (@timers) => {};
    (@timers $timers:ident => $fire:ident) => {
        fn handle_timeout(&mut self, now: $crate::Time) {
            while let Some(key) = self.$timers.pop_expired(now) {
                self.$fire(now, key);
            }
        }
        fn poll_timeout(&self) -> Option<$crate::Time> {
            self.$timers.next()
        }
    };
    (@timers no_timers) => {
        fn handle_timeout(&mut self, _now: $crate::Time) {}
        fn poll_timeout(&self) -> Option<$crate::Time> {
            None
        }
    };
}
pub(crate) use agent_io;

/// Writes the packet entry point of a [`RouterAgent`](crate::RouterAgent) impl, with its
/// outbox accessors, for a router agent whose datagrams are one family's messages in its
/// session `self.cfg.session`: `on_packet` counts and decodes a datagram with the outbox's
/// [`accept`](Outbox::accept); one not for this agent is forwarded unexamined, an accepted
/// message goes to the agent's method `$on(now, ingress, from, dest, message, packet)`, which
/// decides its route. Write it inside the trait impl: `router_io!(out, on_message);`.
macro_rules! router_io {
    ($out:ident, $on:ident) => {
        fn on_packet(
            &mut self,
            now: $crate::Time,
            ingress: $crate::IfaceId,
            from: $crate::NodeId,
            dest: $crate::Dest,
            packet: &[u8],
        ) -> $crate::RouteDecision {
            match self.$out.accept(packet, self.cfg.session) {
                Some(m) => self.$on(now, ingress, from, dest, m, packet),
                None => $crate::RouteDecision::Forward,
            }
        }
        $crate::outbox_field!($out: $crate::RouterTransmit);
    };
}
pub(crate) use router_io;

/// A first-in-first-out queue that holds one item without allocating and frees its buffer
/// whenever it empties. An agent's outbox is drained after every call, mostly of zero or one
/// item, and a simulation holds one per agent: a `VecDeque` would keep the capacity of its
/// largest burst for the whole run (192 bytes per receiver after its first deliveries).
#[derive(Debug, Clone, Default)]
enum Fifo<T> {
    #[default]
    Empty,
    One(T),
    Many(VecDeque<T>),
}

impl<T> Fifo<T> {
    fn push(&mut self, item: T) {
        match std::mem::take(self) {
            Fifo::Empty => *self = Fifo::One(item),
            Fifo::One(first) => *self = Fifo::Many(VecDeque::from([first, item])),
            Fifo::Many(mut q) => {
                q.push_back(item);
                *self = Fifo::Many(q);
            }
        }
    }

    fn pop(&mut self) -> Option<T> {
        match std::mem::take(self) {
            Fifo::Empty => None,
            Fifo::One(item) => Some(item),
            Fifo::Many(mut q) => {
                let item = q.pop_front();
                if !q.is_empty() {
                    *self = Fifo::Many(q);
                }
                item
            }
        }
    }
}

/// The queues an agent fills and its driver drains, plus the agent's counters.
///
/// `T` is what the driver drains: [`Transmit`] for an [`Agent`](crate::Agent),
/// [`RouterTransmit`] for a [`RouterAgent`](crate::RouterAgent) (router agents report no
/// events, so their event queue stays empty). The trait methods `poll_transmit`,
/// `poll_event` and `stats` of both traits are defaulted through it.
#[derive(Debug, Clone)]
pub struct Outbox<T = Transmit> {
    transmits: Fifo<T>,
    events: Fifo<Event>,
    /// The agent's counters; an agent updates the protocol-specific ones (`data_sent`,
    /// `duplicates`, …) directly, the outbox the traffic and decoding ones.
    pub stats: Stats,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox {
            transmits: Fifo::Empty,
            events: Fifo::Empty,
            stats: Stats::default(),
        }
    }
}

impl<T> Outbox<T> {
    /// Empty queues, zero counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queue `event` for the driver (after every event queued before it).
    pub fn event(&mut self, event: Event) {
        self.events.push(event);
    }

    /// A sender is done with message `seq`: count it as `completed` or (given up on at the
    /// retransmission limit) `failed`, and report [`Event::MessageDone`].
    pub fn message_done(
        &mut self,
        seq: u64,
        sent_at: Time,
        done_at: Time,
        transmissions: u32,
        failed: bool,
    ) {
        if failed {
            self.stats.failed += 1;
        } else {
            self.stats.completed += 1;
        }
        self.event(Event::MessageDone {
            seq,
            sent_at,
            done_at,
            transmissions,
            failed,
        });
    }

    /// A receiver hands message `seq` to the application: count it `delivered` and report
    /// [`Event::Delivered`].
    pub fn deliver(&mut self, seq: u64, data: Bytes) {
        self.stats.delivered += 1;
        self.event(Event::Delivered { seq, data });
    }

    /// Record the arrival of `seq` in a receiver's `window`: `true` when it is new there; a
    /// duplicate counts in `duplicates`, one beyond the window in `ignored`.
    pub fn arrived(&mut self, window: &mut SeqWindow, seq: u64) -> bool {
        self.count_arrival(window.insert(seq))
    }

    /// [`Outbox::arrived`] for a window that holds its messages' data: `data()` is kept
    /// when `seq` is new.
    pub fn arrived_held(
        &mut self,
        window: &mut HeldWindow,
        seq: u64,
        data: impl FnOnce() -> Bytes,
    ) -> bool {
        self.count_arrival(window.insert(seq, data))
    }

    /// Deliver every message `window` now holds in order, with its data.
    pub fn deliver_held(&mut self, window: &mut HeldWindow) {
        while let Some((seq, data)) = window.pop_in_order() {
            self.deliver(seq, data);
        }
    }

    /// Count what an insert found: a duplicate or a sequence number beyond the window
    /// (ignored); `true` for a new one.
    pub fn count_arrival(&mut self, found: Insert) -> bool {
        match found {
            Insert::New => true,
            Insert::Duplicate => {
                self.stats.duplicates += 1;
                false
            }
            Insert::TooFar => {
                self.stats.ignored += 1;
                false
            }
        }
    }

    /// Deliver every message `window` now has in order ([`SeqWindow::pop_in_order`]), its
    /// data from `data` (empty if `data` has none).
    pub fn deliver_in_order(
        &mut self,
        window: &mut SeqWindow,
        mut data: impl FnMut(u64) -> Option<Bytes>,
    ) {
        while let Some(s) = window.pop_in_order() {
            self.deliver(s, data(s).unwrap_or_default());
        }
    }

    /// The oldest queued datagram (what `poll_transmit` returns).
    pub fn pop_transmit(&mut self) -> Option<T> {
        self.transmits.pop()
    }

    /// The oldest queued event (what `poll_event` returns).
    pub fn pop_event(&mut self) -> Option<Event> {
        self.events.pop()
    }

    /// Count one arriving datagram and decode it as a message of family `M` in `session`.
    /// `None` when it is not for this agent, already counted: [`Stats::malformed`] if it does
    /// not decode, [`Stats::ignored`] if it is well-formed but of another session or family.
    pub fn accept<'a, M>(&mut self, packet: &'a [u8], session: u32) -> Option<M>
    where
        M: TryFrom<Message<'a>>,
    {
        self.stats.count_received(packet);
        let Ok(p) = Packet::decode(packet) else {
            self.stats.malformed += 1;
            return None;
        };
        if p.header.session != session {
            self.stats.ignored += 1;
            return None;
        }
        match M::try_from(p.message) {
            Ok(m) => Some(m),
            Err(_) => {
                self.stats.ignored += 1;
                None
            }
        }
    }

    /// Count a well-formed datagram of this agent's session and family that this role does
    /// not act on (a message kind meant for another role, a stranger's feedback, …).
    pub fn ignore(&mut self) {
        self.stats.ignored += 1;
    }

    /// Encode `msg` with `env` and queue it as `wrap(transmit)`, counting it sent. A message
    /// that cannot be encoded (only an oversize one, which senders prevent by bounding message
    /// sizes) is counted in [`Stats::malformed`] and dropped, never a panic. Returns whether it
    /// was queued.
    fn queue_encoded(
        &mut self,
        dest: Dest,
        env: Envelope,
        msg: &Message<'_>,
        wrap: impl FnOnce(Transmit) -> T,
    ) -> bool {
        match Packet::to_vec(env, msg) {
            Ok(v) => {
                self.queue(
                    Transmit {
                        dest,
                        payload: Bytes::from(v),
                    },
                    wrap,
                );
                true
            }
            Err(_) => {
                self.stats.malformed += 1;
                false
            }
        }
    }

    fn queue(&mut self, t: Transmit, wrap: impl FnOnce(Transmit) -> T) {
        self.stats.count_sent(&t);
        self.transmits.push(wrap(t));
    }
}

impl Outbox<Transmit> {
    /// Encode `msg` with `env`, queue it for `dest` and count it sent; see
    /// `Outbox::queue_encoded` for what happens to a message too large to
    /// encode. Returns whether it was queued.
    pub fn transmit(&mut self, dest: Dest, env: Envelope, msg: &Message<'_>) -> bool {
        self.queue_encoded(dest, env, msg, |t| t)
    }

    /// Unicast `msg`, a receiver's feedback (an ACK, a report), to `to` with `env`, counted in
    /// [`Stats::control_sent`] when queued. Returns whether it was queued.
    pub fn control(&mut self, to: NodeId, env: Envelope, msg: &Message<'_>) -> bool {
        let queued = self.transmit(Dest::Node(to), env, msg);
        if queued {
            self.stats.control_sent += 1;
        }
        queued
    }

    /// Queue an already encoded datagram and count it sent.
    pub fn push(&mut self, t: Transmit) {
        self.queue(t, |t| t);
    }
}

impl Outbox<RouterTransmit> {
    /// Encode `msg` with `env` and queue it for `dest`, routed normally from the router
    /// (`via: None`) or out of exactly the interfaces `via`; counted sent. Returns whether it
    /// was queued (see [`Outbox::transmit`]).
    pub fn transmit_via(
        &mut self,
        dest: Dest,
        via: Option<Vec<IfaceId>>,
        env: Envelope,
        msg: &Message<'_>,
    ) -> bool {
        self.queue_encoded(dest, env, msg, |transmit| RouterTransmit { transmit, via })
    }

    /// Queue an already encoded datagram (e.g. a copy of one the router received) out of
    /// `via` and count it sent.
    pub fn push_via(&mut self, transmit: Transmit, via: Option<Vec<IfaceId>>) {
        self.queue(transmit, |transmit| RouterTransmit { transmit, via });
    }

    /// Take over what an endpoint hosted inside a router agent queued: its datagrams, routed
    /// normally from the router; its counters, in place of the router's own except
    /// `ignored` (packets the router turned away before the endpoint saw them). Its events
    /// are dropped: a router agent reports none, and what the endpoint delivers it holds only
    /// to serve others.
    pub fn absorb(&mut self, endpoint: &mut dyn crate::Agent) {
        while let Some(t) = endpoint.poll_transmit() {
            self.push_via(t, None);
        }
        while endpoint.poll_event().is_some() {}
        let ignored = self.stats.ignored;
        self.stats = endpoint.stats().clone();
        self.stats.ignored += ignored;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GroupId, NodeId};
    use rmcast_wire::saw;

    proptest::proptest! {
        /// The queue agrees with a `VecDeque` on any sequence of pushes and pops, and holds no
        /// buffer once empty.
        #[test]
        fn fifo_matches_a_deque(ops in proptest::collection::vec(proptest::option::of(0u32..100), 0..200)) {
            let (mut f, mut model) = (Fifo::Empty, VecDeque::new());
            for op in ops {
                match op {
                    Some(x) => {
                        f.push(x);
                        model.push_back(x);
                    }
                    None => proptest::prop_assert_eq!(f.pop(), model.pop_front()),
                }
                proptest::prop_assert_eq!(model.is_empty(), matches!(f, Fifo::Empty));
            }
        }
    }

    fn datagram(session: u32, msg: Message<'_>) -> Vec<u8> {
        let env = Envelope {
            session,
            source: 1,
            flags: 0,
        };
        Packet::to_vec(env, &msg).unwrap_or_default()
    }

    #[test]
    fn accept_counts_every_datagram_once_and_sorts_out_strangers() {
        let mut o: Outbox = Outbox::new();
        let ack = datagram(7, Message::Saw(saw::Message::Ack { seq: 1 }));
        let other_session = datagram(8, Message::Saw(saw::Message::Ack { seq: 1 }));
        let other_family = datagram(7, Message::Bap(rmcast_wire::bap::Message::Ack { seq: 1 }));
        assert_eq!(
            o.accept::<saw::Message<'_>>(&ack, 7),
            Some(saw::Message::Ack { seq: 1 })
        );
        assert_eq!(o.accept::<saw::Message<'_>>(&other_session, 7), None);
        assert_eq!(o.accept::<saw::Message<'_>>(&other_family, 7), None);
        assert_eq!(o.accept::<saw::Message<'_>>(&[1, 2, 3], 7), None);
        assert_eq!(o.stats.packets_received, 4);
        assert_eq!(
            o.stats.bytes_received,
            (ack.len() + other_session.len() + other_family.len() + 3) as u64
        );
        assert_eq!((o.stats.ignored, o.stats.malformed), (2, 1));
        // Any family, as the whole message enum.
        assert!(o.accept::<Message<'_>>(&other_family, 7).is_some());
    }

    #[test]
    fn queued_datagrams_and_events_come_out_in_order_and_are_counted() {
        let mut o: Outbox = Outbox::new();
        let env = Envelope::default();
        let dest = Dest::Group(GroupId(1));
        assert!(o.transmit(dest, env, &Message::Saw(saw::Message::Ack { seq: 0 })));
        o.push(Transmit {
            dest: Dest::Node(NodeId(2)),
            payload: Bytes::from_static(b"xyz"),
        });
        let big = vec![0u8; rmcast_wire::MAX_DATAGRAM];
        let too_big = Message::Saw(saw::Message::Data {
            seq: 0,
            payload: &big,
        });
        assert!(!o.transmit(dest, env, &too_big));
        o.event(Event::Completed);
        o.event(Event::LossDetected { seq: 3 });
        assert_eq!(o.stats.packets_sent, 2);
        assert_eq!(o.stats.malformed, 1);
        assert_eq!(o.pop_transmit().map(|t| t.dest), Some(dest));
        assert_eq!(
            o.pop_transmit().map(|t| t.payload),
            Some(Bytes::from_static(b"xyz"))
        );
        assert_eq!(o.pop_transmit(), None);
        assert_eq!(o.pop_event(), Some(Event::Completed));
        assert_eq!(o.pop_event(), Some(Event::LossDetected { seq: 3 }));
        assert_eq!(o.pop_event(), None);
    }

    #[test]
    fn router_outbox_keeps_the_pinned_interfaces() {
        let mut o: Outbox<RouterTransmit> = Outbox::new();
        let dest = Dest::Group(GroupId(1));
        let msg = Message::Saw(saw::Message::Ack { seq: 0 });
        assert!(o.transmit_via(dest, Some(vec![IfaceId(3)]), Envelope::default(), &msg));
        o.push_via(
            Transmit {
                dest,
                payload: Bytes::from_static(b"ab"),
            },
            None,
        );
        assert_eq!(o.stats.packets_sent, 2);
        assert_eq!(o.pop_transmit().and_then(|t| t.via), Some(vec![IfaceId(3)]));
        assert_eq!(o.pop_transmit().map(|t| t.via), Some(None));
    }
}

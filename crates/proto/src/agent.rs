//! The Agent API: what every protocol role implements and every driver calls.

use crate::Outbox;
use crate::Time;
use bytes::Bytes;
use core::fmt;
use core::time::Duration;

/// A node (host or router) in a run. Drivers assign them; on a real network the sender maps
/// socket addresses to node ids.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct NodeId(pub u32);

/// A multicast group. Local regions (DSP/CP local groups, LMS subcasts) are extra groups.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GroupId(pub u32);

/// One interface of a router, as numbered by the driver.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct IfaceId(pub u32);

impl IfaceId {
    /// The router's own node (a host agent on a router, as in imported graphs where every
    /// node routes), not a link: a datagram that agent addresses to its own node reaches the
    /// node's router agent with this `ingress`, and a [`RouterTransmit`] whose `via` names it
    /// is handed to that agent (ns-2 attaches agents to a node the same way).
    pub const LOCAL: IfaceId = IfaceId(u32::MAX);
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}
impl fmt::Debug for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "g{}", self.0)
    }
}
impl fmt::Debug for IfaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == IfaceId::LOCAL {
            return f.write_str("local");
        }
        write!(f, "if{}", self.0)
    }
}

/// Where a packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dest {
    /// Every member of a multicast group (the sender itself is not a receiver of its own
    /// transmission).
    Group(GroupId),
    /// One node, unicast.
    Node(NodeId),
}

/// A datagram an agent wants sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where it goes: a group or one node.
    pub dest: Dest,
    /// The whole encoded datagram, header included (see `rmcast-wire`).
    pub payload: Bytes,
}

/// What an agent reports to its driver and application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Receiver: application message number `seq` (0, 1, 2, … in order) is delivered.
    Delivered {
        /// Message number, counted from 0 in delivery order.
        seq: u64,
        /// The message as the sender handed it to [`SenderAgent::send`].
        data: Bytes,
    },
    /// Sender: message `seq` is finished — acknowledged by every receiver, or given up on
    /// (`failed`) when its retransmission limit was reached.
    MessageDone {
        /// Message number at the sender, counted from 0 in `send` order.
        seq: u64,
        /// When the message was first transmitted.
        sent_at: Time,
        /// When the last acknowledgment arrived (or the sender gave up).
        done_at: Time,
        /// Transmissions of this message, the first included.
        transmissions: u32,
        /// Given up on at the retransmission limit rather than acknowledged.
        failed: bool,
    },
    /// Receiver or sender: a loss was detected (gap, timeout) for message `seq`.
    LossDetected {
        /// The message (or packet) found missing.
        seq: u64,
    },
    /// Sender: everything handed to [`SenderAgent::send`] before [`SenderAgent::close`] is
    /// finished.
    Completed,
}

/// The fields of an [`Event::MessageDone`] as one value ([`Event::message_done`]), for
/// collectors and tests that keep the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageDone {
    /// Message number at the sender, counted from 0 in `send` order.
    pub seq: u64,
    /// When the message was first transmitted.
    pub sent_at: Time,
    /// When the last acknowledgment arrived (or the sender gave up).
    pub done_at: Time,
    /// Transmissions of this message, the first included.
    pub transmissions: u32,
    /// Given up on at the retransmission limit rather than acknowledged.
    pub failed: bool,
}

impl MessageDone {
    /// Retransmissions (transmissions after the first).
    pub fn retransmissions(&self) -> u32 {
        self.transmissions.saturating_sub(1)
    }
}

impl Event {
    /// The record of this [`Event::MessageDone`]; `None` for any other event.
    pub fn message_done(&self) -> Option<MessageDone> {
        match *self {
            Event::MessageDone {
                seq,
                sent_at,
                done_at,
                transmissions,
                failed,
            } => Some(MessageDone {
                seq,
                sent_at,
                done_at,
                transmissions,
                failed,
            }),
            _ => None,
        }
    }
}

/// Counters every agent keeps. Drivers and collectors compute metrics from these and from
/// [`Event`]s, never from agent internals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Datagrams queued for sending.
    pub packets_sent: u64,
    /// Bytes of those datagrams, headers included.
    pub bytes_sent: u64,
    /// Datagrams handed to the agent, whatever they held.
    pub packets_received: u64,
    /// Bytes of those datagrams.
    pub bytes_received: u64,
    /// Original data transmissions.
    pub data_sent: u64,
    /// Data retransmissions or repairs.
    pub repairs_sent: u64,
    /// Feedback and control packets sent (ACK, NAK, status, poll …).
    pub control_sent: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Datagrams that failed to decode.
    pub malformed: u64,
    /// Well-formed datagrams not meant for this agent (other session, family or role).
    pub ignored: u64,
    /// Data or feedback received again (duplicate data, repeated ACK).
    pub duplicates: u64,
    /// Messages delivered to the application (receivers).
    pub delivered: u64,
    /// Messages finished successfully (senders).
    pub completed: u64,
    /// Messages given up on after the retransmission limit (senders).
    pub failed: u64,
    /// Receivers the protocol itself removed from its group (e.g. `prmp` after a configured
    /// number of silent polls); evictions by the driver are not counted here.
    pub evicted: u64,
}

impl Stats {
    /// Count one outgoing datagram.
    pub fn count_sent(&mut self, t: &Transmit) {
        self.packets_sent += 1;
        self.bytes_sent += t.payload.len() as u64;
    }
    /// Count one incoming datagram.
    pub fn count_received(&mut self, packet: &[u8]) {
        self.packets_received += 1;
        self.bytes_received += packet.len() as u64;
    }
}

/// A measurement of an agent's own state that a driver may read through [`Agent::gauge`]
/// for a study (seed 001's buffer occupancy). Gauges never change what an agent does; an
/// agent that does not keep one answers `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gauge {
    /// Data units (blocks) the agent holds now: a source's outstanding blocks, an
    /// endpoint's reassembly and retransmission buffers.
    Held,
    /// The most units held at once.
    HeldPeak,
    /// Time-average of [`Gauge::Held`] from time zero to `until`.
    HeldMean {
        /// End of the averaging interval.
        until: Time,
    },
    /// The most units held at once in the retransmission buffer kept for other receivers.
    RetxPeak,
    /// Units dropped because they arrived beyond the receive buffer.
    Overflow,
    /// Congestion control's rate, bytes per second: a sender's sending rate, a receiver's
    /// TCP-friendly rate ([`crate::tfmcc`]).
    Rate,
}

/// Why [`SenderAgent::send`] refused a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The agent is a receiver (or another role that sends no application data).
    #[error("this agent does not originate data")]
    NotASender,
    /// The send queue is full; the message is handed back.
    #[error("the send queue is full; try again after the agent makes progress")]
    Full(Bytes),
    /// [`SenderAgent::close`] was called (or the transfer was aborted).
    #[error("the sender was closed")]
    Closed,
    /// The message does not fit the protocol's largest message.
    #[error("message of {len} bytes exceeds the maximum of {max}")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The largest the agent accepts.
        max: usize,
    },
}

/// `part` (a piece of a received datagram) as owned bytes: a slice sharing `shared`'s
/// buffer when `part` lies inside it, else a copy.
pub fn hold(shared: Option<&Bytes>, part: &[u8]) -> Bytes {
    match shared {
        Some(b) => {
            let (start, end) = (b.as_ptr() as usize, b.as_ptr() as usize + b.len());
            let (p0, p1) = (part.as_ptr() as usize, part.as_ptr() as usize + part.len());
            if !part.is_empty() && start <= p0 && p1 <= end {
                b.slice(p0 - start..p1 - start)
            } else {
                Bytes::copy_from_slice(part)
            }
        }
        None => Bytes::copy_from_slice(part),
    }
}

/// One protocol role (sender, receiver, relay, SRM member) as a deterministic state machine.
///
/// # Who calls what, and when
///
/// A *driver* (the simulator, the socket loop, [`testkit`](crate::testkit)) owns the agent
/// and is its only caller:
///
/// 1. every datagram addressed to the agent's node goes in through
///    [`handle_packet`](Agent::handle_packet) (or
///    [`handle_packet_bytes`](Agent::handle_packet_bytes) when the driver holds it as
///    [`Bytes`]), with the arrival time and the sending node;
/// 2. the driver calls [`handle_timeout`](Agent::handle_timeout) once `now` reaches the
///    deadline [`poll_timeout`](Agent::poll_timeout) last returned (calling it early or
///    twice is harmless: the agent acts only on what is due);
/// 3. the application side of the driver reaches a sender through
///    [`as_sender`](Agent::as_sender) ([`SenderAgent`]): it hands data with
///    [`send`](SenderAgent::send) (asking [`can_send`](SenderAgent::can_send) first for
///    back-pressure), ends a transfer with [`close`](SenderAgent::close), and
///    [`remove_receiver`](SenderAgent::remove_receiver) tells it to stop waiting for a
///    receiver the driver evicted;
/// 4. after *every* one of these calls the driver drains
///    [`poll_transmit`](Agent::poll_transmit) and [`poll_event`](Agent::poll_event) until
///    they return `None`, and re-reads [`poll_timeout`](Agent::poll_timeout): a call may
///    queue datagrams and events and move the deadline;
/// 5. [`stats`](Agent::stats) and [`gauge`](Agent::gauge) may be read at any time; metrics
///    come from events, these counters and gauges, never from agent internals.
///
/// # What an implementation provides
///
/// The input methods (`handle_packet`, `handle_timeout`, `poll_timeout`; a sender also
/// `send`, `can_send` and `close` of [`SenderAgent`], and `as_sender`) and access to its
/// [`Outbox`], through which
/// `poll_transmit`, `poll_event` and `stats` are defaulted: the agent queues datagrams with
/// [`Outbox::transmit`], events with [`Outbox::event`], and decodes arriving datagrams with
/// [`Outbox::accept`], which counts them (received, malformed, ignored) by one rule. A
/// wrapper around other agents (e.g. [`prmp::tree::Relay`](crate::prmp::tree::Relay)) may
/// override the defaults to merge its parts' queues.
///
/// # Determinism
///
/// An agent's only inputs are these calls and the seeded [`AgentRng`](crate::rng::AgentRng)
/// it was built with: given the same calls with the same arguments it produces the same
/// datagrams, events, deadlines and counters, in the same order. It never reads a clock and
/// never panics on packet contents.
pub trait Agent {
    /// A datagram arrived from node `from`.
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]);
    /// The same, for a driver that holds the datagram as shared [`Bytes`] (the simulator
    /// delivers one buffer to every receiver): an agent that keeps part of it (a receive or
    /// repair buffer) may take a slice of `packet` with [`hold`] instead of a copy. Same
    /// behaviour as [`handle_packet`](Agent::handle_packet), which is the default.
    fn handle_packet_bytes(&mut self, now: Time, from: NodeId, packet: &Bytes) {
        self.handle_packet(now, from, packet)
    }
    /// The deadline from [`poll_timeout`](Agent::poll_timeout) has passed.
    fn handle_timeout(&mut self, now: Time);
    /// Earliest instant at which the agent wants [`handle_timeout`](Agent::handle_timeout)
    /// (`None`: no timer armed). Re-read after every call.
    fn poll_timeout(&self) -> Option<Time>;
    /// The agent's outbox: its queued datagrams and events and its counters.
    fn outbox(&self) -> &Outbox;
    /// The same, mutable (what the defaulted `poll_*` methods drain).
    fn outbox_mut(&mut self) -> &mut Outbox;
    /// Next datagram to send, oldest first; `None` when the queue is empty.
    fn poll_transmit(&mut self) -> Option<Transmit> {
        self.outbox_mut().pop_transmit()
    }
    /// Next event for the application or the collector, oldest first.
    fn poll_event(&mut self) -> Option<Event> {
        self.outbox_mut().pop_event()
    }
    /// The agent's counters.
    fn stats(&self) -> &Stats {
        &self.outbox().stats
    }

    /// The current value of `gauge`, if the agent keeps it (default: none). Read by drivers
    /// for studies at any time; never changes the agent.
    fn gauge(&self, _gauge: Gauge) -> Option<f64> {
        None
    }
    /// The agent as [`Any`](core::any::Any), for a driver that changes a protocol's roles
    /// while it runs through the protocol's own methods (the socket driver re-electing a DSP
    /// designated receiver calls
    /// [`tree::Source::replace_reporter`](crate::tree::Source::replace_reporter) and
    /// [`tree::Endpoint::reassign`](crate::tree::Endpoint::reassign)). Default: `None`.
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        None
    }
    /// The agent's sender side ([`SenderAgent`]: taking application data, closing, dropping
    /// receivers), if it has one; a driver holding a `Box<dyn Agent>` reaches those methods
    /// through it. Default: `None` (a receiver). Every [`SenderAgent`] answers `Some(self)`.
    fn as_sender(&mut self) -> Option<&mut dyn SenderAgent> {
        None
    }
}

/// What a role that originates data, or keeps it for receivers it tracks, adds to [`Agent`]:
/// application data in ([`send`](SenderAgent::send), with back-pressure from
/// [`can_send`](SenderAgent::can_send)), the end of a transfer
/// ([`close`](SenderAgent::close)), and what the driver learnt outside the protocol
/// ([`delivered_by_all`](SenderAgent::delivered_by_all),
/// [`remove_receiver`](SenderAgent::remove_receiver)). Senders implement it, and so do
/// relays and designated receivers that track receivers of their own (they answer only
/// `remove_receiver`). A driver reaches it through [`Agent::as_sender`]; after each of these
/// calls it drains the agent's queues as after any other (see [`Agent`]).
pub trait SenderAgent: Agent {
    /// Hand the agent one application message to deliver reliably (senders only).
    fn send(&mut self, _now: Time, data: Bytes) -> Result<(), SendError> {
        let _ = data;
        Err(SendError::NotASender)
    }
    /// Whether [`send`](SenderAgent::send) would accept a message now.
    fn can_send(&self) -> bool {
        false
    }
    /// No more messages will be sent; the agent reports [`Event::Completed`] once all
    /// earlier ones are finished.
    fn close(&mut self, _now: Time) {}
    /// Every receiver still in the session has delivered its first `messages` messages in
    /// order, as the driver learnt outside the protocol (the socket driver: the session's
    /// periodic reports). A protocol without acknowledgments may release what it kept for
    /// repair below that (default: ignored).
    fn delivered_by_all(&mut self, _now: Time, _messages: u64) {}
    /// Stop waiting for `node` (a driver evicted it, e.g. it stopped answering). Returns
    /// `false` if the agent does not track receivers or `node` is not one of them.
    fn remove_receiver(&mut self, _now: Time, _node: NodeId) -> bool {
        false
    }
}

/// What a router agent decides for a packet crossing its router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteDecision {
    /// Forward as the routing tables say.
    Forward,
    /// Swallow it.
    Consume,
    /// Forward on these interfaces only (a subset, or others than routing would choose);
    /// the agent on the router's own node gets it only if [`IfaceId::LOCAL`] is among them.
    ForwardOn(Vec<IfaceId>),
}

impl RouteDecision {
    /// For the agent on the router's own node and nothing else (`ForwardOn` naming only
    /// [`IfaceId::LOCAL`]): a driver whose routers host no agent (a relay on sockets) drops it.
    pub fn only_local(&self) -> bool {
        matches!(self, RouteDecision::ForwardOn(v) if !v.is_empty() && v.iter().all(|&i| i == IfaceId::LOCAL))
    }
}

/// A datagram a router agent originates, optionally pinned to interfaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouterTransmit {
    /// The datagram and its destination.
    pub transmit: Transmit,
    /// `None`: route normally from this router. `Some(ifaces)`: send out exactly these
    /// ([`IfaceId::LOCAL`] among them: to the agent on the router's own node).
    pub via: Option<Vec<IfaceId>>,
}

/// A protocol's helper inside the network (PGM network element, LMS router, CSP/CP local
/// exchange). The driver shows it every rmcast packet crossing its router, including what
/// the agent on the router's own node sends (on [`IfaceId::LOCAL`]).
pub trait RouterAgent {
    /// A packet for `dest`, sent by `from`, entered the router on `ingress`
    /// ([`IfaceId::LOCAL`]: from the agent on the router's own node).
    fn on_packet(
        &mut self,
        now: Time,
        ingress: IfaceId,
        from: NodeId,
        dest: Dest,
        packet: &[u8],
    ) -> RouteDecision;
    /// The deadline from [`poll_timeout`](RouterAgent::poll_timeout) has passed.
    fn handle_timeout(&mut self, now: Time);
    /// Earliest instant at which the router agent wants
    /// [`handle_timeout`](RouterAgent::handle_timeout).
    fn poll_timeout(&self) -> Option<Time>;
    /// Its outbox: the datagrams it originates and its counters (router agents report no
    /// events).
    fn outbox(&self) -> &Outbox<RouterTransmit>;
    /// The same, mutable.
    fn outbox_mut(&mut self) -> &mut Outbox<RouterTransmit>;
    /// Next datagram the router agent originates, oldest first.
    fn poll_transmit(&mut self) -> Option<RouterTransmit> {
        self.outbox_mut().pop_transmit()
    }
    /// Its counters.
    fn stats(&self) -> &Stats {
        &self.outbox().stats
    }
    /// Protocol state entries the router holds now (PGM: lost packets with repair state;
    /// LMS: replier links). Default: none.
    fn state_entries(&self) -> usize {
        0
    }
    /// The most state entries held at once during the run. Default: none.
    fn peak_state_entries(&self) -> usize {
        0
    }
    /// Packets in its custody: data it acknowledged upstream that its own receivers do not
    /// all hold yet (a multi-level PRMP relay), so a transfer is not over while any is; `None`
    /// for an agent that never takes custody (the default), which a driver may then ignore.
    fn custody(&self) -> Option<usize> {
        None
    }
    /// The router agent as [`Any`](core::any::Any), for a driver that changes its role
    /// through the protocol's own methods (`rmcast relay` moving an LMS replier link off a
    /// receiver that went silent: [`lms::Router::set_replier`](crate::lms::Router::set_replier)).
    /// Default: `None`.
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        None
    }
}

/// Convert a driver-level duration in seconds (from a scenario file) into a [`Duration`],
/// rejecting negative and non-finite values.
pub fn duration_from_secs(s: f64) -> Option<Duration> {
    (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_slices_a_shared_datagram_and_copies_anything_else() {
        let b = Bytes::from((0u8..32).collect::<Vec<u8>>());
        let part = &b[4..10];
        let h = hold(Some(&b), part);
        assert_eq!(&h[..], part);
        assert_eq!(h.as_ptr(), part.as_ptr(), "a slice of the same buffer");
        let other = vec![1u8, 2, 3];
        let c = hold(Some(&b), &other);
        assert_eq!(&c[..], &other[..]);
        assert_ne!(c.as_ptr(), other.as_ptr());
        let d = hold(None, part);
        assert_eq!(&d[..], part);
        assert_ne!(d.as_ptr(), part.as_ptr());
        assert!(hold(Some(&b), &[]).is_empty());
    }
}

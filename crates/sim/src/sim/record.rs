//! The recorder: what a run leaves behind, kept apart from the models that produce it.
//!
//! Like ns-3's trace sources and sinks, the models (links, the bus, host queues, the event
//! loop) only report what happens — a packet originated, a hop taken, a loss, an agent's
//! event — and the [`Recorder`] decides what to keep: network [`Counters`], losses by cause,
//! per-node [`NodeMetrics`], the agents' events (all, some nodes' or none) and, when tracing
//! is on, one [`PacketRecord`] per originated packet and one [`LossRecord`] per loss. The
//! recorder is a concrete type, so reporting costs a call, not a dynamic dispatch.

use super::sparse::NodeLists;
use rmcast_proto::{Bytes, Dest, Event, NodeId, Time};
use rmcast_wire::PacketClass;

/// Per-node figures gathered from the agent's events as they happen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeMetrics {
    /// `Delivered` events.
    pub delivered: u64,
    /// Bytes those events delivered.
    pub delivered_bytes: u64,
    /// When the first was reported.
    pub first_delivery: Option<Time>,
    /// When the last was reported.
    pub last_delivery: Option<Time>,
    /// Sender: `MessageDone` events, and how many of them failed.
    pub messages_done: u64,
    /// Of those, the failed ones.
    pub messages_failed: u64,
    /// Sum and maximum of (done_at − sent_at) over `MessageDone`, nanoseconds.
    pub latency_sum_ns: u128,
    /// See `latency_sum_ns`.
    pub latency_max_ns: u64,
    /// Sum of transmissions over `MessageDone`.
    pub transmissions: u64,
    /// `LossDetected` events.
    pub losses_detected: u64,
    /// When the agent reported `Completed`.
    pub completed_at: Option<Time>,
    /// Datagrams handed to the agent.
    pub packets_in: u64,
    /// Datagrams the agent sent.
    pub packets_out: u64,
}

/// What the recorder keeps per node, compactly: a node's [`NodeMetrics`] are made from it on
/// demand. Most nodes of a large run are receivers, so the sender's figures are boxed
/// apart, and delivery times use [`Time::MAX`] for "none" (no event happens at that time).
#[derive(Debug, Clone)]
struct Tally {
    delivered: u64,
    delivered_bytes: u64,
    first_delivery: Time,
    last_delivery: Time,
    losses_detected: u64,
    packets_in: u64,
    packets_out: u64,
    sender: Option<Box<SenderTally>>,
}

#[derive(Debug, Clone, Default)]
struct SenderTally {
    messages_done: u64,
    messages_failed: u64,
    latency_sum_ns: u128,
    latency_max_ns: u64,
    transmissions: u64,
    completed_at: Option<Time>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            delivered: 0,
            delivered_bytes: 0,
            first_delivery: Time::MAX,
            last_delivery: Time::MAX,
            losses_detected: 0,
            packets_in: 0,
            packets_out: 0,
            sender: None,
        }
    }
}

impl Tally {
    fn metrics(&self) -> NodeMetrics {
        let time = |t: Time| (t != Time::MAX).then_some(t);
        let s = self.sender.as_deref().cloned().unwrap_or_default();
        NodeMetrics {
            delivered: self.delivered,
            delivered_bytes: self.delivered_bytes,
            first_delivery: time(self.first_delivery),
            last_delivery: time(self.last_delivery),
            messages_done: s.messages_done,
            messages_failed: s.messages_failed,
            latency_sum_ns: s.latency_sum_ns,
            latency_max_ns: s.latency_max_ns,
            transmissions: s.transmissions,
            losses_detected: self.losses_detected,
            completed_at: s.completed_at,
            packets_in: self.packets_in,
            packets_out: self.packets_out,
        }
    }

    fn sender(&mut self) -> &mut SenderTally {
        self.sender.get_or_insert_with(Box::default)
    }
}

/// Network-level counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Datagrams originated by agents and router agents, by class.
    pub originated_data: u64,
    /// See `originated_data`.
    pub originated_repair: u64,
    /// See `originated_data`.
    pub originated_control: u64,
    /// Datagrams without a packet class (not rmcast datagrams).
    pub originated_other: u64,
    /// Packet transmissions on point-to-point link directions (one per hop).
    pub link_hops: u64,
    /// Of `link_hops`, those of repair-data and of control packets (by `Header::class()`).
    pub link_hops_repair: u64,
    /// See `link_hops_repair`.
    pub link_hops_control: u64,
    /// Datagrams handed to host agents.
    pub deliveries: u64,
    /// Frames put on a bus successfully.
    pub bus_frames: u64,
    /// Collision events (each involving two or more frames).
    pub bus_collisions: u64,
    /// Frames involved in collisions.
    pub bus_collided_frames: u64,
    /// Transmission requests that found the bus busy and waited for it (1-persistent).
    pub bus_deferrals: u64,
    /// Backoffs drawn after collisions.
    pub bus_backoffs: u64,
    /// Frame receptions signalled to addressed nodes.
    pub bus_receive_events: u64,
    /// Destinations a packet could not be routed to.
    pub unreachable: u64,
    /// Packets that reached a node without an agent to take them.
    pub no_agent: u64,
    /// Packets consumed by router agents.
    pub router_consumed: u64,
    /// Total losses (all causes; see [`crate::Sim::losses`]).
    pub lost: u64,
    /// Times an agent still asked for a deadline that had just been served (it is then
    /// woken 1 ns later instead of spinning).
    pub stuck_timers: u64,
}

/// One packet originated during a run (recorded when tracing is on).
#[derive(Debug, Clone)]
pub struct PacketRecord {
    /// The packet's id in the run (a loss record names it).
    pub id: u64,
    /// When it was originated.
    pub time: Time,
    /// The node that originated it.
    pub src: NodeId,
    /// Where it was sent.
    pub dest: Dest,
    /// Original data, repair data or control (`None`: not an rmcast datagram).
    pub class: Option<PacketClass>,
    /// The datagram.
    pub payload: Bytes,
}

/// One loss (recorded when tracing is on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LossRecord {
    /// The id of the packet lost.
    pub id: u64,
    /// When it was lost.
    pub time: Time,
    /// Node where the packet was dropped (the sender of the hop for link and tx losses).
    pub node: NodeId,
    /// The cause (a loss rule's name, queue overflow, implosion, …).
    pub cause: String,
}

/// One loss an agent detected and when it was made good (recorded when tracing is on): the
/// first `LossDetected { seq }` of a node and its first `Delivered { seq }` after it, the
/// sequence number as the protocol reports it in both events (for SRM, PGM and LMS the data
/// packet's). Read per receiver, this is recovery latency without reconstructing it from
/// packet send times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryRecord {
    /// The node that detected the loss.
    pub node: NodeId,
    /// The sequence number it found missing.
    pub seq: u64,
    /// When it detected the loss.
    pub detected: Time,
    /// When it delivered that sequence number (`None`: not by the end of the run).
    pub delivered: Option<Time>,
}

/// Everything tracing keeps.
#[derive(Debug, Default)]
struct TraceLog {
    packets: Vec<PacketRecord>,
    losses: Vec<LossRecord>,
    recoveries: Vec<RecoveryRecord>,
    /// (node, seq) of every recovery, made good or not → its index in `recoveries`: a node's
    /// first detection of a sequence number opens it, and later ones do not open another.
    index: std::collections::BTreeMap<(u32, u64), usize>,
}

impl TraceLog {
    /// Opens a recovery on a node's first detection of `seq`, closes it on its delivery.
    fn recovery(&mut self, node: u32, now: Time, e: &Event) {
        match e {
            Event::LossDetected { seq } => {
                if let std::collections::btree_map::Entry::Vacant(v) =
                    self.index.entry((node, *seq))
                {
                    v.insert(self.recoveries.len());
                    self.recoveries.push(RecoveryRecord {
                        node: NodeId(node),
                        seq: *seq,
                        detected: now,
                        delivered: None,
                    });
                }
            }
            Event::Delivered { seq, .. } => {
                if let Some(r) = self
                    .index
                    .get(&(node, *seq))
                    .and_then(|&i| self.recoveries.get_mut(i))
                {
                    r.delivered.get_or_insert(now);
                }
            }
            _ => {}
        }
    }
}

/// Built-in loss causes (their indices in the recorder's cause list).
pub(crate) const CAUSE_QUEUE: u32 = 0;
pub(crate) const CAUSE_IMPLOSION: u32 = 1;
pub(crate) const CAUSE_COLLISIONS: u32 = 2;

/// What a run records (see the module documentation).
pub(crate) struct Recorder {
    pub(crate) counters: Counters,
    causes: Vec<(String, u64)>,
    record_events: bool,
    /// When set, events are kept only for the nodes marked here.
    record_only: Option<Vec<bool>>,
    /// Kept [`Event::Delivered`]s hold their message (else an empty one: the sequence
    /// number and time are kept, the payload's memory is not).
    record_payloads: bool,
    events: NodeLists<(Time, Event)>,
    metrics: Vec<Tally>,
    trace: Option<TraceLog>,
}

impl Recorder {
    /// A recorder for `n` nodes: events kept, no trace.
    pub(crate) fn new(n: usize) -> Recorder {
        Recorder {
            counters: Counters::default(),
            causes: vec![
                ("queue_overflow".into(), 0),
                ("implosion".into(), 0),
                ("excess_collisions".into(), 0),
            ],
            record_events: true,
            record_only: None,
            record_payloads: true,
            events: NodeLists::default(),
            metrics: vec![Tally::default(); n],
            trace: None,
        }
    }

    pub(crate) fn record_events(&mut self, on: bool) {
        self.record_events = on;
        self.record_only = None;
    }

    pub(crate) fn record_events_of(&mut self, nodes: &[NodeId]) {
        let mut mask = vec![false; self.metrics.len()];
        for n in nodes {
            if let Some(m) = mask.get_mut(n.0 as usize) {
                *m = true;
            }
        }
        self.record_events = true;
        self.record_only = Some(mask);
    }

    pub(crate) fn record_payloads(&mut self, on: bool) {
        self.record_payloads = on;
    }

    pub(crate) fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(TraceLog::default);
    }

    /// The index of loss cause `name`, added after the others if new.
    pub(crate) fn cause(&mut self, name: &str) -> u32 {
        match self.causes.iter().position(|(c, _)| c == name) {
            Some(i) => i as u32,
            None => {
                self.causes.push((name.to_string(), 0));
                self.causes.len() as u32 - 1
            }
        }
    }

    pub(crate) fn events(&self, node: NodeId) -> &[(Time, Event)] {
        self.events.get(node.0 as usize)
    }
    pub(crate) fn metrics(&self, node: NodeId) -> Option<NodeMetrics> {
        self.metrics.get(node.0 as usize).map(Tally::metrics)
    }
    pub(crate) fn losses(&self) -> Vec<(String, u64)> {
        self.causes.clone()
    }
    pub(crate) fn trace(&self) -> Option<(&[PacketRecord], &[LossRecord])> {
        self.trace
            .as_ref()
            .map(|t| (t.packets.as_slice(), t.losses.as_slice()))
    }
    pub(crate) fn recoveries(&self) -> &[RecoveryRecord] {
        self.trace.as_ref().map_or(&[], |t| t.recoveries.as_slice())
    }

    /// Packet `id` was dropped at `node` for `cause`.
    pub(crate) fn lost(&mut self, cause: u32, id: u64, now: Time, node: u32) {
        self.causes[cause as usize].1 += 1;
        self.counters.lost += 1;
        if let Some(t) = self.trace.as_mut() {
            t.losses.push(LossRecord {
                id,
                time: now,
                node: NodeId(node),
                cause: self.causes[cause as usize].0.clone(),
            });
        }
    }

    /// Packet `id` of `class` was originated at `src`.
    pub(crate) fn originated(
        &mut self,
        id: u64,
        now: Time,
        src: u32,
        dest: Dest,
        class: Option<PacketClass>,
        payload: &Bytes,
    ) {
        match class {
            Some(PacketClass::OriginalData) => self.counters.originated_data += 1,
            Some(PacketClass::RepairData) => self.counters.originated_repair += 1,
            Some(PacketClass::Control) => self.counters.originated_control += 1,
            None => self.counters.originated_other += 1,
        }
        if let Some(t) = self.trace.as_mut() {
            t.packets.push(PacketRecord {
                id,
                time: now,
                src: NodeId(src),
                dest,
                class,
                payload: payload.clone(),
            });
        }
    }

    /// A packet of `class` was put on a link direction.
    pub(crate) fn link_hop(&mut self, class: Option<PacketClass>) {
        self.counters.link_hops += 1;
        match class {
            Some(PacketClass::RepairData) => self.counters.link_hops_repair += 1,
            Some(PacketClass::Control) => self.counters.link_hops_control += 1,
            _ => {}
        }
    }

    /// The agent at node `xi` sent `n` datagrams.
    pub(crate) fn sent(&mut self, xi: usize, n: usize) {
        self.metrics[xi].packets_out += n as u64;
    }

    /// A datagram was handed to the agent at node `xi`.
    pub(crate) fn delivered(&mut self, xi: usize) {
        self.counters.deliveries += 1;
        self.metrics[xi].packets_in += 1;
    }

    /// The agent at node `xi` reported `e`. Returns true if `e` is its first `Completed`.
    pub(crate) fn event(&mut self, xi: usize, now: Time, e: Event) -> bool {
        if let Some(t) = self.trace.as_mut() {
            t.recovery(xi as u32, now, &e);
        }
        let m = &mut self.metrics[xi];
        let mut first_completion = false;
        match &e {
            Event::Delivered { data, .. } => {
                m.delivered += 1;
                m.delivered_bytes += data.len() as u64;
                if m.first_delivery == Time::MAX {
                    m.first_delivery = now;
                }
                m.last_delivery = now;
            }
            Event::MessageDone {
                sent_at,
                done_at,
                transmissions,
                failed,
                ..
            } => {
                let m = m.sender();
                m.messages_done += 1;
                if *failed {
                    m.messages_failed += 1;
                }
                let lat = done_at.as_nanos().saturating_sub(sent_at.as_nanos());
                m.latency_sum_ns += u128::from(lat);
                m.latency_max_ns = m.latency_max_ns.max(lat);
                m.transmissions += u64::from(*transmissions);
            }
            Event::LossDetected { .. } => m.losses_detected += 1,
            Event::Completed => {
                let m = m.sender();
                if m.completed_at.is_none() {
                    m.completed_at = Some(now);
                    first_completion = true;
                }
            }
        }
        if self.record_events
            && self
                .record_only
                .as_ref()
                .is_none_or(|m| m.get(xi).copied().unwrap_or(false))
        {
            let e = match e {
                Event::Delivered { seq, .. } if !self.record_payloads => Event::Delivered {
                    seq,
                    data: Bytes::new(),
                },
                e => e,
            };
            self.events.push(xi, (now, e));
        }
        first_completion
    }
}

//! Host models: an agent's pending wake-ups, the optional finite receive queue and
//! processing delay in front of it (seed 004 §4), and the application traffic fed to it.

use super::{Sim, SimError};
use crate::loss::KindFilter;
use crate::rng::{tag, SimRng};
use core::time::Duration;
use rmcast_proto::{Agent, Bytes, NodeId, Time};
use rmcast_wire::PacketClass;
use std::collections::VecDeque;

/// Application traffic fed into a sender agent through
/// [`SenderAgent::send`](rmcast_proto::SenderAgent::send).
#[derive(Debug, Clone)]
pub struct Traffic {
    /// Messages to send.
    pub messages: u64,
    /// Bytes per message.
    pub size: usize,
    /// When the first is offered.
    pub start: Time,
    /// `None`: a saturated source (send whenever
    /// [`SenderAgent::can_send`](rmcast_proto::SenderAgent::can_send)); `Some(d)`: one message
    /// every `d`, queued at the source while the agent cannot take it.
    pub interval: Option<Duration>,
    /// Call [`SenderAgent::close`](rmcast_proto::SenderAgent::close) after the last message (so the
    /// agent reports `Completed`).
    pub close: bool,
    /// Write the message number (big-endian u64) into the first 8 bytes of each message
    /// (one allocation per message). Off: every message shares one zero-filled buffer.
    pub stamp: bool,
}

impl Traffic {
    /// `messages` of `size` bytes from time zero, offered whenever the agent can take one,
    /// closed after the last, stamped.
    pub fn saturated(messages: u64, size: usize) -> Self {
        Traffic {
            messages,
            size,
            start: Time::ZERO,
            interval: None,
            close: true,
            stamp: true,
        }
    }
    /// The same, one message every `interval`.
    pub fn every(messages: u64, size: usize, interval: Duration) -> Self {
        Traffic {
            interval: Some(interval),
            ..Traffic::saturated(messages, size)
        }
    }
}

/// One node's host state. Every node has one, so what few hosts use (a receive queue, a
/// traffic source) is boxed: 56 bytes a node instead of about 480.
#[derive(Default)]
pub(crate) struct Host {
    /// The agent's booked wake-up.
    pub(crate) timer_at: Option<Time>,
    /// The router agent's booked wake-up.
    pub(crate) router_timer_at: Option<Time>,
    pub(crate) rxq: Option<Box<RxQueue>>,
    /// Processing delay before a packet reaches the agent, ns.
    pub(crate) proc_delay: u64,
    pub(crate) traffic: Option<Box<Source>>,
    /// Late wake-ups of the agent (a loaded CPU), if modelled.
    pub(crate) lateness: Option<Box<Lateness>>,
}

/// A host whose agent wakes late: each deadline the agent asks for is served a uniform
/// random `[0, max)` after it, drawn once per deadline, so a loaded CPU stretches the gaps
/// between the agent's timed transmissions (seed 004 §2.3 (b)).
pub(crate) struct Lateness {
    max_ns: u64,
    rng: SimRng,
    /// The deadline last drawn for, and when it is served.
    drawn: Option<(Time, Time)>,
}

impl Lateness {
    /// When the agent's `deadline` is served.
    pub(crate) fn serve_at(&mut self, deadline: Time) -> Time {
        match self.drawn {
            Some((d, at)) if d == deadline => at,
            _ => {
                let at = deadline + Duration::from_nanos(self.rng.below(self.max_ns));
                self.drawn = Some((deadline, at));
                at
            }
        }
    }
}

impl Sim {
    /// A finite receive queue at a host: `capacity` packets (including the one being
    /// served), served at `rate` packets per second; arrivals to a full queue are dropped
    /// and counted as implosion losses (seed 004 §4: capacity 16, 1500/s).
    pub fn set_rx_queue(
        &mut self,
        node: NodeId,
        capacity: usize,
        rate: f64,
    ) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        if capacity == 0 || !(rate.is_finite() && rate > 0.0) {
            return Err(SimError::Host(format!(
                "receive queue needs capacity >= 1 and a positive rate, got {capacity} and {rate}"
            )));
        }
        self.hosts[i].rxq = Some(Box::new(RxQueue::new(capacity, rate)));
        Ok(())
    }

    /// Only packets of `kinds` go through `node`'s receive queue (set by
    /// [`Sim::set_rx_queue`]); the others reach the agent directly. Seed 004's response
    /// buffer holds feedback only, so a relay that also receives data uses
    /// [`KindFilter::Control`].
    pub fn set_rx_queue_kinds(&mut self, node: NodeId, kinds: KindFilter) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        match self.hosts[i].rxq.as_mut() {
            Some(q) => {
                q.kinds = kinds;
                Ok(())
            }
            None => Err(SimError::Host(format!(
                "node {node:?} has no receive queue"
            ))),
        }
    }

    /// A fixed processing delay before each packet reaches the host's agent.
    pub fn set_processing_delay(&mut self, node: NodeId, d: Duration) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        self.hosts[i].proc_delay = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Ok(())
    }

    /// The agent at `node` wakes late by a uniform random `[0, max)` for each deadline it
    /// asks for (a host CPU busy with other work; seed 004 §2.3 (b)). Zero: on time.
    pub fn set_timer_lateness(&mut self, node: NodeId, max: Duration) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        let max_ns = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        self.hosts[i].lateness = (max_ns > 0).then(|| {
            Box::new(Lateness {
                max_ns,
                rng: SimRng::new(self.seed, tag::LATENESS, i as u64, 0),
                drawn: None,
            })
        });
        Ok(())
    }
}

/// A finite receive queue served at a fixed rate.
pub(crate) struct RxQueue {
    cap: usize,
    service_ns: u64,
    q: VecDeque<u32>,
    /// Packets that go through the queue; the others bypass it.
    pub(crate) kinds: KindFilter,
}

impl RxQueue {
    pub(crate) fn new(cap: usize, rate: f64) -> RxQueue {
        RxQueue {
            cap,
            service_ns: (1e9 / rate).round().max(1.0) as u64,
            q: VecDeque::new(),
            kinds: KindFilter::All,
        }
    }
}

/// Where a packet reaching a host goes next.
pub(crate) enum Admit {
    /// To the agent now.
    Now,
    /// To the agent after the processing delay, at this time.
    After(Time),
    /// Into the receive queue; if `Some`, it was empty: its service ends at that time.
    Queued(Option<Time>),
    /// Dropped: the receive queue is full (an implosion loss).
    Full,
}

impl Host {
    /// Copy `c` of a packet of `class` reached the host at `now`.
    pub(crate) fn admit(&mut self, c: u32, class: Option<PacketClass>, now: Time) -> Admit {
        if let Some(q) = self.rxq.as_mut().filter(|q| q.kinds.matches(class)) {
            if q.q.len() >= q.cap {
                return Admit::Full;
            }
            q.q.push_back(c);
            Admit::Queued((q.q.len() == 1).then(|| now + Duration::from_nanos(q.service_ns)))
        } else {
            match self.processed_at(now) {
                Some(t) => Admit::After(t),
                None => Admit::Now,
            }
        }
    }

    /// The receive queue's service of its head ended at `now`: (the head's copy, when the
    /// next service ends if the queue is not empty).
    pub(crate) fn serve(&mut self, now: Time) -> (Option<u32>, Option<Time>) {
        let Some(q) = self.rxq.as_mut() else {
            return (None, None);
        };
        let head = q.q.pop_front();
        let next = (!q.q.is_empty()).then(|| now + Duration::from_nanos(q.service_ns));
        (head, next)
    }

    /// When a packet leaving the receive queue at `now` reaches the agent (`None`: now).
    pub(crate) fn processed_at(&self, now: Time) -> Option<Time> {
        (self.proc_delay > 0).then(|| now + Duration::from_nanos(self.proc_delay))
    }
}

/// A traffic source's progress.
pub(crate) struct Source {
    pub(crate) spec: Traffic,
    payload: Bytes,
    generated: u64,
    sent: u64,
    closed: bool,
}

impl Source {
    pub(crate) fn new(spec: Traffic) -> Source {
        let payload = Bytes::from(vec![0u8; spec.size]);
        Source {
            spec,
            payload,
            generated: 0,
            sent: 0,
            closed: false,
        }
    }

    /// Messages handed to the agent so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent
    }

    /// A generation tick: returns the time of the next tick, if any.
    pub(crate) fn tick(&mut self, now: Time) -> Option<Time> {
        match self.spec.interval {
            None => {
                self.generated = self.spec.messages;
                None
            }
            Some(d) => {
                if self.generated < self.spec.messages {
                    self.generated += 1;
                    if self.generated < self.spec.messages {
                        return Some(now + d);
                    }
                }
                None
            }
        }
    }

    /// Hand queued messages to `agent`. Returns true if it did anything.
    pub(crate) fn feed(&mut self, agent: &mut dyn Agent, now: Time) -> bool {
        if now < self.spec.start {
            return false;
        }
        let mut acted = false;
        // A receiver (no sender side) takes nothing: as a sender whose queue is full.
        let mut sender = agent.as_sender();
        while self.sent < self.generated {
            let Some(agent) = sender.as_deref_mut().filter(|s| s.can_send()) else {
                break;
            };
            let data = if self.spec.stamp && self.spec.size >= 8 {
                let mut v = vec![0u8; self.spec.size];
                v[..8].copy_from_slice(&self.sent.to_be_bytes());
                Bytes::from(v)
            } else {
                self.payload.clone()
            };
            match agent.send(now, data) {
                Ok(()) => {
                    self.sent += 1;
                    acted = true;
                }
                Err(rmcast_proto::SendError::Full(_)) => break,
                Err(_) => {
                    // The agent refuses this traffic for good (not a sender, too large):
                    // stop feeding it.
                    self.generated = self.sent;
                    self.spec.messages = self.sent;
                    break;
                }
            }
        }
        if !self.closed && self.spec.close && self.sent >= self.spec.messages {
            self.closed = true;
            if let Some(s) = sender {
                s.close(now);
            }
            acted = true;
        }
        acted
    }
}

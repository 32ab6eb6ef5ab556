//! Host models: an agent's pending wake-ups, the optional finite receive queue and
//! processing delay in front of it (seed 004 §4), and the application traffic fed to it.

use crate::loss::KindFilter;
use core::time::Duration;
use rmcast_proto::{Agent, Bytes, Time};
use rmcast_wire::PacketClass;
use std::collections::VecDeque;

/// Application traffic fed into a sender agent through [`Agent::send`].
#[derive(Debug, Clone)]
pub struct Traffic {
    /// Messages to send.
    pub messages: u64,
    /// Bytes per message.
    pub size: usize,
    /// When the first is offered.
    pub start: Time,
    /// `None`: a saturated source (send whenever [`Agent::can_send`]); `Some(d)`: one
    /// message every `d`, queued at the source while the agent cannot take it.
    pub interval: Option<Duration>,
    /// Call [`Agent::close`] after the last message (so the agent reports `Completed`).
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
        while self.sent < self.generated && agent.can_send() {
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
            agent.close(now);
            acted = true;
        }
        acted
    }
}

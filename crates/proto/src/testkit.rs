//! A minimal deterministic driver for protocol tests: agents on a full mesh with a fixed
//! one-way delay, seeded independent drops per delivered copy, and group membership lists.
//!
//! It is the smallest thing that exercises the Agent contract end to end. It is not the
//! simulator (`rmcast-sim` models links, buses and routers); it exists so that every protocol
//! module can prove itself without depending on a driver crate. It uses virtual time only.
//!
//! Every (from, to) pair has the same delay, so each pair's packets arrive in the order they
//! were sent.

use crate::rng::AgentRng;
use crate::{Agent, Dest, Event, GroupId, MessageDone, NodeId, SenderAgent, Stats, Time};
use bytes::Bytes;
use core::time::Duration;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Test message `i`: 16–315 bytes that start with its number, so a receiver that delivers
/// the wrong message or a damaged one is caught by comparing with `message(i)`.
pub fn message(i: u64) -> Bytes {
    let mut v = format!("message {i:06} ").into_bytes();
    v.resize(16 + (i as usize * 37) % 300, (i % 251) as u8);
    Bytes::from(v)
}

/// How a reliability check treats the sender's `MessageDone` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoneOrder {
    /// Messages finish in sequence order (a window that releases its front).
    InOrder,
    /// Messages may finish in any order (selective acknowledgment); each exactly once.
    AnyOrder,
}

/// Every node in `receivers` delivered messages `0..n` ([`message`]) exactly once, in order,
/// with the right content. Panics naming `what` otherwise (a test assertion).
pub fn assert_delivered(
    h: &Harness,
    receivers: impl IntoIterator<Item = usize>,
    n: u64,
    what: &str,
) {
    for r in receivers {
        let delivered = h.delivered(r);
        assert_eq!(
            delivered.len() as u64,
            n,
            "{what}: receiver {r} delivered {} of {n}",
            delivered.len()
        );
        for (i, (seq, data)) in delivered.iter().enumerate() {
            assert_eq!(*seq, i as u64, "{what}: receiver {r} out of order");
            assert_eq!(*data, message(i as u64), "{what}: receiver {r} content {i}");
        }
    }
}

/// Every node in `receivers` delivered messages `0..n` ([`message`]) exactly once, in order,
/// with the right content; the sender (node 0) finished every message once, none failed,
/// and reported `Completed` last. Panics naming `what` otherwise (a test assertion).
pub fn assert_reliable(
    h: &Harness,
    receivers: impl IntoIterator<Item = usize>,
    n: u64,
    order: DoneOrder,
    what: &str,
) {
    assert_delivered(h, receivers, n, what);
    let mut done = h.done(0);
    if order == DoneOrder::AnyOrder {
        done.sort_unstable();
    }
    assert_eq!(
        done,
        (0..n).map(|s| (s, false)).collect::<Vec<_>>(),
        "{what}: the sender's MessageDone records"
    );
    assert!(
        matches!(
            h.events.first().and_then(|e| e.last()),
            Some((_, Event::Completed))
        ),
        "{what}: no Completed"
    );
}

/// The set-up of a one-sender group test, written once for every protocol's tests: a
/// [`Harness`] with `delay`, `drop` and `seed`; the sender at node 0 and receivers at nodes
/// `1..=receivers`, all members of [`TEST_GROUP`]; messages `0..messages` ([`message`]) sent
/// and the sender closed; the run continues until nothing is left to do (at most an hour of
/// virtual time). A protocol's test `Setup` embeds it beside its own parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupTest {
    /// Receivers (nodes `1..=receivers`).
    pub receivers: u32,
    /// Probability that one copy of a packet is lost ([`Harness::new`]).
    pub drop: f64,
    /// Messages sent.
    pub messages: u64,
    /// The harness's seed.
    pub seed: u64,
    /// One-way delay of every copy.
    pub delay: Duration,
}

/// The multicast group of a [`GroupTest`].
pub const TEST_GROUP: GroupId = GroupId(1);

impl GroupTest {
    /// `receivers` receivers, each copy lost with probability `drop`, `messages` messages;
    /// seed and delay are the caller's to choose.
    pub fn new(receivers: u32, drop: f64, messages: u64, seed: u64, delay: Duration) -> Self {
        GroupTest {
            receivers,
            drop,
            messages,
            seed,
            delay,
        }
    }

    /// `receivers` receivers on a LAN-like mesh (100 µs one way), each copy lost with
    /// probability `drop`; 100 messages, seed 42.
    pub fn lan(receivers: u32, drop: f64) -> Self {
        GroupTest::new(receivers, drop, 100, 42, Duration::from_micros(100))
    }

    /// The receivers' node ids, `1..=receivers`.
    pub fn receiver_ids(&self) -> Vec<NodeId> {
        (1..=self.receivers).map(NodeId).collect()
    }

    /// Run it: `sender(receiver ids)` is added at node 0, `receiver(id)` at each receiver id.
    pub fn run(
        &self,
        sender: impl FnOnce(Vec<NodeId>) -> Box<dyn Agent>,
        mut receiver: impl FnMut(NodeId) -> Box<dyn Agent>,
    ) -> Harness {
        let mut h = Harness::new(self.delay, self.drop, self.seed);
        let receivers = self.receiver_ids();
        let s = h.add(sender(receivers.clone()));
        assert_eq!(s, NodeId(0), "the sender is node 0");
        for &r in &receivers {
            let id = h.add(receiver(r));
            assert_eq!(id, r, "receivers are nodes 1..=n");
        }
        h.set_group(TEST_GROUP, receivers);
        h.send_all(s, self.messages);
        h.run_until(Time::from_secs(3600));
        h
    }

    /// [`assert_reliable`] over this test's receivers and messages.
    pub fn assert_reliable(&self, h: &Harness, order: DoneOrder, what: &str) {
        assert_reliable(h, 1..=self.receivers as usize, self.messages, order, what);
    }

    /// [`GroupTest::assert_reliable`], then the sender's (node 0's) statistics.
    pub fn assert_reliable_sender(&self, h: &Harness, order: DoneOrder, what: &str) -> Stats {
        self.assert_reliable(h, order, what);
        h.agent(NodeId(0))
            .map(|a| a.stats().clone())
            .unwrap_or_default()
    }

    /// [`GroupTest::assert_reliable`], then the sender's statistics, checked against the
    /// drop rate: no repair when nothing is lost, some when copies are.
    pub fn assert_repairs_follow_loss(&self, h: &Harness, order: DoneOrder, what: &str) -> Stats {
        let s = self.assert_reliable_sender(h, order, what);
        if self.drop == 0.0 {
            assert_eq!(s.repairs_sent, 0, "{what}: no loss, no repair");
        } else {
            assert!(s.repairs_sent > 0, "{what}: loss must cause repairs");
        }
        s
    }

    /// Control packets the receivers sent, summed.
    pub fn receivers_control_sent(&self, h: &Harness) -> u64 {
        self.receiver_ids()
            .into_iter()
            .map(|r| h.agent(r).map_or(0, |a| a.stats().control_sent))
            .sum()
    }
}

/// [`assert_deterministic`] for a protocol's test set-up that embeds a [`GroupTest`]: `run`
/// with the set-up's seed (reached through `base`) set to `seed`, to `seed` again, and to
/// `other_seed`.
pub fn assert_setup_deterministic<S>(
    setup: &mut S,
    base: impl Fn(&mut S) -> &mut GroupTest,
    run: impl Fn(&S) -> Harness,
    seed: u64,
    other_seed: u64,
) {
    assert_deterministic(
        |s| {
            base(setup).seed = s;
            run(setup)
        },
        seed,
        other_seed,
    );
}

/// `run(seed)` is a pure function of the seed: two runs with `seed` report the same events
/// and harness statistics, and a run with `other_seed` reports different events.
pub fn assert_deterministic(mut run: impl FnMut(u64) -> Harness, seed: u64, other_seed: u64) {
    let a = run(seed);
    let b = run(seed);
    assert_eq!(a.events, b.events);
    assert_eq!(a.stats, b.stats);
    let c = run(other_seed);
    assert_ne!(a.events, c.events, "a different seed should change the run");
}

/// A group test with members who never hear the group: the sender at node 0, `receivers`
/// at nodes `1..`, of which only node 1 is a member of [`TEST_GROUP`] (the others get only
/// what is unicast to them); messages `0..messages` sent and the sender closed, then run
/// until `until`.
pub fn run_with_one_listener(
    sender: Box<dyn Agent>,
    receivers: impl IntoIterator<Item = Box<dyn Agent>>,
    messages: u64,
    until: Time,
) -> Harness {
    let mut h = Harness::new(Duration::from_micros(10), 0.0, 1);
    let s = h.add(sender);
    for r in receivers {
        h.add(r);
    }
    h.set_group(TEST_GROUP, vec![NodeId(1)]);
    h.send_all(s, messages);
    h.run_until(until);
    h
}

/// The sender at node 0 is stuck on `silent` (not `Completed`); removing it lets the transfer
/// complete within a second, and removing it twice is refused.
pub fn assert_removal_unblocks(h: &mut Harness, silent: NodeId) {
    assert!(!h.completed(0), "stuck before the removal");
    h.with_sender(NodeId(0), |a, now| {
        assert!(a.remove_receiver(now, silent));
        assert!(!a.remove_receiver(now, silent));
    });
    h.run_until(h.now() + Duration::from_secs(1));
    assert!(h.completed(0), "completed after the removal");
}

/// Give `agent` numbered 16-byte blocks (`next`, big-endian, in the first 8 bytes) while it
/// accepts them, until `n` are given in all, and close it once they are; `next` counts the
/// blocks given so far.
pub fn feed_blocks(agent: &mut dyn SenderAgent, now: Time, next: &mut u64, n: u64) {
    while *next < n && agent.can_send() {
        let mut v = vec![0u8; 16];
        v[..8].copy_from_slice(&next.to_be_bytes());
        let sent = agent.send(now, Bytes::from(v));
        assert!(
            sent.is_ok(),
            "a sender that can send takes the block: {sent:?}"
        );
        *next += 1;
    }
    if *next == n {
        agent.close(now);
    }
}

/// A datagram from node `from` in session 0 carrying `msg`, flagged a retransmission if
/// `retransmission`.
pub fn datagram(from: u32, retransmission: bool, msg: &rmcast_wire::Message<'_>) -> Vec<u8> {
    let env = crate::outbox::envelope(0, NodeId(from), crate::outbox::data_flags(retransmission));
    rmcast_wire::Packet::to_vec(env, msg).unwrap_or_default()
}

/// Drain `agent`'s events; `Some(failed)` of the first `MessageDone` for `seq` among them,
/// `None` if there is none.
pub fn done_failed(agent: &mut dyn Agent, seq: u64) -> Option<bool> {
    std::iter::from_fn(|| agent.poll_event())
        .filter_map(|e| match e {
            Event::MessageDone { seq: s, failed, .. } if s == seq => Some(failed),
            _ => None,
        })
        .collect::<Vec<_>>()
        .first()
        .copied()
}

/// Statistics of one harness run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessStats {
    /// Datagrams the agents sent.
    pub packets_sent: u64,
    /// Copies handed to an agent.
    pub copies_delivered: u64,
    /// Copies lost to the drop probability.
    pub copies_dropped: u64,
}

/// A scripted loss rule: called for every copy with its sender, its addressee and the
/// datagram; `true` drops that copy (counted in [`HarnessStats::copies_dropped`]).
pub type DropRule = Box<dyn FnMut(NodeId, NodeId, &[u8]) -> bool>;

/// The harness: agent `i` is node `NodeId(i)`.
pub struct Harness {
    agents: Vec<Box<dyn Agent>>,
    groups: BTreeMap<GroupId, Vec<NodeId>>,
    delay: Duration,
    drop: f64,
    rule: Option<DropRule>,
    log_sent: bool,
    rng: AgentRng,
    now: Time,
    order: u64,
    queue: BinaryHeap<Reverse<(Time, u64, u32, u32)>>,
    in_flight: BTreeMap<u64, bytes::Bytes>,
    /// Events each agent reported, with the time they were drained.
    pub events: Vec<Vec<(Time, Event)>>,
    /// What the harness moved and dropped.
    pub stats: HarnessStats,
    /// Every datagram sent, with its time, sender and destination, once
    /// [`Harness::log_sent`] has been called (empty otherwise).
    pub sent: Vec<(Time, NodeId, Dest, Bytes)>,
}

impl Harness {
    /// `drop` is the probability that any one copy of any packet is lost, independently.
    pub fn new(delay: Duration, drop: f64, seed: u64) -> Self {
        Harness {
            agents: Vec::new(),
            groups: BTreeMap::new(),
            delay,
            drop,
            rule: None,
            log_sent: false,
            rng: AgentRng::from_seed(seed),
            now: Time::ZERO,
            order: 0,
            queue: BinaryHeap::new(),
            in_flight: BTreeMap::new(),
            events: Vec::new(),
            stats: HarnessStats::default(),
            sent: Vec::new(),
        }
    }

    /// Drop the copies `rule` picks, besides the random ones.
    pub fn drop_when(&mut self, rule: DropRule) {
        self.rule = Some(rule);
    }

    /// Keep every datagram sent from now on in [`Harness::sent`].
    pub fn log_sent(&mut self) {
        self.log_sent = true;
    }

    /// Add an agent; returns its node id.
    pub fn add(&mut self, agent: Box<dyn Agent>) -> NodeId {
        self.agents.push(agent);
        self.events.push(Vec::new());
        NodeId(self.agents.len() as u32 - 1)
    }

    /// Put `agent` in `node`'s place (a host restarted, or another taking its node id over):
    /// what is in flight to `node` reaches the new agent, its events go on in the same list.
    pub fn replace(&mut self, node: NodeId, agent: Box<dyn Agent>) {
        if let Some(a) = self.agents.get_mut(node.0 as usize) {
            *a = agent;
        }
        self.drain(node);
    }

    /// A takeover: from now on everything to and from `node` is lost (it died) once
    /// `watch` has delivered `after` messages (checked every millisecond, at most 60 s);
    /// `outage` later, `fresh` takes its node id and the network heals. Panics (a test
    /// assertion) if `watch` makes no such progress or had already delivered `n`. Any drop
    /// rule set before is replaced. Returns how many events `node` had logged when `fresh`
    /// took over (its events go on in the same list).
    pub fn take_over(
        &mut self,
        node: NodeId,
        (watch, after, n): (usize, usize, u64),
        outage: Duration,
        fresh: Box<dyn Agent>,
    ) -> usize {
        let dead = std::rc::Rc::new(std::cell::Cell::new(false));
        let d = dead.clone();
        self.drop_when(Box::new(move |from, to, _| {
            d.get() && (from == node || to == node)
        }));
        let mut t = self.now();
        while self.delivered(watch).len() < after {
            t += Duration::from_millis(1);
            self.run_to(t);
            assert!(t < Time::from_secs(60), "no progress before the kill");
        }
        assert!(
            self.delivered(watch).len() < n as usize,
            "all delivered before the kill"
        );
        dead.set(true);
        self.run_to(t + outage);
        let before = self.events.get(node.0 as usize).map_or(0, Vec::len);
        self.replace(node, fresh);
        dead.set(false);
        before
    }

    /// Make `members` the members of `group`.
    pub fn set_group(&mut self, group: GroupId, members: Vec<NodeId>) {
        self.groups.insert(group, members);
    }

    /// The current virtual time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// `node`'s agent.
    pub fn agent(&self, node: NodeId) -> Option<&dyn Agent> {
        self.agents.get(node.0 as usize).map(|a| a.as_ref())
    }

    /// `node`'s agent, mutable (call [`Harness::drain`] after changing it).
    pub fn agent_mut(&mut self, node: NodeId) -> Option<&mut (dyn Agent + 'static)> {
        self.agents.get_mut(node.0 as usize).map(|a| a.as_mut())
    }

    /// Drain `node`'s transmits and events after any call into it.
    pub fn drain(&mut self, node: NodeId) {
        let i = node.0 as usize;
        let Some(agent) = self.agents.get_mut(i) else {
            return;
        };
        let mut sends = Vec::new();
        while let Some(t) = agent.poll_transmit() {
            sends.push(t);
        }
        while let Some(e) = agent.poll_event() {
            if let Some(v) = self.events.get_mut(i) {
                v.push((self.now, e));
            }
        }
        for t in sends {
            self.stats.packets_sent += 1;
            if self.log_sent {
                self.sent.push((self.now, node, t.dest, t.payload.clone()));
            }
            let targets: Vec<NodeId> = match t.dest {
                Dest::Node(n) => vec![n],
                Dest::Group(g) => self
                    .groups
                    .get(&g)
                    .map(|m| m.iter().copied().filter(|&n| n != node).collect())
                    .unwrap_or_default(),
            };
            for to in targets {
                let scripted = self.rule.as_mut().is_some_and(|r| r(node, to, &t.payload));
                if self.rng.chance(self.drop) || scripted {
                    self.stats.copies_dropped += 1;
                    continue;
                }
                let id = self.order;
                self.order += 1;
                self.in_flight.insert(id, t.payload.clone());
                self.queue
                    .push(Reverse((self.now + self.delay, id, node.0, to.0)));
            }
        }
    }

    /// Call `f` on `node`'s agent at the current time, then drain it.
    pub fn with_agent(&mut self, node: NodeId, f: impl FnOnce(&mut dyn Agent, Time)) {
        let now = self.now;
        if let Some(a) = self.agents.get_mut(node.0 as usize) {
            f(a.as_mut(), now);
        }
        self.drain(node);
    }

    /// Call `f` on `node`'s agent's sender side ([`Agent::as_sender`]) at the current time,
    /// then drain it; panics (a test assertion) if the agent has none.
    pub fn with_sender(&mut self, node: NodeId, f: impl FnOnce(&mut dyn SenderAgent, Time)) {
        self.with_agent(node, |a, now| {
            let s = a.as_sender();
            assert!(s.is_some(), "node {node:?}'s agent is not a sender");
            if let Some(s) = s {
                f(s, now);
            }
        });
    }

    /// Whether `node`'s agent is a sender that would take a message now
    /// ([`SenderAgent::can_send`]).
    pub fn can_send(&mut self, node: NodeId) -> bool {
        self.agents
            .get_mut(node.0 as usize)
            .and_then(|a| a.as_sender())
            .is_some_and(|s| s.can_send())
    }

    /// Hand `sender` messages `0..n` ([`message`]) at the current time and close it; panics
    /// (a test assertion) if the agent refuses one.
    pub fn send_all(&mut self, sender: NodeId, n: u64) {
        self.with_sender(sender, |a, now| {
            for i in 0..n {
                assert!(a.send(now, message(i)).is_ok(), "message {i} refused");
            }
            a.close(now);
        });
    }

    /// What `node` delivered, (sequence number, data) in delivery order.
    pub fn delivered(&self, node: usize) -> Vec<(u64, Bytes)> {
        self.events.get(node).map_or_else(Vec::new, |ev| {
            ev.iter()
                .filter_map(|(_, e)| match e {
                    Event::Delivered { seq, data } => Some((*seq, data.clone())),
                    _ => None,
                })
                .collect()
        })
    }

    /// True when `node`'s last event is `Completed`.
    pub fn completed(&self, node: usize) -> bool {
        matches!(
            self.events.get(node).and_then(|e| e.last()),
            Some((_, Event::Completed))
        )
    }

    /// The sequence numbers `node` delivered, in delivery order.
    pub fn delivered_seqs(&self, node: usize) -> Vec<u64> {
        self.delivered(node).into_iter().map(|(s, _)| s).collect()
    }

    /// The `MessageDone` records `node` reported, (sequence number, failed) in report order.
    pub fn done(&self, node: usize) -> Vec<(u64, bool)> {
        self.done_transmissions(node)
            .into_iter()
            .map(|(seq, _, failed)| (seq, failed))
            .collect()
    }

    /// The `MessageDone` records `node` reported, (sequence number, transmissions, failed) in
    /// report order.
    pub fn done_transmissions(&self, node: usize) -> Vec<(u64, u32, bool)> {
        self.done_records(node)
            .into_iter()
            .map(|d| (d.seq, d.transmissions, d.failed))
            .collect()
    }

    /// The `MessageDone` records `node` reported, in report order.
    pub fn done_records(&self, node: usize) -> Vec<MessageDone> {
        self.events.get(node).map_or_else(Vec::new, |ev| {
            ev.iter().filter_map(|(_, e)| e.message_done()).collect()
        })
    }

    /// [`Harness::run_until`] `t`, then set the clock to `t` (an application driving an agent
    /// at its own pace calls in at `t`, not at the last event).
    pub fn run_to(&mut self, t: Time) {
        self.run_until(t);
        self.now = self.now.max(t);
    }

    /// Advance virtual time, processing packets and timers, until nothing is left to do or
    /// `limit` is reached. Returns the time reached.
    pub fn run_until(&mut self, limit: Time) -> Time {
        loop {
            let next_packet = self.queue.peek().map(|Reverse((t, ..))| *t);
            let next_timer = self
                .agents
                .iter()
                .enumerate()
                .filter_map(|(i, a)| a.poll_timeout().map(|t| (t, i)))
                .min();
            let pick_timer = match (next_packet, next_timer) {
                (None, None) => return self.now,
                (Some(p), Some((t, _))) => t < p,
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            if pick_timer {
                let Some((t, i)) = next_timer else {
                    return self.now;
                };
                if t > limit {
                    return self.now;
                }
                self.now = self.now.max(t);
                let now = self.now;
                if let Some(a) = self.agents.get_mut(i) {
                    a.handle_timeout(now);
                }
                self.drain(NodeId(i as u32));
            } else {
                let Some(Reverse((t, id, from, to))) = self.queue.pop() else {
                    return self.now;
                };
                if t > limit {
                    self.queue.push(Reverse((t, id, from, to)));
                    return self.now;
                }
                self.now = t;
                let Some(payload) = self.in_flight.remove(&id) else {
                    continue;
                };
                self.stats.copies_delivered += 1;
                let now = self.now;
                if let Some(a) = self.agents.get_mut(to as usize) {
                    a.handle_packet(now, NodeId(from), &payload);
                }
                self.drain(NodeId(to));
            }
        }
    }
}

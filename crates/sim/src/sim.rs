//! The simulator proper: agents on a [`Network`], driven by the [`Kernel`].
//!
//! Build a [`Network`], wrap it in a [`Sim`] with a run seed, attach agents (and router
//! agents), define groups, loss rules, host models and traffic, then [`Sim::run`] to a stop
//! condition and read per-agent events, agent stats and [`Counters`].
//!
//! ```
//! use core::time::Duration;
//! use rmcast_proto::{saw, GroupId, Time};
//! use rmcast_sim::{LinkConfig, Network, NodeKind, Sim, Stop, Traffic};
//!
//! let mut net = Network::new();
//! let s = net.add_node(NodeKind::Host);
//! let r = net.add_node(NodeKind::Host);
//! net.add_link(s, r, LinkConfig::new(10_000_000, Duration::from_millis(1))).unwrap();
//! let mut sim = Sim::new(net, 42);
//! let g = GroupId(1);
//! sim.set_group(g, &[r]).unwrap();
//! let cfg = saw::SenderConfig::new(s, g, vec![r], Duration::from_millis(10));
//! sim.add_agent(s, Box::new(saw::Sender::new(cfg))).unwrap();
//! let rng = sim.agent_rng(r, 0);
//! sim.add_agent(r, Box::new(saw::Receiver::new(saw::ReceiverConfig::new(r), rng))).unwrap();
//! sim.add_traffic(s, Traffic::saturated(5, 100)).unwrap();
//! let out = sim.run(&Stop::when_complete().until(Time::from_secs(10)));
//! assert!(out.completed);
//! assert_eq!(sim.metrics(r).unwrap().delivered, 5);
//! ```

use crate::kernel::Kernel;
use crate::loss::{KindFilter, LossRule, LossSite, LossState};
use crate::network::{BusConfig, Medium, Network, NONE};
use crate::rng::{tag, SimRng};
use crate::routing::{Spt, Tree, UnicastScratch};
use core::time::Duration;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{
    Agent, Bytes, Dest, Event, GroupId, IfaceId, NodeId, RouteDecision, RouterAgent, Time, Transmit,
};
use rmcast_wire::{Header, PacketClass};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Errors configuring a simulation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("node {0:?} does not exist")]
    NoSuchNode(NodeId),
    #[error("link {0} does not exist")]
    NoSuchLink(usize),
    #[error("node {node:?} is not an end of link {link}")]
    NotOnLink { node: NodeId, link: usize },
    #[error("node {0:?} already has an agent")]
    AgentExists(NodeId),
    #[error("node {0:?} has no agent to feed traffic to")]
    NoAgent(NodeId),
    #[error("invalid loss model: {0}")]
    Loss(String),
    #[error("invalid host model: {0}")]
    Host(String),
}

/// When [`Sim::run`] stops. It always stops when no event is left.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    /// Stop before processing any event later than this.
    pub until: Option<Time>,
    /// Stop after this many events in total.
    pub max_events: Option<u64>,
    /// Stop once every traffic source's agent has reported [`Event::Completed`].
    pub when_complete: bool,
}

impl Stop {
    pub fn when_complete() -> Self {
        Stop {
            when_complete: true,
            ..Stop::default()
        }
    }
    pub fn at(t: Time) -> Self {
        Stop {
            until: Some(t),
            ..Stop::default()
        }
    }
    pub fn until(mut self, t: Time) -> Self {
        self.until = Some(t);
        self
    }
    pub fn max_events(mut self, n: u64) -> Self {
        self.max_events = Some(n);
        self
    }
}

/// What a run ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Simulated time of the last processed event.
    pub end: Time,
    /// Every traffic source completed.
    pub completed: bool,
    /// Why the run stopped: "complete", "idle", "time_limit" or "event_limit".
    pub reason: &'static str,
}

/// Application traffic fed into a sender agent through [`Agent::send`].
#[derive(Debug, Clone)]
pub struct Traffic {
    pub messages: u64,
    pub size: usize,
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
    pub fn every(messages: u64, size: usize, interval: Duration) -> Self {
        Traffic {
            interval: Some(interval),
            ..Traffic::saturated(messages, size)
        }
    }
}

/// Per-node figures gathered from the agent's events as they happen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeMetrics {
    /// `Delivered` events.
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub first_delivery: Option<Time>,
    pub last_delivery: Option<Time>,
    /// Sender: `MessageDone` events, and how many of them failed.
    pub messages_done: u64,
    pub messages_failed: u64,
    /// Sum and maximum of (done_at − sent_at) over `MessageDone`, nanoseconds.
    pub latency_sum_ns: u128,
    pub latency_max_ns: u64,
    /// Sum of transmissions over `MessageDone`.
    pub transmissions: u64,
    pub losses_detected: u64,
    pub completed_at: Option<Time>,
    /// Datagrams handed to the agent.
    pub packets_in: u64,
    /// Datagrams the agent sent.
    pub packets_out: u64,
}

/// Network-level counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Datagrams originated by agents and router agents, by class.
    pub originated_data: u64,
    pub originated_repair: u64,
    pub originated_control: u64,
    pub originated_other: u64,
    /// Packet transmissions on point-to-point link directions (one per hop).
    pub link_hops: u64,
    /// Of `link_hops`, those of repair-data and of control packets (by `Header::class()`).
    pub link_hops_repair: u64,
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
    /// Total losses (all causes; see [`Sim::losses`]).
    pub lost: u64,
    /// Times an agent still asked for a deadline that had just been served (it is then
    /// woken 1 ns later instead of spinning).
    pub stuck_timers: u64,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Timer(u32),
    RouterTimer(u32),
    Traffic(u32),
    /// The head of a link direction's in-flight FIFO arrives.
    LinkArrive(u32),
    /// A copy on a reordering link arrives (one event per copy).
    Arrive(u32),
    Deliver(u32),
    RxServe(u32),
    BusArb(u32),
    BusEnd(u32),
}

struct Pkt {
    payload: Bytes,
    src: u32,
    dest: Dest,
    tree: u32,
    class: Option<PacketClass>,
    refs: u32,
    id: u64,
}

#[derive(Clone, Copy)]
struct Copy {
    pkt: u32,
    local: u32,
    node: u32,
    iface: u32,
}

#[derive(Default)]
struct DirState {
    busy_until: u64,
    last_arrival: u64,
    waiting: VecDeque<u64>,
    /// Copies in flight on this direction, in arrival order (arrivals never reorder, so
    /// only the head needs a kernel event: the heap holds one event per busy direction,
    /// not one per packet in flight).
    inflight: VecDeque<(u64, u32)>,
    /// The copy whose arrival event is pending (kept out of the deque so that a direction
    /// with one packet in flight, the common case, allocates nothing).
    head: Option<u32>,
    jitter: Option<SimRng>,
}

struct Frame {
    pkt: u32,
    /// Tree target range; `t0 == NONE` means "every addressed member of the bus".
    t0: u32,
    t1: u32,
    bytes: usize,
}

struct Mac {
    queue: VecDeque<Frame>,
    req: Option<u64>,
    attempts: u32,
    rng: SimRng,
}

struct BusState {
    cfg: BusConfig,
    bit_ns: u64,
    busy_until: u64,
    arb_at: Option<u64>,
    transmitting: Option<u32>,
    macs: Vec<Mac>,
}

#[derive(Default)]
struct Host {
    timer_at: Option<Time>,
    router_timer_at: Option<Time>,
    rxq: Option<RxQueue>,
    proc_delay: u64,
}

struct RxQueue {
    cap: usize,
    service_ns: u64,
    q: VecDeque<u32>,
    /// Packets that go through the queue; the others bypass it.
    kinds: KindFilter,
}

struct TrafficState {
    spec: Traffic,
    payload: Bytes,
    generated: u64,
    sent: u64,
    closed: bool,
}

/// One packet originated during a run (recorded when tracing is on).
#[derive(Debug, Clone)]
pub struct PacketRecord {
    pub id: u64,
    pub time: Time,
    pub src: NodeId,
    pub dest: Dest,
    pub class: Option<PacketClass>,
    pub payload: Bytes,
}

/// One loss (recorded when tracing is on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LossRecord {
    pub id: u64,
    pub time: Time,
    /// Node where the packet was dropped (the sender of the hop for link and tx losses).
    pub node: NodeId,
    pub cause: String,
}

/// A simulation.
pub struct Sim {
    net: Network,
    seed: u64,
    kernel: Kernel<Ev>,
    started: bool,
    agents: Vec<Option<Box<dyn Agent>>>,
    routers: Vec<Option<Box<dyn RouterAgent>>>,
    groups: BTreeMap<u32, Vec<u32>>,
    spts: HashMap<u32, Spt>,
    trees: Vec<Tree>,
    tree_index: HashMap<(u32, bool, u32), u32>,
    /// Multicast trees of packets a router agent sends only on some interfaces:
    /// (source, group, interfaces) → tree (see `Tree::multicast_via`).
    via_index: HashMap<(u32, u32, Vec<u32>), u32>,
    /// Per group, a membership flag per node (for `Tree::multicast_via`).
    member_flags: HashMap<u32, Vec<bool>>,
    /// Multicast forwarding state at routers with an agent: (router, group) → (tree, local
    /// id of the router in it) of the last original data packet to the group that crossed
    /// the router. A router agent's packet to the group pinned to some interfaces follows
    /// this distribution tree below the router (as (S,G) forwarding state would carry it).
    data_trees: HashMap<(u32, u32), (u32, u32)>,
    /// Nodes labelled so far by bounded unicast searches, per destination without a kept
    /// shortest-path tree.
    unicast_work: HashMap<u32, usize>,
    unicast_scratch: UnicastScratch,
    /// Whether the network is connected (computed when first needed).
    connected: Option<bool>,
    pkts: Vec<Pkt>,
    pkt_free: Vec<u32>,
    next_pkt_id: u64,
    copies: Vec<Copy>,
    copy_free: Vec<u32>,
    dirs: Vec<DirState>,
    dir_loss: Vec<Vec<LossState>>,
    tx_loss: Vec<Vec<LossState>>,
    rx_loss: Vec<Vec<LossState>>,
    rules: usize,
    causes: Vec<(String, u64)>,
    buses: Vec<BusState>,
    hosts: Vec<Host>,
    traffic: Vec<Option<TrafficState>>,
    sources: usize,
    sources_done: usize,
    record_events: bool,
    /// When set, events are kept only for the nodes marked here.
    record_only: Option<Vec<bool>>,
    events: Vec<Vec<(Time, Event)>>,
    metrics: Vec<NodeMetrics>,
    counters: Counters,
    trace: Option<(Vec<PacketRecord>, Vec<LossRecord>)>,
    scratch_tx: Vec<Transmit>,
    scratch_ready: Vec<u32>,
}

const CAUSE_QUEUE: u32 = 0;
const CAUSE_IMPLOSION: u32 = 1;
const CAUSE_COLLISIONS: u32 = 2;

impl Sim {
    /// A simulation of `net` whose every random choice derives from `seed`.
    pub fn new(net: Network, seed: u64) -> Sim {
        let n = net.nodes.len();
        let mut dirs: Vec<DirState> = Vec::with_capacity(net.links.len() * 2);
        for (i, l) in net.links.iter().enumerate() {
            for d in 0..2u64 {
                dirs.push(DirState {
                    jitter: l
                        .cfg
                        .jitter
                        .map(|_| SimRng::new(seed, tag::JITTER, i as u64, d)),
                    ..DirState::default()
                });
            }
        }
        let buses = net
            .buses
            .iter()
            .enumerate()
            .map(|(b, bus)| BusState {
                cfg: bus.cfg.clone(),
                bit_ns: bus.cfg.bit_ns(),
                busy_until: 0,
                arb_at: None,
                transmitting: None,
                macs: bus
                    .members
                    .iter()
                    .map(|&m| Mac {
                        queue: VecDeque::new(),
                        req: None,
                        attempts: 0,
                        rng: SimRng::new(seed, tag::BACKOFF, u64::from(m), b as u64),
                    })
                    .collect(),
            })
            .collect();
        let nl = dirs.len();
        Sim {
            seed,
            kernel: Kernel::new(),
            started: false,
            agents: (0..n).map(|_| None).collect(),
            routers: (0..n).map(|_| None).collect(),
            groups: BTreeMap::new(),
            spts: HashMap::new(),
            trees: Vec::new(),
            tree_index: HashMap::new(),
            via_index: HashMap::new(),
            member_flags: HashMap::new(),
            data_trees: HashMap::new(),
            unicast_work: HashMap::new(),
            unicast_scratch: UnicastScratch::default(),
            connected: None,
            pkts: Vec::new(),
            pkt_free: Vec::new(),
            next_pkt_id: 0,
            copies: Vec::new(),
            copy_free: Vec::new(),
            dirs,
            dir_loss: (0..nl).map(|_| Vec::new()).collect(),
            tx_loss: (0..n).map(|_| Vec::new()).collect(),
            rx_loss: (0..n).map(|_| Vec::new()).collect(),
            rules: 0,
            causes: vec![
                ("queue_overflow".into(), 0),
                ("implosion".into(), 0),
                ("excess_collisions".into(), 0),
            ],
            buses,
            hosts: (0..n).map(|_| Host::default()).collect(),
            traffic: (0..n).map(|_| None).collect(),
            sources: 0,
            sources_done: 0,
            record_events: true,
            record_only: None,
            events: (0..n).map(|_| Vec::new()).collect(),
            metrics: vec![NodeMetrics::default(); n],
            counters: Counters::default(),
            trace: None,
            scratch_tx: Vec::new(),
            scratch_ready: Vec::new(),
            net,
        }
    }

    pub fn network(&self) -> &Network {
        &self.net
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn now(&self) -> Time {
        self.kernel.now()
    }
    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.kernel.processed()
    }

    /// The seeded stream for the agent at `node` (`stream` distinguishes several per node).
    pub fn agent_rng(&self, node: NodeId, stream: u64) -> AgentRng {
        AgentRng::derive(self.seed, node, stream)
    }

    fn check_node(&self, n: NodeId) -> Result<usize, SimError> {
        let i = n.0 as usize;
        if i < self.net.nodes.len() {
            Ok(i)
        } else {
            Err(SimError::NoSuchNode(n))
        }
    }

    /// Keep every agent's events with their times (on by default). Off saves memory on
    /// large runs; [`Sim::metrics`] is gathered either way.
    pub fn record_events(&mut self, on: bool) {
        self.record_events = on;
        self.record_only = None;
    }

    /// Keep events only for `nodes` (e.g. the source of a run with many receivers).
    pub fn record_events_of(&mut self, nodes: &[NodeId]) {
        let mut mask = vec![false; self.agents.len()];
        for n in nodes {
            if let Some(m) = mask.get_mut(n.0 as usize) {
                *m = true;
            }
        }
        self.record_events = true;
        self.record_only = Some(mask);
    }

    /// Record every originated packet and every loss (for per-packet records and pcap).
    pub fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(|| (Vec::new(), Vec::new()));
    }

    pub fn add_agent(&mut self, node: NodeId, agent: Box<dyn Agent>) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        if self.agents[i].is_some() {
            return Err(SimError::AgentExists(node));
        }
        self.agents[i] = Some(agent);
        Ok(())
    }

    /// Attach a router agent: it sees every packet arriving at `node`.
    pub fn add_router_agent(
        &mut self,
        node: NodeId,
        agent: Box<dyn RouterAgent>,
    ) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        if self.routers[i].is_some() {
            return Err(SimError::AgentExists(node));
        }
        self.routers[i] = Some(agent);
        Ok(())
    }

    /// Set the static members of `group`.
    pub fn set_group(&mut self, group: GroupId, members: &[NodeId]) -> Result<(), SimError> {
        for &m in members {
            self.check_node(m)?;
        }
        let mut v: Vec<u32> = members.iter().map(|m| m.0).collect();
        v.sort_unstable();
        v.dedup();
        self.groups.insert(group.0, v);
        // Membership changed: forget the trees built for this group.
        self.tree_index
            .retain(|&(_, unicast, d), _| unicast || d != group.0);
        self.via_index.retain(|(_, g, _), _| *g != group.0);
        self.member_flags.remove(&group.0);
        self.data_trees.retain(|&(_, g), _| g != group.0);
        Ok(())
    }

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
        self.hosts[i].rxq = Some(RxQueue {
            cap: capacity,
            service_ns: (1e9 / rate).round().max(1.0) as u64,
            q: VecDeque::new(),
            kinds: KindFilter::All,
        });
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

    /// Add a loss rule.
    pub fn add_loss(&mut self, rule: &LossRule) -> Result<(), SimError> {
        rule.model.validate().map_err(SimError::Loss)?;
        let cause = match self.causes.iter().position(|(c, _)| *c == rule.cause) {
            Some(i) => i as u32,
            None => {
                self.causes.push((rule.cause.clone(), 0));
                self.causes.len() as u32 - 1
            }
        };
        let ri = self.rules as u64;
        self.rules += 1;
        match rule.site {
            LossSite::Link { link, from } => {
                let l = self.net.links.get(link).ok_or(SimError::NoSuchLink(link))?;
                let dirs: Vec<usize> = match from {
                    None => vec![2 * link, 2 * link + 1],
                    Some(n) if n.0 == l.a => vec![2 * link],
                    Some(n) if n.0 == l.b => vec![2 * link + 1],
                    Some(node) => return Err(SimError::NotOnLink { node, link }),
                };
                for d in dirs {
                    let st = LossState::new(rule, cause, self.seed, ri, d as u64);
                    self.dir_loss[d].push(st);
                }
            }
            LossSite::Tx { node, .. } => {
                let i = self.check_node(node)?;
                let st = LossState::new(rule, cause, self.seed, ri, u64::from(node.0) << 1);
                self.tx_loss[i].push(st);
            }
            LossSite::Rx { node, .. } => {
                let i = self.check_node(node)?;
                let st = LossState::new(rule, cause, self.seed, ri, (u64::from(node.0) << 1) | 1);
                self.rx_loss[i].push(st);
            }
        }
        Ok(())
    }

    /// Feed application traffic to the agent at `node`.
    pub fn add_traffic(&mut self, node: NodeId, spec: Traffic) -> Result<(), SimError> {
        let i = self.check_node(node)?;
        if self.agents[i].is_none() {
            return Err(SimError::NoAgent(node));
        }
        if self.traffic[i].is_none() {
            self.sources += 1;
        }
        let payload = Bytes::from(vec![0u8; spec.size]);
        self.traffic[i] = Some(TrafficState {
            spec,
            payload,
            generated: 0,
            sent: 0,
            closed: false,
        });
        Ok(())
    }

    /// Events an agent reported, with the times they were drained (if recording).
    pub fn events(&self, node: NodeId) -> &[(Time, Event)] {
        self.events
            .get(node.0 as usize)
            .map_or(&[], |v| v.as_slice())
    }
    pub fn metrics(&self, node: NodeId) -> Option<&NodeMetrics> {
        self.metrics.get(node.0 as usize)
    }
    pub fn agent(&self, node: NodeId) -> Option<&dyn Agent> {
        self.agents.get(node.0 as usize)?.as_deref()
    }
    pub fn router_agent(&self, node: NodeId) -> Option<&dyn RouterAgent> {
        self.routers.get(node.0 as usize)?.as_deref()
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// Losses by cause, in a fixed order (built-in causes first, then rule causes in the
    /// order they were added).
    pub fn losses(&self) -> Vec<(String, u64)> {
        self.causes.clone()
    }
    /// Originated packets and losses, if [`Sim::enable_trace`] was called.
    pub fn trace(&self) -> Option<(&[PacketRecord], &[LossRecord])> {
        self.trace
            .as_ref()
            .map(|(p, l)| (p.as_slice(), l.as_slice()))
    }

    // ---------------------------------------------------------------- running

    /// Run until `stop` says so or nothing is left to do. May be called again to continue.
    pub fn run(&mut self, stop: &Stop) -> Outcome {
        if !self.started {
            self.started = true;
            for i in 0..self.agents.len() {
                if let Some(t) = &self.traffic[i] {
                    let at = t.spec.start;
                    self.kernel.schedule(at, Ev::Traffic(i as u32));
                }
                if self.agents[i].is_some() {
                    self.drain(i as u32);
                }
                if self.routers[i].is_some() {
                    self.drain_router(i as u32);
                }
            }
        }
        loop {
            if stop.when_complete && self.sources > 0 && self.sources_done >= self.sources {
                return self.outcome("complete");
            }
            if stop
                .max_events
                .is_some_and(|m| self.kernel.processed() >= m)
            {
                return self.outcome("event_limit");
            }
            match self.kernel.peek_time() {
                None => return self.outcome("idle"),
                Some(t) if stop.until.is_some_and(|u| t > u) => return self.outcome("time_limit"),
                _ => {}
            }
            let Some((now, ev)) = self.kernel.pop() else {
                return self.outcome("idle");
            };
            self.handle(now, ev);
        }
    }

    fn outcome(&self, reason: &'static str) -> Outcome {
        Outcome {
            end: self.kernel.now(),
            completed: self.sources > 0 && self.sources_done >= self.sources,
            reason,
        }
    }

    fn handle(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::Timer(x) => {
                let h = &mut self.hosts[x as usize];
                if h.timer_at != Some(now) {
                    return; // superseded
                }
                h.timer_at = None;
                if let Some(a) = self.agents[x as usize].as_mut() {
                    if a.poll_timeout().is_some_and(|t| t <= now) {
                        a.handle_timeout(now);
                        if a.poll_timeout().is_some_and(|t| t <= now) {
                            // The agent still asks for `now` after being served it: wake it
                            // 1 ns later rather than spinning at this instant forever.
                            self.counters.stuck_timers += 1;
                            self.hosts[x as usize].timer_at = Some(now + Duration::from_nanos(1));
                            self.kernel
                                .schedule(now + Duration::from_nanos(1), Ev::Timer(x));
                        }
                    }
                }
                self.drain(x);
            }
            Ev::RouterTimer(x) => {
                let h = &mut self.hosts[x as usize];
                if h.router_timer_at != Some(now) {
                    return;
                }
                h.router_timer_at = None;
                if let Some(r) = self.routers[x as usize].as_mut() {
                    if r.poll_timeout().is_some_and(|t| t <= now) {
                        r.handle_timeout(now);
                    }
                }
                self.drain_router(x);
            }
            Ev::Traffic(x) => {
                if let Some(t) = self.traffic[x as usize].as_mut() {
                    match t.spec.interval {
                        None => t.generated = t.spec.messages,
                        Some(d) => {
                            if t.generated < t.spec.messages {
                                t.generated += 1;
                                if t.generated < t.spec.messages {
                                    self.kernel.schedule(now + d, Ev::Traffic(x));
                                }
                            }
                        }
                    }
                }
                self.drain(x);
            }
            Ev::LinkArrive(d) => {
                let st = &mut self.dirs[d as usize];
                let Some(c) = st.head.take() else {
                    return;
                };
                if let Some((next, n)) = st.inflight.pop_front() {
                    st.head = Some(n);
                    self.kernel
                        .schedule(Time::from_nanos(next), Ev::LinkArrive(d));
                }
                self.arrive(c);
            }
            Ev::Arrive(c) => self.arrive(c),
            Ev::Deliver(c) => self.deliver(c),
            Ev::RxServe(x) => {
                let h = &mut self.hosts[x as usize];
                let Some(q) = h.rxq.as_mut() else { return };
                let head = q.q.pop_front();
                let more = !q.q.is_empty();
                let svc = q.service_ns;
                let pd = h.proc_delay;
                if more {
                    self.kernel
                        .schedule(now + Duration::from_nanos(svc), Ev::RxServe(x));
                }
                if let Some(c) = head {
                    if pd > 0 {
                        self.kernel
                            .schedule(now + Duration::from_nanos(pd), Ev::Deliver(c));
                    } else {
                        self.deliver(c);
                    }
                }
            }
            Ev::BusArb(b) => self.bus_arbitrate(b, now),
            Ev::BusEnd(b) => self.bus_end(b, now),
        }
    }

    // ---------------------------------------------------------------- agents

    fn drain(&mut self, x: u32) {
        let xi = x as usize;
        let Some(mut agent) = self.agents[xi].take() else {
            return;
        };
        let now = self.kernel.now();
        let mut out = std::mem::take(&mut self.scratch_tx);
        loop {
            while let Some(t) = agent.poll_transmit() {
                out.push(t);
            }
            while let Some(e) = agent.poll_event() {
                self.note_event(xi, now, e);
            }
            if !self.feed(xi, agent.as_mut(), now) {
                break;
            }
        }
        self.agents[xi] = Some(agent);
        self.metrics[xi].packets_out += out.len() as u64;
        for t in out.drain(..) {
            self.originate(x, t, None);
        }
        self.scratch_tx = out;
        let next = self.agents[xi].as_ref().and_then(|a| a.poll_timeout());
        let h = &mut self.hosts[xi];
        let next = match (next, h.timer_at) {
            // A wake-up after `now` is already booked for a deadline that has passed.
            (Some(t), Some(b)) if t <= now && b > now => Some(b),
            _ => next,
        };
        match next {
            Some(t) if h.timer_at != Some(t.max(now)) => {
                let t = t.max(now);
                h.timer_at = Some(t);
                self.kernel.schedule(t, Ev::Timer(x));
            }
            Some(_) => {}
            None => h.timer_at = None,
        }
    }

    /// Hand queued traffic to the agent. Returns true if it did anything.
    fn feed(&mut self, xi: usize, agent: &mut dyn Agent, now: Time) -> bool {
        let Some(t) = self.traffic[xi].as_mut() else {
            return false;
        };
        if now < t.spec.start {
            return false;
        }
        let mut acted = false;
        while t.sent < t.generated && agent.can_send() {
            let data = if t.spec.stamp && t.spec.size >= 8 {
                let mut v = vec![0u8; t.spec.size];
                v[..8].copy_from_slice(&t.sent.to_be_bytes());
                Bytes::from(v)
            } else {
                t.payload.clone()
            };
            match agent.send(now, data) {
                Ok(()) => {
                    t.sent += 1;
                    acted = true;
                }
                Err(rmcast_proto::SendError::Full(_)) => break,
                Err(_) => {
                    // The agent refuses this traffic for good (not a sender, too large):
                    // stop feeding it.
                    t.generated = t.sent;
                    t.spec.messages = t.sent;
                    break;
                }
            }
        }
        if !t.closed && t.spec.close && t.sent >= t.spec.messages {
            t.closed = true;
            agent.close(now);
            acted = true;
        }
        acted
    }

    fn note_event(&mut self, xi: usize, now: Time, e: Event) {
        let m = &mut self.metrics[xi];
        match &e {
            Event::Delivered { data, .. } => {
                m.delivered += 1;
                m.delivered_bytes += data.len() as u64;
                m.first_delivery.get_or_insert(now);
                m.last_delivery = Some(now);
            }
            Event::MessageDone {
                sent_at,
                done_at,
                transmissions,
                failed,
                ..
            } => {
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
                if m.completed_at.is_none() {
                    m.completed_at = Some(now);
                    if self.traffic[xi].is_some() {
                        self.sources_done += 1;
                    }
                }
            }
        }
        if self.record_events
            && self
                .record_only
                .as_ref()
                .is_none_or(|m| m.get(xi).copied().unwrap_or(false))
        {
            self.events[xi].push((now, e));
        }
    }

    fn drain_router(&mut self, x: u32) {
        let xi = x as usize;
        let Some(mut r) = self.routers[xi].take() else {
            return;
        };
        let mut out = Vec::new();
        while let Some(t) = r.poll_transmit() {
            out.push(t);
        }
        let next = r.poll_timeout();
        self.routers[xi] = Some(r);
        for rt in out {
            let via: Option<Vec<u32>> = rt.via.map(|v| v.iter().map(|i| i.0).collect());
            self.originate(x, rt.transmit, via.as_deref());
        }
        let now = self.kernel.now();
        let h = &mut self.hosts[xi];
        match next {
            Some(t) if h.router_timer_at != Some(t.max(now)) => {
                let t = t.max(now);
                h.router_timer_at = Some(t);
                self.kernel.schedule(t, Ev::RouterTimer(x));
            }
            Some(_) => {}
            None => h.router_timer_at = None,
        }
    }

    // ---------------------------------------------------------------- packets

    fn tree_for(&mut self, src: u32, dest: Dest, via: Option<&[u32]>) -> u32 {
        if let (Dest::Group(g), Some(via)) = (dest, via) {
            // A router agent's packet down some interfaces only: build just that part of
            // its tree (the full one costs a Dijkstra over the whole network per router).
            let connected = *self
                .connected
                .get_or_insert_with(|| self.net.is_connected());
            if connected {
                let key = (src, g.0, via.to_vec());
                if let Some(&t) = self.via_index.get(&key) {
                    return t;
                }
                let n = self.net.nodes.len();
                let flags = self.member_flags.entry(g.0).or_insert_with(|| {
                    let mut f = vec![false; n];
                    for &m in self.groups.get(&g.0).map_or(&[][..], |v| v.as_slice()) {
                        if let Some(x) = f.get_mut(m as usize) {
                            *x = true;
                        }
                    }
                    f
                });
                let tree = Tree::multicast_via(&self.net, src, via, flags);
                self.trees.push(tree);
                let id = self.trees.len() as u32 - 1;
                self.via_index.insert(key, id);
                return id;
            }
        }
        let key = match dest {
            Dest::Group(g) => (src, false, g.0),
            Dest::Node(n) => (src, true, n.0),
        };
        if let Some(&t) = self.tree_index.get(&key) {
            return t;
        }
        let tree = match dest {
            Dest::Group(g) => {
                let empty = Vec::new();
                let members = self.groups.get(&g.0).unwrap_or(&empty);
                // A shortest-path tree computed only for a multicast tree is not kept (it
                // is O(nodes) and unicast routing is the only other user; recomputing it
                // gives the same tree).
                match self.spts.get(&src) {
                    Some(spt) => Tree::multicast(spt, members),
                    None => Tree::multicast(&Spt::compute(&self.net, src), members),
                }
            }
            Dest::Node(n) => {
                if (n.0 as usize) >= self.net.nodes.len() {
                    Tree {
                        node: vec![src],
                        deliver: vec![false],
                        in_iface: vec![NONE],
                        hop_start: vec![0, 0],
                        unreachable: 1,
                        ..Tree::default()
                    }
                } else if let Some(spt) = self.spts.get(&n.0) {
                    Tree::unicast(spt, src)
                } else {
                    // Few senders to a destination: a search from it that stops at the
                    // sender (same path). Once such searches to one destination have
                    // labelled as many nodes as the network has, its full shortest-path
                    // tree is computed and kept (so a popular destination costs one).
                    let n_nodes = self.net.nodes.len();
                    let work = self.unicast_work.entry(n.0).or_insert(0);
                    if *work < n_nodes {
                        let (t, visited) =
                            Tree::unicast_bounded(&self.net, n.0, src, &mut self.unicast_scratch);
                        *work += visited;
                        t
                    } else {
                        self.unicast_work.remove(&n.0);
                        let spt = self
                            .spts
                            .entry(n.0)
                            .or_insert_with(|| Spt::compute(&self.net, n.0));
                        Tree::unicast(spt, src)
                    }
                }
            }
        };
        self.trees.push(tree);
        let id = self.trees.len() as u32 - 1;
        self.tree_index.insert(key, id);
        id
    }

    fn new_copy(&mut self, c: Copy) -> u32 {
        self.pkts[c.pkt as usize].refs += 1;
        if let Some(i) = self.copy_free.pop() {
            self.copies[i as usize] = c;
            i
        } else {
            self.copies.push(c);
            self.copies.len() as u32 - 1
        }
    }

    fn free_copy(&mut self, c: u32) {
        let p = self.copies[c as usize].pkt;
        self.copy_free.push(c);
        self.release(p);
    }

    fn release(&mut self, p: u32) {
        let pk = &mut self.pkts[p as usize];
        pk.refs -= 1;
        if pk.refs == 0 {
            pk.payload = Bytes::new();
            self.pkt_free.push(p);
        }
    }

    fn lose(&mut self, cause: u32, pkt: u32, node: u32) {
        self.causes[cause as usize].1 += 1;
        self.counters.lost += 1;
        if let Some((_, losses)) = self.trace.as_mut() {
            losses.push(LossRecord {
                id: self.pkts[pkt as usize].id,
                time: self.kernel.now(),
                node: NodeId(node),
                cause: self.causes[cause as usize].0.clone(),
            });
        }
    }

    fn originate(&mut self, x: u32, t: Transmit, via: Option<&[u32]>) {
        let class = Header::parse(&t.payload).ok().map(|h| h.class());
        match class {
            Some(PacketClass::OriginalData) => self.counters.originated_data += 1,
            Some(PacketClass::RepairData) => self.counters.originated_repair += 1,
            Some(PacketClass::Control) => self.counters.originated_control += 1,
            None => self.counters.originated_other += 1,
        }
        let id = self.next_pkt_id;
        self.next_pkt_id += 1;
        if let Some((pkts, _)) = self.trace.as_mut() {
            pkts.push(PacketRecord {
                id,
                time: self.kernel.now(),
                src: NodeId(x),
                dest: t.dest,
                class,
                payload: t.payload.clone(),
            });
        }
        // A router agent's group packet pinned to interfaces goes down the group's
        // distribution tree through this router when data has crossed it on one and every
        // pinned interface is a hop of it there; otherwise the router's own tree below
        // those interfaces (`Tree::multicast_via`).
        let pinned = match (t.dest, via) {
            (Dest::Group(g), Some(v)) => {
                self.data_trees.get(&(x, g.0)).copied().filter(|&(tr, l)| {
                    let hops = self.trees[tr as usize].hops_of(l);
                    v.iter().all(|i| hops.iter().any(|h| h.iface == *i))
                })
            }
            _ => None,
        };
        let (tree, start) = match pinned {
            Some(p) => p,
            None => {
                let tree = self.tree_for(x, t.dest, via);
                self.counters.unreachable += u64::from(self.trees[tree as usize].unreachable);
                (tree, 0)
            }
        };
        let pk = Pkt {
            payload: t.payload,
            src: x,
            dest: t.dest,
            tree,
            class,
            refs: 1,
            id,
        };
        let p = if let Some(i) = self.pkt_free.pop() {
            self.pkts[i as usize] = pk;
            i
        } else {
            self.pkts.push(pk);
            self.pkts.len() as u32 - 1
        };
        self.forward(p, start, x, via);
        self.release(p);
    }

    /// Send packet `p`, sitting at tree node `local` (NONE: off the tree) at node `x`, on the
    /// tree's hops (or only on interfaces `only`).
    fn forward(&mut self, p: u32, local: u32, x: u32, only: Option<&[u32]>) {
        let tree = self.pkts[p as usize].tree as usize;
        let nhops = if local == NONE {
            0
        } else {
            self.trees[tree].hops_of(local).len()
        };
        for h in 0..nhops {
            let hop = self.trees[tree].hops_of(local)[h];
            if only.is_some_and(|o| !o.contains(&hop.iface)) {
                continue;
            }
            self.send_on(p, x, hop.iface, hop.t0, hop.t1);
        }
        if let Some(o) = only {
            for &iface in o {
                let on_tree = local != NONE
                    && self.trees[tree]
                        .hops_of(local)
                        .iter()
                        .any(|h| h.iface == iface);
                if !on_tree && (iface as usize) < self.net.ifaces[x as usize].len() {
                    self.send_on(p, x, iface, NONE, NONE);
                }
            }
        }
    }

    fn send_on(&mut self, p: u32, x: u32, iface: u32, t0: u32, t1: u32) {
        let class = self.pkts[p as usize].class;
        for i in 0..self.tx_loss[x as usize].len() {
            if self.tx_loss[x as usize][i].drops(class, iface) {
                let c = self.tx_loss[x as usize][i].cause;
                self.lose(c, p, x);
                return;
            }
        }
        let f = self.net.ifaces[x as usize][iface as usize];
        match f.medium {
            Medium::Link { link, dir } => {
                let (local, node, in_iface) = if t0 == NONE {
                    // Off the tree: the peer gets it as an addressed node only.
                    (NONE, f.peer, f.peer_iface)
                } else {
                    let tr = &self.trees[self.pkts[p as usize].tree as usize];
                    let l = tr.targets[t0 as usize];
                    (l, tr.node[l as usize], tr.in_iface[l as usize])
                };
                self.link_send(
                    2 * link as usize + dir as usize,
                    p,
                    x,
                    local,
                    node,
                    in_iface,
                );
            }
            Medium::Bus { bus, pos } => {
                let bytes = self.buses[bus as usize]
                    .cfg
                    .frame_bytes(self.pkts[p as usize].payload.len());
                self.pkts[p as usize].refs += 1;
                let mac = &mut self.buses[bus as usize].macs[pos as usize];
                mac.queue.push_back(Frame {
                    pkt: p,
                    t0,
                    t1,
                    bytes,
                });
                let first = mac.queue.len() == 1;
                let idle_mac = self.buses[bus as usize].transmitting != Some(pos);
                if first && idle_mac {
                    self.mac_ready(bus, pos);
                }
            }
        }
    }

    fn link_send(&mut self, d: usize, p: u32, x: u32, local: u32, node: u32, in_iface: u32) {
        let now = self.kernel.now().as_nanos();
        let link = &self.net.links[d / 2];
        let cfg = &link.cfg;
        let st = &mut self.dirs[d];
        if let Some(cap) = cfg.queue {
            while st.waiting.front().is_some_and(|&s| s <= now) {
                st.waiting.pop_front();
            }
            if st.waiting.len() >= cap && st.busy_until > now {
                self.lose(CAUSE_QUEUE, p, x);
                return;
            }
        }
        let len = self.pkts[p as usize].payload.len() as u64;
        let tx = if cfg.bandwidth_bps == 0 {
            0
        } else {
            (len * 8 * 1_000_000_000).div_ceil(cfg.bandwidth_bps)
        };
        let start = now.max(st.busy_until);
        if start > now && cfg.queue.is_some() {
            st.waiting.push_back(start);
        }
        st.busy_until = start + tx;
        let mut arrival = st.busy_until + cfg.delay.as_nanos() as u64;
        if let (Some(j), Some(rng)) = (cfg.jitter, st.jitter.as_mut()) {
            let v = rng.normal(j.mean.as_nanos() as f64, j.sd.as_nanos() as f64);
            if v > 0.0 {
                arrival += v as u64;
            }
        }
        if !cfg.reorder {
            arrival = arrival.max(st.last_arrival);
            st.last_arrival = arrival;
        }
        let reorder = cfg.reorder;
        self.counters.link_hops += 1;
        let class = self.pkts[p as usize].class;
        match class {
            Some(PacketClass::RepairData) => self.counters.link_hops_repair += 1,
            Some(PacketClass::Control) => self.counters.link_hops_control += 1,
            _ => {}
        }
        for i in 0..self.dir_loss[d].len() {
            if self.dir_loss[d][i].drops(class, 0) {
                let c = self.dir_loss[d][i].cause;
                self.lose(c, p, x);
                return;
            }
        }
        let c = self.new_copy(Copy {
            pkt: p,
            local,
            node,
            iface: in_iface,
        });
        if reorder {
            self.kernel
                .schedule(Time::from_nanos(arrival), Ev::Arrive(c));
            return;
        }
        let st = &mut self.dirs[d];
        if st.head.is_none() {
            st.head = Some(c);
            self.kernel
                .schedule(Time::from_nanos(arrival), Ev::LinkArrive(d as u32));
        } else {
            st.inflight.push_back((arrival, c));
        }
    }

    fn addressed(&self, node: u32, dest: Dest) -> bool {
        match dest {
            Dest::Node(n) => n.0 == node,
            Dest::Group(g) => self
                .groups
                .get(&g.0)
                .is_some_and(|m| m.binary_search(&node).is_ok()),
        }
    }

    /// A copy reached its node: receive-side loss, router hook, forwarding, delivery.
    fn arrive(&mut self, c: u32) {
        let Copy {
            pkt: p,
            local,
            node: x,
            iface,
        } = self.copies[c as usize];
        let class = self.pkts[p as usize].class;
        for i in 0..self.rx_loss[x as usize].len() {
            if self.rx_loss[x as usize][i].drops(class, iface) {
                let cause = self.rx_loss[x as usize][i].cause;
                self.lose(cause, p, x);
                self.free_copy(c);
                return;
            }
        }
        let decision = if let Some(mut r) = self.routers[x as usize].take() {
            let now = self.kernel.now();
            let pk = &self.pkts[p as usize];
            if let (Dest::Group(g), Some(PacketClass::OriginalData)) = (pk.dest, class) {
                if local != NONE {
                    self.data_trees.insert((x, g.0), (pk.tree, local));
                }
            }
            let d = r.on_packet(now, IfaceId(iface), NodeId(pk.src), pk.dest, &pk.payload);
            self.routers[x as usize] = Some(r);
            self.drain_router(x);
            d
        } else {
            RouteDecision::Forward
        };
        match decision {
            RouteDecision::Forward => self.forward(p, local, x, None),
            RouteDecision::Consume => {
                self.counters.router_consumed += 1;
                self.free_copy(c);
                return;
            }
            RouteDecision::ForwardOn(ifs) => {
                let v: Vec<u32> = ifs.iter().map(|i| i.0).collect();
                self.forward(p, local, x, Some(&v));
            }
        }
        let deliver = if local == NONE {
            self.addressed(x, self.pkts[p as usize].dest)
        } else {
            self.trees[self.pkts[p as usize].tree as usize].deliver[local as usize]
        };
        if !deliver {
            self.free_copy(c);
            return;
        }
        let h = &mut self.hosts[x as usize];
        if let Some(q) = h.rxq.as_mut().filter(|q| q.kinds.matches(class)) {
            if q.q.len() >= q.cap {
                self.lose(CAUSE_IMPLOSION, p, x);
                self.free_copy(c);
                return;
            }
            q.q.push_back(c);
            if q.q.len() == 1 {
                let at = self.kernel.now() + Duration::from_nanos(q.service_ns);
                self.kernel.schedule(at, Ev::RxServe(x));
            }
        } else if h.proc_delay > 0 {
            let at = self.kernel.now() + Duration::from_nanos(h.proc_delay);
            self.kernel.schedule(at, Ev::Deliver(c));
        } else {
            self.deliver(c);
        }
    }

    fn deliver(&mut self, c: u32) {
        let Copy {
            pkt: p, node: x, ..
        } = self.copies[c as usize];
        let xi = x as usize;
        match self.agents[xi].as_mut() {
            Some(a) => {
                let pk = &self.pkts[p as usize];
                a.handle_packet_bytes(self.kernel.now(), NodeId(pk.src), &pk.payload);
                self.counters.deliveries += 1;
                self.metrics[xi].packets_in += 1;
                self.free_copy(c);
                self.drain(x);
            }
            None => {
                self.counters.no_agent += 1;
                self.free_copy(c);
            }
        }
    }

    // ---------------------------------------------------------------- the bus (seed 000 §3)

    fn schedule_arb(&mut self, b: u32, t: u64) {
        let bus = &mut self.buses[b as usize];
        if bus.arb_at.is_none_or(|a| t < a) {
            bus.arb_at = Some(t);
            self.kernel
                .schedule_late(Time::from_nanos(t), Ev::BusArb(b));
        }
    }

    /// The MAC at `pos` has a frame at the head of its queue and asks for the medium now.
    fn mac_ready(&mut self, b: u32, pos: u32) {
        let now = self.kernel.now().as_nanos();
        let bus = &mut self.buses[b as usize];
        let at = if now < bus.busy_until {
            // 1-persistent: wait for the medium to go idle, then transmit at once.
            self.counters.bus_deferrals += 1;
            bus.busy_until
        } else {
            now
        };
        bus.macs[pos as usize].req = Some(at);
        self.schedule_arb(b, at);
    }

    fn bus_arbitrate(&mut self, b: u32, now: Time) {
        let t = now.as_nanos();
        if self.buses[b as usize].arb_at != Some(t) {
            return; // superseded by an earlier arbitration
        }
        // Arbitration is a late event: every request made at this instant is in already.
        self.buses[b as usize].arb_at = None;
        let bus = &mut self.buses[b as usize];
        if t < bus.busy_until {
            let bu = bus.busy_until;
            self.schedule_arb(b, bu);
            return;
        }
        let mut ready = std::mem::take(&mut self.scratch_ready);
        ready.clear();
        ready.extend(
            bus.macs
                .iter()
                .enumerate()
                .filter(|(_, m)| m.req.is_some_and(|r| r <= t))
                .map(|(i, _)| i as u32),
        );
        let bit = bus.bit_ns;
        if ready.len() == 1 {
            let p = ready[0];
            let mac = &mut bus.macs[p as usize];
            mac.req = None;
            let bytes = mac.queue.front().map_or(0, |f| f.bytes) as u64;
            bus.busy_until = t + 8 * bytes * bit;
            bus.transmitting = Some(p);
            self.counters.bus_frames += 1;
            let end = bus.busy_until;
            self.defer_others(b, t, &ready);
            self.kernel.schedule(Time::from_nanos(end), Ev::BusEnd(b));
            if let Some(m) = self.buses[b as usize]
                .macs
                .iter()
                .filter_map(|m| m.req)
                .min()
            {
                self.schedule_arb(b, m.max(end));
            }
        } else if ready.len() >= 2 {
            self.counters.bus_collisions += 1;
            self.counters.bus_collided_frames += ready.len() as u64;
            bus.busy_until = t + bus.cfg.jam_bits * bit;
            let end = bus.busy_until;
            let (slot, max_attempts, backoff) =
                (bus.cfg.slot_bits, bus.cfg.max_attempts, bus.cfg.backoff);
            let mut discarded = Vec::new();
            for &p in &ready {
                let mac = &mut bus.macs[p as usize];
                mac.attempts += 1;
                if mac.attempts >= max_attempts {
                    // The 16th attempt collided: give the frame up.
                    mac.attempts = 0;
                    if let Some(f) = mac.queue.pop_front() {
                        discarded.push(f.pkt);
                    }
                    // The next frame, if any, is ready now, i.e. deferred to the jam's end.
                    mac.req = if mac.queue.is_empty() {
                        None
                    } else {
                        Some(end)
                    };
                    if mac.req.is_some() {
                        self.counters.bus_deferrals += 1;
                    }
                } else {
                    let i = mac.attempts.min(10);
                    let k = match backoff {
                        crate::network::Backoff::Exponential { inclusive: true } => {
                            mac.rng.below((1u64 << i) + 1)
                        }
                        crate::network::Backoff::Exponential { inclusive: false } => {
                            mac.rng.below(1u64 << i)
                        }
                        crate::network::Backoff::Fixed { slots } => slots,
                    };
                    self.counters.bus_backoffs += 1;
                    mac.req = Some(end + k * slot * bit);
                }
            }
            for pk in discarded {
                let src = self.pkts[pk as usize].src;
                self.lose(CAUSE_COLLISIONS, pk, src);
                self.release(pk);
            }
            self.defer_others(b, t, &ready);
            if let Some(m) = self.buses[b as usize]
                .macs
                .iter()
                .filter_map(|m| m.req)
                .min()
            {
                self.schedule_arb(b, m.max(end));
            }
        } else if let Some(m) = bus.macs.iter().filter_map(|m| m.req).min() {
            self.schedule_arb(b, m);
        }
        self.scratch_ready = ready;
    }

    /// The medium just became busy until `busy_until`: requests falling inside that period
    /// are adjusted to its end (seed 000 §3.3), and each such adjustment is a deferral.
    fn defer_others(&mut self, b: u32, t: u64, except: &[u32]) {
        let bus = &mut self.buses[b as usize];
        let bu = bus.busy_until;
        for (i, m) in bus.macs.iter_mut().enumerate() {
            if except.contains(&(i as u32)) {
                continue;
            }
            if let Some(r) = m.req {
                if r > t && r < bu {
                    m.req = Some(bu);
                    self.counters.bus_deferrals += 1;
                }
            }
        }
    }

    fn bus_end(&mut self, b: u32, now: Time) {
        let bus = &mut self.buses[b as usize];
        let Some(p) = bus.transmitting.take() else {
            return;
        };
        let mac = &mut bus.macs[p as usize];
        mac.attempts = 0;
        let Some(frame) = mac.queue.pop_front() else {
            return;
        };
        let more = !mac.queue.is_empty();
        if more {
            self.mac_ready(b, p);
        }
        let sender = self.net.buses[b as usize].members[p as usize];
        let pk = frame.pkt;
        // Receive events go only to the addressed nodes.
        let mut targets: Vec<(u32, u32, u32)> = Vec::new();
        if frame.t0 != NONE {
            let tr = &self.trees[self.pkts[pk as usize].tree as usize];
            for k in frame.t0..frame.t1 {
                let l = tr.targets[k as usize];
                targets.push((l, tr.node[l as usize], tr.in_iface[l as usize]));
            }
        } else {
            let dest = self.pkts[pk as usize].dest;
            for &m in &self.net.buses[b as usize].members {
                if m != sender && self.addressed(m, dest) {
                    let iface = self.net.ifaces[m as usize]
                        .iter()
                        .position(|f| matches!(f.medium, Medium::Bus { bus, .. } if bus == b))
                        .map_or(NONE, |v| v as u32);
                    targets.push((NONE, m, iface));
                }
            }
        }
        let _ = now;
        for (local, node, iface) in targets {
            self.counters.bus_receive_events += 1;
            let c = self.new_copy(Copy {
                pkt: pk,
                local,
                node,
                iface,
            });
            self.arrive(c);
        }
        self.release(pk);
    }
}

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

mod bus;
mod host;
mod link;
mod local;
mod pool;
mod record;
mod routes;
mod sparse;

pub use host::Traffic;
pub use record::{Counters, LossRecord, NodeMetrics, PacketRecord, RecoveryRecord};

use crate::kernel::Kernel;
use crate::loss::{LossRule, LossSite, LossState};
use crate::network::{Medium, Network, NONE};
use bus::{Buses, Frame};
use core::time::Duration;
use host::{Admit, Host, Source};
use link::{Links, Offer};
use pool::{Copy, Pool};
use record::{Recorder, CAUSE_COLLISIONS, CAUSE_IMPLOSION};
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{
    Agent, Event, GroupId, IfaceId, NodeId, RouteDecision, RouterAgent, Time, Transmit,
};
use rmcast_wire::PacketClass;
use routes::Routes;
use sparse::NodeLists;

/// Errors configuring a simulation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("node {0:?} does not exist")]
    /// A node id the network does not have.
    NoSuchNode(NodeId),
    #[error("link {0} does not exist")]
    /// A link index the network does not have.
    NoSuchLink(usize),
    #[error("node {node:?} is not an end of link {link}")]
    /// A node named as the end of a link it is not on.
    NotOnLink {
        /// The node.
        node: NodeId,
        /// The link.
        link: usize,
    },
    #[error("node {0:?} already has an agent")]
    /// A second agent for one node.
    AgentExists(NodeId),
    #[error("node {0:?} has no agent to feed traffic to")]
    /// Traffic for a node without an agent.
    NoAgent(NodeId),
    #[error("invalid loss model: {0}")]
    /// A loss rule with parameters out of range.
    Loss(String),
    #[error("invalid host model: {0}")]
    /// A host model with parameters out of range.
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
    /// Stop once every source has completed.
    pub fn when_complete() -> Self {
        Stop {
            when_complete: true,
            ..Stop::default()
        }
    }
    /// Stop at `t`.
    pub fn at(t: Time) -> Self {
        Stop {
            until: Some(t),
            ..Stop::default()
        }
    }
    /// The same, and stop at `t` at the latest.
    pub fn until(mut self, t: Time) -> Self {
        self.until = Some(t);
        self
    }
    /// The same, and stop after `n` events at the latest.
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
    /// Every traffic source's agent reported [`Event::Completed`]: the senders' view only. A
    /// NAK-based sender completes when its linger ends and a sender that gives messages or
    /// receivers up completes too, whatever the receivers hold; whether they hold the data is
    /// [`Sim::delivered_everything`].
    pub completed: bool,
    /// Why the run stopped: "complete", "idle", "time_limit" or "event_limit".
    pub reason: &'static str,
}

/// Kernel events.
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

/// A simulation: the event loop over the models — `Links`, `Buses`, hosts, the
/// routing state — with the agents, reporting to one `Recorder`.
pub struct Sim {
    net: Network,
    seed: u64,
    kernel: Kernel<Ev>,
    started: bool,
    agents: Vec<Option<Box<dyn Agent>>>,
    routers: Vec<Option<Box<dyn RouterAgent>>>,
    /// Routers whose agent takes custody of data ([`RouterAgent::custody`]): a run is not
    /// complete while one holds any.
    custodians: Vec<u32>,
    routes: Routes,
    pool: Pool,
    links: Links,
    buses: Buses,
    /// Loss rules on transmit and on receive, per node.
    tx_loss: NodeLists<LossState>,
    rx_loss: NodeLists<LossState>,
    rules: usize,
    hosts: Vec<Host>,
    sources: usize,
    sources_done: usize,
    rec: Recorder,
    scratch_tx: Vec<Transmit>,
}

impl Sim {
    /// A simulation of `net` whose every random choice derives from `seed`.
    pub fn new(net: Network, seed: u64) -> Sim {
        let n = net.nodes.len();
        Sim {
            seed,
            kernel: Kernel::new(),
            started: false,
            agents: (0..n).map(|_| None).collect(),
            routers: (0..n).map(|_| None).collect(),
            custodians: Vec::new(),
            routes: Routes::default(),
            pool: Pool::default(),
            links: Links::new(&net, seed),
            buses: Buses::new(&net, seed),
            tx_loss: NodeLists::default(),
            rx_loss: NodeLists::default(),
            rules: 0,
            hosts: (0..n).map(|_| Host::default()).collect(),
            sources: 0,
            sources_done: 0,
            rec: Recorder::new(n),
            scratch_tx: Vec::new(),
            net,
        }
    }

    /// The network simulated.
    pub fn network(&self) -> &Network {
        &self.net
    }
    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The current simulated time.
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
        self.rec.record_events(on);
    }

    /// Keep events only for `nodes` (e.g. the source of a run with many receivers).
    pub fn record_events_of(&mut self, nodes: &[NodeId]) {
        self.rec.record_events_of(nodes);
    }

    /// Keep the message in each recorded [`Event::Delivered`] (on by default). Off, a
    /// delivery is kept as its sequence number and time with an empty message: a recorded
    /// run with many receivers and long transfers otherwise holds a copy of every block at
    /// every receiver. [`Sim::metrics`] counts the delivered bytes either way.
    pub fn record_payloads(&mut self, on: bool) {
        self.rec.record_payloads(on);
    }

    /// Record every originated packet and every loss (for per-packet records and pcap).
    pub fn enable_trace(&mut self) {
        self.rec.enable_trace();
    }

    /// Run `agent` on `node` (one per node).
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
        if agent.custody().is_some() {
            self.custodians.push(i as u32);
        }
        self.routers[i] = Some(agent);
        Ok(())
    }

    /// Set the static members of `group`.
    pub fn set_group(&mut self, group: GroupId, members: &[NodeId]) -> Result<(), SimError> {
        for &m in members {
            self.check_node(m)?;
        }
        self.routes
            .set_group(group.0, members.iter().map(|m| m.0).collect());
        Ok(())
    }

    /// Add a loss rule.
    pub fn add_loss(&mut self, rule: &LossRule) -> Result<(), SimError> {
        rule.model.validate().map_err(SimError::Loss)?;
        let cause = self.rec.cause(&rule.cause);
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
                    self.links.add_loss(d, st);
                }
            }
            LossSite::Tx { node, .. } => {
                let i = self.check_node(node)?;
                let st = LossState::new(rule, cause, self.seed, ri, u64::from(node.0) << 1);
                self.tx_loss.push(i, st);
            }
            LossSite::Rx { node, .. } => {
                let i = self.check_node(node)?;
                let st = LossState::new(rule, cause, self.seed, ri, (u64::from(node.0) << 1) | 1);
                self.rx_loss.push(i, st);
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
        if self.hosts[i].traffic.is_none() {
            self.sources += 1;
        }
        self.hosts[i].traffic = Some(Box::new(Source::new(spec)));
        Ok(())
    }

    /// Events an agent reported, with the times they were drained (if recording).
    pub fn events(&self, node: NodeId) -> &[(Time, Event)] {
        self.rec.events(node)
    }
    /// What `node`'s agent reported so far.
    pub fn metrics(&self, node: NodeId) -> Option<NodeMetrics> {
        self.rec.metrics(node)
    }
    /// Messages `node`'s [`Traffic`] source has handed to its agent so far (0 without one).
    pub fn messages_offered(&self, node: NodeId) -> u64 {
        let source = self
            .hosts
            .get(node.0 as usize)
            .and_then(|h| h.traffic.as_ref());
        source.map_or(0, |s| s.sent())
    }
    /// Whether each of `receivers` has reported an [`Event::Delivered`] for every message
    /// `source`'s traffic handed to its agent ([`Sim::messages_offered`]; receivers deliver
    /// each message once, in order): the receivers hold all the data, which a sender's
    /// `Completed` does not say.
    pub fn delivered_everything(&self, source: NodeId, receivers: &[NodeId]) -> bool {
        let offered = self.messages_offered(source);
        receivers
            .iter()
            .all(|&r| self.metrics(r).map_or(0, |m| m.delivered) >= offered)
    }
    /// `node`'s agent.
    pub fn agent(&self, node: NodeId) -> Option<&dyn Agent> {
        self.agents.get(node.0 as usize)?.as_deref()
    }
    /// `node`'s router agent.
    pub fn router_agent(&self, node: NodeId) -> Option<&dyn RouterAgent> {
        self.routers.get(node.0 as usize)?.as_deref()
    }
    /// The network-level counters so far.
    pub fn counters(&self) -> &Counters {
        &self.rec.counters
    }
    /// Losses by cause, in a fixed order (built-in causes first, then rule causes in the
    /// order they were added).
    pub fn losses(&self) -> Vec<(String, u64)> {
        self.rec.losses()
    }
    /// Originated packets and losses, if [`Sim::enable_trace`] was called.
    pub fn trace(&self) -> Option<(&[PacketRecord], &[LossRecord])> {
        self.rec.trace()
    }

    /// Every loss an agent detected and when it delivered the missing packet (kept while
    /// tracing is on, see [`Sim::enable_trace`]; empty otherwise).
    pub fn recoveries(&self) -> &[RecoveryRecord] {
        self.rec.recoveries()
    }

    // ---------------------------------------------------------------- running

    /// Run until `stop` says so or nothing is left to do. May be called again to continue.
    pub fn run(&mut self, stop: &Stop) -> Outcome {
        if !self.started {
            self.started = true;
            for i in 0..self.agents.len() {
                if let Some(t) = &self.hosts[i].traffic {
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
            if stop.when_complete
                && self.sources > 0
                && self.sources_done >= self.sources
                && self.custody_released()
            {
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

    /// Whether no router agent holds data in custody.
    fn custody_released(&self) -> bool {
        self.custodians.iter().all(|&i| {
            self.routers[i as usize]
                .as_ref()
                .and_then(|r| r.custody())
                .is_none_or(|n| n == 0)
        })
    }

    fn outcome(&self, reason: &'static str) -> Outcome {
        Outcome {
            end: self.kernel.now(),
            completed: self.sources > 0
                && self.sources_done >= self.sources
                && self.custody_released(),
            reason,
        }
    }

    fn handle(&mut self, now: Time, ev: Ev) {
        match ev {
            Ev::Timer(x) => self.agent_timer(x, now),
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
                if let Some(t) = self.hosts[x as usize].traffic.as_mut() {
                    if let Some(next) = t.tick(now) {
                        self.kernel.schedule(next, Ev::Traffic(x));
                    }
                }
                self.drain(x);
            }
            Ev::LinkArrive(d) => {
                let Some((cp, next)) = self.links.pop(d as usize) else {
                    return;
                };
                if let Some(next) = next {
                    self.kernel
                        .schedule(Time::from_nanos(next), Ev::LinkArrive(d));
                }
                self.arrive(cp);
            }
            Ev::Arrive(c) => {
                let cp = self.pool.take_copy(c);
                self.arrive(cp);
            }
            Ev::Deliver(c) => {
                let cp = self.pool.take_copy(c);
                self.deliver(cp);
            }
            Ev::RxServe(x) => {
                let h = &mut self.hosts[x as usize];
                let (head, next) = h.serve(now);
                let at = h.processed_at(now);
                if let Some(next) = next {
                    self.kernel.schedule(next, Ev::RxServe(x));
                }
                if let Some(c) = head {
                    match at {
                        Some(at) => self.kernel.schedule(at, Ev::Deliver(c)),
                        None => {
                            let cp = self.pool.take_copy(c);
                            self.deliver(cp);
                        }
                    }
                }
            }
            Ev::BusArb(b) => {
                let discarded =
                    self.buses
                        .arbitrate(b, now, &mut self.kernel, &mut self.rec.counters);
                for pk in discarded {
                    let src = self.pool.pkt(pk).src;
                    self.lose(CAUSE_COLLISIONS, pk, src);
                    self.pool.release(pk);
                }
            }
            Ev::BusEnd(b) => self.bus_end(b),
        }
    }

    // ---------------------------------------------------------------- agents

    fn agent_timer(&mut self, x: u32, now: Time) {
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
                    self.rec.counters.stuck_timers += 1;
                    self.hosts[x as usize].timer_at = Some(now + Duration::from_nanos(1));
                    self.kernel
                        .schedule(now + Duration::from_nanos(1), Ev::Timer(x));
                }
            }
        }
        self.drain(x);
    }

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
                if self.rec.event(xi, now, e) && self.hosts[xi].traffic.is_some() {
                    self.sources_done += 1;
                }
            }
            let fed = match self.hosts[xi].traffic.as_mut() {
                Some(t) => t.feed(agent.as_mut(), now),
                None => false,
            };
            if !fed {
                break;
            }
        }
        self.agents[xi] = Some(agent);
        self.rec.sent(xi, out.len());
        for t in out.drain(..) {
            if self.routers[xi].is_some() {
                self.through_router(x, t);
            } else {
                self.originate(x, t, None);
            }
        }
        self.scratch_tx = out;
        let next = self.agents[xi].as_ref().and_then(|a| a.poll_timeout());
        let h = &mut self.hosts[xi];
        let next = match (next, h.lateness.as_mut()) {
            (Some(t), Some(l)) => Some(l.serve_at(t)),
            _ => next,
        };
        let next = match (next, h.timer_at) {
            // A wake-up after `now` is already booked for a deadline that has passed.
            (Some(t), Some(b)) if t <= now && b > now => Some(b),
            _ => next,
        };
        book_wakeup(&mut self.kernel, &mut h.timer_at, next, now, Ev::Timer(x));
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
            let Some(via) = rt.via else {
                self.originate(x, rt.transmit, None);
                continue;
            };
            let (links, to_agent) = local::split_local(&via);
            if to_agent {
                self.hand_to_agent(x, &rt.transmit);
                if links.is_empty() {
                    continue;
                }
            }
            self.originate(x, rt.transmit, Some(&links));
        }
        let now = self.kernel.now();
        let h = &mut self.hosts[xi];
        book_wakeup(
            &mut self.kernel,
            &mut h.router_timer_at,
            next,
            now,
            Ev::RouterTimer(x),
        );
    }

    // ---------------------------------------------------------------- packets

    fn lose(&mut self, cause: u32, pkt: u32, node: u32) {
        let id = self.pool.pkt(pkt).id;
        self.rec.lost(cause, id, self.kernel.now(), node);
    }

    fn originate(&mut self, x: u32, t: Transmit, via: Option<&[u32]>) {
        let (id, class) = self.record_origin(x, &t);
        self.send_from(x, id, class, t, via);
    }

    /// Route the recorded datagram `id` from node `x` (on interfaces `via` only, if given).
    fn send_from(
        &mut self,
        x: u32,
        id: u64,
        class: Option<PacketClass>,
        t: Transmit,
        via: Option<&[u32]>,
    ) {
        // A router agent's group packet pinned to interfaces goes down the group's
        // distribution tree through this router when data has crossed it on one and every
        // pinned interface is a hop of it there; otherwise the router's own tree below
        // those interfaces (`Tree::multicast_via`).
        let pinned = match (t.dest, via) {
            (rmcast_proto::Dest::Group(g), Some(v)) => self.routes.pinned(x, g.0, v),
            _ => None,
        };
        let (tree, start) = match pinned {
            Some(p) => p,
            None => {
                let (tree, start) = self.routes.tree_for(&self.net, x, t.dest, via);
                self.rec.counters.unreachable += u64::from(self.routes.tree(tree).unreachable());
                (tree, start)
            }
        };
        let p = self.pool.insert(id, t.payload, x, t.dest, tree, class);
        self.forward(p, start, x, via);
        self.pool.release(p);
    }

    /// Send packet `p`, sitting at tree node `local` (NONE: off the tree) at node `x`, on the
    /// tree's hops (or only on interfaces `only`).
    fn forward(&mut self, p: u32, local: u32, x: u32, only: Option<&[u32]>) {
        let tree = self.pool.pkt(p).tree;
        let nhops = if local == NONE {
            0
        } else {
            self.routes.tree(tree).hops_of(local).len()
        };
        for h in 0..nhops {
            let hop = self.routes.tree(tree).hops_of(local)[h];
            if only.is_some_and(|o| !o.contains(&hop.iface)) {
                continue;
            }
            self.send_on(p, x, hop.iface, hop.t0, hop.t1);
        }
        if let Some(o) = only {
            for &iface in o {
                let on_tree = local != NONE
                    && self
                        .routes
                        .tree(tree)
                        .hops_of(local)
                        .iter()
                        .any(|h| h.iface == iface);
                if !on_tree && (iface as usize) < self.net.ifaces[x as usize].len() {
                    self.send_on(p, x, iface, NONE, NONE);
                }
            }
        }
    }

    /// Transmit-side loss at `x`, then onto the medium of interface `iface`, towards tree
    /// targets `t0..t1` (NONE: off the tree).
    fn send_on(&mut self, p: u32, x: u32, iface: u32, t0: u32, t1: u32) {
        let class = self.pool.pkt(p).class;
        let dropped = LossState::first_drop(self.tx_loss.get_mut(x as usize), class, iface);
        if let Some(c) = dropped {
            self.lose(c, p, x);
            return;
        }
        let f = self.net.ifaces[x as usize][iface as usize];
        match f.medium {
            Medium::Link { link, dir } => {
                let (local, node, in_iface) = if t0 == NONE {
                    // Off the tree: the peer gets it as an addressed node only.
                    (NONE, f.peer, f.peer_iface)
                } else {
                    self.routes.tree(self.pool.pkt(p).tree).target(t0)
                };
                let d = 2 * link as usize + dir as usize;
                let len = self.pool.pkt(p).payload.len() as u64;
                let now = self.kernel.now().as_nanos();
                let cfg = &self.net.links[d / 2].cfg;
                match self.links.offer(d, cfg, now, len, class, &mut self.rec) {
                    Offer::Lost(cause) => self.lose(cause, p, x),
                    Offer::Sent { arrival, reorder } => {
                        let c = Copy {
                            pkt: p,
                            local,
                            node,
                            iface: in_iface,
                        };
                        if reorder {
                            let c = self.pool.new_copy(c);
                            self.kernel
                                .schedule(Time::from_nanos(arrival), Ev::Arrive(c));
                        } else {
                            // The copy travels in the direction's FIFO, holding its packet.
                            self.pool.hold(p);
                            if self.links.push(d, arrival, c) {
                                self.kernel
                                    .schedule(Time::from_nanos(arrival), Ev::LinkArrive(d as u32));
                            }
                        }
                    }
                }
            }
            Medium::Bus { bus, pos } => {
                let bytes = self.buses.frame_bytes(bus, self.pool.pkt(p).payload.len());
                self.pool.hold(p);
                let frame = Frame {
                    pkt: p,
                    t0,
                    t1,
                    bytes,
                };
                self.buses
                    .enqueue(bus, pos, frame, &mut self.kernel, &mut self.rec.counters);
            }
        }
    }

    /// A copy (holding its packet) reached its node: receive-side loss, router hook,
    /// forwarding, delivery.
    fn arrive(&mut self, cp: Copy) {
        let Copy {
            pkt: p,
            local,
            node: x,
            iface,
        } = cp;
        let class = self.pool.pkt(p).class;
        let dropped = LossState::first_drop(self.rx_loss.get_mut(x as usize), class, iface);
        if let Some(cause) = dropped {
            self.lose(cause, p, x);
            self.pool.release(p);
            return;
        }
        let decision = if let Some(mut r) = self.routers[x as usize].take() {
            let now = self.kernel.now();
            let pk = self.pool.pkt(p);
            if let (rmcast_proto::Dest::Group(g), Some(PacketClass::OriginalData)) =
                (pk.dest, class)
            {
                if local != NONE {
                    self.routes.note_data_tree(x, g.0, pk.tree, local);
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
                self.rec.counters.router_consumed += 1;
                self.pool.release(p);
                return;
            }
            RouteDecision::ForwardOn(ifs) => {
                let (links, to_agent) = local::split_local(&ifs);
                self.forward(p, local, x, Some(&links));
                // The router chose where it goes: to the node's own agent only if `LOCAL` is
                // among them (a PGM repair its receiver asked for, an LMS DREQ for the
                // receiver that is its replier).
                if to_agent {
                    self.admit(cp, class);
                } else {
                    self.pool.release(p);
                }
                return;
            }
        }
        let pk = self.pool.pkt(p);
        let deliver = if local == NONE {
            self.routes.addressed(x, pk.dest)
        } else {
            self.routes.tree(pk.tree).deliver(local)
        };
        if !deliver {
            self.pool.release(p);
            return;
        }
        self.admit(cp, class);
    }

    /// A copy (holding its packet) for its node's agent: through the host's receive queue
    /// and processing delay, if it has them.
    fn admit(&mut self, cp: Copy, class: Option<PacketClass>) {
        let (p, x) = (cp.pkt, cp.node);
        let now = self.kernel.now();
        let host = &mut self.hosts[x as usize];
        if host.rxq.is_none() && host.proc_delay == 0 {
            // Straight to the agent (what `Host::admit` says for a host without a receive
            // queue or processing delay), without parking the copy in the pool.
            self.deliver(cp);
            return;
        }
        let c = self.pool.store_copy(cp);
        match self.hosts[x as usize].admit(c, class, now) {
            Admit::Now => {
                let cp = self.pool.take_copy(c);
                self.deliver(cp);
            }
            Admit::After(at) => self.kernel.schedule(at, Ev::Deliver(c)),
            Admit::Queued(Some(at)) => self.kernel.schedule(at, Ev::RxServe(x)),
            Admit::Queued(None) => {}
            Admit::Full => {
                self.lose(CAUSE_IMPLOSION, p, x);
                self.pool.free_copy(c);
            }
        }
    }

    /// A copy (holding its packet) reaches its node's agent.
    fn deliver(&mut self, cp: Copy) {
        let Copy {
            pkt: p, node: x, ..
        } = cp;
        let xi = x as usize;
        match self.agents[xi].as_mut() {
            Some(a) => {
                let pk = self.pool.pkt(p);
                a.handle_packet_bytes(self.kernel.now(), NodeId(pk.src), &pk.payload);
                self.rec.delivered(xi);
                self.pool.release(p);
                self.drain(x);
            }
            None => {
                self.rec.counters.no_agent += 1;
                self.pool.release(p);
            }
        }
    }

    /// A bus transmission ended: receive events go to the frame's addressed nodes only.
    fn bus_end(&mut self, b: u32) {
        let Some((frame, pos)) = self.buses.end(b, &mut self.kernel, &mut self.rec.counters) else {
            return;
        };
        let bus = &self.net.buses[b as usize];
        let sender = bus.members[pos as usize];
        let pk = frame.pkt;
        let mut targets: Vec<(u32, u32, u32)> = Vec::new();
        if frame.t0 != NONE {
            let tr = self.routes.tree(self.pool.pkt(pk).tree);
            targets.extend((frame.t0..frame.t1).map(|k| tr.target(k)));
        } else {
            let dest = self.pool.pkt(pk).dest;
            for &m in &bus.members {
                if m != sender && self.routes.addressed(m, dest) {
                    let iface = self.net.ifaces[m as usize]
                        .iter()
                        .position(|f| matches!(f.medium, Medium::Bus { bus, .. } if bus == b))
                        .map_or(NONE, |v| v as u32);
                    targets.push((NONE, m, iface));
                }
            }
        }
        for (local, node, iface) in targets {
            self.rec.counters.bus_receive_events += 1;
            self.pool.hold(pk);
            self.arrive(Copy {
                pkt: pk,
                local,
                node,
                iface,
            });
        }
        self.pool.release(pk);
    }
}

/// Books `ev` for an agent's next deadline `next` (not before `now`) unless `booked`, the
/// wake-up already in the kernel, is that instant; with no deadline, forgets the booking.
fn book_wakeup(
    kernel: &mut Kernel<Ev>,
    booked: &mut Option<Time>,
    next: Option<Time>,
    now: Time,
    ev: Ev,
) {
    match next {
        Some(t) if *booked != Some(t.max(now)) => {
            let t = t.max(now);
            *booked = Some(t);
            kernel.schedule(t, ev);
        }
        Some(_) => {}
        None => *booked = None,
    }
}

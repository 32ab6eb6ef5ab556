//! The static network: nodes (hosts and routers), full-duplex point-to-point links and shared
//! Ethernet buses. Build it in code with [`Network`]'s `add_*` methods or from a topology
//! generator ([`crate::topo`]).

use core::time::Duration;
use rmcast_proto::{IfaceId, NodeId};
use std::sync::Arc;

pub(crate) const NONE: u32 = u32::MAX;

/// What a node is. Hosts run protocol agents; routers forward (and may run a router agent).
/// The simulator does not forbid an agent on a router; the distinction is for generators,
/// member placement and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An end system.
    Host,
    /// A router.
    Router,
}

/// Normally distributed extra delay per packet, never negative (negative draws are clamped
/// to zero) and never reordering a link direction (an arrival is never earlier than the
/// previous arrival on the same direction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jitter {
    /// Mean of the extra delay.
    pub mean: Duration,
    /// Its standard deviation.
    pub sd: Duration,
}

/// One full-duplex point-to-point link. Each direction has its own transmitter and queue.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Bits per second; 0 means infinitely fast (no transmission time).
    pub bandwidth_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// Extra delay per packet (none by default).
    pub jitter: Option<Jitter>,
    /// Packets that may wait behind the one being transmitted (drop-tail); `None` is
    /// unbounded.
    pub queue: Option<usize>,
    /// Free-form class label ("lan", "wan", "transit-stub" …) for loss rules and reports;
    /// shared, as a large network has millions of links of a handful of classes.
    pub class: Arc<str>,
    /// Each packet's jitter is drawn independently and packets may overtake one another on
    /// this link (seed 004's per-packet Normal latency). Off (the default): a direction
    /// never reorders, so an arrival is never earlier than the previous one.
    pub reorder: bool,
}

impl LinkConfig {
    /// Transmission time of `len` bytes on this link, ns (rounded up; 0 on an infinitely
    /// fast link).
    pub fn tx_ns(&self, len: u64) -> u64 {
        if self.bandwidth_bps == 0 {
            0
        } else {
            (len * 8 * 1_000_000_000).div_ceil(self.bandwidth_bps)
        }
    }

    /// A link of `bandwidth_bps` and propagation `delay`: no jitter, unbounded queue, no
    /// class, no reordering.
    pub fn new(bandwidth_bps: u64, delay: Duration) -> Self {
        LinkConfig {
            bandwidth_bps,
            delay,
            jitter: None,
            queue: None,
            class: Arc::from(""),
            reorder: false,
        }
    }
    /// Let packets overtake one another (independent per-packet jitter).
    pub fn reordering(mut self, on: bool) -> Self {
        self.reorder = on;
        self
    }
    /// The same link with Normal jitter (`mean`, `sd`).
    pub fn jitter(mut self, mean: Duration, sd: Duration) -> Self {
        self.jitter = Some(Jitter { mean, sd });
        self
    }
    /// The same link with a drop-tail queue of `packets`.
    pub fn queue(mut self, packets: usize) -> Self {
        self.queue = Some(packets);
        self
    }
    /// The same link labelled `c`.
    pub fn class(mut self, c: impl Into<Arc<str>>) -> Self {
        self.class = c.into();
        self
    }
    /// Delay used for shortest-path routing: propagation plus mean jitter.
    pub(crate) fn routing_delay_ns(&self) -> u64 {
        let j = self.jitter.map_or(0, |j| j.mean.as_nanos() as u64);
        (self.delay.as_nanos() as u64).saturating_add(j)
    }
}

/// The backoff rule after a collision on a bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    /// Binary exponential backoff (seed 000 §3.2): after the i-th collision of a frame wait
    /// k slots with k uniform in `[0, 2^min(i,10)]` (`inclusive: true`, the thesis's literal
    /// wording "between 0 and 2^min(i,10)") or `[0, 2^min(i,10) - 1]` (`inclusive: false`,
    /// IEEE 802.3).
    Exponential {
        /// `[0, 2^min(i,10)]` (true) or `[0, 2^min(i,10) - 1]` (false).
        inclusive: bool,
    },
    /// Always wait this many slots (for analysis and tests: two stations with `Fixed` backoff
    /// collide on every attempt).
    Fixed {
        /// Slots to wait.
        slots: u64,
    },
}

/// The shared Ethernet bus of seed 000 §3. Time is counted in bit times
/// (`1e9 / bandwidth_bps` ns, which must be a whole number of nanoseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct BusConfig {
    /// 10 Mb/s by default (bit time 100 ns).
    pub bandwidth_bps: u64,
    /// Smallest frame in bytes (64).
    pub min_frame: usize,
    /// Bytes added to each datagram to make a frame (0 by default, so a 1518-byte datagram is
    /// a 1518-byte frame as in the thesis, and a 21-byte ACK is padded to 64 bytes).
    pub overhead: usize,
    /// Backoff slot in bit times (512).
    pub slot_bits: u64,
    /// Cost of a collision in bit times (32, "always the maximum collision window").
    pub jam_bits: u64,
    /// A frame is discarded when this many attempts have collided (16).
    pub max_attempts: u32,
    /// The backoff rule (inclusive binary exponential by default).
    pub backoff: Backoff,
    /// Frames sent at the same instant collide (true, CSMA/CD). False is an analysis bus
    /// with ideal arbitration, as behind a token or a switch: of the stations ready at once
    /// one, chosen at random, transmits and the others defer to its end; nothing collides
    /// and nobody backs off.
    pub collisions: bool,
}

impl Default for BusConfig {
    fn default() -> Self {
        BusConfig {
            bandwidth_bps: 10_000_000,
            min_frame: 64,
            overhead: 0,
            slot_bits: 512,
            jam_bits: 32,
            max_attempts: 16,
            backoff: Backoff::Exponential { inclusive: true },
            collisions: true,
        }
    }
}

impl BusConfig {
    /// Frame size in bytes for a datagram of `len` bytes.
    pub fn frame_bytes(&self, len: usize) -> usize {
        (len + self.overhead).max(self.min_frame)
    }
    pub(crate) fn bit_ns(&self) -> u64 {
        1_000_000_000 / self.bandwidth_bps.max(1)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: NodeKind,
    pub pos: (f64, f64),
}

#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub a: u32,
    pub b: u32,
    /// Shared with the links added before it with the same configuration (a large network
    /// has millions of access links alike).
    pub cfg: Arc<LinkConfig>,
}

#[derive(Debug, Clone)]
pub(crate) struct Bus {
    pub members: Vec<u32>,
    pub cfg: BusConfig,
}

/// A node's attachment to a medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Medium {
    /// Direction `dir` (0: a→b, 1: b→a) of link `link`; the sending side's view.
    Link { link: u32, dir: u8 },
    /// Position `pos` in bus `bus`'s member list.
    Bus { bus: u32, pos: u32 },
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Iface {
    pub medium: Medium,
    /// The node at the other end (links only).
    pub peer: u32,
    /// The peer's interface on the same link (links only; `NONE` on a bus).
    pub peer_iface: u32,
}

/// Errors building a network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error("node {0:?} does not exist")]
    /// A node id the network does not have.
    NoSuchNode(NodeId),
    #[error("a link cannot connect node {0:?} to itself")]
    /// A link from a node to itself.
    SelfLoop(NodeId),
    #[error("a bus needs at least two distinct nodes")]
    /// A bus with fewer than two distinct nodes.
    BusTooSmall,
    #[error("bus bandwidth {0} b/s does not give a whole number of nanoseconds per bit")]
    /// A bus bandwidth whose bit time is not a whole number of nanoseconds.
    BusBandwidth(u64),
}

/// How routing chooses among paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RoutingMetric {
    /// Least delay (propagation plus mean jitter), then fewest hops: what a link-state
    /// protocol with delay costs computes.
    #[default]
    Delay,
    /// Fewest hops, then least delay: ns-2's default (every link costs 1 unless a script
    /// sets costs), so the routes of studies run in ns-2 on generated graphs.
    Hops,
}

/// A hop's cost under [`RoutingMetric::Hops`]: 2^40 ns (about 18 minutes), more than any
/// path's delay, so a path's cost orders paths by hop count first and its remainder modulo
/// this is the path's delay.
const HOP_COST: u64 = 1 << 40;

impl RoutingMetric {
    /// What a hop adds to a path's cost besides its delay.
    pub(crate) fn hop_cost(self) -> u64 {
        match self {
            RoutingMetric::Delay => 0,
            RoutingMetric::Hops => HOP_COST,
        }
    }

    /// The delay part of a path's cost (the cost itself under [`RoutingMetric::Delay`]).
    pub(crate) fn delay_of(self, cost: u64) -> u64 {
        match self {
            RoutingMetric::Delay => cost,
            RoutingMetric::Hops => cost % HOP_COST,
        }
    }
}

/// The network: nodes, links, buses and every node's interfaces (numbered in the order they
/// were attached; these are the `IfaceId`s router agents see).
#[derive(Debug, Clone, Default)]
pub struct Network {
    pub(crate) nodes: Vec<Node>,
    pub(crate) links: Vec<Link>,
    pub(crate) buses: Vec<Bus>,
    pub(crate) ifaces: Vec<Vec<Iface>>,
    pub(crate) routing: RoutingMetric,
}

impl Network {
    /// An empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a node at the origin.
    pub fn add_node(&mut self, kind: NodeKind) -> NodeId {
        self.add_node_at(kind, (0.0, 0.0))
    }

    /// Add a node at a position on the plane (generators use it for distance-based delays).
    pub fn add_node_at(&mut self, kind: NodeKind, pos: (f64, f64)) -> NodeId {
        self.nodes.push(Node { kind, pos });
        self.ifaces.push(Vec::new());
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// Make room for `nodes` more nodes and `links` more links, exactly: a generator that
    /// knows its size spares the network the doubling of its largest arrays.
    pub fn reserve(&mut self, nodes: usize, links: usize) {
        self.nodes.reserve_exact(nodes);
        self.ifaces.reserve_exact(nodes);
        self.links.reserve_exact(links);
    }

    /// Add a host.
    pub fn add_host(&mut self) -> NodeId {
        self.add_node(NodeKind::Host)
    }

    /// Add a router.
    pub fn add_router(&mut self) -> NodeId {
        self.add_node(NodeKind::Router)
    }

    fn check(&self, n: NodeId) -> Result<(), NetError> {
        if (n.0 as usize) < self.nodes.len() {
            Ok(())
        } else {
            Err(NetError::NoSuchNode(n))
        }
    }

    /// Connect `a` and `b` with a full-duplex link; returns the link's index.
    pub fn add_link(&mut self, a: NodeId, b: NodeId, cfg: LinkConfig) -> Result<usize, NetError> {
        self.check(a)?;
        self.check(b)?;
        if a == b {
            return Err(NetError::SelfLoop(a));
        }
        let link = self.links.len() as u32;
        let cfg = match self.links.last() {
            Some(l) if *l.cfg == cfg => Arc::clone(&l.cfg),
            _ => Arc::new(cfg),
        };
        self.links.push(Link {
            a: a.0,
            b: b.0,
            cfg,
        });
        let ia = self.ifaces[a.0 as usize].len() as u32;
        let ib = self.ifaces[b.0 as usize].len() as u32;
        // A node's first interface gets a list of one (a host has no other); the list grows
        // as usual after that.
        for n in [a.0, b.0] {
            let l = &mut self.ifaces[n as usize];
            if l.capacity() == 0 {
                l.reserve_exact(1);
            }
        }
        self.ifaces[a.0 as usize].push(Iface {
            medium: Medium::Link { link, dir: 0 },
            peer: b.0,
            peer_iface: ib,
        });
        self.ifaces[b.0 as usize].push(Iface {
            medium: Medium::Link { link, dir: 1 },
            peer: a.0,
            peer_iface: ia,
        });
        Ok(link as usize)
    }

    /// Attach `nodes` to a new shared bus; returns the bus's index.
    pub fn add_bus(&mut self, nodes: &[NodeId], cfg: BusConfig) -> Result<usize, NetError> {
        let mut members: Vec<u32> = Vec::with_capacity(nodes.len());
        for &n in nodes {
            self.check(n)?;
            if !members.contains(&n.0) {
                members.push(n.0);
            }
        }
        if members.len() < 2 {
            return Err(NetError::BusTooSmall);
        }
        if cfg.bandwidth_bps == 0 || 1_000_000_000 % cfg.bandwidth_bps != 0 {
            return Err(NetError::BusBandwidth(cfg.bandwidth_bps));
        }
        let bus = self.buses.len() as u32;
        for (pos, &n) in members.iter().enumerate() {
            self.ifaces[n as usize].push(Iface {
                medium: Medium::Bus {
                    bus,
                    pos: pos as u32,
                },
                peer: NONE,
                peer_iface: NONE,
            });
        }
        self.buses.push(Bus { members, cfg });
        Ok(bus as usize)
    }

    /// Nodes in the network.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
    /// Links in the network.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }
    /// Buses in the network.
    pub fn bus_count(&self) -> usize {
        self.buses.len()
    }
    /// What node `n` is.
    pub fn kind(&self, n: NodeId) -> Option<NodeKind> {
        self.nodes.get(n.0 as usize).map(|x| x.kind)
    }
    /// Where node `n` is on the plane.
    pub fn position(&self, n: NodeId) -> Option<(f64, f64)> {
        self.nodes.get(n.0 as usize).map(|x| x.pos)
    }
    /// Nodes of a kind, in id order.
    pub fn nodes_of(&self, kind: NodeKind) -> Vec<NodeId> {
        (0..self.nodes.len() as u32)
            .filter(|&i| self.nodes[i as usize].kind == kind)
            .map(NodeId)
            .collect()
    }
    /// Link `i`: its two ends and configuration.
    pub fn link(&self, i: usize) -> Option<(NodeId, NodeId, &LinkConfig)> {
        self.links
            .get(i)
            .map(|l| (NodeId(l.a), NodeId(l.b), &*l.cfg))
    }
    /// Bus `i`'s members.
    pub fn bus_members(&self, i: usize) -> Option<Vec<NodeId>> {
        self.buses
            .get(i)
            .map(|b| b.members.iter().map(|&n| NodeId(n)).collect())
    }
    /// Bus `i`'s configuration (its rate and frame sizes).
    pub fn bus_config(&self, i: usize) -> Option<&BusConfig> {
        self.buses.get(i).map(|b| &b.cfg)
    }
    /// Number of interfaces of a node.
    pub fn degree(&self, n: NodeId) -> usize {
        self.ifaces.get(n.0 as usize).map_or(0, Vec::len)
    }
    /// Neighbours over point-to-point links, with the interface used.
    pub fn neighbors(&self, n: NodeId) -> Vec<(IfaceId, NodeId)> {
        self.ifaces
            .get(n.0 as usize)
            .map(|v| {
                v.iter()
                    .enumerate()
                    .filter(|(_, f)| f.peer != NONE)
                    .map(|(i, f)| (IfaceId(i as u32), NodeId(f.peer)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Route by `metric` (the default is [`RoutingMetric::Delay`]).
    pub fn set_routing(&mut self, metric: RoutingMetric) {
        self.routing = metric;
    }

    /// The metric routes are chosen by.
    pub fn routing(&self) -> RoutingMetric {
        self.routing
    }

    /// What routing adds for crossing a link of `cfg`: its routing delay, plus a hop's cost
    /// under [`RoutingMetric::Hops`].
    pub(crate) fn link_cost(&self, cfg: &LinkConfig) -> u64 {
        cfg.routing_delay_ns()
            .saturating_add(self.routing.hop_cost())
    }

    /// What routing adds for crossing a bus (zero delay; a hop under
    /// [`RoutingMetric::Hops`]).
    pub(crate) fn bus_cost(&self) -> u64 {
        self.routing.hop_cost()
    }

    /// Give every link direction a drop-tail queue of `packets`.
    pub fn set_link_queues(&mut self, packets: usize) {
        let mut last: Option<Arc<LinkConfig>> = None;
        for l in &mut self.links {
            let mut cfg = (*l.cfg).clone();
            cfg.queue = Some(packets);
            l.cfg = match last.take() {
                Some(p) if *p == cfg => p,
                _ => Arc::new(cfg),
            };
            last = Some(Arc::clone(&l.cfg));
        }
    }
}

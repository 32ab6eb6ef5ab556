//! Topology generators. Each returns a [`Topology`]: the network, a default source, the
//! receiver candidates, and link-class loss rates where the model defines them.
//!
//! **Link delays of generated graphs** (flat random, transit–stub, Waxman) follow GT-ITM's
//! convention: nodes are placed on a plane and a link's propagation delay is proportional
//! to the Euclidean distance between its ends (`delay_per_unit` per unit of distance).
//! These graphs are made of routers; [`attach_hosts`] adds a source and receivers as hosts
//! on randomly chosen routers (seed 003: receivers on internal nodes, on stub nodes only for
//! transit–stub).

use crate::network::{BusConfig, LinkConfig, NetError, Network, NodeKind};
use crate::rng::{tag, SimRng};
use core::time::Duration;
use rmcast_proto::NodeId;

/// Errors generating a topology.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TopoError {
    #[error("{0}")]
    /// Parameters out of range (the message says which).
    Invalid(String),
    #[error("no connected graph after {0} attempts; raise the edge probability")]
    /// No connected graph within the attempts given.
    NotConnected(u32),
    #[error("edge list line {line}: {why}")]
    /// A bad line in an edge-list file.
    EdgeList {
        /// Its number (1-based).
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    #[error(transparent)]
    /// The network refused a node or link.
    Net(#[from] NetError),
}

/// A generated network and its roles.
#[derive(Debug, Clone)]
pub struct Topology {
    /// The network.
    pub net: Network,
    /// The default sender.
    pub source: NodeId,
    /// Receiver hosts (or, before [`attach_hosts`], nothing).
    pub receivers: Vec<NodeId>,
    /// Routers where hosts may be attached.
    pub attach_points: Vec<NodeId>,
    /// Per-link loss probability the model prescribes (seed 004's connection classes).
    pub link_loss: Vec<(usize, f64)>,
}

/// Seed 004 Table 1 connection classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkClass {
    /// LAN connections.
    Lan,
    /// INTERLAN connections.
    Interlan,
    /// WAN connections.
    Wan,
    /// At least ⌊NC/3⌋ of each of the three (assigned LAN, INTERLAN, WAN in turn).
    Hybrid,
}

impl LinkClass {
    /// The class called `s` (case-insensitive).
    pub fn parse(s: &str) -> Option<LinkClass> {
        Some(match s.to_ascii_lowercase().as_str() {
            "lan" => LinkClass::Lan,
            "interlan" => LinkClass::Interlan,
            "wan" => LinkClass::Wan,
            "hybrid" => LinkClass::Hybrid,
            _ => return None,
        })
    }
    /// (mean latency, latency SD, error rate) from seed 004 Table 1.
    pub fn params(self) -> (Duration, Duration, f64) {
        match self {
            LinkClass::Lan => (Duration::from_micros(1500), Duration::from_micros(80), 0.01),
            LinkClass::Interlan => (Duration::from_millis(5), Duration::from_micros(500), 0.01),
            LinkClass::Wan | LinkClass::Hybrid => {
                (Duration::from_millis(75), Duration::from_millis(15), 0.10)
            }
        }
    }
    fn name(self) -> &'static str {
        match self {
            LinkClass::Lan => "lan",
            LinkClass::Interlan => "interlan",
            LinkClass::Wan => "wan",
            LinkClass::Hybrid => "hybrid",
        }
    }
}

/// One sender and `receivers` receivers on one shared Ethernet bus (seed 000). Node 0 is
/// the sender.
pub fn bus(receivers: usize, cfg: BusConfig) -> Result<Topology, TopoError> {
    if receivers == 0 {
        return Err(TopoError::Invalid(
            "a bus needs at least one receiver".into(),
        ));
    }
    let mut net = Network::new();
    let nodes: Vec<NodeId> = (0..=receivers).map(|_| net.add_host()).collect();
    net.add_bus(&nodes, cfg)?;
    Ok(Topology {
        net,
        source: nodes[0],
        receivers: nodes[1..].to_vec(),
        attach_points: Vec::new(),
        link_loss: Vec::new(),
    })
}

/// A star: the sender (node 0) in the middle, `nc` receivers each on its own link of the
/// given class (seed 004; HYBRID: LAN, INTERLAN, WAN in turn). Each link is `link` with the
/// class's latency, Normal(mean, SD) per packet (never negative; FIFO per direction unless
/// `link` lets packets reorder), and labelled with the class's name; the class's error rate
/// is returned in `link_loss`.
pub fn star(nc: usize, class: LinkClass, link: &LinkConfig) -> Result<Topology, TopoError> {
    if nc == 0 || (class == LinkClass::Hybrid && nc < 3) {
        return Err(TopoError::Invalid(
            "a star needs at least 1 child (3 for HYBRID)".into(),
        ));
    }
    let mut net = Network::new();
    let s = net.add_host();
    let mut receivers = Vec::with_capacity(nc);
    let mut link_loss = Vec::with_capacity(nc);
    for i in 0..nc {
        let c = match class {
            LinkClass::Hybrid => [LinkClass::Lan, LinkClass::Interlan, LinkClass::Wan][i % 3],
            c => c,
        };
        let (mean, sd, err) = c.params();
        let r = net.add_host();
        let l = net.add_link(s, r, link.clone().jitter(mean, sd).class(c.name()))?;
        receivers.push(r);
        link_loss.push((l, err));
    }
    Ok(Topology {
        net,
        source: s,
        receivers,
        attach_points: Vec::new(),
        link_loss,
    })
}

/// Seed 001 §7: the source reaches local exchanges (routers) with the given round-trip
/// delays (one-way delay = RTD/2 on the source–exchange link); each exchange serves
/// `per_exchange[i]` destinations over access links of `access_delay`.
pub fn local_exchanges(
    rtds: &[Duration],
    per_exchange: &[usize],
    bandwidth_bps: u64,
    access_delay: Duration,
) -> Result<Topology, TopoError> {
    if rtds.is_empty() || rtds.len() != per_exchange.len() {
        return Err(TopoError::Invalid(format!(
            "need one destination count per exchange: {} RTDs, {} counts",
            rtds.len(),
            per_exchange.len()
        )));
    }
    let mut net = Network::new();
    let s = net.add_host();
    let mut receivers = Vec::new();
    let mut attach = Vec::new();
    for (i, (&rtd, &k)) in rtds.iter().zip(per_exchange).enumerate() {
        let le = net.add_router();
        attach.push(le);
        net.add_link(
            s,
            le,
            LinkConfig::new(bandwidth_bps, rtd / 2).class(format!("backbone{i}")),
        )?;
        for _ in 0..k {
            let e = net.add_host();
            net.add_link(
                le,
                e,
                LinkConfig::new(bandwidth_bps, access_delay).class("access"),
            )?;
            receivers.push(e);
        }
    }
    Ok(Topology {
        net,
        source: s,
        receivers,
        attach_points: attach,
        link_loss: Vec::new(),
    })
}

/// A dumbbell: a left router and a right router joined by one `bottleneck` link (class
/// `"bottleneck"`); on the left the source (node 2) and a spare host (node 3), on the right a
/// spare host (node 4) and `receivers` receivers (nodes 5, 6, …), each host on its own
/// `access` link (class `"access"`). Nodes 0 and 1 are the left and right routers. The spare
/// hosts carry no agent unless a scenario's `[cross]` flow puts one there (node 3 to node 4:
/// a second flow through the same bottleneck).
pub fn dumbbell(
    receivers: usize,
    bottleneck: LinkConfig,
    access: &LinkConfig,
) -> Result<Topology, TopoError> {
    if receivers == 0 {
        return Err(TopoError::Invalid(
            "a dumbbell needs at least one receiver".into(),
        ));
    }
    let mut net = Network::new();
    let left = net.add_router();
    let right = net.add_router();
    net.add_link(left, right, bottleneck.class("bottleneck"))?;
    let access = access.clone().class("access");
    let host = |net: &mut Network, at: NodeId| -> Result<NodeId, TopoError> {
        let h = net.add_host();
        net.add_link(at, h, access.clone())?;
        Ok(h)
    };
    let source = host(&mut net, left)?;
    host(&mut net, left)?;
    host(&mut net, right)?;
    let receivers = (0..receivers)
        .map(|_| host(&mut net, right))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Topology {
        net,
        source,
        receivers,
        attach_points: vec![left, right],
        link_loss: Vec::new(),
    })
}

/// Spread `total` destinations over `exchanges` as evenly as possible, larger counts first
/// (25 over 6 gives 5, 4, 4, 4, 4, 4).
pub fn spread(total: usize, exchanges: usize) -> Vec<usize> {
    if exchanges == 0 {
        return Vec::new();
    }
    (0..exchanges)
        .map(|i| total / exchanges + usize::from(i < total % exchanges))
        .collect()
}

/// A complete binary tree of height `h`: the sender at the root, routers inside, 2^h
/// receiver hosts at the leaves; every link alike.
pub fn binary_tree(h: u32, link: LinkConfig) -> Result<Topology, TopoError> {
    check_height(h)?;
    let mut net = Network::new();
    let root = net.add_host();
    let receivers = grow_binary(&mut net, root, h, &link)?;
    Ok(Topology {
        net,
        source: root,
        receivers,
        attach_points: Vec::new(),
        link_loss: Vec::new(),
    })
}

/// Seed 003's binary trees: a complete binary tree of routers whose root sits one link below
/// the source host, with `2^h` receiver hosts at depth `h` below the root (every link alike).
/// Node 0 is the root router, node 1 the source; link 0 joins them.
pub fn binary_tree_under_source(h: u32, link: LinkConfig) -> Result<Topology, TopoError> {
    check_height(h)?;
    let mut net = Network::new();
    let root = net.add_node(NodeKind::Router);
    let source = net.add_node(NodeKind::Host);
    net.add_link(source, root, link.clone())?;
    let receivers = grow_binary(&mut net, root, h, &link)?;
    Ok(Topology {
        net,
        source,
        receivers,
        attach_points: Vec::new(),
        link_loss: Vec::new(),
    })
}

fn check_height(h: u32) -> Result<(), TopoError> {
    if h == 0 || h > 24 {
        return Err(TopoError::Invalid(format!(
            "binary tree height must be in 1..=24, got {h}"
        )));
    }
    Ok(())
}

/// Two children per node for `h` levels below `root` (routers, hosts at the last level);
/// returns the leaves.
fn grow_binary(
    net: &mut Network,
    root: NodeId,
    h: u32,
    link: &LinkConfig,
) -> Result<Vec<NodeId>, TopoError> {
    let mut level = vec![root];
    for d in 1..=h {
        let mut next = Vec::with_capacity(level.len() * 2);
        for &p in &level {
            for _ in 0..2 {
                let c = net.add_node(if d == h {
                    NodeKind::Host
                } else {
                    NodeKind::Router
                });
                net.add_link(p, c, link.clone())?;
                next.push(c);
            }
        }
        level = next;
    }
    Ok(level)
}

/// Parameters shared by the plane-based graph generators.
#[derive(Debug, Clone)]
pub struct PlaneParams {
    /// Side of the square plane nodes are placed on.
    pub scale: f64,
    /// Propagation delay per unit of distance.
    pub delay_per_unit: Duration,
    /// Bandwidth of every link.
    pub bandwidth_bps: u64,
    /// Attempts at drawing a connected graph before giving up.
    pub attempts: u32,
}

impl Default for PlaneParams {
    fn default() -> Self {
        PlaneParams {
            scale: 100.0,
            delay_per_unit: Duration::from_micros(100),
            bandwidth_bps: 1_500_000,
            attempts: 1000,
        }
    }
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

fn plane_link(p: &PlaneParams, a: (f64, f64), b: (f64, f64), class: &str) -> LinkConfig {
    let d = dist(a, b);
    let ns = (d * p.delay_per_unit.as_nanos() as f64).round().max(0.0) as u64;
    LinkConfig::new(p.bandwidth_bps, Duration::from_nanos(ns)).class(class)
}

/// Points on the plane and the edges between them.
type Graph = (Vec<(f64, f64)>, Vec<(usize, usize)>);

/// Draw a random graph on `n` points; `edge(i, j, d, rng)` decides each pair.
fn random_graph(
    n: usize,
    offset: (f64, f64),
    scale: f64,
    rng: &mut SimRng,
    attempts: u32,
    mut edge: impl FnMut(f64, &mut SimRng) -> bool,
) -> Result<Graph, TopoError> {
    for _ in 0..attempts.max(1) {
        let pts: Vec<(f64, f64)> = (0..n)
            .map(|_| (offset.0 + rng.unit() * scale, offset.1 + rng.unit() * scale))
            .collect();
        let mut edges = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if edge(dist(pts[i], pts[j]), rng) {
                    edges.push((i, j));
                }
            }
        }
        if connected(n, &edges) {
            return Ok((pts, edges));
        }
    }
    Err(TopoError::NotConnected(attempts))
}

fn connected(n: usize, edges: &[(usize, usize)]) -> bool {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut comps = n;
    for &(a, b) in edges {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent[ra] = rb;
            comps -= 1;
        }
    }
    comps <= 1
}

fn check_prob(name: &str, p: f64) -> Result<(), TopoError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(TopoError::Invalid(format!(
            "{name} must be a probability in [0, 1], got {p}"
        )))
    }
}

/// GT-ITM-style flat random graph: `n` routers on the plane, each pair linked with
/// probability `p`; redrawn until connected.
pub fn flat_random(
    n: usize,
    p: f64,
    params: &PlaneParams,
    seed: u64,
) -> Result<Topology, TopoError> {
    check_prob("p", p)?;
    flat_graph(n, params, (seed, 1), ("random", "random"), |_, r| {
        r.chance(p)
    })
}

/// A domain's routers and their points on the plane.
type Domain = (Vec<NodeId>, Vec<(f64, f64)>);

/// Add to `net` `n` routers drawn in the square (corner, side) and linked where
/// `edge(distance, rng)` says (links labelled `class`), redrawn until connected: the routers
/// and their points.
fn add_domain(
    net: &mut Network,
    params: &PlaneParams,
    rng: &mut SimRng,
    n: usize,
    (corner, side): ((f64, f64), f64),
    class: &str,
    edge: impl FnMut(f64, &mut SimRng) -> bool,
) -> Result<Domain, TopoError> {
    let (pts, edges) = random_graph(n, corner, side, rng, params.attempts, edge)?;
    let ids: Vec<NodeId> = pts
        .iter()
        .map(|&q| net.add_node_at(NodeKind::Router, q))
        .collect();
    for (a, b) in edges {
        net.add_link(ids[a], ids[b], plane_link(params, pts[a], pts[b], class))?;
    }
    Ok((ids, pts))
}

/// `n` (at least 2) routers drawn on the plane and linked where `edge(distance, rng)` says
/// (links labelled `class`), redrawn until connected; router 0 is the source, every router
/// an attach point. The flat random and Waxman graphs differ only in `edge`, in the stream
/// `salt` of the topology's random numbers, and in the `name` an error gives the graph.
fn flat_graph(
    n: usize,
    params: &PlaneParams,
    (seed, salt): (u64, u64),
    (name, class): (&str, &str),
    edge: impl FnMut(f64, &mut SimRng) -> bool,
) -> Result<Topology, TopoError> {
    if n < 2 {
        return Err(TopoError::Invalid(format!("a {name} graph needs n >= 2")));
    }
    let mut rng = SimRng::new(seed, tag::TOPOLOGY, salt, n as u64);
    let mut net = Network::new();
    let square = ((0.0, 0.0), params.scale);
    let (ids, _) = add_domain(&mut net, params, &mut rng, n, square, class, edge)?;
    Ok(Topology {
        net,
        source: ids[0],
        receivers: Vec::new(),
        attach_points: ids,
        link_loss: Vec::new(),
    })
}

/// Waxman graph: `n` routers on the plane, pair (u, v) linked with probability
/// `alpha · exp(−d(u,v) / (beta · L))`, L the largest possible distance; redrawn until
/// connected.
pub fn waxman(
    n: usize,
    alpha: f64,
    beta: f64,
    params: &PlaneParams,
    seed: u64,
) -> Result<Topology, TopoError> {
    check_prob("alpha", alpha)?;
    if !(beta > 0.0 && beta.is_finite()) {
        return Err(TopoError::Invalid(format!("beta must be > 0, got {beta}")));
    }
    let l = params.scale * std::f64::consts::SQRT_2;
    flat_graph(n, params, (seed, 2), ("Waxman", "waxman"), |d, r| {
        r.chance(alpha * (-d / (beta * l)).exp())
    })
}

/// GT-ITM transit–stub parameters (seed 003 used 1 × 4 transit nodes, 3 stub domains per
/// transit node, 8 nodes per stub domain: 1 × 4 × (1 + 3 × 8) = 100 nodes).
#[derive(Debug, Clone)]
pub struct TransitStub {
    /// Transit domains.
    pub transit_domains: usize,
    /// Nodes per transit domain.
    pub transit_nodes: usize,
    /// Stub domains per transit node.
    pub stubs_per_transit: usize,
    /// Nodes per stub domain.
    pub stub_nodes: usize,
    /// Edge probabilities inside a transit domain and inside a stub domain.
    pub p_transit: f64,
    /// See `p_transit`.
    pub p_stub: f64,
}

impl Default for TransitStub {
    fn default() -> Self {
        TransitStub {
            transit_domains: 1,
            transit_nodes: 4,
            stubs_per_transit: 3,
            stub_nodes: 8,
            p_transit: 0.6,
            p_stub: 0.4,
        }
    }
}

/// GT-ITM-style transit–stub graph. Transit domains are random graphs spread over the whole
/// plane and chained together (domain i to i+1 by their first nodes); every transit node
/// has `stubs_per_transit` stub domains, each a connected random graph placed in a small
/// square near its transit node and joined to it by one link from a random stub node. Link
/// classes: "transit-transit", "transit-stub", "stub-stub".
pub fn transit_stub(
    ts: &TransitStub,
    params: &PlaneParams,
    seed: u64,
) -> Result<Topology, TopoError> {
    check_prob("p_transit", ts.p_transit)?;
    check_prob("p_stub", ts.p_stub)?;
    if ts.transit_domains == 0 || ts.transit_nodes == 0 || ts.stub_nodes == 0 {
        return Err(TopoError::Invalid(
            "transit domains, transit nodes and stub nodes must be >= 1".into(),
        ));
    }
    let mut rng = SimRng::new(seed, tag::TOPOLOGY, 3, 0);
    let mut net = Network::new();
    let mut stubs = Vec::new();
    let mut first_of_domain = Vec::new();
    let stub_scale = params.scale / 10.0;
    for _ in 0..ts.transit_domains {
        let (tids, pts) = add_domain(
            &mut net,
            params,
            &mut rng,
            ts.transit_nodes,
            ((0.0, 0.0), params.scale),
            "transit-transit",
            |_, r| r.chance(ts.p_transit),
        )?;
        first_of_domain.push((tids[0], pts[0]));
        for (ti, &t) in tids.iter().enumerate() {
            for _ in 0..ts.stubs_per_transit {
                let off = (
                    pts[ti].0 + (rng.unit() - 0.5) * stub_scale,
                    pts[ti].1 + (rng.unit() - 0.5) * stub_scale,
                );
                let (sids, spts) = add_domain(
                    &mut net,
                    params,
                    &mut rng,
                    ts.stub_nodes,
                    (off, stub_scale),
                    "stub-stub",
                    |_, r| r.chance(ts.p_stub),
                )?;
                let gw = rng.below(ts.stub_nodes as u64) as usize;
                net.add_link(
                    t,
                    sids[gw],
                    plane_link(params, pts[ti], spts[gw], "transit-stub"),
                )?;
                stubs.extend(sids);
            }
        }
    }
    for w in first_of_domain.windows(2) {
        let ((a, pa), (b, pb)) = (w[0], w[1]);
        net.add_link(a, b, plane_link(params, pa, pb, "transit-transit"))?;
    }
    let source = stubs.first().copied().unwrap_or(NodeId(0));
    Ok(Topology {
        net,
        source,
        receivers: Vec::new(),
        attach_points: stubs,
        link_loss: Vec::new(),
    })
}

/// Read an edge list: one link per line, `a b [delay_ms [bandwidth_bps]]`, node ids from 0,
/// `#` starts a comment. Nodes are routers; the scenario names which carry agents.
pub fn edge_list(text: &str, default: &LinkConfig) -> Result<Topology, TopoError> {
    let mut edges = Vec::new();
    let mut max = 0u32;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |why: String| TopoError::EdgeList { line: i + 1, why };
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 2 || f.len() > 4 {
            return Err(err(format!(
                "expected `a b [delay_ms [bandwidth_bps]]`, got {} fields",
                f.len()
            )));
        }
        let node = |s: &str| {
            s.parse::<u32>()
                .ok()
                .filter(|&v| v < 10_000_000)
                .ok_or_else(|| err(format!("`{s}` is not a node id (0..10000000)")))
        };
        let (a, b) = (node(f[0])?, node(f[1])?);
        if a == b {
            return Err(err(format!("self-loop on node {a}")));
        }
        let mut cfg = default.clone();
        if let Some(d) = f.get(2) {
            let ms: f64 = d
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| err(format!("`{d}` is not a delay in ms (>= 0)")))?;
            cfg.delay = Duration::from_nanos((ms * 1e6).round() as u64);
        }
        if let Some(bw) = f.get(3) {
            cfg.bandwidth_bps = bw
                .parse()
                .map_err(|_| err(format!("`{bw}` is not a bandwidth in b/s")))?;
        }
        max = max.max(a).max(b);
        edges.push((a, b, cfg));
    }
    if edges.is_empty() {
        return Err(TopoError::EdgeList {
            line: 0,
            why: "no edges".into(),
        });
    }
    let mut net = Network::new();
    let ids: Vec<NodeId> = (0..=max).map(|_| net.add_router()).collect();
    for (a, b, cfg) in edges {
        net.add_link(ids[a as usize], ids[b as usize], cfg)?;
    }
    Ok(Topology {
        net,
        source: ids[0],
        receivers: ids[1..].to_vec(),
        attach_points: ids,
        link_loss: Vec::new(),
    })
}

/// Attach a source host and `receivers` receiver hosts to random attach points (without
/// repetition while there are enough points, then cycling through a shuffled order), each
/// over a link `host_link`. Replaces `source` and `receivers`.
pub fn attach_hosts(
    topo: &mut Topology,
    receivers: usize,
    host_link: &LinkConfig,
    seed: u64,
) -> Result<(), TopoError> {
    if topo.attach_points.is_empty() {
        return Err(TopoError::Invalid(
            "this topology has no routers to attach hosts to".into(),
        ));
    }
    let mut rng = SimRng::new(seed, tag::MEMBERS, 0, 0);
    let mut order = topo.attach_points.clone();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut hosts = Vec::with_capacity(receivers + 1);
    let host_link = host_link.clone().class("host");
    topo.net.reserve(receivers + 1, receivers + 1);
    for k in 0..=receivers {
        let at = order[k % order.len()];
        let pos = topo.net.position(at).unwrap_or((0.0, 0.0));
        let h = topo.net.add_node_at(NodeKind::Host, pos);
        topo.net.add_link(h, at, host_link.clone())?;
        hosts.push(h);
    }
    topo.source = hosts[0];
    topo.receivers = hosts[1..].to_vec();
    Ok(())
}

/// Attach the source and `receivers` receiver hosts, each over its own `host_link` (class
/// "host"), to attach points drawn uniformly at random *with* replacement (seed 003 §5.6:
/// members "randomly distributed" on the nodes; several may share a router). The source is
/// the first host added.
pub fn attach_hosts_with_replacement(
    topo: &mut Topology,
    receivers: usize,
    host_link: &LinkConfig,
    seed: u64,
) -> Result<(), TopoError> {
    let points = topo.attach_points.clone();
    if points.is_empty() {
        return Err(TopoError::Invalid(
            "this topology has no routers to attach hosts to".into(),
        ));
    }
    let mut rng = SimRng::new(seed, tag::PLACE_WITH_REPLACEMENT, 0, 0);
    let mut hosts = Vec::with_capacity(receivers + 1);
    let host_link = host_link.clone().class("host");
    topo.net.reserve(receivers + 1, receivers + 1);
    for _ in 0..=receivers {
        let at = points[rng.below(points.len() as u64) as usize];
        let h = topo.net.add_node(NodeKind::Host);
        topo.net.add_link(h, at, host_link.clone())?;
        hosts.push(h);
    }
    topo.source = hosts[0];
    topo.receivers = hosts[1..].to_vec();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_structure() {
        let t = bus(5, BusConfig::default()).unwrap();
        assert_eq!(t.net.node_count(), 6);
        assert_eq!(t.net.bus_count(), 1);
        assert_eq!(t.net.bus_members(0).unwrap().len(), 6);
        assert_eq!(t.receivers.len(), 5);
        assert!(bus(0, BusConfig::default()).is_err());
    }

    #[test]
    fn star_classes_follow_seed_004_table_1() {
        let t = star(
            10,
            LinkClass::Hybrid,
            &LinkConfig::new(10_000_000, Duration::ZERO),
        )
        .unwrap();
        assert_eq!(t.net.link_count(), 10);
        let mut counts = std::collections::BTreeMap::new();
        for i in 0..10 {
            let (a, _, cfg) = t.net.link(i).unwrap();
            assert_eq!(a, t.source);
            *counts.entry(cfg.class.clone()).or_insert(0) += 1;
        }
        assert!(counts.values().all(|&c| c >= 10 / 3), "{counts:?}");
        assert_eq!(counts.len(), 3);
        let wan = t.net.link(2).unwrap().2;
        assert_eq!(&*wan.class, "wan");
        assert_eq!(wan.jitter.unwrap().mean, Duration::from_millis(75));
        assert_eq!(wan.jitter.unwrap().sd, Duration::from_millis(15));
        assert_eq!(t.link_loss[2], (2, 0.10));
        let lan = star(4, LinkClass::Lan, &LinkConfig::new(0, Duration::ZERO)).unwrap();
        assert!(lan.link_loss.iter().all(|&(_, p)| p == 0.01));
        assert!(star(2, LinkClass::Hybrid, &LinkConfig::new(0, Duration::ZERO)).is_err());
    }

    #[test]
    fn local_exchanges_seed_001() {
        let rtds: Vec<Duration> = [10, 25, 30, 40, 50, 60]
            .iter()
            .map(|&m| Duration::from_millis(m))
            .collect();
        let per = spread(25, 6);
        assert_eq!(per, vec![5, 4, 4, 4, 4, 4]);
        let t = local_exchanges(&rtds, &per, 150_000_000, Duration::ZERO).unwrap();
        assert_eq!(t.receivers.len(), 25);
        assert_eq!(t.attach_points.len(), 6);
        assert_eq!(t.net.node_count(), 1 + 6 + 25);
        // Source–exchange links carry half the round-trip delay.
        let (_, le, cfg) = t.net.link(0).unwrap();
        assert_eq!(cfg.delay, Duration::from_millis(5));
        assert_eq!(t.net.kind(le), Some(NodeKind::Router));
        assert!(local_exchanges(&rtds, &[1, 2], 0, Duration::ZERO).is_err());
    }

    #[test]
    fn binary_tree_structure() {
        let t = binary_tree(5, LinkConfig::new(0, Duration::from_millis(1))).unwrap();
        assert_eq!(t.receivers.len(), 32);
        assert_eq!(t.net.node_count(), 63);
        assert_eq!(t.net.link_count(), 62);
        assert!(t.receivers.iter().all(|&r| t.net.degree(r) == 1));
        assert_eq!(t.net.degree(t.source), 2);
        assert!(t.net.is_connected());
    }

    #[test]
    fn flat_random_is_connected_reproducible_and_distance_delayed() {
        let p = PlaneParams::default();
        let a = flat_random(30, 0.15, &p, 7).unwrap();
        let b = flat_random(30, 0.15, &p, 7).unwrap();
        assert!(a.net.is_connected());
        assert_eq!(a.net.link_count(), b.net.link_count());
        for i in 0..a.net.link_count() {
            let (x, y, cfg) = a.net.link(i).unwrap();
            let d = dist(a.net.position(x).unwrap(), a.net.position(y).unwrap());
            let want = (d * p.delay_per_unit.as_nanos() as f64).round() as u128;
            assert_eq!(cfg.delay.as_nanos(), want);
        }
        // Edge density is about p.
        let pairs = 30.0 * 29.0 / 2.0;
        let density = a.net.link_count() as f64 / pairs;
        assert!((0.08..0.25).contains(&density), "{density}");
        assert!(matches!(
            flat_random(
                30,
                0.0,
                &PlaneParams {
                    attempts: 3,
                    ..p.clone()
                },
                1
            ),
            Err(TopoError::NotConnected(3))
        ));
    }

    #[test]
    fn waxman_prefers_short_links() {
        let p = PlaneParams::default();
        let t = waxman(60, 0.9, 0.15, &p, 3).unwrap();
        assert!(t.net.is_connected());
        let mean_link: f64 = (0..t.net.link_count())
            .map(|i| {
                let (x, y, _) = t.net.link(i).unwrap();
                dist(t.net.position(x).unwrap(), t.net.position(y).unwrap())
            })
            .sum::<f64>()
            / t.net.link_count() as f64;
        // Random pairs on a 100×100 square are ~52 apart on average.
        assert!(mean_link < 40.0, "{mean_link}");
    }

    #[test]
    fn transit_stub_has_100_nodes_and_three_link_classes() {
        let t = transit_stub(&TransitStub::default(), &PlaneParams::default(), 11).unwrap();
        assert_eq!(t.net.node_count(), 100);
        assert_eq!(t.attach_points.len(), 96);
        assert!(t.net.is_connected());
        let mut classes = std::collections::BTreeMap::new();
        for i in 0..t.net.link_count() {
            *classes
                .entry(t.net.link(i).unwrap().2.class.clone())
                .or_insert(0) += 1;
        }
        // One gateway link per stub domain.
        assert_eq!(classes["transit-stub"], 12);
        assert!(classes["stub-stub"] >= 12 * 7);
        assert!(classes["transit-transit"] >= 3);
    }

    #[test]
    fn edge_list_import_and_errors() {
        let t = edge_list(
            "# a ring\n0 1 2.5\n1 2\n2 0 1 1000000\n",
            &LinkConfig::new(0, Duration::from_millis(1)),
        )
        .unwrap();
        assert_eq!(t.net.node_count(), 3);
        assert_eq!(t.net.link(0).unwrap().2.delay, Duration::from_micros(2500));
        assert_eq!(t.net.link(2).unwrap().2.bandwidth_bps, 1_000_000);
        let e = edge_list("0 1\n1 x\n", &LinkConfig::new(0, Duration::ZERO)).unwrap_err();
        assert!(matches!(e, TopoError::EdgeList { line: 2, .. }), "{e}");
        assert!(edge_list("3 3\n", &LinkConfig::new(0, Duration::ZERO)).is_err());
        assert!(edge_list("", &LinkConfig::new(0, Duration::ZERO)).is_err());
    }

    #[test]
    fn hosts_attach_to_distinct_points_first() {
        let mut t = transit_stub(&TransitStub::default(), &PlaneParams::default(), 2).unwrap();
        let before = t.net.node_count();
        attach_hosts(&mut t, 50, &LinkConfig::new(0, Duration::from_millis(1)), 9).unwrap();
        assert_eq!(t.net.node_count(), before + 51);
        assert_eq!(t.receivers.len(), 50);
        let mut points: Vec<NodeId> = t
            .receivers
            .iter()
            .map(|&r| t.net.neighbors(r)[0].1)
            .collect();
        points.sort();
        points.dedup();
        assert_eq!(points.len(), 50);
        assert!(t.net.is_connected());
    }
}

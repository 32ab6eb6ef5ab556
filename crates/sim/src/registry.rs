//! The protocol registry: how a scenario's `[protocol]` table becomes agents. It is built from
//! the one protocol table, `rmcast_proto::protocols::PROTOCOLS` ([`registry`], [`lookup`]):
//! a family laid out on a `Layout` goes through `SimSite`, the one adapter (the scenario's
//! values, the layout from the simulator's shortest-path trees, the roles installed), seed
//! 001's regions through `build_tree`; `unreliable` is the simulator's own baseline.

use crate::params::{Params, ScenarioError};
use crate::scheme::Scheme;
use crate::sim::Sim;
use core::time::Duration;
use rmcast_proto::deploy::{
    Deploy, DeployError, Layout, Needs, Placement, Roles, RouterSite, Routers, Site,
};
use rmcast_proto::protocols::{Deployer, ProtocolDef, PROTOCOLS};
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{lms, norm, pgm, srm, Agent, GroupId, IfaceId, NodeId};
use std::collections::BTreeMap;

/// What a protocol builder gets.
pub struct BuildCtx<'a> {
    /// The simulator to attach agents (and router agents, extra groups) to.
    pub sim: &'a mut Sim,
    /// The data source.
    pub source: NodeId,
    /// The receivers.
    pub receivers: &'a [NodeId],
    /// The data's multicast group.
    pub group: GroupId,
    /// The protocol's name (its registry entry's and spec's).
    pub name: &'static str,
    /// The `[protocol]` table (without `name`); read it with the typed getters, which
    /// produce errors naming the key.
    pub params: &'a Params,
}

impl BuildCtx<'_> {
    /// Attach `agent` at `node`; a refusal (no such node, one there already) is an error of
    /// the scenario's protocol `name`.
    pub fn add(&mut self, node: NodeId, agent: Box<dyn Agent>) -> Result<(), ScenarioError> {
        self.sim
            .add_agent(node, agent)
            .map_err(|e| self.params.bad("name", &e.to_string()))
    }

    /// Attach a family's deployment ([`install`]); a refusal is an error of the scenario's
    /// protocol `name`.
    pub fn install(&mut self, d: impl Deploy) -> Result<(), ScenarioError> {
        install(self.sim, d).map_err(|e| self.params.bad("name", &e.to_string()))
    }

    /// Attach `sender` at the source, then `receiver(r, rng)` at every receiver `r` in order,
    /// `rng` being `r`'s agent stream 0.
    pub fn add_group(
        &mut self,
        sender: Box<dyn Agent>,
        mut receiver: impl FnMut(NodeId, AgentRng) -> Box<dyn Agent>,
    ) -> Result<(), ScenarioError> {
        self.add(self.source, sender)?;
        for &r in self.receivers {
            let rng = self.sim.agent_rng(r, 0);
            self.add(r, receiver(r, rng))?;
        }
        Ok(())
    }
}

/// A protocol the simulator builds from a scenario: a row of the one protocol table
/// ([`rmcast_proto::protocols::PROTOCOLS`]; its name, accepted keys, defaults and ranges come
/// from the row's spec), or `unreliable`, the simulator's own baseline (no spec, no keys).
#[derive(Debug, Clone, Copy)]
pub enum ProtocolEntry {
    /// A protocol of the table.
    Def(&'static ProtocolDef),
    /// The simulator's unreliable baseline.
    Unreliable,
}

impl ProtocolEntry {
    /// Its name in scenario files (the spec's name).
    pub fn name(&self) -> &'static str {
        match self {
            ProtocolEntry::Def(d) => d.name,
            ProtocolEntry::Unreliable => "unreliable",
        }
    }

    /// Parameter keys it accepts (others are rejected as unknown): the spec's scenario keys.
    pub fn keys(&self) -> Vec<&'static str> {
        match self {
            ProtocolEntry::Def(d) => d.scenario_keys().collect(),
            ProtocolEntry::Unreliable => Vec::new(),
        }
    }

    /// Attach its agents for one run: a family laid out on a [`Layout`] through the one
    /// adapter (`SimSite`), seed 001's regions through `build_tree`.
    pub fn build(&self, cx: &mut BuildCtx<'_>) -> Result<(), ScenarioError> {
        match self {
            ProtocolEntry::Unreliable => build_unreliable(cx),
            ProtocolEntry::Def(d) => match d.deploy {
                Deployer::Layout(lay_out) => {
                    let mut site = SimSite { cx, kept: None };
                    lay_out(&mut site).map_err(|e| match site.kept.take() {
                        Some(kept) => kept,
                        None => site.cx.params.bad(&e.key, &e.what),
                    })
                }
                Deployer::Regions(variant) => build_tree(cx, variant),
            },
        }
    }
}

/// Every protocol the simulator can build from a scenario: the table's, then `unreliable`.
pub fn registry() -> impl Iterator<Item = ProtocolEntry> {
    PROTOCOLS
        .iter()
        .map(ProtocolEntry::Def)
        .chain(core::iter::once(ProtocolEntry::Unreliable))
}

/// The registered protocol called `name`.
pub fn lookup(name: &str) -> Option<ProtocolEntry> {
    registry().find(|p| p.name() == name)
}

use rmcast_proto::spec::{self, ms, Range, Value};

/// Typed reads of the protocol's parameters: the scenario's value, or the spec's default when
/// the key is absent, checked against the spec row's range (errors name the key).
impl BuildCtx<'_> {
    /// The spec row of `key`.
    fn param(&self, key: &str) -> Result<&'static spec::Param, ScenarioError> {
        let name = self.name;
        rmcast_proto::protocols::lookup(name)
            .and_then(|s| s.param(key))
            .ok_or_else(|| {
                self.params
                    .bad(key, &format!("a parameter of {name} (not in its spec)"))
            })
    }

    /// `key` as a number.
    fn real(&self, key: &str) -> Result<f64, ScenarioError> {
        let (p, q) = (self.params, self.param(key)?);
        let default = q.default.real().unwrap_or(0.0);
        match q.range {
            Range::Real { min, max } => p.f64_in(key, default, min, max),
            Range::Int { min, max } => p.f64_in(key, default, min as f64, max as f64),
            _ => Err(p.bad(key, "a number")),
        }
    }

    /// `key`, a number of milliseconds, as a duration.
    fn ms(&self, key: &str) -> Result<Duration, ScenarioError> {
        self.real(key).map(ms)
    }

    /// `key` as an integer.
    fn int(&self, key: &str) -> Result<u64, ScenarioError> {
        let (p, q) = (self.params, self.param(key)?);
        match (q.range, q.default) {
            (Range::Int { min, max }, Value::Int(d)) => p.u64_in(key, d, min, max),
            _ => Err(p.bad(key, "an integer")),
        }
    }

    /// `key` as a number, `default` when the scenario does not give it (derived from the
    /// topology rather than the spec's value), checked against the spec row's range.
    fn real_or(&self, key: &str, default: f64) -> Result<f64, ScenarioError> {
        match self.param(key)?.range {
            Range::Real { min, max } => self.params.f64_in(key, default, min, max),
            Range::Int { min, max } => self.params.f64_in(key, default, min as f64, max as f64),
            _ => Err(self.params.bad(key, "a number")),
        }
    }

    /// The word `key`.
    fn word(&self, key: &str) -> Result<String, ScenarioError> {
        match self.param(key)?.default {
            Value::Word(d) => self.params.str_or(key, d),
            _ => Err(self.params.bad(key, "a word")),
        }
    }
}

fn build_unreliable(cx: &mut BuildCtx<'_>) -> Result<(), ScenarioError> {
    let sender = Box::new(crate::unreliable::Sender::new(cx.source, cx.group));
    cx.add_group(sender, |_, _| Box::new(crate::unreliable::Receiver::new()))
}

// ------------------------------------------------------------------ seed 003: srm, pgm, lms

/// One-way shortest-path distances (routing delay, ns) from `root` to every node, along the
/// simulator's own shortest-path tree; `None` for unreachable nodes.
pub(crate) fn spt_distances(
    net: &crate::Network,
    root: NodeId,
) -> (crate::routing::Spt, Vec<Option<u64>>) {
    let spt = crate::routing::Spt::compute(net, root.0);
    let n = net.nodes.len();
    let mut dist: Vec<Option<u64>> = vec![None; n];
    if let Some(d) = dist.get_mut(root.0 as usize) {
        *d = Some(0);
    }
    for v in 0..n {
        fill_down(&spt, &mut dist, v, |c, d| {
            d.saturating_add(up_link(net, &spt, c).map_or(0, |l| l.routing_delay_ns()))
        });
    }
    (spt, dist)
}

/// The link from `c`'s parent on `spt` down to `c` (`None` for the root, or a bus).
fn up_link<'a>(
    net: &'a crate::Network,
    spt: &crate::routing::Spt,
    c: u32,
) -> Option<&'a crate::LinkConfig> {
    use crate::network::Medium;
    let p = *spt.parent.get(c as usize)?;
    let f = net
        .ifaces
        .get(p as usize)?
        .get(*spt.down_iface.get(c as usize)? as usize)?;
    match f.medium {
        Medium::Link { link, .. } => Some(&net.links[link as usize].cfg),
        Medium::Bus { .. } => None,
    }
}

/// Give `v` and the nodes above it on `spt` a value in `memo`: walk up from `v` to the
/// nearest node with a known value, then fill in on the way back, each node's value
/// `step(node, its parent's value)`. Nothing when no node above `v` has a value.
fn fill_down<T: Copy>(
    spt: &crate::routing::Spt,
    memo: &mut [Option<T>],
    v: usize,
    mut step: impl FnMut(u32, T) -> T,
) {
    let mut path = Vec::new();
    let mut x = v as u32;
    while memo[x as usize].is_none() {
        let p = spt.parent[x as usize];
        if p == crate::network::NONE {
            break;
        }
        path.push(x);
        x = p;
    }
    let Some(mut value) = memo[x as usize] else {
        return;
    };
    for &c in path.iter().rev() {
        value = step(c, value);
        memo[c as usize] = Some(value);
    }
}

/// A scenario's `[protocol]` table as parameter values: each key's value checked against its
/// spec row's range, or the row's default when the key is absent.
struct Scenario<'a>(&'a Params);

impl spec::Values for Scenario<'_> {
    type Error = ScenarioError;
    fn value(&mut self, q: &'static spec::Param) -> Result<Value, ScenarioError> {
        let p = self.0;
        match (q.range, q.default) {
            (Range::Real { min, max }, d) => p
                .f64_in(q.key, d.real().unwrap_or(0.0), min, max)
                .map(Value::Real),
            (Range::Int { min, max }, Value::Int(d)) => {
                p.u64_in(q.key, d, min, max).map(Value::Int)
            }
            (Range::Bool, Value::Bool(d)) => p.bool_or(q.key, d).map(Value::Bool),
            (Range::Choice(words), Value::Word(d)) => {
                let w = p.str_or(q.key, d)?;
                match words.iter().find(|&&x| x == w) {
                    Some(&x) => Ok(Value::Word(x)),
                    None => Err(p.bad(q.key, &spec::one_of(words))),
                }
            }
            _ => Err(p.bad(q.key, "a value of its spec's kind")),
        }
    }
    fn given(&mut self, q: &'static spec::Param) -> Result<Option<Value>, ScenarioError> {
        let p = self.0;
        if !p.has(q.key) {
            return Ok(None);
        }
        match q.range {
            Range::Real { min, max } => p.f64_in(q.key, 0.0, min, max).map(Value::Real),
            Range::Int { min, max } => p.u64_in(q.key, 0, min, max).map(Value::Int),
            Range::Bool => p.bool_or(q.key, false).map(Value::Bool),
            Range::Choice(words) => {
                let w = p.str_or(q.key, "")?;
                match words.iter().find(|&&x| x == w) {
                    Some(&x) => Ok(Value::Word(x)),
                    None => Err(p.bad(q.key, &spec::one_of(words))),
                }
            }
        }
        .map(Some)
    }
    fn bad(&self, key: &str, what: &str) -> ScenarioError {
        self.0.bad(key, what)
    }
}

/// The simulator's [`Site`]: the one adapter for every family laid out on a [`Layout`]. The
/// parameters are the scenario's (each checked against its spec row; a scenario error is
/// kept to be returned as it is), the layout is filled with what the family needs from the
/// simulator's shortest-path trees, and the roles attach to the simulator.
struct SimSite<'c, 'a> {
    cx: &'c mut BuildCtx<'a>,
    kept: Option<ScenarioError>,
}

impl SimSite<'_, '_> {
    fn keep(&mut self, key: &str, e: ScenarioError) -> DeployError {
        let d = DeployError::new(key, e.to_string());
        self.kept.get_or_insert(e);
        d
    }
}

impl spec::Values for SimSite<'_, '_> {
    type Error = DeployError;
    fn value(&mut self, q: &'static spec::Param) -> Result<Value, DeployError> {
        Scenario(self.cx.params)
            .value(q)
            .map_err(|e| self.keep(q.key, e))
    }
    fn given(&mut self, q: &'static spec::Param) -> Result<Option<Value>, DeployError> {
        Scenario(self.cx.params)
            .given(q)
            .map_err(|e| self.keep(q.key, e))
    }
    fn bad(&self, key: &str, what: &str) -> DeployError {
        DeployError::new(key, what)
    }
}

impl Site for SimSite<'_, '_> {
    fn place(&mut self, needs: Needs) -> Placement {
        let (source, receivers) = (self.cx.source, self.cx.receivers);
        let net = self.cx.sim.network();
        let mut members = vec![source];
        members.extend_from_slice(receivers);
        Placement {
            source,
            group: self.cx.group,
            receivers: receivers.to_vec(),
            routers: match needs.routers {
                Routers::None => Vec::new(),
                Routers::All => all_routers(net),
                Routers::AllWithDownstream => tree_routers(net, source, receivers, true),
            },
            parents: if needs.parents {
                tree_parents(net, source)
            } else {
                Vec::new()
            },
            distances: needs.distances.then(|| member_distances(net, &members)),
        }
    }
    fn rng(&mut self, node: NodeId, stream: u64) -> AgentRng {
        self.cx.sim.agent_rng(node, stream)
    }
    fn attach(&mut self, roles: Roles) -> Result<(), DeployError> {
        install_roles(self.cx.sim, roles).map_err(|e| DeployError::new("name", e.to_string()))
    }
}

/// Every node's parent on `source`'s shortest-path tree, by node index (`None`: the source,
/// or a node it does not reach).
pub fn tree_parents(net: &crate::Network, source: NodeId) -> Vec<Option<NodeId>> {
    crate::routing::Spt::compute(net, source.0)
        .parent
        .iter()
        .map(|&x| (x != crate::network::NONE).then_some(NodeId(x)))
        .collect()
}

/// Attach every role of a family's deployment to `sim`: its groups, router agents and host
/// agents, each agent's RNG the simulator's stream for its node.
pub fn install(sim: &mut Sim, d: impl Deploy) -> Result<(), crate::SimError> {
    let roles = d.roles(&mut |node, stream| sim.agent_rng(node, stream));
    install_roles(sim, roles)
}

/// Attach built roles to `sim`: their groups, router agents and host agents.
pub fn install_roles(sim: &mut Sim, roles: Roles) -> Result<(), crate::SimError> {
    for (g, members) in &roles.groups {
        sim.set_group(*g, members)?;
    }
    for (node, agent) in roles.routers {
        sim.add_router_agent(node, agent)?;
    }
    for (node, agent) in roles.hosts {
        sim.add_agent(node, agent)?;
    }
    Ok(())
}

/// Every router of `net` as a layout site, nothing known below it (PGM's network elements).
pub fn all_routers(net: &crate::Network) -> Vec<RouterSite> {
    net.nodes_of(crate::NodeKind::Router)
        .into_iter()
        .map(RouterSite::new)
        .collect()
}

/// Routers as layout sites with their interfaces leading down `source`'s tree to
/// `receivers` ([`lms_replier_candidates`]): every router of `net` (`all`; empty below those
/// no receiver is under) or only those above a receiver, in node order.
pub fn tree_routers(
    net: &crate::Network,
    source: NodeId,
    receivers: &[NodeId],
    all: bool,
) -> Vec<RouterSite> {
    let mut below = lms_replier_candidates(net, source, receivers);
    net.nodes_of(crate::NodeKind::Router)
        .into_iter()
        .filter_map(|node| match below.remove(&node) {
            Some(downstream) => Some(RouterSite { node, downstream }),
            None => all.then(|| RouterSite::new(node)),
        })
        .collect()
}

/// One-way distances along the simulator's shortest paths from each of `members` to every
/// member it reaches (SRM's distances from the topology: one shortest-path tree per member).
pub fn member_distances(
    net: &crate::Network,
    members: &[NodeId],
) -> Vec<BTreeMap<NodeId, Duration>> {
    members
        .iter()
        .map(|&m| {
            let (_, dist) = spt_distances(net, m);
            members
                .iter()
                .filter_map(|&o| {
                    dist.get(o.0 as usize)
                        .copied()
                        .flatten()
                        .map(|d| (o, Duration::from_nanos(d)))
                })
                .collect()
        })
        .collect()
}

/// Attach seed-003 `scheme` on `layout` with the spec's defaults but what the scheme names:
/// adaptive timers or repliers, and for SRM's `topo` variants distances from the layout and
/// no session messages.
pub fn install_scheme(
    sim: &mut Sim,
    scheme: Scheme,
    layout: &Layout<'_>,
) -> Result<(), crate::SimError> {
    match scheme {
        Scheme::Srm { adaptive, topo } => {
            let mut p = srm::Params {
                adaptive,
                ..srm::Params::default()
            };
            if topo {
                p.distances = srm::Distances::Topology;
                p.session_interval = None;
            }
            install(sim, srm::deploy(layout, &p))
        }
        Scheme::Pgm => install(sim, pgm::deploy(layout, &pgm::Params::default())),
        Scheme::Norm => install(sim, norm::deploy(layout, &norm::Params::default())),
        Scheme::Lms | Scheme::LmsAdaptive => {
            let mut p = lms::Params::default();
            if scheme == Scheme::LmsAdaptive {
                p.replier = lms::Replier::Adaptive;
            }
            install(sim, lms::deploy(layout, &p))
        }
    }
}

/// A node's place in the simulator's shortest-path tree rooted at some node (see
/// [`source_tree`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeNode {
    /// Parent toward the root and the index of the link to it (`None` for the root).
    pub up: Option<(NodeId, usize)>,
    /// One-way routing delay (propagation, plus mean jitter) from the root, nanoseconds.
    pub dist_ns: u64,
    /// Hops from the root.
    pub hops: u32,
}

/// The shortest-path tree the simulator routes `root`'s multicast packets on (the same
/// Dijkstra and tie-breaking): one entry per node, `None` for nodes `root` cannot reach.
/// Studies use it to place losses on tree links and to compute round-trip times.
pub fn source_tree(net: &crate::Network, root: NodeId) -> Vec<Option<TreeNode>> {
    use crate::network::{Medium, NONE};
    let (spt, dist) = spt_distances(net, root);
    let mut out: Vec<Option<TreeNode>> = vec![None; net.nodes.len()];
    // Hops follow parents; nodes are filled root-first by walking up with memoisation.
    let mut hops: Vec<Option<u32>> = vec![None; net.nodes.len()];
    if let Some(h) = hops.get_mut(root.0 as usize) {
        *h = Some(0);
    }
    for v in 0..net.nodes.len() {
        let Some(d) = dist[v] else { continue };
        // `v` is reachable, so the walk up ends at a node with a hop count (the root's is 0).
        fill_down(&spt, &mut hops, v, |_, h| h + 1);
        let p = spt.parent[v];
        let up = (p != NONE)
            .then(|| {
                net.ifaces
                    .get(p as usize)
                    .and_then(|f| f.get(spt.down_iface[v] as usize))
                    .and_then(|f| match f.medium {
                        Medium::Link { link, .. } => Some((NodeId(p), link as usize)),
                        Medium::Bus { .. } => None,
                    })
            })
            .flatten();
        out[v] = Some(TreeNode {
            up,
            dist_ns: d,
            hops: hops[v].unwrap_or(0),
        });
    }
    out
}

/// Along a shortest-path tree to a node: the transmission time of a packet of `bytes` on
/// every link of the way (ns), and the slowest of those links (`None`: no link, or only
/// infinitely fast ones).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TreePath {
    /// Sum of the links' transmission times of the packet, ns.
    pub tx_ns: u64,
    /// The slowest link's bandwidth, bit/s.
    pub slowest_bps: Option<u64>,
}

/// [`TreePath`] from the root of `spt` to every node (the default for nodes it cannot reach).
pub(crate) fn tree_paths(
    net: &crate::Network,
    spt: &crate::routing::Spt,
    bytes: u64,
) -> Vec<TreePath> {
    let mut memo: Vec<Option<TreePath>> = vec![None; net.nodes.len()];
    if let Some(r) = memo.get_mut(spt.root as usize) {
        *r = Some(TreePath::default());
    }
    for v in 0..memo.len() {
        fill_down(spt, &mut memo, v, |c, above| match up_link(net, spt, c) {
            Some(l) => TreePath {
                tx_ns: above.tx_ns.saturating_add(l.tx_ns(bytes)),
                slowest_bps: match (
                    above.slowest_bps,
                    (l.bandwidth_bps > 0).then_some(l.bandwidth_bps),
                ) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                },
            },
            None => above,
        });
    }
    memo.into_iter().map(Option::unwrap_or_default).collect()
}

/// LMS replier candidates: at every router on the source's tree, each downstream interface
/// that leads to a receiver, with the distance to the closest receiver behind it (sorted by
/// interface).
pub fn lms_replier_candidates(
    net: &crate::Network,
    source: NodeId,
    receivers: &[NodeId],
) -> BTreeMap<NodeId, Vec<(IfaceId, Duration)>> {
    use crate::network::NONE;
    let (spt, dist) = spt_distances(net, source);
    let mut best: BTreeMap<NodeId, BTreeMap<IfaceId, Duration>> = BTreeMap::new();
    for &r in receivers {
        let Some(Some(dr)) = dist.get(r.0 as usize).copied() else {
            continue;
        };
        let mut child = r.0;
        while let Some(&a) = spt.parent.get(child as usize) {
            if a == NONE {
                break;
            }
            let da = dist[a as usize].unwrap_or(0);
            let d = Duration::from_nanos(dr.saturating_sub(da));
            best.entry(NodeId(a))
                .or_default()
                .entry(IfaceId(spt.down_iface[child as usize]))
                .and_modify(|e| *e = (*e).min(d))
                .or_insert(d);
            child = a;
        }
    }
    best.into_iter()
        .map(|(x, c)| (x, c.into_iter().collect()))
        .collect()
}

// ------------------------------------------------------------------- seed 001: dsp, csp, cp

/// The largest round trip inside a region, ns, from one-way delays from the source (ns) of its
/// exchange and its endpoints: through the exchange between its two farthest endpoints, or
/// (`at_router`: DSP's designated sits at the exchange) between the exchange and its farthest
/// endpoint. `rmcast testbed` hands the sockets the same value (`--local-rtd-ms`).
pub fn region_round_trip(exchange: u64, endpoints: &[u64], at_router: bool) -> u64 {
    let mut ow: Vec<u64> = endpoints
        .iter()
        .map(|m| m.saturating_sub(exchange))
        .collect();
    ow.sort_unstable_by(|a, b| b.cmp(a));
    let far = ow.first().copied().unwrap_or(0);
    let next = if at_router {
        0
    } else {
        ow.get(1).copied().unwrap_or(0)
    };
    2 * (far + next)
}

/// Seed 001's roles on any topology: a region is the set of receivers sharing a parent (their
/// local exchange) on the source's shortest-path tree, and DSP's designated endpoint is the
/// region's receiver closest to the source (ties: lowest id). CSP and CP need that parent to
/// be a router. The window `L` is `window` blocks, or `window_rtd` (default 2, Figures 9-12)
/// x the largest RTD in blocks.
///
/// Seed 001 states its delays and rate for its own network (150 Mb/s everywhere); elsewhere
/// they come from the topology. An RTD is twice a block's one-way delay: the tree's routing
/// delay plus the block's transmission on each link (on a 1.5 Mb/s link a 1 KB block takes
/// 5.6 ms a hop, which propagation alone leaves out; the way back is taken at the same cost,
/// an upper bound for a status). Where the
/// scenario does not give them, the source's peak rate `rate_mbps` is the spec's 150 Mb/s or
/// the slowest link to a receiver if that is slower, and the round trip inside a region
/// `local_rtd_ms` the largest between two endpoints of a region through their exchange
/// (DSP's designated at the exchange: between it and an endpoint), the same way. With the
/// spec's 150 Mb/s and 1 ms on the default binary tree of 1.5 Mb/s, 10 ms links, the
/// statuses of an L of 2,840 blocks filled the links and dsp took 68 s and 162,000
/// duplicates for 2 s of data.
fn build_tree(
    cx: &mut BuildCtx<'_>,
    variant: rmcast_proto::tree::Variant,
) -> Result<(), ScenarioError> {
    use rmcast_proto::tree::{deploy, Region, Settings, Variant};
    let p = cx.params;
    let relay = match cx.word("designated")?.as_str() {
        "receiver" => false,
        "relay" => true,
        _ => return Err(p.bad("designated", "\"receiver\" or \"relay\"")),
    };
    // csp and cp have no designated receiver: the key is checked, not used.
    let at_router = variant == Variant::Dsp && relay;
    let block = cx.real("block_bytes")? as usize;
    let block_datagram = block + 32;
    let (spt, dist) = spt_distances(cx.sim.network(), cx.source);
    let down = tree_paths(cx.sim.network(), &spt, block_datagram as u64);
    // One way from the source to `n`: routing delay and a block's transmission on each link.
    let one_way = |n: NodeId| {
        let i = n.0 as usize;
        dist.get(i)
            .copied()
            .flatten()
            .unwrap_or(0)
            .saturating_add(down.get(i).map_or(0, |p| p.tx_ns))
    };
    let rtd_of = |n: NodeId| Duration::from_nanos(2 * one_way(n));
    let mut regions: Vec<Region> = Vec::new();
    for &r in cx.receivers {
        let parent = spt.parent.get(r.0 as usize).copied();
        let Some(x) = parent.filter(|&x| x != crate::network::NONE).map(NodeId) else {
            return Err(p.bad(
                "name",
                &format!("receiver {r:?} is unreachable from the source"),
            ));
        };
        if (variant != Variant::Dsp || at_router)
            && cx.sim.network().kind(x) != Some(crate::NodeKind::Router)
        {
            return Err(p.bad(
                "name",
                "csp, cp and dsp with designated = \"relay\" need every receiver behind a router",
            ));
        }
        match regions.iter_mut().find(|g| g.exchange == x) {
            Some(g) => g.endpoints.push(r),
            None => regions.push(Region {
                exchange: x,
                endpoints: vec![r],
                rtd_exchange: rtd_of(x),
                rtd_endpoints: Vec::new(),
            }),
        }
    }
    for g in &mut regions {
        g.endpoints.sort_by_key(|&m| (rtd_of(m), m.0));
        g.rtd_endpoints = g.endpoints.iter().map(|&m| rtd_of(m)).collect();
    }
    let slowest_bps = cx
        .receivers
        .iter()
        .filter_map(|r| down.get(r.0 as usize).and_then(|p| p.slowest_bps))
        .min();
    let rate_mbps = match slowest_bps {
        Some(bps) => cx.real_or(
            "rate_mbps",
            rmcast_proto::tree::spec::RATE_MBPS.min(bps as f64 / 1e6),
        )?,
        None => cx.real("rate_mbps")?,
    };
    let mut s = Settings::new(variant, 1);
    s.rate_bps = (rate_mbps * 1e6) as u64;
    s.block_datagram = block_datagram;
    let max_rtd = cx
        .receivers
        .iter()
        .map(|&r| rtd_of(r))
        .max()
        .unwrap_or_default();
    s.l = match p.opt_u64("window")? {
        Some(w) => w.clamp(1, 1 << 20) as u32,
        None => {
            let w = cx.real("window_rtd")?;
            let ipt = s.ipt().as_secs_f64().max(1e-12);
            ((w * max_rtd.as_secs_f64() / ipt).round() as u32).max(1)
        }
    };
    s.retx_capacity = p
        .opt_u64("retx_buffer")?
        .map_or(s.l, |v| v.clamp(1, 1 << 20) as u32);
    s.r_f = cx.real("r_f")?;
    s.status_min = cx.ms("status_min_ms")?;
    s.status_max = cx.ms("status_max_ms")?.max(s.status_min);
    // The largest round trip inside a region: through the exchange between its two farthest
    // endpoints (between the exchange and its farthest endpoint when the designated sits there).
    let local_rtd = regions
        .iter()
        .map(|g| {
            let ow: Vec<u64> = g.endpoints.iter().map(|&m| one_way(m)).collect();
            region_round_trip(one_way(g.exchange), &ow, at_router)
        })
        .max()
        .unwrap_or(0);
    s.local_rtd = ms(cx.real_or("local_rtd_ms", local_rtd as f64 / 1e6)?);
    s.kou = cx.int("kou")? as u32;
    s.linger = cx.ms("linger_ms")?;
    s.designated_at_exchange = at_router;
    let d = deploy(
        cx.source,
        cx.group,
        cx.group.0.saturating_add(1),
        &regions,
        &s,
    );
    cx.install(d)
}

//! Laying out one connection's roles, sans-IO: the pattern [`crate::tree::deploy`] started,
//! for every family whose set-up depends on where things are.
//!
//! A driver describes the connection in a [`Layout`] — plain data: the source, the receivers,
//! the routers that run the family's router agent (with what lies below each on the source's
//! tree) and, where a protocol takes them from the topology, distances between members. Each
//! family's `deploy(&Layout, &Params) -> Deployment` (`pgm::deploy`, `lms::deploy`,
//! `srm::deploy`; `tree::deploy` over its regions) returns every agent configuration,
//! router-agent configuration and group the connection needs, with the defaults of
//! [`crate::spec`]. [`Deploy::roles`] builds the agents from it, drawing each one's seeded RNG
//! from the driver, and the driver only attaches them.
//!
//! What needs the driver's topology (its shortest-path trees: which routers carry the data,
//! the distance to the closest receiver behind an interface, one-way delays between members)
//! is computed by the driver and handed over in the layout; nothing here knows a simulator or
//! a socket.

use crate::rng::AgentRng;
use crate::spec::Values;
use crate::{Agent, GroupId, IfaceId, NodeId, RouterAgent};
use core::time::Duration;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where one connection's roles go.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    /// The data source.
    pub source: NodeId,
    /// The data's multicast group.
    pub group: GroupId,
    /// The receivers, in the driver's order.
    pub receivers: &'a [NodeId],
    /// The routers that run the family's router agent (PGM network elements, LMS routers),
    /// in the driver's order; empty where the network does not help.
    pub routers: Vec<RouterSite>,
    /// Distances between members from the topology (SRM with `distances = "topology"`).
    pub distances: MemberDistances<'a>,
    /// Each node's parent on the source's shortest-path tree, by node index (`None`: the
    /// source, or a node it does not reach); empty where the family does not need them
    /// (multi-level `prmp` places its relays by them).
    pub parents: &'a [Option<NodeId>],
}

impl<'a> Layout<'a> {
    /// `source` sending to `receivers` on `group`; no routers, no distances.
    pub fn new(source: NodeId, group: GroupId, receivers: &'a [NodeId]) -> Self {
        Layout {
            source,
            group,
            receivers,
            routers: Vec::new(),
            distances: MemberDistances::Unknown,
            parents: &[],
        }
    }

    /// `n`'s parent on the source's tree, if the layout knows it.
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        self.parents.get(n.0 as usize).copied().flatten()
    }

    /// The members of a many-to-many session: the source, then the receivers.
    pub fn members(&self) -> Vec<NodeId> {
        let mut m = Vec::with_capacity(self.receivers.len() + 1);
        m.push(self.source);
        m.extend_from_slice(self.receivers);
        m
    }
}

/// Why a family cannot be laid out as asked: the parameter at fault (`"name"` when it is the
/// layout itself) and what it must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployError {
    /// The parameter's key.
    pub key: String,
    /// What it must be, or why the layout does not fit.
    pub what: String,
}

impl DeployError {
    /// `key` must be `what`.
    pub fn new(key: impl Into<String>, what: impl Into<String>) -> Self {
        DeployError {
            key: key.into(),
            what: what.into(),
        }
    }
}

impl core::fmt::Display for DeployError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.key, self.what)
    }
}

/// Which routers a family wants in [`Layout::routers`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Routers {
    /// None (the network does not help).
    #[default]
    None,
    /// Every router, nothing known below it (PGM's network elements; multi-level PRMP's
    /// relay candidates).
    All,
    /// Every router, each with its interfaces leading down the source's tree to receivers
    /// and the distance to the closest one behind each (LMS).
    AllWithDownstream,
}

/// What a family's deployment needs the driver to put in its [`Layout`] beyond the source,
/// group and receivers (the driver computes these from its topology only when asked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Which routers.
    pub routers: Routers,
    /// Every node's parent on the source's shortest-path tree ([`Layout::parents`]).
    pub parents: bool,
    /// Every member's distance to every other ([`MemberDistances::AllPairs`]).
    pub distances: bool,
}

/// A family laid out on a [`Layout`]: its typed parameters, read row by row from its spec,
/// what its layout needs, and its deployment. A driver's one adapter reads the parameters,
/// fills the layout as [`Deployable::needs`] asks, deploys and attaches the roles.
pub trait Deployable {
    /// The typed parameters.
    type Params;
    /// Every role's configuration.
    type Deployment: Deploy;
    /// The parameters `values` give (the spec's scenario keys).
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Self::Params, V::Error>;
    /// What the layout must hold for parameters `p`.
    fn needs(_p: &Self::Params) -> Needs {
        Needs::default()
    }
    /// The roles on `layout`; an error where the parameters do not fit each other or the
    /// layout.
    fn deploy(layout: &Layout<'_>, p: &Self::Params) -> Result<Self::Deployment, DeployError>;
}

/// A driver's side of laying one connection out ([`laid_out`]): the protocol's parameter
/// values ([`Values`]), the layout a family needs, the agents' seeded RNGs, and attaching
/// the roles. What a driver implements once for every family a [`Layout`] serves.
pub trait Site: Values<Error = DeployError> {
    /// The layout's parts, computed from the driver's topology as `needs` asks.
    fn place(&mut self, needs: Needs) -> Placement;
    /// The agent at `node`'s random stream `stream`.
    fn rng(&mut self, node: NodeId, stream: u64) -> AgentRng;
    /// Attach `roles`.
    fn attach(&mut self, roles: Roles) -> Result<(), DeployError>;
}

/// What a driver puts in a [`Layout`], owned ([`Site::place`]).
#[derive(Debug, Clone)]
pub struct Placement {
    /// The data source.
    pub source: NodeId,
    /// The data's multicast group.
    pub group: GroupId,
    /// The receivers, in the driver's order.
    pub receivers: Vec<NodeId>,
    /// [`Layout::routers`].
    pub routers: Vec<RouterSite>,
    /// [`Layout::parents`].
    pub parents: Vec<Option<NodeId>>,
    /// Every member's distances to the others, when asked for
    /// ([`MemberDistances::AllPairs`]).
    pub distances: Option<Vec<BTreeMap<NodeId, Duration>>>,
}

impl Placement {
    /// The layout these parts make.
    pub fn layout(&self) -> Layout<'_> {
        let mut l = Layout::new(self.source, self.group, &self.receivers);
        l.routers = self.routers.clone();
        l.parents = &self.parents;
        if let Some(all) = &self.distances {
            l.distances = MemberDistances::AllPairs(all);
        }
        l
    }
}

/// Lay family `F` out at `site`: read its parameters, place it as it needs, deploy, build the
/// roles with the site's RNGs and attach them (`crate::protocols::Deployer::Layout`).
pub fn laid_out<F: Deployable>(site: &mut dyn Site) -> Result<(), DeployError> {
    let p = F::read(site)?;
    let placed = site.place(F::needs(&p));
    let d = F::deploy(&placed.layout(), &p)?;
    let roles = d.roles(&mut |n, s| site.rng(n, s));
    site.attach(roles)
}

/// A router of the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouterSite {
    /// The router.
    pub node: NodeId,
    /// Its interfaces leading down the source's tree toward receivers, each with the one-way
    /// distance to the closest receiver behind it, by interface (LMS's replier candidates;
    /// empty for a router no receiver is below, and where the family does not need them).
    pub downstream: Vec<(IfaceId, Duration)>,
}

impl RouterSite {
    /// `node`, with nothing known below it.
    pub fn new(node: NodeId) -> Self {
        RouterSite {
            node,
            downstream: Vec::new(),
        }
    }
}

/// One-way distances between members, from the topology; members in [`Layout::members`]
/// order (the source first).
#[derive(Debug, Clone, Copy, Default)]
pub enum MemberDistances<'a> {
    /// None: members measure them (SRM's session messages).
    #[default]
    Unknown,
    /// Every member's distance to every other member it reaches.
    AllPairs(&'a [BTreeMap<NodeId, Duration>]),
    /// Any member's distance to any other, asked for when needed (see [`DistanceOracle`]).
    Oracle(&'a Arc<dyn DistanceOracle>),
}

/// One-way distances between nodes, answered on demand by whoever knows the topology (a
/// simulator, from its shortest paths). It stands in for what SRM's session messages would
/// measure, at group sizes where holding every member's distance to every other (what
/// session messages give, and [`MemberDistances::AllPairs`]) is quadratic: a member asks only
/// for the nodes it meets (the source, requesters), and the answerer computes and caches per
/// node asked about. Answers must be a pure function of the two nodes.
pub trait DistanceOracle: Send + Sync + core::fmt::Debug {
    /// One-way distance from `from` to `to`; `None` when `to` cannot be reached.
    fn distance(&self, from: NodeId, to: NodeId) -> Option<Duration>;
}

/// A deployment's roles, built: what a driver attaches.
pub struct Roles {
    /// Groups to set before the run (group, members): a family's local groups, and SRM's
    /// data group with the source in it. The data group's receivers are the driver's.
    pub groups: Vec<(GroupId, Vec<NodeId>)>,
    /// Host agents, one per node.
    pub hosts: Vec<(NodeId, Box<dyn Agent>)>,
    /// Router agents, one per node.
    pub routers: Vec<(NodeId, Box<dyn RouterAgent>)>,
}

/// A family's deployment: configurations that build into [`Roles`].
pub trait Deploy {
    /// The agents, each drawing its random numbers from `rng(node, stream)` (the driver's
    /// per-agent seeded stream: 0 for host agents, 1 for router agents).
    fn roles(self, rng: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Roles;
}

/// One role's configuration: the node it goes to and the agent it builds there.
pub trait Role {
    /// What it builds: `dyn Agent` or `dyn RouterAgent`.
    type Agent: ?Sized;
    /// The node it goes to.
    fn node(&self) -> NodeId;
    /// Its agent, drawing randomness (where it needs any) from `rng(node, stream)`.
    fn build(self, rng: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Box<Self::Agent>;
}

/// `impl Role for $cfg`: the node is `cfg.node`, the agent `$build` (with the configuration
/// bound to `$c` and the driver's RNG function to `$rng`).
macro_rules! role {
    ($cfg:ty => dyn $agent:ident, |$c:ident, $rng:ident| $build:expr) => {
        $crate::deploy::role!($cfg => boxed dyn $agent, |$c, $rng| Box::new($build));
    };
    // `$build` is already a `Box<dyn $agent>` (a role that builds one of several types).
    ($cfg:ty => boxed dyn $agent:ident, |$c:ident, $rng:ident| $build:expr) => {
        impl $crate::deploy::Role for $cfg {
            type Agent = dyn $crate::$agent;
            fn node(&self) -> $crate::NodeId {
                self.node
            }
            fn build(
                self,
                $rng: &mut dyn FnMut($crate::NodeId, u64) -> $crate::rng::AgentRng,
            ) -> Box<dyn $crate::$agent> {
                let $c = self;
                $build
            }
        }
    };
}
pub(crate) use role;

/// The roles of a one-to-many family: a source, its receivers and, where the routers help
/// (`pgm`, `lms`, multi-level `prmp`), router agents, with any groups of their own.
#[derive(Debug, Clone)]
pub struct Deployment<S, R, X = NoRouter> {
    /// Groups of the family's own to set before the run (group, members).
    pub groups: Vec<(GroupId, Vec<NodeId>)>,
    /// The source's configuration.
    pub source: S,
    /// Every receiver's configuration, in the layout's order.
    pub receivers: Vec<R>,
    /// A router agent's configuration per router of the layout, in its order.
    pub routers: Vec<X>,
}

/// No router role: the router type of a [`Deployment`] of hosts only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRouter {}

impl Role for NoRouter {
    type Agent = dyn RouterAgent;
    fn node(&self) -> NodeId {
        match *self {}
    }
    fn build(self, _: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Box<dyn RouterAgent> {
        match self {}
    }
}

/// A host role whose agent is built already: its constructor checks its configuration, so
/// the family's `deploy` builds it and reports the check's error (`prmp`, `ff` senders).
#[derive(Debug)]
pub struct Built<A> {
    /// The node it goes to.
    pub node: NodeId,
    /// The agent.
    pub agent: A,
}

impl<A: Agent + 'static> Role for Built<A> {
    type Agent = dyn Agent;
    fn node(&self) -> NodeId {
        self.node
    }
    fn build(self, _: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Box<dyn Agent> {
        Box::new(self.agent)
    }
}

/// A router role whose agent is built already (see [`Built`]).
#[derive(Debug)]
pub struct BuiltRouter<A> {
    /// The node it goes to.
    pub node: NodeId,
    /// The router agent.
    pub agent: A,
}

impl<A: RouterAgent + 'static> Role for BuiltRouter<A> {
    type Agent = dyn RouterAgent;
    fn node(&self) -> NodeId {
        self.node
    }
    fn build(self, _: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Box<dyn RouterAgent> {
        Box::new(self.agent)
    }
}

impl<S, R> Deployment<S, R> {
    /// The source `source` and a receiver per configuration of `receivers`; no router, no
    /// group of its own.
    pub fn hosts(source: S, receivers: Vec<R>) -> Self {
        Deployment {
            groups: Vec::new(),
            source,
            receivers,
            routers: Vec::new(),
        }
    }
}

/// A role's configuration from its family's typed parameters `P` and its place `At` on the
/// [`Layout`], for [`Deployment::lay_out`]: `(node, group)` for a source, `(node, source)`
/// for a receiver, `(&RouterSite, group)` for a router agent. The configuration macros of
/// `crate::config` write it (`new(…) from p: Params`) where every field is `P`'s or fixed.
pub trait FromParams<P, At> {
    /// The configuration `p` gives the role at `at`.
    fn from_params(p: &P, at: At) -> Self;
}

impl<S, R, X> Deployment<S, R, X> {
    /// The source, a receiver at each of the layout's receivers and a router agent at each of
    /// its routers, configured by `p`.
    pub fn lay_out<P>(layout: &Layout<'_>, p: &P) -> Self
    where
        S: FromParams<P, (NodeId, GroupId)>,
        R: FromParams<P, (NodeId, NodeId)>,
        X: for<'s> FromParams<P, (&'s RouterSite, GroupId)>,
    {
        Deployment {
            groups: Vec::new(),
            source: S::from_params(p, (layout.source, layout.group)),
            receivers: layout
                .receivers
                .iter()
                .map(|&r| R::from_params(p, (r, layout.source)))
                .collect(),
            routers: layout
                .routers
                .iter()
                .map(|x| X::from_params(p, (x, layout.group)))
                .collect(),
        }
    }
}

impl<S, R, X> Deploy for Deployment<S, R, X>
where
    S: Role<Agent = dyn Agent>,
    R: Role<Agent = dyn Agent>,
    X: Role<Agent = dyn RouterAgent>,
{
    fn roles(self, rng: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Roles {
        let mut roles = Roles::new();
        roles.groups = self.groups;
        roles.host(self.source, rng);
        for c in self.receivers {
            roles.host(c, rng);
        }
        for c in self.routers {
            roles.router(c, rng);
        }
        roles
    }
}

impl Roles {
    pub(crate) fn new() -> Self {
        Roles {
            groups: Vec::new(),
            hosts: Vec::new(),
            routers: Vec::new(),
        }
    }
    /// Build the host role `c`.
    pub(crate) fn host<C: Role<Agent = dyn Agent>>(
        &mut self,
        c: C,
        rng: &mut dyn FnMut(NodeId, u64) -> AgentRng,
    ) {
        self.hosts.push(built(c, rng));
    }
    /// Build the router role `c`.
    pub(crate) fn router<C: Role<Agent = dyn RouterAgent>>(
        &mut self,
        c: C,
        rng: &mut dyn FnMut(NodeId, u64) -> AgentRng,
    ) {
        self.routers.push(built(c, rng));
    }
}

/// Role `c` built, with its node.
fn built<C: Role>(c: C, rng: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> (NodeId, Box<C::Agent>) {
    let node = c.node();
    (node, c.build(rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ms, Defaults};
    use crate::srm::{DistanceSource, Distances};
    use crate::{bap, ff, lms, pgm, prmp, rra, saw, srm, xtp};

    #[test]
    fn typed_params_read_from_the_spec_rows_are_their_defaults() {
        assert_eq!(pgm::Params::read(&mut Defaults), Ok(pgm::Params::default()));
        assert_eq!(lms::Params::read(&mut Defaults), Ok(lms::Params::default()));
        assert_eq!(srm::Params::read(&mut Defaults), Ok(srm::Params::default()));
        assert_eq!(saw::Params::read(&mut Defaults), Ok(saw::Params::default()));
        assert_eq!(bap::Params::read(&mut Defaults), Ok(bap::Params::default()));
        assert_eq!(rra::Params::read(&mut Defaults), Ok(rra::Params::default()));
        assert_eq!(ff::Params::read(&mut Defaults), Ok(ff::Params::default()));
        assert_eq!(
            prmp::Params::read(&mut Defaults),
            Ok(prmp::Params::default())
        );
        assert_eq!(xtp::Params::read(&mut Defaults), Ok(xtp::Params::default()));
    }

    #[test]
    fn host_families_put_the_sender_at_the_source_and_a_receiver_at_each_receiver() {
        let rx = [NodeId(2), NodeId(3)];
        let l = layout(&rx);
        let mut rng = |n, s| AgentRng::derive(1, n, s);
        let all = [
            saw::deploy(&l, &saw::Params::default()).roles(&mut rng),
            bap::deploy(&l, &bap::Params::default()).roles(&mut rng),
            rra::deploy(&l, &rra::Params::default()).roles(&mut rng),
            ff::deploy(&l, &ff::Params::default())
                .map(|d| d.roles(&mut rng))
                .unwrap(),
            prmp::deploy(&l, &prmp::Params::default())
                .map(|d| d.roles(&mut rng))
                .unwrap(),
            xtp::deploy(&l, &xtp::Params::default())
                .map(|d| d.roles(&mut rng))
                .unwrap(),
        ];
        for roles in all {
            let hosts: Vec<NodeId> = roles.hosts.iter().map(|h| h.0).collect();
            assert_eq!(hosts, [NodeId(0), NodeId(2), NodeId(3)]);
            assert!(roles.routers.is_empty() && roles.groups.is_empty());
        }
        let unicast = xtp::Params {
            multicast: false,
            ..xtp::Params::default()
        };
        assert_eq!(
            xtp::deploy(&l, &unicast).err().map(|e| e.key).as_deref(),
            Some("multicast")
        );
        let misfit = prmp::Params {
            epoch: ms(1.5),
            ..prmp::Params::default()
        };
        assert_eq!(
            prmp::deploy(&l, &misfit).err().map(|e| e.key).as_deref(),
            Some("window")
        );
    }

    #[test]
    fn prmp_relays_sit_above_receivers_and_nest() {
        // 0 (source) - 1 (router) - 2 (router) - {3, 4}; receiver 5 hangs off 1, and so does
        // router 6, itself a receiver (so no relay) with receiver 7 below it. Relays: 1 and 2
        // (2 a child of 1); 6 and 7 answer to 1; the source polls relay 1 only.
        let parents = [
            None,
            Some(NodeId(0)),
            Some(NodeId(1)),
            Some(NodeId(2)),
            Some(NodeId(2)),
            Some(NodeId(1)),
            Some(NodeId(1)),
            Some(NodeId(6)),
        ];
        let rx = [NodeId(3), NodeId(4), NodeId(5), NodeId(6), NodeId(7)];
        let mut l = Layout::new(NodeId(0), GroupId(10), &rx);
        l.routers = [1, 2, 6].map(|n| RouterSite::new(NodeId(n))).to_vec();
        l.parents = &parents;
        let p = prmp::Params {
            relays: true,
            ..prmp::Params::default()
        };
        let d = prmp::deploy(&l, &p).unwrap();
        assert_eq!(
            d.groups,
            [
                (
                    GroupId(11),
                    vec![NodeId(5), NodeId(6), NodeId(7), NodeId(2)]
                ),
                (GroupId(12), vec![NodeId(3), NodeId(4)]),
            ]
        );
        let relays: Vec<NodeId> = d.routers.iter().map(|x| x.node).collect();
        assert_eq!(relays, [NodeId(1), NodeId(2)]);
        assert_eq!(prmp::Prmp::needs(&p).routers, Routers::All);
    }

    fn layout(receivers: &[NodeId]) -> Layout<'_> {
        let mut l = Layout::new(NodeId(0), GroupId(1), receivers);
        l.routers = vec![
            RouterSite {
                node: NodeId(1),
                downstream: vec![(IfaceId(1), ms(5.0)), (IfaceId(2), ms(3.0))],
            },
            RouterSite::new(NodeId(4)),
        ];
        l
    }

    #[test]
    fn pgm_and_lms_put_a_router_agent_on_every_router_of_the_layout() {
        let rx = [NodeId(2), NodeId(3)];
        let l = layout(&rx);
        let d = lms::deploy(&l, &lms::Params::default());
        let repliers: Vec<_> = d.routers.iter().map(|r| r.replier).collect();
        assert_eq!(
            repliers,
            [Some(IfaceId(2)), None],
            "the closest receiver's link"
        );
        assert!(d.receivers.iter().all(|r| r.refresh_every.is_none()));
        let adaptive = lms::Params {
            replier: lms::Replier::Adaptive,
            ..lms::Params::default()
        };
        let d = lms::deploy(&l, &adaptive);
        assert!(d.routers.iter().all(|r| r.adaptive));
        assert!(d.receivers.iter().all(|r| r.refresh_every == Some(10)));
        let roles =
            pgm::deploy(&l, &pgm::Params::default()).roles(&mut |n, s| AgentRng::derive(1, n, s));
        let hosts: Vec<NodeId> = roles.hosts.iter().map(|h| h.0).collect();
        let routers: Vec<NodeId> = roles.routers.iter().map(|x| x.0).collect();
        assert_eq!(hosts, [NodeId(0), NodeId(2), NodeId(3)]);
        assert_eq!(routers, [NodeId(1), NodeId(4)]);
        assert!(roles.groups.is_empty(), "the data group is the driver's");
    }

    /// Distances of 1 ms per unit of node-id difference; node 9 unreachable.
    #[derive(Debug)]
    struct Line;
    impl DistanceOracle for Line {
        fn distance(&self, from: NodeId, to: NodeId) -> Option<Duration> {
            (from.0 != 9 && to.0 != 9).then(|| ms(f64::from(from.0.abs_diff(to.0))))
        }
    }

    #[test]
    fn srm_members_take_their_distances_from_the_layout_only_with_topology_distances() {
        let rx = [NodeId(2), NodeId(9)];
        let mut l = layout(&rx);
        let oracle: Arc<dyn DistanceOracle> = Arc::new(Line);
        l.distances = MemberDistances::Oracle(&oracle);
        let d = srm::deploy(&l, &srm::Params::default());
        assert_eq!(d.group, (GroupId(1), vec![NodeId(0), NodeId(2), NodeId(9)]));
        assert!(d
            .members
            .iter()
            .all(|c| c.distances == DistanceSource::SessionMessages));
        let p = srm::Params {
            distances: Distances::Topology,
            ..srm::Params::default()
        };
        let d = srm::deploy(&l, &p);
        // Every member shares the one oracle and asks it; unreachable: the default.
        assert!(d
            .members
            .iter()
            .all(|c| c.distances == DistanceSource::Oracle(oracle.clone())));
        let member =
            |i: usize| srm::Member::new(d.members[i].clone(), AgentRng::derive(1, NodeId(0), 0));
        assert_eq!(member(1).distance(NodeId(0)), ms(2.0));
        assert_eq!(member(0).distance(NodeId(2)), ms(2.0));
        assert_eq!(member(2).distance(NodeId(0)), p.default_distance);
        let all = [
            BTreeMap::from([(NodeId(2), ms(1.0))]),
            BTreeMap::new(),
            BTreeMap::new(),
        ];
        l.distances = MemberDistances::AllPairs(&all);
        let d = srm::deploy(&l, &p);
        assert_eq!(
            d.members[0].distances,
            DistanceSource::Configured(all[0].clone())
        );
    }
}

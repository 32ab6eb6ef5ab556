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
use crate::{Agent, GroupId, IfaceId, NodeId, RouterAgent};
use core::time::Duration;
use std::collections::BTreeMap;

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
        }
    }

    /// The members of a many-to-many session: the source, then the receivers.
    pub fn members(&self) -> Vec<NodeId> {
        let mut m = Vec::with_capacity(self.receivers.len() + 1);
        m.push(self.source);
        m.extend_from_slice(self.receivers);
        m
    }
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
    /// Every member's distance to the source only (`None`: unreachable), which a member
    /// also assumes for the members it has not measured: what SRM can know at a scale where
    /// all pairs (and session messages) are quadratic in the group size.
    ToSource(&'a [Option<Duration>]),
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

impl Roles {
    pub(crate) fn new() -> Self {
        Roles {
            groups: Vec::new(),
            hosts: Vec::new(),
            routers: Vec::new(),
        }
    }
    pub(crate) fn host(&mut self, node: NodeId, agent: impl Agent + 'static) {
        self.hosts.push((node, Box::new(agent)));
    }
    pub(crate) fn router(&mut self, node: NodeId, agent: impl RouterAgent + 'static) {
        self.routers.push((node, Box::new(agent)));
    }
}

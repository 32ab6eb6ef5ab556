//! `srm`'s typed parameters and its roles on a [`Layout`]: one member per node of the
//! session (the source and every receiver), all in the data group.

use super::spec;
use super::{Config, DistanceSource, Member};
use crate::deploy::{
    role, Deploy, DeployError, Deployable, FromParams, Layout, MemberDistances, Needs, Roles,
};
use crate::rng::AgentRng;
use crate::spec::{ms, period, typed_params, Values};
use crate::{GroupId, NodeId};
use core::time::Duration;

pub use super::spec::Distances;

typed_params! {
    /// `srm`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's (ns-2's) defaults.
    Params from spec::PARAMS {
        /// Request timer: uniform in [C1·d, (C1+C2)·d].
        c1: f64 = real("c1") or spec::C1,
        /// Request timer width.
        c2: f64 = real("c2") or spec::C2,
        /// Repair timer: uniform in [D1·d, (D1+D2)·d].
        d1: f64 = real("d1") or spec::D1,
        /// Repair timer width.
        d2: f64 = real("d2") or spec::D2,
        /// ns-2's adaptive timers.
        adaptive: bool = switch("adaptive") or spec::ADAPTIVE,
        /// Request back-offs after which a member stops asking.
        backoff_limit: u32 = count("backoff_limit") or spec::BACKOFF_LIMIT,
        /// Where distances come from: session messages, or the layout's
        /// [`MemberDistances`] (the topology's).
        distances: Distances = choice("distances", Distances::parse) or spec::DISTANCES,
        /// Interval of session messages (`None`: none).
        session_interval: Option<Duration> =
            period("session_interval_ms") or period(spec::SESSION_INTERVAL_MS),
        /// Each session interval uniform in [(1 − j)·i, (1 + j)·i].
        session_jitter: f64 = real("session_jitter") or spec::SESSION_JITTER,
        /// Distance assumed to a member not yet heard from.
        default_distance: Duration = ms("default_distance_ms") or ms(spec::DEFAULT_DISTANCE_MS),
        /// How long members keep answering after the last data.
        linger: Duration = ms("linger_ms") or ms(spec::LINGER_MS),
    }
}

impl Params {
    /// The member at `node` of a session of `group_size` members carrying `source`'s data
    /// on `group`, distances from session messages.
    pub fn member(
        &self,
        node: NodeId,
        group: GroupId,
        source: NodeId,
        group_size: usize,
    ) -> Config {
        Config::from_params(self, (node, group, source, group_size))
    }
}

/// Every role of one SRM session.
#[derive(Debug, Clone)]
pub struct Deployment {
    /// The data group and its members: SRM is many-to-many, the source is a member and must
    /// hear requests.
    pub group: (GroupId, Vec<NodeId>),
    /// Every member's configuration, the source first.
    pub members: Vec<Config>,
}

/// SRM on `layout`: a member at the source and at every receiver. With
/// [`Distances::Topology`] each member's distances come from the layout:
/// [`MemberDistances::AllPairs`] are its distances to every member; a
/// [`MemberDistances::Oracle`] is shared by every member, which asks it when it needs a
/// distance; without distances in the
/// layout members measure them as with [`Distances::Session`].
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let members = layout.members();
    let configs = members
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let mut c = p.member(m, layout.group, layout.source, members.len());
            if p.distances == Distances::Topology {
                match layout.distances {
                    MemberDistances::Unknown => {}
                    MemberDistances::AllPairs(all) => {
                        c.distances =
                            DistanceSource::Configured(all.get(i).cloned().unwrap_or_default());
                    }
                    MemberDistances::Oracle(o) => {
                        c.distances = DistanceSource::Oracle(o.clone());
                    }
                }
            }
            c
        })
        .collect();
    Deployment {
        group: (layout.group, members),
        members: configs,
    }
}

role!(Config => dyn Agent, |c, rng| {
    let r = rng(c.node, 0);
    Member::new(c, r)
});

impl Deploy for Deployment {
    fn roles(self, rng: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> Roles {
        let mut roles = Roles::new();
        roles.groups.push(self.group);
        for c in self.members {
            roles.host(c, rng);
        }
        roles
    }
}

/// `srm` for a driver's adapter ([`Deployable`]): with `distances = "topology"` every
/// member's distances to every other.
#[derive(Debug, Clone, Copy)]
pub struct Srm;

impl Deployable for Srm {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn needs(p: &Params) -> Needs {
        Needs {
            distances: p.distances == Distances::Topology,
            ..Needs::default()
        }
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        Ok(deploy(layout, p))
    }
}

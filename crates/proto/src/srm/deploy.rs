//! `srm`'s typed parameters and its roles on a [`Layout`]: one member per node of the
//! session (the source and every receiver), all in the data group.

use super::{Config, DistanceSource, Member};
use crate::deploy::{role, Deploy, Layout, MemberDistances, Roles};
use crate::rng::AgentRng;
use crate::spec::{ms, period, srm as spec, Reader, Values};
use crate::{GroupId, NodeId};
use core::time::Duration;

pub use crate::spec::srm::Distances;

/// `srm`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's (ns-2's) defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Request timer: uniform in [C1·d, (C1+C2)·d].
    pub c1: f64,
    /// Request timer width.
    pub c2: f64,
    /// Repair timer: uniform in [D1·d, (D1+D2)·d].
    pub d1: f64,
    /// Repair timer width.
    pub d2: f64,
    /// ns-2's adaptive timers.
    pub adaptive: bool,
    /// Request back-offs after which a member stops asking.
    pub backoff_limit: u32,
    /// Where distances come from: session messages, or the layout's
    /// [`MemberDistances`] (the topology's).
    pub distances: Distances,
    /// Interval of session messages (`None`: none).
    pub session_interval: Option<Duration>,
    /// Distance assumed to a member not yet heard from.
    pub default_distance: Duration,
    /// How long members keep answering after the last data.
    pub linger: Duration,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            c1: spec::C1,
            c2: spec::C2,
            d1: spec::D1,
            d2: spec::D2,
            adaptive: spec::ADAPTIVE,
            backoff_limit: spec::BACKOFF_LIMIT,
            distances: spec::DISTANCES,
            session_interval: period(spec::SESSION_INTERVAL_MS),
            default_distance: ms(spec::DEFAULT_DISTANCE_MS),
            linger: ms(spec::LINGER_MS),
        }
    }
}

impl Params {
    /// The parameters `values` give, row by row (the scenario keys of [`spec::PARAMS`]).
    pub fn read<V: Values>(values: &mut V) -> Result<Self, V::Error> {
        let mut r = Reader::new(spec::PARAMS, values);
        Ok(Params {
            c1: r.real("c1")?,
            c2: r.real("c2")?,
            d1: r.real("d1")?,
            d2: r.real("d2")?,
            adaptive: r.switch("adaptive")?,
            backoff_limit: r.int("backoff_limit")?.min(u64::from(u32::MAX)) as u32,
            distances: r.choice("distances", Distances::parse)?,
            session_interval: r.period("session_interval_ms")?,
            default_distance: r.ms("default_distance_ms")?,
            linger: r.ms("linger_ms")?,
        })
    }

    /// The member at `node` of a session of `group_size` members carrying `source`'s data
    /// on `group`, distances from session messages.
    pub fn member(
        &self,
        node: NodeId,
        group: GroupId,
        source: NodeId,
        group_size: usize,
    ) -> Config {
        Config {
            node,
            group,
            session: 0,
            source,
            c1: self.c1,
            c2: self.c2,
            d1: self.d1,
            d2: self.d2,
            backoff_limit: self.backoff_limit,
            adaptive: self.adaptive,
            group_size: group_size.max(1),
            distances: DistanceSource::SessionMessages,
            default_distance: self.default_distance,
            session_interval: self.session_interval,
            window: 1 << 16,
            linger: self.linger,
        }
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
/// [`MemberDistances::AllPairs`] are its distances to every member;
/// [`MemberDistances::ToSource`] gives it only its distance to the source, which a receiver
/// also assumes for every other member (its default distance); without distances in the
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
                    MemberDistances::ToSource(to) => {
                        let d = to.get(i).copied().flatten().unwrap_or(p.default_distance);
                        c.distances = DistanceSource::Configured(
                            std::iter::once((layout.source, d)).collect(),
                        );
                        if m != layout.source {
                            c.default_distance = d;
                        }
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

//! `lms`'s typed parameters and its roles on a [`Layout`]: the source, a receiver per
//! receiver, a router agent on every router of the layout with its replier link chosen
//! among the interfaces leading down to receivers.

use super::spec;
use super::{choose_replier, Receiver, ReceiverConfig, Router, RouterConfig, Source, SourceConfig};
use crate::deploy::{
    role, DeployError, Deployable, FromParams, Layout, Needs, RouterSite, Routers,
};
use crate::spec::{ms, period, typed_params, Values};
use crate::{GroupId, IfaceId};
use core::time::Duration;

pub use super::spec::Replier;

typed_params! {
    /// `lms`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// A receiver repeats a request not answered within this.
        request_timeout: Duration = ms("request_timeout_ms") or ms(spec::REQUEST_TIMEOUT_MS),
        /// Interval of the source's heartbeats (`None`: none).
        heartbeat: Option<Duration> = period("heartbeat_ms") or period(spec::HEARTBEAT_MS),
        /// How long the source keeps answering after the last data.
        linger: Duration = ms("linger_ms") or ms(spec::LINGER_MS),
        /// Static replier links, or adaptive ones moved by REFRESH costs.
        replier: Replier = choice("replier", Replier::parse) or spec::REPLIER,
        /// Adaptive repliers: packets between two REFRESH messages of a receiver.
        refresh_packets: u64 = int("refresh_packets") or spec::REFRESH_PACKETS,
    }
}

impl Params {
    /// Whether routers follow REFRESH costs (and receivers send them).
    pub fn adaptive(&self) -> bool {
        self.replier == Replier::Adaptive
    }
}

/// The router agent at `site`: replier link toward the closest receiver below
/// ([`choose_replier`]), following costs with adaptive repliers.
impl FromParams<Params, (&RouterSite, GroupId)> for RouterConfig {
    fn from_params(p: &Params, (site, group): (&RouterSite, GroupId)) -> Self {
        let mut c = RouterConfig::new(site.node, group, choose_replier(&site.downstream));
        c.adaptive = p.adaptive();
        c.candidates = site.downstream.clone();
        c
    }
}

/// Every role of one LMS connection: the source, the receivers, a router agent per router.
pub type Deployment = crate::deploy::Deployment<SourceConfig, ReceiverConfig, RouterConfig>;

/// LMS on `layout`: the source, its receivers (requests go toward the source), and a router
/// agent on every router of the layout, its replier link chosen from the site's downstream
/// interfaces (none: requests pass up); a router on a receiver's own node has that receiver
/// as its replier ([`IfaceId::LOCAL`]: nearer than any below). LMS needs no group beyond
/// the data's.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let mut d = Deployment::lay_out(layout, p);
    // Routers whose node also holds a receiver (members on routers): binary search over the
    // routers' nodes, so a large layout costs O(receivers · log routers).
    let mut nodes: Vec<(crate::NodeId, usize)> = d
        .routers
        .iter()
        .enumerate()
        .map(|(i, c)| (c.node, i))
        .collect();
    nodes.sort_unstable();
    for r in layout.receivers {
        if let Ok(k) = nodes.binary_search_by_key(r, |&(n, _)| n) {
            d.routers[nodes[k].1].replier = Some(IfaceId::LOCAL);
        }
    }
    d
}

role!(SourceConfig => dyn Agent, |c, _rng| Source::new(c));
role!(ReceiverConfig => dyn Agent, |c, _rng| Receiver::new(c));
role!(RouterConfig => dyn RouterAgent, |c, _rng| Router::new(c));

/// `lms` for a driver's adapter ([`Deployable`]): a router agent on every router, its replier
/// candidates the interfaces leading down the source's tree to receivers.
#[derive(Debug, Clone, Copy)]
pub struct Lms;

impl Deployable for Lms {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn needs(_: &Params) -> Needs {
        Needs {
            routers: Routers::AllWithDownstream,
            ..Needs::default()
        }
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        Ok(deploy(layout, p))
    }
}

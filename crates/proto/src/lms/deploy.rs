//! `lms`'s typed parameters and its roles on a [`Layout`]: the source, a receiver per
//! receiver, a router agent on every router of the layout with its replier link chosen
//! among the interfaces leading down to receivers.

use super::{choose_replier, Receiver, ReceiverConfig, Router, RouterConfig, Source, SourceConfig};
use crate::deploy::{role, Layout, RouterSite};
use crate::spec::{lms as spec, ms, period, Reader, Values};
use crate::{GroupId, NodeId};
use core::time::Duration;

pub use crate::spec::lms::Replier;

/// `lms`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// A receiver repeats a request not answered within this.
    pub request_timeout: Duration,
    /// Interval of the source's heartbeats (`None`: none).
    pub heartbeat: Option<Duration>,
    /// How long the source keeps answering after the last data.
    pub linger: Duration,
    /// Static replier links, or adaptive ones moved by REFRESH costs.
    pub replier: Replier,
    /// Adaptive repliers: packets between two REFRESH messages of a receiver.
    pub refresh_packets: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            request_timeout: ms(spec::REQUEST_TIMEOUT_MS),
            heartbeat: period(spec::HEARTBEAT_MS),
            linger: ms(spec::LINGER_MS),
            replier: spec::REPLIER,
            refresh_packets: spec::REFRESH_PACKETS,
        }
    }
}

impl Params {
    /// The parameters `values` give, row by row (the scenario keys of [`spec::PARAMS`]).
    pub fn read<V: Values>(values: &mut V) -> Result<Self, V::Error> {
        let mut r = Reader::new(spec::PARAMS, values);
        Ok(Params {
            request_timeout: r.ms("request_timeout_ms")?,
            heartbeat: r.period("heartbeat_ms")?,
            linger: r.ms("linger_ms")?,
            replier: r.choice("replier", Replier::parse)?,
            refresh_packets: r.int("refresh_packets")?,
        })
    }

    /// Whether routers follow REFRESH costs (and receivers send them).
    pub fn adaptive(&self) -> bool {
        self.replier == Replier::Adaptive
    }

    /// The source at `node` sending to `group`.
    pub fn source(&self, node: NodeId, group: GroupId) -> SourceConfig {
        SourceConfig {
            node,
            group,
            session: 0,
            heartbeat: self.heartbeat,
            linger: self.linger,
        }
    }

    /// A receiver at `node` of `source`'s data (refreshing its cost with adaptive repliers).
    pub fn receiver(&self, node: NodeId, source: NodeId) -> ReceiverConfig {
        ReceiverConfig {
            node,
            source,
            session: 0,
            request_timeout: self.request_timeout,
            window: 1 << 16,
            refresh_every: self.adaptive().then_some(self.refresh_packets),
        }
    }

    /// The router agent at `site` for `group`: replier link toward the closest receiver
    /// below ([`choose_replier`]), following costs with adaptive repliers.
    pub fn router(&self, site: &RouterSite, group: GroupId) -> RouterConfig {
        let mut c = RouterConfig::new(site.node, group, choose_replier(&site.downstream));
        c.adaptive = self.adaptive();
        c.candidates = site.downstream.clone();
        c
    }
}

/// Every role of one LMS connection: the source, the receivers, a router agent per router.
pub type Deployment = crate::deploy::Deployment<SourceConfig, ReceiverConfig, RouterConfig>;

/// LMS on `layout`: the source, its receivers (requests go toward the source), and a router
/// agent on every router of the layout, its replier link chosen from the site's downstream
/// interfaces (none: requests pass up). LMS needs no group beyond the data's.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    Deployment::lay_out(
        layout,
        |node, group| p.source(node, group),
        |node, source| p.receiver(node, source),
        |site, group| p.router(site, group),
    )
}

role!(SourceConfig => dyn Agent, |c, _rng| Source::new(c));
role!(ReceiverConfig => dyn Agent, |c, _rng| Receiver::new(c));
role!(RouterConfig => dyn RouterAgent, |c, _rng| Router::new(c));

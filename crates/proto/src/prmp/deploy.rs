//! `prmp`'s typed parameters and its roles on a [`Layout`]: the sender at the source and a
//! receiver at every receiver; with `relays`, multi-level PRMP's relays on the routers above
//! groups of receivers ([`tree::RelayRouter`]), nested to any depth.

use super::spec;
use super::{tree, Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::deploy::{role, Built, BuiltRouter, DeployError, Deployable, Layout, Needs, Routers};
use crate::spec::{ms, typed_params, Values};
use crate::{GroupId, NodeId};
use core::time::Duration;
use std::collections::{BTreeMap, BTreeSet};

typed_params! {
    /// `prmp`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Window `S` for parent and children (PF-IW: the transfer length).
        window: u64 = int("window") or spec::WINDOW,
        /// The gap between two transmissions of the sender.
        ipg: Duration = ms("ipg_ms") or ms(spec::IPG_MS),
        /// Epoch length ε.
        epoch: Duration = ms("epoch_ms") or ms(spec::EPOCH_MS),
        /// Response rate RR, responses per second.
        response_rate: u64 = int("response_rate") or spec::RESPONSE_RATE,
        /// Multicast threshold ratio MTR.
        mtr: f64 = real("mtr") or spec::MTR,
        /// Consecutive unanswered polls after which a child is removed.
        max_silent_polls: u32 = count("max_silent_polls") or spec::MAX_SILENT_POLLS,
        /// RTT assumed before the first measurement.
        initial_rtt: Duration = ms("initial_rtt_ms") or ms(spec::INITIAL_RTT_MS),
        /// Multi-level PRMP: relays on the routers above groups of receivers.
        relays: bool = switch("relays") or false,
    }
}

impl Params {
    /// The sender's configuration at `node` polling `receivers` on `group`.
    pub fn sender(&self, node: NodeId, group: GroupId, receivers: Vec<NodeId>) -> SenderConfig {
        let mut c = SenderConfig::new(node, group, receivers);
        c.window = self.window;
        c.ipg = self.ipg;
        c.epoch = self.epoch;
        c.response_rate = self.response_rate;
        c.mtr = self.mtr;
        c.max_silent_polls = self.max_silent_polls;
        c.initial_rtt = self.initial_rtt;
        c
    }
}

/// Every role of one PRMP connection: the sender (built: its constructor checks the
/// settings), the receivers, and with relays a relay per relaying router and its group.
pub type Deployment =
    crate::deploy::Deployment<Built<Sender>, ReceiverConfig, BuiltRouter<tree::RelayRouter>>;

/// PRMP on `layout` (seed 004; the parent's response buffer is the driver's receive queue at
/// the source). With `relays` (multi-level, beyond the seed), a router of the layout that is
/// the parent of a receiver on the source's tree ([`Layout::parents`]) hosts a relay, unless
/// it is the source's own node or hosts a receiver itself (a relay takes every PRMP packet
/// that reaches its router, so that receiver would get none). Every receiver and every relay
/// answers to the nearest relay above it on the tree, else to the source; a relay polls its
/// children on a group of its own (the data group's id + 1 + its index) with the sender's
/// settings. Relays nest to any depth. An error on `window` where the settings do not fit
/// each other (the epoch a multiple of the gap, a response quota of at least one).
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
    let bad = |e: super::ConfigError| DeployError::new("window", e.to_string());
    let mut groups = Vec::new();
    let mut routers = Vec::new();
    let polled = if p.relays {
        let (regions, polled) = relay_regions(layout);
        for (k, (&router, kids)) in regions.iter().enumerate() {
            let g = GroupId(layout.group.0.saturating_add(1 + k as u32));
            groups.push((g, kids.clone()));
            let relay = tree::RelayRouter::new(
                tree::RelayConfig {
                    upstream: ReceiverConfig::new(router, p.window),
                    downstream: p.sender(router, g, kids.clone()),
                    messages: None,
                    backlog_limit: None,
                },
                upstream_relay(layout, &regions, router).unwrap_or(layout.source),
            )
            .map_err(bad)?;
            routers.push(BuiltRouter {
                node: router,
                agent: relay,
            });
        }
        polled
    } else {
        layout.receivers.to_vec()
    };
    let sender = Sender::new(p.sender(layout.source, layout.group, polled)).map_err(bad)?;
    Ok(Deployment {
        groups,
        source: Built {
            node: layout.source,
            agent: sender,
        },
        receivers: layout
            .receivers
            .iter()
            .map(|&r| ReceiverConfig::new(r, p.window))
            .collect(),
        routers,
    })
}

/// The relays' children (by relay, in node order) and the nodes the source polls itself:
/// every receiver and relay goes to the nearest relay above it.
fn relay_regions(layout: &Layout<'_>) -> (BTreeMap<NodeId, Vec<NodeId>>, Vec<NodeId>) {
    let routers: BTreeSet<NodeId> = layout.routers.iter().map(|x| x.node).collect();
    let receivers: BTreeSet<NodeId> = layout.receivers.iter().copied().collect();
    let relays: BTreeSet<NodeId> = layout
        .receivers
        .iter()
        .filter_map(|&r| layout.parent(r))
        .filter(|&x| x != layout.source && routers.contains(&x) && !receivers.contains(&x))
        .collect();
    // Every relay has a child: the receiver whose parent it is.
    let mut regions: BTreeMap<NodeId, Vec<NodeId>> =
        relays.iter().map(|&x| (x, Vec::new())).collect();
    let mut polled = Vec::new();
    for &n in layout.receivers.iter().chain(relays.iter()) {
        match upstream_relay(layout, &regions, n) {
            Some(x) => regions.entry(x).or_default().push(n),
            None => polled.push(n),
        }
    }
    (regions, polled)
}

/// The nearest relay (a key of `relays`) strictly above `n` on the source's tree, if any.
fn upstream_relay<T>(
    layout: &Layout<'_>,
    relays: &BTreeMap<NodeId, T>,
    n: NodeId,
) -> Option<NodeId> {
    let mut at = layout.parent(n);
    while let Some(a) = at {
        if relays.contains_key(&a) {
            return Some(a);
        }
        at = layout.parent(a);
    }
    None
}

/// `prmp` for a driver's adapter ([`Deployable`]): relays need every router and the source's
/// tree.
#[derive(Debug, Clone, Copy)]
pub struct Prmp;

impl Deployable for Prmp {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn needs(p: &Params) -> Needs {
        Needs {
            routers: if p.relays {
                Routers::All
            } else {
                Routers::None
            },
            parents: p.relays,
            distances: false,
        }
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        deploy(layout, p)
    }
}

role!(ReceiverConfig => dyn Agent, |c, _rng| Receiver::new(c));

//! A scenario's links and bus as emulators: each link's two directions with its
//! [`LinkConfig`]'s rate, delay, jitter and queue, a bus as one channel at its rate, and the
//! scenario's loss rules at their sites, each rule's state seeded as the simulator seeds it.

use super::model::{Medium, MediumSpec};
use super::{Channel, EmuSpec, Port, Site};
use rmcast_net::NetError;
use rmcast_proto::NodeId;
use rmcast_sim::loss::{LossRule, LossSite, LossState};
use rmcast_sim::{LinkConfig, Network, SimRng};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The tag of the emulator's jitter streams (not the simulator's: its draws are per packet,
/// the emulator's per frame, so the two never share a sequence anyway).
const JITTER: u64 = 0x454d_554a;

/// The loss rules of a run at their sites.
#[derive(Debug, Default)]
pub struct Sites {
    /// Per link direction (`2 * link + dir`, dir 0 leaving the link's end `a`).
    links: BTreeMap<usize, Vec<LossState>>,
    tx: BTreeMap<NodeId, Site>,
    rx: BTreeMap<NodeId, Site>,
}

impl Sites {
    /// `rules` (in the simulator's order: rule `i` seeded with index `i`) on `net`.
    pub fn new(net: &Network, rules: &[LossRule], seed: u64) -> Result<Sites, NetError> {
        let mut s = Sites::default();
        for (i, rule) in rules.iter().enumerate() {
            rule.model
                .validate()
                .map_err(|e| NetError::setup(format!("loss rule {i}: {e}")))?;
            let cause = i as u32;
            let ri = i as u64;
            match rule.site {
                LossSite::Link { link, from } => {
                    let (a, b, _) = net
                        .link(link)
                        .ok_or_else(|| NetError::setup(format!("loss rule {i}: no link {link}")))?;
                    let dirs: Vec<usize> = match from {
                        None => vec![2 * link, 2 * link + 1],
                        Some(n) if n == a => vec![2 * link],
                        Some(n) if n == b => vec![2 * link + 1],
                        Some(n) => {
                            return Err(NetError::setup(format!(
                                "loss rule {i}: node {n:?} is not an end of link {link}"
                            )))
                        }
                    };
                    for d in dirs {
                        let st = LossState::new(rule, cause, seed, ri, d as u64);
                        s.links.entry(d).or_default().push(st);
                    }
                }
                LossSite::Tx { node, .. } => {
                    let st = LossState::new(rule, cause, seed, ri, u64::from(node.0) << 1);
                    push(&mut s.tx, node, st);
                }
                LossSite::Rx { node, .. } => {
                    let key = (u64::from(node.0) << 1) | 1;
                    push(&mut s.rx, node, LossState::new(rule, cause, seed, ri, key));
                }
            }
        }
        Ok(s)
    }
}

fn push(m: &mut BTreeMap<NodeId, Site>, n: NodeId, st: LossState) {
    let site = m
        .entry(n)
        .or_insert_with(|| Arc::new(Mutex::new(Vec::new())));
    site.lock().unwrap_or_else(|e| e.into_inner()).push(st);
}

/// A link's medium in one direction.
pub fn link_medium(cfg: &LinkConfig, seed: u64, link: usize, dir: u64) -> Medium {
    let spec = MediumSpec {
        rate_bps: cfg.bandwidth_bps,
        delay_ns: cfg.delay.as_nanos() as u64,
        jitter_ns: cfg
            .jitter
            .map(|j| (j.mean.as_nanos() as f64, j.sd.as_nanos() as f64)),
        reorder: cfg.reorder,
        queue: cfg.queue,
    };
    Medium::new(spec, SimRng::new(seed, JITTER, link as u64, dir))
}

/// Node `n`'s interface number toward `peer`.
fn iface_toward(net: &Network, n: NodeId, peer: NodeId) -> u32 {
    net.neighbors(n)
        .into_iter()
        .find(|&(_, m)| m == peer)
        .map_or(0, |(i, _)| i.0)
}

/// The emulator of link `link`: `ends` are the interfaces (in `netns`) toward its end `a` and
/// its end `b`.
pub fn link_spec(
    net: &Network,
    link: usize,
    netns: &str,
    ends: [String; 2],
    sites: &mut Sites,
    seed: u64,
) -> Result<EmuSpec, NetError> {
    let (a, b, cfg) = net
        .link(link)
        .ok_or_else(|| NetError::setup(format!("no link {link}")))?;
    let nodes = [(a, b), (b, a)];
    let mut ports = Vec::new();
    let mut channels = Vec::new();
    for (dir, (ifname, (n, peer))) in ends.into_iter().zip(nodes).enumerate() {
        ports.push(Port {
            ifname,
            channel: dir,
            iface: iface_toward(net, n, peer),
            tx: sites.tx.get(&n).cloned(),
            rx: sites.rx.get(&n).cloned(),
        });
        channels.push(Channel {
            medium: link_medium(cfg, seed, link, dir as u64),
            loss: sites.links.remove(&(2 * link + dir)).unwrap_or_default(),
        });
    }
    Ok(EmuSpec {
        name: format!("link {link}"),
        netns: Some(netns.to_string()),
        ports,
        channels,
    })
}

/// The emulator of bus `bus`: one channel at the bus's rate (no propagation delay, an
/// unbounded queue: the simulator's MACs queue without bound), `members` the interfaces (in
/// `netns`) toward its members in [`Network::bus_members`] order. Each member's interface
/// number is taken to be 0 (the testbed runs a bus alone, each member's one interface).
pub fn bus_spec(
    net: &Network,
    bus: usize,
    netns: &str,
    members: Vec<String>,
    sites: &Sites,
) -> Result<EmuSpec, NetError> {
    let (nodes, cfg) = net
        .bus_members(bus)
        .zip(net.bus_config(bus))
        .ok_or_else(|| NetError::setup(format!("no bus {bus}")))?;
    if nodes.len() != members.len() {
        return Err(NetError::setup(format!(
            "bus {bus} has {} members, {} interfaces given",
            nodes.len(),
            members.len()
        )));
    }
    let ports = members
        .into_iter()
        .zip(&nodes)
        .map(|(ifname, n)| Port {
            ifname,
            channel: 0,
            iface: 0,
            tx: sites.tx.get(n).cloned(),
            rx: sites.rx.get(n).cloned(),
        })
        .collect();
    let spec = MediumSpec {
        rate_bps: cfg.bandwidth_bps,
        delay_ns: 0,
        jitter_ns: None,
        reorder: false,
        queue: None,
    };
    Ok(EmuSpec {
        name: format!("bus {bus}"),
        netns: Some(netns.to_string()),
        ports,
        channels: vec![Channel {
            medium: Medium::new(spec, SimRng::new(0, JITTER, bus as u64, 0)),
            loss: Vec::new(),
        }],
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rmcast_sim::loss::LossModel;
    use std::time::Duration;

    #[test]
    fn a_link_becomes_two_directions_with_its_rules() {
        let mut net = Network::new();
        let (h, r) = (net.add_host(), net.add_router());
        let cfg = LinkConfig::new(10_000_000, Duration::from_micros(500)).queue(8);
        let l = net.add_link(h, r, cfg).unwrap();
        let rules = [
            LossRule::new(
                LossSite::Link {
                    link: l,
                    from: Some(h),
                },
                LossModel::EveryNth { n: 2 },
            ),
            LossRule::new(
                LossSite::Rx {
                    node: r,
                    iface: None,
                },
                LossModel::Bernoulli { p: 0.5 },
            ),
        ];
        let mut sites = Sites::new(&net, &rules, 1).unwrap();
        let spec = link_spec(&net, l, "ns", ["a".into(), "b".into()], &mut sites, 1).unwrap();
        assert_eq!(spec.channels.len(), 2);
        assert_eq!(spec.channels[0].loss.len(), 1);
        assert!(spec.channels[1].loss.is_empty());
        assert_eq!(spec.channels[0].medium.spec.delay_ns, 500_000);
        assert_eq!(spec.channels[0].medium.spec.queue, Some(8));
        assert!(spec.ports[0].rx.is_none() && spec.ports[1].rx.is_some());
        let bad = [LossRule::new(
            LossSite::Link {
                link: l,
                from: Some(NodeId(7)),
            },
            LossModel::Bernoulli { p: 0.1 },
        )];
        assert!(Sites::new(&net, &bad, 1).is_err());
    }
}

//! Beyond the paper: single-level against multi-level PRMP on transit–stub graphs.

use super::run::{
    add_link_losses, loss_of, prmp_sender, GROUP, IMPLOSION_BUFFER, ITR, PACKET_BYTES, WINDOW,
};
use core::time::Duration;
use rmcast_proto::{prmp, GroupId, NodeId, Time};
use rmcast_sim::topo::{self, LinkClass};
use rmcast_sim::{KindFilter, LinkConfig, Network, Sim, Stop, Traffic};
use std::collections::BTreeMap;

/// A run on a transit–stub graph (beyond the paper): single-level PRMP (the source polls
/// every receiver) or the multi-level tree (`prmp::tree::Relay`: one relay per stub domain
/// polls the other receivers of its domain and answers its own parent).
#[derive(Debug, Clone, Copy)]
pub struct TreeSpec {
    /// Receivers (NC).
    pub nc: usize,
    /// The multi-level tree (else single-level PRMP).
    pub multi: bool,
    /// Data packets (DP).
    pub packets: u64,
    /// Simulated-time limit.
    pub limit: Duration,
    /// Seed of the graph, the placement and the losses.
    pub seed: u64,
}

/// What a tree run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOut {
    /// Every parent (source and relays) completed before the limit.
    pub finished: bool,
    /// T = DP/Δt, Δt to the moment the last parent (source or relay) has every packet fully
    /// acknowledged by its children.
    pub t: f64,
    /// Link transmissions (every hop, lost copies included) per receiver per packet.
    pub hops: f64,
    /// Implosion losses at all parents / (NC·DP).
    pub i: f64,
    /// Packets arriving at the source per data packet (its feedback load).
    pub root_feedback: f64,
    /// Parents besides the source.
    pub relays: usize,
    /// Finished, no receiver evicted, and every receiver delivered every packet.
    pub delivery_ok: bool,
    /// Events the simulator processed.
    pub events: u64,
}

/// Loss on the transit–stub graph's router links (each direction).
pub const CORE_ERR: f64 = 0.005;

/// Who is where on a transit–stub graph with `s.nc` receivers attached: the source, the
/// receivers, the receivers of each stub domain, and each link's loss.
struct Graph {
    source: NodeId,
    receivers: Vec<NodeId>,
    by_domain: BTreeMap<usize, Vec<NodeId>>,
    /// Every link's index with its loss (LAN-class on host links, [`CORE_ERR`] elsewhere).
    links: Vec<(usize, f64)>,
}

/// Build the network of one tree spec, with who is where on it.
fn graph(s: &TreeSpec) -> Result<(Network, Graph), String> {
    let ts = topo::TransitStub::default();
    let params = topo::PlaneParams {
        bandwidth_bps: 0,
        ..topo::PlaneParams::default()
    };
    let mut t = topo::transit_stub(&ts, &params, s.seed).map_err(|e| e.to_string())?;
    let (mean, sd, lan_err) = LinkClass::Lan.params();
    let host = LinkConfig::new(0, Duration::ZERO)
        .jitter(mean, sd)
        .reordering(true);
    topo::attach_hosts(&mut t, s.nc, &host, s.seed).map_err(|e| e.to_string())?;
    let domain_of: BTreeMap<NodeId, usize> = t
        .attach_points
        .iter()
        .enumerate()
        .map(|(k, &r)| (r, k / ts.stub_nodes.max(1)))
        .collect();
    let source = t.source;
    let receivers = t.receivers.clone();
    let mut by_domain: BTreeMap<usize, Vec<NodeId>> = BTreeMap::new();
    for &r in &receivers {
        let d = t
            .net
            .neighbors(r)
            .first()
            .and_then(|(_, at)| domain_of.get(at).copied())
            .ok_or("a receiver is not attached to a stub router")?;
        by_domain.entry(d).or_default().push(r);
    }
    let links: Vec<(usize, f64)> = (0..t.net.link_count())
        .filter_map(|i| {
            t.net.link(i).map(|(_, _, c)| {
                (
                    i,
                    if &*c.class == "host" {
                        lan_err
                    } else {
                        CORE_ERR
                    },
                )
            })
        })
        .collect();
    let g = Graph {
        source,
        receivers,
        by_domain,
        links,
    };
    Ok((t.net, g))
}

/// Single-level PRMP: the source polls every receiver. Returns the parents (the source).
fn deploy_single(sim: &mut Sim, g: &Graph) -> Result<Vec<NodeId>, String> {
    let (w, rr, source, receivers) = (WINDOW, ITR as u64, g.source, &g.receivers);
    sim.set_group(GROUP, receivers).map_err(|e| e.to_string())?;
    let root = prmp::Sender::new(prmp_sender(source, GROUP, receivers.to_vec(), w, rr))
        .map_err(|e| e.to_string())?;
    sim.add_agent(source, Box::new(root))
        .map_err(|e| e.to_string())?;
    for &c in receivers {
        let a = prmp::Receiver::new(prmp::ReceiverConfig::new(c, w));
        sim.add_agent(c, Box::new(a)).map_err(|e| e.to_string())?;
    }
    Ok(vec![source])
}

/// The multi-level tree: the source polls one relay per stub domain, which polls the other
/// receivers of its domain. Returns the parents (the source and the relays).
fn deploy_multi(sim: &mut Sim, g: &Graph, packets: u64) -> Result<Vec<NodeId>, String> {
    let (w, rr, source) = (WINDOW, ITR as u64, g.source);
    let mut parents = vec![source];
    let relays: Vec<NodeId> = g
        .by_domain
        .values()
        .filter_map(|v| v.first().copied())
        .collect();
    sim.set_group(GROUP, &relays).map_err(|e| e.to_string())?;
    let root = prmp::Sender::new(prmp_sender(source, GROUP, relays.clone(), w, rr))
        .map_err(|e| e.to_string())?;
    sim.add_agent(source, Box::new(root))
        .map_err(|e| e.to_string())?;
    for (k, members) in g.by_domain.values().enumerate() {
        let Some((&relay, kids)) = members.split_first() else {
            continue;
        };
        if kids.is_empty() {
            let a = prmp::Receiver::new(prmp::ReceiverConfig::new(relay, w));
            sim.add_agent(relay, Box::new(a))
                .map_err(|e| e.to_string())?;
            continue;
        }
        let group = GroupId(2 + k as u32);
        sim.set_group(group, kids).map_err(|e| e.to_string())?;
        let cfg = prmp::tree::RelayConfig {
            upstream: prmp::ReceiverConfig::new(relay, w),
            downstream: prmp_sender(relay, group, kids.to_vec(), w, rr),
            messages: Some(packets),
            backlog_limit: None,
        };
        let a = prmp::tree::Relay::new(cfg).map_err(|e| e.to_string())?;
        sim.add_agent(relay, Box::new(a))
            .map_err(|e| e.to_string())?;
        parents.push(relay);
        for &c in kids {
            let a = prmp::Receiver::new(prmp::ReceiverConfig::new(c, w));
            sim.add_agent(c, Box::new(a)).map_err(|e| e.to_string())?;
        }
    }
    Ok(parents)
}

/// Run one tree spec: what it measured, or why it could not run.
pub fn run_tree(s: &TreeSpec) -> Result<TreeOut, String> {
    let (net, mut g) = graph(s)?;
    let mut sim = Sim::new(net, s.seed);
    sim.record_events(false);
    let parents = if s.multi {
        deploy_multi(&mut sim, &g, s.packets)?
    } else {
        deploy_single(&mut sim, &g)?
    };
    for &p in &parents {
        // The response buffer of §4 at every parent; a relay's data from its own parent does
        // not go through it.
        sim.set_rx_queue(p, IMPLOSION_BUFFER, ITR)
            .map_err(|e| e.to_string())?;
        sim.set_rx_queue_kinds(p, KindFilter::Control)
            .map_err(|e| e.to_string())?;
    }
    add_link_losses(&mut sim, std::mem::take(&mut g.links))?;
    let mut traffic = Traffic::saturated(s.packets, PACKET_BYTES);
    traffic.stamp = false;
    sim.add_traffic(g.source, traffic)
        .map_err(|e| e.to_string())?;
    let limit = Time::from_nanos(u64::try_from(s.limit.as_nanos()).unwrap_or(u64::MAX));
    sim.run(&Stop::when_complete().until(limit));
    // The source is done when its children (the relays) have everything; run on until the
    // relays' subtrees have it too (the simulation goes idle then) or the limit.
    sim.run(&Stop::at(limit));
    Ok(measure(&sim, s, &g, &parents, limit))
}

/// What a finished (or stopped) tree run measured.
fn measure(sim: &Sim, s: &TreeSpec, g: &Graph, parents: &[NodeId], limit: Time) -> TreeOut {
    let (source, receivers) = (g.source, &g.receivers);
    let done: Vec<Option<Time>> = parents
        .iter()
        .map(|&p| sim.metrics(p).and_then(|m| m.completed_at))
        .collect();
    let finished = done.iter().all(Option::is_some);
    let end = if finished {
        done.iter().flatten().max().copied().unwrap_or(limit)
    } else {
        limit
    };
    let dt_ms = end.as_nanos() as f64 / 1e6;
    let denom = s.nc as f64 * s.packets as f64;
    let evicted: u64 = parents
        .iter()
        .filter_map(|&p| sim.agent(p).map(|a| a.stats().evicted))
        .sum();
    let delivery_ok = evicted == 0
        && receivers
            .iter()
            .all(|&r| sim.metrics(r).is_some_and(|m| m.delivered == s.packets));
    let root_in = sim.metrics(source).map_or(0, |m| m.packets_in);
    TreeOut {
        finished,
        t: if finished && dt_ms > 0.0 {
            s.packets as f64 / dt_ms
        } else {
            0.0
        },
        hops: sim.counters().link_hops as f64 / denom,
        i: loss_of(sim, "implosion") as f64 / denom,
        root_feedback: root_in as f64 / s.packets as f64,
        relays: parents.len() - 1,
        delivery_ok: finished && delivery_ok,
        events: sim.events_processed(),
    }
}

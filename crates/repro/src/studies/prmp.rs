//! `prmp`: seed 004 (Barcellos & Ezhilchelvan) — polling-based reliable multicast (PF, PF-IW)
//! against full-feedback protocols (FF, FF-IW, FF-IW-IT) on the star configurations of §4,
//! Figures 5–11, then beyond the paper: thousands of receivers and the multi-level tree
//! version on a transit–stub graph.
//!
//! Every paper run is one parent and `NC` children, each child on its own link of a Table 1
//! class (`rmcast_sim::topo::star`): one-way latency Normal(L, SD) per packet, independent
//! Bernoulli losses at `Err` on every packet kind in both directions, no bandwidth limit.
//! Implosion is the simulator's host receive queue at the parent: 16 packets served at
//! ITR = 1500/s (off for FF-IW-IT). The parent sends 1000 packets of 1 KB from a ready
//! source; children consume at once. T, N and I are computed as §4 defines them:
//! `T = DP/Δt` (packets/ms, from the first DATA to the last packet fully acknowledged),
//! `N = TP/(NC·DP)` with `TP` every packet crossing a parent–child link (a multicast counts
//! once per child, lost copies included), `I` = implosion losses / `(NC·DP)`.

use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::mix64;
use rmcast_proto::{ff, prmp, Agent, GroupId, NodeId, Time};
use rmcast_sim::topo::{self, LinkClass};
use rmcast_sim::{
    KindFilter, LinkConfig, LossModel, LossRule, LossSite, Network, Sim, Stop, Traffic,
};
use std::collections::BTreeMap;

/// The seed 004 study.
pub struct Prmp;

const GROUP: GroupId = GroupId(1);
/// §4: 1000 packets (`DP`) of 1 KB.
pub const PACKETS: u64 = 1000;
pub const PACKET_BYTES: usize = 1024;
/// §4: the parent's response buffer and the implosion threshold rate.
pub const IMPLOSION_BUFFER: usize = 16;
pub const ITR: f64 = 1500.0;
/// §4: `S = 64` for PF and FF.
pub const WINDOW: u64 = 64;

/// The five protocol versions of §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Proto {
    Pf,
    PfIw,
    Ff,
    FfIw,
    FfIwIt,
}

impl Proto {
    pub const ALL: [Proto; 5] = [
        Proto::Pf,
        Proto::PfIw,
        Proto::Ff,
        Proto::FfIw,
        Proto::FfIwIt,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Proto::Pf => "pf",
            Proto::PfIw => "pf_iw",
            Proto::Ff => "ff",
            Proto::FfIw => "ff_iw",
            Proto::FfIwIt => "ff_iw_it",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Proto::Pf => "PF",
            Proto::PfIw => "PF-IW",
            Proto::Ff => "FF",
            Proto::FfIw => "FF-IW",
            Proto::FfIwIt => "FF-IW-IT",
        }
    }

    fn window(self, packets: u64) -> u64 {
        match self {
            Proto::Pf => prmp::Variant::Pf.window(WINDOW, packets),
            Proto::PfIw => prmp::Variant::PfIw.window(WINDOW, packets),
            Proto::Ff => ff::Variant::Ff.window(WINDOW, packets),
            Proto::FfIw => ff::Variant::FfIw.window(WINDOW, packets),
            Proto::FfIwIt => ff::Variant::FfIwIt.window(WINDOW, packets),
        }
    }

    fn implosion(self) -> bool {
        self != Proto::FfIwIt
    }

    fn color(self) -> usize {
        match self {
            Proto::Pf => 0,
            Proto::PfIw => 1,
            Proto::Ff => 2,
            Proto::FfIw => 3,
            Proto::FfIwIt => 4,
        }
    }
}

/// One run on a star.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    pub proto: Proto,
    pub class: LinkClass,
    pub nc: usize,
    /// PRMP's response rate `RR` (responses/s).
    pub rr: u64,
    pub packets: u64,
    /// Simulated-time limit; a run that has not finished by then is reported as unfinished.
    pub limit: Duration,
    pub seed: u64,
}

impl RunSpec {
    pub fn paper(proto: Proto, class: LinkClass, nc: usize, seed: u64) -> Self {
        RunSpec {
            proto,
            class,
            nc,
            rr: ITR as u64,
            packets: PACKETS,
            limit: Duration::from_secs(3600),
            seed,
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOut {
    /// Every packet fully acknowledged before the time limit.
    pub finished: bool,
    /// Packets fully acknowledged.
    pub acked: u64,
    /// Δt in ms (to the last packet fully acknowledged, or to the limit if unfinished).
    pub dt_ms: f64,
    /// T = acked / Δt, packets/ms.
    pub t: f64,
    /// N = TP / (NC · DP).
    pub n: f64,
    /// I = implosion losses / (NC · DP).
    pub i: f64,
    /// Responses (RESP or ACK) sent by the children, per child per packet.
    pub feedback: f64,
    /// Children removed by the protocol for silence.
    pub evicted: u64,
    /// Every child that was not removed delivered every packet exactly once.
    pub delivery_ok: bool,
    /// Simulator events processed (cost of the run).
    pub events: u64,
}

/// PRMP sender configuration for a run (§4 values; `S` by variant).
pub fn prmp_sender(
    node: NodeId,
    group: GroupId,
    receivers: Vec<NodeId>,
    window: u64,
    rr: u64,
) -> prmp::SenderConfig {
    let mut c = prmp::SenderConfig::new(node, group, receivers);
    c.window = window;
    c.response_rate = rr;
    c
}

fn sender_for(s: &RunSpec, node: NodeId, receivers: Vec<NodeId>) -> Result<Box<dyn Agent>, String> {
    let w = s.proto.window(s.packets);
    Ok(match s.proto {
        Proto::Pf | Proto::PfIw => Box::new(
            prmp::Sender::new(prmp_sender(node, GROUP, receivers, w, s.rr))
                .map_err(|e| e.to_string())?,
        ),
        Proto::Ff | Proto::FfIw | Proto::FfIwIt => {
            let mut c = ff::SenderConfig::new(node, GROUP, receivers);
            c.window = w;
            Box::new(ff::Sender::new(c).map_err(|e| e.to_string())?)
        }
    })
}

fn receiver_for(s: &RunSpec, node: NodeId) -> Box<dyn Agent> {
    let w = s.proto.window(s.packets);
    match s.proto {
        Proto::Pf | Proto::PfIw => {
            Box::new(prmp::Receiver::new(prmp::ReceiverConfig::new(node, w)))
        }
        _ => Box::new(ff::Receiver::new(ff::ReceiverConfig::new(node, w))),
    }
}

fn loss_of(sim: &Sim, cause: &str) -> u64 {
    sim.losses()
        .iter()
        .find(|(c, _)| c == cause)
        .map_or(0, |(_, n)| *n)
}

/// A star: the network, the parent, the children and each child link's (index, error rate).
pub type Star = (Network, NodeId, Vec<NodeId>, Vec<(usize, f64)>);

/// Seed 004's star: the parent (node 0) and `nc` children, each on its own link of a
/// Table 1 class (HYBRID: LAN, INTERLAN, WAN in turn). Latency is Normal(L, SD) drawn
/// independently for every packet (clamped at 0), so packets may overtake one another, as
/// §4 (g) models it; no bandwidth limit. Returns the network, the parent, the children and
/// each link's error rate.
pub fn star(nc: usize, class: LinkClass) -> Result<Star, String> {
    if nc == 0 || (class == LinkClass::Hybrid && nc < 3) {
        return Err("a star needs at least 1 child (3 for HYBRID)".into());
    }
    let mut net = Network::new();
    let s = net.add_host();
    let mut receivers = Vec::with_capacity(nc);
    let mut loss = Vec::with_capacity(nc);
    for i in 0..nc {
        let c = match class {
            LinkClass::Hybrid => [LinkClass::Lan, LinkClass::Interlan, LinkClass::Wan][i % 3],
            c => c,
        };
        let (mean, sd, err) = c.params();
        let r = net.add_host();
        let l = net
            .add_link(
                s,
                r,
                LinkConfig::new(0, Duration::ZERO)
                    .jitter(mean, sd)
                    .reordering(true),
            )
            .map_err(|e| e.to_string())?;
        receivers.push(r);
        loss.push((l, err));
    }
    Ok((net, s, receivers, loss))
}

/// Run one star simulation.
pub fn run_one(s: &RunSpec) -> Result<RunOut, String> {
    let (net, source, receivers, link_loss) = star(s.nc, s.class)?;
    let mut sim = Sim::new(net, s.seed);
    sim.record_events(false);
    sim.set_group(GROUP, &receivers)
        .map_err(|e| e.to_string())?;
    sim.add_agent(source, sender_for(s, source, receivers.clone())?)
        .map_err(|e| e.to_string())?;
    for &r in &receivers {
        sim.add_agent(r, receiver_for(s, r))
            .map_err(|e| e.to_string())?;
    }
    for (link, err) in link_loss {
        if err > 0.0 {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Link { link, from: None },
                    LossModel::Bernoulli { p: err },
                )
                .cause("err"),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    if s.proto.implosion() {
        sim.set_rx_queue(source, IMPLOSION_BUFFER, ITR)
            .map_err(|e| e.to_string())?;
    }
    let mut traffic = Traffic::saturated(s.packets, PACKET_BYTES);
    traffic.stamp = false;
    sim.add_traffic(source, traffic)
        .map_err(|e| e.to_string())?;
    let limit = Time::from_nanos(u64::try_from(s.limit.as_nanos()).unwrap_or(u64::MAX));
    let out = sim.run(&Stop::when_complete().until(limit));
    Ok(measure(s, &sim, source, &receivers, out.completed, limit))
}

fn measure(
    s: &RunSpec,
    sim: &Sim,
    source: NodeId,
    receivers: &[NodeId],
    finished: bool,
    limit: Time,
) -> RunOut {
    let sm = sim.metrics(source).cloned().unwrap_or_default();
    let stats = sim
        .agent(source)
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    // The first DATA leaves at t = 0 (saturated source from time zero, no earlier packet).
    let end = if finished {
        sm.completed_at.unwrap_or(limit)
    } else {
        limit
    };
    let dt_ms = end.as_nanos() as f64 / 1e6;
    let acked = sm.messages_done;
    let denom = (s.nc as f64) * (s.packets as f64);
    let mut feedback = 0u64;
    let mut delivery_ok = true;
    for &r in receivers {
        let Some(a) = sim.agent(r) else { continue };
        feedback += a.stats().packets_sent;
        let delivered = sim.metrics(r).map_or(0, |m| m.delivered);
        delivery_ok &= delivered <= s.packets;
    }
    // A child the protocol did not remove must have delivered every packet.
    let evicted = stats.evicted;
    if finished && evicted == 0 {
        delivery_ok &= receivers
            .iter()
            .all(|&r| sim.metrics(r).is_some_and(|m| m.delivered == s.packets));
    }
    RunOut {
        finished,
        acked,
        dt_ms,
        t: if dt_ms > 0.0 {
            acked as f64 / dt_ms
        } else {
            0.0
        },
        n: sim.counters().link_hops as f64 / denom,
        i: loss_of(sim, "implosion") as f64 / denom,
        feedback: feedback as f64 / denom,
        evicted,
        delivery_ok,
        events: sim.events_processed(),
    }
}

// ------------------------------------------------------------------- the multi-level tree

/// A run on a transit–stub graph (beyond the paper): single-level PRMP (the source polls
/// every receiver) or the multi-level tree (`prmp::tree::Relay`: one relay per stub domain
/// polls the other receivers of its domain and answers its own parent).
#[derive(Debug, Clone, Copy)]
pub struct TreeSpec {
    pub nc: usize,
    pub multi: bool,
    pub packets: u64,
    pub limit: Duration,
    pub seed: u64,
}

/// What a tree run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOut {
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
    pub delivery_ok: bool,
    pub events: u64,
}

/// Loss on the transit–stub graph's router links (each direction).
pub const CORE_ERR: f64 = 0.005;

pub fn run_tree(s: &TreeSpec) -> Result<TreeOut, String> {
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
            t.net
                .link(i)
                .map(|(_, _, c)| (i, if c.class == "host" { lan_err } else { CORE_ERR }))
        })
        .collect();
    let mut sim = Sim::new(t.net, s.seed);
    sim.record_events(false);
    let w = WINDOW;
    let rr = ITR as u64;
    let mut parents = vec![source];
    if s.multi {
        let relays: Vec<NodeId> = by_domain
            .values()
            .filter_map(|v| v.first().copied())
            .collect();
        sim.set_group(GROUP, &relays).map_err(|e| e.to_string())?;
        let root = prmp::Sender::new(prmp_sender(source, GROUP, relays.clone(), w, rr))
            .map_err(|e| e.to_string())?;
        sim.add_agent(source, Box::new(root))
            .map_err(|e| e.to_string())?;
        for (k, members) in by_domain.values().enumerate() {
            let Some((&relay, kids)) = members.split_first() else {
                continue;
            };
            if kids.is_empty() {
                let a = prmp::Receiver::new(prmp::ReceiverConfig::new(relay, w));
                sim.add_agent(relay, Box::new(a))
                    .map_err(|e| e.to_string())?;
                continue;
            }
            let g = GroupId(2 + k as u32);
            sim.set_group(g, kids).map_err(|e| e.to_string())?;
            let cfg = prmp::tree::RelayConfig {
                upstream: prmp::ReceiverConfig::new(relay, w),
                downstream: prmp_sender(relay, g, kids.to_vec(), w, rr),
                messages: Some(s.packets),
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
    } else {
        sim.set_group(GROUP, &receivers)
            .map_err(|e| e.to_string())?;
        let root = prmp::Sender::new(prmp_sender(source, GROUP, receivers.clone(), w, rr))
            .map_err(|e| e.to_string())?;
        sim.add_agent(source, Box::new(root))
            .map_err(|e| e.to_string())?;
        for &c in &receivers {
            let a = prmp::Receiver::new(prmp::ReceiverConfig::new(c, w));
            sim.add_agent(c, Box::new(a)).map_err(|e| e.to_string())?;
        }
    }
    for &p in &parents {
        // The response buffer of §4 at every parent; a relay's data from its own parent does
        // not go through it.
        sim.set_rx_queue(p, IMPLOSION_BUFFER, ITR)
            .map_err(|e| e.to_string())?;
        sim.set_rx_queue_kinds(p, KindFilter::Control)
            .map_err(|e| e.to_string())?;
    }
    for (link, err) in links {
        sim.add_loss(
            &LossRule::new(
                LossSite::Link { link, from: None },
                LossModel::Bernoulli { p: err },
            )
            .cause("err"),
        )
        .map_err(|e| e.to_string())?;
    }
    let mut traffic = Traffic::saturated(s.packets, PACKET_BYTES);
    traffic.stamp = false;
    sim.add_traffic(source, traffic)
        .map_err(|e| e.to_string())?;
    let limit = Time::from_nanos(u64::try_from(s.limit.as_nanos()).unwrap_or(u64::MAX));
    sim.run(&Stop::when_complete().until(limit));
    // The source is done when its children (the relays) have everything; run on until the
    // relays' subtrees have it too (the simulation goes idle then) or the limit.
    sim.run(&Stop::at(limit));
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
    Ok(TreeOut {
        finished,
        t: if finished && dt_ms > 0.0 {
            s.packets as f64 / dt_ms
        } else {
            0.0
        },
        hops: sim.counters().link_hops as f64 / denom,
        i: loss_of(&sim, "implosion") as f64 / denom,
        root_feedback: root_in as f64 / s.packets as f64,
        relays: parents.len() - 1,
        delivery_ok: finished && delivery_ok,
        events: sim.events_processed(),
    })
}

// ------------------------------------------------------------------------------ the sweeps

/// One family of runs: a protocol on a configuration over a varying x.
#[derive(Debug, Clone)]
struct Family {
    /// Measure prefix, e.g. `lan` or `rr`; measures are `<key>.<metric>.<proto>`.
    key: &'static str,
    proto: Proto,
    xs: Vec<f64>,
    make: fn(Proto, f64, u64) -> RunSpec,
    seeds: u64,
}

fn lan(p: Proto, x: f64, seed: u64) -> RunSpec {
    RunSpec::paper(p, LinkClass::Lan, x as usize, seed)
}

fn hybrid(p: Proto, x: f64, seed: u64) -> RunSpec {
    RunSpec::paper(p, LinkClass::Hybrid, x as usize, seed)
}

fn by_rr(p: Proto, x: f64, seed: u64) -> RunSpec {
    let mut s = RunSpec::paper(p, LinkClass::Lan, 60, seed);
    s.rr = x as u64;
    s
}

fn scale(p: Proto, x: f64, seed: u64) -> RunSpec {
    let mut s = RunSpec::paper(p, LinkClass::Lan, x as usize, seed);
    // Beyond the paper: a run that cannot finish in 10 simulated minutes is reported as such.
    // FF cannot finish at these sizes at all (every packet needs NC ACKs through a parent
    // that takes 1500/s, T <= ITR/NC), so it runs for a short window and reports the rate
    // at which packets became fully acknowledged in it.
    s.limit = match p {
        Proto::Ff | Proto::FfIw if x >= 10_000.0 => Duration::from_secs(2),
        Proto::Ff | Proto::FfIw => Duration::from_secs(10),
        _ => Duration::from_secs(600),
    };
    s
}

struct Plan {
    quick: bool,
    seeds: u64,
    /// Runs per point of the FF and FF-IW families with implosion (the expensive ones).
    ff_seeds: u64,
    lan: Vec<f64>,
    lan_ff: Vec<f64>,
    hybrid: Vec<f64>,
    hybrid_ff: Vec<f64>,
    rr: Vec<f64>,
    scale: Vec<f64>,
    scale_seeds: u64,
    tree: Vec<f64>,
    tree_seeds: u64,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Plan {
                quick,
                seeds: 3,
                ff_seeds: 2,
                lan: vec![2.0, 8.0, 15.0, 20.0, 40.0, 60.0],
                lan_ff: vec![2.0, 8.0, 20.0, 40.0],
                hybrid: vec![3.0, 9.0, 21.0, 39.0, 60.0],
                hybrid_ff: vec![3.0, 9.0, 21.0],
                rr: vec![600.0, 1000.0, 1500.0, 2500.0],
                scale: vec![100.0],
                scale_seeds: 2,
                tree: vec![100.0, 300.0],
                tree_seeds: 2,
            }
        } else {
            let lan = vec![
                2.0, 4.0, 6.0, 8.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
            ];
            let hybrid = vec![3.0, 6.0, 9.0, 12.0, 15.0, 21.0, 30.0, 39.0, 48.0, 60.0];
            Plan {
                quick,
                seeds: 10,
                ff_seeds: 10,
                lan_ff: lan.clone(),
                lan,
                hybrid_ff: hybrid.clone(),
                hybrid,
                rr: vec![300.0, 600.0, 1000.0, 1200.0, 1500.0, 2000.0, 2500.0, 3000.0],
                scale: vec![100.0, 1000.0, 10000.0],
                scale_seeds: 3,
                tree: vec![50.0, 100.0, 300.0, 1000.0],
                tree_seeds: 5,
            }
        }
    }

    fn families(&self) -> Vec<Family> {
        let mut f = Vec::new();
        for p in Proto::ALL {
            let ff = matches!(p, Proto::Ff | Proto::FfIw);
            let seeds = if ff { self.ff_seeds } else { self.seeds };
            f.push(Family {
                key: "lan",
                proto: p,
                xs: if ff {
                    self.lan_ff.clone()
                } else {
                    self.lan.clone()
                },
                make: lan,
                seeds,
            });
            f.push(Family {
                key: "hybrid",
                proto: p,
                xs: if ff {
                    self.hybrid_ff.clone()
                } else {
                    self.hybrid.clone()
                },
                make: hybrid,
                seeds,
            });
        }
        for p in [Proto::Pf, Proto::PfIw] {
            f.push(Family {
                key: "rr",
                proto: p,
                xs: self.rr.clone(),
                make: by_rr,
                seeds: self.seeds,
            });
        }
        for p in [Proto::Pf, Proto::PfIw, Proto::Ff, Proto::FfIwIt] {
            f.push(Family {
                key: "scale",
                proto: p,
                xs: self.scale.clone(),
                make: scale,
                seeds: self.scale_seeds,
            });
        }
        f
    }
}

fn est(v: &[f64]) -> Result<Estimate, StudyError> {
    Estimate::from_samples(v)
        .ok_or_else(|| StudyError::Run("a summary over zero runs or non-finite values".into()))
}

type Series = Vec<(f64, Estimate)>;

#[derive(Default)]
struct Agg {
    pts: BTreeMap<String, Series>,
}

impl Agg {
    fn push(&mut self, name: String, x: f64, e: Estimate) {
        self.pts.entry(name).or_default().push((x, e));
    }
    fn get(&self, name: &str) -> Series {
        self.pts.get(name).cloned().unwrap_or_default()
    }
}

fn unit_of(name: &str) -> (&'static str, &'static str) {
    let xl = if name.starts_with("rr.") {
        "RR (responses/s)"
    } else if name.starts_with("tree.") {
        "NC (receivers)"
    } else {
        "NC (children)"
    };
    let metric = name.split('.').nth(1).unwrap_or("");
    let unit = match metric {
        "t" => "packets/ms",
        "n" | "i" | "feedback" => "dimensionless",
        "hops" => "link transmissions per receiver per packet",
        "root_feedback" => "packets at the source per data packet",
        "relays" => "relays",
        "finished" | "delivery_ok" => "fraction of runs",
        "evicted" => "children",
        "acked" => "packets",
        "events" => "simulator events",
        _ => "",
    };
    (unit, xl)
}

/// Points of `s` with `lo <= x <= hi`.
fn subset(s: &Series, lo: f64, hi: f64) -> Series {
    s.iter()
        .filter(|(x, _)| *x >= lo && *x <= hi)
        .copied()
        .collect()
}

fn mean_at(s: &Series, x: f64) -> Option<f64> {
    s.iter().find(|(px, _)| *px == x).map(|(_, e)| e.mean)
}

impl Study for Prmp {
    fn name(&self) -> &'static str {
        "prmp"
    }

    fn title(&self) -> &'static str {
        "Polling-based reliable multicast (PRMP) against full feedback (Barcellos & Ezhilchelvan)"
    }

    fn source(&self) -> &'static str {
        "seed 004 (Barcellos & Ezhilchelvan): §2–3 protocol, §4 Table 1 and Figures 5–11; \
         beyond: 100–10,000 children and the multi-level tree version"
    }

    fn claims_toml(&self) -> &'static str {
        include_str!("../../../../scenarios/repro/prmp/claims.toml")
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.quick);
        let fams = plan.families();
        let mut jobs: Vec<(usize, f64, RunSpec)> = Vec::new();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                for k in 0..f.seeds {
                    let seed = mix64(mix64(fi as u64 ^ 0x0004_0000) ^ x.to_bits() ^ k);
                    jobs.push((fi, x, (f.make)(f.proto, x, seed)));
                }
            }
        }
        // The largest runs first, so the pool is not left waiting on one long tail.
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&j| core::cmp::Reverse(jobs[j].2.nc));
        let ordered: Vec<&RunSpec> = order.iter().map(|&j| &jobs[j].2).collect();
        let done = ctx.map(&ordered, |s| run_one(s));
        let mut results: Vec<Option<RunOut>> = vec![None; jobs.len()];
        for (&j, r) in order.iter().zip(done) {
            results[j] = Some(r.map_err(StudyError::Run)?);
        }

        // Beyond the paper: single-level against multi-level PRMP on transit–stub graphs.
        let mut tjobs: Vec<TreeSpec> = Vec::new();
        for multi in [false, true] {
            for &x in &plan.tree {
                for k in 0..plan.tree_seeds {
                    // The same graphs and receiver placements for both versions.
                    tjobs.push(TreeSpec {
                        nc: x as usize,
                        multi,
                        packets: PACKETS,
                        limit: Duration::from_secs(600),
                        seed: mix64(0x7ee0_0000 ^ x.to_bits() ^ k),
                    });
                }
            }
        }
        let touts: Vec<TreeOut> = ctx
            .map(&tjobs, run_tree)
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(StudyError::Run)?;

        let mut agg = Agg::default();
        let mut bad: Vec<String> = Vec::new();
        for multi in [false, true] {
            let key = if multi { "multi" } else { "single" };
            for &x in &plan.tree {
                let runs: Vec<(&TreeSpec, &TreeOut)> = tjobs
                    .iter()
                    .zip(&touts)
                    .filter(|(j, _)| j.multi == multi && j.nc as f64 == x)
                    .collect();
                let col = |g: &dyn Fn(&TreeOut) -> f64| -> Vec<f64> {
                    runs.iter().map(|(_, o)| g(o)).collect()
                };
                let items: Vec<(&str, Vec<f64>)> = vec![
                    ("t", col(&|o| o.t)),
                    ("hops", col(&|o| o.hops)),
                    ("i", col(&|o| o.i)),
                    ("root_feedback", col(&|o| o.root_feedback)),
                    ("relays", col(&|o| o.relays as f64)),
                    ("finished", col(&|o| f64::from(u8::from(o.finished)))),
                    ("delivery_ok", col(&|o| f64::from(u8::from(o.delivery_ok)))),
                    ("events", col(&|o| o.events as f64)),
                ];
                for (name, v) in items {
                    agg.push(format!("tree.{name}.{key}"), x, est(&v)?);
                }
                for (j, o) in &runs {
                    if !o.delivery_ok {
                        bad.push(format!("tree {key} NC={} seed {:#x}", j.nc, j.seed));
                    }
                }
            }
        }
        let mut unfinished: Vec<String> = Vec::new();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                let runs: Vec<(&RunSpec, RunOut)> = jobs
                    .iter()
                    .zip(&results)
                    .filter(|((j, jx, _), _)| *j == fi && *jx == x)
                    .filter_map(|((_, _, s), o)| o.map(|o| (s, o)))
                    .collect();
                let col = |g: &dyn Fn(&RunOut) -> f64| -> Vec<f64> {
                    runs.iter().map(|(_, o)| g(o)).collect()
                };
                let p = f.proto.key();
                let items: Vec<(&str, Vec<f64>)> = vec![
                    ("t", col(&|o| o.t)),
                    ("n", col(&|o| o.n)),
                    ("i", col(&|o| o.i)),
                    ("feedback", col(&|o| o.feedback)),
                    ("finished", col(&|o| f64::from(u8::from(o.finished)))),
                    ("delivery_ok", col(&|o| f64::from(u8::from(o.delivery_ok)))),
                    ("evicted", col(&|o| o.evicted as f64)),
                    ("acked", col(&|o| o.acked as f64)),
                    ("events", col(&|o| o.events as f64)),
                ];
                for (name, v) in items {
                    agg.push(format!("{}.{name}.{p}", f.key), x, est(&v)?);
                }
                for (s, o) in &runs {
                    if !o.delivery_ok {
                        bad.push(format!("{} {} NC={} seed {:#x}", f.key, p, s.nc, s.seed));
                    }
                    if !o.finished {
                        unfinished.push(format!(
                            "{} {} x={x} ({} of {} packets acknowledged in {} s)",
                            f.key,
                            f.proto.label(),
                            o.acked,
                            s.packets,
                            s.limit.as_secs()
                        ));
                    }
                }
            }
        }

        let mut m = Measures::new();
        for (name, pts) in &agg.pts {
            let (unit, xl) = unit_of(name);
            m.series(name.clone(), unit, xl, pts.clone());
        }
        derived(&mut m, &agg, &plan)?;
        let all_ok: Vec<f64> = results
            .iter()
            .flatten()
            .map(|o| o.delivery_ok)
            .chain(touts.iter().map(|o| o.delivery_ok))
            .map(|ok| f64::from(u8::from(ok)))
            .collect();
        m.scalar("runs.delivery_ok", "fraction of runs", est(&all_ok)?);
        let paper_unfinished = jobs
            .iter()
            .zip(&results)
            .filter(|((_, _, s), o)| s.limit.as_secs() == 3600 && o.is_some_and(|o| !o.finished))
            .count();
        m.scalar(
            "runs.paper_unfinished",
            "runs",
            Estimate::exact(paper_unfinished as f64),
        );

        let plots = plots(ctx, &agg)?;
        let mut notes = notes(&agg, &plan);
        if !bad.is_empty() {
            notes.push(format!(
                "Runs whose delivery check failed (a child that was not removed did not deliver \
                 every packet, or delivered more): {}.",
                bad.join("; ")
            ));
        }
        if !unfinished.is_empty() {
            notes.push(format!(
                "Runs that did not finish within their simulated-time limit: {}.",
                unfinished.join("; ")
            ));
        }
        Ok(StudyOutput {
            setup: setup(&plan, jobs.len()),
            measures: m,
            plots,
            notes,
        })
    }
}

fn diff(a: &Series, b: &Series) -> Series {
    a.iter()
        .filter_map(|(x, ea)| mean_at(b, *x).map(|vb| (*x, Estimate::exact(ea.mean - vb))))
        .collect()
}

fn over(a: &Series, b: &Series) -> Series {
    a.iter()
        .filter_map(|(x, ea)| {
            mean_at(b, *x)
                .filter(|&vb| vb != 0.0)
                .map(|vb| (*x, Estimate::exact(ea.mean / vb)))
        })
        .collect()
}

/// Derived measures the claims need (sub-ranges, ratios and differences of the means).
fn derived(m: &mut Measures, agg: &Agg, plan: &Plan) -> Result<(), StudyError> {
    let get = |cfg: &str, metric: &str, p: Proto| agg.get(&format!("{cfg}.{metric}.{}", p.key()));
    let nc = "NC (children)";
    let rrx = "RR (responses/s)";
    // Sub-ranges of the LAN curves the paper talks about.
    for p in [Proto::Pf, Proto::PfIw, Proto::FfIwIt] {
        m.series(
            format!("lan.t.{}.nc15_40", p.key()),
            "packets/ms",
            nc,
            subset(&get("lan", "t", p), 15.0, 40.0),
        );
    }
    for p in [Proto::Pf, Proto::PfIw] {
        let t = get("lan", "t", p);
        m.series(
            format!("lan.t.{}.nc_le8", p.key()),
            "packets/ms",
            nc,
            subset(&t, 0.0, 8.0),
        );
        m.series(
            format!("lan.t.{}.nc_ge15", p.key()),
            "packets/ms",
            nc,
            subset(&t, 15.0, f64::INFINITY),
        );
        for cfg in ["lan", "hybrid"] {
            m.series(
                format!("{cfg}.n.{}.nc_ge10", p.key()),
                "dimensionless",
                nc,
                subset(&get(cfg, "n", p), 10.0, f64::INFINITY),
            );
        }
        m.series(
            format!("lan.n.{}.nc_ge40", p.key()),
            "dimensionless",
            nc,
            subset(&get("lan", "n", p), 40.0, f64::INFINITY),
        );
    }
    m.series(
        "lan.n.ff_iw_minus_ff_iw_it",
        "dimensionless",
        nc,
        diff(
            &get("lan", "n", Proto::FfIw),
            &get("lan", "n", Proto::FfIwIt),
        ),
    );
    let at_paper: Series = get("lan", "i", Proto::Pf)
        .into_iter()
        .filter(|(x, _)| *x == 20.0 || *x == 60.0)
        .collect();
    m.series("lan.i.pf.at_20_60", "dimensionless", nc, at_paper);
    for cfg in ["lan", "hybrid"] {
        let v: Vec<f64> = subset(&get(cfg, "n", Proto::PfIw), 10.0, f64::INFINITY)
            .iter()
            .map(|(_, e)| e.mean)
            .collect();
        if !v.is_empty() {
            m.scalar(
                format!("{cfg}.n.pf_iw.mean_nc_ge10"),
                "dimensionless",
                Estimate::exact(v.iter().sum::<f64>() / v.len() as f64),
            );
        }
    }
    // T(largest NC)/T(smallest NC) at the group sizes every LAN family ran (FF's).
    let lo = plan.lan_ff.first().copied().unwrap_or(2.0);
    let hi = plan.lan_ff.last().copied().unwrap_or(60.0);
    for p in Proto::ALL {
        let t = get("lan", "t", p);
        if let (Some(a), Some(b)) = (mean_at(&t, lo), mean_at(&t, hi)) {
            if a > 0.0 {
                m.scalar(
                    format!("lan.t_kept.{}", p.key()),
                    "dimensionless",
                    Estimate::exact(b / a),
                );
            }
        }
    }
    // Share of FF's throughput loss (smallest → largest NC) that FF-IW-IT, which has no
    // implosion, does not suffer.
    let (ff, it) = (get("lan", "t", Proto::Ff), get("lan", "t", Proto::FfIwIt));
    if let (Some(f0), Some(f1), Some(i1)) = (mean_at(&ff, lo), mean_at(&ff, hi), mean_at(&it, hi)) {
        if f0 > f1 {
            m.scalar(
                "lan.ff_loss_share_implosion",
                "dimensionless",
                Estimate::exact((i1 - f1) / (f0 - f1)),
            );
        }
    }
    // HYBRID: FF-IW over FF at the smallest and the largest NC both ran.
    let ratio = over(
        &get("hybrid", "t", Proto::FfIw),
        &get("hybrid", "t", Proto::Ff),
    );
    if let (Some(first), Some(last)) = (ratio.first(), ratio.last()) {
        m.scalar("hybrid.t_ff_iw_over_ff.small_nc", "dimensionless", first.1);
        m.scalar("hybrid.t_ff_iw_over_ff.large_nc", "dimensionless", last.1);
    }
    m.series(
        "hybrid.i.ff_iw_minus_ff",
        "dimensionless",
        nc,
        diff(
            &get("hybrid", "i", Proto::FfIw),
            &get("hybrid", "i", Proto::Ff),
        ),
    );
    m.series(
        "hybrid.n.ff_iw_minus_ff",
        "dimensionless",
        nc,
        diff(
            &get("hybrid", "n", Proto::FfIw),
            &get("hybrid", "n", Proto::Ff),
        ),
    );
    // The RR sweep (LAN, NC = 60). FF-IW-IT does not poll, so its LAN NC = 60 runs are the
    // reference for Figures 10 and 11.
    let it60_n = mean_at(&get("lan", "n", Proto::FfIwIt), 60.0);
    let it60_t = mean_at(&get("lan", "t", Proto::FfIwIt), 60.0);
    for p in [Proto::Pf, Proto::PfIw] {
        if let Some(r) = it60_n.filter(|&v| v > 0.0) {
            let s: Series = get("rr", "n", p)
                .iter()
                .map(|(x, e)| (*x, Estimate::exact(e.mean / r)))
                .collect();
            m.series(
                format!("rr.n_over_ff_iw_it.{}", p.key()),
                "dimensionless",
                rrx,
                s,
            );
        }
        let t = get("rr", "t", p);
        if let Some((x, _)) = t.iter().max_by(|a, b| a.1.mean.total_cmp(&b.1.mean)) {
            m.scalar(
                format!("rr.t_peak_rr.{}", p.key()),
                "responses/s",
                Estimate::exact(*x),
            );
        }
        m.series(
            format!("rr.t.{}.le_itr", p.key()),
            "packets/ms",
            rrx,
            subset(&t, 0.0, ITR),
        );
        m.series(
            format!("rr.t.{}.ge_itr", p.key()),
            "packets/ms",
            rrx,
            subset(&t, ITR, f64::INFINITY),
        );
    }
    if let Some(v) = it60_t {
        let s: Series = plan
            .rr
            .iter()
            .filter(|&&x| (600.0..=ITR).contains(&x))
            .map(|&x| (x, Estimate::exact(v)))
            .collect();
        m.series("rr.t.ff_iw_it_nc60.600_1500", "packets/ms", rrx, s);
        m.series(
            "rr.t.pf_iw.600_1500",
            "packets/ms",
            rrx,
            subset(&get("rr", "t", Proto::PfIw), 600.0, ITR),
        );
    }
    // Beyond the paper: FF's analytic ceiling ITR/NC (every packet needs NC ACKs through a
    // parent that takes ITR per second).
    let bound: Series = plan
        .scale
        .iter()
        .map(|&x| (x, Estimate::exact(ITR / 1000.0 / x)))
        .collect();
    m.series("analytic.scale.ff_ceiling", "packets/ms", nc, bound);
    Ok(())
}

fn plots(ctx: &RunCtx<'_>, agg: &Agg) -> Result<Vec<Plot>, StudyError> {
    let mut out = Vec::new();
    let nc_axis = || Axis::new("number of children NC", "count");
    let figs: [(&str, &str, &str, &str, &str, Axis); 6] = [
        (
            "fig5",
            "lan",
            "t",
            "Figure 5: throughput T in the LAN configuration",
            "T = DP/Δt",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "fig6",
            "lan",
            "n",
            "Figure 6: relative network cost N in the LAN configuration",
            "N = TP/(NC·DP)",
            Axis::new("relative network cost N", "dimensionless"),
        ),
        (
            "fig7",
            "hybrid",
            "i",
            "Figure 7: relative implosion losses I in the HYBRID configuration",
            "I = implosion losses/(NC·DP)",
            Axis::new("relative implosion losses I", "dimensionless"),
        ),
        (
            "fig8",
            "hybrid",
            "t",
            "Figure 8: throughput T in the HYBRID configuration",
            "T = DP/Δt",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "fig9",
            "hybrid",
            "n",
            "Figure 9: relative network cost N in the HYBRID configuration",
            "N = TP/(NC·DP); the paper plots it on a log scale",
            Axis::new("relative network cost N", "dimensionless"),
        ),
        (
            "lan-i",
            "lan",
            "i",
            "Relative implosion losses I in the LAN configuration (§4 text)",
            "I = implosion losses/(NC·DP); diamonds: the two values §4 gives for PF",
            Axis::new("relative implosion losses I", "dimensionless"),
        ),
    ];
    for (id, cfg, metric, title, what, y) in figs {
        let mut series: Vec<PlotSeries> = Proto::ALL
            .iter()
            .map(|&p| {
                PlotSeries::measured(
                    p.label(),
                    p.color(),
                    &agg.get(&format!("{cfg}.{metric}.{}", p.key())),
                )
            })
            .collect();
        if id == "lan-i" {
            series.push(PlotSeries::paper(
                "paper PF (§4 text)",
                Proto::Pf.color(),
                &ctx.paper("lan_i_pf")?.points(),
            ));
        }
        out.push(Plot {
            id: format!("prmp-{id}"),
            title: title.into(),
            caption: format!(
                "{what}; mean and 95 % CI across runs. 1000 packets of 1 KB, IPG 1 ms, \
                 S = 64 (PF, FF) or 1000 (-IW), response buffer 16 at ITR = 1500/s (none for \
                 FF-IW-IT). The seed's figures carry no numbers in its text, so only the \
                 values its text states are drawn as diamonds."
            ),
            x: nc_axis(),
            y,
            series,
        });
    }
    for (id, metric, title, y) in [
        (
            "fig10",
            "t",
            "Figure 10: effect of RR on throughput T (LAN, NC = 60)",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "fig11",
            "n",
            "Figure 11: effect of RR on relative network cost N (LAN, NC = 60)",
            Axis::new("relative network cost N", "dimensionless"),
        ),
    ] {
        let mut series = vec![
            PlotSeries::measured("PF", 0, &agg.get(&format!("rr.{metric}.pf"))),
            PlotSeries::measured("PF-IW", 1, &agg.get(&format!("rr.{metric}.pf_iw"))),
        ];
        let it = agg.get(&format!("lan.{metric}.ff_iw_it"));
        if let Some(v) = mean_at(&it, 60.0) {
            let rr = agg.get(&format!("rr.{metric}.pf"));
            let line: Vec<(f64, f64)> = rr.iter().map(|(x, _)| (*x, v)).collect();
            series.push(PlotSeries::bound(
                "FF-IW-IT (no RR; LAN NC = 60 runs)",
                4,
                &line,
            ));
        }
        out.push(Plot {
            id: format!("prmp-{id}"),
            title: title.into(),
            caption: "PRMP's response rate RR swept at ITR = 1500/s, 60 LAN children; mean and \
                      95 % CI across runs; dashed: FF-IW-IT, which does not poll, at NC = 60."
                .into(),
            x: Axis::new("response rate RR", "responses/s"),
            y,
            series,
        });
    }
    for (metric, title, y) in [
        (
            "t",
            "Beyond the paper: throughput T with 100 to 10,000 LAN children",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "n",
            "Beyond the paper: relative network cost N with 100 to 10,000 LAN children",
            Axis::new("relative network cost N", "dimensionless"),
        ),
    ] {
        let series = [Proto::Pf, Proto::PfIw, Proto::Ff, Proto::FfIwIt]
            .iter()
            .map(|&p| {
                PlotSeries::measured(
                    p.label(),
                    p.color(),
                    &agg.get(&format!("scale.{metric}.{}", p.key())),
                )
            })
            .collect();
        out.push(Plot {
            id: format!("prmp-scale-{metric}"),
            title: title.into(),
            caption: "LAN star, §4's settings; a run that does not finish within 600 simulated \
                      seconds counts the packets acknowledged by then (T is then a lower bound)."
                .into(),
            x: nc_axis(),
            y,
            series,
        });
    }
    for (metric, title, y) in [
        ("t", "Beyond the paper: single-level vs multi-level PRMP on a transit–stub graph, throughput", Axis::new("throughput T", "packets/ms")),
        ("root_feedback", "Beyond the paper: feedback arriving at the source, single-level vs multi-level", Axis::new("packets at the source per data packet", "dimensionless")),
        ("i", "Beyond the paper: implosion losses at all parents, single-level vs multi-level", Axis::new("implosion losses / (NC·DP)", "dimensionless")),
    ] {
        out.push(Plot {
            id: format!("prmp-tree-{}", metric.replace('_', "-")),
            title: title.into(),
            caption: "GT-ITM-style transit–stub graph (100 routers: 4 transit, 12 stub domains \
                      of 8), receivers on random stub routers over LAN-class access links; PF \
                      (S = 64, RR = ITR = 1500/s) from the source to every receiver, or one \
                      relay per stub domain polling the rest of its domain. Mean and 95 % CI."
                .into(),
            x: Axis::new("number of receivers NC", "count"),
            y,
            series: vec![
                PlotSeries::measured("single-level PF", 0, &agg.get(&format!("tree.{metric}.single"))),
                PlotSeries::measured("multi-level PF (relay per stub domain)", 1, &agg.get(&format!("tree.{metric}.multi"))),
            ],
        });
    }
    Ok(out)
}

fn fmt_series(s: &Series) -> String {
    s.iter()
        .map(|(x, e)| {
            format!(
                "{}: {} ± {}",
                crate::claim::fmt_num(*x),
                crate::claim::fmt_num(e.mean),
                crate::claim::fmt_num(e.sd)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn notes(agg: &Agg, plan: &Plan) -> Vec<String> {
    let mut v = vec![format!(
        "Each point is the mean of {} runs (seeds derived from the point) with its 95 % \
         confidence interval; §4 ran 10–20 runs per point.",
        plan.seeds
    )];
    for cfg in ["lan", "hybrid", "rr", "scale"] {
        for metric in ["t", "n", "i", "feedback", "evicted", "acked"] {
            for p in Proto::ALL {
                let name = format!("{cfg}.{metric}.{}", p.key());
                let s = agg.get(&name);
                if !s.is_empty() {
                    v.push(format!("{name}: {}.", fmt_series(&s)));
                }
            }
        }
    }
    for metric in ["t", "hops", "i", "root_feedback", "relays"] {
        for key in ["single", "multi"] {
            let name = format!("tree.{metric}.{key}");
            v.push(format!("{name}: {}.", fmt_series(&agg.get(&name))));
        }
    }
    if plan.quick {
        v.push(
            "Quick mode: fewer group sizes and RR values, 4 runs per point, scale runs at \
             NC = 100 only."
                .into(),
        );
    }
    v
}

fn setup(plan: &Plan, runs: usize) -> Setup {
    Setup {
        summary: format!(
            "{runs} simulations: PF, PF-IW, FF, FF-IW and FF-IW-IT on the LAN and HYBRID stars \
             of §4 ({} and {} group sizes), the RR sweep of Figures 10–11 at NC = 60, and \
             beyond the paper PF, PF-IW, FF and FF-IW-IT with {} children.",
            plan.lan.len(),
            plan.hybrid.len(),
            plan
                .scale
                .iter()
                .map(|x| crate::claim::fmt_num(*x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        topology: "A star: the parent in the middle, each child on its own link of a Table 1 class \
                   (LAN: L = 1.5 ms, SD 0.08 ms, Err 1 %; INTERLAN: 5 ms, 0.5 ms, 1 %; WAN: 75 ms, \
                   15 ms, 10 %); HYBRID assigns LAN, INTERLAN, WAN in turn (NC/3 of each for the \
                   multiples of 3 used). One-way latency Normal(L, SD) per packet, clamped at 0, \
                   FIFO per direction; no bandwidth limit."
            .into(),
        parameters: vec![
            ("DP".into(), format!("{PACKETS} packets of {PACKET_BYTES} bytes")),
            ("IPG".into(), "1 ms".into()),
            ("S".into(), "64 (PF, FF); 1000 = all packets (PF-IW, FF-IW, FF-IW-IT)".into()),
            ("ε".into(), "10 ms".into()),
            ("RR".into(), "1500/s = ITR (swept in Figs. 10–11)".into()),
            ("MTR".into(), "20 %".into()),
            ("implosion".into(), "16-packet response buffer at the parent served at 1500/s; none for FF-IW-IT".into()),
            ("Err".into(), "independent Bernoulli per packet per link direction, every packet kind".into()),
            ("runs per point".into(), plan.seeds.to_string()),
        ],
        choices: vec![
            ("bandwidth".into(), "unlimited: §4 models links by latency and error only".into()),
            ("L".into(), "one-way latency (RTT ≈ 2L)".into()),
            ("N's TP".into(), "every packet crossing a parent–child link, a multicast counted once per child and lost copies included; so the ideal N is (DP+1)/DP (§4 prints DP/(DP+1), read as the same one-ack-per-child ideal)".into()),
            ("RTT before the first response".into(), "100 ms, RTO floor 1 ms (both protocols)".into()),
            ("silent polls before removal".into(), "10".into()),
            ("FF-IW-IT".into(), "the FF-IW agent with the parent's response buffer removed".into()),
            ("HYBRID group sizes".into(), "multiples of 3 so every class has exactly NC/3 children".into()),
            ("scale runs".into(), "LAN star, 600 simulated seconds at most".into()),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_delivers_everything_on_a_small_lan_star() {
        for p in Proto::ALL {
            let mut s = RunSpec::paper(p, LinkClass::Lan, 5, 7);
            s.packets = 200;
            let o = run_one(&s).unwrap();
            assert!(o.finished, "{p:?}");
            assert!(o.delivery_ok, "{p:?}");
            assert_eq!(o.acked, 200, "{p:?}");
            assert!(o.t > 0.0 && o.t <= 1.0, "{p:?}: T = {}", o.t);
            // Every packet reaches every child at least once: N >= 1.
            assert!(o.n >= 1.0, "{p:?}: N = {}", o.n);
        }
    }

    #[test]
    fn ff_it_has_no_implosion_losses_and_pf_fewer_responses_than_ff() {
        let mut a = RunSpec::paper(Proto::FfIwIt, LinkClass::Lan, 30, 3);
        a.packets = 300;
        let it = run_one(&a).unwrap();
        assert_eq!(it.i, 0.0);
        // FF: one ACK per packet per child (minus losses).
        assert!(it.feedback > 0.9, "{}", it.feedback);
        a.proto = Proto::Pf;
        let pf = run_one(&a).unwrap();
        assert!(
            pf.feedback < 0.3 * it.feedback,
            "{} vs {}",
            pf.feedback,
            it.feedback
        );
    }

    #[test]
    fn tree_and_single_level_deliver_everything_on_a_transit_stub_graph() {
        for multi in [false, true] {
            let s = TreeSpec {
                nc: 40,
                multi,
                packets: 150,
                limit: Duration::from_secs(600),
                seed: 4,
            };
            let o = run_tree(&s).unwrap();
            assert!(o.finished && o.delivery_ok, "multi = {multi}: {o:?}");
            assert_eq!(o.relays > 0, multi);
            assert!(o.t > 0.0 && o.t <= 1.0);
        }
    }

    #[test]
    fn runs_are_deterministic() {
        let mut s = RunSpec::paper(Proto::Pf, LinkClass::Hybrid, 9, 5);
        s.packets = 150;
        let a = run_one(&s).unwrap();
        let b = run_one(&s).unwrap();
        assert_eq!(a.dt_ms, b.dt_ms);
        assert_eq!(a.n, b.n);
        assert_eq!(a.events, b.events);
    }
}

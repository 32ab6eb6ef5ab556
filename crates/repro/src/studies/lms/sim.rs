//! Building and running one seed-003 run: a placement (network, source, receivers, the
//! source's tree), a scheme, a loss site, and what the run measured.

use core::time::Duration;
use rmcast_proto::deploy::{Layout, MemberDistances};
use rmcast_proto::{Event, GroupId, NodeId, Time};
use rmcast_sim::registry::{install_scheme, member_distances, source_tree, tree_routers, TreeNode};
use rmcast_sim::{KindFilter, LossModel, LossRule, LossSite, Network, Sim, Stop, Traffic};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

pub const G: GroupId = GroupId(1);
/// Link bandwidth of every link (seed 003 §5.6).
pub const BANDWIDTH: u64 = 1_500_000;
/// Application message size (the seed's largest, 1024 bytes).
pub const SIZE: usize = 1024;
/// Source rate: one message every 100 ms (10 packets/s).
pub const INTERVAL: Duration = Duration::from_millis(100);
/// The original data packet dropped is the `DROP_K`-th to cross the loss site (t = 3.0 s,
/// after SRM's session messages have measured distances).
pub const DROP_K: u64 = 31;
/// Datagram lengths used for the round-trip time (a request and a 1024-byte repair,
/// header included).
pub const REQ_LEN: u64 = 40;
pub const REP_LEN: u64 = 1064;

/// The three schemes (and SRM's variants): the simulator's.
pub use rmcast_sim::Scheme;

/// A network with a source and receivers placed on it, plus the source's tree.
pub struct Placement {
    /// The network, hosts attached.
    pub net: Network,
    /// The source's host.
    pub source: NodeId,
    /// The receivers' hosts.
    pub receivers: Vec<NodeId>,
    /// The source's shortest-path tree, by node.
    pub tree: Vec<Option<TreeNode>>,
    /// Round-trip time of each receiver to the source, seconds (same order as `receivers`).
    pub rtt: Vec<f64>,
    /// Links of the multicast tree: (link, upper end, class).
    pub tree_links: Vec<(usize, NodeId, String)>,
    /// Topology index (x of per-topology plots).
    pub topo_index: usize,
    /// Seed of the placement (runs derive theirs from it: [`run_seed`](super::run_seed)).
    pub seed: u64,
    srm_dist: OnceLock<Vec<BTreeMap<NodeId, Duration>>>,
}

fn tx_secs(len: u64, bw: u64) -> f64 {
    if bw == 0 {
        0.0
    } else {
        (len * 8) as f64 / bw as f64
    }
}

impl Placement {
    /// `net` with `source` and `receivers` placed (topology `topo_index`, placement `seed`):
    /// the source's tree, each receiver's RTT and the tree links; an error names a receiver
    /// the source cannot reach.
    pub fn new(
        net: Network,
        source: NodeId,
        receivers: Vec<NodeId>,
        topo_index: usize,
        seed: u64,
    ) -> Result<Placement, String> {
        let tree = source_tree(&net, source);
        let mut rtt = Vec::with_capacity(receivers.len());
        let mut links: BTreeMap<usize, (NodeId, String)> = BTreeMap::new();
        for &r in &receivers {
            let Some(Some(t)) = tree.get(r.0 as usize) else {
                return Err(format!("receiver {r:?} is unreachable from the source"));
            };
            // Walk up: per-hop transmission times and tree links.
            let mut per_hop = 0.0;
            let mut x = r;
            while let Some(Some(TreeNode {
                up: Some((p, link)),
                ..
            })) = tree.get(x.0 as usize)
            {
                let bw = net.link(*link).map_or(0, |(_, _, c)| c.bandwidth_bps);
                per_hop += tx_secs(REQ_LEN, bw) + tx_secs(REP_LEN, bw);
                let class = net
                    .link(*link)
                    .map_or(String::new(), |(_, _, c)| c.class.to_string());
                links.entry(*link).or_insert((*p, class));
                x = *p;
            }
            rtt.push(2.0 * t.dist_ns as f64 / 1e9 + per_hop);
        }
        Ok(Placement {
            net,
            source,
            receivers,
            tree,
            rtt,
            tree_links: links.into_iter().map(|(l, (u, c))| (l, u, c)).collect(),
            topo_index,
            seed,
            srm_dist: OnceLock::new(),
        })
    }

    /// The link into receiver `r` from its parent.
    pub fn receiver_link(&self, r: NodeId) -> Option<(usize, NodeId)> {
        self.tree
            .get(r.0 as usize)
            .copied()
            .flatten()
            .and_then(|t| t.up)
            .map(|(p, l)| (l, p))
    }

    /// The source's own link (first hop).
    pub fn source_link(&self) -> Option<(usize, NodeId)> {
        self.tree_links
            .iter()
            .find(|(_, u, _)| *u == self.source)
            .map(|&(l, u, _)| (l, u))
    }

    /// Distances between members along the simulator's shortest paths (computed once).
    fn srm_distances(&self) -> &[BTreeMap<NodeId, Duration>] {
        self.srm_dist.get_or_init(|| {
            let mut members = vec![self.source];
            members.extend(&self.receivers);
            member_distances(&self.net, &members)
        })
    }
}

/// Where one run loses original data: a link direction, and which crossings are dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct LossSpec {
    /// The link.
    pub link: usize,
    /// The end the dropped packets enter it from.
    pub from: NodeId,
    /// 1-based indices of the original data packets crossing the site that are dropped.
    pub ks: Vec<u64>,
}

/// How long a run lasts and how much data the source sends.
#[derive(Debug, Clone, Copy)]
pub struct RunShape {
    /// Original messages the source sends.
    pub messages: u64,
    /// When the run stops.
    pub stop: Time,
    /// The loss sites also drop every repair that crosses them (the `repairs_lost` mutant
    /// only): a receiver behind one can never recover.
    pub lose_repairs: bool,
}

pub const SINGLE: RunShape = RunShape {
    messages: 40,
    stop: Time::from_secs(9),
    lose_repairs: false,
};

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RunOut {
    /// Drops that happened.
    pub drops: u64,
    /// Normalized recovery latency of every (receiver, lost packet) recovered: the receiver
    /// is below the link that dropped the packet ([`lost_pairs`]), detected the loss and
    /// delivered the packet. A gap detected elsewhere (a SESSION message or SPM announcing a
    /// packet that is still on its way) is no recovery.
    pub lat: Vec<f64>,
    /// (receiver, lost packet) pairs detected but never recovered by the stop time.
    pub unrecovered: u64,
    /// Receivers that lost a packet (below a link that dropped one).
    pub lossy_receivers: u64,
    pub receivers: u64,
    /// Duplicates received by all receivers.
    pub dups: u64,
    /// Duplicates received by receivers that never missed a packet (the seed's exposure:
    /// retransmissions reaching receivers that did not need them).
    pub dups_unneeded: u64,
    /// Requests (SRM requests, PGM NAKs, LMS requests) sent by all members.
    pub requests: u64,
    /// Repairs originated by hosts (SRM: all members; PGM/LMS: source and repliers).
    pub repairs: u64,
    /// Repairs sent by the source.
    pub source_repairs: u64,
    /// Link hops of repair and of control packets.
    pub hops_repair: u64,
    pub hops_control: u64,
    /// Σ over routers of the most state entries held at once.
    pub router_state: u64,
}

/// Build the agents of `scheme` on a fresh simulation of `pl`: every member (the source too)
/// in the data group; PGM network elements and LMS routers on the routers of the source's
/// tree above a receiver (the only ones NAKs, requests and repairs cross); SRM's topology
/// variant with every member's distance to every other.
pub fn build(pl: &Placement, scheme: Scheme, seed: u64) -> Result<Sim, String> {
    let mut sim = Sim::new(pl.net.clone(), seed);
    // The runs read when each message was delivered (recovery_times), never what it held.
    sim.record_payloads(false);
    let mut layout = Layout::new(pl.source, G, &pl.receivers);
    sim.set_group(G, &layout.members())
        .map_err(|e| e.to_string())?;
    match scheme {
        Scheme::Srm { topo, .. } => {
            if topo {
                layout.distances = MemberDistances::AllPairs(pl.srm_distances());
            }
        }
        Scheme::Pgm | Scheme::Lms | Scheme::LmsAdaptive => {
            layout.routers = tree_routers(&pl.net, pl.source, &pl.receivers, false);
        }
        Scheme::Norm => {}
    }
    install_scheme(&mut sim, scheme, &layout).map_err(|e| e.to_string())?;
    Ok(sim)
}

/// The (receiver index, sequence number) pairs the drops of `loss` take from `pl`'s
/// receivers when the source sends `messages` originals: a packet dropped on a tree link is
/// lost to every receiver below it. Which packet a rule drops follows the simulator's rules:
/// `DropNth { k }` drops the k-th original data packet that reaches its site, and a site sees
/// neither a packet dropped on a link above it nor, for its later rules, one an earlier rule
/// there dropped (the loss rules of a site are asked in the order they were added).
pub fn lost_pairs(pl: &Placement, loss: &[LossSpec], messages: u64) -> BTreeSet<(usize, u64)> {
    // The tree links from `x` up to the source.
    let links_above = |mut x: NodeId| {
        let mut v = Vec::new();
        while let Some(Some(TreeNode {
            up: Some((p, l)), ..
        })) = pl.tree.get(x.0 as usize)
        {
            v.push(*l);
            x = *p;
        }
        v
    };
    let paths: Vec<Vec<usize>> = pl.receivers.iter().map(|&r| links_above(r)).collect();
    // A loss site (a tree link entered from its upper end), the links above it, and its
    // rules in the order they were added: (k, originals seen).
    struct Site {
        link: usize,
        above: Vec<usize>,
        rules: Vec<(u64, u64)>,
    }
    let on_tree = |l: &LossSpec| {
        pl.tree
            .iter()
            .flatten()
            .any(|t| t.up == Some((l.from, l.link)))
    };
    let mut sites: Vec<Site> = Vec::new();
    for l in loss.iter().filter(|l| on_tree(l)) {
        let rules = l.ks.iter().map(|&k| (k, 0));
        match sites.iter_mut().find(|s| s.link == l.link) {
            Some(s) => s.rules.extend(rules),
            None => sites.push(Site {
                link: l.link,
                above: links_above(l.from),
                rules: rules.collect(),
            }),
        }
    }
    // A packet meets the sites above before those below.
    sites.sort_by_key(|s| s.above.len());
    let mut out = BTreeSet::new();
    let mut dropped = Vec::new();
    for seq in 0..messages {
        dropped.clear();
        for s in &mut sites {
            if s.above.iter().any(|a| dropped.contains(a)) {
                continue;
            }
            for r in &mut s.rules {
                r.1 += 1;
                if r.1 == r.0 {
                    dropped.push(s.link);
                    break;
                }
            }
        }
        for (i, path) in paths.iter().enumerate() {
            if path.iter().any(|l| dropped.contains(l)) {
                out.insert((i, seq));
            }
        }
    }
    out
}

/// One run of `scheme` on `pl` as the study runs it, up to its stop: [`build`], a
/// `DropNth` rule per index of each of `loss` (original data only, cause `single_loss`, in
/// order), the source's 1024-byte messages every 100 ms. Public for tools that run the
/// study's runs elsewhere (bench/ns2's `ns2-export run-lms`).
pub fn simulate(
    pl: &Placement,
    scheme: Scheme,
    loss: &[LossSpec],
    shape: RunShape,
    seed: u64,
) -> Result<Sim, String> {
    let mut sim = build(pl, scheme, seed)?;
    for l in loss {
        for &k in &l.ks {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Link {
                        link: l.link,
                        from: Some(l.from),
                    },
                    LossModel::DropNth { k },
                )
                .filter(KindFilter::OriginalData)
                .cause("single_loss"),
            )
            .map_err(|e| e.to_string())?;
        }
        if shape.lose_repairs {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Link {
                        link: l.link,
                        from: Some(l.from),
                    },
                    LossModel::Bernoulli { p: 1.0 },
                )
                .filter(KindFilter::Repair)
                .cause("repair_lost"),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    sim.add_traffic(pl.source, Traffic::every(shape.messages, SIZE, INTERVAL))
        .map_err(|e| e.to_string())?;
    sim.run(&Stop::at(shape.stop));
    Ok(sim)
}

/// The drops that happened in a run of [`simulate`].
pub fn drops(sim: &Sim) -> u64 {
    sim.losses()
        .iter()
        .filter(|(c, _)| c == "single_loss")
        .map(|(_, n)| *n)
        .sum()
}

/// Receiver `r`'s first LossDetected and first Delivered instant of each sequence number.
pub fn recovery_times(sim: &Sim, r: NodeId) -> (BTreeMap<u64, Time>, BTreeMap<u64, Time>) {
    let mut detected: BTreeMap<u64, Time> = BTreeMap::new();
    let mut delivered: BTreeMap<u64, Time> = BTreeMap::new();
    for (t, e) in sim.events(r) {
        match e {
            Event::LossDetected { seq } => {
                detected.entry(*seq).or_insert(*t);
            }
            Event::Delivered { seq, .. } => {
                delivered.entry(*seq).or_insert(*t);
            }
            _ => {}
        }
    }
    (detected, delivered)
}

/// Run `scheme` on `pl` with the drops of `loss` (empty: the loss-free baseline).
pub fn run(
    pl: &Placement,
    scheme: Scheme,
    loss: &[LossSpec],
    shape: RunShape,
    seed: u64,
) -> Result<RunOut, String> {
    let sim = simulate(pl, scheme, loss, shape, seed)?;

    let mut out = RunOut {
        drops: drops(&sim),
        receivers: pl.receivers.len() as u64,
        ..RunOut::default()
    };
    let lost = lost_pairs(pl, loss, shape.messages);
    for (i, &r) in pl.receivers.iter().enumerate() {
        let (detected, delivered) = recovery_times(&sim, r);
        let lossy = lost.range((i, 0)..=(i, u64::MAX)).next().is_some();
        if lossy {
            out.lossy_receivers += 1;
        }
        for (seq, td) in detected {
            if !lost.contains(&(i, seq)) {
                continue;
            }
            match delivered.get(&seq) {
                Some(&tr) if tr >= td => {
                    let secs = (tr.as_nanos() - td.as_nanos()) as f64 / 1e9;
                    out.lat.push(secs / pl.rtt[i]);
                }
                _ => out.unrecovered += 1,
            }
        }
        if let Some(a) = sim.agent(r) {
            let s = a.stats();
            out.dups += s.duplicates;
            if !lossy {
                out.dups_unneeded += s.duplicates;
            }
        }
    }
    for &m in std::iter::once(&pl.source).chain(&pl.receivers) {
        if let Some(a) = sim.agent(m) {
            let s = a.stats();
            out.repairs += s.repairs_sent;
            if m == pl.source {
                out.source_repairs += s.repairs_sent;
            }
            // SRM counts requests in control_sent; PGM NAKs and LMS requests likewise (the
            // PGM/LMS sources' control_sent are NCFs/SPMs/heartbeats, not requests).
            if m != pl.source || matches!(scheme, Scheme::Srm { .. }) {
                out.requests += s.control_sent;
            }
        }
    }
    for x in pl.net.nodes_of(rmcast_sim::NodeKind::Router) {
        if let Some(a) = sim.router_agent(x) {
            out.router_state += a.peak_state_entries() as u64;
        }
    }
    let k = sim.counters();
    out.hops_repair = k.link_hops_repair;
    out.hops_control = k.link_hops_control;
    Ok(out)
}

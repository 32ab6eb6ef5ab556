//! `lms`: seed 003 (chapter 5 of the LMS thesis) — recovery in SRM, PGM and LMS after a
//! single loss of an original data packet, on binary trees, flat random graphs and
//! transit–stub graphs, with the seed's metrics (Fig. 5.1): normalized recovery latency,
//! LMS exposure, SRM requests and repairs per drop, PGM retransmissions per drop, plus
//! packets on the wire per drop and router state for every scheme; and beyond the seed,
//! SRM with 100 receivers and all three on transit–stub graphs of 10,000 and 100,000 nodes.
//!
//! Every run is one source sending 1024-byte messages at 10 packets/s over 1.5 Mb/s links;
//! the 31st original data packet to cross one link (or several, for SRM's adaptive timers)
//! is dropped; the run's events give, per receiver that detected the loss, the time from
//! detection to delivery, divided by that receiver's round-trip time to the source.

pub mod sim;
#[cfg(test)]
mod tests;

use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::mix64;
use rmcast_proto::{NodeId, Time};
use rmcast_sim::topo::{self, PlaneParams, TransitStub};
use rmcast_sim::LinkConfig;
use sim::{LossSpec, Placement, RunOut, RunShape, Scheme, DROP_K, SINGLE};
use std::collections::BTreeMap;

/// The seed 003 study.
pub struct Lms;

/// Link delay of the binary trees (not GT-ITM graphs; the seed gives none).
pub const TREE_DELAY: Duration = Duration::from_millis(10);
/// Link from a host (source or receiver) to the router it sits on.
pub const HOST_DELAY: Duration = Duration::from_millis(1);
/// GT-ITM-style plane: 100 × 100 units, 1 ms of propagation delay per unit of edge length
/// (ns-2's GT-ITM converters write a link's delay in milliseconds proportional to the edge
/// length: `sgb2comns` writes `10 * len` ms).
pub const DELAY_PER_UNIT: Duration = Duration::from_millis(1);
fn plane() -> PlaneParams {
    PlaneParams {
        bandwidth_bps: sim::BANDWIDTH,
        delay_per_unit: DELAY_PER_UNIT,
        ..PlaneParams::default()
    }
}

/// Flat random graphs (§5.6): nodes and GT-ITM edge probability.
pub const RANDOM_NODES: usize = 100;
pub const RANDOM_P: f64 = 0.1;
/// Graph `t` (random or transit–stub, t = 0..10) is generated from seed `TOPO_SEED_BASE + t`.
pub const TOPO_SEED_BASE: u64 = 0x003_0000;
/// Graphs per family in full mode (§5.6: 10 random and 10 transit–stub topologies).
pub const TOPOLOGIES: usize = 10;
/// Receivers on the random graphs (§5.6: 5, 20 and 100).
pub const RANDOM_RECEIVERS: [usize; 3] = [5, 20, 100];

/// Which links lose the packet, for one experiment.
#[derive(Debug, Clone, PartialEq)]
enum LossAt {
    /// The source's link to the network.
    Source,
    /// Each receiver's link, in turn.
    Receivers,
    /// Each link of the multicast tree, in turn.
    Links,
    /// Each tree link of one GT-ITM class, in turn.
    Class(&'static str),
}

impl LossAt {
    fn key(&self) -> &'static str {
        match self {
            LossAt::Source => "src",
            LossAt::Receivers => "rcv",
            LossAt::Links => "links",
            LossAt::Class("transit-transit") => "tt",
            LossAt::Class("transit-stub") => "ts",
            LossAt::Class(_) => "ss",
        }
    }
}

/// A family of placements (topology kind and receiver count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    /// Binary tree of height h.
    Tree(u32),
    /// Flat random graphs of 100 nodes with R receivers.
    Random(usize),
    /// The same graphs with 10× shorter link delays (100 µs per unit of distance): a
    /// sensitivity check of PGM's repeated retransmissions.
    RandomFast(usize),
    /// Transit–stub graphs of 100 nodes with R receivers.
    Ts(usize),
    /// Large transit–stub graph (nodes, receivers), beyond the seed.
    TsLarge(usize, usize),
}

/// One experiment: a scheme, a family, where the loss is, and the measure prefix.
struct Exp {
    key: String,
    scheme: Scheme,
    families: Vec<Family>,
    loss: LossAt,
    /// Drops per run at the site (1, or several for SRM's adaptive timers).
    drops: usize,
    /// At most this many loss sites per placement (evenly spread), `usize::MAX`: all.
    cap: usize,
    /// x of a run: topology index, tree height or receiver count.
    x: XOf,
}

#[derive(Debug, Clone, Copy)]
enum XOf {
    TopoIndex,
    Height,
    Receivers,
}

/// Sizes of the sweep in full and quick mode.
struct Plan {
    quick: bool,
    topologies: usize,
    placements: usize,
    heights: Vec<u32>,
    /// Loss sites per placement for "each receiver" / "each link" (MAX: all).
    site_cap: usize,
    srm_site_cap: usize,
    /// Loss sites per placement for SRM with 100 receivers (beyond the seed).
    srm100_site_cap: usize,
    /// Beyond the seed: (nodes, receivers) of the large transit–stub graphs.
    large: Vec<(usize, usize)>,
    large_sites: usize,
    srm_large_max_receivers: usize,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                quick,
                topologies: 3,
                placements: 1,
                heights: vec![3, 4, 5, 6, 7],
                site_cap: 16,
                srm_site_cap: 8,
                srm100_site_cap: 4,
                large: vec![(10_000, 100)],
                large_sites: 4,
                srm_large_max_receivers: 100,
            }
        } else {
            Plan {
                quick,
                topologies: TOPOLOGIES,
                placements: 10,
                heights: vec![3, 4, 5, 6, 7],
                site_cap: usize::MAX,
                srm_site_cap: usize::MAX,
                srm100_site_cap: 10,
                large: vec![
                    (10_000, 100),
                    (10_000, 1000),
                    (100_000, 100),
                    (100_000, 1000),
                ],
                large_sites: 20,
                srm_large_max_receivers: 1000,
            }
        }
    }

    /// Whether SRM runs on the large transit–stub graph of `nodes` with `receivers`: its
    /// topology distances cost one shortest-path computation per receiver, and every SRM
    /// request and repair reaches every member.
    fn srm_large(&self, nodes: usize, receivers: usize) -> bool {
        receivers <= self.srm_large_max_receivers && nodes * receivers <= 10_000_000
    }

    fn exps(&self) -> Vec<Exp> {
        let mut v = Vec::new();
        let trees: Vec<Family> = self.heights.iter().map(|&h| Family::Tree(h)).collect();
        let e = |key: &str, scheme, families: Vec<Family>, loss, cap, x| Exp {
            key: key.into(),
            scheme,
            families,
            loss,
            drops: 1,
            cap,
            x,
        };
        let c = self.site_cap;
        let srm = Scheme::Srm {
            adaptive: false,
            topo: false,
        };
        // LMS, binary trees (Fig. 5.4–5.7).
        for loss in [LossAt::Source, LossAt::Receivers, LossAt::Links] {
            let key = format!("lms.bt.{}", loss.key());
            v.push(e(&key, Scheme::Lms, trees.clone(), loss, c, XOf::Height));
        }
        // LMS, PGM on random graphs, 100 receivers (Fig. 5.8–5.11, 5.26–5.30).
        for (name, scheme) in [("lms", Scheme::Lms), ("pgm", Scheme::Pgm)] {
            for loss in [LossAt::Source, LossAt::Receivers, LossAt::Links] {
                let key = format!("{name}.rand.{}", loss.key());
                v.push(e(
                    &key,
                    scheme,
                    vec![Family::Random(100)],
                    loss,
                    c,
                    XOf::TopoIndex,
                ));
            }
        }
        // PGM repeated retransmissions with 10× shorter link delays (sensitivity).
        v.push(e(
            "pgm_fast.rand.src",
            Scheme::Pgm,
            vec![Family::RandomFast(100)],
            LossAt::Source,
            c,
            XOf::TopoIndex,
        ));
        // LMS, random graphs, 5 and 20 receivers, loss at links (Fig. 5.12, 5.13).
        for r in [5, 20] {
            v.push(e(
                &format!("lms.rand_r{r}.links"),
                Scheme::Lms,
                vec![Family::Random(r)],
                LossAt::Links,
                c,
                XOf::TopoIndex,
            ));
        }
        // LMS, transit–stub (Fig. 5.14–5.18).
        for loss in [
            LossAt::Class("transit-transit"),
            LossAt::Class("transit-stub"),
            LossAt::Class("stub-stub"),
            LossAt::Links,
        ] {
            let key = format!("lms.ts.{}", loss.key());
            v.push(e(
                &key,
                Scheme::Lms,
                vec![Family::Ts(100)],
                loss,
                c,
                XOf::TopoIndex,
            ));
        }
        // Beyond the seed: static against adaptive LMS repliers when the loss stays on its
        // link for 5 drops (1 s apart), random graphs with 100 receivers and transit–stub.
        for (name, scheme) in [
            ("lms_persist", Scheme::Lms),
            ("lms_adaptive", Scheme::LmsAdaptive),
        ] {
            for (fam, tag, loss) in [
                (Family::Random(100), "rand", LossAt::Receivers),
                (Family::Random(100), "rand", LossAt::Links),
                (Family::Ts(100), "ts", LossAt::Links),
            ] {
                let mut x = e(
                    &format!("{name}.{tag}.{}", loss.key()),
                    scheme,
                    vec![fam],
                    loss,
                    c,
                    XOf::TopoIndex,
                );
                x.drops = 5;
                v.push(x);
            }
        }
        // SRM, random graphs, 20 receivers (Fig. 5.19–5.23).
        for loss in [LossAt::Source, LossAt::Receivers, LossAt::Links] {
            let key = format!("srm.rand.{}", loss.key());
            v.push(e(
                &key,
                srm,
                vec![Family::Random(20)],
                loss,
                self.srm_site_cap,
                XOf::TopoIndex,
            ));
        }
        // SRM with adaptive timers (Fig. 5.24, 5.25): the loss stays on its link for 5 drops.
        for loss in [LossAt::Source, LossAt::Links] {
            let mut x = e(
                &format!("srm_adaptive.rand.{}", loss.key()),
                Scheme::Srm {
                    adaptive: true,
                    topo: false,
                },
                vec![Family::Random(20)],
                loss,
                self.srm_site_cap,
                XOf::TopoIndex,
            );
            x.drops = 5;
            v.push(x);
        }
        // Beyond the seed: SRM with 100 receivers on the same random graphs, with distances
        // from the topology (no session messages), and with ns-2's 1 s session messages.
        for loss in [LossAt::Source, LossAt::Receivers, LossAt::Links] {
            let key = format!("srm.rand_r100.{}", loss.key());
            v.push(e(
                &key,
                Scheme::Srm {
                    adaptive: false,
                    topo: true,
                },
                vec![Family::Random(100)],
                loss,
                self.srm100_site_cap,
                XOf::TopoIndex,
            ));
        }
        v.push(e(
            "srm_sessions.rand_r100.links",
            srm,
            vec![Family::Random(100)],
            LossAt::Links,
            self.srm100_site_cap,
            XOf::TopoIndex,
        ));
        // Beyond the seed: large transit–stub graphs, latency/duplicates/state vs receivers.
        let mut nodes: Vec<usize> = self.large.iter().map(|&(n, _)| n).collect();
        nodes.dedup();
        for n in nodes {
            let fams: Vec<Family> = self
                .large
                .iter()
                .filter(|&&(m, _)| m == n)
                .map(|&(m, r)| Family::TsLarge(m, r))
                .collect();
            let srm_fams: Vec<Family> = fams
                .iter()
                .copied()
                .filter(|f| matches!(f, Family::TsLarge(n, r) if self.srm_large(*n, *r)))
                .collect();
            let tag = format!("ts{}k", n / 1000);
            for (name, scheme, fams) in [
                ("lms", Scheme::Lms, fams.clone()),
                ("pgm", Scheme::Pgm, fams.clone()),
                (
                    "srm",
                    Scheme::Srm {
                        adaptive: false,
                        topo: true,
                    },
                    srm_fams,
                ),
            ] {
                if fams.is_empty() {
                    continue;
                }
                for loss in [LossAt::Source, LossAt::Links] {
                    let key = format!("beyond.{tag}.{name}.{}", loss.key());
                    v.push(e(
                        &key,
                        scheme,
                        fams.clone(),
                        loss,
                        self.large_sites,
                        XOf::Receivers,
                    ));
                }
            }
        }
        v
    }
}

/// Build every placement a family needs.
fn placements(plan: &Plan, fam: Family) -> Result<Vec<Placement>, String> {
    let host = LinkConfig::new(sim::BANDWIDTH, HOST_DELAY);
    let mut out = Vec::new();
    match fam {
        Family::Tree(h) => {
            let link = LinkConfig::new(sim::BANDWIDTH, TREE_DELAY);
            let (net, source, receivers) = sim::binary_tree(h, &link)?;
            out.push(Placement::new(net, source, receivers, h as usize, 0)?);
        }
        Family::Random(r) | Family::RandomFast(r) | Family::Ts(r) => {
            for t in 0..plan.topologies {
                let tseed = TOPO_SEED_BASE + t as u64;
                let base = match fam {
                    Family::Random(_) => topo::flat_random(RANDOM_NODES, RANDOM_P, &plane(), tseed),
                    Family::RandomFast(_) => {
                        let p = PlaneParams {
                            delay_per_unit: DELAY_PER_UNIT / 10,
                            ..plane()
                        };
                        topo::flat_random(RANDOM_NODES, RANDOM_P, &p, tseed)
                    }
                    _ => topo::transit_stub(&TransitStub::default(), &plane(), tseed),
                }
                .map_err(|e| e.to_string())?;
                for p in 0..plan.placements {
                    let pseed = mix64(tseed ^ ((p as u64) << 20) ^ ((r as u64) << 40));
                    let mut tp = base.clone();
                    attach_random(&mut tp, r, &host, pseed)?;
                    out.push(Placement::new(tp.net, tp.source, tp.receivers, t, pseed)?);
                }
            }
        }
        Family::TsLarge(n, r) => {
            let ts = large_ts(n);
            let tseed = 0x003_1000 + n as u64;
            let mut tp = topo::transit_stub(&ts, &plane(), tseed).map_err(|e| e.to_string())?;
            let pseed = mix64(tseed ^ ((r as u64) << 40));
            attach_random(&mut tp, r, &host, pseed)?;
            out.push(Placement::new(tp.net, tp.source, tp.receivers, 0, pseed)?);
        }
    }
    Ok(out)
}

/// Attach the source and `receivers` receiver hosts to attach points drawn uniformly at
/// random *with* replacement (seed 003 §5.6: receivers "randomly distributed on the internal
/// nodes"; several may share a router, and the source's router need not hold a receiver),
/// each over its own `host_link` (the scenario files' `placement = "with_replacement"`).
fn attach_random(
    topo: &mut topo::Topology,
    receivers: usize,
    host_link: &LinkConfig,
    seed: u64,
) -> Result<(), String> {
    topo::attach_hosts_with_replacement(topo, receivers, host_link, seed).map_err(|e| e.to_string())
}

/// GT-ITM parameters scaled to about `n` nodes: stub domains of 8 nodes as in the seed,
/// 50 stub domains per transit node, transit nodes = round(n / 401) (25 → 10,025 nodes;
/// 249 → 99,849 nodes), transit edge probability chosen for a mean transit degree of about 4.
pub fn large_ts(n: usize) -> TransitStub {
    let stubs = 50;
    let transit = ((n as f64 / (1 + stubs * 8) as f64).round() as usize).max(2);
    TransitStub {
        transit_domains: 1,
        transit_nodes: transit,
        stubs_per_transit: stubs,
        stub_nodes: 8,
        p_transit: (4.0 / (transit as f64 - 1.0)).min(1.0),
        p_stub: 0.4,
    }
}

/// Loss sites of one experiment on one placement.
fn sites(pl: &Placement, loss: &LossAt, cap: usize, drops: usize) -> Vec<LossSpec> {
    let ks: Vec<u64> = (0..drops as u64).map(|i| DROP_K + 10 * i).collect();
    let all: Vec<(usize, NodeId)> = match loss {
        LossAt::Source => pl.source_link().into_iter().collect(),
        LossAt::Receivers => pl
            .receivers
            .iter()
            .filter_map(|&r| pl.receiver_link(r))
            .collect(),
        LossAt::Links => pl.tree_links.iter().map(|&(l, u, _)| (l, u)).collect(),
        LossAt::Class(c) => pl
            .tree_links
            .iter()
            .filter(|(_, _, k)| k == c)
            .map(|&(l, u, _)| (l, u))
            .collect(),
    };
    spread(&all, cap, pl.seed ^ 0x5157)
        .into_iter()
        .map(|(link, from)| LossSpec {
            link,
            from,
            ks: ks.clone(),
        })
        .collect()
}

/// At most `cap` items of `v`, a pseudo-random sample fixed by `seed` (all of them when
/// `cap >= len`), in their original order. (An evenly spaced pick would follow the order
/// links were created in — on a binary tree every other link is a left child.)
fn spread<T: Clone>(v: &[T], cap: usize, seed: u64) -> Vec<T> {
    if cap >= v.len() {
        return v.to_vec();
    }
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by_key(|&i| mix64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    idx.truncate(cap);
    idx.sort_unstable();
    idx.into_iter().map(|i| v[i].clone()).collect()
}

fn shape(drops: usize) -> RunShape {
    if drops <= 1 {
        SINGLE
    } else {
        let last = DROP_K + 10 * (drops as u64 - 1);
        RunShape {
            messages: last + 9,
            stop: Time::from_secs(last / 10 + 6),
        }
    }
}

fn scheme_seed(s: Scheme) -> u64 {
    match s {
        Scheme::Lms | Scheme::LmsAdaptive => 1,
        Scheme::Pgm => 2,
        Scheme::Srm { adaptive, topo } => 3 + u64::from(adaptive) * 2 + u64::from(topo) * 4,
    }
}

/// One run to do.
struct Job {
    pl: usize,
    scheme: Scheme,
    loss: Option<LossSpec>,
    drops: usize,
    /// Experiment index (`None`: a loss-free baseline).
    exp: Option<usize>,
}

/// Per-run values the aggregates are built from.
#[derive(Debug, Clone)]
struct Sample {
    lat_mean: Option<f64>,
    lat_min: Option<f64>,
    lat_max: Option<f64>,
    exposure: f64,
    dup_all: f64,
    requests: f64,
    repairs: f64,
    retx: f64,
    wire: f64,
    state: f64,
    unrecovered: f64,
}

fn sample(o: &RunOut, baseline_control: u64) -> Option<Sample> {
    if o.drops == 0 {
        return None;
    }
    let d = o.drops as f64;
    let n = o.lat.len() as f64;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &l in &o.lat {
        lo = lo.min(l);
        hi = hi.max(l);
    }
    let pairs = o.lat.len() as u64 + o.unrecovered;
    Some(Sample {
        lat_mean: (n > 0.0).then(|| o.lat.iter().sum::<f64>() / n),
        lat_min: (n > 0.0).then_some(lo),
        lat_max: (n > 0.0).then_some(hi),
        exposure: o.dups_unneeded as f64 / o.receivers.max(1) as f64 / d,
        dup_all: o.dups as f64 / o.receivers.max(1) as f64 / d,
        requests: o.requests as f64 / d,
        repairs: o.repairs as f64 / d,
        retx: o.source_repairs as f64 / d,
        wire: (o.hops_repair as f64 + o.hops_control as f64 - baseline_control as f64) / d,
        state: o.router_state as f64,
        unrecovered: if pairs == 0 {
            0.0
        } else {
            o.unrecovered as f64 / pairs as f64
        },
    })
}

fn est(v: &[f64]) -> Option<Estimate> {
    Estimate::from_samples(v)
}

/// An extreme over `n` runs: the value itself, no spread.
fn extreme(v: f64, n: usize) -> Estimate {
    Estimate {
        mean: v,
        sd: 0.0,
        n,
        ci_lo: v,
        ci_hi: v,
    }
}

/// Metric names recorded per experiment and their units.
const METRICS: &[(&str, &str)] = &[
    ("lat_mean", "RTT"),
    ("lat_min", "RTT"),
    ("lat_max", "RTT"),
    ("lat_max_mean", "RTT"),
    ("exposure", "fraction"),
    ("dup_all", "per receiver per drop"),
    ("requests", "per drop"),
    ("repairs", "per drop"),
    ("retx", "per drop"),
    ("repeated", "per drop"),
    ("wire", "link hops per drop"),
    ("state", "entries"),
    ("unrecovered", "fraction"),
];

fn summarize(samples: &[&Sample]) -> BTreeMap<&'static str, Estimate> {
    let mut m = BTreeMap::new();
    let col = |f: &dyn Fn(&Sample) -> Option<f64>| -> Vec<f64> {
        samples.iter().filter_map(|s| f(s)).collect()
    };
    let lat = col(&|s| s.lat_mean);
    if let Some(e) = est(&lat) {
        m.insert("lat_mean", e);
    }
    let mins = col(&|s| s.lat_min);
    if !mins.is_empty() {
        let v = mins.iter().copied().fold(f64::INFINITY, f64::min);
        m.insert("lat_min", extreme(v, mins.len()));
    }
    let maxs = col(&|s| s.lat_max);
    if !maxs.is_empty() {
        let v = maxs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        m.insert("lat_max", extreme(v, maxs.len()));
        if let Some(e) = est(&maxs) {
            m.insert("lat_max_mean", e);
        }
    }
    type Getter = fn(&Sample) -> f64;
    let simple: [(&'static str, Getter); 9] = [
        ("exposure", |s| s.exposure),
        ("dup_all", |s| s.dup_all),
        ("requests", |s| s.requests),
        ("repairs", |s| s.repairs),
        ("retx", |s| s.retx),
        ("repeated", |s| s.retx - 1.0),
        ("wire", |s| s.wire),
        ("state", |s| s.state),
        ("unrecovered", |s| s.unrecovered),
    ];
    for (name, f) in simple {
        let v: Vec<f64> = samples.iter().map(|s| f(s)).collect();
        if let Some(e) = est(&v) {
            m.insert(name, e);
        }
    }
    m
}

impl Study for Lms {
    fn name(&self) -> &'static str {
        "lms"
    }
    fn title(&self) -> &'static str {
        "SRM, PGM and LMS: recovery after a single loss on trees, random and transit–stub graphs"
    }
    fn source(&self) -> &'static str {
        "seed 003 (LMS thesis, chapter 5: §5.6–5.10, Fig. 5.1, 5.4–5.30, Table 5.1)"
    }
    fn claims_toml(&self) -> &'static str {
        include_str!("../../../../../scenarios/repro/lms/claims.toml")
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.quick);
        let exps = plan.exps();
        // Placements per family, built in parallel (the large graphs take a while).
        let mut fams: Vec<Family> = exps.iter().flat_map(|e| e.families.clone()).collect();
        fams.sort();
        fams.dedup();
        let built: Vec<Result<Vec<Placement>, String>> = ctx.map(&fams, |&f| placements(&plan, f));
        let mut pls: Vec<Placement> = Vec::new();
        let mut fam_pls: BTreeMap<Family, Vec<usize>> = BTreeMap::new();
        for (f, b) in fams.iter().zip(built) {
            for p in b.map_err(|e| StudyError::Run(format!("{f:?}: {e}")))? {
                fam_pls.entry(*f).or_default().push(pls.len());
                pls.push(p);
            }
        }
        // Jobs: every (experiment, placement, site), plus one loss-free baseline per
        // (placement, scheme, shape) for the control traffic that is not recovery.
        let mut jobs: Vec<Job> = Vec::new();
        let mut baselines: BTreeMap<(usize, Scheme, usize), usize> = BTreeMap::new();
        for (ei, e) in exps.iter().enumerate() {
            for f in &e.families {
                for &pi in fam_pls.get(f).map(|v| v.as_slice()).unwrap_or(&[]) {
                    baselines.entry((pi, e.scheme, e.drops)).or_insert_with(|| {
                        jobs.push(Job {
                            pl: pi,
                            scheme: e.scheme,
                            loss: None,
                            drops: e.drops,
                            exp: None,
                        });
                        jobs.len() - 1
                    });
                    for s in sites(&pls[pi], &e.loss, e.cap, e.drops) {
                        jobs.push(Job {
                            pl: pi,
                            scheme: e.scheme,
                            loss: Some(s),
                            drops: e.drops,
                            exp: Some(ei),
                        });
                    }
                }
            }
        }
        let outs: Vec<RunOut> = ctx
            .map(&jobs, |j| {
                let pl = &pls[j.pl];
                let seed = mix64(pl.seed ^ (scheme_seed(j.scheme) << 56));
                sim::run(pl, j.scheme, j.loss.as_ref(), shape(j.drops), seed)
            })
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(StudyError::Run)?;

        // Aggregate per experiment and x.
        let mut m = Measures::new();
        let mut no_drop = 0usize;
        let mut per_exp: Vec<BTreeMap<u64, Vec<Sample>>> =
            exps.iter().map(|_| BTreeMap::new()).collect();
        for (j, o) in jobs.iter().zip(&outs) {
            let Some(ei) = j.exp else { continue };
            let base = baselines
                .get(&(j.pl, j.scheme, j.drops))
                .map_or(0, |&bi| outs[bi].hops_control);
            let Some(s) = sample(o, base) else {
                no_drop += 1;
                continue;
            };
            let pl = &pls[j.pl];
            let x = match exps[ei].x {
                XOf::TopoIndex | XOf::Height => pl.topo_index as f64,
                XOf::Receivers => pl.receivers.len() as f64,
            };
            per_exp[ei].entry(x.to_bits()).or_default().push(s);
        }
        let mut runs_total = 0usize;
        for (e, by_x) in exps.iter().zip(&per_exp) {
            let x_label = match e.x {
                XOf::TopoIndex => "topology",
                XOf::Height => "tree height",
                XOf::Receivers => "receivers",
            };
            let mut series: BTreeMap<&str, Vec<(f64, Estimate)>> = BTreeMap::new();
            let mut all: Vec<&Sample> = Vec::new();
            for (xb, samples) in by_x {
                runs_total += samples.len();
                let refs: Vec<&Sample> = samples.iter().collect();
                all.extend(refs.iter().copied());
                for (name, est) in summarize(&refs) {
                    series
                        .entry(name)
                        .or_default()
                        .push((f64::from_bits(*xb), est));
                }
            }
            for (name, unit) in METRICS {
                if let Some(pts) = series.remove(name) {
                    m.series(format!("{}.{name}", e.key), *unit, x_label, pts);
                }
            }
            for (name, est) in summarize(&all) {
                let unit = METRICS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, u)| u);
                m.scalar(format!("{}.all.{name}", e.key), unit, est);
            }
        }
        derived(&mut m);
        let plots = plots(&m, ctx)?;
        let mut notes = vec![format!(
            "{} runs ({} loss-free baselines); {} runs whose loss site carried no original \
             data (not counted).",
            jobs.len(),
            baselines.len(),
            no_drop
        )];
        if plan.quick {
            notes.push(
                "Quick mode: 3 topologies × 1 placement per family (the seed: 10 × 10), at \
                 most 16 loss sites per placement (8 for SRM), and beyond the seed only the \
                 10,000-node transit–stub graph with 100 receivers and 4 loss sites."
                    .into(),
            );
        }
        notes.push(format!("{runs_total} lossy runs aggregated."));
        notes.extend(observations(&m));
        Ok(StudyOutput {
            setup: setup(&plan, jobs.len()),
            measures: m,
            plots,
            notes,
        })
    }
}

/// Measures built from others: LMS latency against receiver count (Fig. 5.12, 5.13), the
/// Table 5.1 ratios.
fn derived(m: &mut Measures) {
    for metric in ["lat_mean", "exposure"] {
        let mut pts = Vec::new();
        for (r, key) in [
            (5.0, "lms.rand_r5.links"),
            (20.0, "lms.rand_r20.links"),
            (100.0, "lms.rand.links"),
        ] {
            if let Some(e) = m
                .get(&format!("{key}.all.{metric}"))
                .and_then(|x| x.at(None))
            {
                pts.push((r, e));
            }
        }
        let unit = if metric == "exposure" {
            "fraction"
        } else {
            "RTT"
        };
        m.series(format!("lms.rand_by_r.{metric}"), unit, "receivers", pts);
    }
    // Per scheme on random graphs, by loss location (x: 1 source, 2 each receiver, 3 each
    // link), to set beside the seed's statements (paper tables of the same shape).
    for key in ["lms.rand", "pgm.rand", "srm.rand", "srm_adaptive.rand"] {
        for metric in [
            "lat_mean", "lat_min", "lat_max", "requests", "repairs", "exposure",
        ] {
            let mut pts = Vec::new();
            for (x, loc) in [(1.0, "src"), (2.0, "rcv"), (3.0, "links")] {
                if let Some(e) = m
                    .get(&format!("{key}.{loc}.all.{metric}"))
                    .and_then(|v| v.at(None))
                {
                    pts.push((x, e));
                }
            }
            if !pts.is_empty() {
                let unit = METRICS
                    .iter()
                    .find(|(n, _)| *n == metric)
                    .map_or("", |(_, u)| u);
                m.series(
                    format!("{key}.by_loc.{metric}"),
                    unit,
                    "loss location (1 source, 2 receivers, 3 links)",
                    pts,
                );
            }
        }
    }
    let g = |m: &Measures, k: &str| m.get(k).and_then(|x| x.at(None)).map(|e| e.mean);
    // PGM repeated retransmissions: loss at all links relative to loss at the source.
    if let (Some(a), Some(b)) = (
        g(m, "pgm.rand.src.all.repeated"),
        g(m, "pgm.rand.links.all.repeated"),
    ) {
        if a > 0.0 {
            m.scalar(
                "pgm.rand.repeated_links_over_src",
                "ratio",
                Estimate::exact(b / a),
            );
        }
    }
    // Latency ratios between schemes, loss at each link of the random graphs.
    let lms = g(m, "lms.rand.links.all.lat_mean");
    for (name, other) in [
        ("pgm", "pgm.rand.links.all.lat_mean"),
        ("srm", "srm.rand.links.all.lat_mean"),
    ] {
        if let (Some(l), Some(o)) = (lms, g(m, other)) {
            if l > 0.0 {
                m.scalar(
                    format!("ratio.{name}_over_lms.links"),
                    "ratio",
                    Estimate::exact(o / l),
                );
            }
        }
    }
}

/// Remarks built from the measures (what the report should say beside the claims).
fn observations(m: &Measures) -> Vec<String> {
    let g = |k: &str| m.get(k).and_then(|x| x.at(None));
    let f = |k: &str| {
        g(k).map_or("n/a".to_string(), |e| {
            format!("{:.3} (n = {})", e.mean, e.n)
        })
    };
    vec![
        format!(
            "PGM repeated retransmissions (loss at the source, random graphs, 100 receivers):              {} RDATA per drop with link delays of 1 ms per unit of GT-ITM edge length (the              study's setting, ns-2's converter convention), {} with 100 µs per unit              (pgm_fast). A NAK repeats the retransmission when it reaches a router after the              RDATA answering a nearer receiver has cleared the state; with short propagation              delays the 5.5 ms transmission time of a 1024-byte packet at 1.5 Mb/s dominates              and the NAKs of distant receivers arrive before the RDATA comes back, so fewer              repeats.",
            f("pgm.rand.src.all.retx"),
            f("pgm_fast.rand.src.all.retx")
        ),
        format!(
            "LMS with loss at the source: {} repairs per drop (source and repliers) and {}              duplicates per receiver (dup_all), none at receivers that did not miss the packet              (exposure {}). One request climbs replier links to the source, whose multicast              repairs everyone; the other requests turn below it and reach repliers that still              lack the packet or got it from that repair, and a replier leaves such first              requests unanswered (the rule of the authors' ns-2 LMS receiver). Without that rule              nearly every replier answered one DREQ after the source's repair had passed (about              one redundant repair per receiver, exposure still 0).",
            f("lms.rand.src.all.repairs"),
            f("lms.rand.src.all.dup_all"),
            f("lms.rand.src.all.exposure")
        ),
        format!(
            "LMS repliers, static against adaptive (beyond the seed; the seed ran static              repliers only, §5.8): the loss stays on its link for 5 drops 1 s apart; adaptive              receivers report their losses every 10 packets and routers move their replier link              to the cheapest interface. Random graphs, loss at each receiver: exposure {} static,              {} adaptive; mean latency {} static, {} adaptive. Loss at each link: exposure {}              static, {} adaptive; mean latency {} static, {} adaptive. Transit–stub, loss at each              link: exposure {} static, {} adaptive; mean latency {} static, {} adaptive.",
            f("lms_persist.rand.rcv.all.exposure"),
            f("lms_adaptive.rand.rcv.all.exposure"),
            f("lms_persist.rand.rcv.all.lat_mean"),
            f("lms_adaptive.rand.rcv.all.lat_mean"),
            f("lms_persist.rand.links.all.exposure"),
            f("lms_adaptive.rand.links.all.exposure"),
            f("lms_persist.rand.links.all.lat_mean"),
            f("lms_adaptive.rand.links.all.lat_mean"),
            f("lms_persist.ts.links.all.exposure"),
            f("lms_adaptive.ts.links.all.exposure"),
            f("lms_persist.ts.links.all.lat_mean"),
            f("lms_adaptive.ts.links.all.lat_mean"),
        ),
        format!(
            "SRM with 100 receivers (beyond the seed): with distances from the topology and no              session messages, mean latency {} RTT and {} repairs per drop (loss at each link);              with ns-2's session messages every 1 s, every member's message lists all 101              members, and the session traffic alone nears the 1.5 Mb/s link rate: mean latency              {} RTT, {} of the losses unrecovered at the end of the run.",
            f("srm.rand_r100.links.all.lat_mean"),
            f("srm.rand_r100.links.all.repairs"),
            f("srm_sessions.rand_r100.links.all.lat_mean"),
            f("srm_sessions.rand_r100.links.all.unrecovered")
        ),
    ]
}

fn pts(m: &Measures, name: &str) -> Vec<(f64, Estimate)> {
    match m.get(name) {
        Some(crate::Measure::Series { points, .. }) => points.clone(),
        _ => Vec::new(),
    }
}

/// One latency plot (min, mean, max) of an experiment.
fn lat_plot(m: &Measures, id: &str, title: &str, key: &str, x: &str) -> Plot {
    Plot {
        id: format!("lms-{id}"),
        title: title.into(),
        caption: format!(
            "Normalized recovery latency (detection to repair over the receiver's RTT to the \
             source) of every receiver that missed the packet: mean across runs with 95 % CI, \
             and the minimum and maximum over all runs ({key})."
        ),
        x: Axis::new(x, "index"),
        y: Axis::new("normalized recovery latency", "RTT"),
        series: vec![
            PlotSeries::measured("mean", 0, &pts(m, &format!("{key}.lat_mean"))),
            PlotSeries::measured("min", 1, &pts(m, &format!("{key}.lat_min"))),
            PlotSeries::measured("max", 2, &pts(m, &format!("{key}.lat_max"))),
        ],
    }
}

/// One plot of a metric across several experiments.
fn metric_plot(
    m: &Measures,
    id: &str,
    title: &str,
    caption: &str,
    x: (&str, &str),
    y: (&str, &str),
    series: &[(&str, String)],
) -> Plot {
    Plot {
        id: format!("lms-{id}"),
        title: title.into(),
        caption: caption.into(),
        x: Axis::new(x.0, x.1),
        y: Axis::new(y.0, y.1),
        series: series
            .iter()
            .enumerate()
            .map(|(i, (label, name))| PlotSeries::measured(*label, i, &pts(m, name)))
            .collect(),
    }
}

fn plots(m: &Measures, ctx: &RunCtx<'_>) -> Result<Vec<Plot>, StudyError> {
    let mut v = Vec::new();
    let topo = "topology";
    for (fig, loss, what) in [
        ("5.4", "src", "loss at the source"),
        ("5.5", "rcv", "loss at each receiver"),
        ("5.6", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: LMS latency, binary trees, {what}"),
            &format!("lms.bt.{loss}"),
            "tree height",
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_7",
        "Fig. 5.7: LMS exposure, binary trees",
        "Duplicates per receiver per drop (static repliers), mean across runs with 95 % CI.",
        ("tree height", "levels"),
        ("exposure", "fraction"),
        &[
            ("loss at the source", "lms.bt.src.exposure".into()),
            ("loss at each receiver", "lms.bt.rcv.exposure".into()),
            ("loss at each link", "lms.bt.links.exposure".into()),
        ],
    ));
    for (fig, loss, what) in [
        ("5.8", "src", "loss at the source"),
        ("5.9", "rcv", "loss at each receiver"),
        ("5.10", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: LMS latency, random graphs R100-100, {what}"),
            &format!("lms.rand.{loss}"),
            topo,
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_11",
        "Fig. 5.11: LMS exposure, random graphs R100-100",
        "Duplicates per receiver per drop, per topology (mean over its placements and loss sites).",
        (topo, "index"),
        ("exposure", "fraction"),
        &[
            ("loss at the source", "lms.rand.src.exposure".into()),
            ("loss at each receiver", "lms.rand.rcv.exposure".into()),
            ("loss at each link", "lms.rand.links.exposure".into()),
        ],
    ));
    v.push(metric_plot(
        m,
        "fig5_12",
        "Fig. 5.12: LMS latency, random graphs, 5, 20 and 100 receivers",
        "Mean normalized recovery latency with loss at each link, over all topologies.",
        ("receivers", "count"),
        ("normalized recovery latency", "RTT"),
        &[("mean", "lms.rand_by_r.lat_mean".into())],
    ));
    v.push(metric_plot(
        m,
        "fig5_13",
        "Fig. 5.13: LMS exposure, random graphs, 5, 20 and 100 receivers",
        "Exposure with loss at each link, over all topologies.",
        ("receivers", "count"),
        ("exposure", "fraction"),
        &[("exposure", "lms.rand_by_r.exposure".into())],
    ));
    for (fig, loss, what) in [
        ("5.14", "tt", "loss at transit–transit links"),
        ("5.15", "ts", "loss at transit–stub links"),
        ("5.16", "ss", "loss at stub–stub links"),
        ("5.17", "links", "loss at all links"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: LMS latency, transit–stub ts100-100, {what}"),
            &format!("lms.ts.{loss}"),
            topo,
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_18",
        "Fig. 5.18: LMS exposure, transit–stub ts100-100",
        "Duplicates per receiver per drop by lossy link class, per topology.",
        (topo, "index"),
        ("exposure", "fraction"),
        &[
            ("transit–transit", "lms.ts.tt.exposure".into()),
            ("transit–stub", "lms.ts.ts.exposure".into()),
            ("stub–stub", "lms.ts.ss.exposure".into()),
            ("all links", "lms.ts.links.exposure".into()),
        ],
    ));
    for (fig, loss, what) in [
        ("5.19", "src", "loss at the source"),
        ("5.20", "rcv", "loss at each receiver"),
        ("5.21", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: SRM latency, random graphs, 20 receivers, {what}"),
            &format!("srm.rand.{loss}"),
            topo,
        ));
    }
    for (fig, metric, what) in [
        ("5.22", "requests", "requests"),
        ("5.23", "repairs", "replies"),
    ] {
        v.push(metric_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: SRM {what} per drop, random graphs, 20 receivers"),
            &format!("SRM {what} sent by all members per drop, per topology."),
            (topo, "index"),
            (what, "per drop"),
            &[
                ("loss at the source", format!("srm.rand.src.{metric}")),
                ("loss at each receiver", format!("srm.rand.rcv.{metric}")),
                ("loss at each link", format!("srm.rand.links.{metric}")),
            ],
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_24",
        "Fig. 5.24: SRM requests and replies per drop, adaptive timers",
        "Agent/SRM/Adaptive, 20 receivers, 5 drops per run on the same link.",
        (topo, "index"),
        ("messages", "per drop"),
        &[
            (
                "requests, loss at the source",
                "srm_adaptive.rand.src.requests".into(),
            ),
            (
                "replies, loss at the source",
                "srm_adaptive.rand.src.repairs".into(),
            ),
            (
                "requests, loss at each link",
                "srm_adaptive.rand.links.requests".into(),
            ),
            (
                "replies, loss at each link",
                "srm_adaptive.rand.links.repairs".into(),
            ),
        ],
    ));
    v.push(lat_plot(
        m,
        "fig5_25",
        "Fig. 5.25: SRM latency, adaptive timers, loss at each link",
        "srm_adaptive.rand.links",
        topo,
    ));
    for (fig, loss, what) in [
        ("5.26", "src", "loss at the source"),
        ("5.27", "rcv", "loss at each receiver"),
        ("5.28", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: PGM latency, random graphs R100-100, {what}"),
            &format!("pgm.rand.{loss}"),
            topo,
        ));
    }
    for (fig, loss, what) in [
        ("5.29", "src", "loss at the source"),
        ("5.30", "links", "loss at each link"),
    ] {
        v.push(metric_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: PGM retransmissions per drop, {what}"),
            "RDATA sent by the source per drop (all) and beyond the first (repeated), per topology.",
            (topo, "index"),
            ("retransmissions", "per drop"),
            &[
                ("all", format!("pgm.rand.{loss}.retx")),
                ("repeated", format!("pgm.rand.{loss}.repeated")),
            ],
        ));
    }
    v.push(metric_plot(
        m,
        "wire",
        "Packets on the wire per drop (all schemes, random graphs, loss at each link)",
        "Link hops of repair and control packets per drop, minus the control hops of the same \
         placement without loss (SRM session messages, PGM SPMs, LMS heartbeats).",
        (topo, "index"),
        ("link hops", "per drop"),
        &[
            ("LMS, 100 receivers", "lms.rand.links.wire".into()),
            ("PGM, 100 receivers", "pgm.rand.links.wire".into()),
            ("SRM, 20 receivers", "srm.rand.links.wire".into()),
            ("SRM, 100 receivers", "srm.rand_r100.links.wire".into()),
        ],
    ));
    v.push(metric_plot(
        m,
        "srm100",
        "Beyond the seed: SRM with 100 receivers, random graphs",
        "Mean normalized latency and requests/replies per drop with 100 receivers (the seed \
         stopped at 20).",
        (topo, "index"),
        ("value", "RTT or per drop"),
        &[
            (
                "latency, loss at each link",
                "srm.rand_r100.links.lat_mean".into(),
            ),
            (
                "requests, loss at each link",
                "srm.rand_r100.links.requests".into(),
            ),
            (
                "replies, loss at each link",
                "srm.rand_r100.links.repairs".into(),
            ),
            (
                "latency, loss at the source",
                "srm.rand_r100.src.lat_mean".into(),
            ),
        ],
    ));
    for tag in ["ts10k", "ts100k"] {
        if m.get(&format!("beyond.{tag}.lms.links.lat_mean")).is_none() {
            continue;
        }
        let n = if tag == "ts10k" { "10,000" } else { "100,000" };
        for (metric, ylab, unit) in [
            ("lat_mean", "normalized recovery latency", "RTT"),
            ("exposure", "duplicates per receiver", "per drop"),
            ("state", "router state", "entries"),
        ] {
            let mut s = Vec::new();
            for scheme in ["lms", "pgm", "srm"] {
                for loss in ["src", "links"] {
                    let name = format!("beyond.{tag}.{scheme}.{loss}.{metric}");
                    if m.get(&name).is_some() {
                        s.push((
                            format!(
                                "{} loss at {}",
                                scheme.to_uppercase(),
                                if loss == "src" {
                                    "the source"
                                } else {
                                    "each link"
                                }
                            ),
                            name,
                        ));
                    }
                }
            }
            let series: Vec<(&str, String)> =
                s.iter().map(|(a, b)| (a.as_str(), b.clone())).collect();
            v.push(metric_plot(
                m,
                &format!("beyond-{tag}-{metric}"),
                &format!("Beyond the seed: {n}-node transit–stub graph, {ylab}"),
                "One placement per receiver count; loss at the source and at evenly spread tree \
                 links. SRM uses topology distances and no session messages here.",
                ("receivers", "count"),
                (ylab, unit),
                &series,
            ));
        }
    }
    // The seed's statements beside rmcast's means, random graphs, by loss location.
    let paper =
        |name: &str| -> Vec<(f64, f64)> { ctx.paper(name).map(|t| t.points()).unwrap_or_default() };
    let mut summary = vec![
        PlotSeries::measured("LMS mean", 0, &pts(m, "lms.rand.by_loc.lat_mean")),
        PlotSeries::measured("PGM mean", 1, &pts(m, "pgm.rand.by_loc.lat_mean")),
        PlotSeries::measured("SRM mean", 2, &pts(m, "srm.rand.by_loc.lat_mean")),
        PlotSeries::measured("LMS max", 3, &pts(m, "lms.rand.by_loc.lat_max")),
        PlotSeries::measured("SRM max", 4, &pts(m, "srm.rand.by_loc.lat_max")),
    ];
    summary.extend([
        PlotSeries::paper("seed: LMS mean", 0, &paper("lms_rand_lat_mean")),
        PlotSeries::paper("seed: PGM mean", 1, &paper("pgm_rand_lat_mean")),
        PlotSeries::paper("seed: SRM mean", 2, &paper("srm_rand_lat_mean")),
        PlotSeries::paper("seed: LMS max", 3, &paper("lms_rand_lat_max")),
        PlotSeries::paper("seed: SRM max", 4, &paper("srm_rand_lat_max")),
    ]);
    v.push(Plot {
        id: "lms-summary-latency".into(),
        title: "Random graphs: normalized recovery latency by loss location, rmcast and the seed"
            .into(),
        caption: "x: 1 loss at the source, 2 at each receiver, 3 at each link. Curves: rmcast                   (mean across runs with 95 % CI; max over all runs). Diamonds: the values the                   seed states in §5.8.2, §5.9 and §5.10 (LMS and PGM 100 receivers, SRM 20)."
            .into(),
        x: Axis::new("loss location", "1 source, 2 receivers, 3 links"),
        y: Axis::new("normalized recovery latency", "RTT"),
        series: summary,
    });
    // Drop empty plots (a measure missing in this mode) rather than render nothing.
    v.retain(|p| p.series.iter().any(|s| !s.points.is_empty()));
    for p in &v {
        p.check()?;
    }
    Ok(v)
}

fn setup(plan: &Plan, runs: usize) -> Setup {
    Setup {
        summary: "Seed 003's single-loss experiments re-run on rmcast's simulator: one source \
                  multicasting 1024-byte messages at 10 packets/s to receivers over 1.5 Mb/s \
                  links; exactly one original data packet (the 31st to cross the chosen link) \
                  is lost per run — at the source's link, at each receiver's link in turn, at \
                  each link of the multicast tree in turn, or (transit–stub) at each link of \
                  one class — and the run measures how the scheme recovers it."
            .into(),
        topology: format!(
            "Binary trees of height {:?} (routers inside, 2^h receiver hosts at the leaves, \
             the source host on a link above the root, every link 1.5 Mb/s and {} ms). Flat \
             random graphs: 100 routers, edge probability 0.1, GT-ITM-style plane (100 × 100, \
             delay 1 ms per unit of distance), redrawn until connected. Transit–stub: 1 \
             transit domain × 4 transit nodes × 3 stub domains of 8 nodes = 100 routers \
             (p_transit 0.6, p_stub 0.4). Source and receivers are hosts on 1.5 Mb/s, {} ms \
             links to routers chosen at random (stub routers only on transit–stub graphs). \
             {} topologies × {} placements per family.",
            plan.heights,
            TREE_DELAY.as_millis(),
            HOST_DELAY.as_millis(),
            plan.topologies,
            plan.placements
        ),
        parameters: vec![
            ("runs".into(), runs.to_string()),
            ("messages per run".into(), "40 (adaptive SRM: 80), one every 100 ms".into()),
            ("lost packet".into(), "the 31st original data packet crossing the site (t = 3.0 s)".into()),
            ("run length".into(), "9 s of simulated time (adaptive SRM: 13 s)".into()),
            ("SRM".into(), "ns-2 defaults C1 = C2 = 2, D1 = D2 = 1, back-off limit 5, session messages every 1 s, distances from session timestamps".into()),
            ("PGM".into(), "NAK back-off 0 (the seed's runs), NAK repeat 500 ms, NCF-to-RDATA wait 1 s, SPM every 500 ms, no source repair delay; network elements on every router of the tree".into()),
            ("LMS".into(), "static repliers (downstream link to the closest receiver), request repeat 500 ms, heartbeat every 500 ms; a replier leaves unanswered a first request (attempt 0) for a packet it received as a repair or already answered for the same turning point and interface (the authors' ns-2 LMS receiver), repeats are always answered".into()),
            ("LMS adaptive repliers (beyond the seed)".into(), "lms_adaptive runs: every 10 packets received each receiver sends a REFRESH with its cost, the losses it detected in those 10 packets (the authors' ns-2 LMS_REFRESH, whose loss sampling is off by default); a router remembers the last cost per downstream interface and keeps its replier link on the cheapest (ties: current link, then closer receiver, then lowest interface), passing a cost upstream when its replier refreshed or its link changed. lms_persist: the same runs with static repliers. Both lose 5 packets (31st … 71st) on the same site, as the SRM adaptive runs do; 'requests' of adaptive runs include REFRESH messages, and router state counts the remembered costs".into()),
            (
                "beyond the seed".into(),
                format!(
                    "SRM with 100 receivers on the random graphs; transit–stub graphs of {:?} \
                     (nodes, receivers), GT-ITM parameters scaled: 1 transit domain, n/401 transit \
                     nodes (mean transit degree about 4), 50 stub domains of 8 nodes (p_stub 0.4) \
                     per transit node; {} evenly spread tree links per placement. SRM runs only \
                     where nodes × receivers ≤ 10^7 and receivers ≤ {} (topology distances cost \
                     one shortest-path computation per receiver, and every SRM request and repair \
                     reaches every member): on {:?}",
                    plan.large,
                    plan.large_sites,
                    plan.srm_large_max_receivers,
                    plan.large
                        .iter()
                        .filter(|&&(n, r)| plan.srm_large(n, r))
                        .collect::<Vec<_>>()
                ),
            ),
        ],
        choices: vec![
            ("Normalized latency: the receiver's RTT to the source".into(), "2 × the one-way propagation delay of its shortest path plus, per hop, the transmission time of a 40-byte request and a 1064-byte repair at the link's rate (the time a unicast request and repair take on an idle path)".into()),
            ("Min and max latency per point".into(), "the minimum and maximum over every receiver of every run of the point (the mean is the mean of per-run means, with its 95 % CI)".into()),
            ("Exposure".into(), "Fig. 5.1's total duplicates / receivers / drops, counting (as §5.4.2 and §5.8.1 do: 'exposure when loss is at the source is zero because all receivers lost the original packet') only repairs that reach receivers which did not miss the packet; 'dup_all' also counts extra repairs reaching receivers that did miss it".into()),
            ("Which link is 'the source'".into(), "the source host's link to its router (binary trees: above the root)".into()),
            ("Which links are 'each link'".into(), "every link of the source's shortest-path multicast tree, host links included (links off the tree never carry the data)".into()),
            ("Binary-tree link delay".into(), format!("{} ms (the seed gives delays only for GT-ITM graphs)", TREE_DELAY.as_millis())),
            ("Host links".into(), format!("{} ms, 1.5 Mb/s; receivers are separate hosts (the seed's 100 routers + 100 receivers = 200 nodes plus the source)", HOST_DELAY.as_millis())),
            ("Receiver placement".into(), "source and receivers each on a router drawn uniformly at random with replacement (several receivers may share a router; the source's router holds a receiver only by chance), a new draw per placement".into()),
            ("Loss time".into(), "the 31st packet (3 s in), so SRM's session messages have measured distances (two rounds) before the loss".into()),
            ("SRM adaptive runs".into(), "a single drop gives the adaptive algorithm nothing to adapt to; its runs lose 5 packets (the 31st, 41st, …, 71st) on the same link and report per drop".into()),
            ("Packets on the wire per drop".into(), "link hops of repair and control packets in the lossy run minus the control hops of the same placement and scheme without loss (same seed), per drop".into()),
            ("Router state".into(), "Σ over routers of the most entries held at once: PGM repair state per lost packet, LMS one replier link per group (fixed, not per drop), SRM none".into()),
            ("PGM repeated retransmissions".into(), "'retx' counts every RDATA the source sends per drop; 'repeated' those beyond the first".into()),
        ],
    }
}

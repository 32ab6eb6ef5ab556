//! The sweep: experiments (scheme, loss site, topology families) and their placements.

use super::sim::{self, LossSpec, Placement, RunShape, Scheme, DROP_K, SINGLE};
use super::*;
use rmcast_proto::{NodeId, Time};
use rmcast_sim::topo::{self, TransitStub};
use rmcast_sim::{LinkConfig, RoutingMetric};

/// Which links lose the packet, for one experiment.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LossAt {
    /// The source's link to the network.
    Source,
    /// Each receiver's link, in turn.
    Receivers,
    /// Each link of the multicast tree, in turn.
    Links,
    /// Each tree link of one GT-ITM class, in turn.
    Class(&'static str),
    /// Every tree link within one run: one drop per link, 1 s apart, the links in an order
    /// fixed by the placement's seed (SRM's adaptive timers meet a loss that moves, §5.9.1);
    /// never capped, in quick mode too.
    Moving,
}

impl LossAt {
    pub(super) fn key(&self) -> &'static str {
        match self {
            LossAt::Source => "src",
            LossAt::Receivers => "rcv",
            LossAt::Links => "links",
            LossAt::Class("transit-transit") => "tt",
            LossAt::Class("transit-stub") => "ts",
            LossAt::Class(_) => "ss",
            LossAt::Moving => "moving",
        }
    }
}

/// A family of placements (topology kind and receiver count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Family {
    /// Binary tree of height h.
    Tree(u32),
    /// Flat random graphs of 100 nodes with R receivers.
    Random(usize),
    /// The same graphs with 10× shorter link delays (100 µs per unit of distance): a
    /// sensitivity check of PGM's repeated retransmissions.
    RandomFast(usize),
    /// The same graphs with every host link as long as the graph's mean link (the seed does
    /// not give its host links; rmcast's are 1 ms): a sensitivity check of LMS's latency.
    RandomLongHost(usize),
    /// Transit–stub graphs of 100 nodes with R receivers.
    Ts(usize),
    /// Large transit–stub graph (nodes, receivers), beyond the seed.
    TsLarge(usize, usize),
    /// The placements of `Random(R)` (same graphs, same source and receivers, same run
    /// seeds) routed by least delay whatever `hop_routes` says: the named variant beside the
    /// study's routes, for the measures seed 003's ns-2 default of fewest-hop routes moves.
    RandomDelay(usize),
}

/// One experiment: a scheme, a family, where the loss is, and the measure prefix.
pub(super) struct Exp {
    pub(super) key: String,
    pub(super) scheme: Scheme,
    pub(super) families: Vec<Family>,
    pub(super) loss: LossAt,
    /// Drops per run at the site (1, or several for SRM's adaptive timers).
    pub(super) drops: usize,
    /// At most this many loss sites per placement (evenly spread), `usize::MAX`: all.
    pub(super) cap: usize,
    /// x of a run: topology index, tree height or receiver count.
    pub(super) x: XOf,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum XOf {
    TopoIndex,
    Height,
    Receivers,
}

/// The heights of the binary trees (both modes).
const HEIGHTS: [u32; 5] = [3, 4, 5, 6, 7];

crate::plan! {
    /// Sizes of the sweep in full and quick mode.
    pub(super) struct Plan {
        pub(super) quick: bool = quick true, full false;
        pub(super) topologies: usize = quick 3, full TOPOLOGIES;
        /// 10 per topology in full mode (the seed: 10), more where a claim on the family's
        /// experiments is undecided (sequential sampling, up to `--runs-cap` times): with 10
        /// everywhere `fig5_19.srm_source_mean` stayed inconclusive; with 20 everywhere it was
        /// decided (a failure, pinned with that run's value).
        pub(super) placements: usize = quick 5, full 10;
        pub(super) heights: Vec<u32> = quick HEIGHTS.to_vec(), full HEIGHTS.to_vec();
        /// Loss sites per placement for "each receiver" / "each link" (MAX: all).
        pub(super) site_cap: usize = quick 16, full usize::MAX;
        /// Loss sites per binary tree: all of them in both modes (LMS on a tree is a
        /// function of the loss site, so every site run makes the tree's measures exact; a
        /// sample of 16 left Fig. 5.5–5.7's trends and means to the sample).
        pub(super) tree_site_cap: usize = quick usize::MAX, full usize::MAX;
        pub(super) srm_site_cap: usize = quick 8, full usize::MAX;
        /// Loss sites per placement of the beyond-the-seed experiments on the seed's graphs
        /// (static against adaptive repliers with 5 drops): sampled in full mode (1,600 runs
        /// per experiment instead of 10,000–18,000, a third of the study's CPU time).
        pub(super) beyond_site_cap: usize = quick 16, full 16, extended usize::MAX;
        /// Loss sites per placement for SRM with 100 receivers (beyond the seed; notes only).
        pub(super) srm100_site_cap: usize = quick 4, full 4, extended 10;
        /// Beyond the seed: (nodes, receivers) of the large transit–stub graphs (no claim
        /// uses them; the 100,000-node graphs only in extended mode).
        pub(super) large: Vec<(usize, usize)> =
            quick vec![(10_000, 100)],
            full vec![(10_000, 100), (10_000, 1000)],
            extended vec![(10_000, 100), (10_000, 1000), (100_000, 100), (100_000, 1000)];
        pub(super) large_sites: usize = quick 4, full 20;
        pub(super) srm_large_max_receivers: usize = quick 100, full 1000;
        /// Route by fewest hops (seed 003's simulator, ns-2, routes unicast by hop count
        /// unless a script sets link costs; its multicast trees follow those routes), ties by
        /// least delay, then the lowest-numbered parent; `false`: by least delay. Set from the
        /// unstated parameter `hop_routes` ([`RunCtx::param`], default 1).
        pub(super) hop_routes: bool = quick true, full true;
        /// Loss sites per placement of the delay-route variant (`*_delay.rand`): its numbers
        /// only stand beside the claims in failure explanations (the committed sweep
        /// docs/repro/explore/lms-routes judges every claim on delay routes), so full mode
        /// samples as few as quick mode (8 before 2026-11-29).
        pub(super) variant_site_cap: usize = quick 4, full 4;
    }
    runs: placements;
}

/// Experiments on one graph family, x the topology index: (key prefix, scheme, family, loss
/// sites (one experiment each, `<prefix>.<site>`), sites per placement, drops per run).
type OneFamily<'a> = (&'a str, Scheme, Family, &'a [LossAt], usize, usize);

impl Plan {
    /// Whether SRM runs on the large transit–stub graph of `nodes` with `receivers`: its
    /// topology distances cost one shortest-path computation per receiver, and every SRM
    /// request and repair reaches every member.
    pub(super) fn srm_large(&self, nodes: usize, receivers: usize) -> bool {
        receivers <= self.srm_large_max_receivers && nodes * receivers <= 10_000_000
    }

    /// Every experiment of the study: the binary trees', those on one graph family, and the
    /// large transit–stub graphs'.
    pub(super) fn exps(&self) -> Vec<Exp> {
        let mut v = self.tree_exps();
        v.extend(self.one_family_exps());
        v.extend(self.large_exps());
        v
    }

    /// LMS on the binary trees (Fig. 5.4–5.7), loss at the source, receivers or links.
    fn tree_exps(&self) -> Vec<Exp> {
        let trees: Vec<Family> = self.heights.iter().map(|&h| Family::Tree(h)).collect();
        let tc = self.tree_site_cap;
        [LossAt::Source, LossAt::Receivers, LossAt::Links]
            .into_iter()
            .map(|loss| {
                let key = format!("lms.bt.{}", loss.key());
                Exp::new(&key, Scheme::Lms, trees.clone(), loss, tc, XOf::Height)
            })
            .collect()
    }

    /// The experiments on one graph family (`OneFamily`): the seed's figures on random and
    /// transit–stub graphs, beyond-the-seed variants, and least-delay routes beside them.
    fn one_family_exps(&self) -> Vec<Exp> {
        let mut v = Vec::new();
        let c = self.site_cap;
        let srm = Scheme::Srm {
            adaptive: false,
            topo: false,
        };
        use LossAt::{Links, Moving, Receivers, Source};
        let three = [Source, Receivers, Links];
        let classes = ["transit-transit", "transit-stub", "stub-stub"].map(LossAt::Class);
        let ts = [&classes[..], &[Links]].concat();
        let (r5, r20, r100, ts100) = (
            Family::Random(5),
            Family::Random(20),
            Family::Random(100),
            Family::Ts(100),
        );
        let srm_adaptive = Scheme::Srm {
            adaptive: true,
            topo: false,
        };
        let srm_topo = Scheme::Srm {
            adaptive: false,
            topo: true,
        };
        let (lms, pgm, lms_adaptive) = (Scheme::Lms, Scheme::Pgm, Scheme::LmsAdaptive);
        let (srm_c, srm100_c, bc) = (
            self.srm_site_cap,
            self.srm100_site_cap,
            self.beyond_site_cap,
        );
        let on_one_family: [OneFamily; 15] = [
            // LMS, PGM on random graphs, 100 receivers (Fig. 5.8–5.11, 5.26–5.30).
            ("lms.rand", lms, r100, &three, c, 1),
            // LMS with host links as long as the graph's mean link (sensitivity).
            (
                "lms_longhost.rand",
                lms,
                Family::RandomLongHost(100),
                &three,
                c,
                1,
            ),
            ("pgm.rand", pgm, r100, &three, c, 1),
            // PGM repeated retransmissions with 10× shorter link delays (sensitivity).
            (
                "pgm_fast.rand",
                pgm,
                Family::RandomFast(100),
                &[Source],
                c,
                1,
            ),
            // LMS, random graphs, 5 and 20 receivers, loss at links (Fig. 5.12, 5.13).
            ("lms.rand_r5", lms, r5, &[Links], c, 1),
            ("lms.rand_r20", lms, r20, &[Links], c, 1),
            // LMS, transit–stub (Fig. 5.14–5.18).
            ("lms.ts", lms, ts100, &ts, c, 1),
            // Beyond the seed: static against adaptive LMS repliers when the loss stays on its
            // link for 5 drops (1 s apart), random graphs with 100 receivers and transit–stub.
            ("lms_persist.rand", lms, r100, &[Receivers, Links], bc, 5),
            ("lms_persist.ts", lms, ts100, &[Links], bc, 5),
            (
                "lms_adaptive.rand",
                lms_adaptive,
                r100,
                &[Receivers, Links],
                bc,
                5,
            ),
            ("lms_adaptive.ts", lms_adaptive, ts100, &[Links], bc, 5),
            // SRM, random graphs, 20 receivers (Fig. 5.19–5.23).
            ("srm.rand", srm, r20, &three, srm_c, 1),
            // SRM with adaptive timers (Fig. 5.24, 5.25): the loss stays on its link for 5 drops
            // (`src`, `links`), or moves to the next tree link after every drop (`moving`).
            (
                "srm_adaptive.rand",
                srm_adaptive,
                r20,
                &[Source, Links, Moving],
                srm_c,
                5,
            ),
            // Beyond the seed: SRM with 100 receivers on the same random graphs, with distances
            // from the topology (no session messages), and with ns-2's 1 s session messages.
            ("srm.rand_r100", srm_topo, r100, &three, srm100_c, 1),
            ("srm_sessions.rand_r100", srm, r100, &[Links], srm100_c, 1),
        ];
        // The named variant on least-delay routes (same placements and run seeds as the
        // random-graph experiments above, sampled sites): the measures the routing metric
        // moves most, reported beside the claims' measures, never as their basis.
        let vc = self.variant_site_cap;
        let delay_variant: [OneFamily; 3] = [
            (
                "lms_delay.rand",
                lms,
                Family::RandomDelay(100),
                &[Receivers, Links],
                vc,
                1,
            ),
            (
                "pgm_delay.rand",
                pgm,
                Family::RandomDelay(100),
                &[Source],
                vc,
                1,
            ),
            (
                "srm_delay.rand",
                srm,
                Family::RandomDelay(20),
                &[Receivers, Links],
                vc,
                1,
            ),
        ];
        let on_one_family: Vec<OneFamily> =
            on_one_family.into_iter().chain(delay_variant).collect();
        for (prefix, scheme, fam, sites, cap, drops) in on_one_family {
            for loss in sites {
                let key = format!("{prefix}.{}", loss.key());
                let mut x = Exp::new(&key, scheme, vec![fam], loss.clone(), cap, XOf::TopoIndex);
                x.drops = drops;
                v.push(x);
            }
        }
        v
    }

    /// Beyond the seed: large transit–stub graphs, latency, duplicates and state against the
    /// number of receivers.
    fn large_exps(&self) -> Vec<Exp> {
        let mut v = Vec::new();
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
                    v.push(Exp::new(
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

impl Exp {
    /// An experiment of one drop per run.
    fn new(
        key: &str,
        scheme: Scheme,
        families: Vec<Family>,
        loss: LossAt,
        cap: usize,
        x: XOf,
    ) -> Exp {
        Exp {
            key: key.into(),
            scheme,
            families,
            loss,
            drops: 1,
            cap,
            x,
        }
    }
}

/// The routing metric of a family's placements.
fn metric_of(plan: &Plan, fam: Family) -> RoutingMetric {
    match fam {
        Family::RandomDelay(_) => RoutingMetric::Delay,
        _ if plan.hop_routes => RoutingMetric::Hops,
        _ => RoutingMetric::Delay,
    }
}

impl Family {
    /// Its receivers per placement (a tree's: 2^h).
    pub(super) fn receivers(self) -> usize {
        match self {
            Family::Tree(h) => 1 << h,
            Family::Random(r)
            | Family::RandomFast(r)
            | Family::RandomLongHost(r)
            | Family::RandomDelay(r)
            | Family::Ts(r)
            | Family::TsLarge(_, r) => r,
        }
    }
}

/// Whether a family has many placements on each of its topologies (the random and
/// transit-stub graphs: a placement and its runs are one independent unit, so sequential
/// sampling adds placements); the trees and the large graph have one.
pub(super) fn sampled(fam: Family) -> bool {
    matches!(
        fam,
        Family::Random(_)
            | Family::RandomFast(_)
            | Family::RandomLongHost(_)
            | Family::RandomDelay(_)
            | Family::Ts(_)
    )
}

/// Placements `ps` of topology `t` of a [`sampled`] family.
pub(super) fn placements_at(
    plan: &Plan,
    fam: Family,
    t: usize,
    ps: std::ops::Range<usize>,
) -> Result<Vec<Placement>, String> {
    let base = base_topology(fam, t)?;
    let mut out = Vec::new();
    for p in ps {
        let (mut tp, pseed) = attach_placement(fam, &base, t, p)?;
        tp.net.set_routing(metric_of(plan, fam));
        out.push(Placement::new(tp.net, tp.source, tp.receivers, t, pseed)?);
    }
    Ok(out)
}

/// Build every placement a family needs (`plan.placements` per topology of a [`sampled`]
/// family).
pub(super) fn placements(plan: &Plan, fam: Family) -> Result<Vec<Placement>, String> {
    let metric = metric_of(plan, fam);
    let mut out = Vec::new();
    match fam {
        Family::Tree(h) => {
            let mut t = tree_topology(h)?;
            t.net.set_routing(metric);
            out.push(Placement::new(t.net, t.source, t.receivers, h as usize, 0)?);
        }
        Family::Random(_)
        | Family::RandomFast(_)
        | Family::RandomLongHost(_)
        | Family::RandomDelay(_)
        | Family::Ts(_) => {
            for t in 0..plan.topologies {
                out.extend(placements_at(plan, fam, t, 0..plan.placements)?);
            }
        }
        Family::TsLarge(n, r) => {
            let host = LinkConfig::new(sim::BANDWIDTH, HOST_DELAY);
            let ts = large_ts(n);
            let tseed = 0x003_1000 + n as u64;
            let mut tp = topo::transit_stub(&ts, &plane(), tseed).map_err(|e| e.to_string())?;
            let pseed = mix64(tseed ^ ((r as u64) << 40));
            attach_random(&mut tp, r, &host, pseed)?;
            tp.net.set_routing(metric);
            out.push(Placement::new(tp.net, tp.source, tp.receivers, 0, pseed)?);
        }
    }
    Ok(out)
}

/// The study's binary tree of height `h`: 10 ms links of 1.5 Mb/s, the source above the
/// root, 2^h receivers at the leaves.
pub fn tree_topology(h: u32) -> Result<topo::Topology, String> {
    let link = LinkConfig::new(sim::BANDWIDTH, TREE_DELAY);
    topo::binary_tree_under_source(h, link).map_err(|e| e.to_string())
}

/// Placement `p` of the study's random graph `t` with `r` receivers: the graph with the
/// source and receivers attached, and the placement seed. Public, with
/// [`transit_stub_placement`], [`tree_topology`], [`build`](super::build) and
/// [`run_seed`], for tools that run the study's own graphs elsewhere (bench/ns2's
/// `ns2-export`, beside ns-2's LMS).
pub fn random_placement(t: usize, p: usize, r: usize) -> Result<(topo::Topology, u64), String> {
    let fam = Family::Random(r);
    attach_placement(fam, &base_topology(fam, t)?, t, p)
}

/// Placement `p` of the study's transit-stub graph `t` with `r` receivers on stub routers
/// (see [`random_placement`]).
pub fn transit_stub_placement(
    t: usize,
    p: usize,
    r: usize,
) -> Result<(topo::Topology, u64), String> {
    let fam = Family::Ts(r);
    attach_placement(fam, &base_topology(fam, t)?, t, p)
}

/// Graph `t` of a random or transit-stub family, before hosts are attached.
fn base_topology(fam: Family, t: usize) -> Result<topo::Topology, String> {
    let tseed = TOPO_SEED_BASE + t as u64;
    match fam {
        Family::Random(_) | Family::RandomLongHost(_) | Family::RandomDelay(_) => {
            topo::flat_random(RANDOM_NODES, RANDOM_P, &plane(), tseed)
        }
        Family::RandomFast(_) => {
            let p = PlaneParams {
                delay_per_unit: DELAY_PER_UNIT / 10,
                ..plane()
            };
            topo::flat_random(RANDOM_NODES, RANDOM_P, &p, tseed)
        }
        _ => topo::transit_stub(&TransitStub::default(), &plane(), tseed),
    }
    .map_err(|e| e.to_string())
}

/// Placement `p` on `base`, graph `t` of `fam`: the source and the family's receivers
/// attached over host links, and the placement seed.
fn attach_placement(
    fam: Family,
    base: &topo::Topology,
    t: usize,
    p: usize,
) -> Result<(topo::Topology, u64), String> {
    let r = match fam {
        Family::Random(r)
        | Family::RandomFast(r)
        | Family::RandomLongHost(r)
        | Family::RandomDelay(r)
        | Family::Ts(r) => r,
        Family::Tree(_) | Family::TsLarge(..) => return Err(format!("{fam:?}: no placements")),
    };
    let host = match fam {
        Family::RandomLongHost(_) => LinkConfig::new(sim::BANDWIDTH, mean_link_delay(&base.net)),
        _ => LinkConfig::new(sim::BANDWIDTH, HOST_DELAY),
    };
    let tseed = TOPO_SEED_BASE + t as u64;
    let pseed = mix64(tseed ^ ((p as u64) << 20) ^ ((r as u64) << 40));
    let mut tp = base.clone();
    attach_random(&mut tp, r, &host, pseed)?;
    Ok((tp, pseed))
}

/// The seed of a run of `scheme` on `pl`.
pub fn run_seed(pl: &Placement, scheme: Scheme) -> u64 {
    mix64(pl.seed ^ (scheme_seed(scheme) << 56))
}

/// The mean propagation delay of `net`'s links (zero without links).
fn mean_link_delay(net: &rmcast_sim::Network) -> Duration {
    let n = net.link_count();
    let total: Duration = (0..n)
        .filter_map(|i| net.link(i))
        .map(|(_, _, c)| c.delay)
        .sum();
    total.checked_div(n as u32).unwrap_or_default()
}

/// Attach the source and `receivers` receiver hosts to attach points drawn uniformly at
/// random *with* replacement (seed 003 §5.6: receivers "randomly distributed on the internal
/// nodes"; several may share a router, and the source's router need not hold a receiver),
/// each over its own `host_link` (the scenario files' `placement = "with_replacement"`).
pub(super) fn attach_random(
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

/// Every link (and direction) an experiment's loss can be put on, in one placement.
pub(super) fn candidates(pl: &Placement, loss: &LossAt) -> Vec<(usize, NodeId)> {
    match loss {
        LossAt::Source => pl.source_link().into_iter().collect(),
        LossAt::Receivers => pl
            .receivers
            .iter()
            .filter_map(|&r| pl.receiver_link(r))
            .collect(),
        LossAt::Links | LossAt::Moving => pl.tree_links.iter().map(|&(l, u, _)| (l, u)).collect(),
        LossAt::Class(c) => pl
            .tree_links
            .iter()
            .filter(|(_, _, k)| k == c)
            .map(|&(l, u, _)| (l, u))
            .collect(),
    }
}

/// The runs of one experiment on one placement: for each run, the links that lose a packet
/// (one, except [`LossAt::Moving`]) and which original data crossings they drop.
pub(super) fn sites(pl: &Placement, loss: &LossAt, cap: usize, drops: usize) -> Vec<Vec<LossSpec>> {
    let all = candidates(pl, loss);
    if *loss == LossAt::Moving {
        // Every tree link, whatever the cap: the experiment is the loss visiting them all.
        // One run; link i of the shuffled order drops the original crossing DROP_K + 10·i.
        // (A link below one that dropped earlier counts one crossing fewer, so its drop comes
        // one packet later; the drops stay 1 s apart and on distinct packets.)
        let mut order = all;
        order.sort_by_key(|&(l, _)| mix64(pl.seed ^ 0x0a0a ^ l as u64));
        let run = order
            .into_iter()
            .enumerate()
            .map(|(i, (link, from))| LossSpec {
                link,
                from,
                ks: vec![DROP_K + 10 * i as u64],
            })
            .collect();
        return vec![run];
    }
    let ks: Vec<u64> = (0..drops as u64).map(|i| DROP_K + 10 * i).collect();
    spread(&all, cap, pl.seed ^ 0x5157)
        .into_iter()
        .map(|(link, from)| {
            vec![LossSpec {
                link,
                from,
                ks: ks.clone(),
            }]
        })
        .collect()
}

/// Drops in one run of `specs`.
pub(super) fn drops_of(specs: &[LossSpec]) -> usize {
    specs.iter().map(|s| s.ks.len()).sum()
}

/// At most `cap` items of `v`, a pseudo-random sample fixed by `seed` (all of them when
/// `cap >= len`), in their original order. (An evenly spaced pick would follow the order
/// links were created in — on a binary tree every other link is a left child.)
pub(super) fn spread<T: Clone>(v: &[T], cap: usize, seed: u64) -> Vec<T> {
    if cap >= v.len() {
        return v.to_vec();
    }
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by_key(|&i| mix64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    idx.truncate(cap);
    idx.sort_unstable();
    idx.into_iter().map(|i| v[i].clone()).collect()
}

pub(super) fn shape(drops: usize) -> RunShape {
    if drops <= 1 {
        SINGLE
    } else {
        let last = DROP_K + 10 * (drops as u64 - 1);
        RunShape {
            messages: last + 9,
            stop: Time::from_secs(last / 10 + 6),
            lose_repairs: false,
        }
    }
}

pub(super) fn scheme_seed(s: Scheme) -> u64 {
    match s {
        Scheme::Lms | Scheme::LmsAdaptive => 1,
        Scheme::Pgm => 2,
        Scheme::Srm { adaptive, topo } => 3 + u64::from(adaptive) * 2 + u64::from(topo) * 4,
        Scheme::Norm => 10,
    }
}

/// How many of `pl`'s receivers have more than one fewest-hop path to the source: the
/// receivers whose route a hop-count metric leaves to its tie rule (breadth-first search over
/// the links, counting shortest paths).
pub(super) fn fewest_hop_ties(pl: &Placement) -> usize {
    let n = pl.net.node_count();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..pl.net.link_count() {
        if let Some((a, b, _)) = pl.net.link(i) {
            adj[a.0 as usize].push(b.0 as usize);
            adj[b.0 as usize].push(a.0 as usize);
        }
    }
    let (mut hops, mut paths) = (vec![u32::MAX; n], vec![0u64; n]);
    let s = pl.source.0 as usize;
    hops[s] = 0;
    paths[s] = 1;
    let mut queue = std::collections::VecDeque::from([s]);
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u] {
            if hops[v] == u32::MAX {
                hops[v] = hops[u] + 1;
                queue.push_back(v);
            }
            if hops[v] == hops[u] + 1 {
                paths[v] = paths[v].saturating_add(paths[u]);
            }
        }
    }
    pl.receivers
        .iter()
        .filter(|r| paths.get(r.0 as usize).is_some_and(|&p| p > 1))
        .count()
}

/// The links of receiver `r`'s route to the source on `pl`'s tree, from `r` up.
pub(super) fn route_links(pl: &Placement, r: NodeId) -> Vec<usize> {
    let mut v = Vec::new();
    let mut x = r;
    while let Some(Some(rmcast_sim::registry::TreeNode {
        up: Some((p, l)), ..
    })) = pl.tree.get(x.0 as usize)
    {
        v.push(*l);
        x = *p;
    }
    v
}

//! `lms`: seed 003 (chapter 5 of the LMS thesis) — recovery in SRM, PGM and LMS after a
//! single loss of an original data packet, on binary trees, flat random graphs and
//! transit–stub graphs, with the seed's metrics (Fig. 5.1): normalized recovery latency,
//! LMS exposure, SRM requests and repairs per drop, PGM retransmissions per drop, plus
//! packets on the wire per drop and router state for every scheme; and beyond the seed,
//! SRM with 100 receivers and all three on transit–stub graphs of 10,000 and 100,000 nodes.
//!
//! Every run is one source sending 1024-byte messages at 10 packets/s over 1.5 Mb/s links;
//! the 31st original data packet to cross one link is dropped (for SRM's adaptive timers and
//! the beyond-the-seed repliers, 5 drops on the same link 1 s apart; for the adaptive timers
//! also a *moving* loss, one drop at every tree link in turn within one run, the setting the
//! seed's explanation of Fig. 5.25 implies); the run's events give, per receiver that detected
//! a loss, the time from detection to delivery, divided by that receiver's round-trip time to
//! the source.

//!
//! The study reads as: `sim` (one run), `plan` (the experiments and their placements),
//! this file (what is measured per run and per experiment), `derived` (measures and
//! observations built from those), `plots` and `setup`.

mod derived;
mod measure;
mod mutants;
mod plan;
mod plots;
mod runs;
mod setup;
mod sim;
#[cfg(test)]
mod tests;

pub use plan::{large_ts, random_placement, run_seed, transit_stub_placement, tree_topology};
pub use sim::{build, drops, recovery_times, simulate, LossSpec, Placement, RunShape, Scheme};

use crate::stats::Estimate;
use crate::study::{About, RunCtx, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use measure::Samples;
use plan::{Family, Plan, XOf};
use rmcast_proto::rng::mix64;
use rmcast_sim::topo::PlaneParams;
use sim::RunOut;
use std::collections::BTreeMap;
use std::sync::Arc;

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
/// GT-ITM edge probability of the flat random graphs.
pub const RANDOM_P: f64 = 0.1;
/// Graph `t` (random or transit–stub, t = 0..10) is generated from seed `TOPO_SEED_BASE + t`.
pub const TOPO_SEED_BASE: u64 = 0x003_0000;
/// Graphs per family in full mode (§5.6: 10 random and 10 transit–stub topologies).
pub const TOPOLOGIES: usize = 10;
/// Receivers on the random graphs (§5.6: 5, 20 and 100).
pub const RANDOM_RECEIVERS: [usize; 3] = [5, 20, 100];

/// Per-run values the aggregates are built from.
#[derive(Debug, Clone)]
struct Sample {
    /// The run's placement (index into the study's placements): the independent unit of the
    /// pooled latency's interval.
    pl: usize,
    /// Sum and count of the run's normalized latencies (every recovery of the run).
    lat_sum: f64,
    lat_n: usize,
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

fn sample(o: &RunOut, pl: usize, baseline_control: u64) -> Option<Sample> {
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
        pl,
        lat_sum: o.lat.iter().sum(),
        lat_n: o.lat.len(),
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

/// The x of a run of `e` on `pl`: topology index, tree height or receiver count.
fn x_of(e: &plan::Exp, pl: &Placement) -> f64 {
    match e.x {
        XOf::TopoIndex | XOf::Height => pl.topo_index as f64,
        XOf::Receivers => pl.receivers.len() as f64,
    }
}

/// Whether an experiment's runs are a fixed function of their loss site: a deterministic
/// scheme (LMS has no random timer) on the one binary tree of each height. Its loss sites are
/// then a finite population, and a mean over all of them has no sampling error.
fn enumerable(e: &plan::Exp) -> bool {
    matches!(e.scheme, Scheme::Lms | Scheme::LmsAdaptive)
        && e.families.iter().all(|f| matches!(f, Family::Tree(_)))
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

/// The mean normalized latency over every recovery of `samples` (seed 003's measure: the
/// loss visits every site and the figure averages all the recoveries it causes, so a site
/// whose loss many receivers recover weighs as many recoveries), with a 95 % interval that
/// takes `units` as the independent units: with `by_placement`, the placements (each a fresh
/// draw of source and receivers; the recoveries of one placement's runs are not
/// independent), otherwise the runs themselves (one placement, e.g. a binary tree, whose loss
/// sites are the sampled units). The mean is the ratio R = Σ y / Σ m of the units' latency
/// sums y and recovery counts m; its interval is the ratio estimator's, half-width
/// t(n − 1) · s / √n with s the SD of (y − R m) / m̄ over the n units. `sd` is that s, so a
/// projection of more units ([`crate::stats::runs_factor_to_resolve`]) reads it as usual.
/// `None` without any recovery.
fn pooled_latency(samples: &[&Sample], by_placement: bool) -> Option<Estimate> {
    let mut units: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
    for (i, s) in samples.iter().enumerate() {
        let u = units
            .entry(if by_placement { s.pl } else { i })
            .or_default();
        u.0 += s.lat_sum;
        u.1 += s.lat_n as f64;
    }
    let n = units.len();
    let (ys, ms): (f64, f64) = units
        .values()
        .fold((0.0, 0.0), |(a, b), &(y, m)| (a + y, b + m));
    if ms <= 0.0 || !ys.is_finite() {
        return None;
    }
    let r = ys / ms;
    let sd = if n > 1 {
        let mbar = ms / n as f64;
        let ss: f64 = units.values().map(|&(y, m)| (y - r * m).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt() / mbar
    } else {
        0.0
    };
    let half = if n > 1 {
        crate::stats::t975(n - 1) * sd / (n as f64).sqrt()
    } else {
        0.0
    };
    Some(Estimate {
        mean: r,
        sd,
        n,
        ci_lo: r - half,
        ci_hi: r + half,
    })
}

/// The metrics of `samples`. `by_placement`: whether the latency's units are placements
/// ([`pooled_latency`]); taken only when the samples come from two placements or more (an
/// experiment of one placement, or an enumerable one whose runs are a finite population of
/// fixed values, has its runs as units).
fn summarize(samples: &[&Sample], by_placement: bool) -> BTreeMap<&'static str, Estimate> {
    let mut m = BTreeMap::new();
    let by_placement = by_placement && samples.windows(2).any(|w| w[0].pl != w[1].pl);
    let col = |f: &dyn Fn(&Sample) -> Option<f64>| -> Vec<f64> {
        samples.iter().filter_map(|s| f(s)).collect()
    };
    if let Some(e) = pooled_latency(samples, by_placement) {
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
        if let Some(e) = Estimate::from_samples(&maxs) {
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
        if let Some(e) = Estimate::from_samples(&v) {
            m.insert(name, e);
        }
    }
    m
}

/// Fig. 5.6 both ways, per tree height: the mean over every recovery (the study's
/// `lat_mean`, the seed's measure) beside the mean of per-link means (what the study reported
/// before 2026-11-28), from the same runs.
fn bt_links_note(by_x: &BTreeMap<u64, Vec<Sample>>) -> String {
    let cells: Vec<String> = by_x
        .iter()
        .map(|(xb, runs)| {
            let refs: Vec<&Sample> = runs.iter().collect();
            let pooled = pooled_latency(&refs, false).map_or(f64::NAN, |e| e.mean);
            let per_link: Vec<f64> = runs
                .iter()
                .filter(|s| s.lat_n > 0)
                .map(|s| s.lat_sum / s.lat_n as f64)
                .collect();
            let recoveries: usize = runs.iter().map(|s| s.lat_n).sum();
            format!(
                "h = {}: {:.3} over {} recoveries, {:.3} over {} links",
                f64::from_bits(*xb),
                pooled,
                recoveries,
                per_link.iter().sum::<f64>() / per_link.len().max(1) as f64,
                per_link.len()
            )
        })
        .collect();
    format!(
        "Fig. 5.6 (binary trees, the loss at each link in turn), the mean latency over every \
         recovery (the claims' measure) against the mean of per-link means (the former one): \
         {}. The per-link mean gives a link near the leaves, whose loss one or two receivers \
         recover, the weight of a link near the root, whose loss half the tree recovers.",
        cells.join("; ")
    )
}

/// The routes of the random graphs: the share of receivers with more than one fewest-hop
/// path to the source (where hop routes rest on their tie rule), and, placement by placement,
/// the share whose route differs between the study's routes and least-delay routes
/// (`RandomDelay`, same placements).
fn routes(m: &mut Measures, pls: &[Arc<Placement>], fam_pls: &BTreeMap<Family, Vec<usize>>) {
    for (r, tag) in [(100, "rand"), (20, "rand_r20")] {
        let Some(main) = fam_pls.get(&Family::Random(r)) else {
            continue;
        };
        let frac = |k: usize, pl: &Placement| k as f64 / pl.receivers.len().max(1) as f64;
        let ties: Vec<f64> = main
            .iter()
            .map(|&i| frac(plan::fewest_hop_ties(&pls[i]), &pls[i]))
            .collect();
        if let Some(e) = Estimate::from_samples(&ties) {
            m.scalar(format!("routes.{tag}.hop_ties"), "fraction", e);
        }
        if let Some(delay) = fam_pls.get(&Family::RandomDelay(r)) {
            let differ: Vec<f64> = main
                .iter()
                .zip(delay)
                .map(|(&a, &b)| {
                    let (a, b) = (&pls[a], &pls[b]);
                    let k = a
                        .receivers
                        .iter()
                        .filter(|&&x| plan::route_links(a, x) != plan::route_links(b, x))
                        .count();
                    frac(k, a)
                })
                .collect();
            if let Some(e) = Estimate::from_samples(&differ) {
                m.scalar(format!("routes.{tag}.differ_from_delay"), "fraction", e);
            }
        }
    }
}

impl Study for Lms {
    /// Its wall time in the full run of 2026-11-29 (sharing two cores), in seconds.
    fn cost_hint(&self) -> u32 {
        312
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let mut plan = Plan::for_ctx(ctx);
        let mutant = ctx.mutant_of(mutants::MUTANTS);
        // Seed 003's ns-2 routes by hop count unless link costs are set (setup.toml's
        // `[[unstated]] hop_routes`); 0 routes by least delay.
        plan.hop_routes = ctx.param("hop_routes", 1.0) >= 0.5;
        let exps = plan.exps();
        let placed = runs::placements_for(ctx, &plan, &exps)?;
        let jobs = runs::jobs(&exps, &placed);
        let outs = runs::run(ctx, mutant, &jobs.jobs, &placed)?;

        // Aggregate per experiment and x.
        let samples = Samples::of(&exps, &placed.pls, &jobs, &outs);
        let mut m = Measures::new();
        let runs_total = samples.record(&exps, &mut m);
        samples.record_state_spread(&mut m);
        routes(&mut m, &placed.pls, &placed.fam_pls);
        derived::derived(&mut m);
        let plots = plots::plots(&m, ctx)?;
        let notes = measure::notes(ctx, &plan, &exps, (&jobs, &samples, runs_total), &m);
        Ok(StudyOutput {
            setup: setup::setup(&plan, jobs.jobs.len())?,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "lms",
            "SRM, PGM and LMS: recovery after a single loss on trees, random and transit–stub graphs",
            "seed 003 (LMS thesis, chapter 5: §5.6–5.10, Fig. 5.1, 5.4–5.30, Table 5.1)",
        )
    }
}

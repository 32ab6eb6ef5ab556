//! What the study measures from its runs: each lossy run's sample (its recovery against the
//! loss-free baseline's control traffic), aggregated per experiment and x into series and
//! whole-experiment scalars, the spread of LMS's router state, and the notes.

use super::plan::{Exp, Plan, XOf};
use super::runs::Jobs;
use super::sim::{Placement, RunOut};
use super::{bt_links_note, derived, enumerable, sample, summarize, x_of, Sample, METRICS};
use crate::stats::Estimate;
use crate::study::{RunCtx, Sweeps};
use crate::Measures;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The lossy runs' samples per experiment and x, and what was left out.
pub(super) struct Samples {
    /// Per experiment: the samples at each x (by its bits).
    pub(super) per_exp: Vec<BTreeMap<u64, Vec<Sample>>>,
    /// Runs whose loss site carried no original data (not counted).
    pub(super) no_drop: usize,
    /// Static LMS on the random graphs: each placement's router state over every run of
    /// every loss location (source, receivers, links), for `lms.rand.state_spread`.
    lms_state: BTreeMap<usize, (f64, f64)>,
    /// Enumerable experiments: loss sites per (experiment, x), and the runs made of them.
    population: BTreeMap<(usize, u64), (usize, usize)>,
}

impl Samples {
    /// Each lossy run's sample, against its baseline's control traffic.
    pub(super) fn of(exps: &[Exp], pls: &[Arc<Placement>], jobs: &Jobs, outs: &[RunOut]) -> Self {
        let mut population = jobs.population.clone();
        let baselines = &jobs.baselines;
        let mut no_drop = 0usize;
        let mut per_exp: Vec<BTreeMap<u64, Vec<Sample>>> =
            exps.iter().map(|_| BTreeMap::new()).collect();
        // Static LMS on the random graphs: each placement's router state over every run of
        // every loss location (source, receivers, links), for `lms.rand.state_spread`.
        let mut lms_state: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
        for (j, o) in jobs.jobs.iter().zip(outs) {
            let Some(ei) = j.exp else { continue };
            let x = x_of(&exps[ei], &pls[j.pl]);
            if let Some(p) = population.get_mut(&(ei, x.to_bits())) {
                p.1 += 1;
            }
            let base = baselines
                .get(&(j.pl, j.scheme, j.drops))
                .map_or(0, |&bi| outs[bi].hops_control);
            let Some(s) = sample(o, j.pl, base) else {
                no_drop += 1;
                continue;
            };
            if exps[ei].key.starts_with("lms.rand.") {
                let e = lms_state.entry(j.pl).or_insert((s.state, s.state));
                *e = (e.0.min(s.state), e.1.max(s.state));
            }
            per_exp[ei].entry(x.to_bits()).or_default().push(s);
        }
        Samples {
            per_exp,
            no_drop,
            lms_state,
            population,
        }
    }

    /// Record every experiment's series and scalars; returns the lossy runs aggregated.
    pub(super) fn record(&self, exps: &[Exp], m: &mut Measures) -> usize {
        let (per_exp, population) = (&self.per_exp, &self.population);
        let mut runs_total = 0usize;
        for (ei, (e, by_x)) in exps.iter().zip(per_exp).enumerate() {
            // Sites of an enumerable experiment not run (sampled out): an estimate over n of
            // its runs stands for a population of n + that many.
            let unrun = |xb: Option<u64>| -> Option<usize> {
                let mut any = None;
                for (&(i, b), &(sites, ran)) in population {
                    if i == ei && xb.is_none_or(|x| x == b) {
                        *any.get_or_insert(0) += sites.saturating_sub(ran);
                    }
                }
                any
            };
            let fpc = |est: Estimate, xb: Option<u64>| match unrun(xb) {
                Some(u) => est.of_finite_population(est.n + u),
                None => est,
            };
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
                for (name, est) in summarize(&refs, !enumerable(e)) {
                    series
                        .entry(name)
                        .or_default()
                        .push((f64::from_bits(*xb), fpc(est, Some(*xb))));
                }
            }
            for (name, unit) in METRICS {
                if let Some(pts) = series.remove(name) {
                    m.series(format!("{}.{name}", e.key), *unit, x_label, pts);
                }
            }
            for (name, est) in summarize(&all, !enumerable(e)) {
                let unit = METRICS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, u)| u);
                m.scalar(format!("{}.all.{name}", e.key), unit, fpc(est, None));
            }
        }
        runs_total
    }

    /// The largest difference, within one placement, between the router state of two runs
    /// with the loss in different places (0 = the state is fixed whatever the loss).
    pub(super) fn record_state_spread(&self, m: &mut Measures) {
        let lms_state = &self.lms_state;
        if let Some(spread) = lms_state.values().map(|(lo, hi)| hi - lo).reduce(f64::max) {
            let mut e = Estimate::exact(spread);
            e.n = lms_state.len();
            m.scalar("lms.rand.state_spread", "entries", e);
        }
    }
}

/// The study's notes: the runs made and left out, the mode's sampling, the routes, the
/// binary trees' links and the observations.
pub(super) fn notes(
    ctx: &RunCtx<'_>,
    plan: &Plan,
    exps: &[Exp],
    (jobs, samples, runs_total): (&Jobs, &Samples, usize),
    m: &Measures,
) -> Vec<String> {
    let mut notes = vec![format!(
        "{} runs ({} loss-free baselines); {} runs whose loss site carried no original \
         data (not counted).",
        jobs.jobs.len(),
        jobs.baselines.len(),
        samples.no_drop
    )];
    if plan.quick {
        notes.push(format!(
            "Quick mode: {} topologies × {} placements per family (the seed: 10 × 10), at \
             most {} loss sites per placement ({} for SRM; every site of the binary \
             trees), and beyond the seed only the 10,000-node transit–stub graph with 100 \
             receivers and 4 loss sites.",
            plan.topologies, plan.placements, plan.site_cap, plan.srm_site_cap
        ));
    } else if ctx.sweeps == Sweeps::Full {
        notes.push(format!(
            "Full mode: {} topologies × {} placements per family (the seed: 10 × 10), \
             more placements where a claim was undecided (see the sequential-sampling \
             note); the beyond-the-seed \
             experiments on the seed's graphs sample at most {} loss sites per placement \
             ({} for SRM with 100 receivers), and the large transit–stub graphs stop at {} \
             nodes; `--extended` runs every site and the 100,000-node graphs.",
            plan.topologies,
            plan.placements,
            plan.beyond_site_cap,
            plan.srm100_site_cap,
            plan.large.iter().map(|&(n, _)| n).max().unwrap_or(0)
        ));
    }
    notes.push(format!("{runs_total} lossy runs aggregated."));
    notes.push(derived::routes_note(m, plan.hop_routes));
    if let Some(ei) = exps.iter().position(|e| e.key == "lms.bt.links") {
        notes.push(bt_links_note(&samples.per_exp[ei]));
    }
    notes.extend(derived::observations(m));
    notes
}

//! Which runs the study makes: the placements of every family (built in parallel, more
//! where sequential sampling asks), every (experiment, placement, loss site) with a
//! loss-free baseline per (placement, scheme, shape), and the runs themselves.

use super::plan::{self, drops_of, placements, shape, sites, Exp, Family, Plan, XOf};
use super::sim::{self, LossSpec, Placement, RunOut, Scheme};
use super::{enumerable, mutants, run_seed, x_of};
use crate::sampling::Feed;
use crate::study::{RunCtx, StudyError};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The placements of the study, each with its name for the runs' cache keys, and which of
/// them each family has.
pub(super) struct Placements {
    pub(super) pls: Vec<Arc<Placement>>,
    /// What each placement is, for the runs' cache keys: (family, topology, index).
    ids: Vec<String>,
    pub(super) fam_pls: BTreeMap<Family, Vec<usize>>,
}

/// Build the placements every experiment of `exps` needs.
pub(super) fn placements_for(
    ctx: &RunCtx<'_>,
    plan: &Plan,
    exps: &[Exp],
) -> Result<Placements, StudyError> {
    // Placements per family, built in parallel (the large graphs take a while).
    let mut fams: Vec<Family> = exps.iter().flat_map(|e| e.families.clone()).collect();
    fams.sort();
    fams.dedup();
    // The random and transit-stub families: `plan.placements` per topology (the mode's),
    // more where a claim on one of their experiments is undecided (sequential sampling;
    // a placement and its runs are the independent unit). The trees and the large graph
    // have one placement each.
    let points: Vec<(Family, usize)> = fams
        .iter()
        .filter(|f| plan::sampled(**f))
        .flat_map(|&f| (0..plan.topologies).map(move |t| (f, t)))
        .collect();
    let counts = ctx.plan_runs(
        &points,
        Plan::new(ctx.sweeps).placements as u64,
        |&(f, t)| {
            exps.iter()
                .filter(|e| e.families.contains(&f))
                .map(|e| {
                    let x = match e.x {
                        XOf::TopoIndex | XOf::Height => t as f64,
                        XOf::Receivers => f.receivers() as f64,
                    };
                    Feed::at(format!("{}.*", e.key), x)
                })
                .collect()
        },
    );
    // Built in parallel (the large graphs take a while), each kept between rounds.
    let mut units: Vec<(Family, usize, usize)> = fams
        .iter()
        .filter(|f| !plan::sampled(**f))
        .map(|&f| (f, 0, 1))
        .collect();
    units.extend(
        points
            .iter()
            .zip(&counts)
            .map(|(&(f, t), &n)| (f, t, n as usize)),
    );
    let built: Vec<Vec<Arc<Placement>>> = ctx.cached_try_map(
        &units,
        |(f, t, n)| format!("placements {f:?} {t} 0..{n}"),
        |&(f, t, n)| {
            let ps = if plan::sampled(f) {
                plan::placements_at(plan, f, t, 0..n)
            } else {
                placements(plan, f)
            };
            ps.map(|v| v.into_iter().map(Arc::new).collect())
                .map_err(|e| format!("{f:?}: {e}"))
        },
    )?;
    let mut pls: Vec<Arc<Placement>> = Vec::new();
    // What each placement is, for the runs' cache keys: (family, topology, index).
    let mut pl_ids: Vec<String> = Vec::new();
    let mut fam_pls: BTreeMap<Family, Vec<usize>> = BTreeMap::new();
    for (&(f, t, _), b) in units.iter().zip(built) {
        for (p, pl) in b.into_iter().enumerate() {
            fam_pls.entry(f).or_default().push(pls.len());
            pl_ids.push(format!("{f:?} {t} {p}"));
            pls.push(pl);
        }
    }
    // Families in their own order (the trees and the large graph came first above).
    for v in fam_pls.values_mut() {
        v.sort_by_key(|&i| (pls[i].topo_index, i));
    }
    Ok(Placements {
        pls,
        ids: pl_ids,
        fam_pls,
    })
}

/// One run to do.
pub(super) struct Job {
    pub(super) pl: usize,
    pub(super) scheme: Scheme,
    /// The run's drops (empty: a loss-free baseline).
    pub(super) loss: Vec<LossSpec>,
    pub(super) drops: usize,
    /// Experiment index (`None`: a loss-free baseline).
    pub(super) exp: Option<usize>,
}

/// The runs of the study: every (experiment, placement, site), plus one loss-free baseline
/// per (placement, scheme, shape) for the control traffic that is not recovery.
pub(super) struct Jobs {
    pub(super) jobs: Vec<Job>,
    /// The baseline's job index per (placement, scheme, drops).
    pub(super) baselines: BTreeMap<(usize, Scheme, usize), usize>,
    /// Enumerable experiments: loss sites per (experiment, x), and the runs made of them.
    pub(super) population: BTreeMap<(usize, u64), (usize, usize)>,
}

/// The jobs of `exps` on `p`.
pub(super) fn jobs(exps: &[Exp], p: &Placements) -> Jobs {
    let (pls, fam_pls) = (&p.pls, &p.fam_pls);
    let mut jobs: Vec<Job> = Vec::new();
    let mut baselines: BTreeMap<(usize, Scheme, usize), usize> = BTreeMap::new();
    // Enumerable experiments: loss sites per (experiment, x), and the runs made of them.
    let mut population: BTreeMap<(usize, u64), (usize, usize)> = BTreeMap::new();
    for (ei, e) in exps.iter().enumerate() {
        for f in &e.families {
            for &pi in fam_pls.get(f).map(|v| v.as_slice()).unwrap_or(&[]) {
                if enumerable(e) {
                    let key = (ei, x_of(e, &pls[pi]).to_bits());
                    population.entry(key).or_default().0 +=
                        plan::candidates(&pls[pi], &e.loss).len();
                }
                for s in sites(&pls[pi], &e.loss, e.cap, e.drops) {
                    let drops = drops_of(&s);
                    baselines.entry((pi, e.scheme, drops)).or_insert_with(|| {
                        jobs.push(Job {
                            pl: pi,
                            scheme: e.scheme,
                            loss: Vec::new(),
                            drops,
                            exp: None,
                        });
                        jobs.len() - 1
                    });
                    jobs.push(Job {
                        pl: pi,
                        scheme: e.scheme,
                        loss: s,
                        drops,
                        exp: Some(ei),
                    });
                }
            }
        }
    }
    Jobs {
        jobs,
        baselines,
        population,
    }
}

/// Run every job, each as `mutant` (if any) changes it.
pub(super) fn run(
    ctx: &RunCtx<'_>,
    mutant: Option<&str>,
    jobs: &[Job],
    p: &Placements,
) -> Result<Vec<RunOut>, StudyError> {
    let (pls, pl_ids) = (&p.pls, &p.ids);
    // A run is named by its placement, scheme, loss sites and shape, so a later round of
    // sequential sampling (more placements) does not run it again.
    ctx.cached_try_map(
        jobs,
        |j| {
            format!(
                "run {} {:?} {:?} {} {:?}",
                pl_ids[j.pl], j.scheme, j.loss, j.drops, j.exp
            )
        },
        |j| {
            let pl = &pls[j.pl];
            let loss: &[sim::LossSpec] = if mutants::lossy(mutant) { &j.loss } else { &[] };
            sim::run(
                pl,
                mutants::scheme(mutant, j.scheme),
                loss,
                mutants::shape(mutant, shape(j.drops)),
                run_seed(pl, j.scheme),
            )
        },
    )
}

//! The runner: one study's runs and verdicts (with sequential sampling's rounds), several
//! studies on one pool, and the checks on what a study gave.

use super::*;
use crate::claim::{evaluate, parse_claims, ClaimResult, Claims};
use crate::sampling::Rounds;
use std::collections::BTreeMap;

/// Run one study and evaluate its claims. Never panics on a study's failure: a study that
/// errors gets every claim failed with the error as the reason.
pub fn run_study(study: &dyn Study, sweeps: Sweeps, progress: &dyn Progress) -> StudyReport {
    run_study_with_claims(study, study.about().claims_toml, sweeps, 1, progress)
}

/// [`run_study`] with a claims file other than the built-in one (e.g. edited on disk with
/// `rmcast repro --claims DIR`), so claims can be changed without rebuilding, and
/// `runs_factor` times the runs at every point ([`RunCtx::with_runs_factor`]).
pub fn run_study_with_claims(
    study: &dyn Study,
    claims_toml: &str,
    sweeps: Sweeps,
    runs_factor: u32,
    progress: &dyn Progress,
) -> StudyReport {
    let opts = RunOptions {
        runs_factor,
        ..RunOptions::new(sweeps)
    };
    run_study_opts(study, claims_toml, &opts, progress)
}

/// How a study is run: its mode, its runs, values for its unstated parameters and how far
/// sequential sampling may add runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// How much of the sweeps to run.
    pub sweeps: Sweeps,
    /// Multiplies every point's runs (`--runs-factor`).
    pub runs_factor: u32,
    /// Values for unstated parameters, by name (`--explore`; [`RunCtx::param`]).
    pub overrides: BTreeMap<String, f64>,
    /// Sequential sampling's cap: a point that feeds an undecided claim gets up to this many
    /// times its runs, doubling per round (1: no sequential sampling). See
    /// [`crate::sampling`].
    pub runs_cap: u32,
    /// Also judge every claim under the study's mutants and the generic ones
    /// (`--mutants`; [`crate::mutants`]).
    pub mutants: bool,
}

impl RunOptions {
    /// The mode's defaults: runs factor 1, no overrides, and a cap of
    /// [`RunOptions::DEFAULT_CAP`] in full and extended mode (1 in quick mode, whose reduced
    /// sweeps are a regression check, not a verdict).
    pub fn new(sweeps: Sweeps) -> Self {
        RunOptions {
            sweeps,
            runs_factor: 1,
            overrides: BTreeMap::new(),
            runs_cap: if sweeps == Sweeps::Quick {
                1
            } else {
                Self::DEFAULT_CAP
            },
            mutants: false,
        }
    }

    /// The default cap of sequential sampling in full mode.
    pub const DEFAULT_CAP: u32 = 4;
}

/// [`run_study_with_claims`] with every option: values for unstated parameters and the cap
/// of sequential sampling. The study runs, its claims are judged and, while a claim is
/// inconclusive and a point it depends on can gain runs, the study runs again with those
/// points' runs doubled (runs already made are kept; [`crate::sampling`]).
pub fn run_study_opts(
    study: &dyn Study,
    claims_toml: &str,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> StudyReport {
    run_study_measured(study, claims_toml, opts, progress).0
}

/// [`run_study_opts`], also giving the study's own measures of the last round (without the
/// paper's tables; `None` when the study did not run), which [`crate::mutants`] mutates.
pub(crate) fn run_study_measured(
    study: &dyn Study,
    claims_toml: &str,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> (StudyReport, Option<Measures>) {
    let mut report = StudyReport::new(study.about());
    let mut claims = match parse_claims(study.name(), claims_toml) {
        Ok(s) => s,
        Err(e) => {
            // A broken claims file must not look like "0 failed": it is one failed claim.
            report.claims.push(ClaimResult::not_evaluated(
                crate::claim::ClaimSpec {
                    id: format!("{}.claims_file", study.name()),
                    source: "rmcast".into(),
                    statement: "the study's claims file is valid".into(),
                    quote: None,
                    paper_value: None,
                    scenario: "parsing the claims file".into(),
                    measure: None,
                    predicate: crate::claim::Predicate::AtLeast {
                        of: crate::claim::Operand::Value(0.0),
                        strict: false,
                        at: None,
                        from: None,
                    },
                    explain_fail: None,
                    tests: Default::default(),
                    full_only: false,
                    calibration: false,
                },
                e.to_string(),
            ));
            report.error = Some(e.to_string());
            return (report, None);
        }
    };
    if opts.sweeps == Sweeps::Quick {
        let (full, quick): (Vec<_>, Vec<_>) = claims.specs.into_iter().partition(|c| c.full_only);
        report.not_run = full.into_iter().map(|c| c.id).collect();
        claims.specs = quick;
    }
    let mut rounds = Rounds::new(opts.runs_cap);
    loop {
        let out = {
            let ctx = RunCtx::new(opts.sweeps, progress, &claims)
                .with_runs_factor(opts.runs_factor)
                .with_overrides(opts.overrides.clone())
                .with_rounds(&rounds);
            run_checked(study, &ctx, &claims)
        };
        match out {
            Ok(mut out) => {
                claims.add_derived_measures(&mut out.measures);
                let own = out.measures.clone();
                claims.add_paper_measures(&mut out.measures);
                report.claims = claims
                    .specs
                    .iter()
                    .map(|s| evaluate(s, &out.measures))
                    .collect();
                let hot = rounds.choose(&report.claims);
                if !hot.is_empty() && rounds.next_round(hot) {
                    continue;
                }
                report.setup = out.setup;
                report.plots = out.plots;
                report.notes = out.notes;
                if let Some(note) = rounds.note() {
                    report.notes.push(note);
                }
                return (report, Some(own));
            }
            Err(e) => {
                let why = format!("the study did not run: {e}");
                report.claims = claims
                    .specs
                    .into_iter()
                    .map(|spec| ClaimResult::not_evaluated(spec, why.clone()))
                    .collect();
                report.error = Some(e.to_string());
            }
        }
        return (report, None);
    }
}

/// Run the study once and check what it gave: plot ids and units, calibration claims against
/// fitted values, and that every overridden parameter was read.
fn run_checked(
    study: &dyn Study,
    ctx: &RunCtx<'_>,
    claims: &Claims,
) -> Result<StudyOutput, StudyError> {
    let out = study.run(ctx)?;
    // A mutant's run is judged by its claims only; its plots are never drawn, and a mutant
    // may well leave one empty (every run failing, say).
    let mutated = study.mutants().iter().any(|m| ctx.mutant(m.name));
    for p in &out.plots {
        if !mutated {
            p.check()?;
        }
        let prefix = format!("{}-", study.name());
        if !p.id.starts_with(&prefix) {
            return Err(StudyError::Run(format!(
                "plot id `{}` must start with `{prefix}`",
                p.id
            )));
        }
    }
    check_calibration(&out.setup, claims)?;
    let (unapplied, unread): (Vec<String>, Vec<String>) = ctx
        .unread_overrides()
        .into_iter()
        .partition(|k| k.starts_with(&mutant_key("")));
    if !unapplied.is_empty() {
        return Err(StudyError::Run(format!(
            "study `{}` never asked about the mutation {}",
            study.name(),
            unapplied.join(", ")
        )));
    }
    if !unread.is_empty() {
        let asked = ctx.asked();
        return Err(StudyError::Run(format!(
            "study `{}` has no parameter {} to explore ({})",
            study.name(),
            unread
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if asked.is_empty() {
                "it reads none".to_string()
            } else {
                format!("it reads: {}", asked.join(", "))
            }
        )));
    }
    Ok(out)
}

/// A study's calibration claims and its fitted values agree: every claim a `fitted` value
/// names in `fitted_on` is a claim of the study marked `calibration`, and every claim marked
/// `calibration` is named by some fitted value (quick mode checks only the claims it runs).
pub(super) fn check_calibration(setup: &Setup, claims: &Claims) -> Result<(), StudyError> {
    let named: std::collections::BTreeSet<&str> = setup
        .unstated
        .iter()
        .flat_map(|u| u.fitted_on.iter().map(String::as_str))
        .collect();
    for id in &named {
        if let Some(c) = claims.specs.iter().find(|c| c.id == *id) {
            if !c.calibration {
                return Err(StudyError::Run(format!(
                    "setup.toml fits an unstated value on `{id}`, which claims.toml does not \
                     mark `calibration = true`"
                )));
            }
        }
    }
    if let Some(c) = claims
        .specs
        .iter()
        .find(|c| c.calibration && !named.contains(c.id.as_str()))
    {
        return Err(StudyError::Run(format!(
            "claim `{}` is marked calibration, but no `[[unstated]]` value of setup.toml is \
             fitted on it",
            c.id
        )));
    }
    Ok(())
}

/// Run `studies` (`claims[i]` the claims file of `studies[i]`) on the current rayon pool:
/// every study that does not [`Study::runs_alone`] at once, sharing the threads (one study's
/// long last runs overlap the others' work), then the others one at a time. `progress` makes
/// each study's progress when it starts; `finished` gets it back with the study's report and
/// how long the study took, as soon as the study ends. The reports come back in `studies`'
/// order, and each is what [`run_study_opts`] gives: nothing depends on the schedule.
pub fn run_studies<P: Progress>(
    studies: &[&dyn Study],
    claims: &[String],
    opts: &RunOptions,
    progress: impl Fn(&dyn Study) -> P + Sync,
    finished: impl Fn(P, &StudyReport, std::time::Duration) + Sync,
) -> Vec<StudyReport> {
    let run = |i: usize| {
        let (study, claims) = (studies[i], claims.get(i).map_or("", String::as_str));
        let p = progress(study);
        let started = std::time::Instant::now();
        let r = if opts.mutants {
            crate::mutants::run_mutants(study, claims, opts, &p)
        } else {
            run_study_opts(study, claims, opts, &p)
        };
        finished(p, &r, started.elapsed());
        (i, r)
    };
    let (mut together, alone): (Vec<usize>, Vec<usize>) =
        (0..studies.len()).partition(|&i| !studies[i].runs_alone());
    // The longest studies start first (first in, first out), so the last minutes of a run
    // are not one long study alone on one core: in the full run of 2026-11-29 lms, the
    // longest, started 4 minutes in, after paul. The schedule changes no result.
    together.sort_by_key(|&i| core::cmp::Reverse(studies[i].cost_hint()));
    let done = Mutex::new(Vec::with_capacity(studies.len()));
    rayon::scope_fifo(|s| {
        for &i in &together {
            let (run, done) = (&run, &done);
            s.spawn_fifo(move |_| {
                let r = run(i);
                if let Ok(mut d) = done.lock() {
                    d.push(r);
                }
            });
        }
    });
    let mut done: Vec<(usize, StudyReport)> = done.into_inner().unwrap_or_default();
    done.extend(alone.into_iter().map(run));
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Run `f` on a rayon pool with `jobs` threads (all cores when `None`).
pub fn with_jobs<R: Send>(
    jobs: Option<usize>,
    f: impl FnOnce() -> R + Send,
) -> Result<R, StudyError> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(n) = jobs {
        if n == 0 {
            return Err(StudyError::Run("--jobs must be at least 1".into()));
        }
        b = b.num_threads(n);
    }
    let pool = b
        .build()
        .map_err(|e| StudyError::Run(format!("cannot start worker threads: {e}")))?;
    Ok(pool.install(f))
}

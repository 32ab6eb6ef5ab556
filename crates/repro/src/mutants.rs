//! `rmcast repro --mutants`: could each claim have failed?
//!
//! A pass means something only if the claim would fail were the protocols or the setup
//! different in the way the claim is about. A mutation run judges every claim of a study
//! under a set of mutants and records which mutants fail it:
//!
//! * the study's declared mutants ([`Study::mutants`]): the study runs again with one
//!   mutation applied ([`RunCtx::mutant`](crate::RunCtx::mutant)): the two protocols a
//!   comparison names swapped, the mechanism a claim credits removed, the loss that drives a
//!   trend set to zero, a timer the paper fixes doubled;
//! * one generic mutant, which changes the claim's own measure and needs no new run: the
//!   measure replaced by a constant (a series by the mean of its points, a single value by
//!   0). What the claim compares its measure with (another measure, a formula) is left
//!   alone, so a comparison of two measures can only be failed by a declared mutant.
//!
//! A mutant *refutes* a claim when its run fails the claim, or leaves it inconclusive with
//! means that miss ([`ClaimResult::refuted`](crate::ClaimResult::refuted)).
//!
//! A claim that passes and that no mutant refutes *cannot fail*: the report marks it so and it
//! does not count as passed. The mutation score is the share of passing claims that some
//! mutant fails.

use crate::claim::{evaluate, parse_claims, ClaimSpec, Verdict};
use crate::measure::{Measure, Measures};
use crate::report::Markup;
use crate::stats::Estimate;
use crate::study::{mutant_key, run_study_measured, Mutant, Progress, RunOptions, Study};
use crate::StudyReport;
use serde::Serialize;

/// The mutants every study gets, applied to its measures.
pub const GENERIC: &[Mutant] = &[Mutant {
    name: "constant",
    what: "the claim's measure replaced by a constant: a series by the mean of its points \
           (no trend, no shape), a single value by 0",
}];

/// One mutant of a mutation run, and whether it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MutantRun {
    /// The mutant's name.
    pub name: &'static str,
    /// What it changes.
    pub what: &'static str,
    /// Declared by the study (a new run) or generic (the measures changed).
    pub declared: bool,
    /// Why it could not be judged (the mutated study did not run).
    pub error: Option<String>,
}

/// One claim of a mutation run: the mutants under which it failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimMutation {
    /// The claim.
    pub id: String,
    /// Its verdict without mutation.
    pub verdict: Verdict,
    /// The mutants under which it failed.
    pub killed_by: Vec<&'static str>,
}

impl ClaimMutation {
    /// It passes, and no mutant refutes it.
    pub fn cannot_fail(&self) -> bool {
        self.verdict == Verdict::Pass && self.killed_by.is_empty()
    }
}

/// A study's mutation run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyMutation {
    /// The mutants, declared first.
    pub mutants: Vec<MutantRun>,
    /// Every claim, in the study's order.
    pub claims: Vec<ClaimMutation>,
}

impl StudyMutation {
    /// The mutation score: (passing claims some mutant fails, passing claims).
    pub fn score(&self) -> (usize, usize) {
        let passing = self.claims.iter().filter(|c| c.verdict == Verdict::Pass);
        let (mut killed, mut all) = (0, 0);
        for c in passing {
            all += 1;
            killed += usize::from(!c.killed_by.is_empty());
        }
        (killed, all)
    }

    /// The claim `id`'s record.
    pub fn claim(&self, id: &str) -> Option<&ClaimMutation> {
        self.claims.iter().find(|c| c.id == id)
    }
}

/// A measure under the generic mutant `name` (`None` for a name not in [`GENERIC`]).
/// Values become exact (no spread), so a mutated claim is never inconclusive.
pub fn mutate(name: &str, m: &Measure) -> Option<Measure> {
    if name != "constant" {
        return None;
    }
    Some(match m {
        Measure::Scalar { unit, .. } => Measure::Scalar {
            unit: unit.clone(),
            value: Estimate::exact(0.0),
        },
        Measure::Series {
            unit,
            x_label,
            points,
        } => {
            let mean = points.iter().map(|(_, e)| e.mean).sum::<f64>() / points.len().max(1) as f64;
            Measure::Series {
                unit: unit.clone(),
                x_label: x_label.clone(),
                points: points
                    .iter()
                    .map(|&(x, _)| (x, Estimate::exact(mean)))
                    .collect(),
            }
        }
    })
}

/// The measure a generic mutant changes for `spec`: its subject, or, when the subject is a
/// paper table (`paper.*`, compared with rmcast's value), the measure it is compared with.
fn rmcast_side(spec: &ClaimSpec) -> Option<String> {
    let subject = spec.measure.as_deref()?;
    if !subject.starts_with("paper.") {
        return Some(subject.to_string());
    }
    spec.predicate.operand_measure().map(str::to_string)
}

/// `measures` with the one named `subject` under the generic mutant `name`.
fn with_mutated(measures: &Measures, subject: &str, name: &str) -> Option<Measures> {
    let mut out = Measures::new();
    for (n, m) in measures.iter() {
        let m = if n == subject {
            mutate(name, m)?
        } else {
            m.clone()
        };
        match m {
            Measure::Scalar { unit, value } => out.scalar(n.clone(), unit, value),
            Measure::Series {
                unit,
                x_label,
                points,
            } => out.series(n.clone(), unit, x_label, points),
        }
    }
    Some(out)
}

/// Run `study` as `opts` says, then under every mutant, and record which mutants fail each
/// claim. The declared mutants' runs use the mode's runs without sequential sampling.
pub fn run_mutants(
    study: &dyn Study,
    claims_toml: &str,
    opts: &RunOptions,
    progress: &dyn Progress,
) -> StudyReport {
    let (mut report, measures) = run_study_measured(study, claims_toml, opts, progress);
    let mut runs = Vec::new();
    // Per mutant, the ids of the claims it failed.
    let mut failed: Vec<Vec<String>> = Vec::new();
    for m in study.mutants() {
        let mut o = opts.clone();
        o.runs_cap = 1;
        o.overrides.insert(mutant_key(m.name), 1.0);
        let (r, _) = run_study_measured(study, claims_toml, &o, progress);
        failed.push(if r.error.is_none() {
            r.claims
                .iter()
                .filter(|c| c.refuted())
                .map(|c| c.spec.id.clone())
                .collect()
        } else {
            Vec::new()
        });
        runs.push(MutantRun {
            name: m.name,
            what: m.what,
            declared: true,
            error: r.error,
        });
    }
    // A generic mutant changes only the claim's own measure (its subject), never what it is
    // compared with: a claim comparing two measures must be failed by a declared mutant.
    let claims = parse_claims(study.name(), claims_toml).ok();
    for g in GENERIC {
        let judged = match (&measures, &claims) {
            (Some(m), Some(claims)) => Some(
                report
                    .claims
                    .iter()
                    .filter(|c| {
                        let Some(subject) = rmcast_side(&c.spec) else {
                            return false;
                        };
                        with_mutated(m, &subject, g.name).is_some_and(|mut mm| {
                            claims.add_paper_measures(&mut mm);
                            evaluate(&c.spec, &mm).failed()
                        })
                    })
                    .map(|c| c.spec.id.clone())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        };
        runs.push(MutantRun {
            name: g.name,
            what: g.what,
            declared: false,
            error: judged
                .is_none()
                .then(|| "the study did not run unmutated".to_string()),
        });
        failed.push(judged.unwrap_or_default());
    }
    let claims = report
        .claims
        .iter()
        .map(|c| ClaimMutation {
            id: c.spec.id.clone(),
            verdict: c.verdict,
            killed_by: runs
                .iter()
                .zip(&failed)
                .filter(|(_, ids)| ids.contains(&c.spec.id))
                .map(|(r, _)| r.name)
                .collect(),
        })
        .collect();
    report.mutation = Some(StudyMutation {
        mutants: runs,
        claims,
    });
    report
}

/// The report's "Mutants" part of a study's section (`--mutants` only): each mutant, and
/// each claim with the mutants that fail it.
pub(crate) fn section(f: Markup, out: &mut String, s: &StudyReport) {
    let Some(m) = &s.mutation else {
        return;
    };
    f.heading(out, "Mutants");
    let (killed, passing) = m.score();
    f.para(
        out,
        &f.text(&format!(
            "Mutation score: {killed} of {passing} passing claims refuted by at least one \
             mutant; {} pass whatever the mutants change (cannot fail: not counted as passed).",
            passing - killed
        )),
    );
    f.table(
        out,
        &["mutant", "kind", "what it changes", "claims it refutes"],
        m.mutants.iter().map(|r| {
            let n = m
                .claims
                .iter()
                .filter(|c| c.killed_by.contains(&r.name))
                .count();
            vec![
                f.inline(&format!("`{}`", r.name)),
                f.text(if r.declared { "declared" } else { "generic" }),
                f.text(r.what),
                match &r.error {
                    Some(e) => f.text(&format!("did not run: {e}")),
                    None => n.to_string(),
                },
            ]
        }),
    );
    f.table(
        out,
        &["claim", "verdict", "refuted by"],
        m.claims.iter().map(|c| {
            vec![
                f.inline(&format!("`{}`", c.id)),
                f.text(if c.cannot_fail() {
                    "pass: cannot fail"
                } else {
                    c.verdict.word()
                }),
                f.text(&if c.killed_by.is_empty() {
                    "none".to_string()
                } else {
                    c.killed_by.join(", ")
                }),
            ]
        }),
    );
}

/// The report's mutation line, `None` when no study ran its mutants.
pub fn score_line(studies: &[StudyReport]) -> Option<String> {
    let runs: Vec<&StudyMutation> = studies.iter().filter_map(|s| s.mutation.as_ref()).collect();
    if runs.is_empty() {
        return None;
    }
    let (killed, passing) = runs.iter().fold((0, 0), |(k, p), m| {
        let (a, b) = m.score();
        (k + a, p + b)
    });
    Some(format!(
        "mutation score: {killed} of {passing} passing claims refuted by at least one mutant \
         ({:.1} %); {} cannot fail",
        100.0 * killed as f64 / passing.max(1) as f64,
        passing - killed
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn measures() -> Measures {
        let mut m = Measures::new();
        m.scalar("s", "ms", Estimate::exact(4.0));
        m.series(
            "t",
            "ms",
            "n",
            vec![(1.0, Estimate::exact(1.0)), (3.0, Estimate::exact(3.0))],
        );
        m
    }

    #[test]
    fn the_constant_mutant_changes_only_the_claims_own_measure() {
        let m = measures();
        let c = with_mutated(&m, "t", "constant").unwrap();
        assert_eq!(
            c.points("t").iter().map(|p| p.1.mean).collect::<Vec<_>>(),
            [2.0, 2.0]
        );
        assert_eq!(c.get("s"), m.get("s"));
        let z = with_mutated(&m, "s", "constant").unwrap();
        assert_eq!(z.get("s").unwrap().at(None).unwrap().mean, 0.0);
        assert_eq!(z.get("t"), m.get("t"));
        assert!(with_mutated(&m, "s", "nonsense").is_none());
    }

    #[test]
    fn the_score_counts_passing_claims_some_mutant_fails() {
        let sm = StudyMutation {
            mutants: vec![],
            claims: vec![
                ClaimMutation {
                    id: "a".into(),
                    verdict: Verdict::Pass,
                    killed_by: vec!["constant"],
                },
                ClaimMutation {
                    id: "b".into(),
                    verdict: Verdict::Pass,
                    killed_by: vec![],
                },
                ClaimMutation {
                    id: "c".into(),
                    verdict: Verdict::Fail,
                    killed_by: vec![],
                },
            ],
        };
        assert_eq!(sm.score(), (1, 2));
        assert!(sm.claim("b").unwrap().cannot_fail());
        assert!(!sm.claim("c").unwrap().cannot_fail());
    }
}

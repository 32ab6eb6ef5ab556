//! # rmcast-repro — re-running the seed studies claim by claim
//!
//! The machinery behind `rmcast repro`: a **study** runs scenarios (in the simulator, or on
//! the `testkit` harness), records named **measures** with their spread across runs, and
//! draws **plots**; its **claims** — the paper's statements with a predicate each — live in a
//! TOML file under `scenarios/repro/<study>/claims.toml`, not in code. The runner evaluates
//! every claim against the measures and the **report** writes `report.md`, `index.html`,
//! `claims.csv`, `claims.json` and one SVG per plot.
//!
//! It is its own crate so that the `rmcast` binary stays a thin edge (argument parsing,
//! progress bars, exit codes) and so that study code is ordinary library code with unit tests.
//!
//! ## Adding a study
//!
//! 1. `scenarios/repro/<name>/claims.toml`: `study = "<name>"`, the paper's tables as
//!    `[paper.<table>]` (x, y as printed) and one `[[claim]]` per claim (see [`claim`]).
//! 2. `crates/repro/src/studies/<name>.rs`: a unit struct implementing [`Study`]: `about` names
//!    it ([`about!`]: name, title, source; the claims file follows from the name); `run` builds
//!    its sweep as a list of (point, seed) jobs, runs them with [`RunCtx::map`] (parallel,
//!    ordered, progress-reporting), summarises each point with [`Estimate::from_samples`],
//!    records measures (including analytic bounds it computes) and returns plots (fixed
//!    figures can be declared as data: [`plot_spec::PlotSpec`],
//!    `scenarios/repro/<name>/plots.toml`) and its [`Setup`] (declared as data too:
//!    `scenarios/repro/<name>/setup.toml`, read with [`setup!`], its `{name}` placeholders
//!    filled with the run's numbers). Its `run` reads as its phases: plan, run, measure and
//!    plot, each a named function in the study's own files.
//! 3. One line in [`STUDIES`] and one `pub mod` line in `studies/mod.rs`.
//!
//! ## What this crate must never do
//!
//! * hard-code a measured result or tune a parameter the paper fixed to make a claim pass;
//! * depend on wall-clock time or thread count for any number in a report;
//! * panic on a study's failure: a study that errors fails all its claims, with the reason.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod claim;
pub mod explore;
pub mod explored;
pub mod measure;
pub mod mutants;
pub mod pinned;
pub mod plot;
pub mod plot_spec;
pub mod report;
pub mod sampling;
pub mod stats;
/// The registered studies, one module each.
pub mod studies;
pub mod study;
pub mod sweep;

pub use claim::{ClaimResult, ClaimSpec, Predicate, Verdict};
pub use measure::{Measure, Measures};
pub use pinned::{Gate, Pins};
pub use plot::{Axis, Plot, PlotSeries};
pub use report::Report;
pub use stats::Estimate;
pub use study::{
    run_studies, run_study, run_study_opts, run_study_with_claims, with_jobs, About, Mutant,
    NoProgress, Progress, Provenance, RunCtx, RunOptions, Setup, Study, StudyError, StudyOutput,
    StudyReport, Sweeps, Unstated,
};

/// Every registered study, in report order. A study issue adds its line here.
pub static STUDIES: &[&dyn Study] = &[
    &studies::demo::Demo,
    &studies::segovia::Segovia,
    &studies::paul::Paul,
    &studies::prmp::Prmp,
    &studies::lms::Lms,
    &studies::xtp::Xtp,
];

/// A study name the registry does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown study `{name}` (known: {known})")]
pub struct UnknownStudy {
    /// The name asked for.
    pub name: String,
    /// The registered names, comma-separated.
    pub known: String,
}

/// Look up studies by name; an empty list selects all of them. Duplicates are run once.
pub fn select(names: &[String]) -> Result<Vec<&'static dyn Study>, UnknownStudy> {
    if names.is_empty() {
        return Ok(STUDIES.to_vec());
    }
    let mut out: Vec<&'static dyn Study> = Vec::new();
    for n in names {
        let Some(s) = STUDIES.iter().find(|s| s.name() == n.as_str()) else {
            return Err(UnknownStudy {
                name: n.clone(),
                known: STUDIES
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if !out.iter().any(|o| o.name() == s.name()) {
            out.push(*s);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_lowercase_and_claims_parse() {
        let mut names = std::collections::BTreeSet::new();
        for s in STUDIES {
            assert!(names.insert(s.name()), "duplicate study {}", s.name());
            assert!(s
                .name()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
            let c = claim::parse_claims(s.name(), s.about().claims_toml).unwrap();
            assert!(!c.specs.is_empty(), "study {} has no claims", s.name());
        }
    }

    #[test]
    fn select_all_by_default_and_refuse_unknown() {
        assert_eq!(select(&[]).unwrap().len(), STUDIES.len());
        let one = select(&["demo".into(), "demo".into()]).unwrap();
        assert_eq!(one.len(), 1);
        let e = select(&["nope".into()]).err().unwrap();
        assert!(e.to_string().contains("unknown study `nope`"));
        assert!(e.to_string().contains("demo"));
    }
}

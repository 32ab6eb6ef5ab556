//! The `Study` trait, the context a study runs in, and the runner that turns a study's
//! measurements into claim verdicts.

use crate::claim::{ClaimResult, Claims, PaperTable};
use crate::measure::Measures;
use crate::plot::Plot;
use crate::sampling::{Feed, Rounds};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The setup a study reports: what was simulated and what rmcast had to choose.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Setup {
    /// A paragraph: what the study reproduces and how.
    pub summary: String,
    /// Topology in words (nodes, links or bus, rates, delays).
    pub topology: String,
    /// Parameters as (name, value), the values the runs used.
    pub parameters: Vec<(String, String)>,
    /// (what the paper left unspecified, what rmcast chose).
    pub choices: Vec<(String, String)>,
    /// The values the seed leaves unstated that the runs depend on, each with its value and
    /// where that value comes from (`[[unstated]]` in `setup.toml`).
    pub unstated: Vec<Unstated>,
}

/// A value the seed leaves unstated, the value the runs use and its provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unstated {
    /// Its name; where the study can sweep it, the name `--explore NAME=LO..HI` takes.
    pub name: String,
    /// The value the runs use, in words with its unit.
    pub value: String,
    /// Where the value comes from.
    pub provenance: Provenance,
    /// For `seed`: where the seed gives it (e.g. "§A.2, the sample command file").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// For `fitted`: the calibration claims it was fitted on (each marked `calibration`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fitted_on: Vec<String>,
    /// The range of values the seed states or implies, `[lo, hi]`, if it gives one; an
    /// `--explore` sweep reports whether any value inside it passes a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Whether `--explore` can sweep it (the study reads it through `RunCtx::param`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub explore: bool,
    /// Why this value, and what else was tried.
    #[serde(default)]
    pub note: String,
}

/// Where an unstated value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// The seed gives it, outside the text that describes the runs (a sample file, another
    /// chapter): `section` says where.
    Seed,
    /// Fitted on the calibration claims `fitted_on`.
    Fitted,
    /// Chosen, not fitted.
    Chosen,
}

impl Unstated {
    /// The provenance in words: "seed §x", "fitted on calibration claims [a, b]" or
    /// "chosen, not fitted".
    pub fn provenance_text(&self) -> String {
        match self.provenance {
            Provenance::Seed => format!("seed {}", self.section.as_deref().unwrap_or("")),
            Provenance::Fitted => format!(
                "fitted on calibration claims [{}]",
                self.fitted_on.join(", ")
            ),
            Provenance::Chosen => "chosen, not fitted".into(),
        }
    }
}

/// A setup declared as data: a study's `scenarios/repro/<name>/setup.toml` (see
/// [`Setup::from_toml`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupFile {
    summary: String,
    topology: String,
    #[serde(default)]
    parameters: Vec<(String, String)>,
    #[serde(default)]
    choices: Vec<(String, String)>,
    #[serde(default)]
    unstated: Vec<Unstated>,
}

impl Setup {
    /// The setup a study declares in TOML (`summary`, `topology`, and `parameters` and
    /// `choices` as arrays of `[name, value]` pairs), each `{name}` in its text replaced by the
    /// value `values` gives that name (what the run computed: sweep sizes, run counts, …).
    /// Every placeholder needs a value and every value must be used; `file` names the file in
    /// an error.
    pub fn from_toml(
        file: &str,
        toml_text: &str,
        values: &[(&str, String)],
    ) -> Result<Setup, StudyError> {
        let err = |e: String| StudyError::Run(format!("{file}: {e}"));
        let f: SetupFile = toml::from_str(toml_text).map_err(|e| err(e.to_string()))?;
        let mut fill = Filler {
            values,
            used: vec![false; values.len()],
        };
        let setup = Setup {
            summary: fill.text(&f.summary).map_err(err)?,
            topology: fill.text(&f.topology).map_err(err)?,
            parameters: fill.pairs(&f.parameters).map_err(err)?,
            choices: fill.pairs(&f.choices).map_err(err)?,
            unstated: f
                .unstated
                .into_iter()
                .map(|u| {
                    Ok(Unstated {
                        value: fill.text(&u.value)?,
                        note: fill.text(&u.note)?,
                        ..u
                    })
                })
                .collect::<Result<_, String>>()
                .map_err(err)?,
        };
        for u in &setup.unstated {
            let bad = match u.provenance {
                Provenance::Seed if u.section.is_none() => Some("`seed` needs `section`"),
                Provenance::Fitted if u.fitted_on.is_empty() => Some("`fitted` needs `fitted_on`"),
                Provenance::Chosen | Provenance::Seed if !u.fitted_on.is_empty() => {
                    Some("only `fitted` takes `fitted_on`")
                }
                _ => None,
            };
            if let Some(why) = bad {
                return Err(err(format!("unstated `{}`: {why}", u.name)));
            }
        }
        match values.iter().zip(&fill.used).find(|(_, used)| !**used) {
            Some(((name, _), _)) => Err(err(format!("no `{{{name}}}` takes the value {name}"))),
            None => Ok(setup),
        }
    }
}

/// Fills `{name}` placeholders from a list of values, noting which were used.
struct Filler<'a> {
    values: &'a [(&'a str, String)],
    used: Vec<bool>,
}

impl Filler<'_> {
    fn text(&mut self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| format!("a `{{` without `}}` in {text:?}"))?;
            let name = &after[..close];
            let k = self
                .values
                .iter()
                .position(|(n, _)| *n == name)
                .ok_or_else(|| format!("no value for `{{{name}}}`"))?;
            out.push_str(&self.values[k].1);
            self.used[k] = true;
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn pairs(&mut self, pairs: &[(String, String)]) -> Result<Vec<(String, String)>, String> {
        pairs
            .iter()
            .map(|(name, value)| Ok((self.text(name)?, self.text(value)?)))
            .collect()
    }
}

/// What a study's `run` returns.
#[derive(Debug, Clone, Default)]
pub struct StudyOutput {
    /// How the study was set up, for the report.
    pub setup: Setup,
    /// Everything it measured, by name.
    pub measures: Measures,
    /// Its figures.
    pub plots: Vec<Plot>,
    /// Free remarks for the report (observations, caveats).
    pub notes: Vec<String>,
}

/// A failure inside a study run (not a failed claim).
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// The run itself failed; the text says why.
    #[error("{0}")]
    Run(String),
    /// The claims file is broken.
    #[error(transparent)]
    Claims(#[from] crate::claim::ClaimFileError),
    /// A plot cannot go into a report.
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
}

/// Where a study reports progress (the CLI draws a bar; tests ignore it).
pub trait Progress: Sync {
    /// More work units are coming.
    fn add_total(&self, n: u64);
    /// Work units finished.
    fn inc(&self, n: u64);
}

/// A `Progress` that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn add_total(&self, _n: u64) {}
    fn inc(&self, _n: u64) {}
}

/// How much of its sweeps a study runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sweeps {
    /// Reduced sweeps (fewer points and runs), for CI (`--quick`).
    Quick,
    /// Every point a claim or a plot of the paper needs, each with the runs its verdict
    /// needs (the default).
    Full,
    /// Full, plus the long beyond-the-paper sizes and the extra runs that change no claim
    /// (`--extended`).
    Extended,
}

impl Sweeps {
    /// Quick or full mode, from a `--quick` flag.
    pub fn from_quick(quick: bool) -> Self {
        if quick {
            Sweeps::Quick
        } else {
            Sweeps::Full
        }
    }
}

/// The override key under which a run is mutated by `name` ([`RunCtx::mutant`]).
pub fn mutant_key(name: &str) -> String {
    format!("mutant:{name}")
}

/// What a study's `run` gets: the mode and the means to run work in parallel.
pub struct RunCtx<'a> {
    /// How much of the sweeps to run.
    pub sweeps: Sweeps,
    runs_factor: u32,
    progress: &'a dyn Progress,
    claims: &'a Claims,
    /// Values given to unstated parameters (`--explore`), by name.
    overrides: BTreeMap<String, f64>,
    /// The names the study asked for with [`RunCtx::param`].
    asked: Mutex<BTreeSet<String>>,
    /// Sequential sampling's rounds (none: every point gets its mode's runs).
    rounds: Option<&'a Rounds>,
    /// How many [`RunCtx::sample`] calls the study has made in this round.
    calls: AtomicUsize,
}

impl<'a> RunCtx<'a> {
    /// A context for one run of a study against `claims`, reporting to `progress`.
    pub fn new(sweeps: Sweeps, progress: &'a dyn Progress, claims: &'a Claims) -> Self {
        RunCtx {
            sweeps,
            runs_factor: 1,
            progress,
            claims,
            overrides: BTreeMap::new(),
            asked: Mutex::new(BTreeSet::new()),
            rounds: None,
            calls: AtomicUsize::new(0),
        }
    }

    /// The same context in one round of sequential sampling ([`crate::sampling`]).
    pub fn with_rounds(mut self, rounds: &'a Rounds) -> Self {
        self.rounds = Some(rounds);
        self
    }

    /// Run every point `runs` times or more, `run(point, k)` for run `k`, and return each
    /// point's runs in the points' order. Under sequential sampling ([`crate::sampling`]) a
    /// point whose `feeds` reach an undecided claim gets its runs doubled in the next round,
    /// up to the cap, and runs made in earlier rounds are not made again; otherwise every
    /// point gets `runs` times the runs factor. `run` must derive its randomness from the
    /// point and `k` alone, so the first runs stay the same when more are added. A point with
    /// no feeds never gains runs; its runs are still kept between rounds (so `sample` is also
    /// the cached form of [`RunCtx::try_map`]).
    pub fn sample<P, R, G, F>(
        &self,
        points: &[P],
        runs: u64,
        feeds: G,
        run: F,
    ) -> Result<Vec<Vec<R>>, StudyError>
    where
        P: Sync,
        R: Clone + Send + Sync + 'static,
        G: Fn(&P) -> Vec<Feed>,
        F: Fn(&P, u64) -> Result<R, String> + Sync + Send,
    {
        self.sample_sized(points, runs, feeds, |_| 0, run)
    }

    /// How many runs each point gets in this round (`runs` times the runs factor, doubled
    /// per earlier round whose undecided claims its `feeds` reach, up to the cap), for a study
    /// whose runs are not independent calls (a run that builds a placement and many
    /// simulations on it): it makes its runs itself, usually through
    /// [`RunCtx::cached_try_map`] so that later rounds do not repeat them.
    pub fn plan_runs<P>(
        &self,
        points: &[P],
        runs: u64,
        feeds: impl Fn(&P) -> Vec<Feed>,
    ) -> Vec<u64> {
        self.plan_call(points, runs, feeds).1
    }

    /// The next call's number (the first part of its runs' cache keys) and its points' runs.
    fn plan_call<P>(
        &self,
        points: &[P],
        runs: u64,
        feeds: impl Fn(&P) -> Vec<Feed>,
    ) -> (usize, Vec<u64>) {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let base = runs.saturating_mul(u64::from(self.runs_factor));
        let counts = match self.rounds {
            Some(r) => r.plan(call, points.iter().map(feeds).collect(), base),
            None => vec![base; points.len()],
        };
        (call, counts)
    }

    /// [`RunCtx::try_map`] whose results are kept between rounds of sequential sampling
    /// under the study's own `key` for each item (a key must name what the item computes,
    /// whatever round builds it); items whose key an earlier round computed are not run
    /// again.
    pub fn cached_try_map<T, R, K, F>(
        &self,
        items: &[T],
        key: K,
        f: F,
    ) -> Result<Vec<R>, StudyError>
    where
        T: Sync,
        R: Clone + Send + Sync + 'static,
        K: Fn(&T) -> String,
        F: Fn(&T) -> Result<R, String> + Sync + Send,
    {
        let keys: Vec<String> = items.iter().map(key).collect();
        let mut out: Vec<Option<R>> = keys
            .iter()
            .map(|k| self.rounds.and_then(|r| r.cached_by_key::<R>(k)))
            .collect();
        let todo: Vec<usize> = (0..items.len()).filter(|&i| out[i].is_none()).collect();
        let made = self.try_map(&todo, |&i| f(&items[i]))?;
        for (i, r) in todo.into_iter().zip(made) {
            if let Some(rounds) = self.rounds {
                rounds.keep_by_key(keys[i].clone(), &r);
            }
            out[i] = Some(r);
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// [`RunCtx::sample`] that starts the runs of the largest points (by `size`) first, so
    /// the pool is not left waiting on one long tail; the results are in the same order.
    pub fn sample_sized<P, R, G, Z, F>(
        &self,
        points: &[P],
        runs: u64,
        feeds: G,
        size: Z,
        run: F,
    ) -> Result<Vec<Vec<R>>, StudyError>
    where
        P: Sync,
        R: Clone + Send + Sync + 'static,
        G: Fn(&P) -> Vec<Feed>,
        Z: Fn(&P) -> u64,
        F: Fn(&P, u64) -> Result<R, String> + Sync + Send,
    {
        let (call, counts) = self.plan_call(points, runs, feeds);
        let mut out: Vec<Vec<Option<R>>> = counts
            .iter()
            .map(|&n| (0..n).map(|_| None).collect())
            .collect();
        let mut todo: Vec<(usize, u64)> = Vec::new();
        for (i, &n) in counts.iter().enumerate() {
            for k in 0..n {
                match self.rounds.and_then(|r| r.cached::<R>((call, i, k))) {
                    Some(hit) => out[i][k as usize] = Some(hit),
                    None => todo.push((i, k)),
                }
            }
        }
        todo.sort_by_key(|&(i, _)| core::cmp::Reverse(size(&points[i])));
        let made = self.try_map(&todo, |&(i, k)| run(&points[i], k))?;
        for (&(i, k), r) in todo.iter().zip(made) {
            if let Some(rounds) = self.rounds {
                rounds.keep((call, i, k), &r);
            }
            out[i][k as usize] = Some(r);
        }
        Ok(out
            .into_iter()
            .map(|runs| runs.into_iter().flatten().collect())
            .collect())
    }

    /// The same context with these values for unstated parameters (`--explore`): a study
    /// reads each through [`RunCtx::param`].
    pub fn with_overrides(mut self, overrides: BTreeMap<String, f64>) -> Self {
        self.overrides = overrides;
        self
    }

    /// The value of the unstated parameter `name`: the one `--explore` gives, or `default`
    /// (the study's own value, as its setup.toml's `[[unstated]]` entry states it). A study
    /// reads every parameter it lets `--explore` sweep through this, so the runner can refuse
    /// a name the study never reads.
    pub fn param(&self, name: &str, default: f64) -> f64 {
        if let Ok(mut asked) = self.asked.lock() {
            asked.insert(name.to_string());
        }
        self.overrides.get(name).copied().unwrap_or(default)
    }

    /// Whether the run is under the declared mutation `name` ([`Study::mutants`];
    /// `rmcast repro --mutants`). The runner refuses a run under a mutation the study never
    /// asked about, as it refuses an unread `--explore` parameter.
    pub fn mutant(&self, name: &str) -> bool {
        self.param(&mutant_key(name), 0.0) >= 0.5
    }

    /// The one of `mutants` this run is under, if any. Asks about every one, so a run under
    /// any declared mutant passes the runner's check that the study applied it.
    pub fn mutant_of(&self, mutants: &[Mutant]) -> Option<&'static str> {
        let on: Vec<&'static str> = mutants
            .iter()
            .filter(|m| self.mutant(m.name))
            .map(|m| m.name)
            .collect();
        on.first().copied()
    }

    /// The overridden names the study never read with [`RunCtx::param`].
    fn unread_overrides(&self) -> Vec<String> {
        let asked = self.asked.lock().map(|a| a.clone()).unwrap_or_default();
        self.overrides
            .keys()
            .filter(|k| !asked.contains(*k))
            .cloned()
            .collect()
    }

    /// The parameters the study read with [`RunCtx::param`], sorted.
    fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .map(|a| a.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The same context with `factor` times the runs at every point (`--runs-factor`; 0 is
    /// taken as 1). A study's plan applies it through [`plan!`](crate::plan)'s `runs` fields.
    pub fn with_runs_factor(mut self, factor: u32) -> Self {
        self.runs_factor = factor.max(1);
        self
    }

    /// How many times its mode's runs a study runs at every point (1 unless `--runs-factor`).
    pub fn runs_factor(&self) -> u32 {
        self.runs_factor
    }

    /// Reduced sweeps (fewer points and runs), for CI.
    pub fn quick(&self) -> bool {
        self.sweeps == Sweeps::Quick
    }

    /// A paper table from the study's claims file (`[paper.<name>]`), for plotting.
    pub fn paper(&self, name: &str) -> Result<&'a PaperTable, StudyError> {
        self.claims
            .paper
            .get(name)
            .ok_or_else(|| StudyError::Run(format!("the claims file has no table [paper.{name}]")))
    }

    /// Run `f` on every item in parallel (rayon, on the runner's thread pool) and return the
    /// results in the items' order, so results do not depend on the thread count. Each
    /// finished item advances the progress bar by one.
    pub fn map<T, R, F>(&self, items: &[T], f: F) -> Vec<R>
    where
        T: Sync,
        R: Send,
        F: Fn(&T) -> R + Sync + Send,
    {
        self.progress.add_total(items.len() as u64);
        items
            .par_iter()
            .map(|it| {
                let r = f(it);
                self.progress.inc(1);
                r
            })
            .collect()
    }

    /// [`RunCtx::map`] over fallible runs: every result, in the items' order, or the first
    /// error as a study error.
    pub fn try_map<T, R, F>(&self, items: &[T], f: F) -> Result<Vec<R>, StudyError>
    where
        T: Sync,
        R: Send,
        F: Fn(&T) -> Result<R, String> + Sync + Send,
    {
        self.map(items, f)
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(StudyError::Run)
    }

    /// Where the study reports progress.
    pub fn progress(&self) -> &dyn Progress {
        self.progress
    }
}

/// What a study is, as the command line and the report name it.
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// Command-line name, lowercase (`segovia`, `paul`, …); claim ids start with it.
    pub name: &'static str,
    /// Human title of the study.
    pub title: &'static str,
    /// The seed document(s) and what the study covers, e.g. "seed 000 (Segovia 1996)".
    pub source: &'static str,
    /// The claims file (TOML, see [`crate::claim`]), usually
    /// `include_str!("../../../../scenarios/repro/<name>/claims.toml")`.
    pub claims_toml: &'static str,
}

/// The [`About`] of a study from its name (a string literal), title and source; its claims
/// file is `scenarios/repro/<name>/claims.toml`, read in at build time.
#[macro_export]
macro_rules! about {
    ($name:literal, $title:expr, $source:expr $(,)?) => {
        $crate::study::About {
            name: $name,
            title: $title,
            source: $source,
            claims_toml: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/repro/",
                $name,
                "/claims.toml"
            )),
        }
    };
}

/// The [`Setup`] a study declares in `scenarios/repro/<name>/setup.toml` (read in at build
/// time), its `{placeholders}` filled from `values` ([`Setup::from_toml`]).
#[macro_export]
macro_rules! setup {
    ($name:literal, $values:expr $(,)?) => {
        $crate::study::Setup::from_toml(
            concat!("scenarios/repro/", $name, "/setup.toml"),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/repro/",
                $name,
                "/setup.toml"
            )),
            $values,
        )
    };
}

/// A study's sweep sizes: a struct (usually `Plan`) whose fields are each written once with
/// the value of quick mode (`--quick`), of full mode and, where it differs from full, of
/// extended mode (`--extended`), and `new(sweeps)` choosing between them. The `runs` line
/// names the fields that count runs per point (seeds, placements, repetitions; none: `runs;`):
/// `for_ctx(ctx)` is `new(ctx.sweeps)` with those multiplied by
/// [`RunCtx::runs_factor`] (`--runs-factor`), so a study cannot forget to honour it. A study
/// derives run `k`'s seed from its point and `k` alone, so the first runs stay what they were
/// and the extra ones are new.
///
/// ```
/// use rmcast_repro::Sweeps;
/// const RECEIVERS: [f64; 4] = [5.0, 10.0, 20.0, 60.0];
/// rmcast_repro::plan! {
///     struct Plan {
///         /// Runs per sweep point.
///         seeds: u64 = quick 3, full 10;
///         receivers: Vec<f64> = quick vec![5.0, 60.0], full RECEIVERS.to_vec(),
///             extended vec![5.0, 10.0, 20.0, 60.0, 1000.0];
///     }
///     runs: seeds;
/// }
/// let (q, f) = (Plan::new(Sweeps::Quick), Plan::new(Sweeps::Full));
/// let e = Plan::new(Sweeps::Extended);
/// assert_eq!((q.seeds, q.receivers), (3, vec![5.0, 60.0]));
/// assert_eq!((f.seeds, f.receivers), (10, RECEIVERS.to_vec()));
/// assert_eq!((e.seeds, e.receivers.len()), (10, 5));
/// let mut x4 = Plan::new(Sweeps::Full);
/// x4.scale_runs(4);
/// assert_eq!((x4.seeds, x4.receivers), (40, RECEIVERS.to_vec()));
/// ```
#[macro_export]
macro_rules! plan {
    (@extended $full:expr) => {
        $full
    };
    (@extended $full:expr, $extended:expr) => {
        $extended
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident: $ty:ty =
                    quick $quick:expr, full $full:expr $(, extended $extended:expr)?;
            )*
        }
        runs: $($runs:ident),* ;
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$fmeta])*
                $fvis $field: $ty,
            )*
        }

        impl $name {
            /// The sizes of quick, full or extended mode.
            $vis fn new(sweeps: $crate::Sweeps) -> Self {
                match sweeps {
                    $crate::Sweeps::Quick => $name { $($field: $quick,)* },
                    $crate::Sweeps::Full => $name { $($field: $full,)* },
                    $crate::Sweeps::Extended => $name {
                        $($field: $crate::plan!(@extended $full $(, $extended)?),)*
                    },
                }
            }

            /// Multiply the runs per point (the `runs` fields) by `factor`.
            #[allow(dead_code, unused_variables)]
            $vis fn scale_runs(&mut self, factor: u32) {
                $(self.$runs = self.$runs.saturating_mul(factor as _);)*
            }

            /// The sizes of `ctx`'s mode with its runs factor applied.
            #[allow(dead_code)]
            $vis fn for_ctx(ctx: &$crate::RunCtx<'_>) -> Self {
                let mut plan = Self::new(ctx.sweeps);
                plan.scale_runs(ctx.runs_factor());
                plan
            }
        }
    };
}

/// A reproduced study. Implementations are unit structs registered in [`crate::STUDIES`].
///
/// A run must be a pure function of `ctx.sweeps`: every random choice comes from seeds the
/// study derives itself (e.g. run `k` of a point uses seed `k`).
pub trait Study: Send + Sync {
    /// What the study is: its name, title, source and claims file.
    fn about(&self) -> About;
    /// Command-line name ([`About::name`]).
    fn name(&self) -> &'static str {
        self.about().name
    }
    /// Run the study's scenarios and record its measures and plots.
    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError>;
    /// Whether some of its runs measure wall-clock time on real sockets, so that other
    /// studies' simulations running beside them would distort them: such a study runs alone,
    /// after the others.
    fn runs_alone(&self) -> bool {
        false
    }
    /// How long the study takes in full mode, roughly, in seconds of one core: the runner
    /// starts the longest studies first. Only the schedule depends on it, never a result.
    fn cost_hint(&self) -> u32 {
        1
    }
    /// The mutations the study declares for `rmcast repro --mutants` ([`crate::mutants`]):
    /// changes to a protocol or the setup (swap the protocols a comparison names, remove the
    /// mechanism a claim credits, set the loss that drives a trend to zero, double a timer
    /// the paper fixes) that some claim should notice. The study applies each where
    /// [`RunCtx::mutant`] says so.
    fn mutants(&self) -> Vec<Mutant> {
        Vec::new()
    }
}

/// A declared mutation of a study ([`Study::mutants`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// Its name, as [`RunCtx::mutant`] asks for it.
    pub name: &'static str,
    /// What it changes, in words.
    pub what: &'static str,
}

/// One study's section of the report.
#[derive(Debug, Clone, Serialize)]
pub struct StudyReport {
    /// The study's command-line name.
    pub name: String,
    /// Its human title.
    pub title: String,
    /// The seed document(s) it reproduces.
    pub source: String,
    /// How it was set up.
    pub setup: Setup,
    /// Every claim with its verdict.
    pub claims: Vec<ClaimResult>,
    /// Its figures.
    pub plots: Vec<Plot>,
    /// Free remarks (observations, caveats).
    pub notes: Vec<String>,
    /// Set when the study could not run; its claims are then all failed.
    pub error: Option<String>,
    /// Claims not evaluated because they need full mode's sweeps (quick mode only).
    pub not_run: Vec<String>,
    /// Which mutants fail each claim (`rmcast repro --mutants` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mutation: Option<crate::mutants::StudyMutation>,
}

impl StudyReport {
    /// The section of a study that has not run yet: its name, title and source only.
    pub fn new(about: About) -> Self {
        StudyReport {
            name: about.name.to_string(),
            title: about.title.to_string(),
            source: about.source.to_string(),
            setup: Setup::default(),
            claims: Vec::new(),
            plots: Vec::new(),
            notes: Vec::new(),
            error: None,
            not_run: Vec::new(),
            mutation: None,
        }
    }

    /// How many of its claims passed.
    pub fn passed(&self) -> usize {
        self.claims.iter().filter(|c| c.passed()).count() - self.cannot_fail()
    }
    /// How many of its claims pass although no mutant refutes them (`--mutants` only): they
    /// are not counted as passed.
    pub fn cannot_fail(&self) -> usize {
        self.mutation
            .as_ref()
            .map_or(0, |m| m.claims.iter().filter(|c| c.cannot_fail()).count())
    }
    /// How many of its claims failed.
    pub fn failed(&self) -> usize {
        self.claims.iter().filter(|c| c.failed()).count()
    }
    /// How many of its claims are inconclusive (a 95 % interval across a band or bound).
    pub fn inconclusive(&self) -> usize {
        self.claims.len() - self.passed() - self.failed() - self.cannot_fail()
    }
}

mod runner;
pub(crate) use runner::run_study_measured;
pub use runner::{
    run_studies, run_study, run_study_opts, run_study_with_claims, with_jobs, RunOptions,
};

#[cfg(test)]
mod tests;

//! The `Study` trait, the context a study runs in, and the runner that turns a study's
//! measurements into claim verdicts.

use crate::claim::{evaluate, parse_claims, ClaimResult, Claims, PaperTable};
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
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let base = runs.saturating_mul(u64::from(self.runs_factor));
        match self.rounds {
            Some(r) => r.plan(call, points.iter().map(feeds).collect(), base),
            None => vec![base; points.len()],
        }
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
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let base = runs.saturating_mul(u64::from(self.runs_factor));
        let counts: Vec<u64> = match self.rounds {
            Some(r) => r.plan(call, points.iter().map(&feeds).collect(), base),
            None => vec![base; points.len()],
        };
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

    /// [`RunCtx::try_map`] that starts the largest items (by `size`) first, so the pool is not
    /// left waiting on one long tail; the results are still in the items' order.
    pub fn try_map_largest_first<T, R, K, F>(
        &self,
        items: &[T],
        size: impl Fn(&T) -> K,
        f: F,
    ) -> Result<Vec<R>, StudyError>
    where
        T: Sync,
        R: Send,
        K: Ord,
        F: Fn(&T) -> Result<R, String> + Sync + Send,
    {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&j| core::cmp::Reverse(size(&items[j])));
        let ordered: Vec<&T> = order.iter().filter_map(|&j| items.get(j)).collect();
        let done = self.try_map(&ordered, |it| f(it))?;
        let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
        for (&j, r) in order.iter().zip(done) {
            results[j] = Some(r);
        }
        Ok(results.into_iter().flatten().collect())
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
/// let (q, f, e) = (Plan::new(Sweeps::Quick), Plan::new(Sweeps::Full), Plan::new(Sweeps::Extended));
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
        }
    }

    /// How many of its claims passed.
    pub fn passed(&self) -> usize {
        self.claims.iter().filter(|c| c.passed()).count()
    }
    /// How many of its claims failed.
    pub fn failed(&self) -> usize {
        self.claims.iter().filter(|c| c.failed()).count()
    }
    /// How many of its claims are inconclusive (a 95 % interval across a band or bound).
    pub fn inconclusive(&self) -> usize {
        self.claims.len() - self.passed() - self.failed()
    }
}

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
                    paper_value: None,
                    scenario: "parsing the claims file".into(),
                    measure: None,
                    predicate: crate::claim::Predicate::AtLeast {
                        of: crate::claim::Operand::Value(0.0),
                        strict: false,
                        at: None,
                    },
                    explain_fail: None,
                    tests: Default::default(),
                    full_only: false,
                    calibration: false,
                },
                e.to_string(),
            ));
            report.error = Some(e.to_string());
            return report;
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
                claims.add_paper_measures(&mut out.measures);
                report.claims = claims
                    .specs
                    .iter()
                    .map(|s| evaluate(s, &out.measures))
                    .collect();
                let hot = crate::sampling::undecided(&report.claims, rounds.reach());
                if !hot.is_empty() && rounds.next_round(hot) {
                    continue;
                }
                report.setup = out.setup;
                report.plots = out.plots;
                report.notes = out.notes;
                if let Some(note) = rounds.note() {
                    report.notes.push(note);
                }
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
        return report;
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
    for p in &out.plots {
        p.check()?;
        let prefix = format!("{}-", study.name());
        if !p.id.starts_with(&prefix) {
            return Err(StudyError::Run(format!(
                "plot id `{}` must start with `{prefix}`",
                p.id
            )));
        }
    }
    check_calibration(&out.setup, claims)?;
    let unread = ctx.unread_overrides();
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
fn check_calibration(setup: &Setup, claims: &Claims) -> Result<(), StudyError> {
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
        let r = run_study_opts(study, claims, opts, &p);
        finished(p, &r, started.elapsed());
        (i, r)
    };
    let (together, alone): (Vec<usize>, Vec<usize>) =
        (0..studies.len()).partition(|&i| !studies[i].runs_alone());
    let mut done: Vec<(usize, StudyReport)> = together.into_par_iter().map(run).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Verdict;
    use crate::plot::{Axis, PlotSeries};
    use crate::report::Report;
    use crate::stats::Estimate;

    /// A study whose measurements are given, to test the runner and the report.
    struct Fixed {
        claims: &'static str,
        fail_run: bool,
        plot_unit: &'static str,
    }

    impl Study for Fixed {
        fn about(&self) -> About {
            About {
                name: "fixed",
                title: "Fixed measurements",
                source: "test",
                claims_toml: self.claims,
            }
        }
        fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
            if self.fail_run {
                return Err(StudyError::Run("simulated failure".into()));
            }
            // Runs through the parallel map, in order.
            let xs: Vec<f64> = vec![1.0, 2.0, 3.0];
            let ys = ctx.map(&xs, |x| x * 2.0);
            assert_eq!(ys, vec![2.0, 4.0, 6.0]);
            let mut m = Measures::new();
            let pts: Vec<(f64, Estimate)> = xs
                .iter()
                .zip(&ys)
                .map(|(&x, &y)| (x, Estimate::from_samples(&[y - 0.01, y + 0.01]).unwrap()))
                .collect();
            m.series("y", "ms", "n", pts.clone());
            Ok(StudyOutput {
                setup: Setup {
                    summary: "s".into(),
                    ..Setup::default()
                },
                measures: m,
                plots: vec![Plot {
                    id: "fixed-y".into(),
                    title: "y".into(),
                    caption: "c".into(),
                    x: Axis::new("n", "count"),
                    y: Axis::new("y", self.plot_unit),
                    series: vec![PlotSeries::measured("y", 0, &pts)],
                }],
                notes: vec![],
            })
        }
    }

    const CLAIMS: &str = include_str!("../testdata/fixed-claims.toml");

    /// A study that only names itself and records when it ran (to test the schedule).
    struct Named {
        name: &'static str,
        alone: bool,
        log: &'static std::sync::Mutex<Vec<String>>,
    }

    impl Study for Named {
        fn about(&self) -> About {
            About {
                name: self.name,
                title: "",
                source: "",
                claims_toml: "",
            }
        }
        fn runs_alone(&self) -> bool {
            self.alone
        }
        fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("start {}", self.name));
            let _ = ctx.map(&[1, 2, 3], |x| x + 1);
            self.log.lock().unwrap().push(format!("end {}", self.name));
            Ok(StudyOutput {
                setup: Setup::default(),
                measures: Measures::new(),
                plots: vec![],
                notes: vec![],
            })
        }
    }

    #[test]
    fn studies_run_together_except_those_that_run_alone_which_come_last_one_at_a_time() {
        static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let (a, b, c, d) = (
            Named {
                name: "a",
                alone: false,
                log: &LOG,
            },
            Named {
                name: "b",
                alone: true,
                log: &LOG,
            },
            Named {
                name: "c",
                alone: false,
                log: &LOG,
            },
            Named {
                name: "d",
                alone: true,
                log: &LOG,
            },
        );
        let studies: Vec<&dyn Study> = vec![&a, &b, &c, &d];
        let claims: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| format!("study = \"{n}\""))
            .collect();
        let finished = std::sync::Mutex::new(Vec::new());
        let reports = with_jobs(Some(2), || {
            run_studies(
                &studies,
                &claims,
                &RunOptions::new(Sweeps::Quick),
                |_| NoProgress,
                |_, r, _| finished.lock().unwrap().push(r.name.clone()),
            )
        })
        .unwrap();
        // The reports in the given order, whatever order the studies finished in.
        let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        let log = LOG.lock().unwrap().clone();
        // The two that run alone start after the others ended, each after the previous ended.
        let at = |what: &str| log.iter().position(|l| l == what).unwrap();
        assert!(at("start b") > at("end a").max(at("end c")), "{log:?}");
        assert_eq!(at("start d"), at("end b") + 1, "{log:?}");
        let finished = finished.into_inner().unwrap();
        assert_eq!(&finished[2..], ["b", "d"], "{finished:?}");
    }

    #[test]
    fn verdicts_and_report_of_a_failing_claim() {
        let r = run_study(
            &Fixed {
                claims: CLAIMS,
                fail_run: false,
                plot_unit: "ms",
            },
            Sweeps::Full,
            &NoProgress,
        );
        assert!(r.error.is_none());
        let v: Vec<Verdict> = r.claims.iter().map(|c| c.verdict).collect();
        assert_eq!(v, vec![Verdict::Pass, Verdict::Fail]);
        let rep = Report {
            sweeps: Sweeps::Quick,
            runs_factor: 1,
            studies: vec![r],
        };
        assert_eq!(
            rep.summary_line(),
            "claims: 1 passed, 0 inconclusive, 1 failed"
        );
        let md = rep.markdown();
        assert!(md.contains("### Failed claims"));
        assert!(md.contains("known: y reaches 6 at n = 3"));
        assert!(md.contains("Quick mode"));
        let csv = rep.claims_csv().unwrap();
        assert_eq!(csv.lines().count(), 3);
        assert!(csv
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("fixed.small,fixed,"));
        let dir = std::env::temp_dir().join(format!("rmcast-repro-unit-{}", std::process::id()));
        let w = rep.write(&dir).unwrap();
        assert_eq!(w.svgs.len(), 1);
        let html = std::fs::read_to_string(&w.html).unwrap();
        assert!(html.contains("id=\"plot-fixed-y\""));
        assert!(html.contains("data-verdict=\"fail\""));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_study_that_errors_fails_every_claim() {
        let r = run_study(
            &Fixed {
                claims: CLAIMS,
                fail_run: true,
                plot_unit: "ms",
            },
            Sweeps::Full,
            &NoProgress,
        );
        assert_eq!(r.claims.len(), 2);
        assert!(r.claims.iter().all(|c| !c.passed()));
        assert!(r.claims[0].detail.contains("simulated failure"));
    }

    #[test]
    fn a_plot_without_units_is_a_study_error() {
        let r = run_study(
            &Fixed {
                claims: CLAIMS,
                fail_run: false,
                plot_unit: "",
            },
            Sweeps::Full,
            &NoProgress,
        );
        assert!(r.error.as_deref().unwrap_or("").contains("unit"));
        assert_eq!(r.failed(), 2);
    }

    #[test]
    fn a_broken_claims_file_is_one_failed_claim() {
        let r = run_study(
            &Fixed {
                claims: "study = \"fixed\"\n[[claim]]\nid = 3\n",
                fail_run: false,
                plot_unit: "ms",
            },
            Sweeps::Full,
            &NoProgress,
        );
        assert_eq!(r.claims.len(), 1);
        assert_eq!(r.claims[0].spec.id, "fixed.claims_file");
        assert_eq!(r.failed(), 1);
    }

    #[test]
    fn a_setup_file_is_filled_from_the_values() {
        let toml = r#"
            summary = "{runs} runs of {what}"
            topology = "a star"
            parameters = [["runs", "{runs}"]]
            choices = [["{what} size", "1 KB"]]
        "#;
        let values = [("runs", "12".to_string()), ("what", "blocks".to_string())];
        let s = Setup::from_toml("setup.toml", toml, &values).unwrap();
        assert_eq!(s.summary, "12 runs of blocks");
        assert_eq!(s.topology, "a star");
        assert_eq!(s.parameters, vec![("runs".to_string(), "12".to_string())]);
        assert_eq!(s.choices, vec![("blocks size".into(), "1 KB".into())]);
        // A placeholder without a value, a value without a placeholder, an unclosed brace and
        // an unknown key are errors that name the file.
        let unknown = Setup::from_toml("setup.toml", toml, &values[..1]).unwrap_err();
        assert!(
            unknown.to_string().contains("no value for `{what}`"),
            "{unknown}"
        );
        let extra = [
            ("runs", "1".into()),
            ("what", "x".into()),
            ("seeds", "3".into()),
        ];
        let unused = Setup::from_toml("setup.toml", toml, &extra).unwrap_err();
        assert!(unused.to_string().contains("seeds"), "{unused}");
        let open = Setup::from_toml("s.toml", "summary = \"{runs\"\ntopology = \"\"", &values);
        assert!(open.unwrap_err().to_string().starts_with("s.toml: "));
        let key = Setup::from_toml("s.toml", "summary = \"\"\ntopology = \"\"\nx = 1", &[]);
        assert!(key.is_err());
    }

    #[test]
    fn unstated_values_are_read_with_their_provenance_and_checked() {
        let toml = r#"
            summary = "s"
            topology = "t"
            [[unstated]]
            name = "t"
            value = "{t} bit times"
            provenance = "fitted"
            fitted_on = ["x.a"]
            range = [25000.0, 300000.0]
            explore = true
            note = "fitted"
            [[unstated]]
            name = "limit"
            value = "20"
            provenance = "seed"
            section = "§A.2"
        "#;
        let s = Setup::from_toml("setup.toml", toml, &[("t", "95000".into())]).unwrap();
        assert_eq!(s.unstated.len(), 2);
        assert_eq!(s.unstated[0].value, "95000 bit times");
        assert_eq!(
            s.unstated[0].provenance_text(),
            "fitted on calibration claims [x.a]"
        );
        assert_eq!(s.unstated[1].provenance_text(), "seed §A.2");
        // `fitted` without the claims, `seed` without a section: errors naming the value.
        let no_claims = toml.replace("fitted_on = [\"x.a\"]", "");
        let e = Setup::from_toml("setup.toml", &no_claims, &[("t", "1".into())]).unwrap_err();
        assert!(e.to_string().contains("unstated `t`"), "{e}");
        let no_section = toml.replace("section = \"§A.2\"", "");
        let e = Setup::from_toml("setup.toml", &no_section, &[("t", "1".into())]).unwrap_err();
        assert!(e.to_string().contains("unstated `limit`"), "{e}");
        // Calibration claims and fitted values must name each other.
        let claims = |calibration: bool| Claims {
            specs: vec![crate::claim::ClaimSpec {
                calibration,
                ..crate::claim::ClaimSpec::bare("x.a")
            }],
            paper: Default::default(),
        };
        assert!(check_calibration(&s, &claims(true)).is_ok());
        let e = check_calibration(&s, &claims(false)).unwrap_err();
        assert!(e.to_string().contains("does not mark"), "{e}");
        let e = check_calibration(&Setup::default(), &claims(true)).unwrap_err();
        assert!(e.to_string().contains("no `[[unstated]]`"), "{e}");
    }

    #[test]
    fn zero_jobs_is_refused() {
        assert!(with_jobs(Some(0), || 1).is_err());
        assert_eq!(with_jobs(Some(2), rayon::current_num_threads).unwrap(), 2);
    }
}

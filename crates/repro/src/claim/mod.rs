//! Claims as data: what a paper states, how rmcast tests it, and the verdict.
//!
//! A study's claims live in a TOML file (`scenarios/repro/<study>/claims.toml`), compiled
//! into the binary with `include_str!` so a release build needs no data directory:
//!
//! ```toml
//! study = "demo"
//!
//! [[claim]]
//! id = "demo.harness.rounds_r5"                 # <study>.<table or figure>.<what>
//! source = "closed form (seed 000 §2.5.2 retransmission rule)"
//! statement = "transmissions per message follow E[max of r geometric(q)]"
//! quote = "the paper's sentence … verbatim"     # the words tested (required when citing a seed)
//! paper_value = 1.0                              # optional: the paper's number, if any
//! scenario = "testkit harness, r = 5, p swept"   # what run or sweep tests it
//! measure = "harness.rounds.r5"                  # a measure the study records
//! predicate = { kind = "within", of = "analytic.rounds.r5", rel = 0.03 }
//! explain_fail = "..."                           # optional: known reason if it fails
//! tests = "formula"                              # optional: simulation (default), formula,
//!                                                # or network
//! full_only = true                               # optional: needs full mode's sweeps
//! ```
//!
//! Predicates (`kind`), each with its fields and when it passes:
//!
//! * `within` (`of`, `abs`, `rel`, `at`): |m − t| ≤ abs + rel·|t| at every point (or at
//!   x = `at`).
//! * `at_most` / `at_least` (`of`, `strict`, `at`, `from`): m ≤ t (m < t if strict) / m ≥ t at
//!   every point (at x ≥ `from`).
//! * `order` (`measures`, `strict`, `at`): m₁ ≤ m₂ ≤ … at every common point.
//! * `trend` (`direction`, `from`, `to`, `slack`): each step moves the right way (allowing
//!   `slack`·|y| of noise) and last ≠ first in that direction.
//! * `flat` (`from`, `to`, `rel`): every point in range is within rel of the range's mean.
//!
//! `of` is a number or the name of another measure (an analytic bound the study computed,
//! or another measurement); a series operand is matched point by point on x. Wherever a
//! measure is named, `ratio(A, B)` and `diff(A, B)` name A / B and A − B of two recorded
//! measures, with both spreads carried into the interval ([`derive`]).
//! Comparisons use the *mean* across runs; the spread is reported beside it.

mod derive;
mod eval;
pub mod quote;
#[cfg(test)]
mod tests;

pub use eval::evaluate;

use crate::measure::{same_x, Measure, Measures};
use crate::stats::{runs_factor_to_resolve, Estimate, MAX_RUNS_FACTOR};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The claims file of one study.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimFile {
    /// The study these claims belong to; every id starts with `<study>.`.
    pub study: String,
    /// The claims, in file order (`[[claim]]` tables).
    #[serde(default, rename = "claim")]
    pub claims: Vec<ClaimSpec>,
    /// The paper's tabulated values, by name; each becomes the measure `paper.<name>`
    /// (analytic, no spread) so predicates can compare against it and plots can show it.
    #[serde(default)]
    pub paper: BTreeMap<String, PaperTable>,
}

/// A column of a paper's table: y against x, exactly as printed.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PaperTable {
    /// Seed and table, e.g. "seed 000, Table 4.1, column UBRT".
    pub source: String,
    /// What x is, e.g. "receivers".
    pub x_label: String,
    /// The unit of y (empty when dimensionless).
    #[serde(default)]
    pub unit: String,
    /// The x values of the printed rows.
    pub x: Vec<f64>,
    /// The y values, one per x.
    pub y: Vec<f64>,
}

impl PaperTable {
    /// The table as (x, y) points.
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.x.iter().copied().zip(self.y.iter().copied()).collect()
    }
}

/// A validated claims file.
#[derive(Debug, Clone, Default)]
pub struct Claims {
    /// The claims, validated.
    pub specs: Vec<ClaimSpec>,
    /// The paper's tables, by name.
    pub paper: BTreeMap<String, PaperTable>,
}

impl Claims {
    /// Record every paper table as the analytic measure `paper.<name>`.
    pub fn add_paper_measures(&self, m: &mut Measures) {
        for (name, t) in &self.paper {
            m.series(
                format!("paper.{name}"),
                t.unit.clone(),
                t.x_label.clone(),
                t.points()
                    .into_iter()
                    .map(|(x, y)| (x, Estimate::exact(y)))
                    .collect(),
            );
        }
    }
}

/// One claim as written in a claims file.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// `<study>.<table or figure>.<what>`, e.g. `segovia.t4_1.rt_r20`.
    pub id: String,
    /// Seed and table/figure/section the claim comes from.
    pub source: String,
    /// The paper's statement, in words.
    pub statement: String,
    /// The sentence(s) of the paper the claim tests, verbatim, words left out marked `…`
    /// ([`quote`]). Every claim whose `source` cites a seed carries one; a test checks it
    /// against the seed's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The paper's number, where it gives one.
    #[serde(default)]
    pub paper_value: Option<f64>,
    /// The run or sweep that tests the claim.
    pub scenario: String,
    /// The measure the predicate is applied to (not needed by `order`).
    #[serde(default)]
    pub measure: Option<String>,
    /// What must hold for the claim to pass.
    pub predicate: Predicate,
    /// Why the claim may not hold in rmcast, shown beside a failed verdict. Numbers come
    /// from the run, never typed in: `{value}` is the claim's decisive measured value,
    /// `{NAME}` a scalar measure's mean, `{NAME@X}` a series measure's mean at x = X (see
    /// [`ClaimResult::explanation`]).
    #[serde(default)]
    pub explain_fail: Option<String>,
    /// What the claim tests: a simulation (the default), a formula (the paper's bound
    /// against rmcast's evaluation of it, nothing simulated) or real sockets. The report
    /// counts the simulation claims' pass rate on its own.
    #[serde(default, skip_serializing_if = "Tests::is_simulation")]
    pub tests: Tests,
    /// Evaluated in full mode only: the points it needs are not in quick mode's sweeps. In
    /// quick mode the claim is listed as not run, neither passed nor failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_only: bool,
    /// A calibration claim: one the study's unstated parameters were fitted on (its setup's
    /// `[[unstated]]` entries name it in `fitted_on`). Its verdict is reported apart and left
    /// out of the validation pass rate; at most one claim in five of a study may be one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calibration: bool,
}

impl ClaimSpec {
    /// The statement followed by the paper's words, as the report's statement column shows
    /// them: `statement — “quote”`.
    pub fn statement_with_quote(&self) -> String {
        match &self.quote {
            Some(q) => format!("{} — \u{201C}{}\u{201D}", self.statement, q),
            None => self.statement.clone(),
        }
    }

    /// Every measure the claim names: its subject, the operand of its band or bound, and
    /// the measures an `order` compares.
    pub fn measure_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.measure.as_deref().into_iter().collect();
        v.extend(self.predicate.operand_measure());
        if let Predicate::Order { measures, .. } = &self.predicate {
            v.extend(measures.iter().map(String::as_str));
        }
        v
    }
}

/// What a claim tests.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Tests {
    /// A simulation's outcome.
    #[default]
    Simulation,
    /// A formula: the paper's tabulated bound against rmcast's evaluation of the same
    /// expression.
    Formula,
    /// Runs on real sockets.
    Network,
}

impl Tests {
    /// Whether it is [`Tests::Simulation`].
    pub fn is_simulation(&self) -> bool {
        *self == Tests::Simulation
    }

    /// The word used in reports.
    pub fn word(self) -> &'static str {
        match self {
            Tests::Simulation => "simulation",
            Tests::Formula => "formula",
            Tests::Network => "network",
        }
    }
}

/// A number or the name of a measure.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Operand {
    /// A number.
    Value(f64),
    /// The name of a measure, matched point by point on x when it is a series.
    Measure(String),
}

impl Operand {
    /// The measure it names (`None` for a number).
    pub fn measure(&self) -> Option<&str> {
        match self {
            Operand::Value(_) => None,
            Operand::Measure(m) => Some(m),
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Value(v) => write!(f, "{}", fmt_num(*v)),
            Operand::Measure(m) => write!(f, "{m}"),
        }
    }
}

/// Which way a `trend` must move.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Each step goes up.
    Increasing,
    /// Each step goes down.
    Decreasing,
}

/// A `within` predicate's target and tolerances: |m − t| ≤ abs + rel·|t|.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Band {
    /// The target t.
    pub of: Operand,
    /// Absolute tolerance.
    #[serde(default)]
    pub abs: f64,
    /// Tolerance relative to |t|.
    #[serde(default)]
    pub rel: f64,
    /// Only the point at this x (all points when absent).
    pub at: Option<f64>,
    /// Only the points where the target (a series) has a value: for a paper table whose
    /// failed cells are omitted. Without it a point the target lacks cannot be evaluated.
    #[serde(default)]
    pub where_target: bool,
    /// Only the points at this x and above (e.g. leaving out the cells a model constant
    /// was derived from, which cannot test it).
    pub from: Option<f64>,
}

impl Band {
    /// Exactly `of` (no tolerance) at every point.
    pub fn of(of: Operand) -> Self {
        Band {
            of,
            abs: 0.0,
            rel: 0.0,
            at: None,
            where_target: false,
            from: None,
        }
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tol = Vec::new();
        if self.abs != 0.0 || self.rel == 0.0 {
            tol.push(fmt_num(self.abs));
        }
        if self.rel != 0.0 {
            tol.push(format!("{} %", fmt_num(self.rel * 100.0)));
        }
        let (of, at) = (&self.of, &self.at);
        write!(f, "within ±{} of {of}{}", tol.join(" + "), at_suffix(at))?;
        if let Some(x) = self.from {
            write!(f, " from x = {}", fmt_num(x))?;
        }
        if self.where_target {
            write!(f, " where {of} has a value")?;
        }
        Ok(())
    }
}

/// What must hold for a claim to pass.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Predicate {
    /// |m − t| ≤ abs + rel·|t|.
    Within(Band),
    /// m ≤ t (m < t if strict).
    AtMost {
        /// The bound t.
        of: Operand,
        /// The bound itself fails.
        #[serde(default)]
        strict: bool,
        /// Only the point at this x (all points when absent).
        #[serde(default)]
        at: Option<f64>,
        /// Only the points at this x and above.
        #[serde(default)]
        from: Option<f64>,
    },
    /// m ≥ t (m > t if strict).
    AtLeast {
        /// The bound t.
        of: Operand,
        /// The bound itself fails.
        #[serde(default)]
        strict: bool,
        /// Only the point at this x (all points when absent).
        #[serde(default)]
        at: Option<f64>,
        /// Only the points at this x and above.
        #[serde(default)]
        from: Option<f64>,
    },
    /// m₁ ≤ m₂ ≤ … at every common point.
    Order {
        /// The measures, smallest first.
        measures: Vec<String>,
        /// Equal neighbours fail.
        #[serde(default)]
        strict: bool,
        /// Only the point at this x (all common points when absent).
        #[serde(default)]
        at: Option<f64>,
    },
    /// Each step moves in `direction` and the last point differs from the first that way.
    Trend {
        /// The way the series must move.
        direction: Direction,
        /// The first x considered (the series' start when absent).
        #[serde(default)]
        from: Option<f64>,
        /// The last x considered (the series' end when absent).
        #[serde(default)]
        to: Option<f64>,
        /// Noise allowed against the direction, as a fraction of |y|.
        #[serde(default)]
        slack: f64,
        /// The overall move, first point to last, is at most this fraction of the first
        /// point's |y| (a trend that moves "slightly"; any size when absent).
        #[serde(default)]
        max_change: Option<f64>,
    },
    /// Every point in range is within `rel` of the range's mean.
    Flat {
        /// The first x considered (the series' start when absent).
        #[serde(default)]
        from: Option<f64>,
        /// The last x considered (the series' end when absent).
        #[serde(default)]
        to: Option<f64>,
        /// Tolerance relative to the mean.
        rel: f64,
    },
}

fn at_suffix(at: &Option<f64>) -> String {
    match at {
        Some(x) => format!(" at x = {}", fmt_num(*x)),
        None => String::new(),
    }
}

fn range_suffix(from: &Option<f64>, to: &Option<f64>) -> String {
    match (from, to) {
        (None, None) => String::new(),
        (Some(a), None) => format!(" for x ≥ {}", fmt_num(*a)),
        (None, Some(b)) => format!(" for x ≤ {}", fmt_num(*b)),
        (Some(a), Some(b)) => format!(" for x in [{}, {}]", fmt_num(*a), fmt_num(*b)),
    }
}

impl Predicate {
    /// The measure a band or bound compares the claim's measure with (`of = "NAME"`), if it
    /// names one.
    pub fn operand_measure(&self) -> Option<&str> {
        match self {
            Predicate::Within(b) => b.of.measure(),
            Predicate::AtMost { of, .. } | Predicate::AtLeast { of, .. } => of.measure(),
            Predicate::Order { .. } | Predicate::Trend { .. } | Predicate::Flat { .. } => None,
        }
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Within(band) => write!(f, "{band}"),
            Predicate::AtMost {
                of,
                strict,
                at,
                from,
            } => {
                let op = if *strict { "<" } else { "≤" };
                write!(f, "{op} {of}{}{}", at_suffix(at), range_suffix(from, &None))
            }
            Predicate::AtLeast {
                of,
                strict,
                at,
                from,
            } => {
                let op = if *strict { ">" } else { "≥" };
                write!(f, "{op} {of}{}{}", at_suffix(at), range_suffix(from, &None))
            }
            Predicate::Order {
                measures,
                strict,
                at,
            } => {
                let op = if *strict { " < " } else { " ≤ " };
                write!(f, "{}{}", measures.join(op), at_suffix(at))
            }
            Predicate::Trend {
                direction,
                from,
                to,
                slack,
                max_change,
            } => {
                let d = match direction {
                    Direction::Increasing => "increases",
                    Direction::Decreasing => "decreases",
                };
                write!(f, "{d} with x{}", range_suffix(from, to))?;
                if *slack > 0.0 {
                    write!(f, " (steps may go back ≤ {} %)", fmt_num(slack * 100.0))?;
                }
                if let Some(m) = max_change {
                    write!(f, ", by ≤ {} % overall", fmt_num(m * 100.0))?;
                }
                Ok(())
            }
            Predicate::Flat { from, to, rel } => write!(
                f,
                "flat within ±{} %{}",
                fmt_num(rel * 100.0),
                range_suffix(from, to)
            ),
        }
    }
}

/// Pass, fail or inconclusive. A claim that cannot be evaluated (missing measure, no
/// points) fails.
///
/// For a band or a bound (`within`, `at_most`, `at_least`) each point is judged by its 95 %
/// confidence interval, not its mean alone: the interval inside the accepted region passes,
/// wholly outside it fails, across its edge is inconclusive (more runs would decide). An
/// ordering pair is decided when the two intervals do not overlap, inconclusive when they
/// do. A point of one run has no interval and is judged by its value (as is an analytic
/// value); trends and flatness are judged by the means. The claim fails if any point fails,
/// else is inconclusive if any point is, else passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The predicate holds (at every point, with the interval inside).
    Pass,
    /// The predicate does not hold, or the claim could not be evaluated.
    Fail,
    /// No point fails, but at some point the 95 % interval straddles the band or bound.
    Inconclusive,
}

impl Verdict {
    /// The verdict of a claim whose points are `(fails, uncertain)` in number.
    pub(crate) fn of(fails: usize, uncertain: usize) -> Verdict {
        if fails > 0 {
            Verdict::Fail
        } else if uncertain > 0 {
            Verdict::Inconclusive
        } else {
            Verdict::Pass
        }
    }

    /// The word `claims.csv` and `claims.json` use.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Inconclusive => "inconclusive",
        })
    }
}

/// A claim with what rmcast measured and the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    /// The claim as the file states it.
    pub spec: ClaimSpec,
    /// The decisive point: the worst point of a series (or the only value of a scalar).
    pub x: Option<f64>,
    /// What x is (the subject measure's sweep variable, e.g. "receivers").
    pub x_label: String,
    /// The measured value at the decisive point.
    pub measured: Option<Estimate>,
    /// The measure's unit.
    pub unit: String,
    /// Pass or fail.
    pub verdict: Verdict,
    /// How the verdict was reached, in numbers.
    pub detail: String,
    /// False when the claim could not be evaluated at all (a measure missing, no points, a
    /// study that did not run): such a claim fails, and no pinned reason may excuse it.
    #[serde(skip)]
    pub evaluated: bool,
    /// `explain_fail` with its placeholders filled from this run's measures (a placeholder
    /// naming nothing measured reads `{NAME: not measured}`).
    pub explanation: Option<String>,
    /// Whether the predicate holds for the means alone (intervals ignored): what `--check`'s
    /// pinned list is about, so an interval that widens or narrows cannot hide a regression
    /// or turn a known failure into an unknown one.
    #[serde(skip)]
    pub means_hold: bool,
    /// For an inconclusive claim, how many times this run's runs per point would decide it
    /// if the means and SDs held ([`crate::stats::runs_factor_to_resolve`], at most
    /// [`MAX_RUNS_FACTOR`]); `None` for any other verdict, or when no factor up to that does.
    pub runs_factor_to_decide: Option<u32>,
    /// For an inconclusive claim, the x values of the points whose 95 % intervals straddle
    /// (`None`: a scalar): where more runs would decide it, so that sequential sampling adds
    /// runs there only.
    #[serde(skip)]
    pub undecided_at: Vec<Option<f64>>,
}

#[cfg(test)]
impl ClaimSpec {
    /// A claim with an id and nothing else that matters (`≥ 0`, no measure), for tests of
    /// what handles results.
    pub(crate) fn bare(id: &str) -> Self {
        ClaimSpec {
            id: id.into(),
            source: "test".into(),
            statement: String::new(),
            quote: None,
            paper_value: None,
            scenario: String::new(),
            measure: None,
            predicate: Predicate::AtLeast {
                of: Operand::Value(0.0),
                strict: false,
                at: None,
                from: None,
            },
            explain_fail: None,
            tests: Default::default(),
            full_only: false,
            calibration: false,
        }
    }
}

impl ClaimResult {
    /// `spec` failed without an evaluation (a study that did not run, a broken claims file):
    /// nothing measured, `detail` says why.
    pub fn not_evaluated(spec: ClaimSpec, detail: String) -> Self {
        let explanation = spec
            .explain_fail
            .as_deref()
            .map(|t| eval::fill(t, None, &Measures::new()));
        ClaimResult {
            spec,
            x: None,
            x_label: String::new(),
            measured: None,
            unit: String::new(),
            verdict: Verdict::Fail,
            detail,
            evaluated: false,
            means_hold: false,
            explanation,
            runs_factor_to_decide: None,
            undecided_at: Vec::new(),
        }
    }

    /// Whether the verdict is pass.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// Whether the verdict is fail (a claim that could not be evaluated included).
    pub fn failed(&self) -> bool {
        self.verdict == Verdict::Fail
    }

    /// Whether a mutant's run refutes the claim: it fails, or it is inconclusive while its
    /// means miss (the point estimates contradict the claim; only the spread leaves it open).
    /// A mutant that leaves the claim undecided with means that hold does not refute it.
    pub fn refuted(&self) -> bool {
        self.failed() || (self.verdict == Verdict::Inconclusive && !self.means_hold)
    }

    fn x_label_or_x(&self) -> &str {
        if self.x_label.is_empty() {
            "x"
        } else {
            &self.x_label
        }
    }

    /// "mean ± sd (95 % CI [lo, hi], n runs)" of the decisive point, or "—".
    pub fn measured_text(&self) -> String {
        let Some(e) = self.measured else {
            return "—".to_string();
        };
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let at = match self.x {
            Some(x) => format!(" at {} = {}", self.x_label_or_x(), fmt_num(x)),
            None => String::new(),
        };
        if e.is_exact() {
            format!("{}{unit}{at} (analytic)", fmt_num(e.mean))
        } else {
            format!(
                "{} ± {}{unit}{at} (95 % CI [{}, {}], n = {})",
                fmt_num(e.mean),
                fmt_num(e.sd),
                fmt_num(e.ci_lo),
                fmt_num(e.ci_hi),
                e.n
            )
        }
    }
}

/// Errors in a claims file.
#[derive(Debug, thiserror::Error)]
pub enum ClaimFileError {
    /// The file is not valid TOML for a claims file.
    #[error("claims of study `{study}`: invalid TOML: {source}")]
    Toml {
        /// The study whose file it is.
        study: String,
        /// The parser's error.
        #[source]
        source: toml::de::Error,
    },
    /// The file names another study.
    #[error("claims of study `{study}`: file says study = `{found}`")]
    WrongStudy {
        /// The study whose file it is.
        study: String,
        /// The study the file names.
        found: String,
    },
    /// A claim id does not start with `<study>.`.
    #[error("claims of study `{study}`: claim id `{id}` must start with `{study}.`")]
    BadId {
        /// The study whose file it is.
        study: String,
        /// The claim id.
        id: String,
    },
    /// Two claims share an id.
    #[error("claims of study `{study}`: duplicate claim id `{id}`")]
    Duplicate {
        /// The study whose file it is.
        study: String,
        /// The claim id.
        id: String,
    },
    /// A claim is malformed (e.g. a predicate without the measure it needs).
    #[error("claims of study `{study}`: claim `{id}`: {what}")]
    Invalid {
        /// The study whose file it is.
        study: String,
        /// The claim id.
        id: String,
        /// What is wrong.
        what: String,
    },
}

/// Parse and validate a study's claims file.
pub fn parse_claims(study: &str, text: &str) -> Result<Claims, ClaimFileError> {
    let file: ClaimFile = toml::from_str(text).map_err(|source| ClaimFileError::Toml {
        study: study.to_string(),
        source,
    })?;
    if file.study != study {
        return Err(ClaimFileError::WrongStudy {
            study: study.to_string(),
            found: file.study,
        });
    }
    for (name, t) in &file.paper {
        if t.x.len() != t.y.len() || t.x.is_empty() {
            return Err(ClaimFileError::Invalid {
                study: study.to_string(),
                id: format!("paper.{name}"),
                what: format!("x has {} values, y has {}", t.x.len(), t.y.len()),
            });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in &file.claims {
        let invalid = |what: &str| ClaimFileError::Invalid {
            study: study.to_string(),
            id: c.id.clone(),
            what: what.to_string(),
        };
        if !c.id.starts_with(&format!("{study}.")) || c.id.len() <= study.len() + 1 {
            return Err(ClaimFileError::BadId {
                study: study.to_string(),
                id: c.id.clone(),
            });
        }
        if !seen.insert(c.id.clone()) {
            return Err(ClaimFileError::Duplicate {
                study: study.to_string(),
                id: c.id.clone(),
            });
        }
        match &c.predicate {
            Predicate::Order { measures, .. } => {
                if measures.len() < 2 {
                    return Err(invalid("`order` needs at least two measures"));
                }
            }
            Predicate::Within(Band { abs, rel, .. }) => {
                if c.measure.is_none() {
                    return Err(invalid("`within` needs `measure`"));
                }
                if !(*abs >= 0.0 && *rel >= 0.0) {
                    return Err(invalid("tolerances must be ≥ 0"));
                }
            }
            Predicate::Flat { rel, .. } => {
                if c.measure.is_none() {
                    return Err(invalid("`flat` needs `measure`"));
                }
                if rel.is_nan() || *rel < 0.0 {
                    return Err(invalid("`rel` must be ≥ 0"));
                }
            }
            Predicate::Trend {
                slack, max_change, ..
            } => {
                if c.measure.is_none() {
                    return Err(invalid("`trend` needs `measure`"));
                }
                if slack.is_nan() || *slack < 0.0 {
                    return Err(invalid("`slack` must be ≥ 0"));
                }
                if max_change.is_some_and(|m| m.is_nan() || m <= 0.0) {
                    return Err(invalid("`max_change` must be > 0"));
                }
            }
            Predicate::AtMost { .. } | Predicate::AtLeast { .. } => {
                if c.measure.is_none() {
                    return Err(invalid("this predicate needs `measure`"));
                }
            }
        }
    }
    let calibration = file.claims.iter().filter(|c| c.calibration).count();
    if calibration * MAX_CALIBRATION_SHARE > file.claims.len() {
        return Err(ClaimFileError::Invalid {
            study: study.to_string(),
            id: format!("{study}.*"),
            what: format!(
                "{calibration} of {} claims are marked calibration; at most one in \
                 {MAX_CALIBRATION_SHARE} may be",
                file.claims.len()
            ),
        });
    }
    Ok(Claims {
        specs: file.claims,
        paper: file.paper,
    })
}

/// At most one claim in this many of a study may be a calibration claim.
pub const MAX_CALIBRATION_SHARE: usize = 5;

/// Format a number for reports: integers as integers, otherwise four significant digits.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let a = v.abs();
    if !(1e-4..1e7).contains(&a) {
        return format!("{v:.3e}");
    }
    let digits = (4 - 1 - a.log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

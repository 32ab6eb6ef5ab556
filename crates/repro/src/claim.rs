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
//! paper_value = 1.0                              # optional: the paper's number, if any
//! scenario = "testkit harness, r = 5, p swept"   # what run or sweep tests it
//! measure = "harness.rounds.r5"                  # a measure the study records
//! predicate = { kind = "within", of = "analytic.rounds.r5", rel = 0.03 }
//! explain_fail = "..."                           # optional: known reason if it fails
//! ```
//!
//! Predicates (`kind`):
//!
//! | kind | fields | passes when |
//! |---|---|---|
//! | `within` | `of`, `abs`, `rel`, `at` | \|m − t\| ≤ abs + rel·\|t\| at every point (or at x = `at`) |
//! | `at_most` / `at_least` | `of`, `strict`, `at` | m ≤ t (m < t if strict) / m ≥ t at every point |
//! | `order` | `measures`, `strict`, `at` | m₁ ≤ m₂ ≤ … at every common point |
//! | `trend` | `direction`, `from`, `to`, `slack` | each step moves the right way (allowing `slack`·\|y\| of noise) and last ≠ first in that direction |
//! | `flat` | `from`, `to`, `rel` | every point in range is within rel of the range's mean |
//!
//! `of` is a number or the name of another measure (an analytic bound the study computed,
//! or another measurement); a series operand is matched point by point on x.
//! Comparisons use the *mean* across runs; the spread is reported beside it.

use crate::measure::{same_x, Measure, Measures};
use crate::stats::Estimate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The claims file of one study.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimFile {
    /// The study these claims belong to; every id starts with `<study>.`.
    pub study: String,
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
    pub x_label: String,
    #[serde(default)]
    pub unit: String,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

impl PaperTable {
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.x.iter().copied().zip(self.y.iter().copied()).collect()
    }
}

/// A validated claims file.
#[derive(Debug, Clone, Default)]
pub struct Claims {
    pub specs: Vec<ClaimSpec>,
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
    /// The paper's number, where it gives one.
    #[serde(default)]
    pub paper_value: Option<f64>,
    /// The run or sweep that tests the claim.
    pub scenario: String,
    /// The measure the predicate is applied to (not needed by `order`).
    #[serde(default)]
    pub measure: Option<String>,
    pub predicate: Predicate,
    /// Why the claim may not hold in rmcast, shown beside a failed verdict.
    #[serde(default)]
    pub explain_fail: Option<String>,
}

/// A number or the name of a measure.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Operand {
    Value(f64),
    Measure(String),
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Value(v) => write!(f, "{}", fmt_num(*v)),
            Operand::Measure(m) => write!(f, "{m}"),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Increasing,
    Decreasing,
}

/// What must hold for a claim to pass.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Predicate {
    Within {
        of: Operand,
        #[serde(default)]
        abs: f64,
        #[serde(default)]
        rel: f64,
        #[serde(default)]
        at: Option<f64>,
    },
    AtMost {
        of: Operand,
        #[serde(default)]
        strict: bool,
        #[serde(default)]
        at: Option<f64>,
    },
    AtLeast {
        of: Operand,
        #[serde(default)]
        strict: bool,
        #[serde(default)]
        at: Option<f64>,
    },
    Order {
        measures: Vec<String>,
        #[serde(default)]
        strict: bool,
        #[serde(default)]
        at: Option<f64>,
    },
    Trend {
        direction: Direction,
        #[serde(default)]
        from: Option<f64>,
        #[serde(default)]
        to: Option<f64>,
        #[serde(default)]
        slack: f64,
    },
    Flat {
        #[serde(default)]
        from: Option<f64>,
        #[serde(default)]
        to: Option<f64>,
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

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Within { of, abs, rel, at } => {
                let mut tol = Vec::new();
                if *abs != 0.0 || *rel == 0.0 {
                    tol.push(fmt_num(*abs));
                }
                if *rel != 0.0 {
                    tol.push(format!("{} %", fmt_num(rel * 100.0)));
                }
                write!(f, "within ±{} of {of}{}", tol.join(" + "), at_suffix(at))
            }
            Predicate::AtMost { of, strict, at } => {
                let op = if *strict { "<" } else { "≤" };
                write!(f, "{op} {of}{}", at_suffix(at))
            }
            Predicate::AtLeast { of, strict, at } => {
                let op = if *strict { ">" } else { "≥" };
                write!(f, "{op} {of}{}", at_suffix(at))
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
            } => {
                let d = match direction {
                    Direction::Increasing => "increases",
                    Direction::Decreasing => "decreases",
                };
                write!(f, "{d} with x{}", range_suffix(from, to))?;
                if *slack > 0.0 {
                    write!(f, " (steps may go back ≤ {} %)", fmt_num(slack * 100.0))?;
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

/// Pass or fail. A claim that cannot be evaluated (missing measure, no points) fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
        })
    }
}

/// A claim with what rmcast measured and the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    pub spec: ClaimSpec,
    /// The decisive point: the worst point of a series (or the only value of a scalar).
    pub x: Option<f64>,
    /// What x is (the subject measure's sweep variable, e.g. "receivers").
    pub x_label: String,
    pub measured: Option<Estimate>,
    pub unit: String,
    pub verdict: Verdict,
    /// How the verdict was reached, in numbers.
    pub detail: String,
}

impl ClaimResult {
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
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
    #[error("claims of study `{study}`: invalid TOML: {source}")]
    Toml {
        study: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("claims of study `{study}`: file says study = `{found}`")]
    WrongStudy { study: String, found: String },
    #[error("claims of study `{study}`: claim id `{id}` must start with `{study}.`")]
    BadId { study: String, id: String },
    #[error("claims of study `{study}`: duplicate claim id `{id}`")]
    Duplicate { study: String, id: String },
    #[error("claims of study `{study}`: claim `{id}`: {what}")]
    Invalid {
        study: String,
        id: String,
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
            Predicate::Within { abs, rel, .. } => {
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
            Predicate::Trend { slack, .. } => {
                if c.measure.is_none() {
                    return Err(invalid("`trend` needs `measure`"));
                }
                if slack.is_nan() || *slack < 0.0 {
                    return Err(invalid("`slack` must be ≥ 0"));
                }
            }
            Predicate::AtMost { .. } | Predicate::AtLeast { .. } => {
                if c.measure.is_none() {
                    return Err(invalid("this predicate needs `measure`"));
                }
            }
        }
    }
    Ok(Claims {
        specs: file.claims,
        paper: file.paper,
    })
}

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

/// Relative slack for float comparisons of values that are meant to be exact.
fn eps(t: f64) -> f64 {
    1e-9 * t.abs().max(1.0)
}

struct Failure(String);

fn subject<'a>(spec: &ClaimSpec, measures: &'a Measures) -> Result<&'a Measure, Failure> {
    let name = spec
        .measure
        .as_deref()
        .ok_or_else(|| Failure("claim names no measure".into()))?;
    measures
        .get(name)
        .ok_or_else(|| Failure(format!("the study recorded no measure `{name}`")))
}

fn resolve(op: &Operand, x: Option<f64>, measures: &Measures) -> Result<f64, Failure> {
    match op {
        Operand::Value(v) => Ok(*v),
        Operand::Measure(name) => {
            let m = measures
                .get(name)
                .ok_or_else(|| Failure(format!("the study recorded no measure `{name}`")))?;
            m.at(x).map(|e| e.mean).ok_or_else(|| {
                Failure(format!(
                    "`{name}` has no point at x = {}",
                    x.map(fmt_num).unwrap_or_else(|| "(none)".into())
                ))
            })
        }
    }
}

fn select(
    points: Vec<(Option<f64>, Estimate)>,
    at: &Option<f64>,
) -> Result<Vec<(Option<f64>, Estimate)>, Failure> {
    let pts: Vec<_> = match at {
        None => points,
        Some(a) => points
            .into_iter()
            .filter(|(x, _)| x.is_none() || x.is_some_and(|x| same_x(x, *a)))
            .collect(),
    };
    if pts.is_empty() {
        return Err(Failure(format!(
            "no measured point{}",
            at.map(|a| format!(" at x = {}", fmt_num(a)))
                .unwrap_or_default()
        )));
    }
    Ok(pts)
}

fn in_range(x: f64, from: &Option<f64>, to: &Option<f64>) -> bool {
    from.is_none_or(|a| x >= a - eps(a)) && to.is_none_or(|b| x <= b + eps(b))
}

fn xs(x: Option<f64>) -> String {
    x.map(|x| format!("x = {}: ", fmt_num(x)))
        .unwrap_or_default()
}

struct Outcome {
    pass: bool,
    x: Option<f64>,
    measured: Option<Estimate>,
    detail: String,
}

/// Evaluate one claim against a study's measures.
pub fn evaluate(spec: &ClaimSpec, measures: &Measures) -> ClaimResult {
    let subject = spec.measure.as_deref().and_then(|m| measures.get(m));
    let unit = subject.map(|m| m.unit().to_string()).unwrap_or_default();
    let x_label = match subject {
        Some(Measure::Series { x_label, .. }) => x_label.clone(),
        _ => String::new(),
    };
    let (verdict, x, measured, detail) = match eval_inner(spec, measures) {
        Ok(o) => (
            if o.pass { Verdict::Pass } else { Verdict::Fail },
            o.x,
            o.measured,
            o.detail,
        ),
        Err(Failure(why)) => (Verdict::Fail, None, None, format!("cannot evaluate: {why}")),
    };
    ClaimResult {
        spec: spec.clone(),
        x,
        x_label,
        measured,
        unit,
        verdict,
        detail,
    }
}

fn eval_inner(spec: &ClaimSpec, measures: &Measures) -> Result<Outcome, Failure> {
    match &spec.predicate {
        Predicate::Within { of, abs, rel, at } => {
            let pts = select(subject(spec, measures)?.points(), at)?;
            // Worst point: largest deviation relative to its band.
            let mut worst: Option<(f64, Option<f64>, Estimate, f64, f64)> = None;
            let mut bad = Vec::new();
            for (x, e) in pts {
                let t = resolve(of, x, measures)?;
                let band = abs + rel * t.abs();
                let dev = (e.mean - t).abs();
                let score = if band > 0.0 { dev / band } else { dev };
                if dev > band + eps(t) {
                    bad.push(format!("{}{} vs {}", xs(x), fmt_num(e.mean), fmt_num(t)));
                }
                if worst.as_ref().is_none_or(|w| score > w.0) {
                    worst = Some((score, x, e, t, band));
                }
            }
            let Some((_, x, e, t, band)) = worst else {
                return Err(Failure("no points".into()));
            };
            let head = format!(
                "worst {}{} vs target {} (band [{}, {}])",
                xs(x),
                fmt_num(e.mean),
                fmt_num(t),
                fmt_num(t - band),
                fmt_num(t + band)
            );
            Ok(Outcome {
                pass: bad.is_empty(),
                x,
                measured: Some(e),
                detail: if bad.is_empty() {
                    head
                } else {
                    format!("{head}; outside: {}", bad.join("; "))
                },
            })
        }
        Predicate::AtMost { of, strict, at } | Predicate::AtLeast { of, strict, at } => {
            let upper = matches!(spec.predicate, Predicate::AtMost { .. });
            let pts = select(subject(spec, measures)?.points(), at)?;
            let mut worst: Option<(f64, Option<f64>, Estimate, f64)> = None;
            let mut bad = Vec::new();
            for (x, e) in pts {
                let t = resolve(of, x, measures)?;
                // margin > 0 means the bound holds with room to spare.
                let margin = if upper { t - e.mean } else { e.mean - t };
                let ok = if *strict {
                    margin > 0.0
                } else {
                    margin >= -eps(t)
                };
                if !ok {
                    bad.push(format!("{}{} vs {}", xs(x), fmt_num(e.mean), fmt_num(t)));
                }
                if worst.as_ref().is_none_or(|w| margin < w.0) {
                    worst = Some((margin, x, e, t));
                }
            }
            let Some((_, x, e, t)) = worst else {
                return Err(Failure("no points".into()));
            };
            let op = match (upper, strict) {
                (true, true) => "<",
                (true, false) => "≤",
                (false, true) => ">",
                (false, false) => "≥",
            };
            let head = format!(
                "closest {}{} {op} {} required",
                xs(x),
                fmt_num(e.mean),
                fmt_num(t)
            );
            Ok(Outcome {
                pass: bad.is_empty(),
                x,
                measured: Some(e),
                detail: if bad.is_empty() {
                    head
                } else {
                    format!("{head}; violated at: {}", bad.join("; "))
                },
            })
        }
        Predicate::Order {
            measures: names,
            strict,
            at,
        } => {
            let mut series = Vec::new();
            for n in names {
                let m = measures
                    .get(n)
                    .ok_or_else(|| Failure(format!("the study recorded no measure `{n}`")))?;
                series.push((n, m));
            }
            // Points to compare: the x values of the first series-shaped measure.
            let base = series
                .iter()
                .find(|(_, m)| matches!(m, Measure::Series { .. }))
                .map(|(_, m)| m.points())
                .unwrap_or_else(|| vec![(None, Estimate::exact(0.0))]);
            let xs_all: Vec<Option<f64>> = select(base, at)?.into_iter().map(|p| p.0).collect();
            let mut bad = Vec::new();
            let mut shown = String::new();
            for x in &xs_all {
                let mut vals = Vec::new();
                for (n, m) in &series {
                    let v = m.at(*x).ok_or_else(|| {
                        Failure(format!(
                            "`{n}` has no point at x = {}",
                            x.map(fmt_num).unwrap_or_else(|| "(none)".into())
                        ))
                    })?;
                    vals.push(v.mean);
                }
                let ok = vals.windows(2).all(|w| match w {
                    [a, b] => {
                        if *strict {
                            a < b
                        } else {
                            *a <= *b + eps(*b)
                        }
                    }
                    _ => true,
                });
                let text = format!(
                    "{}{}",
                    xs(*x),
                    vals.iter()
                        .map(|v| fmt_num(*v))
                        .collect::<Vec<_>>()
                        .join(if *strict { " < " } else { " ≤ " })
                );
                if !ok {
                    bad.push(text.clone());
                }
                if shown.is_empty() || !ok && bad.len() == 1 {
                    shown = text;
                }
            }
            let pass = bad.is_empty();
            Ok(Outcome {
                pass,
                x: None,
                measured: None,
                detail: if pass {
                    format!("holds at {} point(s), e.g. {shown}", xs_all.len())
                } else {
                    format!("violated at: {}", bad.join("; "))
                },
            })
        }
        Predicate::Trend {
            direction,
            from,
            to,
            slack,
        } => {
            let m = subject(spec, measures)?;
            let pts: Vec<(f64, Estimate)> = m
                .points()
                .into_iter()
                .filter_map(|(x, e)| x.map(|x| (x, e)))
                .filter(|(x, _)| in_range(*x, from, to))
                .collect();
            if pts.len() < 2 {
                return Err(Failure("a trend needs at least two points in range".into()));
            }
            let sign = match direction {
                Direction::Increasing => 1.0,
                Direction::Decreasing => -1.0,
            };
            let mut bad = Vec::new();
            for w in pts.windows(2) {
                if let [(x0, a), (x1, b)] = w {
                    let step = sign * (b.mean - a.mean);
                    if step < -slack * a.mean.abs() - eps(a.mean) {
                        bad.push(format!(
                            "x = {} → {}: {} → {}",
                            fmt_num(*x0),
                            fmt_num(*x1),
                            fmt_num(a.mean),
                            fmt_num(b.mean)
                        ));
                    }
                }
            }
            let (first, last) = match (pts.first(), pts.last()) {
                (Some(f), Some(l)) => (*f, *l),
                _ => return Err(Failure("no points".into())),
            };
            let overall = sign * (last.1.mean - first.1.mean) > 0.0;
            if !overall {
                bad.push(format!(
                    "overall x = {} → {}: {} → {}",
                    fmt_num(first.0),
                    fmt_num(last.0),
                    fmt_num(first.1.mean),
                    fmt_num(last.1.mean)
                ));
            }
            let pass = bad.is_empty();
            Ok(Outcome {
                pass,
                x: Some(last.0),
                measured: Some(last.1),
                detail: if pass {
                    format!(
                        "{} points, {} at x = {} → {} at x = {}",
                        pts.len(),
                        fmt_num(first.1.mean),
                        fmt_num(first.0),
                        fmt_num(last.1.mean),
                        fmt_num(last.0)
                    )
                } else {
                    format!("against the trend: {}", bad.join("; "))
                },
            })
        }
        Predicate::Flat { from, to, rel } => {
            let m = subject(spec, measures)?;
            let pts: Vec<(f64, Estimate)> = m
                .points()
                .into_iter()
                .filter_map(|(x, e)| x.map(|x| (x, e)))
                .filter(|(x, _)| in_range(*x, from, to))
                .collect();
            if pts.is_empty() {
                return Err(Failure("no points in range".into()));
            }
            let mean = pts.iter().map(|p| p.1.mean).sum::<f64>() / pts.len() as f64;
            let band = rel * mean.abs();
            let mut worst = (0.0f64, pts[0]);
            for p in &pts {
                let dev = (p.1.mean - mean).abs();
                if dev >= worst.0 {
                    worst = (dev, *p);
                }
            }
            let pass = worst.0 <= band + eps(mean);
            Ok(Outcome {
                pass,
                x: Some(worst.1 .0),
                measured: Some(worst.1 .1),
                detail: format!(
                    "{} points with mean {}; farthest x = {}: {} (band [{}, {}])",
                    pts.len(),
                    fmt_num(mean),
                    fmt_num(worst.1 .0),
                    fmt_num(worst.1 .1.mean),
                    fmt_num(mean - band),
                    fmt_num(mean + band)
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(v: f64) -> Estimate {
        Estimate::from_samples(&[v - 0.1, v, v + 0.1]).unwrap()
    }

    fn measures() -> Measures {
        let mut m = Measures::new();
        m.series(
            "rt",
            "",
            "receivers",
            vec![(5.0, est(3.5)), (10.0, est(4.85)), (20.0, est(5.64))],
        );
        m.series(
            "bound",
            "",
            "receivers",
            vec![
                (5.0, Estimate::exact(4.3)),
                (10.0, Estimate::exact(7.2)),
                (20.0, Estimate::exact(11.3)),
            ],
        );
        m.series(
            "low",
            "",
            "receivers",
            vec![(5.0, est(1.0)), (10.0, est(2.0)), (20.0, est(6.0))],
        );
        m.scalar("time", "bit times", Estimate::exact(12656.0));
        m
    }

    fn claim(measure: Option<&str>, predicate: Predicate) -> ClaimSpec {
        ClaimSpec {
            id: "t.x".into(),
            source: "test".into(),
            statement: "test".into(),
            paper_value: None,
            scenario: "test".into(),
            measure: measure.map(String::from),
            predicate,
            explain_fail: None,
        }
    }

    fn verdict(measure: Option<&str>, p: Predicate) -> Verdict {
        evaluate(&claim(measure, p), &measures()).verdict
    }

    #[test]
    fn within_exact_and_relative() {
        let p = |of: f64, abs: f64, rel: f64| Predicate::Within {
            of: Operand::Value(of),
            abs,
            rel,
            at: None,
        };
        assert_eq!(verdict(Some("time"), p(12656.0, 0.0, 0.0)), Verdict::Pass);
        assert_eq!(verdict(Some("time"), p(12657.0, 0.0, 0.0)), Verdict::Fail);
        assert_eq!(verdict(Some("time"), p(12657.0, 1.0, 0.0)), Verdict::Pass);
        // Series: every point must be inside; 3.5 vs 5 is 30 % off.
        assert_eq!(verdict(Some("rt"), p(5.0, 0.0, 0.15)), Verdict::Fail);
        let at20 = Predicate::Within {
            of: Operand::Value(5.0),
            abs: 0.0,
            rel: 0.15,
            at: Some(20.0),
        };
        assert_eq!(verdict(Some("rt"), at20), Verdict::Pass);
    }

    #[test]
    fn bounds_against_series_measure() {
        let below = Predicate::AtMost {
            of: Operand::Measure("bound".into()),
            strict: true,
            at: None,
        };
        assert_eq!(verdict(Some("rt"), below.clone()), Verdict::Pass);
        // low is 6.0 at x = 20 which is ≤ 11.3, but 1.0 ≥ 4.3 fails for at_least.
        let above = Predicate::AtLeast {
            of: Operand::Measure("bound".into()),
            strict: false,
            at: None,
        };
        assert_eq!(verdict(Some("rt"), above), Verdict::Fail);
        let r = evaluate(&claim(Some("rt"), below), &measures());
        // Closest to the bound: x = 5 (4.3 − 3.5 = 0.8).
        assert_eq!(r.x, Some(5.0));
    }

    #[test]
    fn order_pointwise() {
        let p = |ms: &[&str], at: Option<f64>| Predicate::Order {
            measures: ms.iter().map(|s| s.to_string()).collect(),
            strict: false,
            at,
        };
        assert_eq!(verdict(None, p(&["rt", "bound"], None)), Verdict::Pass);
        // low ≤ rt holds at 5 and 10 but not at 20 (6.0 > 5.64).
        assert_eq!(verdict(None, p(&["low", "rt"], None)), Verdict::Fail);
        assert_eq!(verdict(None, p(&["low", "rt"], Some(10.0))), Verdict::Pass);
        assert_eq!(
            verdict(None, p(&["low", "rt", "bound"], Some(5.0))),
            Verdict::Pass
        );
    }

    #[test]
    fn trend_and_flat() {
        let inc = Predicate::Trend {
            direction: Direction::Increasing,
            from: None,
            to: None,
            slack: 0.0,
        };
        let dec = Predicate::Trend {
            direction: Direction::Decreasing,
            from: None,
            to: None,
            slack: 0.0,
        };
        assert_eq!(verdict(Some("rt"), inc), Verdict::Pass);
        assert_eq!(verdict(Some("rt"), dec), Verdict::Fail);
        let flat = |rel: f64, from: f64| Predicate::Flat {
            from: Some(from),
            to: None,
            rel,
        };
        assert_eq!(verdict(Some("rt"), flat(0.1, 10.0)), Verdict::Pass);
        assert_eq!(verdict(Some("rt"), flat(0.1, 5.0)), Verdict::Fail);
    }

    #[test]
    fn missing_measure_fails_with_reason() {
        let r = evaluate(
            &claim(
                Some("nope"),
                Predicate::AtMost {
                    of: Operand::Value(1.0),
                    strict: false,
                    at: None,
                },
            ),
            &measures(),
        );
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.detail.contains("no measure `nope`"), "{}", r.detail);
    }

    #[test]
    fn parse_valid_and_invalid_files() {
        let ok = r#"
            study = "demo"
            [[claim]]
            id = "demo.a"
            source = "s"
            statement = "st"
            scenario = "sc"
            measure = "time"
            predicate = { kind = "within", of = 12656, abs = 0 }
            [[claim]]
            id = "demo.b"
            source = "s"
            statement = "st"
            scenario = "sc"
            predicate = { kind = "order", measures = ["a", "b"] }
        "#;
        let claims = parse_claims("demo", ok).unwrap().specs;
        assert_eq!(claims.len(), 2);
        assert_eq!(
            claims[0].predicate,
            Predicate::Within {
                of: Operand::Value(12656.0),
                abs: 0.0,
                rel: 0.0,
                at: None
            }
        );
        assert!(matches!(
            parse_claims("other", ok),
            Err(ClaimFileError::WrongStudy { .. })
        ));
        let bad_id = ok.replace("demo.a", "x.a");
        assert!(matches!(
            parse_claims("demo", &bad_id),
            Err(ClaimFileError::BadId { .. })
        ));
        let dup = ok.replace("demo.b", "demo.a");
        assert!(matches!(
            parse_claims("demo", &dup),
            Err(ClaimFileError::Duplicate { .. })
        ));
        let unknown = ok.replace("abs = 0", "absolute = 0");
        assert!(matches!(
            parse_claims("demo", &unknown),
            Err(ClaimFileError::Toml { .. })
        ));
        let with_table = format!(
            "{ok}\n[paper.t1]\nsource = \"T\"\nx_label = \"r\"\nx = [5, 10]\ny = [3.5, 4.8]\n"
        );
        let c = parse_claims("demo", &with_table).unwrap();
        let mut m = Measures::new();
        c.add_paper_measures(&mut m);
        assert_eq!(m.get("paper.t1").unwrap().at(Some(10.0)).unwrap().mean, 4.8);
        let ragged = with_table.replace("y = [3.5, 4.8]", "y = [3.5]");
        assert!(matches!(
            parse_claims("demo", &ragged),
            Err(ClaimFileError::Invalid { .. })
        ));
        let one = ok.replace(r#"["a", "b"]"#, r#"["a"]"#);
        assert!(matches!(
            parse_claims("demo", &one),
            Err(ClaimFileError::Invalid { .. })
        ));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_num(12656.0), "12656");
        assert_eq!(fmt_num(24.71875), "24.72");
        assert_eq!(fmt_num(0.5), "0.5");
        assert_eq!(fmt_num(3.504), "3.504");
        assert_eq!(fmt_num(1.0e-5), "1.000e-5");
        assert_eq!(fmt_num(0.0005), "0.0005");
    }
}

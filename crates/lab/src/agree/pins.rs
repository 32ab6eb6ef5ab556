//! Known disagreements between the simulator and the testbed, pinned by (scenario, metric)
//! with their reason and the committed run that shows them, so that
//! `rmcast testbed --agree N --check` fails on every *other* disagreement (issue 61).
//!
//! The list lives in `scenarios/testbed/agreement-pins.toml` (built into the binary;
//! `--pins FILE` reads another):
//!
//! ```toml
//! [[pin]]
//! scenario = "csp-tree-1m5"    # the scenario file's name without `.toml`
//! metric = "completion_time_s" # one of the judged metrics
//! reason = "..."               # why they differ, or that it is not explained yet
//! run = "docs/results/agreement/csp-tree-1m5.csv"  # the committed agreement.csv showing it
//! ```
//!
//! A table may name several metrics that share one reason and run, `metrics = ["completed",
//! "completion_time_s"]` instead of `metric`: one pin per metric, the reason written once.
//!
//! The check ([`Pins::check`]) sorts one file's judged metrics:
//!
//! * a metric that disagrees and is pinned for the file is **expected**;
//! * a metric that disagrees and is not pinned is **unexpected** (the check fails);
//! * a metric a side could not measure ([`Verdict::Undefined`]) is unexpected even when
//!   pinned: a missing measure is never a known result;
//! * a pinned metric that now agrees is **now agreeing** (the check fails, so that the pin
//!   is removed and the list shrinks rather than hide a later regression);
//! * a pin for the file that names no judged metric is **unknown** (the check fails).

use super::Verdict;
use rmcast_net::NetError;
use std::collections::BTreeSet;
use std::path::Path;

/// The built-in list (`scenarios/testbed/agreement-pins.toml`).
pub const BUILTIN: &str = include_str!("../../../../scenarios/testbed/agreement-pins.toml");

/// One known disagreement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The scenario file's name without `.toml` (`csp-tree-1m5`).
    pub scenario: String,
    /// The judged metric (`agreement.csv`'s `metric`).
    pub metric: String,
    /// Why the two sides differ (or what is known of it).
    pub reason: String,
    /// The committed `agreement.csv` (a path from the workspace's root) that shows it.
    pub run: String,
}

/// The pinned disagreements.
#[derive(Debug, Clone, Default)]
pub struct Pins {
    /// Every pin, in the file's order.
    pub pins: Vec<Pin>,
}

fn field(t: &toml::Table, k: &str, at: usize) -> Result<String, NetError> {
    match t.get(k).and_then(toml::Value::as_str).map(str::trim) {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(NetError::setup(format!(
            "agreement pins: pin {} needs a non-empty `{k}` string",
            at + 1
        ))),
    }
}

/// The metrics pin table `at` names: its `metric`, or its `metrics` list (not both, not
/// empty).
fn metrics(t: &toml::Table, at: usize) -> Result<Vec<String>, NetError> {
    let bad = |what: &str| NetError::setup(format!("agreement pins: pin {} {what}", at + 1));
    match (t.contains_key("metric"), t.get("metrics")) {
        (true, None) => Ok(vec![field(t, "metric", at)?]),
        (false, Some(toml::Value::Array(list))) if !list.is_empty() => list
            .iter()
            .map(|v| match v.as_str().map(str::trim) {
                Some(m) if !m.is_empty() => Ok(m.to_string()),
                _ => Err(bad("has a `metrics` entry that is not a non-empty string")),
            })
            .collect(),
        (false, Some(_)) => Err(bad("needs `metrics` to be a non-empty list of strings")),
        (true, Some(_)) => Err(bad("has both `metric` and `metrics`")),
        (false, None) => Err(bad("needs a `metric` string or a `metrics` list")),
    }
}

impl Pins {
    /// Read a pins file's text: `[[pin]]` tables with `scenario`, `metric` (or `metrics`, a
    /// list of them), `reason` and `run`; a (scenario, metric) pinned twice, an unknown key,
    /// a table with both or neither of `metric` and `metrics`, an empty list, or a metric
    /// that is not judged is an error.
    pub fn parse(text: &str) -> Result<Pins, NetError> {
        let doc: toml::Table =
            toml::from_str(text).map_err(|e| NetError::setup(format!("agreement pins: {e}")))?;
        if let Some(k) = doc.keys().find(|k| *k != "pin") {
            return Err(NetError::setup(format!(
                "agreement pins: unknown key `{k}` (only [[pin]] tables)"
            )));
        }
        let tables = match doc.get("pin") {
            None => return Ok(Pins::default()),
            Some(toml::Value::Array(a)) => a,
            Some(_) => {
                return Err(NetError::setup(
                    "agreement pins: `pin` must be an array of tables ([[pin]])",
                ))
            }
        };
        let mut pins = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, v) in tables.iter().enumerate() {
            let t = v.as_table().ok_or_else(|| {
                NetError::setup(format!("agreement pins: pin {} is not a table", i + 1))
            })?;
            if let Some(k) = t
                .keys()
                .find(|k| !["scenario", "metric", "metrics", "reason", "run"].contains(&k.as_str()))
            {
                return Err(NetError::setup(format!(
                    "agreement pins: pin {} has an unknown key `{k}`",
                    i + 1
                )));
            }
            let (scenario, reason, run) = (
                field(t, "scenario", i)?,
                field(t, "reason", i)?,
                field(t, "run", i)?,
            );
            for metric in metrics(t, i)? {
                if !super::METRICS.iter().any(|m| m.0 == metric) {
                    return Err(NetError::setup(format!(
                        "agreement pins: `{metric}` is not a judged metric (pin {}, {scenario})",
                        i + 1,
                    )));
                }
                if !seen.insert((scenario.clone(), metric.clone())) {
                    return Err(NetError::setup(format!(
                        "agreement pins: {scenario} / {metric} is pinned twice"
                    )));
                }
                pins.push(Pin {
                    scenario: scenario.clone(),
                    metric,
                    reason: reason.clone(),
                    run: run.clone(),
                });
            }
        }
        Ok(Pins { pins })
    }

    /// The built-in list, or the file `path`.
    pub fn load(path: Option<&Path>) -> Result<Pins, NetError> {
        match path {
            None => Pins::parse(BUILTIN),
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| NetError::io(format!("read {}", p.display()), e))?;
                Pins::parse(&text)
            }
        }
    }

    /// The pins of one scenario (its file name without `.toml`).
    pub fn of<'a>(&'a self, scenario: &'a str) -> impl Iterator<Item = &'a Pin> + 'a {
        self.pins.iter().filter(move |p| p.scenario == scenario)
    }

    /// Sort `scenario`'s judged metrics (`(metric, verdict)`) against the pins.
    pub fn check(&self, scenario: &str, judged: &[(&str, Verdict)]) -> Check {
        let pinned = |m: &str| self.of(scenario).any(|p| p.metric == m);
        let mut c = Check::default();
        for &(m, v) in judged {
            match (v, pinned(m)) {
                (Verdict::Undefined, _) | (Verdict::Disagree, false) => {
                    c.unexpected.push(m.to_string())
                }
                (Verdict::Disagree, true) => c.expected.push(m.to_string()),
                (Verdict::Within | Verdict::Overlap, true) => c.now_agreeing.push(m.to_string()),
                (Verdict::Within | Verdict::Overlap, false) => {}
            }
        }
        c.unknown = self
            .of(scenario)
            .filter(|p| !judged.iter().any(|(m, _)| *m == p.metric))
            .map(|p| p.metric.clone())
            .collect();
        c
    }
}

/// One file's metrics sorted by [`Pins::check`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    /// Disagreements that are pinned.
    pub expected: Vec<String>,
    /// Disagreements (or unmeasured metrics) that are not pinned.
    pub unexpected: Vec<String>,
    /// Pinned metrics that agree now.
    pub now_agreeing: Vec<String>,
    /// Pins for the file naming no judged metric.
    pub unknown: Vec<String>,
}

impl Check {
    /// Every disagreement is pinned and every pin still disagrees.
    pub fn passed(&self) -> bool {
        self.unexpected.is_empty() && self.now_agreeing.is_empty() && self.unknown.is_empty()
    }

    /// The check's report, one line per group that is not empty, and the outcome.
    pub fn report(&self, scenario: &str) -> String {
        let mut s = String::new();
        let mut line = |what: &str, v: &[String]| {
            if !v.is_empty() {
                s.push_str(&format!("{what}: {}\n", v.join(", ")));
            }
        };
        line("pinned disagreements (expected)", &self.expected);
        line(
            "UNEXPECTED disagreements (not pinned, or unmeasured)",
            &self.unexpected,
        );
        line(
            "NOW AGREEING though pinned (remove the pin)",
            &self.now_agreeing,
        );
        line("UNKNOWN pinned metrics", &self.unknown);
        s.push_str(&format!(
            "check {scenario}: {}\n",
            if self.passed() { "passed" } else { "FAILED" }
        ));
        s
    }
}

/// The `(metric, verdict)` rows of an `agreement.csv` (its `metric` and `verdict` columns).
pub fn verdicts_of_csv(text: &str) -> Result<Vec<(String, Verdict)>, NetError> {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| {
        head.iter()
            .position(|h| *h == name)
            .ok_or_else(|| NetError::setup(format!("agreement.csv: no `{name}` column")))
    };
    let (mc, vc) = (col("metric")?, col("verdict")?);
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let get = |i: usize| {
                f.get(i)
                    .copied()
                    .ok_or_else(|| NetError::setup(format!("agreement.csv: short row `{l}`")))
            };
            let word = get(vc)?;
            let v = Verdict::from_word(word).ok_or_else(|| {
                NetError::setup(format!("agreement.csv: unknown verdict `{word}`"))
            })?;
            Ok((get(mc)?.to_string(), v))
        })
        .collect()
}

#[cfg(test)]
#[path = "pins_tests.rs"]
mod tests;

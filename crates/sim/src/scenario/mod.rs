//! Scenario files (TOML) and sweeps.
//!
//! A scenario names a topology, the protocol and its parameters, traffic, loss rules, host
//! models, a stop condition, a seed and the metrics to record. **Any scalar may be a list or
//! a range** (`{ from = 5, to = 50, step = 5 }`, inclusive); the cross product of all such
//! values is a sweep, one run per combination, in a fixed order (keys in sorted order, the
//! first key outermost). A few keys are lists by nature and are never swept:
//! `topology.rtds_ms`, `topology.per_exchange`, `topology.receiver_ids`, `loss.nodes`,
//! `loss.links`, `metrics.record`. Arrays of tables (`[[loss]]`) are structure, not sweeps.
//!
//! Runs execute in parallel (rayon); each run is a pure function of its table, so results
//! are identical whatever the thread count. Errors name the file, the key and what was
//! expected; so is a receiver the topology leaves without a path from the source (checked for
//! every run before any is simulated). A run's `completed` is true only when the sender
//! completed and every receiver delivered every message. See `scenarios/examples/` for one
//! file per topology generator and loss model.
//!
//! The folder follows the path from file to results: sweep expansion (`sweep.rs`), the
//! typed parameter access shared with the registry (`crate::params`), the topology
//! (`topology.rs`), loss rules (`loss.rs`), the rest of a run's set-up (`build.rs`), running
//! and measuring it (`run.rs`) and the `runs.csv` / `runs.jsonl` / record output
//! (`output.rs`).

mod build;
mod loss;
mod output;
mod run;
mod sweep;
mod topology;

pub use crate::params::{Params, ScenarioError};
pub use loss::loss_rules;
pub use output::{
    columns, records_csv, series_csv, to_csv, to_jsonl, Metric, Records, RunResult, Sample, Trace,
    SERIES_COLUMNS,
};
pub use sweep::MAX_RUNS;
pub use topology::{topology_from_table, Hosts};

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use sweep::Seg;
use toml::{Table, Value};

/// One swept key and its values.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Dotted path, e.g. `topology.receivers` or `loss.0.p`.
    pub key: String,
    path: Vec<Seg>,
    /// Its values, in sweep order.
    pub values: Vec<Value>,
}

/// A loaded scenario: the document and its sweep axes.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it was read from, for error messages.
    pub file: String,
    /// Its directory (relative paths in it, e.g. an edge list, are resolved from here).
    pub dir: PathBuf,
    /// The document as read.
    pub doc: Table,
    /// The swept keys (their value lists give the runs).
    pub axes: Vec<Axis>,
}

/// One run of a sweep.
#[derive(Debug, Clone)]
pub struct Point {
    /// Its position in the sweep (0-based).
    pub index: usize,
    /// The swept keys and their values for this run.
    pub assignment: Vec<(String, Value)>,
    /// The document with those values in place.
    pub table: Table,
}

impl Scenario {
    /// Read and check a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io {
            file: file.clone(),
            msg: e.to_string(),
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::parse(&text, &file, dir)
    }

    /// Parse scenario text; `file` names it in errors, `dir` resolves relative paths.
    pub fn parse(text: &str, file: &str, dir: PathBuf) -> Result<Scenario, ScenarioError> {
        let doc: Table = text
            .parse()
            .map_err(|e: toml::de::Error| ScenarioError::Syntax {
                file: file.to_string(),
                msg: e.to_string().trim().to_string(),
            })?;
        let mut axes = Vec::new();
        sweep::walk(file, &doc, &mut Vec::new(), "", &mut axes)?;
        let mut runs: usize = 1;
        for a in &axes {
            runs = runs.saturating_mul(a.values.len());
        }
        if runs > MAX_RUNS {
            return Err(ScenarioError::Key {
                file: file.to_string(),
                key: axes
                    .iter()
                    .map(|a| a.key.as_str())
                    .collect::<Vec<_>>()
                    .join(" × "),
                expected: format!("a sweep of at most {MAX_RUNS} runs, got {runs}"),
            });
        }
        let sc = Scenario {
            file: file.to_string(),
            dir,
            doc,
            axes,
        };
        // Check the first point's keys and values without running it.
        if let Some(p) = sc.points().first() {
            build::check_point(&sc, p)?;
        }
        Ok(sc)
    }

    /// Number of runs.
    pub fn runs(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// Every run, in order (the first axis outermost).
    pub fn points(&self) -> Vec<Point> {
        let n = self.runs();
        (0..n).map(|i| self.point(i)).collect()
    }

    /// Run `index` of the sweep.
    pub fn point(&self, index: usize) -> Point {
        let mut table = self.doc.clone();
        let mut assignment = Vec::with_capacity(self.axes.len());
        let mut rem = index;
        let mut digits = vec![0usize; self.axes.len()];
        for (d, a) in digits.iter_mut().zip(&self.axes).rev() {
            *d = rem % a.values.len();
            rem /= a.values.len();
        }
        for (a, &d) in self.axes.iter().zip(&digits) {
            let v = a.values[d].clone();
            sweep::set(&mut table, &a.path, v.clone());
            assignment.push((a.key.clone(), v));
        }
        Point {
            index,
            assignment,
            table,
        }
    }
}

/// Options for [`run_sweep`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Keep per-packet and per-loss records for every run.
    pub trace_all: bool,
    /// Keep them for the first run only (for a pcap).
    pub trace_first: bool,
}

/// Where a sweep reports finished runs (from worker threads), and whether it should stop.
/// A closure `Fn()` is a progress that never stops.
pub trait Progress: Sync {
    /// One more run finished.
    fn done(&self);
    /// Whether the runs not yet started should be skipped (the sweep then ends with
    /// [`ScenarioError::Stopped`]); checked before each run.
    fn stopped(&self) -> bool {
        false
    }
}

impl<F: Fn() + Sync> Progress for F {
    fn done(&self) {
        self()
    }
}

/// Run every point of the sweep in parallel; results come back in run order. `progress`
/// hears of every finished run (from worker threads) and can stop the sweep.
pub fn run_sweep(
    sc: &Scenario,
    opts: RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<RunResult>, ScenarioError> {
    let all: Vec<usize> = (0..sc.runs()).collect();
    run_indices(sc, &all, opts, progress)
}

/// Run the given points of the sweep (indices below [`Scenario::runs`]) in parallel; results
/// come back in the order given. Used by `rmcast sim --shard` ([`crate::shard`]).
pub fn run_indices(
    sc: &Scenario,
    indices: &[usize],
    opts: RunOptions,
    progress: &dyn Progress,
) -> Result<Vec<RunResult>, ScenarioError> {
    check_topologies(sc, indices)?;
    let results: Vec<Option<Result<RunResult, ScenarioError>>> = indices
        .par_iter()
        .map(|&i| {
            if progress.stopped() {
                return None;
            }
            let p = sc.point(i);
            let trace = opts.trace_all || (opts.trace_first && i == 0);
            let r = run::run_point(sc, &p, trace);
            progress.done();
            Some(r)
        })
        .collect();
    let done = results.iter().filter(|r| r.is_some()).count();
    if done < indices.len() {
        return Err(ScenarioError::Stopped {
            file: sc.file.clone(),
            done,
            runs: indices.len(),
        });
    }
    results.into_iter().flatten().collect()
}

/// Build the topology of every distinct (seed, `[topology]`) pair among the runs `indices`
/// and check that each reaches all its receivers, so a sweep with an unreachable receiver in
/// any run fails before a single run is simulated.
fn check_topologies(sc: &Scenario, indices: &[usize]) -> Result<(), ScenarioError> {
    let mut seen = std::collections::HashSet::new();
    let distinct: Vec<Point> = indices
        .iter()
        .map(|&i| sc.point(i))
        .filter(|p| {
            let part = |k: &str| p.table.get(k).map(Value::to_string).unwrap_or_default();
            seen.insert((part("seed"), part("topology")))
        })
        .collect();
    distinct
        .par_iter()
        .try_for_each(|p| build::topology(sc, p).map(|_| ()))
}

/// Milliseconds (as written in a scenario) to a duration, rounded to the nanosecond.
fn ms_dur(v: f64) -> core::time::Duration {
    core::time::Duration::from_nanos((v * 1e6).round() as u64)
}

#[cfg(test)]
mod tests;

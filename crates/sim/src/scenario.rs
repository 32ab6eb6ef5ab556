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
//! expected. See `scenarios/examples/` for one file per topology generator and loss model.

use crate::loss::{KindFilter, LossModel, LossRule, LossSite};
use crate::network::{Backoff, BusConfig, LinkConfig, NodeKind};
use crate::registry::{self, BuildCtx};
use crate::sim::{LossRecord, PacketRecord, Sim, Stop, Traffic};
use crate::topo::{self, LinkClass, PlaneParams, Topology, TransitStub};
use core::time::Duration;
use rayon::prelude::*;
use rmcast_proto::{GroupId, IfaceId, NodeId, Time};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Keys whose list value is data, not a sweep.
const LIST_KEYS: &[&str] = &[
    "rtds_ms",
    "per_exchange",
    "receiver_ids",
    "nodes",
    "links",
    "record",
];

/// Most runs a sweep may have.
pub const MAX_RUNS: usize = 1_000_000;

/// A scenario error: where, and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {msg}")]
    Io { file: String, msg: String },
    #[error("{file}: not valid TOML: {msg}")]
    Syntax { file: String, msg: String },
    #[error("{file}: key `{key}`: expected {expected}")]
    Key {
        file: String,
        key: String,
        expected: String,
    },
}

/// Typed access to one table of a scenario, with errors naming the key.
#[derive(Debug, Clone)]
pub struct Params {
    file: String,
    prefix: String,
    table: Table,
}

impl Params {
    fn new(file: &str, prefix: &str, table: Table) -> Params {
        Params {
            file: file.to_string(),
            prefix: prefix.to_string(),
            table,
        }
    }
    fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }
    /// An error for `key`.
    pub fn bad(&self, key: &str, expected: &str) -> ScenarioError {
        ScenarioError::Key {
            file: self.file.clone(),
            key: self.path(key),
            expected: expected.to_string(),
        }
    }
    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }
    /// Reject keys not in `allowed`.
    pub fn check_keys(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        for k in self.table.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.bad(
                    k,
                    &format!("no such key here; known keys: {}", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }
    fn num(&self, key: &str) -> Result<Option<f64>, ScenarioError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(f)) => Ok(Some(*f)),
            Some(_) => Err(self.bad(key, "a number")),
        }
    }
    /// A number in `[min, max]`, or `default` when absent.
    pub fn f64_in(
        &self,
        key: &str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Result<f64, ScenarioError> {
        let v = self.num(key)?.unwrap_or(default);
        if v.is_finite() && v >= min && v <= max {
            Ok(v)
        } else {
            Err(self.bad(key, &format!("a number in [{min}, {max}], got {v}")))
        }
    }
    pub fn req_f64_in(&self, key: &str, min: f64, max: f64) -> Result<f64, ScenarioError> {
        if !self.has(key) {
            return Err(self.bad(key, &format!("a number in [{min}, {max}] (required)")));
        }
        self.f64_in(key, 0.0, min, max)
    }
    /// A non-negative integer, or `None` when absent.
    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>, ScenarioError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(_) => Err(self.bad(key, "a non-negative integer")),
        }
    }
    pub fn u64_in(
        &self,
        key: &str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, ScenarioError> {
        let v = self.opt_u64(key)?.unwrap_or(default);
        if (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(self.bad(key, &format!("an integer in [{min}, {max}], got {v}")))
        }
    }
    pub fn req_u64_in(&self, key: &str, min: u64, max: u64) -> Result<u64, ScenarioError> {
        if !self.has(key) {
            return Err(self.bad(key, &format!("an integer in [{min}, {max}] (required)")));
        }
        self.u64_in(key, 0, min, max)
    }
    pub fn str_or(&self, key: &str, default: &str) -> Result<String, ScenarioError> {
        match self.table.get(key) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(self.bad(key, "a string")),
        }
    }
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        match self.table.get(key) {
            None => Ok(default),
            Some(Value::Boolean(b)) => Ok(*b),
            Some(_) => Err(self.bad(key, "true or false")),
        }
    }
    fn list(&self, key: &str) -> Option<&Vec<Value>> {
        self.table.get(key).and_then(Value::as_array)
    }
    fn num_list(&self, key: &str) -> Result<Option<Vec<f64>>, ScenarioError> {
        let Some(v) = self.table.get(key) else {
            return Ok(None);
        };
        let arr = v
            .as_array()
            .ok_or_else(|| self.bad(key, "a list of numbers"))?;
        arr.iter()
            .map(|x| match x {
                Value::Integer(i) => Ok(*i as f64),
                Value::Float(f) if f.is_finite() => Ok(*f),
                _ => Err(self.bad(key, "a list of numbers")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
    fn sub(&self, key: &str) -> Result<Option<Params>, ScenarioError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Table(t)) => Ok(Some(Params::new(&self.file, &self.path(key), t.clone()))),
            Some(_) => Err(self.bad(key, "a table")),
        }
    }
    /// The table without `key`.
    pub fn without(&self, key: &str) -> Params {
        let mut p = self.clone();
        p.table.remove(key);
        p
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// One swept key and its values.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Dotted path, e.g. `topology.receivers` or `loss.0.p`.
    pub key: String,
    path: Vec<Seg>,
    pub values: Vec<Value>,
}

/// A loaded scenario: the document and its sweep axes.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub file: String,
    pub dir: PathBuf,
    pub doc: Table,
    pub axes: Vec<Axis>,
}

/// One run of a sweep.
#[derive(Debug, Clone)]
pub struct Point {
    pub index: usize,
    /// The swept keys and their values for this run.
    pub assignment: Vec<(String, Value)>,
    pub table: Table,
}

fn is_range(t: &Table) -> bool {
    t.contains_key("from")
        && t.contains_key("to")
        && t.keys()
            .all(|k| matches!(k.as_str(), "from" | "to" | "step"))
}

fn expand_range(file: &str, key: &str, t: &Table) -> Result<Vec<Value>, ScenarioError> {
    let bad = |e: &str| ScenarioError::Key {
        file: file.to_string(),
        key: key.to_string(),
        expected: e.to_string(),
    };
    let get = |k: &str| t.get(k);
    match (get("from"), get("to"), get("step")) {
        (
            Some(Value::Integer(a)),
            Some(Value::Integer(b)),
            s @ (None | Some(Value::Integer(_))),
        ) => {
            let step = s.and_then(Value::as_integer).unwrap_or(1);
            if step <= 0 || b < a {
                return Err(bad("a range with from <= to and step > 0"));
            }
            let n = ((b - a) / step + 1) as usize;
            if n > MAX_RUNS {
                return Err(bad("a range of at most 1,000,000 values"));
            }
            Ok((0..n as i64)
                .map(|i| Value::Integer(a + i * step))
                .collect())
        }
        (Some(a), Some(b), s) => {
            let f = |v: &Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
            let (Some(a), Some(b)) = (f(a), f(b)) else {
                return Err(bad("a range { from = number, to = number, step = number }"));
            };
            let step = match s {
                None => 1.0,
                Some(v) => f(v).ok_or_else(|| bad("a numeric step"))?,
            };
            if !(step > 0.0 && step.is_finite() && a.is_finite() && b.is_finite() && a <= b) {
                return Err(bad("a range with from <= to and step > 0"));
            }
            let n = ((b - a) / step + 1e-9).floor() as usize + 1;
            if n > MAX_RUNS {
                return Err(bad("a range of at most 1,000,000 values"));
            }
            // Computed as from + i*step (no accumulated error), rounded to 12 significant
            // decimals so that 0.1-steps print as written.
            Ok((0..n)
                .map(|i| {
                    let v = a + i as f64 * step;
                    Value::Float(format!("{v:.12}").parse::<f64>().unwrap_or(v))
                })
                .collect())
        }
        _ => Err(bad("a range { from = ..., to = ..., step = ... }")),
    }
}

fn walk(
    file: &str,
    t: &Table,
    path: &mut Vec<Seg>,
    name: &str,
    axes: &mut Vec<Axis>,
) -> Result<(), ScenarioError> {
    for (k, v) in t {
        let key = if name.is_empty() {
            k.clone()
        } else {
            format!("{name}.{k}")
        };
        path.push(Seg::Key(k.clone()));
        match v {
            Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_table) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    if let Value::Table(sub) = x {
                        walk(file, sub, path, &format!("{key}.{i}"), axes)?;
                    }
                    path.pop();
                }
            }
            Value::Array(a) if !LIST_KEYS.contains(&k.as_str()) => {
                if a.is_empty() || a.iter().any(|x| x.is_array() || x.is_table()) {
                    return Err(ScenarioError::Key {
                        file: file.to_string(),
                        key,
                        expected: "a scalar or a non-empty list of scalars (a sweep)".into(),
                    });
                }
                axes.push(Axis {
                    key,
                    path: path.clone(),
                    values: a.clone(),
                });
            }
            Value::Table(sub) if is_range(sub) => {
                let values = expand_range(file, &key, sub)?;
                axes.push(Axis {
                    key,
                    path: path.clone(),
                    values,
                });
            }
            Value::Table(sub) => walk(file, sub, path, &key, axes)?,
            _ => {}
        }
        path.pop();
    }
    Ok(())
}

fn set(t: &mut Table, path: &[Seg], v: Value) {
    let Some((Seg::Key(first), rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        t.insert(first.clone(), v);
        return;
    }
    let mut cur = match t.get_mut(first) {
        Some(x) => x,
        None => return,
    };
    for (i, seg) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let next = match (seg, cur) {
            (Seg::Key(k), Value::Table(tt)) => {
                if last {
                    tt.insert(k.clone(), v);
                    return;
                }
                tt.get_mut(k)
            }
            (Seg::Index(j), Value::Array(a)) => a.get_mut(*j),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
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
        walk(file, &doc, &mut Vec::new(), "", &mut axes)?;
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
            check_point(&sc, &p.table)?;
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
            set(&mut table, &a.path, v.clone());
            assignment.push((a.key.clone(), v));
        }
        Point {
            index,
            assignment,
            table,
        }
    }
}

/// A metric value.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    U(u64),
    F(f64),
    S(String),
    B(bool),
}

impl Metric {
    pub fn csv(&self) -> String {
        match self {
            Metric::U(v) => v.to_string(),
            Metric::F(v) => {
                if v.is_finite() {
                    v.to_string()
                } else {
                    String::new()
                }
            }
            Metric::S(s) => csv_escape(s),
            Metric::B(b) => b.to_string(),
        }
    }
    pub fn json(&self) -> serde_json::Value {
        match self {
            Metric::U(v) => (*v).into(),
            Metric::F(v) => {
                serde_json::Number::from_f64(*v).map_or(serde_json::Value::Null, Into::into)
            }
            Metric::S(s) => s.clone().into(),
            Metric::B(b) => (*b).into(),
        }
    }
    fn from_value(v: &Value) -> Metric {
        match v {
            Value::Integer(i) if *i >= 0 => Metric::U(*i as u64),
            Value::Integer(i) => Metric::F(*i as f64),
            Value::Float(f) => Metric::F(*f),
            Value::Boolean(b) => Metric::B(*b),
            Value::String(s) => Metric::S(s.clone()),
            other => Metric::S(other.to_string()),
        }
    }
}

fn csv_escape(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Per-packet and per-loss records of a run, and each node's role.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub packets: Vec<PacketRecord>,
    pub losses: Vec<LossRecord>,
    pub nodes: usize,
    pub groups: Vec<(GroupId, Vec<NodeId>)>,
}

/// One run's results.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub index: usize,
    /// Swept keys and their values, then every metric, as (column, value).
    pub columns: Vec<(String, Metric)>,
    pub trace: Option<Trace>,
}

/// Options for [`run_sweep`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Keep per-packet and per-loss records for every run.
    pub trace_all: bool,
    /// Keep them for the first run only (for a pcap).
    pub trace_first: bool,
}

/// Run every point of the sweep in parallel; results come back in run order. `progress`
/// is called once per finished run (from worker threads).
pub fn run_sweep(
    sc: &Scenario,
    opts: RunOptions,
    progress: &(dyn Fn() + Sync),
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
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<RunResult>, ScenarioError> {
    let results: Vec<Result<RunResult, ScenarioError>> = indices
        .par_iter()
        .map(|&i| {
            let p = sc.point(i);
            let trace = opts.trace_all || (opts.trace_first && i == 0);
            let r = run_point(sc, &p, trace);
            progress();
            r
        })
        .collect();
    results.into_iter().collect()
}

/// Columns in first-seen order over all runs (runs may differ, e.g. in loss causes).
pub fn columns(results: &[RunResult]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in results {
        for (c, _) in &r.columns {
            if seen.insert(c.clone()) {
                cols.push(c.clone());
            }
        }
    }
    cols
}

/// `runs.csv`: a header and one row per run.
pub fn to_csv(results: &[RunResult]) -> String {
    let cols = columns(results);
    let mut s = cols
        .iter()
        .map(|c| csv_escape(c))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    for r in results {
        let row: Vec<String> = cols
            .iter()
            .map(|c| {
                r.columns
                    .iter()
                    .find(|(k, _)| k == c)
                    .map_or(String::new(), |(_, v)| v.csv())
            })
            .collect();
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}

/// `runs.jsonl`: one JSON object per run.
pub fn to_jsonl(results: &[RunResult]) -> String {
    let mut s = String::new();
    for r in results {
        let mut m = serde_json::Map::new();
        for (k, v) in &r.columns {
            m.insert(k.clone(), v.json());
        }
        s.push_str(&serde_json::Value::Object(m).to_string());
        s.push('\n');
    }
    s
}

// ---------------------------------------------------------------------- building a run

struct Built {
    sim: Sim,
    source: NodeId,
    receivers: Vec<NodeId>,
    stop: Stop,
    record: Option<Vec<String>>,
}

fn ms_dur(v: f64) -> Duration {
    Duration::from_nanos((v * 1e6).round() as u64)
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "topology",
    "protocol",
    "traffic",
    "loss",
    "host",
    "stop",
    "metrics",
];

fn check_point(sc: &Scenario, t: &Table) -> Result<(), ScenarioError> {
    build(sc, t).map(|_| ())
}

fn build_topology(sc: &Scenario, p: &Params, seed: u64) -> Result<Topology, ScenarioError> {
    let kind = p.str_or("kind", "")?;
    let topo_err = |e: topo::TopoError| p.bad("kind", &format!("a valid {kind} topology: {e}"));
    let plane = |p: &Params| -> Result<PlaneParams, ScenarioError> {
        let d = PlaneParams::default();
        Ok(PlaneParams {
            scale: p.f64_in("scale", d.scale, 1e-9, 1e12)?,
            delay_per_unit: ms_dur(p.f64_in("delay_per_unit_ms", 0.1, 0.0, 1e6)?),
            bandwidth_bps: p.u64_in(
                "bandwidth_bps",
                d.bandwidth_bps,
                0,
                u64::MAX / 8_000_000_000,
            )?,
            attempts: p.u64_in("attempts", 1000, 1, 1_000_000)? as u32,
        })
    };
    let host_link = |p: &Params| -> Result<LinkConfig, ScenarioError> {
        Ok(LinkConfig::new(
            p.u64_in(
                "host_bandwidth_bps",
                10_000_000,
                0,
                u64::MAX / 8_000_000_000,
            )?,
            ms_dur(p.f64_in("host_delay_ms", 1.0, 0.0, 1e6)?),
        ))
    };
    let common = ["kind", "queue"];
    let plane_keys = [
        "scale",
        "delay_per_unit_ms",
        "bandwidth_bps",
        "attempts",
        "receivers",
        "host_delay_ms",
        "host_bandwidth_bps",
        "seed",
        "placement",
    ];
    fn keys<'a>(common: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        common.iter().chain(extra).copied().collect()
    }
    let max_receivers = 10_000_000;
    let mut t = match kind.as_str() {
        "bus" => {
            p.check_keys(&keys(&common, &["receivers", "bandwidth_bps", "overhead", "min_frame", "backoff", "max_attempts"]))?;
            let backoff = match p.str_or("backoff", "inclusive")?.as_str() {
                "inclusive" => Backoff::Exponential { inclusive: true },
                "exclusive" => Backoff::Exponential { inclusive: false },
                _ => return Err(p.bad("backoff", "\"inclusive\" or \"exclusive\"")),
            };
            let cfg = BusConfig {
                bandwidth_bps: p.u64_in("bandwidth_bps", 10_000_000, 1, 1_000_000_000)?,
                overhead: p.u64_in("overhead", 0, 0, 65_536)? as usize,
                min_frame: p.u64_in("min_frame", 64, 0, 65_536)? as usize,
                max_attempts: p.u64_in("max_attempts", 16, 1, 1000)? as u32,
                backoff,
                ..BusConfig::default()
            };
            if 1_000_000_000 % cfg.bandwidth_bps != 0 {
                return Err(p.bad("bandwidth_bps", "a rate giving a whole number of ns per bit (e.g. 10000000)"));
            }
            topo::bus(p.req_u64_in("receivers", 1, 100_000)? as usize, cfg).map_err(topo_err)?
        }
        "star" => {
            p.check_keys(&keys(&common, &["children", "class", "bandwidth_bps", "class_loss"]))?;
            let class = LinkClass::parse(&p.str_or("class", "lan")?)
                .ok_or_else(|| p.bad("class", "\"lan\", \"interlan\", \"wan\" or \"hybrid\""))?;
            let mut t = topo::star(
                p.req_u64_in("children", 1, 1_000_000)? as usize,
                class,
                p.u64_in("bandwidth_bps", 10_000_000, 0, u64::MAX / 8_000_000_000)?,
            )
            .map_err(|e| p.bad("children", &e.to_string()))?;
            if !p.bool_or("class_loss", true)? {
                t.link_loss.clear();
            }
            t
        }
        "local_exchanges" => {
            p.check_keys(&keys(&common, &["rtds_ms", "destinations", "per_exchange", "bandwidth_bps", "access_delay_ms"]))?;
            let rtds: Vec<Duration> = p
                .num_list("rtds_ms")?
                .unwrap_or_else(|| vec![10.0, 25.0, 30.0, 40.0, 50.0, 60.0])
                .into_iter()
                .map(|v| if v >= 0.0 { Ok(ms_dur(v)) } else { Err(p.bad("rtds_ms", "non-negative delays in ms")) })
                .collect::<Result<_, _>>()?;
            let per: Vec<usize> = match p.num_list("per_exchange")? {
                Some(v) => v.into_iter().map(|x| x.max(0.0) as usize).collect(),
                None => topo::spread(p.u64_in("destinations", 25, 1, 1_000_000)? as usize, rtds.len()),
            };
            topo::local_exchanges(
                &rtds,
                &per,
                p.u64_in("bandwidth_bps", 150_000_000, 0, u64::MAX / 8_000_000_000)?,
                ms_dur(p.f64_in("access_delay_ms", 0.0, 0.0, 1e6)?),
            )
            .map_err(|e| p.bad("per_exchange", &e.to_string()))?
        }
        "binary_tree" => {
            p.check_keys(&keys(&common, &["height", "bandwidth_bps", "delay_ms", "source_link"]))?;
            let link = LinkConfig::new(
                p.u64_in("bandwidth_bps", 1_500_000, 0, u64::MAX / 8_000_000_000)?,
                ms_dur(p.f64_in("delay_ms", 10.0, 0.0, 1e6)?),
            );
            let h = p.req_u64_in("height", 1, 24)? as u32;
            if p.bool_or("source_link", false)? {
                // Seed 003's trees: the source one link above a root router.
                topo::binary_tree_under_source(h, link).map_err(topo_err)?
            } else {
                topo::binary_tree(h, link).map_err(topo_err)?
            }
        }
        "flat_random" | "waxman" | "transit_stub" => {
            let extra: &[&str] = match kind.as_str() {
                "flat_random" => &["n", "p"],
                "waxman" => &["n", "alpha", "beta"],
                _ => &["transit_domains", "transit_nodes", "stubs_per_transit", "stub_nodes", "p_transit", "p_stub"],
            };
            let mut k = keys(&common, &plane_keys);
            k.extend_from_slice(extra);
            p.check_keys(&k)?;
            let pl = plane(p)?;
            let gseed = p.u64_in("seed", 1, 0, u64::MAX)?;
            let mut t = match kind.as_str() {
                "flat_random" => topo::flat_random(
                    p.req_u64_in("n", 2, 1_000_000)? as usize,
                    p.req_f64_in("p", 0.0, 1.0)?,
                    &pl,
                    gseed,
                ),
                "waxman" => topo::waxman(
                    p.req_u64_in("n", 2, 1_000_000)? as usize,
                    p.f64_in("alpha", 0.4, 0.0, 1.0)?,
                    p.f64_in("beta", 0.2, 1e-9, 1e9)?,
                    &pl,
                    gseed,
                ),
                _ => {
                    let d = TransitStub::default();
                    let ts = TransitStub {
                        transit_domains: p.u64_in("transit_domains", d.transit_domains as u64, 1, 10_000)? as usize,
                        transit_nodes: p.u64_in("transit_nodes", d.transit_nodes as u64, 1, 100_000)? as usize,
                        stubs_per_transit: p.u64_in("stubs_per_transit", d.stubs_per_transit as u64, 0, 100_000)? as usize,
                        stub_nodes: p.u64_in("stub_nodes", d.stub_nodes as u64, 1, 100_000)? as usize,
                        p_transit: p.f64_in("p_transit", d.p_transit, 0.0, 1.0)?,
                        p_stub: p.f64_in("p_stub", d.p_stub, 0.0, 1.0)?,
                    };
                    topo::transit_stub(&ts, &pl, gseed)
                }
            }
            .map_err(topo_err)?;
            let r = p.u64_in("receivers", 10, 1, max_receivers)? as usize;
            // Host placement varies with the run seed; the graph with `topology.seed`.
            match p.str_or("placement", "distinct")?.as_str() {
                "distinct" => topo::attach_hosts(&mut t, r, &host_link(p)?, seed),
                "with_replacement" => {
                    topo::attach_hosts_with_replacement(&mut t, r, &host_link(p)?, seed)
                }
                _ => return Err(p.bad("placement", "\"distinct\" or \"with_replacement\"")),
            }
            .map_err(topo_err)?;
            t
        }
        "edge_list" => {
            p.check_keys(&keys(&common, &["file", "source", "receiver_ids", "receivers", "delay_ms", "bandwidth_bps"]))?;
            let f = p.str_or("file", "")?;
            if f.is_empty() {
                return Err(p.bad("file", "the path of an edge-list file (relative to the scenario)"));
            }
            let path = sc.dir.join(&f);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| p.bad("file", &format!("a readable file: {}: {e}", path.display())))?;
            let default = LinkConfig::new(
                p.u64_in("bandwidth_bps", 10_000_000, 0, u64::MAX / 8_000_000_000)?,
                ms_dur(p.f64_in("delay_ms", 1.0, 0.0, 1e6)?),
            );
            let mut t = topo::edge_list(&text, &default).map_err(|e| p.bad("file", &format!("a valid edge list: {}: {e}", path.display())))?;
            let n = t.net.node_count() as u64;
            let src = p.u64_in("source", 0, 0, n.saturating_sub(1))?;
            t.source = NodeId(src as u32);
            t.receivers = match p.list("receiver_ids") {
                Some(ids) => ids
                    .iter()
                    .map(|v| match v.as_integer() {
                        Some(i) if i >= 0 && (i as u64) < n && i as u64 != src => Ok(NodeId(i as u32)),
                        _ => Err(p.bad("receiver_ids", &format!("node ids in [0, {n}) other than the source"))),
                    })
                    .collect::<Result<_, _>>()?,
                None => {
                    let k = p.u64_in("receivers", n - 1, 1, n - 1)?;
                    (0..n as u32).filter(|&i| i != src as u32).take(k as usize).map(NodeId).collect()
                }
            };
            t
        }
        "" => return Err(p.bad("kind", "one of bus, star, local_exchanges, binary_tree, flat_random, transit_stub, waxman, edge_list")),
        _ => return Err(p.bad("kind", "one of bus, star, local_exchanges, binary_tree, flat_random, transit_stub, waxman, edge_list")),
    };
    if let Some(q) = p.opt_u64("queue")? {
        t.net.set_link_queues(q as usize);
    }
    Ok(t)
}

fn build(sc: &Scenario, table: &Table) -> Result<Built, ScenarioError> {
    let file = sc.file.as_str();
    let top = Params::new(file, "", table.clone());
    top.check_keys(TOP_KEYS)?;
    top.str_or("name", "")?;
    top.str_or("description", "")?;
    let seed = top.u64_in("seed", 1, 0, u64::MAX)?;
    let tp = top
        .sub("topology")?
        .ok_or_else(|| top.bad("topology", "a [topology] table"))?;
    let topo = build_topology(sc, &tp, seed)?;
    let Topology {
        net,
        source,
        receivers,
        link_loss,
        ..
    } = topo;
    let links = net.link_count();
    let classes: Vec<String> = (0..links)
        .map(|i| net.link(i).map(|l| l.2.class.clone()).unwrap_or_default())
        .collect();
    let n_nodes = net.node_count();
    let mut sim = Sim::new(net, seed);
    let group = GroupId(1);
    sim.set_group(group, &receivers)
        .map_err(|e| tp.bad("kind", &e.to_string()))?;

    // Protocol.
    let pp = top
        .sub("protocol")?
        .ok_or_else(|| top.bad("protocol", "a [protocol] table"))?;
    let name = pp.str_or("name", "")?;
    let entry = registry::lookup(&name).ok_or_else(|| {
        let names: Vec<&str> = registry::REGISTRY.iter().map(|e| e.name).collect();
        pp.bad("name", &format!("one of {}", names.join(", ")))
    })?;
    let params = pp.without("name");
    params.check_keys(&entry.keys())?;
    (entry.build)(&mut BuildCtx {
        sim: &mut sim,
        source,
        receivers: &receivers,
        group,
        params: &params,
    })?;

    // Traffic.
    let tr = top
        .sub("traffic")?
        .unwrap_or_else(|| Params::new(file, "traffic", Table::new()));
    tr.check_keys(&["messages", "size", "interval_ms", "start_ms", "stamp"])?;
    let mut traffic = Traffic::saturated(
        tr.u64_in("messages", 100, 0, 1_000_000_000)?,
        tr.u64_in("size", 1000, 0, 65_000)? as usize,
    );
    if tr.has("interval_ms") {
        traffic.interval = Some(ms_dur(tr.f64_in("interval_ms", 0.0, 0.0, 1e9)?));
    }
    traffic.start = Time::ZERO + ms_dur(tr.f64_in("start_ms", 0.0, 0.0, 1e12)?);
    traffic.stamp = tr.bool_or("stamp", true)?;
    sim.add_traffic(source, traffic)
        .map_err(|e| pp.bad("name", &e.to_string()))?;

    // Loss: the topology's class error rates, then the scenario's rules.
    for (l, p) in link_loss {
        if p > 0.0 {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Link {
                        link: l,
                        from: None,
                    },
                    LossModel::Bernoulli { p },
                )
                .cause("link_class"),
            )
            .map_err(|e| tp.bad("class", &e.to_string()))?;
        }
    }
    if let Some(v) = table.get("loss") {
        let arr = v
            .as_array()
            .filter(|a| a.iter().all(Value::is_table))
            .ok_or_else(|| top.bad("loss", "an array of tables ([[loss]])"))?;
        for (i, lv) in arr.iter().enumerate() {
            let Value::Table(lt) = lv else { continue };
            let lp = Params::new(file, &format!("loss.{i}"), lt.clone());
            add_loss_rule(&mut sim, &lp, source, &receivers, links, &classes, n_nodes)?;
        }
    }

    // Host models.
    if let Some(hp) = top.sub("host")? {
        hp.check_keys(&["at", "rx_queue", "rx_rate", "processing_us"])?;
        let at: Vec<NodeId> = match hp.str_or("at", "source")?.as_str() {
            "source" => vec![source],
            "receivers" => receivers.clone(),
            "all" => std::iter::once(source)
                .chain(receivers.iter().copied())
                .collect(),
            _ => return Err(hp.bad("at", "\"source\", \"receivers\" or \"all\"")),
        };
        let q = hp.opt_u64("rx_queue")?;
        let rate = hp.f64_in("rx_rate", 1500.0, 1e-9, 1e12)?;
        let proc_us = hp.f64_in("processing_us", 0.0, 0.0, 1e12)?;
        for &n in &at {
            if let Some(q) = q {
                sim.set_rx_queue(n, q.max(1) as usize, rate)
                    .map_err(|e| hp.bad("rx_queue", &e.to_string()))?;
            }
            if proc_us > 0.0 {
                sim.set_processing_delay(n, Duration::from_nanos((proc_us * 1e3).round() as u64))
                    .map_err(|e| hp.bad("processing_us", &e.to_string()))?;
            }
        }
    }

    // Stop condition.
    let sp = top
        .sub("stop")?
        .unwrap_or_else(|| Params::new(file, "stop", Table::new()));
    sp.check_keys(&["time_limit_s", "max_events", "when_complete"])?;
    let stop = Stop {
        until: Some(
            Time::ZERO + Duration::from_secs_f64(sp.f64_in("time_limit_s", 3600.0, 0.0, 1e9)?),
        ),
        max_events: sp.opt_u64("max_events")?,
        when_complete: sp.bool_or("when_complete", true)?,
    };

    // Metrics.
    let record = match top.sub("metrics")? {
        None => None,
        Some(mp) => {
            mp.check_keys(&["record", "events"])?;
            sim.record_events(mp.bool_or("events", false)?);
            match mp.list("record") {
                None => None,
                Some(l) => Some(
                    l.iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .ok_or_else(|| mp.bad("record", "a list of metric names"))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            }
        }
    };
    if record.is_none() && top.sub("metrics")?.is_none() {
        sim.record_events(false);
    }
    Ok(Built {
        sim,
        source,
        receivers,
        stop,
        record,
    })
}

fn add_loss_rule(
    sim: &mut Sim,
    lp: &Params,
    source: NodeId,
    receivers: &[NodeId],
    links: usize,
    classes: &[String],
    n_nodes: usize,
) -> Result<(), ScenarioError> {
    lp.check_keys(&[
        "model",
        "p",
        "p_gb",
        "p_bg",
        "loss_good",
        "loss_bad",
        "k",
        "n",
        "at",
        "links",
        "from",
        "nodes",
        "iface",
        "filter",
        "cause",
    ])?;
    let model = match lp.str_or("model", "")?.as_str() {
        "bernoulli" => LossModel::Bernoulli {
            p: lp.req_f64_in("p", 0.0, 1.0)?,
        },
        "gilbert_elliott" => LossModel::GilbertElliott {
            p_gb: lp.req_f64_in("p_gb", 0.0, 1.0)?,
            p_bg: lp.req_f64_in("p_bg", 0.0, 1.0)?,
            loss_good: lp.f64_in("loss_good", 0.0, 0.0, 1.0)?,
            loss_bad: lp.f64_in("loss_bad", 1.0, 0.0, 1.0)?,
        },
        "drop_nth" => LossModel::DropNth {
            k: lp.req_u64_in("k", 1, u64::MAX)?,
        },
        "every_nth" => LossModel::EveryNth {
            n: lp.req_u64_in("n", 1, u64::MAX)?,
        },
        _ => {
            return Err(lp.bad(
                "model",
                "\"bernoulli\", \"gilbert_elliott\", \"drop_nth\" or \"every_nth\"",
            ))
        }
    };
    let filter = KindFilter::parse(&lp.str_or("filter", "all")?).ok_or_else(|| {
        lp.bad(
            "filter",
            "\"all\", \"data\", \"original\", \"repair\" or \"control\"",
        )
    })?;
    let default_cause = LossRule::new(
        LossSite::Link {
            link: 0,
            from: None,
        },
        model.clone(),
    )
    .cause;
    let cause = lp.str_or("cause", &default_cause)?;
    let rule = |site| LossRule {
        site,
        model: model.clone(),
        filter,
        cause: cause.clone(),
    };
    let at = lp.str_or("at", "link")?;
    match at.as_str() {
        "link" => {
            let mut from = lp.opt_u64("from")?.map(|v| NodeId(v as u32));
            let sel: Vec<usize> = match lp.table.get("links") {
                None => (0..links).collect(),
                Some(Value::String(s)) if s == "all" => (0..links).collect(),
                Some(Value::String(s)) if s == "source" => {
                    // The source's own links, in the direction leaving it.
                    from = from.or(Some(source));
                    (0..links)
                        .filter(|&l| {
                            sim.network()
                                .link(l)
                                .is_some_and(|(a, b, _)| a == source || b == source)
                        })
                        .collect()
                }
                Some(Value::String(s)) => {
                    let v: Vec<usize> = (0..links).filter(|&i| classes[i] == *s).collect();
                    if v.is_empty() {
                        let mut known: Vec<&str> = classes
                            .iter()
                            .map(String::as_str)
                            .filter(|c| !c.is_empty())
                            .collect();
                        known.sort_unstable();
                        known.dedup();
                        return Err(lp.bad(
                            "links",
                            &format!(
                                "\"all\", \"source\", a link class ({}) or a list of link indices",
                                known.join(", ")
                            ),
                        ));
                    }
                    v
                }
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| match x.as_integer() {
                        Some(i) if i >= 0 && (i as usize) < links => Ok(i as usize),
                        _ => Err(lp.bad("links", &format!("link indices in [0, {links})"))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => {
                    return Err(lp.bad(
                        "links",
                        "\"all\", \"source\", a link class or a list of link indices",
                    ))
                }
            };
            for l in sel {
                sim.add_loss(&rule(LossSite::Link { link: l, from }))
                    .map_err(|e| lp.bad("from", &e.to_string()))?;
            }
        }
        "tx" | "rx" | "interface" => {
            let nodes: Vec<NodeId> = match lp.table.get("nodes") {
                None => std::iter::once(source)
                    .chain(receivers.iter().copied())
                    .collect(),
                Some(Value::String(s)) => match s.as_str() {
                    "all" | "members" => std::iter::once(source)
                        .chain(receivers.iter().copied())
                        .collect(),
                    "receivers" => receivers.to_vec(),
                    "source" => vec![source],
                    _ => {
                        return Err(lp.bad(
                            "nodes",
                            "\"members\", \"receivers\", \"source\" or a list of node ids",
                        ))
                    }
                },
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| match x.as_integer() {
                        Some(i) if i >= 0 && (i as usize) < n_nodes => Ok(NodeId(i as u32)),
                        _ => Err(lp.bad("nodes", &format!("node ids in [0, {n_nodes})"))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => {
                    return Err(lp.bad(
                        "nodes",
                        "\"members\", \"receivers\", \"source\" or a list of node ids",
                    ))
                }
            };
            let iface = lp.opt_u64("iface")?.map(|i| IfaceId(i as u32));
            for n in nodes {
                if at != "rx" {
                    sim.add_loss(&rule(LossSite::Tx { node: n, iface }))
                        .map_err(|e| lp.bad("nodes", &e.to_string()))?;
                }
                if at != "tx" {
                    sim.add_loss(&rule(LossSite::Rx { node: n, iface }))
                        .map_err(|e| lp.bad("nodes", &e.to_string()))?;
                }
            }
        }
        _ => return Err(lp.bad("at", "\"link\", \"tx\", \"rx\" or \"interface\"")),
    }
    Ok(())
}

fn run_point(sc: &Scenario, p: &Point, trace: bool) -> Result<RunResult, ScenarioError> {
    let Built {
        mut sim,
        source,
        receivers,
        stop,
        record,
    } = build(sc, &p.table)?;
    if trace {
        sim.enable_trace();
    }
    let out = sim.run(&stop);
    let mut cols: Vec<(String, Metric)> = vec![("run".into(), Metric::U(p.index as u64))];
    for (k, v) in &p.assignment {
        cols.push((k.clone(), Metric::from_value(v)));
    }
    let mut m: Vec<(String, Metric)> = vec![
        ("seed".into(), Metric::U(sim.seed())),
        ("receivers".into(), Metric::U(receivers.len() as u64)),
        ("completed".into(), Metric::B(out.completed)),
        ("stop_reason".into(), Metric::S(out.reason.into())),
    ];
    let end = out.end.as_secs_f64();
    m.push(("end_time_s".into(), Metric::F(end)));
    m.push(("events".into(), Metric::U(sim.events_processed())));
    let sm = sim.metrics(source).cloned().unwrap_or_default();
    m.push(("messages_done".into(), Metric::U(sm.messages_done)));
    m.push(("messages_failed".into(), Metric::U(sm.messages_failed)));
    let done = sm.messages_done.max(1) as f64;
    m.push((
        "latency_mean_s".into(),
        Metric::F(if sm.messages_done == 0 {
            0.0
        } else {
            sm.latency_sum_ns as f64 / done / 1e9
        }),
    ));
    m.push((
        "latency_max_s".into(),
        Metric::F(sm.latency_max_ns as f64 / 1e9),
    ));
    m.push((
        "transmissions_per_message".into(),
        Metric::F(if sm.messages_done == 0 {
            0.0
        } else {
            sm.transmissions as f64 / done
        }),
    ));
    let dur = sm.completed_at.map_or(end, |t| t.as_secs_f64());
    m.push(("completion_time_s".into(), Metric::F(dur)));
    m.push((
        "throughput_msgs_per_s".into(),
        Metric::F(if dur > 0.0 {
            sm.messages_done as f64 / dur
        } else {
            0.0
        }),
    ));
    let delivered: Vec<u64> = receivers
        .iter()
        .map(|&r| sim.metrics(r).map_or(0, |x| x.delivered))
        .collect();
    m.push((
        "delivered_min".into(),
        Metric::U(delivered.iter().copied().min().unwrap_or(0)),
    ));
    m.push((
        "delivered_max".into(),
        Metric::U(delivered.iter().copied().max().unwrap_or(0)),
    ));
    m.push(("delivered_total".into(), Metric::U(delivered.iter().sum())));
    let sum_stat = |f: fn(&rmcast_proto::Stats) -> u64| -> u64 {
        receivers
            .iter()
            .filter_map(|&r| sim.agent(r).map(|a| f(a.stats())))
            .sum()
    };
    m.push((
        "receiver_duplicates".into(),
        Metric::U(sum_stat(|s| s.duplicates)),
    ));
    m.push((
        "receiver_control_sent".into(),
        Metric::U(sum_stat(|s| s.control_sent)),
    ));
    if let Some(a) = sim.agent(source) {
        let s = a.stats();
        m.push(("sender_timeouts".into(), Metric::U(s.timeouts)));
        m.push(("sender_packets_sent".into(), Metric::U(s.packets_sent)));
    }
    let k = sim.counters().clone();
    for (name, v) in [
        ("originated_data", k.originated_data),
        ("originated_repair", k.originated_repair),
        ("originated_control", k.originated_control),
        ("link_hops", k.link_hops),
        ("deliveries", k.deliveries),
        ("bus_frames", k.bus_frames),
        ("bus_collisions", k.bus_collisions),
        ("bus_collided_frames", k.bus_collided_frames),
        ("bus_deferrals", k.bus_deferrals),
        ("bus_backoffs", k.bus_backoffs),
        ("bus_receive_events", k.bus_receive_events),
        ("unreachable", k.unreachable),
        ("lost_total", k.lost),
    ] {
        m.push((name.into(), Metric::U(v)));
    }
    for (cause, v) in sim.losses() {
        m.push((format!("lost_{cause}"), Metric::U(v)));
    }
    if let Some(rec) = &record {
        m.retain(|(k, _)| k == "seed" || rec.iter().any(|r| r == k));
    }
    cols.extend(m);
    let trace = if trace {
        sim.trace().map(|(pk, ls)| Trace {
            packets: pk.to_vec(),
            losses: ls.to_vec(),
            nodes: sim.network().node_count(),
            groups: vec![(GroupId(1), receivers.clone())],
        })
    } else {
        None
    };
    let _ = NodeKind::Host;
    Ok(RunResult {
        index: p.index,
        columns: cols,
        trace,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(s, "t.toml", PathBuf::from("."))
    }

    const BASE: &str = r#"
seed = [1, 2]
[topology]
kind = "bus"
receivers = { from = 2, to = 6, step = 2 }
[protocol]
name = "saw"
timeout_ms = 20
[traffic]
messages = 10
size = 500
[[loss]]
model = "bernoulli"
p = [0.0, 0.05]
at = "interface"
"#;

    #[test]
    fn sweep_is_the_cross_product_in_a_fixed_order() {
        let sc = parse(BASE).unwrap();
        assert_eq!(sc.runs(), 2 * 3 * 2);
        let keys: Vec<&str> = sc.axes.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, vec!["loss.0.p", "seed", "topology.receivers"]);
        let p = sc.point(1);
        assert_eq!(p.assignment[2].1, Value::Integer(4));
        assert_eq!(p.table["topology"]["receivers"], Value::Integer(4));
        assert_eq!(p.table["loss"][0]["p"], Value::Float(0.0));
    }

    #[test]
    fn runs_are_deterministic_and_complete() {
        let sc = parse(BASE).unwrap();
        let a = to_csv(&run_sweep(&sc, RunOptions::default(), &|| {}).unwrap());
        let b = to_csv(&run_sweep(&sc, RunOptions::default(), &|| {}).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.lines().count(), 13);
        let header: Vec<&str> = a.lines().next().unwrap().split(',').collect();
        let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
        for line in a.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f[col("completed")], "true", "{line}");
            assert_eq!(f[col("delivered_min")], "10");
        }
    }

    #[test]
    fn float_ranges_print_as_written() {
        let sc = parse(&BASE.replace(
            "p = [0.0, 0.05]",
            "p = { from = 0.0, to = 0.3, step = 0.1 }",
        ))
        .unwrap();
        let a = &sc.axes[0];
        assert_eq!(
            a.values,
            vec![
                Value::Float(0.0),
                Value::Float(0.1),
                Value::Float(0.2),
                Value::Float(0.3)
            ]
        );
    }

    #[test]
    fn errors_name_file_key_and_expectation() {
        let cases = [
            (
                BASE.replace("kind = \"bus\"", "kind = \"ring\""),
                "topology.kind",
            ),
            (
                BASE.replace("timeout_ms = 20", "timeout_ms = \"x\""),
                "protocol.timeout_ms",
            ),
            (
                BASE.replace("timeout_ms = 20", "timeot_ms = 20"),
                "protocol.timeot_ms",
            ),
            (BASE.replace("p = [0.0, 0.05]", "p = 1.5"), "loss.0.p"),
            (
                BASE.replace("at = \"interface\"", "at = \"moon\""),
                "loss.0.at",
            ),
            (
                BASE.replace("name = \"saw\"", "name = \"nope\""),
                "protocol.name",
            ),
            (BASE.replace("size = 500", "size = -1"), "traffic.size"),
            (BASE.replace("seed = [1, 2]", "seed = []"), "seed"),
            (BASE.replace("step = 2", "step = 0"), "topology.receivers"),
        ];
        for (text, key) in cases {
            let e = parse(&text).unwrap_err();
            let s = e.to_string();
            assert!(s.starts_with("t.toml: key `"), "{s}");
            assert!(s.contains(&format!("`{key}`")), "{key}: {s}");
            assert!(s.contains("expected"), "{s}");
        }
        let e = parse("[topology\n").unwrap_err();
        assert!(matches!(e, ScenarioError::Syntax { .. }));
    }
}

//! `rmcast._native`: the Rust side of the `rmcast` Python package.
//!
//! A thin edge, like the `rmcast` binary: it converts Python values to the scenario tables,
//! study names and generator parameters the library crates take, calls their public API
//! (`rmcast_sim::scenario`, `rmcast_repro`, `rmcast_proto::spec`) with
//! the GIL released, and hands back plain Python values (lists, dicts, text) that the Python
//! package (`python/rmcast/`) turns into pandas DataFrames and networkx graphs.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyMapping, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use rmcast_proto::PROTOCOLS;
use rmcast_sim::scenario::{self, Metric, RunOptions, Scenario};
use rmcast_sim::topo::Topology;
use rmcast_sim::NodeKind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

pyo3::create_exception!(
    rmcast,
    ScenarioError,
    pyo3::exceptions::PyValueError,
    "A scenario `rmcast sim` would refuse; the message is the CLI's one-line error."
);
pyo3::create_exception!(
    rmcast,
    TopologyError,
    pyo3::exceptions::PyValueError,
    "Topology generator parameters out of range, or no connected graph."
);

/// Run `f` on a rayon pool of `threads` threads (rayon's global pool, sized by
/// RAYON_NUM_THREADS or the cores, when `None`).
fn on_pool<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> PyResult<R> {
    match threads {
        None => Ok(f()),
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| PyValueError::new_err(format!("cannot start threads: {e}")))?;
            Ok(pool.install(f))
        }
    }
}

/// What long work reports while it runs in Rust: units finished of a total, and whether
/// Python asked it to stop (Ctrl-C).
#[derive(Default)]
struct Watch {
    finished: AtomicU64,
    total: AtomicU64,
    stop: AtomicBool,
}

impl Watch {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl scenario::Progress for Watch {
    fn done(&self) {
        self.finished.fetch_add(1, Ordering::Relaxed);
    }
    fn stopped(&self) -> bool {
        Watch::stopped(self)
    }
}

impl rmcast_repro::Progress for Watch {
    fn add_total(&self, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
    }
    fn inc(&self, n: u64) {
        self.finished.fetch_add(n, Ordering::Relaxed);
    }
}

/// Run `work` on a thread of its own with the GIL released, while this thread, every
/// 100 ms, lets Python handle its signals and shows progress: on Ctrl-C (or an exception
/// from `progress`) `watch` is told to stop, the work ends at its next stopping point and
/// the exception is raised then; `progress(finished, total)` is called whenever the counts
/// moved (and once at the end).
fn supervised<R: Send>(
    py: Python<'_>,
    watch: &Watch,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    std::thread::scope(|scope| {
        let worker = scope.spawn(work);
        let mut shown = None;
        let mut raised: Option<PyErr> = None;
        loop {
            let ended = py.detach(|| {
                for _ in 0..20 {
                    if worker.is_finished() {
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                worker.is_finished()
            });
            if let Err(e) = py.check_signals() {
                watch.stop.store(true, Ordering::Relaxed);
                raised.get_or_insert(e);
            }
            if let (Some(cb), None) = (progress, raised.as_ref()) {
                let now = (
                    watch.finished.load(Ordering::Relaxed),
                    watch.total.load(Ordering::Relaxed),
                );
                if shown != Some(now) {
                    shown = Some(now);
                    if let Err(e) = cb.call1(now) {
                        watch.stop.store(true, Ordering::Relaxed);
                        raised = Some(e);
                    }
                }
            }
            if ended {
                break;
            }
        }
        let r = worker
            .join()
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the work panicked"))?;
        match raised {
            Some(e) => Err(e),
            None => Ok(r),
        }
    })
}

// ---------------------------------------------------------------------------------------
// protocols

/// Every protocol and its parameters as JSON text, the document `rmcast protocols --json`
/// prints (from the one spec table, `rmcast_proto::PROTOCOLS`).
#[pyfunction]
fn protocols_json() -> PyResult<String> {
    serde_json::to_string(PROTOCOLS)
        .map_err(|e| PyValueError::new_err(format!("cannot write the protocol table: {e}")))
}

// ---------------------------------------------------------------------------------------
// simulate

/// A Python value as a TOML value; `at` names the key for errors.
fn toml_value(v: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(toml::Value::Boolean(b.is_true()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(toml::Value::String(s.extract::<String>()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract::<f64>()?));
    }
    if let Ok(m) = v.cast::<PyMapping>() {
        return Ok(toml::Value::Table(toml_table(m, at)?));
    }
    if v.cast::<PyList>().is_ok() || v.cast::<PyTuple>().is_ok() || v.hasattr("__iter__")? {
        let mut out = Vec::new();
        for (i, item) in v.try_iter()?.enumerate() {
            out.push(toml_value(&item?, &format!("{at}[{i}]"))?);
        }
        return Ok(toml::Value::Array(out));
    }
    // Integers, and objects with __index__ (numpy integers), then anything with __float__.
    if let Ok(i) = v.extract::<i64>() {
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(toml::Value::Float(f));
    }
    Err(PyTypeError::new_err(format!(
        "scenario key `{at}`: cannot be written in TOML ({} value)",
        v.get_type().name()?
    )))
}

fn toml_table(m: &Bound<'_, PyMapping>, at: &str) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for item in m.items()?.iter() {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        let Ok(k) = k.extract::<String>() else {
            return Err(PyTypeError::new_err(format!(
                "scenario table `{}`: keys must be strings",
                if at.is_empty() { "(top)" } else { at }
            )));
        };
        let path = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        if v.is_none() {
            // None means "not given": the key keeps its default.
            continue;
        }
        t.insert(k, toml_value(&v, &path)?);
    }
    Ok(t)
}

/// The scenario `rmcast sim` would run: a TOML file, or a mapping with the same keys.
fn load_scenario(py: Python<'_>, scenario: &Bound<'_, PyAny>) -> PyResult<Scenario> {
    let loaded = if let Ok(m) = scenario.cast::<PyMapping>() {
        let table = toml_table(m, "")?;
        let text = toml::to_string(&table)
            .map_err(|e| PyValueError::new_err(format!("scenario: not writable as TOML: {e}")))?;
        let dir = std::env::current_dir().unwrap_or_default();
        py.detach(|| Scenario::parse(&text, "<dict>", dir))
    } else {
        let path: PathBuf = scenario.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "scenario: expected a dict or the path of a TOML file, got {}",
                scenario
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        py.detach(|| Scenario::load(&path))
    };
    loaded.map_err(|e| ScenarioError::new_err(e.to_string()))
}

fn metric(py: Python<'_>, m: &Metric) -> PyResult<Py<PyAny>> {
    match m {
        Metric::U(v) => v.into_py_any(py),
        // runs.csv leaves a non-finite number empty; so does the frame (NaN).
        Metric::F(v) if v.is_finite() => v.into_py_any(py),
        Metric::F(_) => Ok(py.None()),
        Metric::S(s) => s.into_py_any(py),
        Metric::B(b) => b.into_py_any(py),
    }
}

/// Run a scenario as `rmcast sim` does. Returns (columns in runs.csv's order, {column: values}
/// with None where a run lacks the column, packets.csv text or None, losses.csv text or None).
#[pyfunction]
#[pyo3(signature = (scenario, records=false, out=None, threads=None, progress=None))]
#[allow(clippy::type_complexity)]
fn simulate(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    records: bool,
    out: Option<PathBuf>,
    threads: Option<usize>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Vec<String>, Py<PyDict>, Option<String>, Option<String>)> {
    let sc = load_scenario(py, scenario)?;
    let opts = RunOptions {
        trace_all: records,
        trace_first: false,
    };
    let watch = Watch::default();
    watch.total.store(sc.runs() as u64, Ordering::Relaxed);
    let results = supervised(py, &watch, progress, || {
        on_pool(threads, || scenario::run_sweep(&sc, opts, &watch))
    })??
    .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let recs = records.then(|| scenario::records_csv(&results));
    if let Some(dir) = &out {
        rmcast_sim::shard::write_runs(dir, &results)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        if let Some(r) = &recs {
            for (name, text) in r.files() {
                std::fs::write(dir.join(name), text).map_err(|e| {
                    pyo3::exceptions::PyOSError::new_err(format!(
                        "{}: {e}",
                        dir.join(name).display()
                    ))
                })?;
            }
        }
    }
    let cols = scenario::columns(&results);
    let table = PyDict::new(py);
    for c in &cols {
        let values = PyList::empty(py);
        for r in &results {
            match r.columns.iter().find(|(k, _)| k == c) {
                Some((_, m)) => values.append(metric(py, m)?)?,
                None => values.append(py.None())?,
            }
        }
        table.set_item(c, values)?;
    }
    let (p, l) = match recs {
        Some(r) => (Some(r.packets), Some(r.losses)),
        None => (None, None),
    };
    Ok((cols, table.unbind(), p, l))
}

// ---------------------------------------------------------------------------------------
// repro

/// The registered studies: (name, title, source).
#[pyfunction]
fn studies() -> Vec<(String, String, String)> {
    rmcast_repro::STUDIES
        .iter()
        .map(|s| {
            let a = s.about();
            (a.name.into(), a.title.into(), a.source.into())
        })
        .collect()
}

/// Run studies as `rmcast repro` does and return `claims.json`'s text (one object per
/// claim, the columns of `claims.csv`); `out` also writes the whole report there.
#[pyfunction]
#[pyo3(signature = (studies, quick=true, jobs=None, claims=None, out=None, progress=None, runs_factor=1))]
#[allow(clippy::too_many_arguments)]
fn repro(
    py: Python<'_>,
    studies: Vec<String>,
    quick: bool,
    jobs: Option<usize>,
    claims: Option<PathBuf>,
    out: Option<PathBuf>,
    progress: Option<&Bound<'_, PyAny>>,
    runs_factor: u32,
) -> PyResult<String> {
    if runs_factor == 0 {
        return Err(PyValueError::new_err("runs_factor must be at least 1"));
    }
    let selected =
        rmcast_repro::select(&studies).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut texts = Vec::new();
    for s in &selected {
        let text = match &claims {
            Some(dir) if dir.join(s.name()).join("claims.toml").is_file() => {
                let path = dir.join(s.name()).join("claims.toml");
                std::fs::read_to_string(&path).map_err(|e| {
                    pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display()))
                })?
            }
            Some(dir) if !dir.is_dir() => {
                return Err(PyValueError::new_err(format!(
                    "claims {}: not a directory",
                    dir.display()
                )))
            }
            _ => s.about().claims_toml.to_string(),
        };
        texts.push(text);
    }
    let watch = Watch::default();
    // Ctrl-C takes effect between studies (a study's runs cannot be abandoned midway).
    let report = supervised(py, &watch, progress, || {
        rmcast_repro::with_jobs(jobs, || {
            let sweeps = rmcast_repro::Sweeps::from_quick(quick);
            let studies = selected
                .iter()
                .zip(&texts)
                .take_while(|_| !watch.stopped())
                .map(|(s, c)| {
                    rmcast_repro::run_study_with_claims(*s, c, sweeps, runs_factor, &watch)
                })
                .collect();
            rmcast_repro::Report {
                sweeps,
                runs_factor,
                studies,
                commit: None,
            }
        })
    })?
    .map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let Some(dir) = &out {
        report
            .write(dir)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
    }
    report
        .claims_json()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

// ---------------------------------------------------------------------------------------
// topology

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A topology as plain data: nodes (id, kind, x, y), links (a, b, attributes), buses
/// (members), the source, the receivers and the attach points.
fn topo_dict(py: Python<'_>, t: &Topology) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    let nodes = PyList::empty(py);
    for i in 0..t.net.node_count() {
        let n = rmcast_proto::NodeId(i as u32);
        let kind = match t.net.kind(n) {
            Some(NodeKind::Host) => "host",
            _ => "router",
        };
        let (x, y) = t.net.position(n).unwrap_or((0.0, 0.0));
        nodes.append((i, kind, x, y))?;
    }
    d.set_item("nodes", nodes)?;
    let loss: std::collections::HashMap<usize, f64> = t.link_loss.iter().copied().collect();
    let links = PyList::empty(py);
    for i in 0..t.net.link_count() {
        let Some((a, b, cfg)) = t.net.link(i) else {
            continue;
        };
        let attrs = PyDict::new(py);
        attrs.set_item("link", i)?;
        attrs.set_item("delay_s", secs(cfg.delay))?;
        attrs.set_item("bandwidth_bps", cfg.bandwidth_bps)?;
        attrs.set_item("class", &*cfg.class)?;
        if let Some(j) = cfg.jitter {
            attrs.set_item("jitter_mean_s", secs(j.mean))?;
            attrs.set_item("jitter_sd_s", secs(j.sd))?;
        }
        if let Some(q) = cfg.queue {
            attrs.set_item("queue", q)?;
        }
        if let Some(p) = loss.get(&i) {
            attrs.set_item("loss", *p)?;
        }
        links.append((a.0, b.0, attrs))?;
    }
    d.set_item("links", links)?;
    let buses = PyList::empty(py);
    for i in 0..t.net.bus_count() {
        let m: Vec<u32> = t
            .net
            .bus_members(i)
            .unwrap_or_default()
            .iter()
            .map(|n| n.0)
            .collect();
        buses.append(m)?;
    }
    d.set_item("buses", buses)?;
    d.set_item("source", t.source.0)?;
    d.set_item(
        "receivers",
        t.receivers.iter().map(|n| n.0).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "attach_points",
        t.attach_points.iter().map(|n| n.0).collect::<Vec<_>>(),
    )?;
    Ok(d.unbind())
}

/// The topology a scenario's `[topology]` table describes (`table`, as a Python mapping),
/// built by the simulator's own scenario code (`rmcast_sim::scenario::topology_from_table`):
/// the same keys, defaults, ranges and one-line errors as `rmcast sim`, generated with the GIL
/// released. A generated graph gets hosts only when `host_seed` is given (a scenario's run
/// `seed`); an `edge_list`'s `file` is read relative to `dir`.
#[pyfunction]
#[pyo3(signature = (table, host_seed=None, dir=None))]
fn topology(
    py: Python<'_>,
    table: &Bound<'_, PyMapping>,
    host_seed: Option<u64>,
    dir: Option<PathBuf>,
) -> PyResult<Py<PyDict>> {
    let table = toml_table(table, "topology")?;
    let hosts = host_seed.map_or(scenario::Hosts::RoutersOnly, scenario::Hosts::Attach);
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    let t = py
        .detach(|| scenario::topology_from_table(table, "rmcast.topology", &dir, hosts))
        .map_err(|e| TopologyError::new_err(e.to_string()))?;
    topo_dict(py, &t)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("TopologyError", py.get_type::<TopologyError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(protocols_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(studies, m)?)?;
    m.add_function(wrap_pyfunction!(repro, m)?)?;
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    Ok(())
}

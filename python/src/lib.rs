//! `rmcast._native`: the Rust side of the `rmcast` Python package.
//!
//! A thin edge, like the `rmcast` binary: it converts Python values to the scenario tables,
//! study names and generator parameters the library crates take, calls their public API
//! (`rmcast_sim::scenario`, `rmcast_repro`, `rmcast_sim::topo`, `rmcast_proto::spec`) with
//! the GIL released, and hands back plain Python values (lists, dicts, text) that the Python
//! package (`python/rmcast/`) turns into pandas DataFrames and networkx graphs.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyMapping, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use rmcast_proto::spec::{Param, Range, Value, PROTOCOLS};
use rmcast_sim::scenario::{self, Metric, RunOptions, Scenario};
use rmcast_sim::topo::{self, LinkClass, PlaneParams, Topology, TransitStub};
use rmcast_sim::{BusConfig, LinkConfig, NodeKind};
use std::path::PathBuf;
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

/// Run `f` with the GIL released, on a rayon pool of `threads` threads (rayon's global pool,
/// sized by RAYON_NUM_THREADS or the cores, when `None`).
fn parallel<R: Send>(
    py: Python<'_>,
    threads: Option<usize>,
    f: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    match threads {
        None => Ok(py.detach(f)),
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| PyValueError::new_err(format!("cannot start threads: {e}")))?;
            Ok(py.detach(|| pool.install(f)))
        }
    }
}

// ---------------------------------------------------------------------------------------
// protocols

fn value_json(v: &Value) -> serde_json::Value {
    match *v {
        Value::Int(x) => serde_json::json!(x),
        Value::Real(x) => serde_json::json!(x),
        Value::Bool(x) => serde_json::json!(x),
        Value::Word(w) => serde_json::json!(w),
        Value::Derived(why) => serde_json::json!({ "derived": why }),
    }
}

fn range_text(r: &Range) -> String {
    match r {
        Range::Int { min, max } => format!("{min}..={max}"),
        Range::Real { min, max } => format!("[{min}, {max}]"),
        Range::Bool => "true|false".into(),
        Range::Choice(c) => c.join("|"),
    }
}

fn param_json(q: &Param) -> serde_json::Value {
    serde_json::json!({
        "key": q.key,
        "scenario": q.scenario,
        "flag": q.flag.map(|f| format!("--{f}")),
        "unit": q.unit,
        "range": range_text(&q.range),
        "default": value_json(&q.default),
        "on_sockets": q.on_sockets.map(|(v, why)| serde_json::json!({"default": value_json(&v), "why": why})),
        "help": q.help,
    })
}

/// Every protocol and its parameters as JSON text, the document `rmcast protocols --json`
/// prints (from the one spec table, `rmcast_proto::spec::PROTOCOLS`).
#[pyfunction]
fn protocols_json() -> String {
    let items: Vec<serde_json::Value> = PROTOCOLS
        .iter()
        .map(|p| {
            serde_json::json!({
                "name": p.name,
                "seed": p.seed,
                "summary": p.summary,
                "sockets": p.sockets,
                "params": p.params.iter().map(param_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(items).to_string()
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
#[pyo3(signature = (scenario, records=false, out=None, threads=None))]
#[allow(clippy::type_complexity)]
fn simulate(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    records: bool,
    out: Option<PathBuf>,
    threads: Option<usize>,
) -> PyResult<(Vec<String>, Py<PyDict>, Option<String>, Option<String>)> {
    let sc = load_scenario(py, scenario)?;
    let opts = RunOptions {
        trace_all: records,
        trace_first: false,
    };
    let results = parallel(py, threads, || scenario::run_sweep(&sc, opts, &|| {}))?
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let recs = records.then(|| scenario::records_csv(&results));
    if let Some(dir) = &out {
        rmcast_sim::shard::write_runs(dir, &results)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        if let Some((p, l)) = &recs {
            for (name, text) in [("packets.csv", p), ("losses.csv", l)] {
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
        Some((p, l)) => (Some(p), Some(l)),
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
#[pyo3(signature = (studies, quick=true, jobs=None, claims=None, out=None))]
fn repro(
    py: Python<'_>,
    studies: Vec<String>,
    quick: bool,
    jobs: Option<usize>,
    claims: Option<PathBuf>,
    out: Option<PathBuf>,
) -> PyResult<String> {
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
    let report = py
        .detach(|| {
            rmcast_repro::with_jobs(jobs, || {
                let studies = selected
                    .iter()
                    .zip(&texts)
                    .map(|(s, c)| {
                        rmcast_repro::run_study_with_claims(*s, c, quick, &rmcast_repro::NoProgress)
                    })
                    .collect();
                rmcast_repro::Report { quick, studies }
            })
        })
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

fn ms(v: f64, what: &str) -> PyResult<Duration> {
    if v.is_finite() && v >= 0.0 {
        Ok(Duration::from_nanos((v * 1e6).round() as u64))
    } else {
        Err(TopologyError::new_err(format!(
            "{what} must be a non-negative number of ms, got {v}"
        )))
    }
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
        attrs.set_item("class", &cfg.class)?;
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

fn topo_result(py: Python<'_>, t: Result<Topology, topo::TopoError>) -> PyResult<Py<PyDict>> {
    let t = t.map_err(|e| TopologyError::new_err(e.to_string()))?;
    topo_dict(py, &t)
}

/// The keyword arguments every generated graph takes (the plane, and the hosts to attach),
/// read from `**kwargs`: each is taken out of a copy when read, and [`GraphOpts::build`]
/// refuses whatever is left, so a misspelt key is an error rather than a silent default.
struct GraphOpts<'py> {
    kw: Bound<'py, PyDict>,
    plane: PlaneParams,
    receivers: Option<usize>,
    placement: String,
    host_link: LinkConfig,
    host_seed: u64,
}

impl<'py> GraphOpts<'py> {
    fn new(py: Python<'py>, kw: Option<&Bound<'py, PyDict>>) -> PyResult<Self> {
        let kw = match kw {
            Some(k) => k.copy()?,
            None => PyDict::new(py),
        };
        let mut o = GraphOpts {
            kw,
            plane: PlaneParams::default(),
            receivers: None,
            placement: "distinct".into(),
            host_link: LinkConfig::new(10_000_000, Duration::from_millis(1)),
            host_seed: 1,
        };
        let d = PlaneParams::default();
        o.plane.scale = o.take::<f64>("scale")?.unwrap_or(d.scale);
        if !(o.plane.scale.is_finite() && o.plane.scale > 0.0) {
            return Err(TopologyError::new_err(format!(
                "scale must be > 0, got {}",
                o.plane.scale
            )));
        }
        if let Some(v) = o.take::<f64>("delay_per_unit_ms")? {
            o.plane.delay_per_unit = ms(v, "delay_per_unit_ms")?;
        }
        o.plane.bandwidth_bps = o.take("bandwidth_bps")?.unwrap_or(d.bandwidth_bps);
        o.plane.attempts = o.take("attempts")?.unwrap_or(d.attempts);
        o.receivers = o.take("receivers")?;
        if let Some(p) = o.take::<String>("placement")? {
            o.placement = p;
        }
        if let Some(b) = o.take("host_bandwidth_bps")? {
            o.host_link.bandwidth_bps = b;
        }
        if let Some(v) = o.take::<f64>("host_delay_ms")? {
            o.host_link.delay = ms(v, "host_delay_ms")?;
        }
        o.host_seed = o.take("host_seed")?.unwrap_or(1);
        Ok(o)
    }

    /// Take `key` out of the keyword arguments: its value if given (and not None).
    fn take<T: for<'a> FromPyObject<'a, 'py>>(&self, key: &str) -> PyResult<Option<T>> {
        let Some(v) = self.kw.get_item(key)? else {
            return Ok(None);
        };
        self.kw.del_item(key)?;
        if v.is_none() {
            return Ok(None);
        }
        v.extract::<T>()
            .map(Some)
            .map_err(|_| PyTypeError::new_err(format!("`{key}`: wrong type")))
    }

    /// Draw the graph with `generate` (GIL released), then attach a source and `receivers`
    /// hosts if asked (as a scenario's `topology.receivers` and `placement` do, with
    /// `host_seed` as the run seed).
    fn build(
        self,
        py: Python<'_>,
        generate: impl FnOnce(&PlaneParams) -> Result<Topology, topo::TopoError> + Send,
    ) -> PyResult<Py<PyDict>> {
        if let Some(k) = self.kw.keys().iter().next() {
            return Err(PyTypeError::new_err(format!(
                "unexpected keyword argument `{k}`"
            )));
        }
        let pl = &self.plane;
        let mut t = py
            .detach(|| generate(pl))
            .map_err(|e| TopologyError::new_err(e.to_string()))?;
        if let Some(r) = self.receivers {
            let (link, seed) = (&self.host_link, self.host_seed);
            match self.placement.as_str() {
                "distinct" => topo::attach_hosts(&mut t, r, link, seed),
                "with_replacement" => topo::attach_hosts_with_replacement(&mut t, r, link, seed),
                other => {
                    return Err(TopologyError::new_err(format!(
                        "placement must be \"distinct\" or \"with_replacement\", got {other:?}"
                    )))
                }
            }
            .map_err(|e| TopologyError::new_err(e.to_string()))?;
        }
        topo_dict(py, &t)
    }
}

/// Seed 000's shared Ethernet bus: the sender (node 0) and `receivers` hosts.
#[pyfunction]
#[pyo3(signature = (receivers, bandwidth_bps=None))]
fn bus(py: Python<'_>, receivers: usize, bandwidth_bps: Option<u64>) -> PyResult<Py<PyDict>> {
    let mut cfg = BusConfig::default();
    if let Some(b) = bandwidth_bps {
        cfg.bandwidth_bps = b;
    }
    topo_result(py, topo::bus(receivers, cfg))
}

/// Seed 004's star of `children` receivers on links of a connection class.
#[pyfunction]
#[pyo3(signature = (children, class_="lan", bandwidth_bps=10_000_000))]
fn star(py: Python<'_>, children: usize, class_: &str, bandwidth_bps: u64) -> PyResult<Py<PyDict>> {
    let class = LinkClass::parse(class_).ok_or_else(|| {
        TopologyError::new_err(format!(
            "class must be \"lan\", \"interlan\", \"wan\" or \"hybrid\", got {class_:?}"
        ))
    })?;
    topo_result(
        py,
        topo::star(
            children,
            class,
            &LinkConfig::new(bandwidth_bps, Duration::ZERO),
        ),
    )
}

/// Seed 001's local exchanges.
#[pyfunction]
#[pyo3(signature = (rtds_ms, per_exchange, bandwidth_bps=150_000_000, access_delay_ms=0.0))]
fn local_exchanges(
    py: Python<'_>,
    rtds_ms: Vec<f64>,
    per_exchange: Vec<usize>,
    bandwidth_bps: u64,
    access_delay_ms: f64,
) -> PyResult<Py<PyDict>> {
    let rtds = rtds_ms
        .iter()
        .map(|&v| ms(v, "rtds_ms"))
        .collect::<PyResult<Vec<_>>>()?;
    topo_result(
        py,
        topo::local_exchanges(
            &rtds,
            &per_exchange,
            bandwidth_bps,
            ms(access_delay_ms, "access_delay_ms")?,
        ),
    )
}

/// A complete binary tree of height `height`.
#[pyfunction]
#[pyo3(signature = (height, bandwidth_bps=1_500_000, delay_ms=10.0, source_link=false))]
fn binary_tree(
    py: Python<'_>,
    height: u32,
    bandwidth_bps: u64,
    delay_ms: f64,
    source_link: bool,
) -> PyResult<Py<PyDict>> {
    let link = LinkConfig::new(bandwidth_bps, ms(delay_ms, "delay_ms")?);
    topo_result(
        py,
        if source_link {
            topo::binary_tree_under_source(height, link)
        } else {
            topo::binary_tree(height, link)
        },
    )
}

/// GT-ITM flat random graph.
#[pyfunction]
#[pyo3(signature = (n, p, seed=1, **kw))]
fn flat_random(
    py: Python<'_>,
    n: usize,
    p: f64,
    seed: u64,
    kw: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    GraphOpts::new(py, kw)?.build(py, |pl| topo::flat_random(n, p, pl, seed))
}

/// Waxman graph.
#[pyfunction]
#[pyo3(signature = (n, alpha=0.4, beta=0.2, seed=1, **kw))]
fn waxman(
    py: Python<'_>,
    n: usize,
    alpha: f64,
    beta: f64,
    seed: u64,
    kw: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    GraphOpts::new(py, kw)?.build(py, |pl| topo::waxman(n, alpha, beta, pl, seed))
}

/// GT-ITM transit–stub graph (defaults: seed 003's 1 × 4 × (1 + 3 × 8) = 100 routers).
#[pyfunction]
#[pyo3(signature = (seed=1, **kw))]
fn transit_stub(py: Python<'_>, seed: u64, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Py<PyDict>> {
    let o = GraphOpts::new(py, kw)?;
    let d = TransitStub::default();
    let ts = TransitStub {
        transit_domains: o.take("transit_domains")?.unwrap_or(d.transit_domains),
        transit_nodes: o.take("transit_nodes")?.unwrap_or(d.transit_nodes),
        stubs_per_transit: o.take("stubs_per_transit")?.unwrap_or(d.stubs_per_transit),
        stub_nodes: o.take("stub_nodes")?.unwrap_or(d.stub_nodes),
        p_transit: o.take("p_transit")?.unwrap_or(d.p_transit),
        p_stub: o.take("p_stub")?.unwrap_or(d.p_stub),
    };
    o.build(py, |pl| topo::transit_stub(&ts, pl, seed))
}

/// An edge list (`a b [delay_ms [bandwidth_bps]]` per line), as a scenario's `edge_list`
/// file; links without a delay or bandwidth get `delay_ms` and `bandwidth_bps`.
#[pyfunction]
#[pyo3(signature = (text, delay_ms=1.0, bandwidth_bps=10_000_000))]
fn edge_list(
    py: Python<'_>,
    text: &str,
    delay_ms: f64,
    bandwidth_bps: u64,
) -> PyResult<Py<PyDict>> {
    let default = LinkConfig::new(bandwidth_bps, ms(delay_ms, "delay_ms")?);
    topo_result(py, topo::edge_list(text, &default))
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
    for f in [
        wrap_pyfunction!(bus, m)?,
        wrap_pyfunction!(star, m)?,
        wrap_pyfunction!(local_exchanges, m)?,
        wrap_pyfunction!(binary_tree, m)?,
        wrap_pyfunction!(flat_random, m)?,
        wrap_pyfunction!(waxman, m)?,
        wrap_pyfunction!(transit_stub, m)?,
        wrap_pyfunction!(edge_list, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}

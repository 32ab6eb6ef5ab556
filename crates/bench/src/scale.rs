//! `rmcast bench scale`: seed 003's single-loss experiment for SRM, PGM and LMS on
//! transit–stub graphs of growing size. Each (scheme, size) runs in a child process of the
//! `rmcast` binary ([`child_args`], answered by [`measure`] in the child) so that its peak
//! memory is its own (the child reports VmHWM from /proc/self/status).
//!
//! [`run`] plans nothing itself: it runs the (scheme, size) pairs of a [`ScaleBench`] in
//! order, skipping a scheme at the sizes above one where it timed out, and reports progress
//! through a callback; [`meta`], [`table`] and [`svg`] make the result's header, its table and
//! its plot. The command line keeps the arguments and where the output goes.

use rmcast_lab::proc::Proc;
use rmcast_repro::plot::PlotError;
use rmcast_sim::{bench, Scheme};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct ScaleBench {
    /// Schemes, in the order each size runs them.
    pub schemes: Vec<Scheme>,
    /// Group sizes, smallest first.
    pub sizes: Vec<usize>,
    /// Topology and placement seed.
    pub seed: u64,
    /// Give up on one (scheme, size) after this much wall time.
    pub timeout: Duration,
}

/// The sizes of a run: `sizes` sorted and without repeats, or (when it is empty) the powers of
/// ten from 10^3 up to `max_receivers`. `Err` names the flag at fault.
pub fn sizes(max_receivers: usize, sizes: &[usize]) -> Result<Vec<usize>, String> {
    if sizes.is_empty() {
        if max_receivers < 1000 {
            return Err("--max-receivers must be at least 1000".into());
        }
        let mut out = Vec::new();
        let mut n = 1000usize;
        while n <= max_receivers {
            out.push(n);
            n = n.saturating_mul(10);
        }
        return Ok(out);
    }
    if let Some(bad) = sizes.iter().find(|&&n| n == 0) {
        return Err(format!(
            "--sizes: a group size must be at least 1 (got {bad})"
        ));
    }
    let mut out = sizes.to_vec();
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// What [`run`] tells its caller as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Run `index` (from 0) of `total` starts: `scheme` with `receivers`.
    Start {
        /// Its place in the run, from 0.
        index: usize,
        /// How many runs there are.
        total: usize,
        /// The scheme.
        scheme: Scheme,
        /// The group size.
        receivers: usize,
    },
    /// A run ended: its row (`skipped`: not run, its scheme timed out at a smaller size).
    Done {
        /// The run's row.
        row: &'a Value,
        /// Not run: its scheme timed out at a smaller size.
        skipped: bool,
    },
}

/// The arguments that make the `rmcast` binary run one (scheme, receivers) in its process and
/// print its JSON row ([`measure`]).
pub fn child_args(scheme: Scheme, receivers: usize, seed: u64) -> Vec<String> {
    vec![
        "bench".into(),
        "scale".into(),
        "--seed".into(),
        seed.to_string(),
        "--child".into(),
        format!("{}:{receivers}", scheme.name()),
    ]
}

/// In the child: run `spec` (`SCHEME:RECEIVERS`) in this process and return its row.
pub fn measure(spec: &str, seed: u64) -> Result<Value, String> {
    let (s, n) = spec
        .split_once(':')
        .ok_or_else(|| "--child expects SCHEME:RECEIVERS".to_string())?;
    let scheme = Scheme::parse(s).ok_or_else(|| format!("unknown scheme {s:?}"))?;
    let n: usize = n.parse().map_err(|e| format!("{e}"))?;
    let rss_before = bench::peak_rss_bytes();
    let f = bench::scale_run(scheme, n, seed)?;
    let wall = f.build_seconds + f.run_seconds;
    Ok(json!({
        "scheme": scheme.name(),
        "receivers": f.receivers,
        "routers": f.routers,
        "nodes": f.nodes,
        "links": f.links,
        "packets": f.packets,
        "build_seconds": f.build_seconds,
        "run_seconds": f.run_seconds,
        "run_cpu_seconds": f.run_cpu_seconds,
        "wall_seconds": wall,
        "events": f.events,
        "events_per_second": f.events as f64 / f.run_seconds.max(1e-9),
        "link_hops": f.link_hops,
        "deliveries": f.deliveries,
        "receivers_complete": f.receivers_complete,
        "requests": f.requests,
        "repairs": f.repairs,
        "drops": f.drops,
        "sim_end_seconds": f.sim_end_seconds,
        "completed": f.completed,
        "peak_rss_bytes": bench::peak_rss_bytes(),
        "rss_network_bytes": f.rss_network_bytes,
        "rss_agents_bytes": f.rss_agents_bytes,
        "rss_at_start_bytes": rss_before,
    }))
}

/// One (scheme, size) in a child process of `exe`: its row with `process_seconds`, or a row
/// with an `error`.
fn run_child(exe: &Path, scheme: Scheme, n: usize, seed: u64, timeout: Duration) -> Value {
    let started = Instant::now();
    let mut c = match Proc::spawn(
        Command::new(exe)
            .args(child_args(scheme, n, seed))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    ) {
        Ok(c) => c,
        Err(e) => return json!({"error": format!("cannot start child: {e}")}),
    };
    let (status, out, err) = match c.finish(started + timeout) {
        Some(o) => (
            Ok(o.status),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        None => (
            Err(format!("timed out after {} s", timeout.as_secs())),
            String::new(),
            String::new(),
        ),
    };
    let process_seconds = started.elapsed().as_secs_f64();
    match status {
        Ok(s) if s.success() => match serde_json::from_str::<Value>(out.trim()) {
            Ok(mut v) => {
                v["process_seconds"] = process_seconds.into();
                v
            }
            Err(e) => json!({"scheme": scheme.name(), "receivers": n,
                "error": format!("unreadable child output: {e}")}),
        },
        Ok(s) => json!({"scheme": scheme.name(), "receivers": n,
            "error": format!("child exited with {s}: {}", err.trim())}),
        Err(e) => json!({"scheme": scheme.name(), "receivers": n, "error": e}),
    }
}

/// Run every (scheme, size) of `b`, sizes in order and each size's schemes in order, each in
/// a child process of `exe` (the `rmcast` binary). A scheme that timed out at one size is
/// skipped at the larger ones (its row says so). Returns the rows and whether any run failed,
/// timed out, was skipped or left a receiver incomplete.
pub fn run(
    b: &ScaleBench,
    exe: Result<&Path, &str>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> (Vec<Value>, bool) {
    let jobs: Vec<(Scheme, usize)> = b
        .sizes
        .iter()
        .flat_map(|&n| b.schemes.iter().map(move |&s| (s, n)))
        .collect();
    let total = jobs.len();
    let mut rows = Vec::new();
    let mut failed = false;
    let mut gave_up: Vec<(Scheme, usize)> = Vec::new();
    for (index, (s, n)) in jobs.into_iter().enumerate() {
        progress(Progress::Start {
            index,
            total,
            scheme: s,
            receivers: n,
        });
        let skipped = gave_up.iter().find(|(g, _)| *g == s).map(|&(_, at)| at);
        let v = if let Some(at) = skipped {
            failed = true;
            json!({
                "scheme": s.name(),
                "receivers": n,
                "error": format!("skipped: timed out at {at} receivers"),
            })
        } else {
            let v = match &exe {
                Ok(exe) => run_child(exe, s, n, b.seed, b.timeout),
                Err(e) => json!({"error": format!("cannot find own binary: {e}")}),
            };
            if v.get("error")
                .and_then(|e| e.as_str())
                .is_some_and(|e| e.starts_with("timed out"))
            {
                gave_up.push((s, n));
            }
            failed |= v.get("error").is_some()
                || v["completed"].as_bool() != Some(true)
                || v["receivers_complete"] != v["receivers"];
            v
        };
        progress(Progress::Done {
            row: &v,
            skipped: skipped.is_some(),
        });
        rows.push(v);
    }
    (rows, failed)
}

/// The result's header: the benchmark, the seed, this machine's CPUs and its load average at
/// the start (`load_at_start`, as read before [`run`]) and now.
pub fn meta(seed: u64, load_at_start: Option<String>) -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.trim().to_string())
    });
    json!({
        "benchmark": "rmcast bench scale",
        "seed": seed,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "cpu_model": cpu,
        "load_average_at_start": load_at_start,
        "load_average": load_average(),
    })
}

/// This machine's load average, as /proc/loadavg gives it.
pub fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.trim().to_string())
}

/// One run's outcome in a line: its time, peak memory and completion, or its error.
pub fn outcome(v: &Value) -> String {
    let scheme = v["scheme"].as_str().unwrap_or("?");
    let n = v["receivers"].as_u64().unwrap_or(0);
    if let Some(e) = v["error"].as_str() {
        return format!("{scheme} with {n} receivers: {e}");
    }
    let mib = v["peak_rss_bytes"].as_u64().unwrap_or(0) as f64 / f64::from(1 << 20);
    format!(
        "{scheme} with {n} receivers: {:.1} s, peak {mib:.0} MiB, {} of {n} complete",
        v["wall_seconds"].as_f64().unwrap_or(f64::NAN),
        v["receivers_complete"].as_u64().unwrap_or(0),
    )
}

/// The rows as a table, one line per run (an error on its run's line).
pub fn table(rows: &[Value]) -> String {
    let mut t = format!(
        "{:<12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12} {:>11} {:>10} {:>9} {:>8} {:>9}\n",
        "scheme",
        "receivers",
        "nodes",
        "build_s",
        "wall_s",
        "run_cpu_s",
        "events",
        "events/s",
        "peak_MiB",
        "complete",
        "requests",
        "repairs"
    );
    for v in rows {
        if let Some(e) = v.get("error") {
            let _ = writeln!(
                t,
                "{:<12} {:>9} error: {}",
                v["scheme"].as_str().unwrap_or("?"),
                v["receivers"],
                e.as_str().unwrap_or("?")
            );
            continue;
        }
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let u = |k: &str| v[k].as_u64().map_or("?".to_string(), |x| x.to_string());
        let _ = writeln!(
            t,
            "{:<12} {:>9} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>12} {:>11.0} {:>10.0} {:>9} {:>8} {:>9}",
            v["scheme"].as_str().unwrap_or("?"),
            u("receivers"),
            u("nodes"),
            f("build_seconds"),
            f("wall_seconds"),
            f("run_cpu_seconds"),
            u("events"),
            f("events_per_second"),
            f("peak_rss_bytes") / 1048576.0,
            u("receivers_complete"),
            u("requests"),
            u("repairs")
        );
    }
    t
}

/// Two log-log panels (wall time, peak memory) against receivers, one line per scheme, drawn
/// by the report's plot module (log10 of both coordinates on linear axes).
pub fn svg(rows: &[Value]) -> Result<String, PlotError> {
    use rmcast_repro::plot::{panels_svg, Axis, Plot, PlotSeries};
    use rmcast_repro::Estimate;
    let schemes = ["srm", "pgm", "lms"];
    let panels = [
        ("wall", "wall time (build + run)", "s", "wall_seconds", 1.0),
        (
            "memory",
            "peak memory (VmHWM)",
            "MiB",
            "peak_rss_bytes",
            1.0 / 1048576.0,
        ),
    ];
    let plots: Vec<Plot> = panels
        .iter()
        .map(|(id, title, unit, key, scale)| Plot {
            id: format!("scale-{id}"),
            title: format!("{title} ({unit})"),
            caption: format!("{title} against receivers, one run per point, log-log"),
            x: Axis::new("receivers, log10", "log10 count"),
            y: Axis::new(format!("{title}, log10"), format!("log10 {unit}")),
            series: schemes
                .iter()
                .enumerate()
                .map(|(si, name)| {
                    let mut pts: Vec<(f64, Estimate)> = rows
                        .iter()
                        .filter(|r| r.get("error").is_none() && r["scheme"].as_str() == Some(name))
                        .filter_map(|r| {
                            let x = r["receivers"].as_f64()?;
                            let y = r[*key].as_f64()? * scale;
                            (x > 0.0 && y > 0.0).then(|| (x.log10(), Estimate::exact(y.log10())))
                        })
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    PlotSeries::measured(*name, si, &pts)
                })
                .filter(|s| !s.points.is_empty())
                .collect(),
        })
        .collect();
    panels_svg(&plots)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_told_in_one_line() {
        let ok = json!({"scheme": "pgm", "receivers": 1000, "wall_seconds": 0.25,
            "peak_rss_bytes": 24u64 << 20, "receivers_complete": 1000});
        assert_eq!(
            outcome(&ok),
            "pgm with 1000 receivers: 0.2 s, peak 24 MiB, 1000 of 1000 complete"
        );
        let bad = json!({"scheme": "lms", "receivers": 2000,
            "error": "skipped: timed out at 1000 receivers"});
        assert_eq!(
            outcome(&bad),
            "lms with 2000 receivers: skipped: timed out at 1000 receivers"
        );
    }

    #[test]
    fn sizes_are_powers_of_ten_or_the_given_ones_sorted() {
        assert_eq!(
            sizes(1_000_000, &[]).unwrap(),
            [1000, 10_000, 100_000, 1_000_000]
        );
        assert_eq!(sizes(99_999, &[]).unwrap(), [1000, 10_000]);
        assert!(sizes(999, &[]).is_err());
        assert_eq!(sizes(999, &[30, 10, 30]).unwrap(), [10, 30]);
        assert!(sizes(1000, &[5, 0]).unwrap_err().contains("got 0"));
    }

    #[test]
    fn a_scheme_that_timed_out_is_skipped_at_larger_sizes() {
        // A "binary" that outlives its deadline whatever it is asked.
        let exe = std::env::temp_dir().join(format!("rmcast-scale-{}.sh", std::process::id()));
        std::fs::write(&exe, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let b = ScaleBench {
            schemes: vec![Scheme::parse("srm").unwrap()],
            sizes: vec![1000, 10_000],
            seed: 1,
            timeout: Duration::from_millis(200),
        };
        let mut seen = Vec::new();
        let (rows, failed) = run(&b, Ok(exe.as_path()), &mut |p| {
            if let Progress::Done { row, skipped } = p {
                seen.push((outcome(row), skipped));
            }
        });
        let _ = std::fs::remove_file(&exe);
        assert!(failed);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["error"].as_str().unwrap(), "timed out after 0 s");
        assert_eq!(
            seen,
            [
                (
                    "srm with 1000 receivers: timed out after 0 s".to_string(),
                    false
                ),
                (
                    "srm with 10000 receivers: skipped: timed out at 1000 receivers".to_string(),
                    true
                )
            ]
        );
    }

    #[test]
    fn the_table_has_a_line_per_run() {
        let rows = [
            json!({"scheme": "srm", "receivers": 1000, "nodes": 1200, "events": 5}),
            json!({"scheme": "lms", "receivers": 1000, "error": "boom"}),
        ];
        let t = table(&rows);
        assert_eq!(t.lines().count(), 3);
        assert!(t.lines().nth(2).unwrap().ends_with("error: boom"));
    }
}

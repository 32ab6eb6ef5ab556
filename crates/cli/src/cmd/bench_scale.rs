//! `rmcast bench scale`: seed 003's single-loss experiment for SRM, PGM and LMS on
//! transit–stub graphs of growing size. Each (scheme, size) runs in a child process so that
//! its peak memory is its own (the child reports VmHWM from /proc/self/status).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_lab::proc::Proc;
use rmcast_sim::{bench, Scheme};
use std::io::IsTerminal as _;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast bench scale                          10^3 .. 10^6 receivers, SRM, PGM and LMS (a table)
  rmcast bench scale --max-receivers 100000   stop at 10^5
  rmcast bench scale --schemes srm --sizes 10000,30000   chosen sizes
  rmcast bench scale --schemes srm,srm-adaptive --sizes 1e5,1e6   SRM at 10^5 and 10^6
  rmcast bench scale --schemes pgm,lms --json > scale.json
  rmcast bench scale --from-json scale.json --svg scale.svg   re-plot without re-running
  rmcast bench scale --schemes pgm,lms --sizes 1e7 --timeout-s 1500 --json > s.json
                      ten million receivers (about 7 minutes and 12-14 GiB each)

Each run: a transit-stub graph with about one stub router per ten receivers (1.5 Mb/s links,
GT-ITM-style delays), five 1,000-byte packets at 10 packets/s, the second one lost at the
source, run until the source completes (5 s linger). Every (scheme, size) runs in its own
child process; peak memory is that process's VmHWM (peak resident set) from the OS. Wall time
is build (graph, routes, agents) plus run. A scheme that times out at one size is skipped at
the larger ones. Progress on stderr: a bar on a terminal; in a file or a pipe, a line as
each run starts and ends. Exit status 1 if a run failed, timed out or was skipped.")]
pub struct Args {
    /// Largest group size; sizes are the powers of ten from 10^3 up to this (1000000 or 1e6)
    #[arg(long, default_value = "1e6", value_parser = group_size)]
    max_receivers: usize,
    /// Group sizes to run instead of the powers of ten, comma separated (e.g. 1000,3e4,1e6)
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = group_size)]
    sizes: Vec<usize>,
    /// Schemes, comma separated (srm, pgm, lms; also srm-adaptive, lms-adaptive)
    #[arg(long, default_value = "srm,pgm,lms", value_delimiter = ',')]
    schemes: Vec<String>,
    /// Topology and placement seed
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up on one (scheme, size) after this many seconds of wall time
    #[arg(long, default_value_t = 600)]
    timeout_s: u64,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Also write a log-log SVG plot of wall time and peak memory against receivers
    #[arg(long, value_name = "FILE")]
    svg: Option<std::path::PathBuf>,
    /// Do not run anything: read the JSON of an earlier `--json` run (e.g. to plot it)
    #[arg(long, value_name = "FILE")]
    from_json: Option<std::path::PathBuf>,
    /// Internal: run one (scheme, receivers) in this process and print its JSON
    #[arg(long, hide = true, value_name = "SCHEME:RECEIVERS")]
    child: Option<String>,
}

/// A group size: digits (`30000`), or digits, `e` and a power of ten (`3e4`, `1e6`).
fn group_size(s: &str) -> Result<usize, String> {
    let bad = || format!("{s:?} is not a group size (e.g. 30000, 3e4, 1e7)");
    let (m, e) = s.split_once(['e', 'E']).unwrap_or((s, "0"));
    let m: usize = m.parse().map_err(|_| bad())?;
    let e: u32 = e.parse().map_err(|_| bad())?;
    10usize
        .checked_pow(e)
        .and_then(|p| m.checked_mul(p))
        .filter(|&n| n > 0)
        .ok_or_else(bad)
}

fn vm_hwm_bytes() -> Option<u64> {
    bench::peak_rss_bytes()
}

fn child(spec: &str, seed: u64) -> anyhow::Result<ExitCode> {
    let (s, n) = spec
        .split_once(':')
        .ok_or_else(|| anyhow::anyhow!("--child expects SCHEME:RECEIVERS"))?;
    let scheme = Scheme::parse(s).ok_or_else(|| anyhow::anyhow!("unknown scheme {s:?}"))?;
    let n: usize = n.parse()?;
    let rss_before = vm_hwm_bytes();
    let f = bench::scale_run(scheme, n, seed).map_err(|e| anyhow::anyhow!(e))?;
    let wall = f.build_seconds + f.run_seconds;
    let out = serde_json::json!({
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
        "peak_rss_bytes": vm_hwm_bytes(),
        "rss_network_bytes": f.rss_network_bytes,
        "rss_agents_bytes": f.rss_agents_bytes,
        "rss_at_start_bytes": rss_before,
    });
    println!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn run_child(scheme: Scheme, n: usize, seed: u64, timeout: Duration) -> serde_json::Value {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return serde_json::json!({"error": format!("cannot find own binary: {e}")}),
    };
    let started = Instant::now();
    let mut c = match Proc::spawn(
        Command::new(exe)
            .args(["bench", "scale", "--seed", &seed.to_string(), "--child"])
            .arg(format!("{}:{n}", scheme.name()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    ) {
        Ok(c) => c,
        Err(e) => return serde_json::json!({"error": format!("cannot start child: {e}")}),
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
        Ok(s) if s.success() => match serde_json::from_str::<serde_json::Value>(out.trim()) {
            Ok(mut v) => {
                v["process_seconds"] = process_seconds.into();
                v
            }
            Err(e) => serde_json::json!({"scheme": scheme.name(), "receivers": n,
                "error": format!("unreadable child output: {e}")}),
        },
        Ok(s) => serde_json::json!({"scheme": scheme.name(), "receivers": n,
            "error": format!("child exited with {s}: {}", err.trim())}),
        Err(e) => serde_json::json!({"scheme": scheme.name(), "receivers": n, "error": e}),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.child {
        return child(spec, args.seed);
    }
    if let Some(path) = &args.from_json {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return Ok(ExitCode::from(2));
            }
        };
        let v: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "error: {}: not JSON from `rmcast bench scale --json`: {e}",
                    path.display()
                );
                return Ok(ExitCode::from(2));
            }
        };
        let Some(rows) = v["runs"].as_array() else {
            eprintln!("error: {}: no `runs` list", path.display());
            return Ok(ExitCode::from(2));
        };
        return output(&args, rows.clone(), v, false);
    }
    let mut schemes = Vec::new();
    for s in &args.schemes {
        match Scheme::parse(s.trim()) {
            Some(x) => schemes.push(x),
            None => {
                eprintln!(
                    "error: --schemes: unknown scheme {s:?} ({})",
                    Scheme::ALL.map(Scheme::name).join(", ")
                );
                return Ok(ExitCode::from(2));
            }
        }
    }
    if args.max_receivers < 1000 {
        eprintln!("error: --max-receivers must be at least 1000");
        return Ok(ExitCode::from(2));
    }
    let mut sizes = Vec::new();
    if args.sizes.is_empty() {
        let mut n = 1000usize;
        while n <= args.max_receivers {
            sizes.push(n);
            n = n.saturating_mul(10);
        }
    } else {
        if let Some(bad) = args.sizes.iter().find(|&&n| n == 0) {
            anyhow::bail!("--sizes: a group size must be at least 1 (got {bad})");
        }
        sizes = args.sizes.clone();
        sizes.sort_unstable();
        sizes.dedup();
    }
    let load_at_start = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.trim().to_string());
    let jobs: Vec<(Scheme, usize)> = sizes
        .iter()
        .flat_map(|&n| schemes.iter().map(move |&s| (s, n)))
        .collect();
    // A bar on a terminal; in a file or a pipe, where a bar draws nothing, a line as each
    // run starts and ends (a run of 10^7 receivers takes minutes).
    let terminal = std::io::stderr().is_terminal();
    let total = jobs.len();
    let bar = if terminal {
        ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    let mut failed = false;
    // A scheme that timed out at one size is not run at larger ones.
    let mut gave_up: Vec<(Scheme, usize)> = Vec::new();
    for (i, (s, n)) in jobs.into_iter().enumerate() {
        bar.set_message(format!("{} {n}", s.name()));
        if !terminal {
            eprintln!(
                "bench scale: {} with {n} receivers ({} of {total}) ...",
                s.name(),
                i + 1
            );
        }
        if let Some(&(_, at)) = gave_up.iter().find(|(g, _)| *g == s) {
            rows.push(serde_json::json!({
                "scheme": s.name(),
                "receivers": n,
                "error": format!("skipped: timed out at {at} receivers"),
            }));
            failed = true;
            bar.inc(1);
            continue;
        }
        let v = run_child(s, n, args.seed, Duration::from_secs(args.timeout_s));
        if v.get("error")
            .and_then(|e| e.as_str())
            .is_some_and(|e| e.starts_with("timed out"))
        {
            gave_up.push((s, n));
        }
        failed |= v.get("error").is_some()
            || v["completed"].as_bool() != Some(true)
            || v["receivers_complete"] != v["receivers"];
        let line = format!("bench scale: {}", outcome(&v));
        if terminal {
            bar.println(line);
        } else {
            eprintln!("{line}");
        }
        rows.push(v);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.trim().to_string())
    });
    let meta = crate::commit::stamp(serde_json::json!({
        "benchmark": "rmcast bench scale",
        "seed": args.seed,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "cpu_model": cpu,
        "load_average_at_start": load_at_start,
        "load_average": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.trim().to_string()),
    }));
    output(&args, rows, meta, failed)
}

/// One run's outcome in a line: its time, peak memory and completion, or its error.
fn outcome(v: &serde_json::Value) -> String {
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

fn output(
    args: &Args,
    rows: Vec<serde_json::Value>,
    meta: serde_json::Value,
    failed: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.svg {
        match svg(&rows) {
            Ok(text) => std::fs::write(path, text)?,
            // e.g. every run failed: the table below says why; there is nothing to draw.
            Err(e) => eprintln!("no SVG written to {}: {e}", path.display()),
        }
    }
    if args.json {
        let mut out = meta;
        out["runs"] = serde_json::Value::Array(rows);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{:<12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12} {:>11} {:>10} {:>9} {:>8} {:>9}",
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
        for v in &rows {
            if let Some(e) = v.get("error") {
                println!(
                    "{:<12} {:>9} error: {}",
                    v["scheme"].as_str().unwrap_or("?"),
                    v["receivers"],
                    e.as_str().unwrap_or("?")
                );
                continue;
            }
            let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
            let u = |k: &str| v[k].as_u64().map_or("?".to_string(), |x| x.to_string());
            println!(
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
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Two log-log panels (wall time, peak memory) against receivers, one line per scheme, drawn
/// by the report's plot module (log10 of both coordinates on linear axes).
fn svg(rows: &[serde_json::Value]) -> anyhow::Result<String> {
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
    Ok(panels_svg(&plots)?)
}

#[cfg(test)]
mod tests {
    use super::{group_size, outcome};

    #[test]
    fn a_run_is_told_in_one_line() {
        let ok = serde_json::json!({"scheme": "pgm", "receivers": 1000, "wall_seconds": 0.25,
            "peak_rss_bytes": 24u64 << 20, "receivers_complete": 1000});
        assert_eq!(
            outcome(&ok),
            "pgm with 1000 receivers: 0.2 s, peak 24 MiB, 1000 of 1000 complete"
        );
        let bad = serde_json::json!({"scheme": "lms", "receivers": 2000,
            "error": "skipped: timed out at 1000 receivers"});
        assert_eq!(
            outcome(&bad),
            "lms with 2000 receivers: skipped: timed out at 1000 receivers"
        );
    }

    #[test]
    fn group_sizes_are_digits_or_powers_of_ten() {
        assert_eq!(group_size("30000"), Ok(30_000));
        assert_eq!(group_size("1e6"), Ok(1_000_000));
        assert_eq!(group_size("3E4"), Ok(30_000));
        assert_eq!(group_size("1e7"), Ok(10_000_000));
        for bad in ["", "0", "0e3", "1e", "e5", "1.5e6", "-1", "1e400", "ten"] {
            assert!(group_size(bad).is_err(), "{bad:?}");
        }
    }
}

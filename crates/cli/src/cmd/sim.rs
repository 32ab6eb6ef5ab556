//! `rmcast sim`: run a scenario file (or sweep) in the simulator.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_sim::scenario::{self, RunOptions, Scenario};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast sim scenarios/examples/bus-saw.toml --out out/bus
  rmcast sim scenarios/examples/binary-tree-drop-nth.toml --out out/tree --pcap out/tree.pcap
  RAYON_NUM_THREADS=1 rmcast sim scenarios/examples/star-hybrid.toml --out out/star --quiet

Writes DIR/runs.csv and DIR/runs.jsonl (one row per run: swept parameters, seed, metrics);
a scenario with `[metrics] sample_ms` also gets DIR/series.csv (each run sampled at that
interval: the source's rate gauge, bytes sent and received, queue drops, a `[cross]` flow's
bytes) and DIR/series.svg (the rates through the network over time).
`completed` is true only when the sender finished and every receiver holds every message. A
receiver the topology leaves without a path from the source is an error naming the node and
the run (exit status 2), found before any run is simulated.
Any scalar in the scenario may be a list or a range { from, to, step }: the cross product is
a sweep, run in parallel (RAYON_NUM_THREADS) with identical results whatever the threads.

Across machines: `--shard K/N` runs only runs i with i mod N = K (0 <= K < N) and writes a
shard directory (runs.part.jsonl, shard.json); `rmcast merge` joins the N shard directories
into runs.csv and runs.jsonl, byte-identical to an unsharded run. `--shard auto/N` takes K
from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array);
see docs/cluster.md.
  rmcast sim sweep.toml --shard 0/2 --out shards/0
  rmcast sim sweep.toml --shard 1/2 --out shards/1
  rmcast merge shards/0 shards/1 --out out/sweep")]
pub struct Args {
    /// Scenario file (TOML)
    scenario: PathBuf,
    /// Output directory (created if missing)
    #[arg(long)]
    out: PathBuf,
    /// Also write a pcap of the first run's traffic (synthesized Ethernet/IPv4/UDP headers)
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Also write per-packet, per-loss and per-recovery records (DIR/packets.csv, DIR/losses.csv,
    /// DIR/recoveries.csv)
    #[arg(long)]
    records: bool,
    /// No progress bar and no summary
    #[arg(long, short)]
    quiet: bool,
    /// Run only shard K of N (0-based; `auto/N` reads K from JOB_COMPLETION_INDEX or
    /// SLURM_ARRAY_TASK_ID) and write a shard directory for `rmcast merge`
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let sc = match Scenario::load(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let shard = match args.shard.as_deref() {
        None => None,
        Some(s) => match rmcast_sim::shard::ShardSpec::parse(s, |k| std::env::var(k).ok()) {
            Ok(spec) => Some(spec),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        },
    };
    if shard.is_some() && (args.pcap.is_some() || args.records) {
        eprintln!("error: --shard cannot be combined with --pcap or --records");
        return Ok(ExitCode::from(2));
    }
    let sampled = sc
        .doc
        .get("metrics")
        .and_then(|m| m.get("sample_ms"))
        .is_some();
    if shard.is_some() && sampled {
        eprintln!("error: --shard cannot be combined with [metrics] sample_ms (series.csv)");
        return Ok(ExitCode::from(2));
    }
    let indices: Vec<usize> = match shard {
        Some(spec) => spec.indices(sc.runs()),
        None => (0..sc.runs()).collect(),
    };
    let n = indices.len();
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let shown = std::sync::atomic::AtomicBool::new(false);
    let progress = || {
        bar.inc(1);
        // Only sweeps that take longer than a second get a visible bar.
        if !args.quiet
            && started.elapsed().as_secs_f64() > 1.0
            && !shown.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    };
    let opts = RunOptions {
        trace_all: args.records,
        trace_first: args.pcap.is_some(),
    };
    let results = match scenario::run_indices(&sc, &indices, opts, &progress) {
        Ok(r) => r,
        Err(e) => {
            bar.finish_and_clear();
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    bar.finish_and_clear();
    if let Some(spec) = shard {
        rmcast_sim::shard::write_shard(&args.out, &sc, spec, &results)?;
        if !args.quiet {
            println!(
                "shard {}/{}: {n} of {} runs in {:.2}s -> {}",
                spec.index,
                spec.count,
                sc.runs(),
                started.elapsed().as_secs_f64(),
                args.out.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    // runs.jsonl, then runs.csv, each through a temporary file and a rename.
    rmcast_sim::shard::write_runs(&args.out, &results)?;
    let csv = args.out.join("runs.csv");
    let jsonl = args.out.join("runs.jsonl");
    if args.records {
        for (name, text) in scenario::records_csv(&results).files() {
            std::fs::write(args.out.join(name), text)?;
        }
    }
    if results.iter().any(|r| !r.samples.is_empty()) {
        std::fs::write(args.out.join("series.csv"), scenario::series_csv(&results))?;
        if let Some(svg) = series_svg(&sc, &results)? {
            std::fs::write(args.out.join("series.svg"), svg)?;
        }
    }
    if let Some(path) = &args.pcap {
        let packets = results
            .first()
            .and_then(|r| r.trace.as_ref())
            .map(|t| t.packets.as_slice())
            .unwrap_or(&[]);
        let f =
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
        rmcast_sim::pcap::write(std::io::BufWriter::new(f), packets)
            .with_context(|| format!("writing {}", path.display()))?;
        if !args.quiet && n > 1 {
            eprintln!("note: the pcap holds run 0 of {n}");
        }
    }
    if !args.quiet {
        let incomplete = results
            .iter()
            .filter(|r| r.column("completed") == Some(&scenario::Metric::B(false)))
            .count();
        println!(
            "{n} run{} in {:.2}s -> {} and {}",
            if n == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64(),
            csv.display(),
            jsonl.display()
        );
        if incomplete > 0 {
            eprintln!(
                "warning: {incomplete} run(s) did not complete: the sender did not finish or a \
                 receiver lacks data (see stop_reason, delivered_min, messages_failed)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Each run's rates over time from its samples, in Mbit/s: what the slowest receiver received
/// per interval, the source's rate gauge where it has one (TFMCC's sending rate), and a
/// `[cross]` flow's received rate; drawn by the report's plot module (`None`: no run lasted
/// two samples).
fn series_svg(sc: &Scenario, results: &[scenario::RunResult]) -> anyhow::Result<Option<String>> {
    use rmcast_repro::plot::{Axis, Plot, PlotSeries};
    use rmcast_repro::Estimate;
    let mbps = |bytes_per_s: f64| bytes_per_s * 8.0 / 1e6;
    // The rate over each interval from two cumulative byte counts.
    let per_interval = |s: &[scenario::Sample], f: &dyn Fn(&scenario::Sample) -> Option<u64>| {
        s.windows(2)
            .filter_map(|w| {
                let dt = w[1].time_s - w[0].time_s;
                let d = f(&w[1])?.saturating_sub(f(&w[0])?) as f64;
                (dt > 0.0).then(|| (w[1].time_s, Estimate::exact(mbps(d / dt))))
            })
            .collect::<Vec<_>>()
    };
    let mut series = Vec::new();
    let mut drawn = std::collections::HashSet::new();
    for r in results {
        let s = &r.samples;
        // One run per configuration: the first seed of each.
        let swept: Vec<String> = sc
            .axes
            .iter()
            .filter(|a| a.key != "seed")
            .filter_map(|a| r.column(&a.key).map(|v| format!("{} = {}", a.key, v.csv())))
            .collect();
        if !drawn.insert(swept.clone()) {
            continue;
        }
        let name = match swept.is_empty() {
            true => format!("run {}", r.index),
            false => swept.join(", "),
        };
        // Three colours per configuration.
        let c = 3 * (drawn.len() - 1);
        let received = per_interval(s, &|x| Some(x.received_bytes_min));
        if !received.is_empty() {
            series.push(PlotSeries::measured(
                format!("received, slowest receiver ({name})"),
                c,
                &received,
            ));
        }
        let gauge: Vec<(f64, Estimate)> = s
            .iter()
            .filter_map(|x| Some((x.time_s, Estimate::exact(mbps(x.source_rate?)))))
            .filter(|(_, e)| e.mean.is_finite())
            .collect();
        if !gauge.is_empty() {
            series.push(PlotSeries::measured(
                format!("source rate gauge ({name})"),
                c + 1,
                &gauge,
            ));
        }
        let cross = per_interval(s, &|x| x.cross.map(|c| c.1));
        if !cross.is_empty() {
            series.push(PlotSeries::measured(
                format!("[cross] flow received ({name})"),
                c + 2,
                &cross,
            ));
        }
    }
    if series.is_empty() {
        return Ok(None);
    }
    let every = results
        .iter()
        .find_map(|r| match r.samples.as_slice() {
            [a, b, ..] => Some((b.time_s - a.time_s) * 1e3),
            _ => None,
        })
        .unwrap_or(0.0);
    let plot = Plot {
        id: "series".into(),
        title: sc
            .doc
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or("rmcast sim")
            .to_string(),
        caption: format!(
            "Rates per {every:.0} ms sample (the first seed of each configuration): bytes the \
             slowest receiver (and a [cross] flow's sink) received per interval, and the \
             source's rate gauge at each sample"
        ),
        x: Axis::new("simulated time", "s"),
        y: Axis::new("rate", "Mbit/s"),
        series,
    };
    Ok(Some(plot.to_svg()?))
}

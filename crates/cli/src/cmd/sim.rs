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

Writes DIR/runs.csv and DIR/runs.jsonl (one row per run: swept parameters, seed, metrics).
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

//! `rmcast sim`: run a scenario file (or sweep) in the simulator.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_sim::scenario::{self, RunOptions, Scenario};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast sim scenarios/examples/bus-saw.toml --out out/bus
  rmcast sim scenarios/examples/binary-tree-drop-nth.toml --out out/tree --pcap out/tree.pcap
  RAYON_NUM_THREADS=1 rmcast sim scenarios/examples/star-hybrid.toml --out out/star --quiet

Writes DIR/runs.csv and DIR/runs.jsonl (one row per run: swept parameters, seed, metrics).
Any scalar in the scenario may be a list or a range { from, to, step }: the cross product is
a sweep, run in parallel (RAYON_NUM_THREADS) with identical results whatever the threads.")]
pub struct Args {
    /// Scenario file (TOML)
    scenario: PathBuf,
    /// Output directory (created if missing)
    #[arg(long)]
    out: PathBuf,
    /// Also write a pcap of the first run's traffic (synthesized Ethernet/IPv4/UDP headers)
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Also write per-packet and per-loss records (DIR/packets.csv, DIR/losses.csv)
    #[arg(long)]
    records: bool,
    /// No progress bar and no summary
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let sc = match Scenario::load(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let n = sc.runs();
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
    let results = match scenario::run_sweep(&sc, opts, &progress) {
        Ok(r) => r,
        Err(e) => {
            bar.finish_and_clear();
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    bar.finish_and_clear();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let csv = args.out.join("runs.csv");
    std::fs::write(&csv, scenario::to_csv(&results))
        .with_context(|| format!("writing {}", csv.display()))?;
    let jsonl = args.out.join("runs.jsonl");
    std::fs::write(&jsonl, scenario::to_jsonl(&results))
        .with_context(|| format!("writing {}", jsonl.display()))?;
    if args.records {
        let mut p = String::from("run,id,time_s,src,dest,class,len\n");
        let mut l = String::from("run,id,time_s,node,cause\n");
        for r in &results {
            let Some(t) = &r.trace else { continue };
            for x in &t.packets {
                let dest = match x.dest {
                    rmcast_proto::Dest::Node(n) => format!("node{}", n.0),
                    rmcast_proto::Dest::Group(g) => format!("group{}", g.0),
                };
                let class = match x.class {
                    Some(rmcast_wire::PacketClass::OriginalData) => "data",
                    Some(rmcast_wire::PacketClass::RepairData) => "repair",
                    Some(rmcast_wire::PacketClass::Control) => "control",
                    None => "other",
                };
                let _ = writeln!(
                    p,
                    "{},{},{},{},{},{},{}",
                    r.index,
                    x.id,
                    x.time.as_secs_f64(),
                    x.src.0,
                    dest,
                    class,
                    x.payload.len()
                );
            }
            for x in &t.losses {
                let _ = writeln!(
                    l,
                    "{},{},{},{},{}",
                    r.index,
                    x.id,
                    x.time.as_secs_f64(),
                    x.node.0,
                    x.cause
                );
            }
        }
        std::fs::write(args.out.join("packets.csv"), p)?;
        std::fs::write(args.out.join("losses.csv"), l)?;
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
            .filter(|r| {
                r.columns
                    .iter()
                    .any(|(k, v)| k == "completed" && *v == scenario::Metric::B(false))
            })
            .count();
        println!(
            "{n} run{} in {:.2}s -> {} and {}",
            if n == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64(),
            csv.display(),
            jsonl.display()
        );
        if incomplete > 0 {
            eprintln!("warning: {incomplete} run(s) stopped before the sender completed (see stop_reason)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `rmcast bench`: measure the simulator.

use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast bench sim            the three figures, as JSON (takes about a minute)
  rmcast bench sim --quick    the same benchmarks scaled down (seconds; for CI)
  rmcast bench xtp --help     seed 002's metric tool for xtp (loopback, --netns, --sim)
  rmcast bench cc --help      rmcast's rate against a bottleneck beside a TCP flow (root)

Figures: (a) kernel events/s on a hold model with 100,000 pending events; (b) packet-hop
events/s for one sender multicasting 10,000 1-KB packets unreliably to 1,024 receivers on a
binary tree of height 10 with 1% Bernoulli loss on every link; (c) wall time and peak RSS
(VmHWM) for 100,000 receivers on a transit-stub graph receiving 100 packets.")]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Benchmark the discrete-event simulator; prints JSON
    Sim {
        /// Scaled-down sizes (for CI); the JSON says which sizes ran
        #[arg(long)]
        quick: bool,
    },
    /// Benchmark `rmcast send`/`recv` on real sockets against the raw ceiling, uftp and
    /// udpcast; prints JSON
    Net(super::bench_net::Args),
    /// SRM, PGM and LMS single-loss runs on transit-stub graphs of 10^3..10^6 receivers:
    /// wall time, events, events/s and peak memory per size
    Scale(super::bench_scale::Args),
    /// rmcast's rate against a bottleneck on a namespace bridge, alone and beside a TCP
    /// flow: a time series of both rates, settling time and TCP's share (root)
    Cc(super::bench_cc::Args),
    /// Seed 002's `metric` for xtp: a message in writes of a given size to N receivers with
    /// loss at one; timing, Mbit/s, calls, ms per call, failed (loopback, --netns or --sim)
    Xtp(super::bench_xtp::Args),
}

impl Args {
    /// Whether this benchmark runs the simulator (its allocation follows `alloc::settle`).
    pub fn simulates(&self) -> bool {
        matches!(self.what, What::Sim { .. } | What::Scale(_))
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let quick = match args.what {
        What::Sim { quick } => quick,
        What::Net(a) => return super::bench_net::run(a),
        What::Scale(a) => return super::bench_scale::run(a),
        What::Xtp(a) => return super::bench_xtp::run(a),
        What::Cc(a) => return super::bench_cc::run(a),
    };
    let out = crate::commit::stamp(rmcast_bench::sim::figures(quick)?);
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}

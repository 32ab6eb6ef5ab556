//! `rmcast bench`: measure the simulator.

use rmcast_sim::bench;
use rmcast_sim::topo::TransitStub;
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
    let (pending, steps) = if quick {
        (100_000, 2_000_000)
    } else {
        (100_000, 20_000_000)
    };
    let (tree_h, tree_pkts) = if quick { (7, 1_000) } else { (10, 10_000) };
    let ts = if quick {
        TransitStub::default()
    } else {
        TransitStub {
            transit_domains: 4,
            transit_nodes: 10,
            stubs_per_transit: 5,
            stub_nodes: 10,
            ..TransitStub::default()
        }
    };
    let (ts_receivers, ts_pkts) = if quick { (10_000, 20) } else { (100_000, 100) };

    // (c) first, so that the peak RSS it reports is its own.
    let c = bench::transit_stub_multicast(&ts, ts_receivers, ts_pkts, 1024)
        .ok_or_else(|| anyhow::anyhow!("could not build the transit-stub benchmark topology"))?;
    let rss = bench::peak_rss_bytes();
    let (n, secs, cpu) = bench::hold_model(pending, steps);
    let b = bench::binary_tree_multicast(tree_h, tree_pkts, 1024, 0.01);

    let out = crate::commit::stamp(serde_json::json!({
        "quick": quick,
        "note": "seconds are wall time; cpu_seconds is this thread's CPU time (/proc/thread-self/schedstat), which differs from wall time when the machine is loaded",
        "threads": 1,
        "a_hold_model": {
            "pending_events": pending,
            "events": n,
            "seconds": secs,
            "cpu_seconds": cpu,
            "events_per_second": n as f64 / secs.max(1e-9),
            "events_per_cpu_second": cpu.map(|c| n as f64 / c.max(1e-9)),
        },
        "b_binary_tree_multicast": {
            "receivers": b.receivers,
            "packets": b.packets,
            "packet_bytes": 1024,
            "loss_per_link": 0.01,
            "link_hops": b.link_hops,
            "kernel_events": b.kernel_events,
            "deliveries": b.deliveries,
            "lost": b.lost,
            "run_seconds": b.run_seconds,
            "run_cpu_seconds": b.run_cpu_seconds,
            "packet_hops_per_second": b.link_hops as f64 / b.run_seconds.max(1e-9),
            "packet_hops_per_cpu_second": b.run_cpu_seconds.map(|c| b.link_hops as f64 / c.max(1e-9)),
            "kernel_events_per_second": b.kernel_events as f64 / b.run_seconds.max(1e-9),
        },
        "c_transit_stub_large": {
            "receivers": c.receivers,
            "nodes": c.nodes,
            "packets": c.packets,
            "link_hops": c.link_hops,
            "deliveries": c.deliveries,
            "build_seconds": c.build_seconds,
            "run_seconds": c.run_seconds,
            "run_cpu_seconds": c.run_cpu_seconds,
            "wall_seconds": c.build_seconds + c.run_seconds,
            "peak_rss_bytes": rss,
        },
    }));
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}

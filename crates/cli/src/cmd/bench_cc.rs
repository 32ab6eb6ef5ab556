//! `rmcast bench cc`: rmcast's rate against a bottleneck on the namespace bridge, alone and
//! beside a competing TCP flow, as a time series (issue 21: `--rate auto` against 100 Mbit/s).
//! The harness, the CSV and the plot are `rmcast_bench::cc`'s; this command parses the
//! arguments, answers the TCP flow's child roles and writes the table, the JSON, the CSV and
//! the plot.

use super::send::parse_rate;
use anyhow::{bail, Context, Result};
use rmcast_bench::cc::{self, CcBench};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  sudo rmcast bench cc
                      rmcast send --rate auto against a 100 Mbit/s bottleneck: 10 s alone,
                      then 10 s beside a TCP flow through the same bottleneck
  sudo rmcast bench cc --rate 80M --csv cc.csv --plot cc.svg
                      a fixed rate below the bottleneck (settles at ~80 Mbit/s, outside ±15 %)
  sudo rmcast bench cc --rate 300M --receivers 3 --json > cc.json
                      a fixed rate that overloads it; 2 more receivers without a bottleneck
  sudo rmcast bench cc --bottleneck 50M --alone-s 5 --shared-s 5 --frame-loss 0.001 --check
  sudo rmcast bench cc --queue-ms 0 --burst-ms 5
                      the nftables policer instead of a queue
  rmcast bench cc --from-json cc.json --plot cc.svg   table and plot of a saved result

Hosts (network namespaces on a bridge; root, iproute2 and nftables): 0 runs rmcast send, 1
the receiver behind the bottleneck, 2.. further receivers without one, and one more host a TCP
source writing as fast as it can to a TCP sink on host 1, through the same bridge port.

The bottleneck (default) is a link of --bottleneck with a drop-tail queue of --queue-ms at its
rate in front of host 1: a tbf qdisc on host 1's bridge port, as a switch's output port queues.
Frames wait in the queue and only those arriving at a full queue are dropped, so the round
trip grows as the queue fills, for TCP and for rmcast alike. Bytes offered are counted on the
bridge, bytes passed at host 1's interface (netdev ingress), drops read from the qdisc.
With --queue-ms 0 the bottleneck is instead a policer (nftables, bridge family, forward hook):
frames beyond the rate are dropped at once, with a burst of --burst-ms at the rate (5 ms: 42
full frames at 100 Mbit/s). It polices frames, taking each as a full 1,500-byte IP packet:
nftables' byte-counting limit holds one second of the rate on top of its burst. A policer is
hard on TCP at a bridge's microsecond round trips: TCP alone passes about 12 Mbit/s of 100.
Rates are of IP packets (Ethernet headers not counted) that passed, read from nftables counters
every --sample-ms; a frame dropped by --frame-loss (before the bottleneck) is not counted. The
alone phase is also given in frames per second, as the policer counts them: a small control
frame (pgm's NCF) costs it a full frame's share but adds little to the Mbit/s.

--rate is passed to rmcast send as given (default auto). If rmcast send refuses it (no
congestion control built yet), this command says so and exits with status 2.

Verdicts: settled = the multicast rate (averaged over --window-ms, trailing) entered the band
bottleneck ± --tolerance and stayed
there until the alone phase's end, at or before --settle-s; fair = TCP's mean rate over the
shared phase is at least --min-share of the bottleneck. Exit status: 0 the measurement ran and
every receiver's file is intact (with --check: and both verdicts hold); 1 otherwise; 2 it could
not run.")]
pub struct Args {
    /// Bottleneck rate in bit/s (k/M/G suffixes)
    #[arg(long, default_value = "100M", value_parser = parse_rate)]
    pub bottleneck: u64,
    /// Burst the policer lets through at once, in ms at the bottleneck's rate
    #[arg(long, default_value_t = 5.0, value_name = "MS")]
    pub burst_ms: f64,
    /// The bottleneck is a link with a drop-tail queue of MS at its rate (a tbf qdisc on the
    /// port, as a switch's output port queues); 0: the nftables policer instead (--burst-ms)
    #[arg(long, default_value_t = 20.0, value_name = "MS")]
    pub queue_ms: f64,
    /// Judge settling on the rate averaged over this trailing window, ms
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub window_ms: u64,
    /// `rmcast send --rate`, passed through as given
    #[arg(long, default_value = "auto")]
    pub rate: String,
    /// `rmcast send --protocol` (default: none given, send's default)
    #[arg(long)]
    pub protocol: Option<String>,
    /// Receivers: host 1 behind the bottleneck, the others without one
    #[arg(long, default_value_t = 1)]
    pub receivers: usize,
    /// Seconds the transfer runs alone before the TCP flow starts
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub alone_s: f64,
    /// Seconds the TCP flow runs beside the transfer
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub shared_s: f64,
    /// Milliseconds between two readings of the bottleneck's counters
    #[arg(long, default_value_t = 100, value_name = "MS")]
    pub sample_ms: u64,
    /// Loss per Ethernet frame on the bridge to every host but the sender
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub frame_loss: f64,
    /// File size in MB (default: both phases at 1.25 × the bottleneck's rate)
    #[arg(long)]
    pub size_mb: Option<u64>,
    /// Half-width of the band around the bottleneck the rate must settle in
    #[arg(long, default_value_t = 0.15)]
    pub tolerance: f64,
    /// How soon the rate must settle in the band, in seconds
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub settle_s: f64,
    /// The share of the bottleneck TCP must keep in the shared phase
    #[arg(long, default_value_t = 1.0 / 3.0)]
    pub min_share: f64,
    /// Stop the transfer if it has not finished SECS after the measurement
    #[arg(long, default_value_t = 120.0, value_name = "SECS")]
    pub timeout_s: f64,
    /// The TCP source's congestion control, set on its socket (reno, cubic, bbr: see
    /// /proc/sys/net/ipv4/tcp_available_congestion_control; `default`: the host's default)
    #[arg(long, default_value = "cubic")]
    pub tcp_cc: String,
    /// Exit with status 1 unless the rate settled in time and TCP kept its share
    #[arg(long)]
    pub check: bool,
    /// Print the JSON result (summary and time series) instead of the table
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON result to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write the time series as CSV (t_s, multicast_mbps, tcp_mbps, ...)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write an SVG plot of both rates over time
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Do not run anything: read the JSON of an earlier run (--json or --out)
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,
    /// Internal: TCP role (sink|source) of a child process
    #[arg(long, hide = true)]
    pub tcp_role: Option<String>,
    #[arg(long, hide = true)]
    pub tcp_addr: Option<SocketAddr>,
    #[arg(long, hide = true, default_value_t = 0.0)]
    pub tcp_secs: f64,
}

fn secs(v: f64, flag: &str) -> Result<Duration> {
    match Duration::try_from_secs_f64(v) {
        Ok(d) => Ok(d),
        Err(_) => bail!("{flag} {v}: give a non-negative number of seconds"),
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    if let Some(role) = &a.tcp_role {
        // A child process of the TCP flow (`rmcast_bench::cc::tcp_child_args`).
        let addr = a.tcp_addr.context("--tcp-addr")?;
        let d = secs(a.tcp_secs, "--tcp-secs")?;
        let v = match role.as_str() {
            "sink" => cc::tcp_sink(addr, d)?,
            "source" => cc::tcp_source(addr, d, (a.tcp_cc != "default").then_some(&*a.tcp_cc))?,
            other => bail!("--tcp-role {other:?}: sink or source"),
        };
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    let out = match &a.from_json {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("read {}", p.display()))?;
            let v: Value = serde_json::from_str(&text).with_context(|| {
                format!("{} is not a `rmcast bench cc` JSON result", p.display())
            })?;
            if !v["series"].is_array() || !v["summary"].is_object() {
                bail!(
                    "{} has no `series` and `summary`: not a `rmcast bench cc` JSON result",
                    p.display()
                );
            }
            v
        }
        None => {
            let b = CcBench {
                bottleneck_bps: a.bottleneck,
                burst: secs(a.burst_ms / 1e3, "--burst-ms")?,
                queue: match a.queue_ms {
                    0.0 => None,
                    q => Some(secs(q / 1e3, "--queue-ms")?),
                },
                window: Duration::from_millis(a.window_ms),
                rate: a.rate.clone(),
                protocol: a.protocol.clone(),
                receivers: a.receivers,
                alone: secs(a.alone_s, "--alone-s")?,
                shared: secs(a.shared_s, "--shared-s")?,
                sample: Duration::from_millis(a.sample_ms),
                frame_loss: a.frame_loss,
                size_mb: a.size_mb,
                tolerance: a.tolerance,
                settle_within: secs(a.settle_s, "--settle-s")?,
                min_share: a.min_share,
                timeout: secs(a.timeout_s, "--timeout-s")?,
                tcp_cc: (a.tcp_cc != "default").then(|| a.tcp_cc.clone()),
            };
            let exe = std::env::current_exe().context("find the rmcast binary")?;
            crate::commit::stamp(cc::run(&b, &exe, &mut |line| eprintln!("{line}"))?)
        }
    };
    let text = serde_json::to_string_pretty(&out)?;
    if let Some(p) = &a.out {
        std::fs::write(p, format!("{text}\n")).with_context(|| format!("write {}", p.display()))?;
    }
    if let Some(p) = &a.csv {
        std::fs::write(p, cc::csv(&out)?).with_context(|| format!("write {}", p.display()))?;
    }
    if let Some(p) = &a.plot {
        std::fs::write(p, cc::svg(&out)?).with_context(|| format!("write {}", p.display()))?;
    }
    if a.json {
        println!("{text}");
    } else {
        print!("{}", cc::table(&out));
    }
    let s = &out["summary"];
    let intact =
        s["all_verified"].as_bool() == Some(true) && s["transfer_exit_status"].as_i64() == Some(0);
    let verdicts =
        s["settled_in_time"].as_bool() == Some(true) && s["tcp_fair"].as_bool() == Some(true);
    Ok(if intact && (verdicts || !a.check) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

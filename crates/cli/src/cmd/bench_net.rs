//! `rmcast bench net`: goodput of `rmcast send`/`recv` on real sockets, beside the raw ceiling
//! and beside uftp/uftpd and udp-sender/udp-receiver moving the same file. The harnesses are
//! `rmcast-bench`'s; this command parses the arguments, answers the raw blast's child roles
//! and prints the JSON.

use anyhow::{Context, Result};
use rmcast_bench::raw::{self, Role};
use rmcast_bench::NetBench;
use std::net::SocketAddr;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  rmcast bench net                      loopback, 20 MB, 1/2/4 receivers, 0% and 1% loss
  rmcast bench net --size-mb 5 --receivers 1,2 --no-tools
  sudo rmcast bench net --bridge        every endpoint in its own network namespace

Goodput is application bytes per second at each receiver, from its first data packet to
its last byte (rmcast and the raw blast), or file size over the sender's wall time (the
tools, and rmcast beside them, `wall_mbit_s`). uftp runs with -R -1 (no rate limit) and its
largest block size; udp-sender with --nopointopoint and no bitrate cap. Missing tools are
installed with apt-get (Debian packages uftp, udpcast) unless --no-install.")]
pub struct Args {
    /// File size in MB (10^6 bytes)
    #[arg(long, default_value_t = 20)]
    pub size_mb: u64,
    /// Receiver counts to measure
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub receivers: Vec<usize>,
    /// Injected loss rates (at every receiver) for rmcast
    #[arg(long, value_delimiter = ',', default_value = "0,0.01")]
    pub loss: Vec<f64>,
    /// rmcast's datagram size (the raw blast uses the same)
    #[arg(long, default_value_t = 60_000)]
    pub datagram_size: usize,
    /// rmcast protocol to measure: saw, bap, xtp, prmp or dsp (dsp: all receivers in one
    /// region, the lowest node id designated)
    #[arg(long, default_value = "saw")]
    pub protocol: String,
    /// Window (bap, xtp; prmp: the receive window S; dsp: L outstanding blocks)
    #[arg(long, default_value_t = 16)]
    pub window: u16,
    /// Run every endpoint in its own network namespace on a bridge (root)
    #[arg(long)]
    pub bridge: bool,
    /// Do not run uftp and udpcast
    #[arg(long)]
    pub no_tools: bool,
    /// Do not apt-get install missing tools
    #[arg(long)]
    pub no_install: bool,
    /// Internal: raw-blast role (send|recv) of a child process
    #[arg(long, hide = true)]
    pub raw_role: Option<String>,
    #[arg(long, hide = true)]
    pub raw_group: Option<SocketAddr>,
    #[arg(long, hide = true)]
    pub raw_iface: Option<String>,
    #[arg(long, hide = true, default_value_t = 0)]
    pub raw_bytes: u64,
}

pub fn run(a: Args) -> Result<ExitCode> {
    if let Some(role) = &a.raw_role {
        // A child process of the raw blast (`rmcast_bench::raw::child_args`).
        let g = a.raw_group.context("--raw-group")?;
        let i = a.raw_iface.clone().unwrap_or_else(|| "lo".into());
        let role = if role == "recv" {
            Role::Recv
        } else {
            Role::Send
        };
        match role {
            Role::Recv => println!("{}", raw::recv(g, &i, a.raw_bytes)?),
            Role::Send => raw::send(g, &i, a.raw_bytes, a.datagram_size, |v| println!("{v}"))?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe().context("find the rmcast binary")?;
    let bench = NetBench {
        size_mb: a.size_mb,
        receivers: a.receivers,
        loss: a.loss,
        datagram_size: a.datagram_size,
        protocol: a.protocol,
        window: a.window,
        bridge: a.bridge,
        no_tools: a.no_tools,
        no_install: a.no_install,
    };
    let out = rmcast_bench::run(&bench, &exe, &mut |line| eprintln!("{line}"))?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}

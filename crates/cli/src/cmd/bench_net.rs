//! `rmcast bench net`: goodput of `rmcast send`/`recv` on real sockets — rmcast's default and
//! every protocol that runs on sockets — beside the raw ceiling and beside uftp/uftpd and
//! udp-sender/udp-receiver moving the same file, without loss and with loss per Ethernet frame
//! on a bridge. The harnesses are `rmcast-bench`'s; this command parses the arguments, answers
//! the raw blast's child roles and prints the table and the JSON.

use anyhow::{bail, Context, Result};
use rmcast_bench::raw;
use rmcast_bench::{Loss, NetBench};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  sudo rmcast bench net --bridge --frame-loss 0,0.001,0.01
                      sender and receivers in network namespaces on a bridge, 100 MB, 3 and
                      10 receivers, rmcast's default and every --protocol but csp and cp
                      (they need an `rmcast relay`), the raw blast, uftp,
                      udpcast and NORM, with 0, 0.1 % and 1 % of the Ethernet frames dropped
  sudo rmcast bench net --bridge --receivers 3 --protocols default --tools norm,norm-cc,norm-lan
                      rmcast beside NORM at a fixed rate, under NORM-CC and LAN-tuned
  sudo rmcast bench net --bridge --receivers 3,10 --frame-loss 0.01 --protocols pgm --tools openpgm
                      rmcast's pgm beside OpenPGM (libpgm 5.3), same rate, no FEC
  sudo rmcast bench net --bridge --receivers 3 --protocols default,xtp --tools uftp --out r.json
  sudo rmcast bench net --bridge --receivers 3 --protocols pgm,pgm/key-file,pgm/key-file/encrypt --no-tools
                      what authentication and encryption cost, in the same run
  rmcast bench net --size-mb 20 --receivers 1,2 --no-tools    loopback, injected loss 0 and 1 %
  rmcast bench net --from-json r.json                          the table of a saved result
  sudo rmcast bench net --bridge --receivers 3 --size-mb 50 --frame-loss 0 --slow-port 50M \\
      --protocols default,default/rate=auto --tools uftp
                      an uneven LAN: the third receiver behind a 50 Mbit/s port, uftp beside

Loss: --frame-loss P drops each Ethernet frame the bridge forwards to a receiver with
probability P (nftables in the bridge's namespace, as a lossy switch or NIC would; a datagram
larger than the MTU is lost when any of its fragments is); every contender sees it. --loss P
drops each rmcast datagram at each receiver in the application (rmcast only). Without either:
--bridge measures frame loss 0, 0.1 % and 1 %, loopback injected loss 0 and 1 %.

Goodput per receiver is application bytes per second from its first data packet to its last
byte (rmcast, and the raw blast over its own bytes), or the file over the sender's wall time
(the tools); `wall Mb/s` is the file over the run's wall time for everyone, start-up and
handshakes included. Every received file is checked against the sender's BLAKE3 digest. A run
still going after --timeout-s is stopped and reported as \"did not finish\". uftp runs with
-R -1 (no rate limit) and its default block size; udp-sender with --nopointopoint and no
bitrate cap; NORM (libnorm, through bench/norm/normfile.cc, built with g++ on first use) at
1 Gbit/s, rmcast's default rate (NORM's own default is 64 kbit/s), with norm-cc under
NORM-CC up to 1 Gbit/s, with norm-lan at 1 Gbit/s with its round-trip estimate started at
1 ms instead of 0.5 s, with its defaults otherwise (1,400-byte segments, blocks of 64 with
parity on demand); its sender ends when every receiver acknowledged its watermark. openpgm
(bench/pgm/openpgm_peer.c against libpgm 5.3, built with cc) sends the file as APDUs of 1,400
bytes at 1 Gbit/s without FEC and is timed at its receivers (a PGM source cannot know when
they finish): file over the time to each receiver's last APDU. Missing tools are installed
with apt-get (Debian packages uftp, udpcast, libnorm-dev and g++, libpgm-dev, pkg-config and
gcc) unless --no-install.")]
pub struct Args {
    /// File size in MB (10^6 bytes)
    #[arg(long, default_value_t = 100)]
    pub size_mb: u64,
    /// Receiver counts to measure
    #[arg(long, value_delimiter = ',', default_value = "3,10")]
    pub receivers: Vec<usize>,
    /// Loss per Ethernet frame on the bridge (needs --bridge), e.g. 0,0.001,0.01
    #[arg(long, value_delimiter = ',', value_name = "P")]
    pub frame_loss: Option<Vec<f64>>,
    /// Loss injected per rmcast datagram at every receiver (rmcast only), e.g. 0,0.01
    #[arg(long, value_delimiter = ',', value_name = "P")]
    pub loss: Option<Vec<f64>>,
    /// `rmcast send --datagram-size` (default: none given, send chooses); the raw blast uses
    /// it too (default: the sender's MTU less 28 bytes)
    #[arg(long, value_name = "BYTES")]
    pub datagram_size: Option<usize>,
    /// rmcast runs: `default` (no --protocol, what `rmcast send` defaults to) and protocol
    /// names, each optionally with `rmcast send` flags after slashes (`pgm/fec-k=16`:
    /// --protocol pgm --fec-k 16; `pgm/key-file/encrypt`: a fresh key for the sender and every
    /// receiver, encrypted; `rcvbuf=N`, `sndbuf=N`: the sender's and every receiver's
    /// socket buffers); default: default and every protocol that runs on sockets without an
    /// `rmcast relay` (all but csp and cp, whose local exchanges are relays the bench does
    /// not build)
    #[arg(long, alias = "protocol", value_delimiter = ',', value_name = "P")]
    pub protocols: Option<Vec<String>>,
    /// `rmcast send --window` (default: none given, each protocol's own)
    #[arg(long)]
    pub window: Option<u16>,
    /// `rmcast send --rate` (default: none given, send's pacing)
    #[arg(long)]
    pub rate: Option<String>,
    /// Run every endpoint in its own network namespace on a bridge (root)
    #[arg(long)]
    pub bridge: bool,
    /// With --bridge: the last receiver's bridge port is a link of RATE bits per second
    /// (k/M/G) behind a 50 ms drop-tail queue (tc tbf in the bridge's namespace), the other
    /// ports stay at bridge speed: a LAN with one slow host
    #[arg(long, value_parser = crate::cmd::send::parse_rate, value_name = "RATE")]
    pub slow_port: Option<u64>,
    /// Keep each rmcast run's output (the sender's and receivers' JSON and standard error,
    /// where `RUST_LOG=rmcast_net=debug` traces go) in DIR/<run>/ instead of deleting it
    #[arg(long, value_name = "DIR")]
    pub logs: Option<std::path::PathBuf>,
    /// Other tools to run beside rmcast: uftp, udpcast, norm (NORM at 1 Gbit/s), norm-cc
    /// (NORM under its congestion control), norm-lan (NORM at 1 Gbit/s, round-trip estimate
    /// started at 1 ms), openpgm (OpenPGM at 1 Gbit/s, no FEC)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "uftp,udpcast,norm,norm-lan"
    )]
    pub tools: Vec<String>,
    /// Do not run the other tools
    #[arg(long)]
    pub no_tools: bool,
    /// Do not apt-get install missing tools
    #[arg(long)]
    pub no_install: bool,
    /// Stop a run (any contender) still going after SECS and report it as not finished
    #[arg(long, default_value_t = 120.0, value_name = "SECS")]
    pub timeout_s: f64,
    /// Print the JSON result on standard output instead of the table
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON result to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the table of a JSON result saved earlier (--out or --json) and exit
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,
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
        let size = a.datagram_size.unwrap_or(1472);
        match role.as_str() {
            "recv" => println!("{}", raw::recv(g, &i, a.raw_bytes)?),
            "send" => raw::send(g, &i, a.raw_bytes, size, |v| println!("{v}"))?,
            other => bail!("--raw-role {other:?}: send or recv"),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(p) = &a.from_json {
        let text = std::fs::read_to_string(p).with_context(|| format!("read {}", p.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a `rmcast bench net` JSON result", p.display()))?;
        if !v["rows"].is_array() {
            bail!(
                "{} has no `rows`: not a `rmcast bench net` JSON result",
                p.display()
            );
        }
        print!("{}", rmcast_bench::table(&v));
        return Ok(ExitCode::SUCCESS);
    }
    if !(a.timeout_s.is_finite() && a.timeout_s > 0.0) {
        bail!(
            "--timeout-s {}: give a positive number of seconds",
            a.timeout_s
        );
    }
    let mut conditions: Vec<Loss> = Vec::new();
    conditions.extend(a.frame_loss.iter().flatten().map(|&p| Loss::Frame(p)));
    conditions.extend(a.loss.iter().flatten().map(|&p| Loss::Injected(p)));
    if a.frame_loss.is_none() && a.loss.is_none() {
        conditions = if a.bridge {
            [0.0, 0.001, 0.01].map(Loss::Frame).to_vec()
        } else {
            [0.0, 0.01].map(Loss::Injected).to_vec()
        };
    }
    let protocols = a.protocols.unwrap_or_else(|| {
        std::iter::once("default")
            .chain(rmcast_bench::default_protocols())
            .map(String::from)
            .collect()
    });
    let exe = std::env::current_exe().context("find the rmcast binary")?;
    let bench = NetBench {
        size_mb: a.size_mb,
        receivers: a.receivers,
        conditions,
        datagram_size: a.datagram_size,
        protocols,
        window: a.window,
        rate: a.rate,
        bridge: a.bridge,
        tools: if a.no_tools { Vec::new() } else { a.tools },
        no_install: a.no_install,
        timeout: Duration::from_secs_f64(a.timeout_s),
        slow_port: a.slow_port,
        logs: a.logs,
    };
    let out = crate::commit::stamp(rmcast_bench::run(&bench, &exe, &mut |line| {
        eprintln!("{line}")
    })?);
    let text = serde_json::to_string_pretty(&out)?;
    if let Some(p) = &a.out {
        std::fs::write(p, format!("{text}\n")).with_context(|| format!("write {}", p.display()))?;
    }
    if a.json {
        println!("{text}");
    } else {
        print!("{}", rmcast_bench::table(&out));
    }
    Ok(ExitCode::SUCCESS)
}

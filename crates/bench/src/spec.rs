//! What a benchmark run is asked to do ([`NetBench`], its [`Loss`] conditions) and where one
//! contender's run happens ([`Setup`]: the endpoints, the file, the multicast group): what the
//! runner and the tools' drivers share.

use crate::proc;
use crate::Topo;
use std::path::Path;
use std::time::Duration;

/// The multicast group every contender sends to.
pub(crate) const GROUP_IP: &str = "239.255.90.1";

/// What to measure.
#[derive(Debug, Clone)]
pub struct NetBench {
    /// File size in MB (10^6 bytes).
    pub size_mb: u64,
    /// Receiver counts to measure.
    pub receivers: Vec<usize>,
    /// Loss conditions, each measured for every receiver count.
    pub conditions: Vec<Loss>,
    /// `--datagram-size` given to `rmcast send` (None: send's own default) and used by the
    /// raw blast (None: the sender's interface MTU less 28 bytes of IPv4 and UDP headers).
    pub datagram_size: Option<usize>,
    /// rmcast runs: `default` (no `--protocol`: whatever `rmcast send` defaults to) or a
    /// protocol name.
    pub protocols: Vec<String>,
    /// `--window` given to `rmcast send` (None: each protocol's default).
    pub window: Option<u16>,
    /// `--rate` given to `rmcast send` (None: send's default pacing).
    pub rate: Option<String>,
    /// Every endpoint in its own network namespace on a bridge (root).
    pub bridge: bool,
    /// Other tools to run: `uftp`, `udpcast`, `norm`, `norm-cc`, `norm-lan`.
    pub tools: Vec<String>,
    /// Do not apt-get install missing tools.
    pub no_install: bool,
    /// A run that has not finished after this long is stopped and reported as not finished.
    pub timeout: Duration,
    /// The last receiver's bridge port as a link of this many bits per second behind a
    /// 50 ms drop-tail queue (`--slow-port`, `tc ... tbf`; `--bridge` only): an uneven LAN.
    pub slow_port: Option<u64>,
    /// Keep each rmcast run's standard output and error (the sender's and every receiver's
    /// JSON summary and `RUST_LOG` trace) under this directory, one folder per run.
    pub logs: Option<std::path::PathBuf>,
}

/// A loss condition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    /// Each Ethernet frame the bridge forwards to a receiver is dropped with this
    /// probability (every contender; `--bridge` only).
    Frame(f64),
    /// `rmcast recv --drop-rate`: each protocol datagram dropped at each receiver in the
    /// application (rmcast only; the raw blast and the tools run only at 0).
    Injected(f64),
}

impl Loss {
    pub(crate) fn p(self) -> f64 {
        match self {
            Loss::Frame(p) | Loss::Injected(p) => p,
        }
    }

    pub(crate) fn kind(self) -> &'static str {
        match self {
            Loss::Frame(_) => "frame",
            Loss::Injected(_) => "injected",
        }
    }

    /// Loss on the network (per frame), which every contender sees.
    pub(crate) fn frame(self) -> f64 {
        match self {
            Loss::Frame(p) => p,
            Loss::Injected(_) => 0.0,
        }
    }

    /// Whether the raw blast and the tools run in this condition (injected loss reaches
    /// only rmcast, so they run once, at injected loss 0).
    pub(crate) fn everyone(self) -> bool {
        matches!(self, Loss::Frame(_)) || self.p() == 0.0
    }
}

/// Where a run's endpoints and files are.
pub(crate) struct Setup<'a> {
    pub b: &'a NetBench,
    pub topo: &'a Topo,
    pub exe: &'a Path,
    /// The file sent, its BLAKE3 digest, and the directory the receivers write under.
    pub file: &'a Path,
    pub digest: blake3::Hash,
    pub work: &'a Path,
}

impl Setup<'_> {
    /// Whether `p` holds exactly the file sent (by BLAKE3 digest).
    pub fn verify(&self, p: &Path) -> bool {
        proc::digest(p).is_ok_and(|d| d == self.digest)
    }
}

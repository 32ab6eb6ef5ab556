//! The thesis's grid (message sizes, writes, losses, transmission methods, protocol settings),
//! shared by the simulated runs and the real-network runs (`xtp_net`).

use crate::stats::Estimate;
use crate::sweep::Series;
use rmcast_proto::{xtp, GroupId, NodeId};
use std::collections::BTreeMap;

/// The group every run multicasts to.
pub(crate) const GROUP: GroupId = GroupId(1);

/// The thesis's message sizes ("50K" and "1 Meg").
pub const MESSAGES: [u64; 2] = [51_200, 1_024_000];
/// The thesis's write (buffer) sizes.
pub const WRITES: [usize; 8] = [64, 128, 256, 512, 1024, 2048, 4096, 8192];
/// Loss at one receiver: none, 1/25, 1/10, 1/5.
pub const LOSSES: [(u32, f64); 4] = [(0, 0.0), (4, 0.04), (10, 0.1), (20, 0.2)];

/// Transmission method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// Unicast to one receiver.
    Unicast,
    /// Multicast to this many receivers.
    Multi(usize),
}

impl Mode {
    /// Key in measure names (`uni`, `m3`).
    pub fn key(self) -> String {
        match self {
            Mode::Unicast => "uni".into(),
            Mode::Multi(n) => format!("m{n}"),
        }
    }
    /// How many receivers.
    pub fn receivers(self) -> usize {
        match self {
            Mode::Unicast => 1,
            Mode::Multi(n) => n,
        }
    }
    pub(super) fn label(self) -> String {
        match self {
            Mode::Unicast => "unicast".into(),
            Mode::Multi(n) => format!("multicast 1:{n}"),
        }
    }
}

/// The thesis's modes: unicast and multicast to 1, 2 and 3 receivers.
pub const MODES: [Mode; 4] = [
    Mode::Unicast,
    Mode::Multi(1),
    Mode::Multi(2),
    Mode::Multi(3),
];

/// Protocol settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// The thesis's: block on acknowledgment per write, go-back-N, FASTNAK, uncapped back-off.
    Thesis,
    /// rmcast's default xtp: selective repeat, capped back-off, writes that do not block.
    Improved,
    /// T7's variant: the thesis setting (go-back-N, FASTNAK, uncapped back-off) with writes
    /// that do not block on acknowledgment (up to 64 queued) and small queued writes coalesced
    /// into shared packets — what the thesis says SandiaXTP did at 1/25 loss.
    Coalesce,
}

impl Setting {
    /// Key in measure names.
    pub fn key(self) -> &'static str {
        match self {
            Setting::Thesis => "thesis",
            Setting::Improved => "improved",
            Setting::Coalesce => "coalesce",
        }
    }
    /// The sender configuration of this setting for `node` sending to `rx`, by multicast or not.
    pub fn config(self, node: NodeId, rx: Vec<NodeId>, multicast: bool) -> xtp::SenderConfig {
        match self {
            Setting::Thesis => xtp::SenderConfig::thesis(node, GROUP, rx, multicast),
            Setting::Improved => xtp::SenderConfig::improved(node, GROUP, rx, multicast),
            Setting::Coalesce => xtp::SenderConfig {
                block_on_ack: false,
                coalesce: true,
                ..xtp::SenderConfig::thesis(node, GROUP, rx, multicast)
            },
        }
    }
}

/// Key of a message size in measure names: `50k` or `1mb`.
pub fn msg_key(m: u64) -> &'static str {
    if m < 100_000 {
        "50k"
    } else {
        "1mb"
    }
}

/// Per write size, the throughput of the runs that completed (no point where none did) and
/// the fraction of runs that completed; `ok_mbps` reads whether a run completed and its
/// Mbit/s.
pub fn throughput_and_success<R>(
    by_write: &BTreeMap<usize, Vec<R>>,
    ok_mbps: impl Fn(&R) -> (bool, f64),
) -> (Series, Series) {
    let mut thr = Vec::new();
    let mut succ = Vec::new();
    for (&w, runs) in by_write {
        let good: Vec<f64> = runs
            .iter()
            .map(&ok_mbps)
            .filter(|r| r.0)
            .map(|r| r.1)
            .collect();
        if let Some(e) = Estimate::from_samples(&good) {
            thr.push((w as f64, e));
        }
        let frac = good.len() as f64 / runs.len().max(1) as f64;
        succ.push((w as f64, Estimate::exact(frac)));
    }
    (thr, succ)
}

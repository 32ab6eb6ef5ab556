//! The thesis's grid (message sizes, writes, losses, transmission methods, protocol settings),
//! shared by the simulated runs and the real-network runs (`xtp_net`).

use rmcast_proto::{xtp, GroupId, NodeId};

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
    Unicast,
    /// Multicast to this many receivers.
    Multi(usize),
}

impl Mode {
    pub fn key(self) -> String {
        match self {
            Mode::Unicast => "uni".into(),
            Mode::Multi(n) => format!("m{n}"),
        }
    }
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

pub const MODES: [Mode; 4] = [
    Mode::Unicast,
    Mode::Multi(1),
    Mode::Multi(2),
    Mode::Multi(3),
];

/// Protocol settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    Thesis,
    Improved,
    /// T7's variant: the thesis setting (go-back-N, FASTNAK, uncapped back-off) with writes
    /// that do not block on acknowledgment (up to 64 queued) and small queued writes coalesced
    /// into shared packets — what the thesis says SandiaXTP did at 1/25 loss.
    Coalesce,
}

impl Setting {
    pub fn key(self) -> &'static str {
        match self {
            Setting::Thesis => "thesis",
            Setting::Improved => "improved",
            Setting::Coalesce => "coalesce",
        }
    }
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

pub fn msg_key(m: u64) -> &'static str {
    if m < 100_000 {
        "50k"
    } else {
        "1mb"
    }
}

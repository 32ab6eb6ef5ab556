//! `lms` (seed 003, Papadopoulos et al.): parameters and their defaults.

use super::Param;

/// A receiver repeats a request not answered within this, ms.
pub const REQUEST_TIMEOUT_MS: f64 = 500.0;
/// Interval of the source's heartbeats, ms (0: none).
pub const HEARTBEAT_MS: f64 = 500.0;
/// How long the source keeps answering after the last data, ms.
pub const LINGER_MS: f64 = 5000.0;
/// Adaptive repliers: packets between two REFRESH messages of a receiver.
pub const REFRESH_PACKETS: u64 = 10;
/// How routers choose their replier link.
pub const REPLIER: Replier = Replier::Static;

choice! {
    /// How a router chooses its replier link (the `replier` key).
    Replier {
        /// The link toward the closest downstream receiver, fixed (seed 003 §5.8).
        Static = "static",
        /// Moved to the cheapest link by the receivers' REFRESH costs (beyond the seed).
        Adaptive = "adaptive",
    }
}

/// `lms`'s parameters.
pub const PARAMS: &[Param] = &[
    Param::ms(
        "request_timeout_ms",
        REQUEST_TIMEOUT_MS,
        "a receiver repeats a request not answered within this",
    )
    .within(0.001, 1e9),
    Param::ms(
        "heartbeat_ms",
        HEARTBEAT_MS,
        "interval of the source's heartbeats (0: none)",
    ),
    Param::ms(
        "linger_ms",
        LINGER_MS,
        "how long the source keeps answering after the last data",
    ),
    Param::choice(
        "replier",
        Replier::WORDS,
        REPLIER.word(),
        "static replier links (closest receiver) or adaptive ones moved by REFRESH costs",
    ),
    Param::int(
        "refresh_packets",
        "packets",
        1,
        1 << 32,
        REFRESH_PACKETS,
        "adaptive repliers: packets between two REFRESH messages of a receiver",
    ),
];

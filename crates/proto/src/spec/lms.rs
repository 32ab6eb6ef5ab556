//! `lms` (seed 003, Papadopoulos et al.): parameters and their defaults.

use super::{Param, Range, Value};

/// A receiver repeats a request not answered within this, ms.
pub const REQUEST_TIMEOUT_MS: f64 = 500.0;
/// Interval of the source's heartbeats, ms (0: none).
pub const HEARTBEAT_MS: f64 = 500.0;
/// How long the source keeps answering after the last data, ms.
pub const LINGER_MS: f64 = 5000.0;
/// Adaptive repliers: packets between two REFRESH messages of a receiver.
pub const REFRESH_PACKETS: u64 = 10;

/// `lms`'s parameters.
pub const PARAMS: &[Param] = &[
    Param::new(
        "request_timeout_ms",
        "ms",
        Range::Real {
            min: 0.001,
            max: 1e9,
        },
        Value::Real(REQUEST_TIMEOUT_MS),
        "a receiver repeats a request not answered within this",
    ),
    Param::new(
        "heartbeat_ms",
        "ms",
        Range::Real { min: 0.0, max: 1e9 },
        Value::Real(HEARTBEAT_MS),
        "interval of the source's heartbeats (0: none)",
    ),
    Param::new(
        "linger_ms",
        "ms",
        Range::Real { min: 0.0, max: 1e9 },
        Value::Real(LINGER_MS),
        "how long the source keeps answering after the last data",
    ),
    Param::new(
        "replier",
        "",
        Range::Choice(&["static", "adaptive"]),
        Value::Word("static"),
        "static replier links (closest receiver) or adaptive ones moved by REFRESH costs",
    ),
    Param::new(
        "refresh_packets",
        "packets",
        Range::Int {
            min: 1,
            max: 1 << 32,
        },
        Value::Int(REFRESH_PACKETS),
        "adaptive repliers: packets between two REFRESH messages of a receiver",
    ),
];

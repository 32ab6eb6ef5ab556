//! `lms` (seed 003, Papadopoulos et al.): parameters and their defaults.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{choice, Param, ProtocolSpec, Value};
use rmcast_wire::Family;

/// `lms`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const LMS: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "lms",
        seed: "003 (Papadopoulos, Ch. 4-5)",
        summary: "light-weight multicast services: routers keep a replier link, requests turn \
                  at the turning point, the replier's repair is subcast down the asking subtree",
        family: Family::Lms,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Lms>),
    module: module_path!(),
};

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
/// On sockets: the request timeout, ms. LMS has no round-trip estimate; a LAN's repair
/// round trip is a few ms (pgm's measured 2.7 ms median, 5.7 ms at the 90th percentile, on a
/// loaded bridge), so 30 ms (pgm's floor of its adaptive NAK timers) is what a lost request
/// or repair costs there instead of the seed's 500 ms.
pub const SOCKET_REQUEST_TIMEOUT_MS: f64 = 30.0;
/// On sockets: the heartbeat interval, ms (a lost tail is found at the next one; pgm's SPM
/// interval on sockets).
pub const SOCKET_HEARTBEAT_MS: f64 = 50.0;

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
    .within(0.001, 1e9)
    .on_sockets(
        Value::Real(SOCKET_REQUEST_TIMEOUT_MS),
        "a LAN's repair round trip is a few ms",
    ),
    Param::ms(
        "heartbeat_ms",
        HEARTBEAT_MS,
        "interval of the source's heartbeats (0: none)",
    )
    .on_sockets(
        Value::Real(SOCKET_HEARTBEAT_MS),
        "receivers find a lost tail at the next heartbeat",
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

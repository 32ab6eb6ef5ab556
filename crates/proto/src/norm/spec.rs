//! `norm`'s row of [`crate::PROTOCOLS`], its parameters and their defaults (libnorm's, as
//! `bench/norm/normfile.cc` sets them, and RFC 5740's).

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Value};
use rmcast_wire::Family;

/// `norm`'s row of [`crate::PROTOCOLS`].
pub const NORM: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "norm",
        seed: "RFC 5740 (NRL libnorm 1.5.9, bench/norm/normfile.cc settings)",
        summary: "NACK-oriented reliable multicast: blocks of segments, on-demand \
                  Reed-Solomon parity, multicast NACKs with random back-off and \
                  suppression, GRTT probing, watermark ACK at the end",
        family: Family::Norm,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Norm>),
    module: module_path!(),
};

/// Source segments per block (normfile.cc: `NormSetTxFecParams(.., 64, 16)`'s 64).
pub const BLOCK_LEN: u64 = 64;
/// Most parity symbols per block (normfile.cc's 16; none sent proactively).
pub const PARITY_MAX: u64 = 16;
/// The GRTT before any is measured, ms (libnorm's initial estimate, 0.5 s).
pub const GRTT_INITIAL_MS: f64 = 500.0;
/// The smallest GRTT the sender advertises, ms (our floor: a timer of a few ms).
pub const GRTT_MIN_MS: f64 = 1.0;
/// The back-off factor K (libnorm's multicast default, RFC 5740 §5.3).
pub const BACKOFF_K: f64 = 4.0;
/// The group size estimate of the back-off (RFC 5740 §5.3; libnorm's default 1,000).
pub const GSIZE: u64 = 1_000;
/// Interval of the GRTT probes, ms.
pub const PROBE_MS: f64 = 1_000.0;
/// On sockets: interval of the GRTT probes, ms (a LAN transfer lasts seconds: the GRTT
/// must come down from its 0.5 s within the first of them).
pub const SOCKET_PROBE_MS: f64 = 100.0;
/// Rounds of FLUSH and ACK REQ before the sender gives the missing ACKs up (libnorm's
/// robust factor, 20).
pub const FLUSH_COUNT: u64 = 20;
/// NORM-CC (RFC 5740 §5.5.2), off by default: every scenario without it runs as before.
pub const CC: bool = false;

/// `norm`'s parameters.
pub const PARAMS: &[Param] = &[
    Param::int(
        "block_len",
        "segments",
        1,
        200,
        BLOCK_LEN,
        "source segments per FEC block",
    ),
    Param::int(
        "parity_max",
        "symbols",
        0,
        55,
        PARITY_MAX,
        "most Reed-Solomon parity symbols per block, sent on demand",
    ),
    Param::ms(
        "grtt_initial_ms",
        GRTT_INITIAL_MS,
        "the group round-trip time assumed before one is measured",
    )
    .within(0.001, 60_000.0),
    Param::ms(
        "grtt_min_ms",
        GRTT_MIN_MS,
        "the smallest group round-trip time the sender advertises",
    )
    .within(0.001, 60_000.0),
    Param::real(
        "backoff_k",
        "",
        0.0,
        64.0,
        BACKOFF_K,
        "NACK back-off factor K: back-offs are drawn over [0, K*GRTT)",
    ),
    Param::int(
        "gsize",
        "receivers",
        1,
        1 << 40,
        GSIZE,
        "group size estimate shaping the back-off's exponential distribution",
    ),
    Param::ms("probe_ms", PROBE_MS, "interval of the sender's GRTT probes")
        .within(0.001, 3_600_000.0)
        .on_sockets(
            Value::Real(SOCKET_PROBE_MS),
            "a LAN transfer lasts seconds: the GRTT comes down from 0.5 s in the first",
        ),
    Param::int(
        "flush_count",
        "rounds",
        1,
        1 << 20,
        FLUSH_COUNT,
        "rounds of FLUSH and watermark request before missing ACKs are given up",
    ),
    Param::switch(
        "cc",
        CC,
        "congestion control (NORM-CC, RFC 5740 5.5.2): probes carry the rate and the limiting \
         receivers, receivers report a TCP-friendly rate from their loss event rate and RTT, the \
         sender paces at the slowest one's, with slow start",
    )
    .on_sockets(
        Value::Derived("on with `rmcast send --rate auto`"),
        "the rate follows the path instead of a fixed --rate",
    ),
    Param::switch(
        "rmcast_header",
        false,
        "on sockets: the packets in rmcast's own header on the group's port instead of RFC 5740 \
         on the port after it (keyed sessions are sealed whole either way)",
    )
    .flag("rmcast-header")
    .sockets_only(),
];

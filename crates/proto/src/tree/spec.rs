//! `dsp`, `csp`, `cp` (seed 001): parameters and their defaults.

use super::Variant;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Range, Value};
use rmcast_wire::Family;

/// `dsp`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const DSP: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "dsp",
        seed: "001 (Paul, Sabnani & Kristol, §3)",
        summary: "designated status protocol: one designated endpoint per region reports its own \
                  status to the source and re-multicasts locally what its region lacks; \
                  block-based selective repeat, periodic complete state",
        family: Family::Tree,
        sockets: true,
        params: DSP_PARAMS,
    },
    deploy: Deployer::Regions(Variant::Dsp),
    module: module_path!(),
};

/// `csp`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const CSP: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "csp",
        seed: "001 (Paul, Sabnani & Kristol, §4)",
        summary: "consolidated status protocol: the local exchange merges its endpoints' status \
                  pessimistically (min LW_r, AND of LOBs, min buffer); the source repairs all",
        family: Family::Tree,
        sockets: true,
        params: DSP_PARAMS,
    },
    deploy: Deployer::Regions(Variant::Csp),
    module: module_path!(),
};

/// `cp`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const CP: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "cp",
        seed: "001 (Paul, Sabnani & Kristol, §5)",
        summary: "combined protocol: optimistic merge (max LW_r, OR of LOBs, min buffer); the \
                  exchange orders an endpoint holding a block to re-multicast it locally",
        family: Family::Tree,
        sockets: true,
        params: DSP_PARAMS,
    },
    deploy: Deployer::Regions(Variant::Cp),
    module: module_path!(),
};

/// Window `L` of blocks in the simulator, in largest round-trip delays.
pub const WINDOW_RTD: f64 = 2.0;
/// Window `L` on sockets, blocks.
pub const SOCKET_WINDOW: u16 = 64;
/// Block payload in the simulator, bytes.
pub const BLOCK_BYTES: usize = 1024;
/// Source peak rate in the simulator, Mbit/s.
pub const RATE_MBPS: f64 = 150.0;
/// Retransmission timeout factor r_f.
pub const R_F: f64 = 1.2;
/// Status interval bounds, ms (the paper: 4-6 ms).
pub const STATUS_MIN_MS: f64 = 4.0;
/// See [`STATUS_MIN_MS`].
pub const STATUS_MAX_MS: f64 = 6.0;
/// Mean status interval on sockets, ms (each interval from 0.8-1.2 × it, i.e. the bounds).
pub const STATUS_MS: f64 = (STATUS_MIN_MS + STATUS_MAX_MS) / 2.0;
/// Round-trip delay inside a region, ms.
pub const LOCAL_RTD_MS: f64 = 1.0;
/// Round-trip delay assumed to every designated receiver on sockets, ms.
pub const SOCKET_RTD_MS: f64 = 20.0;
/// k: blocks of a status's LOB per unit.
pub const KOU: u32 = 8;
/// How long the source keeps answering after the last block, ms.
pub const LINGER_MS: f64 = 200.0;

const WINDOW: Param = Param::new(
    "window",
    "blocks",
    Range::Int {
        min: 0,
        max: u64::MAX,
    },
    Value::Derived("window_rtd × the largest round-trip delay, in blocks"),
    "L: the most outstanding blocks (clamped to [1, 2^20])",
);

const COMMON: [Param; 10] = [
    Param::real(
        "window_rtd",
        "RTDs",
        0.0,
        1e3,
        WINDOW_RTD,
        "without window: L is this many largest round-trip delays' worth of blocks",
    ),
    Param::new(
        "block_bytes",
        "bytes",
        Range::Real {
            min: 1.0,
            max: 65_000.0,
        },
        Value::Int(BLOCK_BYTES as u64),
        "payload of one block",
    ),
    Param::real(
        "rate_mbps",
        "Mbit/s",
        0.001,
        1e6,
        RATE_MBPS,
        "the source's peak rate (the simulator, when not given: the slowest link to a receiver if that is slower)",
    ),
    Param::real(
        "r_f",
        "",
        0.0,
        1e3,
        R_F,
        "r_f: a block is re-multicast when a status r_f × RTD after its sending still lacks it",
    ),
    Param::ms(
        "status_min_ms",
        STATUS_MIN_MS,
        "shortest interval between two statuses of an endpoint",
    )
    .within(0.001, 1e6),
    Param::ms(
        "status_max_ms",
        STATUS_MAX_MS,
        "longest interval between two statuses of an endpoint",
    )
    .within(0.001, 1e6),
    Param::ms(
        "local_rtd_ms",
        LOCAL_RTD_MS,
        "round-trip delay inside a region (local re-multicast hold-off: r_f × this; the simulator, when not given, takes it from the topology)",
    )
    .within(0.0, 1e6),
    Param::int(
        "kou",
        "",
        2,
        32,
        KOU as u64,
        "k: blocks per unit of a status's LOB",
    ),
    Param::new(
        "retx_buffer",
        "blocks",
        Range::Int {
            min: 0,
            max: u64::MAX,
        },
        Value::Derived("L"),
        "retransmission buffer of DSP designated and CP endpoints (clamped to [1, 2^20])",
    ),
    Param::ms(
        "linger_ms",
        LINGER_MS,
        "how long the source keeps answering after the last block",
    ),
];

/// The parameters of `dsp`, `csp` and `cp`: the simulator's, the window with its socket default
/// and flag, and the socket driver's own.
pub const DSP_PARAMS: &[Param] = &[
    WINDOW.flag("window").on_sockets(
        Value::Int(SOCKET_WINDOW as u64),
        "no topology to derive round-trip delays from: 64 blocks",
    ),
    COMMON[0],
    COMMON[1],
    COMMON[2],
    COMMON[3].flag("rf"),
    COMMON[4],
    COMMON[5],
    COMMON[6].flag("local-rtd-ms"),
    COMMON[7],
    COMMON[8],
    COMMON[9],
    Param::ms(
        "rtd_ms",
        SOCKET_RTD_MS,
        "round-trip delay assumed to every reporter: dsp's designated receivers, csp's and cp's local exchanges (the simulator takes it from the topology)",
    )
    .flag("rtd-ms")
    .sockets_only(),
    Param::ms(
        "status_ms",
        STATUS_MS,
        "mean status interval; each drawn from 0.8-1.2 × it (the simulator: status_min_ms..status_max_ms)",
    )
    // Below 1 ms a region of 1,000 receivers would send a million statuses a second.
    .within(1.0, 1000.0)
    .flag("status-ms")
    .sockets_only(),
    Param::choice(
        "designated",
        &["receiver", "relay"],
        DESIGNATED,
        "dsp: each region's designated receiver, one of its receivers (on sockets the lowest node \
         id, in the simulator the closest to the source) or the router above the region (on \
         sockets its `rmcast relay --region R`), a separate host; csp and cp ignore it",
    )
    .flag("designated"),
];

/// Who is a dsp region's designated receiver on sockets by default: one of its receivers.
pub const DESIGNATED: &str = "receiver";

//! `srm` (seed 003, after Floyd et al. 1995 and ns-2): parameters and their defaults.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{choice, Param, ProtocolSpec, Value};
use rmcast_wire::Family;

/// `srm`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const SRM: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "srm",
        seed: "003 (Papadopoulos, Ch. 5; after Floyd et al. 1995 and ns-2)",
        summary: "scalable reliable multicast: gap detection, randomized request and repair \
                  timers scaled by distance, suppression, request back-off, ns-2 adaptive timers",
        family: Family::Srm,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Srm>),
    module: module_path!(),
};

/// Request timer: uniform in [C1·d, (C1+C2)·d].
pub const C1: f64 = 2.0;
/// See [`C1`].
pub const C2: f64 = 2.0;
/// Repair timer: uniform in [D1·d, (D1+D2)·d].
pub const D1: f64 = 1.0;
/// See [`D1`].
pub const D2: f64 = 1.0;
/// Request back-offs after which a member stops asking.
pub const BACKOFF_LIMIT: u32 = 5;
/// Interval of session messages, ms (0: none).
pub const SESSION_INTERVAL_MS: f64 = 1000.0;
/// Each session interval is drawn uniform in [(1 − j)·i, (1 + j)·i] (ns-2's `SRM/session`
/// draws `sessionDelay_ × uniform(0.9, 1.1)`), so members' session messages do not leave
/// together.
pub const SESSION_JITTER: f64 = 0.1;
/// Distance assumed to a member not yet heard from, ms.
pub const DEFAULT_DISTANCE_MS: f64 = 100.0;
/// Interval of session messages on sockets, ms: a LAN's tail loss is found within it (the
/// socket driver stretches it so the group's session messages stay under 5 % of `--rate`).
pub const SOCKET_SESSION_INTERVAL_MS: f64 = 100.0;
/// Distance assumed on sockets before a member is heard from, ms (a LAN's scale).
pub const SOCKET_DEFAULT_DISTANCE_MS: f64 = 1.0;
/// How long a member keeps answering after the last data, ms.
pub const LINGER_MS: f64 = 5000.0;
/// ns-2's adaptive timers (`Agent/SRM/Adaptive`).
pub const ADAPTIVE: bool = false;
/// Where distances come from.
pub const DISTANCES: Distances = Distances::Session;

choice! {
    /// Where members' distances come from (the `distances` key).
    Distances {
        /// Measured from SESSION messages' timestamp echoes (SRM's own mechanism).
        Session = "session",
        /// The topology's true delays, supplied by the driver in the layout.
        Topology = "topology",
    }
}

const fn timer(key: &'static str, default: f64, help: &'static str) -> Param {
    Param::real(key, "", 0.0, 1e6, default, help)
}

/// `srm`'s parameters.
pub const PARAMS: &[Param] = &[
    timer(
        "c1",
        C1,
        "request timer: uniform in [C1·d, (C1+C2)·d], d the distance to the source",
    ),
    timer("c2", C2, "request timer width, see c1"),
    timer(
        "d1",
        D1,
        "repair timer: uniform in [D1·d, (D1+D2)·d], d the distance to the requester",
    ),
    timer("d2", D2, "repair timer width, see d1"),
    Param::switch(
        "adaptive",
        ADAPTIVE,
        "ns-2's adaptive timers (C1, C2, D1, D2 adjusted from duplicates and delay)",
    ),
    Param::int(
        "backoff_limit",
        "",
        0,
        64,
        BACKOFF_LIMIT as u64,
        "request back-offs after which a member stops asking",
    ),
    Param::choice(
        "distances",
        Distances::WORDS,
        DISTANCES.word(),
        "where distances come from: session-message timestamps, or the topology's true delays",
    ),
    Param::ms(
        "session_interval_ms",
        SESSION_INTERVAL_MS,
        "interval of session messages (0: none)",
    )
    .on_sockets(
        Value::Real(SOCKET_SESSION_INTERVAL_MS),
        "a LAN's tail loss is found within one interval; stretched so that the group's \
         session messages stay under 5 % of --rate",
    ),
    Param::real(
        "session_jitter",
        "",
        0.0,
        1.0,
        SESSION_JITTER,
        "each session interval uniform in [(1-j)·i, (1+j)·i] (ns-2: 0.1), so members' \
         session messages do not leave together",
    ),
    Param::ms(
        "default_distance_ms",
        DEFAULT_DISTANCE_MS,
        "distance assumed to a member not yet heard from",
    )
    .on_sockets(
        Value::Real(SOCKET_DEFAULT_DISTANCE_MS),
        "a LAN's scale: 100 ms would hold the first repairs for a tenth of a second",
    ),
    Param::ms(
        "linger_ms",
        LINGER_MS,
        "how long members keep answering after the last data",
    ),
];

//! `rra` (seed 000, Ch. 5, proposed): parameters on sockets. The studies build it with the
//! thesis's timings; scenario files do not (it is not in the simulator's registry), so its
//! parameters exist only as `rmcast send` flags.

use super::{saw, Param};

/// Unfinished messages the sender keeps on sockets.
pub const SOCKET_WINDOW: u64 = 64;

/// `rra`'s parameters.
pub const PARAMS: &[Param] = &[
    Param::int(
        "window",
        "messages",
        1,
        crate::rra::MAX_WINDOW as u64,
        SOCKET_WINDOW,
        "unfinished messages the sender keeps; each names one receiver that reports its state",
    )
    .flag("window")
    .sockets_only(),
    Param::ms(
        "timeout_ms",
        saw::SOCKET_RTO_MS,
        "how long the sender waits for the ACK a DATA or POLL solicited before asking again",
    )
    .within(0.001, 60_000.0)
    .flag("rto-ms")
    .sockets_only(),
];

//! `rra` (seed 000, Ch. 5, proposed): parameters of scenario files and `rmcast send`. The
//! segovia study builds it with the thesis's timings instead.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::saw::spec as saw;
use crate::spec::{Param, ProtocolSpec};
use rmcast_wire::Family;

/// `rra`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const RRA: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "rra",
        seed: "000 (Segovia 1996, Ch. 5, proposed)",
        summary: "round-robin acknowledgment: each data packet names the one receiver that \
                  reports its status; selective multicast repairs, polls for the tail",
        family: Family::Rra,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Rra>),
    module: module_path!(),
};

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
    .flag("window"),
    Param::ms(
        "timeout_ms",
        saw::SOCKET_RTO_MS,
        "how long the sender waits for the ACK a DATA or POLL solicited before asking again",
    )
    .within(0.001, 60_000.0)
    .flag("rto-ms"),
    Param::limit(
        "max_retransmissions",
        "unanswered requests in a row after which the sender gives up on a receiver for the \
         messages it has not confirmed (they count as failed); also bounds each message's repairs",
    ),
];

//! `bap` (seed 000): its row of [`crate::PROTOCOLS`], parameters and their defaults.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::saw::spec as saw;
use crate::spec::{Param, ProtocolSpec};
use rmcast_wire::Family;

/// `bap`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const BAP: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "bap",
        seed: "000 (Segovia 1996, §2.6)",
        summary: "multicast block acknowledgment: window n, sequence numbers mod 2n, cumulative \
                  per-receiver ACKs when n arrive or a delay timer fires, go-back-N retransmission",
        family: Family::Bap,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Bap>),
    module: module_path!(),
};

/// `bap`'s window on sockets: messages in flight before the block ACK.
pub const BAP_WINDOW: u16 = 16;

/// The ACK-delay timeout `t` of `bap` receivers for a sender retransmission timeout `rto`:
/// a quarter of it, so a receiver reports a stalled window well before the sender repeats it
/// (the socket driver announces this value; the simulator's scenarios use the same).
pub fn bap_ack_timeout(rto: core::time::Duration) -> core::time::Duration {
    rto / 4
}

/// The sender retransmission timeout a `bap` ACK-delay timeout `t` was derived from (the
/// inverse of [`bap_ack_timeout`]: what a receiver checks an announced `t` against).
pub fn bap_rto(ack_timeout: core::time::Duration) -> core::time::Duration {
    ack_timeout * 4
}

/// `bap`'s parameters (scenario keys and, but for the retransmission limit, `rmcast send`
/// flags).
pub const PARAMS: &[Param] = &[
    Param::int(
        "window",
        "messages",
        1,
        crate::bap::MAX_WINDOW as u64,
        BAP_WINDOW as u64,
        "n: messages in flight before the block acknowledgment",
    )
    .flag("window"),
    Param::ms(
        "rto_ms",
        saw::SOCKET_RTO_MS,
        "retransmission timeout: the window is sent again when not acknowledged within it",
    )
    // Receivers run their ACK-delay timer at a quarter of it (`bap_ack_timeout`): above a
    // minute a window that does not fill would wait minutes for its acknowledgment.
    .within(1.0, 60_000.0)
    .flag("rto-ms"),
    saw::ACK_DELAY,
    saw::MAX_RETRANSMISSIONS,
];

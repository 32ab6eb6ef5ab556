//! `saw` and `bap` (seed 000): parameters and their defaults.

use super::{Param, Range, Value};

/// Retransmission timeout of the simulated `saw` sender, ms.
pub const TIMEOUT_MS: f64 = 100.0;
/// Retransmission timeout of `saw` and `bap` on sockets, ms (`rmcast send --rto-ms`).
pub const SOCKET_RTO_MS: f64 = 20.0;
/// Retransmission mode of `saw`.
pub const MODE: &str = "multicast";
/// Upper bound of a receiver's random ACK delay, ms (§2.5.1; 0: answer at once).
pub const ACK_DELAY_MAX_MS: f64 = 0.0;
/// Messages the `saw` sender queues before refusing more.
pub const QUEUE_LIMIT: usize = 64;
/// `bap`'s window on sockets: messages in flight before the block ACK.
pub const BAP_WINDOW: u16 = 16;

const TIMEOUT: Param = Param::ms(
    "timeout_ms",
    TIMEOUT_MS,
    "retransmission timeout: the sender repeats a message not acknowledged by everyone within it",
)
.flag("rto-ms")
.on_sockets(
    Value::Real(SOCKET_RTO_MS),
    "the socket driver's retransmission timeout, shared by saw, bap and prmp (its RTO floor)",
);

const ACK_DELAY: Param = Param::ms(
    "ack_delay_max_ms",
    ACK_DELAY_MAX_MS,
    "upper bound of each receiver's uniformly random ACK delay (0: ACK at once)",
)
.within(0.0, ACK_DELAY_LIMIT_MS)
.flag("ack-delay-ms");

/// The longest random ACK delay bound accepted (scenarios, `rmcast send`, and a receiver
/// reading a sender's ANNOUNCE): 10 s, far above any retransmission timeout.
pub const ACK_DELAY_LIMIT_MS: f64 = 10_000.0;

/// The retransmission limit of `saw` and `bap` (scenario files only; the socket driver
/// retransmits without a limit and evicts a silent receiver instead).
const MAX_RETRANSMISSIONS: Param = Param::limit(
    "max_retransmissions",
    "retransmissions of one message after which the sender gives it up (counted as failed)",
);

/// `saw`'s parameters.
pub const PARAMS: &[Param] = &[
    TIMEOUT,
    Param::choice(
        "mode",
        &["multicast", "unicast"],
        MODE,
        "whether a retransmission goes to the group or by unicast to each receiver lacking it",
    ),
    MAX_RETRANSMISSIONS,
    ACK_DELAY,
    Param::new(
        "queue_limit",
        "messages",
        Range::Real { min: 1.0, max: 1e9 },
        Value::Int(QUEUE_LIMIT as u64),
        "messages the sender queues behind the outstanding one before refusing more",
    ),
];

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
pub const BAP_PARAMS: &[Param] = &[
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
        SOCKET_RTO_MS,
        "retransmission timeout: the window is sent again when not acknowledged within it",
    )
    // Receivers run their ACK-delay timer at a quarter of it (`bap_ack_timeout`): above a
    // minute a window that does not fill would wait minutes for its acknowledgment.
    .within(1.0, 60_000.0)
    .flag("rto-ms"),
    ACK_DELAY,
    MAX_RETRANSMISSIONS,
];

//! `saw` (seed 000): its row of [`crate::PROTOCOLS`], parameters and their defaults (`bap`
//! shares its timeouts and ACK delay).

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Range, Value};
use rmcast_wire::Family;

/// `saw`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const SAW: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "saw",
        seed: "000 (Segovia 1996, §2.5)",
        summary: "multicast stop-and-wait: one message outstanding, per-receiver unicast ACKs, \
                  multicast or unicast retransmission, optional random ACK delay",
        family: Family::Saw,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Saw>),
    module: module_path!(),
};

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

pub(crate) const ACK_DELAY: Param = Param::ms(
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
pub(crate) const MAX_RETRANSMISSIONS: Param = Param::limit(
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

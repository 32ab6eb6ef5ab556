//! `ff` (seed 004's full-feedback baseline): parameters and their defaults.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Range, Value};
use rmcast_wire::Family;

/// `ff`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const FF: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "ff",
        seed: "004 (§4 baseline, after Towsley & Mithal)",
        summary: "full feedback: selective-repeat sliding window, every receiver ACKs every \
                  packet, timeout (2 x largest RTT) loss detection, global multicast repair",
        family: Family::Ff,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Ff>),
    module: module_path!(),
};

/// Window `S`, packets.
pub const WINDOW: u64 = 64;
/// Inter-packet gap, ms.
pub const IPG_MS: f64 = 1.0;
/// RTT assumed before the first measurement, ms.
pub const INITIAL_RTT_MS: f64 = 100.0;

pub(crate) const P_WINDOW: Param = Param::int(
    "window",
    "packets",
    1,
    crate::ff::MAX_WINDOW,
    WINDOW,
    "S: the sender's window and the receivers' buffer (-IW variants: the transfer length)",
);
pub(crate) const P_IPG: Param = Param::ms(
    "ipg_ms",
    IPG_MS,
    "IPG: the gap between two transmissions of the sender",
)
.within(0.0, 1e6);
pub(crate) const P_INITIAL_RTT: Param = Param::ms(
    "initial_rtt_ms",
    INITIAL_RTT_MS,
    "round-trip time assumed before the first measurement",
);

/// The inter-packet gap on sockets (`ff` and `prmp`), where the pacer's rate sets it.
pub(crate) const P_IPG_US: Param = Param::new(
    "ipg_us",
    "µs",
    Range::Int {
        min: 1,
        max: u64::MAX,
    },
    Value::Derived("the time one --datagram-size datagram takes at --rate; 10 µs unpaced"),
    "IPG on sockets: the gap between two transmissions",
)
.flag("ipg-us")
.sockets_only();

/// The floor of the retransmission timeout `ff` and `prmp` measure on sockets (the socket
/// driver's retransmission timeout, shared with `saw` and `bap`).
pub(crate) const P_RTO_MIN: Param = Param::ms(
    "rto_min_ms",
    crate::saw::spec::SOCKET_RTO_MS,
    "on sockets: the floor of the retransmission timeout measured from round trips",
)
.flag("rto-ms")
.sockets_only();

/// `ff`'s parameters.
pub const PARAMS: &[Param] = &[
    P_WINDOW.flag("window"),
    P_IPG,
    P_IPG_US,
    P_INITIAL_RTT,
    P_RTO_MIN,
];

//! `prmp` (seed 004, §4's settings where the paper gives them): parameters and their defaults.

use crate::deploy::laid_out;
use crate::ff::spec as ff;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Value};
use core::time::Duration;
use rmcast_wire::Family;

/// `prmp`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const PRMP: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "prmp",
        seed: "004 (Barcellos & Ezhilchelvan, §2–3)",
        summary: "polling-based reliable multicast (PF): children answer only when polled; polls \
                  planned per epoch so responses arrive at rate RR; NACK collection with MTR \
                  multicast/unicast repair; silent children removed",
        family: Family::Prmp,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Prmp>),
    module: module_path!(),
};

/// Window `S`, packets (§4: 64); the same default as `ff`'s.
pub const WINDOW: u64 = ff::WINDOW;
/// Inter-packet gap in the simulator, ms (§4: 1 ms).
pub const IPG_MS: f64 = ff::IPG_MS;
/// Epoch length ε, ms (§4: 10 ms).
pub const EPOCH_MS: f64 = 10.0;
/// Response rate RR, responses per second (§4: RR = ITR = 1500/s).
pub const RESPONSE_RATE: u64 = 1500;
/// Multicast threshold ratio MTR (§4: 20 %).
pub const MTR: f64 = 0.2;
/// Consecutive unanswered polls after which a child is removed (rmcast's choice; the paper
/// gives none).
pub const MAX_SILENT_POLLS: u32 = 10;
/// On sockets, consecutive unanswered polls before removal; 0 = never.
pub const SOCKET_SILENT_POLLS: u32 = 0;
/// RTT assumed before the first measurement, ms (rmcast's choice).
pub const INITIAL_RTT_MS: f64 = ff::INITIAL_RTT_MS;

/// [`EPOCH_MS`] as a duration.
pub fn epoch() -> Duration {
    Duration::from_secs_f64(EPOCH_MS / 1e3)
}

/// `prmp`'s parameters.
pub const PARAMS: &[Param] = &[
    ff::P_WINDOW.flag("window"),
    ff::P_IPG,
    ff::P_IPG_US,
    Param::ms(
        "epoch_ms",
        EPOCH_MS,
        "ε: polls are planned per epoch so that at most RR·ε responses are due in one",
    )
    .within(0.001, 1e6)
    .flag("epoch-ms"),
    Param::int(
        "response_rate",
        "1/s",
        1,
        1_000_000_000,
        RESPONSE_RATE,
        "RR: poll responses per second the sender plans for (what its host absorbs)",
    )
    .flag("response-rate"),
    Param::real(
        "mtr",
        "",
        0.0,
        1.0,
        MTR,
        "MTR: a repair goes by multicast when at least this share of the children lack it",
    )
    .flag("mtr"),
    Param::int(
        "max_silent_polls",
        "polls",
        1,
        u32::MAX as u64,
        MAX_SILENT_POLLS as u64,
        "consecutive unanswered polls after which a child is removed",
    ),
    Param::int(
        "silent_polls",
        "polls",
        0,
        u32::MAX as u64,
        SOCKET_SILENT_POLLS as u64,
        "on sockets: consecutive unanswered polls after which a child is removed, 0 = never \
         (a receiver stalled for 0.6 s was removed although alive; --evict-after removes dead ones)",
    )
    .flag("silent-polls")
    .sockets_only(),
    ff::P_INITIAL_RTT,
    ff::P_RTO_MIN,
    Param::switch(
        "relays",
        false,
        "multi-level PRMP (beyond seed 004): the router above each group of receivers relays \
         (unless it hosts a receiver itself), the polling parent of the receivers and relays \
         below it and a child of the nearest relay above it, else of the sender; relays nest",
    )
    .on_sockets(
        Value::Derived("on for receivers started with `rmcast recv --region R`"),
        "region R's relay is an `rmcast relay --region R` between them and the sender",
    ),
];

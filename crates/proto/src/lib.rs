//! # rmcast-proto — the sans-IO protocol engine
//!
//! Every reliable-multicast protocol in rmcast is written once here, as a deterministic state
//! machine behind the [`Agent`] trait. A *driver* — the discrete-event simulator in
//! `rmcast-sim`, the socket loop in `rmcast-net`, or the tiny [`testkit`] loop — feeds an agent
//! packets and timer expiries and drains what it wants to send, the deadline it wants to be
//! woken at, and the events it reports.
//!
//! ## What this crate must never do
//!
//! * read a clock: time comes in as the `now: Time` argument of each call;
//! * open a socket, spawn a thread, sleep, or do any I/O;
//! * use ambient randomness: each agent owns a seeded [`rng::AgentRng`] handed to it;
//! * panic on anything that arrives in a packet: malformed input is counted in
//!   [`Stats::malformed`] and dropped.
//!
//! ## Layout
//!
//! * [`Time`], [`NodeId`], [`GroupId`], [`Dest`], [`Transmit`], [`Event`], [`Stats`] and the
//!   [`Agent`] / [`RouterAgent`] traits — the API every driver and protocol shares;
//! * shared building blocks, written once: [`window`] (sequence window with received bitmap),
//!   [`rtt`] (smoothed RTT and RTO), [`timer`] (a keyed timer set), [`retx`] (retransmission
//!   buffer), [`rng`] (seeded per-agent randomness);
//! * one module per protocol family: [`saw`], [`bap`], [`rra`];
//! * [`testkit`]: a minimal deterministic in-process driver for protocol tests.

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod agent;
mod time;

pub mod bap;
pub mod ff;
pub mod lms;
pub mod metrics;
pub mod pacing;
pub mod pgm;
pub mod prmp;
pub mod retx;
pub mod rng;
pub mod rra;
pub mod rtt;
pub mod saw;
pub mod sendq;
pub mod srm;
pub mod testkit;
pub mod timer;
pub mod tree;
pub mod window;
pub mod xtp;

pub use agent::{
    duration_from_secs, hold, queue_transmit, Agent, Dest, Event, GroupId, IfaceId, NodeId,
    RouteDecision, RouterAgent, RouterTransmit, SendError, Stats, Transmit,
};
pub use time::Time;

/// Re-exported so users of the API do not need their own `bytes` dependency.
pub use bytes::Bytes;

/// A protocol this build implements: name on the command line, one-line description, the seed
/// it comes from.
#[derive(Debug, Clone, Copy)]
pub struct ProtocolInfo {
    pub name: &'static str,
    pub seed: &'static str,
    pub summary: &'static str,
}

/// Every implemented protocol, for `rmcast protocols` and for drivers that select by name.
pub const PROTOCOLS: &[ProtocolInfo] = &[
    ProtocolInfo {
        name: "saw",
        seed: "000 (Segovia 1996, §2.5)",
        summary: "multicast stop-and-wait: one message outstanding, per-receiver unicast ACKs, \
                  multicast or unicast retransmission, optional random ACK delay",
    },
    ProtocolInfo {
        name: "bap",
        seed: "000 (Segovia 1996, §2.6)",
        summary: "multicast block acknowledgment: window n, sequence numbers mod 2n, cumulative \
                  per-receiver ACKs when n arrive or a delay timer fires, go-back-N retransmission",
    },
    ProtocolInfo {
        name: "rra",
        seed: "000 (Segovia 1996, Ch. 5, proposed)",
        summary: "round-robin acknowledgment: each data packet names the one receiver that \
                  reports its status; selective multicast repairs, polls for the tail",
    },
    ProtocolInfo {
        name: "dsp",
        seed: "001 (Paul, Sabnani & Kristol, §3)",
        summary: "designated status protocol: one designated endpoint per region reports its own \
                  status to the source and re-multicasts locally what its region lacks; \
                  block-based selective repeat, periodic complete state",
    },
    ProtocolInfo {
        name: "csp",
        seed: "001 (Paul, Sabnani & Kristol, §4)",
        summary: "consolidated status protocol: the local exchange merges its endpoints' status \
                  pessimistically (min LW_r, AND of LOBs, min buffer); the source repairs all",
    },
    ProtocolInfo {
        name: "cp",
        seed: "001 (Paul, Sabnani & Kristol, §5)",
        summary: "combined protocol: optimistic merge (max LW_r, OR of LOBs, min buffer); the \
                  exchange orders an endpoint holding a block to re-multicast it locally",
    },
    ProtocolInfo {
        name: "prmp",
        seed: "004 (Barcellos & Ezhilchelvan, §2–3)",
        summary: "polling-based reliable multicast (PF): children answer only when polled; polls \
                  planned per epoch so responses arrive at rate RR; NACK collection with MTR \
                  multicast/unicast repair; silent children removed",
    },
    ProtocolInfo {
        name: "srm",
        seed: "003 (Papadopoulos, Ch. 5; after Floyd et al. 1995 and ns-2)",
        summary: "scalable reliable multicast: gap detection, randomized request and repair \
                  timers scaled by distance, suppression, request back-off, ns-2 adaptive timers",
    },
    ProtocolInfo {
        name: "pgm",
        seed: "003 (Papadopoulos, Ch. 5; after RFC 3208)",
        summary: "PGM essentials: NAKs confirmed by NCFs, network elements keep per-packet \
                  repair state and forward RDATA only where asked; the source repairs every NAK",
    },
    ProtocolInfo {
        name: "lms",
        seed: "003 (Papadopoulos, Ch. 4-5)",
        summary: "light-weight multicast services: routers keep a replier link, requests turn \
                  at the turning point, the replier's repair is subcast down the asking subtree",
    },
    ProtocolInfo {
        name: "ff",
        seed: "004 (§4 baseline, after Towsley & Mithal)",
        summary: "full feedback: selective-repeat sliding window, every receiver ACKs every \
                  packet, timeout (2 x largest RTT) loss detection, global multicast repair",
    },
    ProtocolInfo {
        name: "xtp",
        seed: "002 (Johnstone & Williams 1997, SandiaXTP / XTP 4.0)",
        summary: "transmitter-driven multicast: FIRST+SREQ group set-up, CNTL status from every \
                  receiver on SREQ, FASTNAK, go-back-N or selective repeat, WTIMER back-off with \
                  synchronizing handshake, CTIMEOUT abort, block on acknowledgment per write",
    },
];

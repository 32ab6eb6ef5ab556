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
//! * one module per protocol family: [`saw`], [`bap`], [`rra`], [`tree`], [`prmp`], [`ff`],
//!   [`xtp`], [`srm`], [`pgm`], [`lms`], [`norm`], each with its row of [`PROTOCOLS`] in its
//!   `spec.rs`; the families whose set-up depends on the network lay their roles out with a
//!   `deploy` over a [`deploy::Layout`];
//! * [`testkit`]: a minimal deterministic in-process driver for protocol tests.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod agent;
mod budget;
mod config;
mod outbox;
mod time;

pub mod bap;
pub mod deploy;
pub mod fec;
pub mod ff;
pub mod lms;
pub mod norm;
pub mod pacing;
pub mod pgm;
pub mod prmp;
pub mod protocols;
pub mod retx;
pub mod rng;
pub mod roster;
pub mod rra;
pub mod rtt;
pub mod saw;
pub mod sendq;
pub mod seqmap;
pub mod spec;
pub mod srm;
pub mod testkit;
pub mod tfmcc;
pub mod timer;
pub mod tree;
pub mod window;
pub mod xtp;

pub use agent::{
    duration_from_secs, hold, Agent, Dest, Event, Gauge, GroupId, IfaceId, MessageDone, NodeId,
    RouteDecision, RouterAgent, RouterTransmit, SendError, SenderAgent, Stats, Transmit,
};
pub use outbox::Outbox;
pub use time::Time;

/// Re-exported so users of the API do not need their own `bytes` dependency.
pub use bytes::Bytes;

/// A protocol this build implements (the spec table's entry type, under its former name).
pub type ProtocolInfo = spec::ProtocolSpec;

/// Every implemented protocol, in the order `rmcast protocols` lists them: each its module's
/// [`protocols::ProtocolDef`] (spec row, deployment, sample messages). The simulator's
/// registry, the socket driver's protocol list, `rmcast protocols` and `rmcast send`'s flags
/// are built from it. A new protocol adds `pub mod x;` above and its row here, the only edits
/// in this crate outside its own module (ARCHITECTURE.md, "Where a new protocol goes").
pub const PROTOCOLS: &[protocols::ProtocolDef] = &[
    saw::spec::SAW,
    bap::spec::BAP,
    rra::spec::RRA,
    tree::spec::DSP,
    tree::spec::CSP,
    tree::spec::CP,
    prmp::spec::PRMP,
    srm::spec::SRM,
    pgm::spec::PGM,
    lms::spec::LMS,
    ff::spec::FF,
    xtp::spec::XTP,
    norm::spec::NORM,
];

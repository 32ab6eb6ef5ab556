//! # rmcast-net — real-network driver
//!
//! Drives `rmcast-proto` agents over real UDP/IP multicast sockets with a real clock: one
//! event loop (mio) per endpoint, feeding the agent datagrams and deadlines
//! (`Time` = nanoseconds since the endpoint started) and draining what it wants to send.
//! Around the agent it adds what a real network needs and a simulator does not: a session
//! layer that finds and accounts for receivers ([`sender`], [`receiver`]; wire family 15),
//! rate pacing, file and stream framing with BLAKE3 verification, optional per-packet
//! authentication and encryption ([`secure`]), and loss injection ([`loss`]).
//!
//! ## What this crate must never do
//!
//! * contain protocol logic: every protocol decision is the agent's;
//! * panic on anything that arrives from the network;
//! * leave a half-written file looking complete.

// Unsafe code is denied everywhere but in the socket module, which calls the C library
// (recvmmsg/sendmmsg, interface indexes). Signals go through signal-hook (`interrupt`).
// (`forbid` cannot be relaxed per module, hence `deny`.)
#![deny(unsafe_code)]
// Nothing from the network may panic the driver: no `unwrap`/`expect`, no indexing or
// slicing that can go out of bounds (tests may; see clippy.toml).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![warn(missing_docs)]

pub mod agents;
pub mod clock;
mod digest;
pub mod endpoint;
pub mod error;
pub mod frame;
pub mod framing;
pub mod interrupt;
pub mod loss;
pub mod normwire;
pub mod open;
pub mod outdir;
pub mod pgmwire;
pub mod receiver;
pub mod relay;
pub mod resume;
pub mod secure;
pub mod sender;
#[allow(unsafe_code)]
pub mod socket;

pub use error::NetError;

//! The rmcast lab: scenarios on real sockets in Linux network namespaces. [`emu`] is its link
//! emulator: each link (or bus) of a scenario a forwarder between the link's interfaces that
//! holds frames for the link's delay, serialises them at its bandwidth through a drop-tail
//! queue and drops them by the scenario's loss models, in the lab's own process.

#![deny(unsafe_code)]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod emu;

//! # rmcast-lab — the lab beside the library
//!
//! Everything that builds a network to run rmcast on, rather than rmcast itself:
//!
//! * hosts in Linux network namespaces on bridges, routers between them, loss per Ethernet
//!   frame and bottlenecks ([`netns`]);
//! * `rmcast testbed`, a scenario's topology run on them ([`testbed`]), and `--agree`, the
//!   same file run N times each way and judged metric by metric ([`agree`]);
//! * the sockets of the `xtp` study's real-network cells ([`xtp`]);
//! * the link emulator ([`emu`]): each link (or bus) of a scenario a forwarder between the
//!   link's interfaces that holds frames for the link's delay, serialises them at its
//!   bandwidth through a drop-tail queue and drops them by the scenario's loss models, in the
//!   lab's own process;
//! * child processes with a deadline ([`proc`]), which all of the lab shares.
//!
//! The library crates (`rmcast-net` and below, `rmcast-repro`) never depend on it; the
//! command line and the benchmarks do.
//!
//! ## What this crate must never do
//!
//! * leave namespaces, bridges or child processes behind when a run ends or fails;
//! * touch an address outside the namespaces it creates.

#![deny(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![warn(missing_docs)]

pub mod agree;
pub mod emu;
pub mod netns;
pub mod proc;
pub mod testbed;
pub mod xtp;

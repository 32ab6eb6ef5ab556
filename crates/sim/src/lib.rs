//! # rmcast-sim — discrete-event simulator
//!
//! Runs `rmcast-proto` agents on a simulated network: an event kernel ordered by
//! (time, insertion order) in integer nanoseconds, point-to-point links, a shared Ethernet bus,
//! multicast routing, router hooks, loss models, topology generators, scenarios and sweeps.
//!
//! ## What this crate must never do
//!
//! * read the wall clock or ambient randomness inside a run: a run is a pure function of
//!   (scenario, seed), whatever the thread count;
//! * reach into an agent's internals: agents are driven only through the `Agent` API and
//!   observed only through their events and stats;
//! * touch a real socket.
//!
//! ## Layout
//!
//! * [`kernel`]: the event queue;
//! * [`Network`] (nodes, [`LinkConfig`] links, [`BusConfig`] buses) and [`Sim`] (agents,
//!   groups, [`loss`] rules, host receive queues, [`Traffic`], [`Stop`]) — the library API the
//!   study reproductions use;
//! * the bus follows seed 000 §3 (see [`BusConfig`] and `sim.rs`).

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod bench;
pub mod kernel;
pub mod loss;
mod network;
pub mod oracle;
mod params;
pub mod pcap;
pub mod registry;
mod rng;
mod routing;
pub mod scenario;
pub mod scheme;
pub mod shard;
mod sim;
pub mod topo;
pub mod unreliable;

pub use loss::{GilbertElliott, KindFilter, LossModel, LossRule, LossSite};
pub use network::{
    Backoff, BusConfig, Jitter, LinkConfig, NetError, Network, NodeKind, RoutingMetric,
};
pub use rng::SimRng;
pub use scheme::Scheme;
pub use sim::{
    Counters, LossRecord, NodeMetrics, Outcome, PacketRecord, RecoveryRecord, Sim, SimError, Stop,
    Traffic,
};

#[cfg(test)]
mod tests;

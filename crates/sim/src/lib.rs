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
//! (Under construction: see the simulator issue.)

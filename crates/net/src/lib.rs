//! # rmcast-net — real-network driver
//!
//! Drives `rmcast-proto` agents over real UDP/IP multicast sockets with a real clock.
//!
//! ## What this crate must never do
//!
//! * contain protocol logic: every protocol decision is the agent's;
//! * panic on anything that arrives from the network;
//! * leave a half-written file looking complete.
//!
//! (Under construction: see the real-network issue.)

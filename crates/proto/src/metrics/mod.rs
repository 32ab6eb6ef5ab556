//! Metrics computed from agents' [`Event`](crate::Event)s, as pure functions (no driver, no
//! clock). One module per study whose published numbers rmcast reproduces.

pub mod segovia;

#![no_main]
//! The `saw` family's decoder (see `rmcast_wire_fuzz::family`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rmcast_wire_fuzz::family(rmcast_wire::Family::Saw, data));

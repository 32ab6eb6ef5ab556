#![no_main]
//! The sealed envelope (`rmcast_net::secure::Sealer`): see `rmcast_net_fuzz::sealed`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rmcast_net_fuzz::sealed(data));

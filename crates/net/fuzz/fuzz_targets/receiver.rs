#![no_main]
//! The receiver's packet handling with a live session: see `rmcast_net_fuzz::receiver`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rmcast_net_fuzz::receiver(data));

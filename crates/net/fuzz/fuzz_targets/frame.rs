#![no_main]
//! The application framing (`rmcast_net::frame::Frame`): see `rmcast_net_fuzz::frame`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rmcast_net_fuzz::frame(data));

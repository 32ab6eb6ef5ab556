#![no_main]
//! Whole datagrams, header included: `Packet::decode` must never panic, and whatever it
//! accepts must re-encode to exactly the input bytes and decode again to the same packet.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rmcast_wire_fuzz::check(data);
});

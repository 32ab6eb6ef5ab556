#![no_main]
//! Coverage-guided fuzzing of the datagram decoder: it must never panic, and whatever it
//! accepts must re-encode to exactly the input bytes.
use libfuzzer_sys::fuzz_target;
use rmcast_wire::{Envelope, Packet};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::decode(data) {
        let env = Envelope { session: p.header.session, source: p.header.source, flags: p.header.flags };
        let again = Packet::to_vec(env, &p.message).expect("accepted packet re-encodes");
        assert_eq!(again, data);
    }
});

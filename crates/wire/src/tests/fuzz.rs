//! The decoder against a million random and mutated inputs.

use super::*;

/// Feeds the decoder 1,000,000 seeded inputs — purely random datagrams, and valid packets
/// (one of every kind, `samples.rs`) with random mutations (bit flips, byte overwrites,
/// truncation, extension, header-field splices) — and checks it never panics and that
/// whatever it accepts re-encodes to the same bytes.
#[test]
fn decoder_survives_one_million_random_and_mutated_inputs() {
    const N: usize = 1_000_000;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed_0001);
    let seeds: Vec<Vec<u8>> = crate::samples::every_kind()
        .iter()
        .map(|(env, m)| Packet::to_vec(*env, m).unwrap())
        .collect();
    let mut accepted = 0usize;
    let mut buf = Vec::with_capacity(4096);
    for i in 0..N {
        buf.clear();
        if i % 4 == 0 {
            let len = rng.random_range(0..200usize);
            buf.resize(len, 0);
            rng.fill_bytes(&mut buf);
            if len >= 2 && rng.random_bool(0.5) {
                buf[..2].copy_from_slice(&MAGIC.to_be_bytes());
            }
        } else {
            buf.extend_from_slice(&seeds[i % seeds.len()]);
            for _ in 0..rng.random_range(1..4) {
                match rng.random_range(0..6) {
                    0 => {
                        let j = rng.random_range(0..buf.len());
                        buf[j] ^= 1 << rng.random_range(0..8);
                    }
                    1 => {
                        let j = rng.random_range(0..buf.len());
                        buf[j] = rng.random();
                    }
                    2 => {
                        let n = rng.random_range(0..=buf.len());
                        buf.truncate(n);
                    }
                    3 => {
                        for _ in 0..rng.random_range(1..64) {
                            buf.push(rng.random());
                        }
                    }
                    4 if buf.len() >= HEADER_LEN => {
                        let v: u32 = rng.random();
                        buf[16..20].copy_from_slice(&v.to_be_bytes());
                    }
                    _ if buf.len() >= HEADER_LEN => {
                        let j = rng.random_range(0..HEADER_LEN);
                        buf[j] = rng.random_range(0..4);
                    }
                    _ => {}
                }
                if buf.is_empty() {
                    break;
                }
            }
        }
        if let Ok(p) = Packet::decode(&buf) {
            accepted += 1;
            let env = Envelope {
                session: p.header.session,
                source: p.header.source,
                flags: p.header.flags,
            };
            assert_eq!(
                Packet::to_vec(env, &p.message).unwrap(),
                buf,
                "accepted input must re-encode identically"
            );
        }
    }
    // Both branches must have been exercised: some inputs decode, most do not.
    assert!(accepted > 1_000 && accepted < N / 2, "accepted {accepted}");
    println!("decoder fuzz: {N} inputs, {accepted} accepted, no panic");
}

//! The decoder against a million random and mutated inputs.

use super::*;

/// Feeds the decoder 1,000,000 seeded inputs — purely random datagrams, and valid packets
/// with random mutations (bit flips, byte overwrites, truncation, extension, header-field
/// splices) — and checks it never panics and that whatever it accepts re-encodes to the
/// same bytes.
#[test]
fn decoder_survives_one_million_random_and_mutated_inputs() {
    const N: usize = 1_000_000;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed_0001);
    let seeds: Vec<Vec<u8>> = {
        let env = Envelope {
            session: 1,
            source: 2,
            flags: 0,
        };
        let payload = vec![0xAB; 300];
        vec![
            Packet::to_vec(env, &Message::Saw(saw::Message::Ack { seq: 1 })).unwrap(),
            Packet::to_vec(
                env,
                &Message::Bap(bap::Message::Data {
                    seq: 7,
                    first: 3,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(env, &Message::Bap(bap::Message::Ack { seq: 19 })).unwrap(),
            Packet::to_vec(
                env,
                &Message::Rra(rra::Message::Data {
                    seq: 1_000,
                    low: 990,
                    acker: 4,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Rra(rra::Message::Ack {
                    cum: 40,
                    upto: 57,
                    bitmap: &[0x5a, 0x01, 0x01],
                }),
            )
            .unwrap(),
            Packet::to_vec(env, &Message::Rra(rra::Message::Poll { upto: 9, low: 2 })).unwrap(),
            Packet::to_vec(
                env,
                &Message::Prmp(prmp::Message::DataPoll {
                    seq: 77,
                    ts: 123_456_789,
                    poll_seq: 79,
                    cld: prmp::ChildList::from_raw(&[0, 0, 0, 1, 0, 0, 0, 9]).unwrap(),
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Prmp(prmp::Message::Resp {
                    ts: 5_000,
                    seq: 80,
                    le: 70,
                    hr: 90,
                    bitmap: &[0xf0, 0x0f, 0x01],
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Prmp(prmp::Message::Poll {
                    ts: 9,
                    seq: 3,
                    cld: prmp::ChildList::from_raw(&[0, 0, 0, 4]).unwrap(),
                }),
            )
            .unwrap(),
            Packet::to_vec(env, &Message::Ff(ff::Message::Ack { seq: 12, ts: 34 })).unwrap(),
            Packet::to_vec(
                env,
                &Message::Xtp(xtp::Message::Data {
                    seq: 41,
                    sync: 3,
                    options: xtp::opt::SREQ | xtp::opt::EOM,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Xtp(xtp::Message::Cntl(xtp::Status {
                    rseq: 40,
                    echo: 3,
                    options: 0,
                    alloc: 104,
                    spans: xtp::Spans::from_raw(&[
                        0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0, 45, 0, 0, 0, 0, 0, 0, 0, 50,
                        0, 0, 0, 0, 0, 0, 0, 51,
                    ])
                    .unwrap(),
                })),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Xtp(xtp::Message::First {
                    seq: 0,
                    sync: 1,
                    options: xtp::opt::SREQ | xtp::opt::MULTI | xtp::opt::FASTNAK,
                    spec: xtp::TrafficSpec {
                        service: xtp::Service::ReliableMulticast,
                        retx: xtp::Retx::Selective,
                        maxdata: 1448,
                        rate: 0,
                        window: 64,
                    },
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Srm(srm::Message::Repair {
                    sender: 0,
                    requester: 5,
                    round: 1,
                    seq: 44,
                    dist_ns: 1_000_000,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Srm(srm::Message::Session {
                    ts: 77,
                    next_seq: 12,
                    entries: srm::SessionEntries::from_raw(&[0x11; 40]).unwrap(),
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Pgm(pgm::Message::Spm {
                    spm_seq: 3,
                    trail: 10,
                    lead: 20,
                }),
            )
            .unwrap(),
            Packet::to_vec(env, &Message::Pgm(pgm::Message::Nak { seq: 9 })).unwrap(),
            Packet::to_vec(
                env,
                &Message::Lms(lms::Message::Dreq {
                    seq: 8,
                    requester: 4,
                    tp: 2,
                    tp_iface: 1,
                    attempt: 1,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Lms(lms::Message::Repair {
                    seq: 8,
                    tp: 2,
                    tp_iface: 1,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Tree(tree::Message::Status(tree::Status {
                    vc: 1,
                    id: 3,
                    k: 2,
                    l: 21,
                    lw_r: 400,
                    buffer_available: 12,
                    lob: &[0xff, 0x0f, 0x10],
                })),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Tree(tree::Message::Data {
                    mvci: 1,
                    seq: 401,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Saw(saw::Message::Data {
                    seq: 0,
                    payload: &payload,
                }),
            )
            .unwrap(),
            Packet::to_vec(
                env,
                &Message::Saw(saw::Message::Data {
                    seq: 1,
                    payload: &[],
                }),
            )
            .unwrap(),
        ]
    };
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

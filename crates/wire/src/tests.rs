use super::*;
use proptest::prelude::*;
use rand::{Rng, RngCore, SeedableRng};

fn env_strategy() -> impl Strategy<Value = Envelope> {
    (
        any::<u32>(),
        any::<u32>(),
        prop_oneof![Just(0u8), Just(FLAG_RETRANSMISSION)],
    )
        .prop_map(|(session, source, flags)| Envelope {
            session,
            source,
            flags,
        })
}

fn saw_strategy() -> impl Strategy<Value = (u8, Option<Vec<u8>>)> {
    (
        0u8..=1,
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..2048)),
    )
}

proptest! {
    #[test]
    fn saw_round_trip(env in env_strategy(), (seq, payload) in saw_strategy()) {
        let msg = match &payload {
            Some(p) => Message::Saw(saw::Message::Data { seq, payload: p }),
            None => Message::Saw(saw::Message::Ack { seq }),
        };
        let bytes = Packet::to_vec(env, &msg).unwrap();
        prop_assert_eq!(bytes.len(), Packet::encoded_len(&msg));
        let p = Packet::decode(&bytes).unwrap();
        prop_assert_eq!(p.header.session, env.session);
        prop_assert_eq!(p.header.source, env.source);
        prop_assert_eq!(p.header.flags, env.flags);
        prop_assert_eq!(p.header.payload_len as usize, bytes.len() - HEADER_LEN);
        prop_assert_eq!(p.message, msg);
    }

    #[test]
    fn any_prefix_of_a_valid_packet_is_rejected(env in env_strategy(), (seq, payload) in saw_strategy(), cut in 0usize..4096) {
        let msg = match &payload {
            Some(p) => Message::Saw(saw::Message::Data { seq, payload: p }),
            None => Message::Saw(saw::Message::Ack { seq }),
        };
        let bytes = Packet::to_vec(env, &msg).unwrap();
        let cut = cut % bytes.len();
        prop_assert!(Packet::decode(&bytes[..cut]).is_err());
    }
}

fn bap_strategy() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        (
            any::<u16>(),
            any::<u16>(),
            proptest::collection::vec(any::<u8>(), 0..2048)
        )
            .prop_map(|(seq, first, p)| Message::Bap(bap::Message::Data {
                seq,
                first,
                payload: Vec::leak(p),
            })),
        any::<u16>().prop_map(|seq| Message::Bap(bap::Message::Ack { seq })),
    ]
}

fn rra_strategy() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        (
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..2048)
        )
            .prop_map(|(seq, back, acker, p)| Message::Rra(rra::Message::Data {
                seq,
                low: seq.saturating_sub(back % 1_000),
                acker,
                payload: Vec::leak(p),
            })),
        (
            any::<u64>(),
            0u64..2_000,
            proptest::collection::vec(any::<u8>(), 0..250)
        )
            .prop_map(|(cum, span, bits)| {
                let cum = cum % (u64::MAX / 2);
                let upto = (cum + span).saturating_sub(1);
                let need = rra::bitmap_bytes(cum, upto) as usize;
                let bits = &bits[..bits.len().min(need)];
                Message::Rra(rra::Message::Ack {
                    cum,
                    upto,
                    bitmap: Vec::leak(bits.to_vec()),
                })
            }),
        (any::<u64>(), any::<u64>()).prop_map(|(upto, back)| Message::Rra(rra::Message::Poll {
            upto,
            low: upto.saturating_sub(back % 100),
        })),
    ]
}

proptest! {
    #[test]
    fn bap_and_rra_round_trip(env in env_strategy(), msg in prop_oneof![bap_strategy(), rra_strategy()]) {
        let bytes = Packet::to_vec(env, &msg).unwrap();
        prop_assert_eq!(bytes.len(), Packet::encoded_len(&msg));
        let p = Packet::decode(&bytes).unwrap();
        prop_assert_eq!(p.header.session, env.session);
        prop_assert_eq!(p.header.source, env.source);
        prop_assert_eq!(p.header.flags, env.flags);
        prop_assert_eq!(p.message, msg);
    }

    #[test]
    fn bap_and_rra_prefixes_are_rejected(env in env_strategy(), msg in prop_oneof![bap_strategy(), rra_strategy()], cut in 0usize..4096) {
        let bytes = Packet::to_vec(env, &msg).unwrap();
        let cut = cut % bytes.len();
        prop_assert!(Packet::decode(&bytes[..cut]).is_err());
    }
}

#[test]
fn rra_invariants_are_enforced_both_ways() {
    let env = Envelope::default();
    let bad = [
        Message::Rra(rra::Message::Data {
            seq: 5,
            low: 6,
            acker: 1,
            payload: b"",
        }),
        Message::Rra(rra::Message::Poll { upto: 5, low: 7 }),
        Message::Rra(rra::Message::Ack {
            cum: 9,
            upto: 5,
            bitmap: &[],
        }),
        Message::Rra(rra::Message::Ack {
            cum: 0,
            upto: 8,
            bitmap: &[0, 0],
        }),
    ];
    for m in &bad {
        assert!(
            matches!(
                Packet::to_vec(env, m),
                Err(EncodeError::InvalidField { .. })
            ),
            "{m:?}"
        );
    }
    // The same violations arriving on the wire are typed decode errors: build a valid ACK
    // and corrupt its cum field past upto + 1.
    let ok = Message::Rra(rra::Message::Ack {
        cum: 0,
        upto: 8,
        bitmap: &[0xff],
    });
    let mut b = Packet::to_vec(env, &ok).unwrap();
    assert!(Packet::decode(&b).is_ok());
    b[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&100u64.to_be_bytes());
    assert!(matches!(
        Packet::decode(&b),
        Err(DecodeError::InvalidField {
            field: "rra.cum",
            ..
        })
    ));
    // A bitmap length claiming more bytes than the datagram holds is truncation.
    let mut b = Packet::to_vec(env, &ok).unwrap();
    b[HEADER_LEN + 16..HEADER_LEN + 18].copy_from_slice(&500u16.to_be_bytes());
    assert!(matches!(
        Packet::decode(&b),
        Err(DecodeError::Truncated { .. })
    ));
    // Unknown kinds name their family.
    let mut b = Packet::to_vec(env, &Message::Bap(bap::Message::Ack { seq: 1 })).unwrap();
    b[4] = 9;
    assert_eq!(
        Packet::decode(&b),
        Err(DecodeError::UnknownKind {
            family: Family::Bap,
            kind: 9
        })
    );
}

#[test]
fn bap_and_rra_classes() {
    let env = Envelope {
        flags: FLAG_RETRANSMISSION,
        ..Envelope::default()
    };
    let d = Packet::to_vec(
        env,
        &Message::Bap(bap::Message::Data {
            seq: 0,
            first: 0,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(Header::parse(&d).unwrap().class(), PacketClass::RepairData);
    let d = Packet::to_vec(
        Envelope::default(),
        &Message::Rra(rra::Message::Data {
            seq: 0,
            low: 0,
            acker: rra::NO_ACKER,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(
        Header::parse(&d).unwrap().class(),
        PacketClass::OriginalData
    );
    let p = Packet::to_vec(env, &Message::Rra(rra::Message::Poll { upto: 0, low: 0 })).unwrap();
    assert_eq!(Header::parse(&p).unwrap().class(), PacketClass::Control);
}

fn sample_data() -> Vec<u8> {
    let env = Envelope {
        session: 7,
        source: 3,
        flags: 0,
    };
    Packet::to_vec(
        env,
        &Message::Saw(saw::Message::Data {
            seq: 1,
            payload: b"hello",
        }),
    )
    .unwrap()
}

#[test]
fn typed_errors_for_each_malformation() {
    let good = sample_data();
    assert!(Packet::decode(&good).is_ok());

    assert!(matches!(
        Packet::decode(&good[..5]),
        Err(DecodeError::Truncated {
            needed: HEADER_LEN,
            got: 5
        })
    ));

    let mut b = good.clone();
    b[0] = b'X';
    assert!(matches!(Packet::decode(&b), Err(DecodeError::BadMagic(_))));

    let mut b = good.clone();
    b[2] = 9;
    assert_eq!(Packet::decode(&b), Err(DecodeError::UnsupportedVersion(9)));

    let mut b = good.clone();
    b[3] = 200;
    assert_eq!(Packet::decode(&b), Err(DecodeError::UnknownFamily(200)));

    let mut b = good.clone();
    b[4] = 77;
    assert_eq!(
        Packet::decode(&b),
        Err(DecodeError::UnknownKind {
            family: Family::Saw,
            kind: 77
        })
    );

    let mut b = good.clone();
    b[5] = 0x80;
    assert_eq!(Packet::decode(&b), Err(DecodeError::Reserved("flags")));

    let mut b = good.clone();
    b.push(0);
    assert!(matches!(
        Packet::decode(&b),
        Err(DecodeError::LengthMismatch {
            header: 6,
            actual: 7
        })
    ));

    let mut b = good.clone();
    b[HEADER_LEN] = 2;
    assert!(matches!(
        Packet::decode(&b),
        Err(DecodeError::InvalidField {
            field: "saw.seq",
            ..
        })
    ));

    let big = vec![0u8; MAX_DATAGRAM + 1];
    assert!(matches!(
        Packet::decode(&big),
        Err(DecodeError::Oversize { .. })
    ));

    // An ACK with a byte too many is trailing garbage, not a longer ACK.
    let env = Envelope::default();
    let mut ack = Packet::to_vec(env, &Message::Saw(saw::Message::Ack { seq: 0 })).unwrap();
    ack.push(0);
    let n = (ack.len() - HEADER_LEN) as u32;
    ack[16..20].copy_from_slice(&n.to_be_bytes());
    assert_eq!(Packet::decode(&ack), Err(DecodeError::TrailingBytes(1)));
}

/// A header announcing a 4 GiB body is refused from the header alone: the decoder reports
/// `Oversize` and, because decoding only borrows from the input, allocates nothing.
#[test]
fn four_gib_payload_claim_is_rejected_without_allocation() {
    let mut b = sample_data();
    b[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
    let err = Packet::decode(&b).unwrap_err();
    assert_eq!(
        err,
        DecodeError::Oversize {
            len: u64::from(u32::MAX),
            max: MAX_PAYLOAD
        }
    );
    let before = crate::tests::alloc_count();
    let _ = Packet::decode(&b);
    let _ = Header::parse(&b);
    assert_eq!(
        crate::tests::alloc_count(),
        before,
        "decoding must not allocate"
    );
}

#[test]
fn encode_refuses_invalid_fields_and_oversize() {
    let env = Envelope::default();
    assert!(Packet::to_vec(env, &Message::Saw(saw::Message::Ack { seq: 2 })).is_err());
    let huge = vec![0u8; MAX_DATAGRAM];
    assert!(matches!(
        Packet::to_vec(
            env,
            &Message::Saw(saw::Message::Data {
                seq: 0,
                payload: &huge
            })
        ),
        Err(EncodeError::Oversize { .. })
    ));
    let env = Envelope {
        flags: 0x40,
        ..Envelope::default()
    };
    assert!(Packet::to_vec(env, &Message::Saw(saw::Message::Ack { seq: 0 })).is_err());
}

#[test]
fn class_tells_original_repair_and_control_apart() {
    let mut env = Envelope::default();
    let data = Packet::to_vec(
        env,
        &Message::Saw(saw::Message::Data {
            seq: 0,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(
        Header::parse(&data).unwrap().class(),
        PacketClass::OriginalData
    );
    env.flags = FLAG_RETRANSMISSION;
    let data = Packet::to_vec(
        env,
        &Message::Saw(saw::Message::Data {
            seq: 0,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(
        Header::parse(&data).unwrap().class(),
        PacketClass::RepairData
    );
    let ack = Packet::to_vec(env, &Message::Saw(saw::Message::Ack { seq: 0 })).unwrap();
    assert_eq!(Header::parse(&ack).unwrap().class(), PacketClass::Control);
}

fn prmp_cld() -> impl Strategy<Value = prmp::ChildList<'static>> {
    proptest::collection::vec(any::<u32>(), 1..40).prop_map(|ids| {
        let mut raw = Vec::new();
        prmp::ChildList::encode_ids(ids, &mut raw);
        prmp::ChildList::from_raw(Vec::leak(raw)).unwrap()
    })
}

fn prmp_ff_strategy() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        (
            any::<u64>(),
            proptest::collection::vec(any::<u8>(), 0..2048)
        )
            .prop_map(|(seq, p)| {
                Message::Prmp(prmp::Message::Data {
                    seq,
                    payload: Vec::leak(p),
                })
            }),
        (any::<u64>(), any::<u64>(), prmp_cld())
            .prop_map(|(ts, seq, cld)| Message::Prmp(prmp::Message::Poll { ts, seq, cld })),
        (
            any::<u64>(),
            any::<u64>(),
            0u64..1_000,
            prmp_cld(),
            proptest::collection::vec(any::<u8>(), 0..2048)
        )
            .prop_map(
                |(seq, ts, ahead, cld, p)| Message::Prmp(prmp::Message::DataPoll {
                    seq,
                    ts,
                    poll_seq: seq.saturating_add(ahead),
                    cld,
                    payload: Vec::leak(p),
                })
            ),
        (
            any::<u64>(),
            any::<u64>(),
            0u64..u64::MAX / 2,
            proptest::option::of(0u64..3_000),
            proptest::collection::vec(any::<u8>(), 400)
        )
            .prop_map(|(ts, seq, le, span, bits)| {
                let hr = match span {
                    None => prmp::NO_HR,
                    Some(s) => (le + s).saturating_sub(1),
                };
                let need = prmp::resp_bitmap_bytes(le, hr) as usize;
                Message::Prmp(prmp::Message::Resp {
                    ts,
                    seq,
                    le,
                    hr,
                    bitmap: Vec::leak(bits[..need].to_vec()),
                })
            }),
        (
            any::<u64>(),
            any::<u64>(),
            proptest::collection::vec(any::<u8>(), 0..2048)
        )
            .prop_map(|(seq, ts, p)| Message::Ff(ff::Message::Data {
                seq,
                ts,
                payload: Vec::leak(p),
            })),
        (any::<u64>(), any::<u64>())
            .prop_map(|(seq, ts)| Message::Ff(ff::Message::Ack { seq, ts })),
    ]
}

proptest! {
    #[test]
    fn prmp_and_ff_round_trip(env in env_strategy(), msg in prmp_ff_strategy()) {
        let bytes = Packet::to_vec(env, &msg).unwrap();
        prop_assert_eq!(bytes.len(), Packet::encoded_len(&msg));
        let p = Packet::decode(&bytes).unwrap();
        prop_assert_eq!(p.header.session, env.session);
        prop_assert_eq!(p.header.source, env.source);
        prop_assert_eq!(p.header.flags, env.flags);
        prop_assert_eq!(p.message, msg);
    }

    #[test]
    fn prmp_and_ff_prefixes_are_rejected(env in env_strategy(), msg in prmp_ff_strategy(), cut in 0usize..4096) {
        let bytes = Packet::to_vec(env, &msg).unwrap();
        let cut = cut % bytes.len();
        prop_assert!(Packet::decode(&bytes[..cut]).is_err());
    }
}

#[test]
fn prmp_invariants_classes_and_child_lists() {
    let env = Envelope::default();
    let empty = prmp::ChildList::from_raw(&[]).unwrap();
    let bad = [
        Message::Prmp(prmp::Message::DataPoll {
            seq: 5,
            ts: 0,
            poll_seq: 4,
            cld: prmp::ChildList::from_raw(&[0, 0, 0, 1]).unwrap(),
            payload: b"",
        }),
        Message::Prmp(prmp::Message::Poll {
            ts: 1,
            seq: 1,
            cld: empty,
        }),
        Message::Prmp(prmp::Message::Resp {
            ts: 0,
            seq: 0,
            le: 9,
            hr: 5,
            bitmap: &[],
        }),
        Message::Prmp(prmp::Message::Resp {
            ts: 0,
            seq: 0,
            le: 0,
            hr: 7,
            bitmap: &[0, 0],
        }),
        Message::Prmp(prmp::Message::Resp {
            ts: 0,
            seq: 0,
            le: 0,
            hr: 8,
            bitmap: &[0],
        }),
    ];
    for m in &bad {
        assert!(
            matches!(
                Packet::to_vec(env, m),
                Err(EncodeError::InvalidField { .. })
            ),
            "{m:?}"
        );
    }
    assert!(prmp::ChildList::from_raw(&[0, 0, 1]).is_none());
    let mut raw = Vec::new();
    prmp::ChildList::encode_ids([3u32, 70_000, 5], &mut raw);
    let cld = prmp::ChildList::from_raw(&raw).unwrap();
    assert_eq!(cld.iter().collect::<Vec<_>>(), vec![3, 70_000, 5]);
    assert!(cld.contains(70_000) && !cld.contains(4));
    // A RESP whose bitmap length field disagrees with le..=hr is refused on decode.
    let ok = Message::Prmp(prmp::Message::Resp {
        ts: 0,
        seq: 0,
        le: 0,
        hr: 15,
        bitmap: &[0xff, 0x7f],
    });
    let mut b = Packet::to_vec(env, &ok).unwrap();
    assert!(Packet::decode(&b).is_ok());
    b[HEADER_LEN + 24..HEADER_LEN + 32].copy_from_slice(&100u64.to_be_bytes());
    assert!(matches!(
        Packet::decode(&b),
        Err(DecodeError::InvalidField {
            field: "prmp.bitmap",
            ..
        })
    ));
    // A child count claiming more ids than the datagram holds is truncation.
    let poll = Message::Prmp(prmp::Message::Poll { ts: 1, seq: 2, cld });
    let mut b = Packet::to_vec(env, &poll).unwrap();
    b[HEADER_LEN + 16..HEADER_LEN + 18].copy_from_slice(&9u16.to_be_bytes());
    assert!(matches!(
        Packet::decode(&b),
        Err(DecodeError::Truncated { .. })
    ));
    // Classes: DATA and DATAPOLL are data, POLL and RESP control; FF likewise.
    let class = |m: &Message<'_>, flags| {
        let e = Envelope {
            flags,
            ..Envelope::default()
        };
        Header::parse(&Packet::to_vec(e, m).unwrap())
            .unwrap()
            .class()
    };
    let dp = Message::Prmp(prmp::Message::DataPoll {
        seq: 1,
        ts: 2,
        poll_seq: 1,
        cld,
        payload: b"x",
    });
    assert_eq!(class(&dp, 0), PacketClass::OriginalData);
    assert_eq!(class(&dp, FLAG_RETRANSMISSION), PacketClass::RepairData);
    assert_eq!(class(&poll, 0), PacketClass::Control);
    assert_eq!(class(&ok, 0), PacketClass::Control);
    let fd = Message::Ff(ff::Message::Data {
        seq: 1,
        ts: 2,
        payload: b"",
    });
    assert_eq!(class(&fd, FLAG_RETRANSMISSION), PacketClass::RepairData);
    assert_eq!(
        class(&Message::Ff(ff::Message::Ack { seq: 1, ts: 2 }), 0),
        PacketClass::Control
    );
    assert_eq!(Family::from_u8(5), Ok(Family::Prmp));
    assert_eq!(Family::from_u8(10), Ok(Family::Ff));
    assert_eq!(Family::Prmp.name(), "prmp");
}

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

// A counting global allocator for the allocation test.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
thread_local! { static TRACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) }; }

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if TRACK.with(|t| t.get()) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn alloc_count() -> usize {
    TRACK.with(|t| t.set(true));
    ALLOCS.load(Ordering::Relaxed)
}

fn srm_strategy() -> impl Strategy<Value = (u8, u32, u32, u8, u64, u64, Vec<u8>)> {
    (
        0u8..4,
        any::<u32>(),
        any::<u32>(),
        any::<u8>(),
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..1024),
    )
}

fn srm_msg<'a>(
    (k, a, b, round, seq, d, bytes): &'a (u8, u32, u32, u8, u64, u64, Vec<u8>),
) -> Message<'a> {
    let (a, b, round, seq, d) = (*a, *b, *round, *seq, *d);
    Message::Srm(match k {
        0 => srm::Message::Data {
            seq,
            payload: bytes,
        },
        1 => srm::Message::Request {
            sender: a,
            round,
            seq,
            dist_ns: d,
        },
        2 => srm::Message::Repair {
            sender: a,
            requester: b,
            round,
            seq,
            dist_ns: d,
            payload: bytes,
        },
        _ => {
            let n = bytes.len() / srm::SESSION_ENTRY_LEN * srm::SESSION_ENTRY_LEN;
            srm::Message::Session {
                ts: seq,
                next_seq: d,
                entries: srm::SessionEntries::from_raw(&bytes[..n]).unwrap(),
            }
        }
    })
}

fn pgm_msg(k: u8, seq: u64, x: u64, y: u64, bytes: &[u8]) -> Message<'_> {
    Message::Pgm(match k {
        0 => pgm::Message::Odata {
            seq,
            payload: bytes,
        },
        1 => pgm::Message::Rdata {
            seq,
            payload: bytes,
        },
        2 => pgm::Message::Nak { seq },
        3 => pgm::Message::Ncf { seq },
        _ => pgm::Message::Spm {
            spm_seq: seq,
            trail: x.min(y),
            lead: x.max(y),
        },
    })
}

fn lms_msg(k: u8, seq: u64, a: u32, b: u32, c: u32, bytes: &[u8]) -> Message<'_> {
    Message::Lms(match k {
        0 => lms::Message::Data {
            seq,
            payload: bytes,
        },
        1 => lms::Message::Request {
            seq,
            attempt: a as u16,
        },
        2 => lms::Message::Dreq {
            seq,
            requester: a,
            tp: b.min(lms::NO_TP - 1),
            tp_iface: c,
            attempt: (c >> 16) as u16,
        },
        3 => lms::Message::Repair {
            seq,
            tp: b,
            tp_iface: c,
            payload: bytes,
        },
        4 => lms::Message::Heartbeat { lead: seq },
        _ => lms::Message::Refresh { cost: a },
    })
}

fn assert_round_trip(env: Envelope, msg: &Message<'_>) -> Result<(), TestCaseError> {
    let bytes = Packet::to_vec(env, msg).unwrap();
    prop_assert_eq!(bytes.len(), Packet::encoded_len(msg));
    let p = Packet::decode(&bytes).unwrap();
    prop_assert_eq!(p.header.session, env.session);
    prop_assert_eq!(p.header.source, env.source);
    prop_assert_eq!(p.header.flags, env.flags);
    prop_assert_eq!(&p.message, msg);
    for cut in [0, bytes.len() / 2, bytes.len() - 1] {
        prop_assert!(Packet::decode(&bytes[..cut]).is_err());
    }
    Ok(())
}

proptest! {
    #[test]
    fn srm_round_trip(env in env_strategy(), v in srm_strategy()) {
        assert_round_trip(env, &srm_msg(&v))?;
    }

    #[test]
    fn pgm_round_trip(env in env_strategy(), k in 0u8..5, seq in any::<u64>(), x in any::<u64>(), y in any::<u64>(), bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        assert_round_trip(env, &pgm_msg(k, seq, x, y, &bytes))?;
    }

    #[test]
    fn lms_round_trip(env in env_strategy(), k in 0u8..6, seq in any::<u64>(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        assert_round_trip(env, &lms_msg(k, seq, a, b, c, &bytes))?;
    }
}

#[test]
fn seed003_families_and_classes() {
    assert_eq!(Family::from_u8(7), Ok(Family::Srm));
    assert_eq!(Family::from_u8(8), Ok(Family::Pgm));
    assert_eq!(Family::from_u8(9), Ok(Family::Lms));
    assert_eq!(Family::Lms.name(), "lms");
    let env = Envelope {
        session: 1,
        source: 2,
        flags: FLAG_RETRANSMISSION,
    };
    let rdata = Packet::to_vec(
        env,
        &Message::Pgm(pgm::Message::Rdata {
            seq: 1,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(
        Header::parse(&rdata).unwrap().class(),
        PacketClass::RepairData
    );
    let nak = Packet::to_vec(env, &Message::Pgm(pgm::Message::Nak { seq: 1 })).unwrap();
    assert_eq!(Header::parse(&nak).unwrap().class(), PacketClass::Control);
    let plain = Envelope { flags: 0, ..env };
    let data = Packet::to_vec(
        plain,
        &Message::Lms(lms::Message::Data {
            seq: 1,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(
        Header::parse(&data).unwrap().class(),
        PacketClass::OriginalData
    );
    let rep = Packet::to_vec(
        env,
        &Message::Srm(srm::Message::Repair {
            sender: 0,
            requester: 1,
            round: 1,
            seq: 1,
            dist_ns: 0,
            payload: b"x",
        }),
    )
    .unwrap();
    assert_eq!(
        Header::parse(&rep).unwrap().class(),
        PacketClass::RepairData
    );
}

#[test]
fn seed003_invalid_fields_are_refused() {
    let env = Envelope::default();
    // An SPM with trail > lead cannot be encoded, and its bytes are refused.
    assert!(Packet::to_vec(
        env,
        &Message::Pgm(pgm::Message::Spm {
            spm_seq: 0,
            trail: 5,
            lead: 4
        })
    )
    .is_err());
    let mut ok = Packet::to_vec(
        env,
        &Message::Pgm(pgm::Message::Spm {
            spm_seq: 0,
            trail: 4,
            lead: 5,
        }),
    )
    .unwrap();
    ok[HEADER_LEN + 15] = 9; // trail's low byte becomes 9 > 5
    assert!(matches!(
        Packet::decode(&ok),
        Err(DecodeError::InvalidField { .. })
    ));
    // A DREQ without a turning point is refused both ways.
    let dreq = lms::Message::Dreq {
        seq: 1,
        requester: 2,
        tp: lms::NO_TP,
        tp_iface: 0,
        attempt: 0,
    };
    assert!(Packet::to_vec(env, &Message::Lms(dreq)).is_err());
    // A SESSION announcing more entries than it carries is truncated.
    let mut s = Packet::to_vec(
        env,
        &Message::Srm(srm::Message::Session {
            ts: 1,
            next_seq: 2,
            entries: srm::SessionEntries::from_raw(&[0; 20]).unwrap(),
        }),
    )
    .unwrap();
    s[HEADER_LEN + 17] = 2;
    assert!(Packet::decode(&s).is_err());
    assert!(srm::SessionEntries::from_raw(&[0; 19]).is_none());
}

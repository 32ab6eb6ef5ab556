//! PRMP (seed 004) and FF: round trips, prefixes, invariants, classes, child lists.

use super::*;

fn prmp_cld() -> impl Strategy<Value = prmp::ChildList<'static>> {
    proptest::collection::vec(any::<u32>(), 1..40).prop_map(|ids| {
        let mut raw = Vec::new();
        prmp::ChildList::encode_ids(ids, &mut raw);
        prmp::ChildList::from_raw(Vec::leak(raw)).unwrap()
    })
}

fn prmp_ff_strategy() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        (any::<u64>(), payload())
            .prop_map(|(seq, p)| { Message::Prmp(prmp::Message::Data { seq, payload: p }) }),
        (any::<u64>(), any::<u64>(), prmp_cld())
            .prop_map(|(ts, seq, cld)| Message::Prmp(prmp::Message::Poll { ts, seq, cld })),
        (
            any::<u64>(),
            any::<u64>(),
            0u64..1_000,
            prmp_cld(),
            payload()
        )
            .prop_map(
                |(seq, ts, ahead, cld, p)| Message::Prmp(prmp::Message::DataPoll {
                    seq,
                    ts,
                    poll_seq: seq.saturating_add(ahead),
                    cld,
                    payload: p,
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
        (any::<u64>(), any::<u64>(), payload()).prop_map(|(seq, ts, p)| Message::Ff(
            ff::Message::Data {
                seq,
                ts,
                payload: p,
            }
        )),
        (any::<u64>(), any::<u64>())
            .prop_map(|(seq, ts)| Message::Ff(ff::Message::Ack { seq, ts })),
        (any::<u64>(), any::<u64>(), any::<u64>())
            .prop_map(|(seq, ts, cum)| Message::Ff(ff::Message::CumAck { seq, ts, cum })),
    ]
}

proptest! {
    #[test]
    fn prmp_and_ff_round_trip(env in env_strategy(), msg in prmp_ff_strategy()) {
        assert_round_trip(env, &msg)?;
    }

    #[test]
    fn prmp_and_ff_prefixes_are_rejected(env in env_strategy(), msg in prmp_ff_strategy(), cut in 0usize..4096) {
        assert_prefix_rejected(env, &msg, cut)?;
    }
}

#[test]
fn prmp_invariants_classes_and_child_lists() {
    let env = Envelope::default();
    let empty = prmp::ChildList::from_raw(&[]).unwrap();
    let mut bad = vec![
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
    ];
    // RESPs whose edges are inverted, or whose bitmap is too long or too short for them.
    let bad_resps: [(u64, u64, &[u8]); 3] = [(9, 5, &[]), (0, 7, &[0, 0]), (0, 8, &[0])];
    bad.extend(bad_resps.map(|(le, hr, bitmap)| {
        Message::Prmp(prmp::Message::Resp {
            ts: 0,
            seq: 0,
            le,
            hr,
            bitmap,
        })
    }));
    assert_encode_refuses(env, &bad);
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
    let dp = Message::Prmp(prmp::Message::DataPoll {
        seq: 1,
        ts: 2,
        poll_seq: 1,
        cld,
        payload: b"x",
    });
    assert_eq!(class_of(0, &dp), PacketClass::OriginalData);
    assert_eq!(class_of(FLAG_RETRANSMISSION, &dp), PacketClass::RepairData);
    assert_eq!(class_of(0, &poll), PacketClass::Control);
    assert_eq!(class_of(0, &ok), PacketClass::Control);
    let fd = Message::Ff(ff::Message::Data {
        seq: 1,
        ts: 2,
        payload: b"",
    });
    assert_eq!(class_of(FLAG_RETRANSMISSION, &fd), PacketClass::RepairData);
    assert_eq!(
        class_of(0, &Message::Ff(ff::Message::Ack { seq: 1, ts: 2 })),
        PacketClass::Control
    );
    assert_eq!(Family::from_u8(5), Ok(Family::Prmp));
    assert_eq!(Family::from_u8(10), Ok(Family::Ff));
    assert_eq!(Family::Prmp.name(), "prmp");
}

//! SRM, PGM and LMS (seed 003): round trips, classes, refused fields.

use super::*;

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
        5 => pgm::Message::Parity {
            block: seq,
            index: x as u16,
            k: (y as u16).max(1),
            payload: bytes,
        },
        6 => pgm::Message::BlockNak {
            block: seq,
            total: x as u16,
        },
        7 => pgm::Message::BlockNcf {
            block: seq,
            total: y as u16,
        },
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

proptest! {
    #[test]
    fn srm_round_trip(env in env_strategy(), v in srm_strategy()) {
        assert_round_trip(env, &srm_msg(&v))?;
    }

    #[test]
    fn pgm_round_trip(env in env_strategy(), k in 0u8..8, seq in any::<u64>(), x in any::<u64>(), y in any::<u64>(), bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        assert_round_trip(env, &pgm_msg(k, seq, x, y, &bytes))?;
    }

    /// A NAK or NCF list of 2 to 63 increasing sequence numbers round-trips; its bytes
    /// name exactly those numbers.
    #[test]
    fn pgm_nak_lists_round_trip(env in env_strategy(), ncf in any::<bool>(), set in proptest::collection::btree_set(any::<u64>(), 2..=pgm::MAX_NAK_LIST)) {
        let mut raw = Vec::new();
        pgm::SeqList::encode_seqs(set.iter().copied(), &mut raw);
        let seqs = pgm::SeqList::from_raw(&raw).unwrap();
        prop_assert!(seqs.iter().eq(set.iter().copied()));
        let m = if ncf { pgm::Message::NcfList { seqs } } else { pgm::Message::NakList { seqs } };
        assert_round_trip(env, &Message::Pgm(m))?;
    }

    #[test]
    fn lms_round_trip(env in env_strategy(), k in 0u8..6, seq in any::<u64>(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        assert_round_trip(env, &lms_msg(k, seq, a, b, c, &bytes))?;
    }
}

#[test]
fn seed003_families() {
    assert_eq!(Family::from_u8(7), Ok(Family::Srm));
    assert_eq!(Family::from_u8(8), Ok(Family::Pgm));
    assert_eq!(Family::from_u8(9), Ok(Family::Lms));
    assert_eq!(Family::Lms.name(), "lms");
}

/// A NAK list of one, of 64, out of order or repeating a number is no list: not built, and
/// its bytes are refused.
#[test]
fn malformed_nak_lists_are_refused() {
    let raw = |seqs: &[u64]| {
        let mut r = Vec::new();
        pgm::SeqList::encode_seqs(seqs.iter().copied(), &mut r);
        r
    };
    let long: Vec<u64> = (0..64).collect();
    for bad in [&[7][..], &[9, 3], &[4, 4], &long] {
        assert!(pgm::SeqList::from_raw(&raw(bad)).is_none(), "{bad:?}");
    }
    let ok = raw(&[3, 9]);
    let seqs = pgm::SeqList::from_raw(&ok).unwrap();
    let mut b = Packet::to_vec(
        Envelope::default(),
        &Message::Pgm(pgm::Message::NakList { seqs }),
    )
    .unwrap();
    assert!(Packet::decode(&b).is_ok());
    b[HEADER_LEN + 2 + 7] = 9; // the first number's low byte: 9, 9 is not increasing
    assert!(Packet::decode(&b).is_err());
    // A count of 64 is refused.
    let mut c = Packet::to_vec(
        Envelope::default(),
        &Message::Pgm(pgm::Message::NakList { seqs }),
    )
    .unwrap();
    c[HEADER_LEN] = 0;
    c[HEADER_LEN + 1] = 64;
    assert!(Packet::decode(&c).is_err());
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
    // A PARITY of a block of no packets is refused both ways.
    let parity = |k| {
        Message::Pgm(pgm::Message::Parity {
            block: 1,
            index: 0,
            k,
            payload: b"ab",
        })
    };
    assert!(Packet::to_vec(env, &parity(0)).is_err());
    let mut ok = Packet::to_vec(env, &parity(1)).unwrap();
    ok[HEADER_LEN + 11] = 0; // k's low byte: k = 0
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
            entries: srm::SessionEntries::from_raw(&[0; 16]).unwrap(),
        }),
    )
    .unwrap();
    s[HEADER_LEN + 17] = 2;
    assert!(Packet::decode(&s).is_err());
    assert!(srm::SessionEntries::from_raw(&[0; 15]).is_none());
}

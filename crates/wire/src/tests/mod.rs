use super::*;
use proptest::prelude::*;
use rand::{Rng, RngCore, SeedableRng};

pub(crate) fn env_strategy() -> impl Strategy<Value = Envelope> {
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

/// `msg` encoded with `env` has its computed length and decodes to the same header fields
/// and message; its prefixes of no bytes, half and all but one byte are rejected.
pub(crate) fn assert_round_trip(env: Envelope, msg: &Message<'_>) -> Result<(), TestCaseError> {
    let bytes = Packet::to_vec(env, msg).unwrap();
    prop_assert_eq!(bytes.len(), Packet::encoded_len(msg));
    let p = Packet::decode(&bytes).unwrap();
    prop_assert_eq!(p.header.session, env.session);
    prop_assert_eq!(p.header.source, env.source);
    prop_assert_eq!(p.header.flags, env.flags);
    prop_assert_eq!(p.header.payload_len as usize, bytes.len() - HEADER_LEN);
    prop_assert_eq!(&p.message, msg);
    for cut in [0, bytes.len() / 2, bytes.len() - 1] {
        prop_assert!(Packet::decode(&bytes[..cut]).is_err());
    }
    Ok(())
}

/// The prefix of `cut` bytes (modulo the length) of `msg`'s datagram is rejected.
fn assert_prefix_rejected(
    env: Envelope,
    msg: &Message<'_>,
    cut: usize,
) -> Result<(), TestCaseError> {
    let bytes = Packet::to_vec(env, msg).unwrap();
    prop_assert!(Packet::decode(&bytes[..cut % bytes.len()]).is_err());
    Ok(())
}

/// Encoding refuses every message of `bad` as an invalid field.
fn assert_encode_refuses(env: Envelope, bad: &[Message<'_>]) {
    for m in bad {
        assert!(
            matches!(
                Packet::to_vec(env, m),
                Err(EncodeError::InvalidField { .. })
            ),
            "{m:?}"
        );
    }
}

/// Arbitrary `body` behind a valid header of `family` and `kind` (session 1, source 2, no
/// flags) never panics the decoder, and whatever decodes re-encodes to the same bytes.
pub(crate) fn assert_any_body_round_trips(
    family: Family,
    kind: u8,
    body: &[u8],
) -> Result<(), TestCaseError> {
    let mut d = vec![b'R', b'M', VERSION, family as u8, kind, 0, 0, 0];
    d.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2]);
    d.extend_from_slice(&(body.len() as u32).to_be_bytes());
    d.extend_from_slice(body);
    if let Ok(p) = Packet::decode(&d) {
        let h = p.header;
        let env = Envelope {
            session: h.session,
            source: h.source,
            flags: h.flags,
        };
        prop_assert_eq!(Packet::to_vec(env, &p.message).unwrap(), d);
    }
    Ok(())
}

/// Application data of up to 2,047 bytes, leaked so that messages borrowing it are `'static`.
pub(crate) fn payload() -> impl Strategy<Value = &'static [u8]> {
    proptest::collection::vec(any::<u8>(), 0..2048).prop_map(|p| &*Vec::leak(p))
}

fn saw_msg(seq: u8, payload: &Option<Vec<u8>>) -> Message<'_> {
    match payload {
        Some(p) => Message::Saw(saw::Message::Data { seq, payload: p }),
        None => Message::Saw(saw::Message::Ack { seq }),
    }
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
        assert_round_trip(env, &saw_msg(seq, &payload))?;
    }

    #[test]
    fn any_prefix_of_a_valid_packet_is_rejected(env in env_strategy(), (seq, payload) in saw_strategy(), cut in 0usize..4096) {
        assert_prefix_rejected(env, &saw_msg(seq, &payload), cut)?;
    }
}

fn bap_strategy() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        (any::<u16>(), any::<u16>(), payload()).prop_map(|(seq, first, p)| Message::Bap(
            bap::Message::Data {
                seq,
                first,
                payload: p,
            }
        )),
        any::<u16>().prop_map(|seq| Message::Bap(bap::Message::Ack { seq })),
    ]
}

fn rra_strategy() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        (any::<u64>(), any::<u64>(), any::<u32>(), payload()).prop_map(|(seq, back, acker, p)| {
            Message::Rra(rra::Message::Data {
                seq,
                low: seq.saturating_sub(back % 1_000),
                acker,
                payload: p,
            })
        }),
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
        assert_round_trip(env, &msg)?;
    }

    #[test]
    fn bap_and_rra_prefixes_are_rejected(env in env_strategy(), msg in prop_oneof![bap_strategy(), rra_strategy()], cut in 0usize..4096) {
        assert_prefix_rejected(env, &msg, cut)?;
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
    assert_encode_refuses(env, &bad);
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
    // (Unknown kinds of every family, `bap` among them: `samples.rs`.)
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

/// How an observer classes `msg` sent with header `flags`.
pub(crate) fn class_of(flags: u8, msg: &Message<'_>) -> PacketClass {
    let env = Envelope {
        flags,
        ..Envelope::default()
    };
    Header::parse(&Packet::to_vec(env, msg).unwrap())
        .unwrap()
        .class()
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

mod fuzz;
mod prmp_ff;
mod samples;
mod seed003;

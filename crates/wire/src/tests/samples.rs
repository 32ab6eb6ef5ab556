//! One message of every kind of every family, and the bytes each encodes to.
//!
//! The bytes were produced by the hand-written encoders before the layouts were declared
//! with `messages!` (commit 69c936e): encoding must give exactly these bytes, and decoding
//! them must give the message back. The samples are also the seeds of the mutation test
//! (`fuzz.rs`).

use super::*;

/// The application data of the samples that carry some.
const P: &[u8] = &[0xaa, 0xbb, 0xcc];

/// One message of every kind, with the envelope it is sent with.
pub(super) fn samples() -> Vec<(Envelope, Message<'static>)> {
    let env = Envelope {
        session: 0x0102_0304,
        source: 0x0a0b_0c0d,
        flags: 0,
    };
    let rx = Envelope {
        flags: FLAG_RETRANSMISSION,
        ..env
    };
    let mut raw = Vec::new();
    prmp::ChildList::encode_ids([1u32, 0xdead_beef, 7], &mut raw);
    let cld = prmp::ChildList::from_raw(Vec::leak(raw)).unwrap();
    let mut raw = Vec::new();
    srm::SessionEntries::encode(
        [
            srm::SessionEntry {
                node: 3,
                echo_ts: 0x1122_3344_5566_7788,
                delay_ns: 9,
            },
            srm::SessionEntry {
                node: 4,
                echo_ts: 5,
                delay_ns: 6,
            },
        ],
        &mut raw,
    );
    let entries = srm::SessionEntries::from_raw(Vec::leak(raw)).unwrap();
    let mut raw = Vec::new();
    xtp::Spans::encode(
        [
            xtp::Span { left: 5, right: 9 },
            xtp::Span {
                left: 11,
                right: 300,
            },
        ],
        &mut raw,
    );
    let spans = xtp::Spans::from_raw(Vec::leak(raw)).unwrap();
    let members = Vec::leak(session::encode_members(&[1, 2, 0xffff_ffff]));
    let outcomes = Vec::leak(session::encode_outcomes(&[
        (1, session::Outcome::Completed),
        (9, session::Outcome::Failed),
    ]));
    vec![
        (env, Message::Saw(saw::Message::Data { seq: 1, payload: P })),
        (
            rx,
            Message::Saw(saw::Message::Data {
                seq: 0,
                payload: &[],
            }),
        ),
        (env, Message::Saw(saw::Message::Ack { seq: 1 })),
        (
            env,
            Message::Bap(bap::Message::Data {
                seq: 0x1234,
                first: 0xfedc,
                payload: P,
            }),
        ),
        (env, Message::Bap(bap::Message::Ack { seq: 0xabcd })),
        (
            env,
            Message::Rra(rra::Message::Data {
                seq: 0x0102_0304_0506_0708,
                low: 3,
                acker: rra::NO_ACKER,
                payload: P,
            }),
        ),
        (env, rra_ack(57, &[0x5a, 0x01, 0x01])),
        (env, rra_ack(39, &[])),
        (env, Message::Rra(rra::Message::Poll { upto: 9, low: 2 })),
        (
            env,
            Message::Tree(tree::Message::Status(tree::Status {
                vc: 1,
                id: 2,
                k: 3,
                l: 21,
                lw_r: 400,
                buffer_available: 12,
                lob: &[0xff, 0x0f, 0x10],
            })),
        ),
        (
            env,
            Message::Tree(tree::Message::LocalStatus(tree::Status {
                vc: 5,
                id: 6,
                k: 7,
                l: 8,
                lw_r: 9,
                buffer_available: 10,
                lob: &[0x81],
            })),
        ),
        (
            rx,
            Message::Tree(tree::Message::LocalData {
                lmvci: 4,
                seq: 8,
                payload: P,
            }),
        ),
        (
            env,
            Message::Tree(tree::Message::Data {
                mvci: 4,
                seq: 8,
                payload: P,
            }),
        ),
        (
            env,
            Message::Tree(tree::Message::Assign {
                lmvci: 4,
                lepi: 5,
                l: 9,
                base: 77,
                bits: &[0xff, 0x01],
            }),
        ),
        (
            env,
            Message::Prmp(prmp::Message::Data {
                seq: 77,
                payload: P,
            }),
        ),
        (
            env,
            Message::Prmp(prmp::Message::Poll { ts: 9, seq: 3, cld }),
        ),
        (
            env,
            Message::Prmp(prmp::Message::DataPoll {
                seq: 77,
                ts: 123_456_789,
                poll_seq: 79,
                cld,
                payload: P,
            }),
        ),
        (env, prmp_resp((70, 90), &[0xf0, 0x0f, 0x01])),
        (env, prmp_resp((0, prmp::NO_HR), &[])),
        (
            env,
            Message::Xtp(xtp::Message::First {
                seq: 0,
                sync: 1,
                options: xtp::opt::SREQ | xtp::opt::MULTI,
                spec: xtp::TrafficSpec {
                    service: xtp::Service::ReliableMulticast,
                    retx: xtp::Retx::Selective,
                    maxdata: 1448,
                    rate: 0x0102_0304,
                    window: 64,
                },
            }),
        ),
        (
            env,
            Message::Xtp(xtp::Message::Data {
                seq: 41,
                sync: 3,
                options: xtp::opt::EOM,
                payload: P,
            }),
        ),
        (
            env,
            Message::Xtp(xtp::Message::Cntl(xtp::Status {
                rseq: 4,
                echo: 3,
                options: 0,
                alloc: 104,
                spans,
            })),
        ),
        (
            env,
            Message::Xtp(xtp::Message::Fastnak(xtp::Status {
                rseq: 4,
                echo: 0,
                options: xtp::opt::FASTNAK,
                alloc: 104,
                spans: xtp::Spans::EMPTY,
            })),
        ),
        (env, Message::Srm(srm::Message::Data { seq: 5, payload: P })),
        (
            env,
            Message::Srm(srm::Message::Request {
                sender: 0x0102_0304,
                round: 2,
                seq: 44,
                dist_ns: 1_000_000,
            }),
        ),
        (
            rx,
            Message::Srm(srm::Message::Repair {
                sender: 1,
                requester: 5,
                round: 1,
                seq: 44,
                dist_ns: 7,
                payload: P,
            }),
        ),
        (
            env,
            Message::Srm(srm::Message::Session {
                ts: 77,
                next_seq: 12,
                entries,
            }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::Odata { seq: 5, payload: P }),
        ),
        (rx, Message::Pgm(pgm::Message::Rdata { seq: 5, payload: P })),
        (env, Message::Pgm(pgm::Message::Nak { seq: 9 })),
        (env, Message::Pgm(pgm::Message::Ncf { seq: 10 })),
        (
            env,
            Message::Pgm(pgm::Message::Spm {
                spm_seq: 3,
                trail: 10,
                lead: 20,
            }),
        ),
        (env, Message::Lms(lms::Message::Data { seq: 1, payload: P })),
        (
            env,
            Message::Lms(lms::Message::Request {
                seq: 8,
                attempt: 0x0102,
            }),
        ),
        (
            env,
            Message::Lms(lms::Message::Dreq {
                seq: 8,
                requester: 4,
                tp: 2,
                tp_iface: 1,
                attempt: 3,
            }),
        ),
        (
            rx,
            Message::Lms(lms::Message::Repair {
                seq: 8,
                tp: lms::NO_TP,
                tp_iface: 1,
                payload: P,
            }),
        ),
        (env, Message::Lms(lms::Message::Heartbeat { lead: 99 })),
        (env, Message::Lms(lms::Message::Refresh { cost: 0x0a0b })),
        (
            env,
            Message::Ff(ff::Message::Data {
                seq: 1,
                ts: 2,
                payload: P,
            }),
        ),
        (env, Message::Ff(ff::Message::Ack { seq: 12, ts: 34 })),
        (
            env,
            Message::Session(session::Message::Announce {
                protocol: 2,
                phase: session::Phase::Running,
                security: 3,
                ack_delay_us: 1000,
                window: 16,
                ack_timeout_us: 5000,
                members,
                params: &P[..2],
            }),
        ),
        (
            env,
            Message::Session(session::Message::Join { region: None }),
        ),
        (
            env,
            Message::Session(session::Message::Join {
                region: Some(0x0304),
            }),
        ),
        (
            env,
            Message::Session(session::Message::Report {
                state: session::ReportState::Failed,
                reason: 4,
                bytes: 1,
                messages: 2,
                repairs: 3,
                duplicates: 4,
                rejected: 5,
            }),
        ),
        (env, Message::Session(session::Message::End { outcomes })),
    ]
}

/// An RRA ACK of a receiver holding everything below 40, reporting up to `upto`.
fn rra_ack(upto: u64, bitmap: &'static [u8]) -> Message<'static> {
    Message::Rra(rra::Message::Ack {
        cum: 40,
        upto,
        bitmap,
    })
}

/// A PRMP RESP to the poll sent at 5,000 ns with `HS` 80, reporting the window `le ..= hr`.
fn prmp_resp((le, hr): (u64, u64), bitmap: &'static [u8]) -> Message<'static> {
    Message::Prmp(prmp::Message::Resp {
        ts: 5_000,
        seq: 80,
        le,
        hr,
        bitmap,
    })
}

/// The kinds that carry application data (the families' module docs); every other kind is
/// control.
const DATA_KINDS: [(Family, u8); 15] = [
    (Family::Saw, saw::Kind::Data as u8),
    (Family::Bap, bap::Kind::Data as u8),
    (Family::Rra, rra::Kind::Data as u8),
    (Family::Tree, tree::Kind::LocalData as u8),
    (Family::Tree, tree::Kind::Data as u8),
    (Family::Prmp, prmp::Kind::Data as u8),
    (Family::Prmp, prmp::Kind::DataPoll as u8),
    (Family::Xtp, xtp::Kind::Data as u8),
    (Family::Srm, srm::Kind::Data as u8),
    (Family::Srm, srm::Kind::Repair as u8),
    (Family::Pgm, pgm::Kind::Odata as u8),
    (Family::Pgm, pgm::Kind::Rdata as u8),
    (Family::Lms, lms::Kind::Data as u8),
    (Family::Lms, lms::Kind::Repair as u8),
    (Family::Ff, ff::Kind::Data as u8),
];

#[test]
fn class_tells_original_repair_and_control_apart() {
    use PacketClass::{Control, OriginalData, RepairData};
    for (_, msg) in samples() {
        let data = DATA_KINDS.contains(&(msg.family(), msg.kind()));
        let (first, again) = if data {
            (OriginalData, RepairData)
        } else {
            (Control, Control)
        };
        assert_eq!(class_of(0, &msg), first, "{msg:?}");
        assert_eq!(class_of(FLAG_RETRANSMISSION, &msg), again, "{msg:?}");
    }
}

/// A kind number its family does not define is refused, naming the family and the number.
#[test]
fn unknown_kinds_name_their_family() {
    for (env, msg) in samples() {
        let mut b = Packet::to_vec(env, &msg).unwrap();
        let family = msg.family();
        for kind in (0..=u8::MAX).filter(|&k| check_kind(family, k).is_err()) {
            b[4] = kind;
            assert_eq!(
                Packet::decode(&b),
                Err(DecodeError::UnknownKind { family, kind })
            );
        }
    }
}

/// The datagram of each sample, in order: header, a space, body.
const GOLDEN: [&str; 45] = [
    "524d010101000000010203040a0b0c0d00000004 01aabbcc", // saw Data
    "524d010101010000010203040a0b0c0d00000001 00", // saw Data (retransmission)
    "524d010102000000010203040a0b0c0d00000001 01", // saw Ack
    "524d010201000000010203040a0b0c0d00000007 1234fedcaabbcc", // bap Data
    "524d010202000000010203040a0b0c0d00000002 abcd", // bap Ack
    "524d010301000000010203040a0b0c0d00000017 01020304050607080000000000000003ffffffffaabbcc", // rra Data
    "524d010302000000010203040a0b0c0d00000015 0000000000000028000000000000003900035a0101", // rra Ack
    "524d010302000000010203040a0b0c0d00000012 000000000000002800000000000000270000", // rra Ack
    "524d010303000000010203040a0b0c0d00000010 00000000000000090000000000000002", // rra Poll
    "524d010400000000010203040a0b0c0d0000001d 000000010000000200030000001500000000000001900000000cff0f10", // tree Status
    "524d010401000000010203040a0b0c0d0000001b 000000050000000600070000000800000000000000090000000a81", // tree LocalStatus
    "524d010402010000010203040a0b0c0d0000000f 000000040000000000000008aabbcc", // tree LocalData (retransmission)
    "524d010403000000010203040a0b0c0d0000000f 000000040000000000000008aabbcc", // tree Data
    "524d010404000000010203040a0b0c0d00000016 000000040000000500000009000000000000004dff01", // tree Assign
    "524d010501000000010203040a0b0c0d0000000b 000000000000004daabbcc", // prmp Data
    "524d010502000000010203040a0b0c0d0000001e 00000000000000090000000000000003000300000001deadbeef00000007", // prmp Poll
    "524d010503000000010203040a0b0c0d00000029 000000000000004d00000000075bcd15000000000000004f000300000001deadbeef00000007aabbcc", // prmp DataPoll
    "524d010504000000010203040a0b0c0d00000025 000000000000138800000000000000500000000000000046000000000000005a0003f00f01", // prmp Resp
    "524d010504000000010203040a0b0c0d00000022 000000000000138800000000000000500000000000000000ffffffffffffffff0000", // prmp Resp
    "524d010601000000010203040a0b0c0d00000018 000000000000000000010011010105a80102030400000040", // xtp First
    "524d010602000000010203040a0b0c0d0000000f 000000000000002900030004aabbcc", // xtp Data
    "524d010603000000010203040a0b0c0d00000036 0000000000000004000300000000000000000068000200000000000000050000000000000009000000000000000b000000000000012c", // xtp Cntl
    "524d010604000000010203040a0b0c0d00000016 00000000000000040000000200000000000000680000", // xtp Fastnak
    "524d010701000000010203040a0b0c0d0000000b 0000000000000005aabbcc", // srm Data
    "524d010702000000010203040a0b0c0d00000015 0102030402000000000000002c00000000000f4240", // srm Request
    "524d010703010000010203040a0b0c0d0000001c 000000010000000501000000000000002c0000000000000007aabbcc", // srm Repair (retransmission)
    "524d010704000000010203040a0b0c0d0000003a 000000000000004d000000000000000c000200000003112233445566778800000000000000090000000400000000000000050000000000000006", // srm Session
    "524d010801000000010203040a0b0c0d0000000b 0000000000000005aabbcc", // pgm Odata
    "524d010802010000010203040a0b0c0d0000000b 0000000000000005aabbcc", // pgm Rdata (retransmission)
    "524d010803000000010203040a0b0c0d00000008 0000000000000009", // pgm Nak
    "524d010804000000010203040a0b0c0d00000008 000000000000000a", // pgm Ncf
    "524d010805000000010203040a0b0c0d00000018 0000000000000003000000000000000a0000000000000014", // pgm Spm
    "524d010901000000010203040a0b0c0d0000000b 0000000000000001aabbcc", // lms Data
    "524d010902000000010203040a0b0c0d0000000a 00000000000000080102", // lms Request
    "524d010903000000010203040a0b0c0d00000016 00000000000000080000000400000002000000010003", // lms Dreq
    "524d010904010000010203040a0b0c0d00000013 0000000000000008ffffffff00000001aabbcc", // lms Repair (retransmission)
    "524d010905000000010203040a0b0c0d00000008 0000000000000063", // lms Heartbeat
    "524d010906000000010203040a0b0c0d00000004 00000a0b", // lms Refresh
    "524d010a01000000010203040a0b0c0d00000013 00000000000000010000000000000002aabbcc", // ff Data
    "524d010a02000000010203040a0b0c0d00000010 000000000000000c0000000000000022", // ff Ack
    "524d010f01000000010203040a0b0c0d0000001e 02010300000003e800100000138800030000000100000002ffffffffaabb", // session Announce
    "524d010f02000000010203040a0b0c0d00000000 ", // session Join
    "524d010f02000000010203040a0b0c0d00000002 0304", // session Join
    "524d010f03000000010203040a0b0c0d0000002a 020400000000000000010000000000000002000000000000000300000000000000040000000000000005", // session Report
    "524d010f04000000010203040a0b0c0d0000000c 000200000001000000000902", // session End
];

#[test]
fn every_kind_encodes_to_its_golden_bytes_and_back() {
    let samples = samples();
    assert_eq!(samples.len(), GOLDEN.len());
    for &family in Family::ALL {
        for kind in (0..=u8::MAX).filter(|&k| check_kind(family, k).is_ok()) {
            assert!(
                samples
                    .iter()
                    .any(|(_, m)| m.family() == family && m.kind() == kind),
                "no sample of {family:?} kind {kind}"
            );
        }
    }
    for ((env, msg), hex) in samples.iter().zip(GOLDEN) {
        let hex = hex.replace(' ', "");
        let want: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(Packet::to_vec(*env, msg).unwrap(), want, "{msg:?}");
        assert_eq!(&Packet::decode(&want).unwrap().message, msg);
    }
}

//! The bytes each of [`crate::samples::every_kind`]'s messages encodes to.
//!
//! The bytes were produced by the hand-written encoders before the layouts were declared
//! with `messages!` (commit 69c936e): encoding must give exactly these bytes, and decoding
//! them must give the message back. The samples are also the seeds of the mutation test
//! (`fuzz.rs`).

use super::*;
use crate::samples::every_kind as samples;

/// The kinds that carry application data (the families' module docs); every other kind is
/// control.
const DATA_KINDS: [(Family, u8); 16] = [
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
    (Family::Pgm, pgm::Kind::Parity as u8),
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
        for kind in (0..=u8::MAX).filter(|&k| family.check_kind(k).is_err()) {
            b[4] = kind;
            assert_eq!(
                Packet::decode(&b),
                Err(DecodeError::UnknownKind { family, kind })
            );
        }
    }
}

/// The datagram of each sample, in order: header, a space, body.
const GOLDEN: [&str; 54] = [
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
    "524d010704000000010203040a0b0c0d00000032 000000000000004d000000000000000c00020000000311223344556677880000000900000004000000000000000500000006", // srm Session
    "524d010801000000010203040a0b0c0d0000000b 0000000000000005aabbcc", // pgm Odata
    "524d010802010000010203040a0b0c0d0000000b 0000000000000005aabbcc", // pgm Rdata (retransmission)
    "524d010803000000010203040a0b0c0d00000008 0000000000000009", // pgm Nak
    "524d010804000000010203040a0b0c0d00000008 000000000000000a", // pgm Ncf
    "524d010805000000010203040a0b0c0d00000018 0000000000000003000000000000000a0000000000000014", // pgm Spm
    "524d010806010000010203040a0b0c0d0000000f 000000000000000700020010aabbcc", // pgm Parity (retransmission)
    "524d010807000000010203040a0b0c0d0000000a 00000000000000070003", // pgm BlockNak
    "524d010808000000010203040a0b0c0d0000000a 00000000000000070004", // pgm BlockNcf
    "524d010809000000010203040a0b0c0d0000002d 000000030000000000bebc20ffffffffffffffff0a0b0c0e000007d00a0b0c0e00000000000f42400000003201", // pgm Status
    "524d01080a000000010203040a0b0c0d00000025 0000000300000000000f4240000005dc0000000000a7d8c00000000000b71b000000271003", // pgm Feedback
    "524d01080b000000010203040a0b0c0d0000001a 00030000000000000009000000000000000c0000000000000028", // pgm NakList
    "524d01080c000000010203040a0b0c0d00000012 000200000000000000090000000000000028", // pgm NcfList
    "524d010901000000010203040a0b0c0d0000000b 0000000000000001aabbcc", // lms Data
    "524d010902000000010203040a0b0c0d0000000a 00000000000000080102", // lms Request
    "524d010903000000010203040a0b0c0d00000016 00000000000000080000000400000002000000010003", // lms Dreq
    "524d010904010000010203040a0b0c0d00000013 0000000000000008ffffffff00000001aabbcc", // lms Repair (retransmission)
    "524d010905000000010203040a0b0c0d00000008 0000000000000063", // lms Heartbeat
    "524d010906000000010203040a0b0c0d00000004 00000a0b", // lms Refresh
    "524d010a01000000010203040a0b0c0d00000013 00000000000000010000000000000002aabbcc", // ff Data
    "524d010a02000000010203040a0b0c0d00000010 000000000000000c0000000000000022", // ff Ack
    "524d010a03000000010203040a0b0c0d00000018 000000000000000c00000000000000220000000000000009", // ff CumAck
    "524d010f01000000010203040a0b0c0d0000001e 02010300000003e800100000138800030000000100000002ffffffffaabb", // session Announce
    "524d010f02000000010203040a0b0c0d00000000 ", // session Join
    "524d010f02000000010203040a0b0c0d00000002 0304", // session Join
    "524d010f03000000010203040a0b0c0d0000002a 020400000000000000010000000000000002000000000000000300000000000000040000000000000005", // session Report
    "524d010f04000000010203040a0b0c0d0000000c 000200000001000000000902", // session End
    "524d010f05000000010203040a0b0c0d0000003a 000100000000000003e8000000000000025801020304050607080707070707070707070707070707070707070707070707070707070707070707", // session Have
];

#[test]
fn every_kind_encodes_to_its_golden_bytes_and_back() {
    let samples = samples();
    assert_eq!(samples.len(), GOLDEN.len());
    for &family in Family::ALL {
        for kind in (0..=u8::MAX).filter(|&k| family.check_kind(k).is_ok()) {
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

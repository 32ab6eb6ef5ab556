//! Every family's samples ([`crate::samples`]) against their bytes and their class. The
//! samples are also the seeds of the mutation test (`fuzz.rs`).

use super::*;
use crate::samples::{all, every_kind as samples};

/// A sample's class follows its kind as its author states it (`Sample::data`, from the
/// family's documentation) and the retransmission flag; the `messages!` declaration's `data`
/// list must say the same.
#[test]
fn class_tells_original_repair_and_control_apart() {
    for s in all() {
        for flags in [0, FLAG_RETRANSMISSION] {
            assert_eq!(class_of(flags, &s.message), s.class(flags), "{s:?}");
        }
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

/// Every kind of every family has a sample; each encodes to its bytes, and decoding those
/// gives it back.
#[test]
fn every_kind_encodes_to_its_golden_bytes_and_back() {
    let samples = all();
    for &family in Family::ALL {
        for kind in (0..=u8::MAX).filter(|&k| family.check_kind(k).is_ok()) {
            assert!(
                samples
                    .iter()
                    .any(|s| s.message.family() == family && s.message.kind() == kind),
                "no sample of {family:?} kind {kind}"
            );
        }
        assert!(family
            .samples()
            .iter()
            .all(|s| s.message.family() == family));
    }
    for s in &samples {
        let want = s.datagram().unwrap();
        assert_eq!(want.len() * 2 + 1, s.bytes.len(), "{s:?}: one space");
        assert_eq!(s.bytes.find(' '), Some(HEADER_LEN * 2), "{s:?}");
        assert_eq!(Packet::to_vec(s.env, &s.message).unwrap(), want, "{s:?}");
        assert_eq!(Packet::decode(&want).unwrap().message, s.message);
    }
}

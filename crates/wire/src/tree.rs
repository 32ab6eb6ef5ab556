//! Tree-based ACK consolidation and local re-multicast (seed 001, Paul, Sabnani & Kristol):
//! the packets of the Designated Status Protocol (DSP), the Consolidated Status Protocol (CSP)
//! and the Combined Protocol (CP), Table 1 and Fig. 3 of the paper.
//!
//! A *block* is the unit of selective repeat; rmcast sends one block per datagram, so `seq`
//! (the paper's Seq#) numbers blocks. Kinds 0–3 are the paper's Type field:
//!
//! ```text
//! 0 STATUS        E_i1 (DSP) or local exchange L_i (CSP, CP) → source S
//!                 mvci (u32) | epi (u32) | k (u16) | L (u32) | LW_r (u64)
//!                 | buffer_available (u32) | LOB (⌈L/8⌉ bytes)
//! 1 LOCAL STATUS  E_ij → E_i1 (DSP) or → L_i (CSP, CP)
//!                 lmvci (u32) | lepi (u32) | k (u16) | L (u32) | LW_r (u64)
//!                 | buffer_available (u32) | LOB (⌈L/8⌉ bytes)
//! 2 LOCAL DATA    E_i1 (DSP) or the chosen E_ij (CP) → its local group
//!                 lmvci (u32) | seq (u64) | payload (rest)
//! 3 DATA          S → every E_ij (global multicast)
//!                 mvci (u32) | seq (u64) | payload (rest)
//! 4 ASSIGN        L_i → E_ij (CP only; rmcast's encoding of "L_i informs E_ij,source about
//!                 the block(s) it needs to multicast locally … until told to stop by L_i")
//!                 lmvci (u32) | lepi (u32) | L (u32) | base (u64) | bits (⌈L/8⌉ bytes)
//! ```
//!
//! **LOB** (list of outstanding blocks) is a bitmap of `L` bits aligned at `LW_r`: bit `i`
//! (byte `i / 8`, least significant bit first) stands for block `LW_r + i` and is **set when
//! that block has been received**; the clear bits are the outstanding blocks. With this
//! reading the paper's consolidations come out as stated: a bitwise AND of aligned LOBs is
//! "received by every endpoint" (CSP, pessimistic), an OR is "received by some endpoint" (CP,
//! optimistic). `LW_r` is the first block not yet received: every block below it has been.
//! ASSIGN's `bits` use the same layout from `base`: a set bit orders a local re-multicast of
//! block `base + i`; a block the latest ASSIGN does not set is "told to stop".
//!
//! `k` is the interval between two status packets in units of `T_IN`, `T_IN = max(RTD/kou,
//! ipt)` (Table 1). Checked on decode and encode: `L ≥ 1`, the bitmap is exactly `⌈L/8⌉`
//! bytes and bits beyond `L` are zero. LOCAL DATA is always a repair and carries
//! [`crate::FLAG_RETRANSMISSION`]; DATA carries it when the source re-multicasts.

use crate::field::{decode_error, encode_error, Field, Invalid};
use crate::layout::{slot, Slot, Wire};
use crate::samples::{Sample, ENV, P, RX};
use crate::{DecodeError, EncodeError, Reader, Writer};

packet_kinds! {
    /// Packet kinds of the `tree` family (the paper's Type field, plus ASSIGN).
    Tree, data: [LocalData, Data];
    /// STATUS: a reporter's status to the source.
    Status = 0,
    /// LOCAL STATUS: an endpoint's status inside its region.
    LocalStatus = 1,
    /// LOCAL DATA: a local re-multicast.
    LocalData = 2,
    /// DATA: the source's global multicast.
    Data = 3,
    /// ASSIGN: a CP exchange's order to re-multicast blocks locally.
    Assign = 4,
}

/// The body of a status packet (Type 0 and Type 1 share it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status<'a> {
    /// MVCI (Type 0) or LMVCI (Type 1): the (local) multicast connection.
    pub vc: u32,
    /// EPI (Type 0) or LEPI (Type 1): the reporting endpoint (or exchange).
    pub id: u32,
    /// Status interval in units of `T_IN`.
    pub k: u16,
    /// Number of blocks the LOB covers (the connection's L).
    pub l: u32,
    /// First block not yet received; all below it have been.
    pub lw_r: u64,
    /// Free space in the reporter's reassembly buffer, in blocks.
    pub buffer_available: u32,
    /// ⌈L/8⌉ bytes; bit `i` set = block `lw_r + i` received.
    pub lob: &'a [u8],
}

/// The layout of the fields [`Status`] and the other bodies share after their first two.
const K: Slot = slot("k", &["Status interval in units of T_IN"], Wire::Uint(2));
const L: Slot = slot("l", &["L: bits in the bitmap"], Wire::Uint(4));
const LW_R: Slot = slot(
    "lw_r",
    &["LW_r: first block not yet received"],
    Wire::Uint(8),
);
const BUFFER: Slot = slot(
    "buffer_available",
    &["Free space in the reassembly buffer, blocks"],
    Wire::Uint(4),
);
const LOB: Slot = slot(
    "lob",
    &["LOB: bit i set = block LW_r + i received"],
    Wire::Bitmap { bits: "l" },
);
const MVCI: Slot = slot("mvci", &["MVCI: the multicast connection"], Wire::Uint(4));
const LMVCI: Slot = slot(
    "lmvci",
    &["LMVCI: the local multicast connection"],
    Wire::Uint(4),
);
const LEPI: Slot = slot("lepi", &["LEPI: the endpoint"], Wire::Uint(4));
const SEQ: Slot = slot("seq", &["Block number"], Wire::Uint(8));
const PAYLOAD: Slot = slot("payload", &["The block"], Wire::Rest);

/// The fields of a `kind` body in wire order (written here: the codec below is by hand).
pub fn layout(kind: Kind) -> &'static [Slot] {
    match kind {
        Kind::Status => {
            const S: &[Slot] = &[
                MVCI,
                slot("epi", &["EPI: the reporting endpoint"], Wire::Uint(4)),
                K,
                L,
                LW_R,
                BUFFER,
                LOB,
            ];
            S
        }
        Kind::LocalStatus => &[LMVCI, LEPI, K, L, LW_R, BUFFER, LOB],
        Kind::LocalData => &[LMVCI, SEQ, PAYLOAD],
        Kind::Data => &[MVCI, SEQ, PAYLOAD],
        Kind::Assign => {
            const S: &[Slot] = &[
                LMVCI,
                LEPI,
                L,
                slot("base", &["The block bit 0 stands for"], Wire::Uint(8)),
                slot(
                    "bits",
                    &["Bit i set = re-multicast block base + i locally"],
                    Wire::Bitmap { bits: "l" },
                ),
            ];
            S
        }
    }
}

/// A status body (Type 0 and Type 1): the fixed fields, then the LOB of `⌈L/8⌉` bytes. A
/// LOB longer than the datagram is refused when read, before anything is sized by L.
impl<'a> Field<'a> for Status<'a> {
    type Value = Status<'a>;
    const WIRE: Wire = Wire::Struct(&[LMVCI, LEPI, K, L, LW_R, BUFFER, LOB]);
    fn len(s: &Status<'a>) -> usize {
        STATUS_FIXED + s.lob.len()
    }
    fn write(s: &Status<'a>, w: &mut Writer<'_>) {
        w.u32(s.vc);
        w.u32(s.id);
        w.u16(s.k);
        w.u32(s.l);
        w.u64(s.lw_r);
        w.u32(s.buffer_available);
        w.put(s.lob);
    }
    fn read(r: &mut Reader<'a>) -> Result<Status<'a>, DecodeError> {
        let vc = r.u32()?;
        let id = r.u32()?;
        let k = r.u16()?;
        let l = r.u32()?;
        Ok(Status {
            vc,
            id,
            k,
            l,
            lw_r: r.u64()?,
            buffer_available: r.u32()?,
            lob: r.bytes(bitmap_bytes(l))?,
        })
    }
}

/// A `tree` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// STATUS (Type 0).
    Status(Status<'a>),
    /// LOCAL STATUS (Type 1).
    LocalStatus(Status<'a>),
    /// LOCAL DATA (Type 2).
    LocalData {
        /// The local multicast connection.
        lmvci: u32,
        /// Block number.
        seq: u64,
        /// The block.
        payload: &'a [u8],
    },
    /// DATA (Type 3).
    Data {
        /// The global multicast connection.
        mvci: u32,
        /// Block number.
        seq: u64,
        /// The block.
        payload: &'a [u8],
    },
    /// ASSIGN.
    Assign {
        /// The local multicast connection.
        lmvci: u32,
        /// The endpoint ordered.
        lepi: u32,
        /// Bits in `bits`.
        l: u32,
        /// The block bit 0 stands for.
        base: u64,
        /// A set bit `i` orders a local re-multicast of block `base + i`.
        bits: &'a [u8],
    },
}

/// Bytes a bitmap of `l` bits occupies.
pub fn bitmap_bytes(l: u32) -> usize {
    (l as usize).div_ceil(8)
}

/// Bit `i` of a wire bitmap (false beyond its end).
pub fn bit(bits: &[u8], i: usize) -> bool {
    bits.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)
}

/// Set bit `i` of a wire bitmap (ignored beyond its end).
pub fn set_bit(bits: &mut [u8], i: usize) {
    if let Some(b) = bits.get_mut(i / 8) {
        *b |= 1 << (i % 8);
    }
}

fn check_bitmap(l: u32, bits: &[u8], field: &'static str) -> Result<(), Invalid> {
    if l == 0 {
        return Err((field, "L must be at least 1"));
    }
    if bits.len() != bitmap_bytes(l) {
        return Err((field, "bitmap length is not ceil(L/8) bytes"));
    }
    let used = l % 8;
    if used != 0 {
        let last = bits.last().copied().unwrap_or(0);
        if last >> used != 0 {
            return Err((field, "bits beyond L are set"));
        }
    }
    Ok(())
}

fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Status(s) | Message::LocalStatus(s) => check_bitmap(s.l, s.lob, "tree.lob"),
        Message::Assign { l, bits, .. } => check_bitmap(*l, bits, "tree.assign"),
        _ => Ok(()),
    }
}

const STATUS_FIXED: usize = 4 + 4 + 2 + 4 + 8 + 4;

impl<'a> Message<'a> {
    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        validate(self).map_err(encode_error)
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Status(s) | Message::LocalStatus(s) => Status::len(s),
            Message::LocalData { payload, .. } | Message::Data { payload, .. } => {
                12 + payload.len()
            }
            Message::Assign { bits, .. } => 20 + bits.len(),
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Status(s) | Message::LocalStatus(s) => Status::write(s, w),
            Message::LocalData {
                lmvci: vc,
                seq,
                payload,
            }
            | Message::Data {
                mvci: vc,
                seq,
                payload,
            } => {
                w.u32(*vc);
                w.u64(*seq);
                w.put(payload);
            }
            Message::Assign {
                lmvci,
                lepi,
                l,
                base,
                bits,
            } => {
                w.u32(*lmvci);
                w.u32(*lepi);
                w.u32(*l);
                w.u64(*base);
                w.put(bits);
            }
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let kind = Kind::from_u8(kind)?;
        let m = match kind {
            Kind::Status => Message::Status(Status::read(r)?),
            Kind::LocalStatus => Message::LocalStatus(Status::read(r)?),
            Kind::LocalData | Kind::Data => {
                let vc = r.u32()?;
                let seq = r.u64()?;
                let payload = r.rest();
                if kind == Kind::Data {
                    Message::Data {
                        mvci: vc,
                        seq,
                        payload,
                    }
                } else {
                    Message::LocalData {
                        lmvci: vc,
                        seq,
                        payload,
                    }
                }
            }
            Kind::Assign => {
                let lmvci = r.u32()?;
                let lepi = r.u32()?;
                let l = r.u32()?;
                let base = r.u64()?;
                let bits = r.bytes(bitmap_bytes(l))?;
                Message::Assign {
                    lmvci,
                    lepi,
                    l,
                    base,
                    bits,
                }
            }
        };
        validate(&m).map_err(decode_error)?;
        Ok(m)
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
pub fn samples() -> Vec<Sample<Message<'static>>> {
    vec![
        Sample::control(
            ENV,
            Message::Status(Status {
                vc: 1,
                id: 2,
                k: 3,
                l: 21,
                lw_r: 400,
                buffer_available: 12,
                lob: &[0xff, 0x0f, 0x10],
            }),
            "524d010400000000010203040a0b0c0d0000001d \
             000000010000000200030000001500000000000001900000000cff0f10",
        ),
        Sample::control(
            ENV,
            Message::LocalStatus(Status {
                vc: 5,
                id: 6,
                k: 7,
                l: 8,
                lw_r: 9,
                buffer_available: 10,
                lob: &[0x81],
            }),
            "524d010401000000010203040a0b0c0d0000001b \
             000000050000000600070000000800000000000000090000000a81",
        ),
        Sample::data(
            RX,
            Message::LocalData {
                lmvci: 4,
                seq: 8,
                payload: P,
            },
            "524d010402010000010203040a0b0c0d0000000f \
             000000040000000000000008aabbcc",
        ),
        Sample::data(
            ENV,
            Message::Data {
                mvci: 4,
                seq: 8,
                payload: P,
            },
            "524d010403000000010203040a0b0c0d0000000f \
             000000040000000000000008aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Assign {
                lmvci: 4,
                lepi: 5,
                l: 9,
                base: 77,
                bits: &[0xff, 0x01],
            },
            "524d010404000000010203040a0b0c0d00000016 \
             000000040000000500000009000000000000004dff01",
        ),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::tests::{assert_any_body_round_trips, assert_round_trip, class_of};
    use crate::{Envelope, Family, Packet, PacketClass, FLAG_RETRANSMISSION, HEADER_LEN};
    use proptest::prelude::*;

    fn env(flags: u8) -> Envelope {
        Envelope {
            session: 7,
            source: 3,
            flags,
        }
    }

    /// A valid bitmap of `l` bits from arbitrary bytes (tail bits masked).
    fn mask(l: u32, mut v: Vec<u8>) -> Vec<u8> {
        v.resize(bitmap_bytes(l), 0);
        if !l.is_multiple_of(8) {
            if let Some(b) = v.last_mut() {
                *b &= (1u8 << (l % 8)) - 1;
            }
        }
        v
    }

    /// The shared round trip, and: the family is `tree`, the bare header is refused.
    fn round_trip(e: Envelope, m: &Message<'_>) -> Result<(), TestCaseError> {
        let m = crate::Message::Tree(m.clone());
        assert_round_trip(e, &m)?;
        let bytes = Packet::to_vec(e, &m).unwrap();
        prop_assert_eq!(Packet::decode(&bytes).unwrap().header.family, Family::Tree);
        prop_assert!(Packet::decode(&bytes[..HEADER_LEN]).is_err());
        Ok(())
    }

    proptest! {
        #[test]
        fn tree_round_trip(
            kind in 0u8..5,
            vc in any::<u32>(), id in any::<u32>(), k in any::<u16>(), l in 1u32..3000,
            lw in any::<u64>(), buf in any::<u32>(), seq in any::<u64>(),
            raw in proptest::collection::vec(any::<u8>(), 0..400),
            flags in 0u8..2,
        ) {
            let lob = mask(l, raw.clone());
            let s = Status { vc, id, k, l, lw_r: lw, buffer_available: buf, lob: &lob };
            let m = match kind {
                0 => Message::Status(s),
                1 => Message::LocalStatus(s),
                2 => Message::LocalData { lmvci: vc, seq, payload: &raw },
                3 => Message::Data { mvci: vc, seq, payload: &raw },
                _ => Message::Assign { lmvci: vc, lepi: id, l, base: lw, bits: &lob },
            };
            round_trip(env(flags), &m)?;
        }

        #[test]
        fn tree_arbitrary_bodies_never_panic(kind in 0u8..6, body in proptest::collection::vec(any::<u8>(), 0..300)) {
            assert_any_body_round_trips(Family::Tree, kind, &body)?;
        }
    }

    #[test]
    fn bitmap_invariants_are_enforced_both_ways() {
        static GOOD: [u8; 2] = [0xff, 0x01];
        let s = |l: u32, lob: &'static [u8]| Status {
            vc: 1,
            id: 2,
            k: 1,
            l,
            lw_r: 10,
            buffer_available: 4,
            lob,
        };
        // L = 9 needs 2 bytes with only bit 0 of the second one usable.
        let ok = crate::Message::Tree(Message::Status(s(9, &GOOD)));
        let bytes = Packet::to_vec(env(0), &ok).unwrap();
        assert!(Packet::decode(&bytes).is_ok());
        for (l, lob, field) in [
            (9u32, &[0xffu8, 0x03][..], "tree.lob"),
            (0, &[][..], "tree.lob"),
            (16, &[0xff][..], "tree.lob"),
        ] {
            let lob: &'static [u8] = Box::leak(lob.to_vec().into_boxed_slice());
            let m = crate::Message::Tree(Message::LocalStatus(s(l, lob)));
            assert_eq!(
                Packet::to_vec(env(0), &m),
                Err(EncodeError::InvalidField {
                    field,
                    why: match (l, lob.len()) {
                        (0, _) => "L must be at least 1",
                        (16, _) => "bitmap length is not ceil(L/8) bytes",
                        _ => "bits beyond L are set",
                    }
                })
            );
        }
        // Flip a tail bit on the wire: the decoder refuses it with a typed error.
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last] |= 0x80;
        assert!(matches!(
            Packet::decode(&bad),
            Err(DecodeError::InvalidField {
                field: "tree.lob",
                ..
            })
        ));
        // A status claiming a 4-billion-bit LOB is refused as truncated, not allocated.
        // (Unknown kinds of every family: `tests/samples.rs`.)
        let mut huge = bytes;
        let l_at = HEADER_LEN + 10;
        huge[l_at..l_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            Packet::decode(&huge),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn classes_and_bit_helpers() {
        let p = [1u8, 2, 3];
        let data = Message::Data {
            mvci: 1,
            seq: 5,
            payload: &p,
        };
        let local = Message::LocalData {
            lmvci: 1,
            seq: 5,
            payload: &p,
        };
        let lob = [0u8];
        let st = Message::Status(Status {
            vc: 0,
            id: 0,
            k: 1,
            l: 3,
            lw_r: 0,
            buffer_available: 0,
            lob: &lob,
        });
        for (flags, m, want) in [
            (0, data, PacketClass::OriginalData),
            (FLAG_RETRANSMISSION, local, PacketClass::RepairData),
            (0, st, PacketClass::Control),
        ] {
            assert_eq!(class_of(flags, &crate::Message::Tree(m)), want);
        }
        assert_eq!(Family::from_u8(4), Ok(Family::Tree));
        assert_eq!(Family::Tree.name(), "tree");
        let mut b = vec![0u8; bitmap_bytes(12)];
        set_bit(&mut b, 0);
        set_bit(&mut b, 11);
        set_bit(&mut b, 99);
        assert_eq!(b, vec![0x01, 0x08]);
        assert!(bit(&b, 11) && bit(&b, 0) && !bit(&b, 1) && !bit(&b, 99));
    }
}

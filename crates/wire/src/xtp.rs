//! XTP-style transmitter-driven multicast (seed 002: Johnstone & Williams 1997, measuring
//! SandiaXTP, an implementation of XTP 4.0).
//!
//! ## The 32-byte header
//!
//! The thesis gives one wire-level fact: an XTP header of **32 bytes**, which leaves
//! **1,448 bytes** of data per packet on 1,500-byte Ethernet (1500 − 20 IP − 32 XTP). rmcast
//! keeps its own 20-byte common header (magic, version, family 6, kind, flags, session, source,
//! length — the session id plays XTP's context `key`, the length XTP's `dlen`) and adds 12
//! XTP-specific bytes that every `xtp` packet carries, so every packet opens with exactly
//! [`XTP_HEADER_LEN`] = 32 bytes:
//!
//! ```text
//!  0                    20          28      30        32
//!  +--------------------+-----------+-------+---------+
//!  | rmcast header (20) | seq (u64) | sync  | options |
//!  |  family 6, kind    |           | (u16) |  (u16)  |
//!  +--------------------+-----------+-------+---------+
//! ```
//!
//! * `seq` — in FIRST and DATA the packet's sequence number (rmcast counts **packets**, not
//!   bytes as XTP 4.0 does; a user write larger than a packet is split over consecutive
//!   numbers); in CNTL and FASTNAK the receiver's `rseq`: every packet below it is held.
//! * `sync` — in FIRST and DATA the sender's handshake number, stamped on packets that carry
//!   SREQ; in CNTL and FASTNAK the `echo` of the sync the receiver answers (0 for a FASTNAK
//!   or an unsolicited CNTL), so the sender can match a reply to its request.
//! * `options` — the XTP option bits this implementation uses ([`opt`]); others must be zero.
//!
//! XTP's checksum, sort (priority) and 8-byte key are not carried: rmcast's header already
//! has the session and source ids, and UDP has its own checksum.
//!
//! **Payload limit.** [`MAX_DATA_ETHERNET`] = [`ETHERNET_MTU`] − [`IP_HEADER_LEN`] −
//! [`XTP_HEADER_LEN`] = 1,448, the thesis's figure; the agents use it as the default packet
//! data size. Over UDP an extra 8 bytes of UDP header make a full packet 1,508 bytes of IP,
//! so on a real 1,500-byte Ethernet path one would configure 1,440; on loopback and in the
//! simulator (which carries the rmcast datagram as the frame, like XTP directly over the
//! link) 1,448 is what the thesis's arithmetic assumes.
//!
//! ## Bodies
//!
//! ```text
//! FIRST   body: service (u8) | retx (u8) | maxdata (u16) | rate (u32, bytes/s, 0 = none)
//!               | window (u32)
//! DATA    body: payload (rest)
//! CNTL    body: alloc (u64) | nspans (u16) | nspans × [left (u64) | right (u64)]
//! FASTNAK body: as CNTL
//! ```
//!
//! FIRST opens the association (group set-up; with [`opt::SREQ`] every receiver answers with
//! a CNTL). DATA with [`opt::EOM`] ends a user write; with [`opt::RECS`] the payload is a
//! sequence of whole coalesced writes, each `len (u16) | bytes`. CNTL is a status reply:
//! `alloc` is the first sequence number the receiver cannot yet accept (flow-control credit),
//! spans list the packets it holds above `rseq` as half-open ranges `[left, right)`, strictly
//! increasing and separated (so a span never touches the next); they make selective
//! retransmission possible (XTP 4.0 puts spans in ECNTL; here CNTL carries them). FASTNAK is
//! a status a receiver sends on its own the moment it sees a gap.

use crate::field::{decode_items, encode_items, Field};
use crate::layout::{slot, Slot, Wire};
use crate::samples::{Sample, ENV, P};
use crate::{DecodeError, EncodeError, Reader, Writer};

/// Bytes of the XTP-specific fields after rmcast's common header.
pub const XTP_FIELDS_LEN: usize = 12;
/// The whole header of an `xtp` packet: 20 common + 12 XTP bytes, the thesis's 32.
pub const XTP_HEADER_LEN: usize = crate::HEADER_LEN + XTP_FIELDS_LEN;
/// Ethernet MTU the thesis computes with.
pub const ETHERNET_MTU: usize = 1500;
/// IPv4 header without options.
pub const IP_HEADER_LEN: usize = 20;
/// Largest data per packet on Ethernet per the thesis: 1500 − 20 − 32 = 1448.
pub const MAX_DATA_ETHERNET: usize = ETHERNET_MTU - IP_HEADER_LEN - XTP_HEADER_LEN;
/// Length of one span on the wire.
pub const SPAN_LEN: usize = 16;
/// Most spans one CNTL or FASTNAK may carry.
pub const MAX_SPANS: usize = 64;
/// FIRST body length.
pub const FIRST_BODY_LEN: usize = 12;

/// Option bits of the `options` field.
pub mod opt {
    /// Status request: every receiver answers with a CNTL echoing `sync`.
    pub const SREQ: u16 = 0x0001;
    /// Receivers report gaps at once (FASTNAK packets).
    pub const FASTNAK: u16 = 0x0002;
    /// This DATA ends a user write.
    pub const EOM: u16 = 0x0004;
    /// The payload is a sequence of whole coalesced writes, `len (u16) | bytes` each.
    pub const RECS: u16 = 0x0008;
    /// Multicast association.
    pub const MULTI: u16 = 0x0010;
    /// No error control: receivers deliver what arrives and never ask for repairs.
    pub const NOERR: u16 = 0x0020;
    /// No flow control: receivers' `alloc` is not enforced.
    pub const NOFLOW: u16 = 0x0040;
    /// The sender is closing (no data beyond this packet's sequence number + 1).
    pub const WCLOSE: u16 = 0x0080;
    /// Every bit this version defines.
    pub const KNOWN: u16 = SREQ | FASTNAK | EOM | RECS | MULTI | NOERR | NOFLOW | WCLOSE;
}

packet_kinds! {
    /// Packet kinds of the `xtp` family.
    Xtp, data: [Data];
    /// FIRST: opens the association, carrying the traffic specification.
    First = 1,
    /// DATA: a packet of a user write.
    Data = 2,
    /// CNTL: a receiver's status reply.
    Cntl = 3,
    /// FASTNAK: a status a receiver sends on its own when it sees a gap.
    Fastnak = 4,
}

wire_enum! {
    /// The service an association offers (the FIRST packet's `service`).
    Service, "xtp.service", "unknown service";
    /// Reliable multicast stream.
    ReliableMulticast = 1,
    /// Unreliable multicast (no error control).
    UnreliableMulticast = 2,
    /// Reliable unicast stream.
    ReliableUnicast = 3,
    /// Unreliable unicast datagrams.
    UnreliableUnicast = 4,
}

wire_enum! {
    /// Retransmission scheme announced in FIRST.
    Retx, "xtp.retx", "unknown retransmission scheme";
    /// Go-back-N from the first missing packet.
    GoBackN = 0,
    /// Selective repeat of the missing packets only.
    Selective = 1,
}

wire_struct! {
    /// The traffic specification a FIRST packet carries (FIRST's body).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct TrafficSpec {
        /// The service asked for.
        pub service: Service,
        /// The retransmission scheme.
        pub retx: Retx,
        /// Largest data per packet.
        pub maxdata: u16,
        /// Rate limit in bytes per second; 0 = no rate control.
        pub rate: u32,
        /// Send window in packets.
        pub window: u32,
    }
}

wire_struct! {
    /// A half-open range `[left, right)` of packet sequence numbers a receiver holds.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Span {
        /// The first sequence number held.
        pub left: u64,
        /// The first sequence number after the span.
        pub right: u64,
    }
}

borrowed_list! {
    /// The spans of a CNTL or FASTNAK, borrowed from the datagram (validated: at most
    /// [`MAX_SPANS`], each non-empty, strictly increasing and separated).
    Spans, item: SPAN_LEN, each: Span as "span", count: "nspans",
        most: MAX_SPANS => ("xtp.spans", "more than MAX_SPANS"),
        checked: Spans::from_raw;
}

impl<'a> Spans<'a> {
    /// No spans.
    pub const EMPTY: Spans<'static> = Spans { raw: &[] };

    /// Wrap raw span bytes, checking every invariant.
    pub fn from_raw(raw: &'a [u8]) -> Result<Self, DecodeError> {
        if !raw.len().is_multiple_of(SPAN_LEN) {
            return Err(DecodeError::InvalidField {
                field: "xtp.spans",
                why: "length not a multiple of 16",
            });
        }
        let s = Spans { raw };
        if s.len() > MAX_SPANS {
            return Err(DecodeError::InvalidField {
                field: "xtp.spans",
                why: "more than MAX_SPANS",
            });
        }
        let mut prev_right: Option<u64> = None;
        for sp in s.iter() {
            if sp.left >= sp.right {
                return Err(DecodeError::InvalidField {
                    field: "xtp.spans",
                    why: "empty or inverted span",
                });
            }
            if prev_right.is_some_and(|p| sp.left <= p) {
                return Err(DecodeError::InvalidField {
                    field: "xtp.spans",
                    why: "spans not increasing and separated",
                });
            }
            prev_right = Some(sp.right);
        }
        Ok(s)
    }

    /// Append spans in wire form (the caller keeps them valid; the encoder checks).
    pub fn encode(spans: impl IntoIterator<Item = Span>, out: &mut Vec<u8>) {
        encode_items(spans, out);
    }

    /// The spans, decoded, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = Span> + 'a {
        decode_items(self.raw, SPAN_LEN)
    }
}

/// A status report (CNTL or FASTNAK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status<'a> {
    /// Every packet below `rseq` is held.
    pub rseq: u64,
    /// The sync of the SREQ this answers (0 if none).
    pub echo: u16,
    /// Option bits ([`opt`]).
    pub options: u16,
    /// First sequence number the receiver cannot accept yet.
    pub alloc: u64,
    /// The packets held above `rseq`.
    pub spans: Spans<'a>,
}

/// The `options` field: the option bits this version defines; another is refused.
const OPTIONS: Slot = slot(
    "options",
    &["Option bits"],
    Wire::Flags {
        width: 2,
        bits: &[
            (opt::SREQ, "sreq"),
            (opt::FASTNAK, "fastnak"),
            (opt::EOM, "eom"),
            (opt::RECS, "recs"),
            (opt::MULTI, "multi"),
            (opt::NOERR, "noerr"),
            (opt::NOFLOW, "noflow"),
            (opt::WCLOSE, "wclose"),
        ],
    },
);
const SEQ: Slot = slot("seq", &["The packet's sequence number"], Wire::Uint(8));
const SYNC: Slot = slot("sync", &["The sender's handshake number"], Wire::Uint(2));
const STATUS: &[Slot] = &[
    slot(
        "rseq",
        &["rseq: every packet below it is held"],
        Wire::Uint(8),
    ),
    slot("echo", &["The sync of the SREQ answered"], Wire::Uint(2)),
    OPTIONS,
    slot(
        "alloc",
        &["First sequence number the receiver cannot accept yet"],
        Wire::Uint(8),
    ),
    slot(
        "spans",
        &["The packets held above rseq"],
        <Spans<'static> as Field<'static>>::WIRE,
    ),
];

/// The fields of a `kind` body in wire order, the 12 XTP header bytes first (written here:
/// the codec below is by hand).
pub fn layout(kind: Kind) -> &'static [Slot] {
    match kind {
        Kind::First => {
            const S: &[Slot] = &[
                SEQ,
                SYNC,
                OPTIONS,
                slot(
                    "spec",
                    &["The traffic specification"],
                    <TrafficSpec as Field<'static>>::WIRE,
                ),
            ];
            S
        }
        Kind::Data => {
            const S: &[Slot] = &[
                SEQ,
                SYNC,
                OPTIONS,
                slot("payload", &["The write's bytes"], Wire::Rest),
            ];
            S
        }
        Kind::Cntl | Kind::Fastnak => STATUS,
    }
}

/// An `xtp` message (the 12 XTP header bytes and the body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// FIRST.
    First {
        /// The packet's sequence number.
        seq: u64,
        /// The sender's handshake number, on a packet carrying SREQ.
        sync: u16,
        /// Option bits ([`opt`]).
        options: u16,
        /// The traffic specification.
        spec: TrafficSpec,
    },
    /// DATA.
    Data {
        /// The packet's sequence number.
        seq: u64,
        /// The sender's handshake number, on a packet carrying SREQ.
        sync: u16,
        /// Option bits ([`opt`]).
        options: u16,
        /// The write's bytes (whole coalesced writes with [`opt::RECS`]).
        payload: &'a [u8],
    },
    /// CNTL.
    Cntl(Status<'a>),
    /// FASTNAK.
    Fastnak(Status<'a>),
}

/// Iterate the coalesced writes of a [`opt::RECS`] payload; an error ends it.
pub fn records(payload: &[u8]) -> impl Iterator<Item = Result<&[u8], DecodeError>> + '_ {
    let mut r = Reader::new(payload);
    let mut failed = false;
    core::iter::from_fn(move || {
        if failed || r.remaining() == 0 {
            return None;
        }
        let item = r.u16().and_then(|n| r.bytes(usize::from(n)));
        failed = item.is_err();
        Some(item)
    })
}

/// Append one record (`len | bytes`) to a RECS payload; `None` if longer than `u16::MAX`.
pub fn push_record(out: &mut Vec<u8>, data: &[u8]) -> Option<()> {
    let n = u16::try_from(data.len()).ok()?;
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(data);
    Some(())
}

impl<'a> Message<'a> {
    /// The 12 XTP header bytes every kind opens with: `seq`, `sync` and `options` (in CNTL
    /// and FASTNAK `rseq`, `echo` and `options`).
    fn head(&self) -> (u64, u16, u16) {
        match self {
            Message::First {
                seq, sync, options, ..
            }
            | Message::Data {
                seq, sync, options, ..
            } => (*seq, *sync, *options),
            Message::Cntl(s) | Message::Fastnak(s) => (s.rseq, s.echo, s.options),
        }
    }

    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        let (_, _, options) = self.head();
        if options & !opt::KNOWN != 0 {
            return Err(EncodeError::InvalidField {
                field: "xtp.options",
                why: "unknown option bits",
            });
        }
        match self {
            Message::Cntl(s) | Message::Fastnak(s) => {
                Spans::from_raw(s.spans.raw).map_err(|_| EncodeError::InvalidField {
                    field: "xtp.spans",
                    why: "spans must be at most 64, non-empty, increasing and separated",
                })?;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        XTP_FIELDS_LEN
            + match self {
                Message::First { spec, .. } => TrafficSpec::len(spec),
                Message::Data { payload, .. } => payload.len(),
                Message::Cntl(s) | Message::Fastnak(s) => 8 + <Spans as Field>::len(&s.spans),
            }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        let (seq, sync, options) = self.head();
        w.u64(seq);
        w.u16(sync);
        w.u16(options);
        match self {
            Message::First { spec, .. } => TrafficSpec::write(spec, w),
            Message::Data { payload, .. } => w.put(payload),
            Message::Cntl(s) | Message::Fastnak(s) => {
                w.u64(s.alloc);
                <Spans as Field>::write(&s.spans, w);
            }
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let kind = Kind::from_u8(kind)?;
        let seq = r.u64()?;
        let sync = r.u16()?;
        let options = r.u16()?;
        if options & !opt::KNOWN != 0 {
            return Err(DecodeError::Reserved("xtp options"));
        }
        match kind {
            Kind::First => Ok(Message::First {
                seq,
                sync,
                options,
                spec: TrafficSpec::read(r)?,
            }),
            Kind::Data => Ok(Message::Data {
                seq,
                sync,
                options,
                payload: r.rest(),
            }),
            Kind::Cntl | Kind::Fastnak => {
                let alloc = r.u64()?;
                let spans = <Spans as Field>::read(r)?;
                let s = Status {
                    rseq: seq,
                    echo: sync,
                    options,
                    alloc,
                    spans,
                };
                Ok(if kind == Kind::Cntl {
                    Message::Cntl(s)
                } else {
                    Message::Fastnak(s)
                })
            }
        }
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
#[allow(clippy::expect_used)]
pub fn samples() -> Vec<Sample<Message<'static>>> {
    let mut raw = Vec::new();
    Spans::encode(
        [
            Span { left: 5, right: 9 },
            Span {
                left: 11,
                right: 300,
            },
        ],
        &mut raw,
    );
    let spans = Spans::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output");
    vec![
        Sample::control(
            ENV,
            Message::First {
                seq: 0,
                sync: 1,
                options: opt::SREQ | opt::MULTI,
                spec: TrafficSpec {
                    service: Service::ReliableMulticast,
                    retx: Retx::Selective,
                    maxdata: 1448,
                    rate: 0x0102_0304,
                    window: 64,
                },
            },
            "524d010601000000010203040a0b0c0d00000018 \
             000000000000000000010011010105a80102030400000040",
        ),
        Sample::data(
            ENV,
            Message::Data {
                seq: 41,
                sync: 3,
                options: opt::EOM,
                payload: P,
            },
            "524d010602000000010203040a0b0c0d0000000f \
             000000000000002900030004aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Cntl(Status {
                rseq: 4,
                echo: 3,
                options: 0,
                alloc: 104,
                spans,
            }),
            "524d010603000000010203040a0b0c0d00000036 \
             0000000000000004000300000000000000000068000200000000000000050000\
             000000000009000000000000000b000000000000012c",
        ),
        Sample::control(
            ENV,
            Message::Fastnak(Status {
                rseq: 4,
                echo: 0,
                options: opt::FASTNAK,
                alloc: 104,
                spans: Spans::EMPTY,
            }),
            "524d010604000000010203040a0b0c0d00000016 \
             00000000000000040000000200000000000000680000",
        ),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::tests::class_of;
    use crate::{Envelope, Family, Message as M, Packet, PacketClass, HEADER_LEN};
    use proptest::prelude::*;

    fn env() -> Envelope {
        Envelope {
            session: 9,
            source: 3,
            flags: 0,
        }
    }

    #[test]
    fn header_is_32_bytes_and_payload_limit_is_1448() {
        assert_eq!(XTP_HEADER_LEN, 32);
        assert_eq!(MAX_DATA_ETHERNET, 1448);
        let p = vec![7u8; MAX_DATA_ETHERNET];
        let m = M::Xtp(Message::Data {
            seq: 1,
            sync: 0,
            options: opt::EOM,
            payload: &p,
        });
        let v = Packet::to_vec(env(), &m).unwrap();
        assert_eq!(v.len(), XTP_HEADER_LEN + MAX_DATA_ETHERNET);
        assert_eq!(v.len() + IP_HEADER_LEN, ETHERNET_MTU);
    }

    #[test]
    fn spans_are_validated_both_ways() {
        let mut raw = Vec::new();
        Spans::encode(
            [Span { left: 5, right: 9 }, Span { left: 9, right: 12 }],
            &mut raw,
        );
        assert!(Spans::from_raw(&raw).is_err(), "touching spans");
        raw.clear();
        Spans::encode([Span { left: 5, right: 5 }], &mut raw);
        assert!(Spans::from_raw(&raw).is_err(), "empty span");
        raw.clear();
        Spans::encode(
            [
                Span { left: 5, right: 9 },
                Span {
                    left: 11,
                    right: 12,
                },
            ],
            &mut raw,
        );
        let s = Spans::from_raw(&raw).unwrap();
        assert_eq!(s.iter().count(), 2);
        // The encoder refuses invalid spans handed to it unchecked.
        let bad = [0u8; 16];
        let m = M::Xtp(Message::Cntl(Status {
            rseq: 0,
            echo: 0,
            options: 0,
            alloc: 0,
            spans: Spans { raw: &bad },
        }));
        assert!(Packet::to_vec(env(), &m).is_err());
        // Too many spans.
        let mut many = Vec::new();
        Spans::encode(
            (0..65u64).map(|i| Span {
                left: i * 3,
                right: i * 3 + 1,
            }),
            &mut many,
        );
        assert!(Spans::from_raw(&many).is_err());
    }

    #[test]
    fn typed_errors() {
        let mut v = Packet::to_vec(
            env(),
            &M::Xtp(Message::First {
                seq: 0,
                sync: 1,
                options: opt::SREQ | opt::MULTI,
                spec: TrafficSpec {
                    service: Service::ReliableMulticast,
                    retx: Retx::Selective,
                    maxdata: 1448,
                    rate: 0,
                    window: 64,
                },
            }),
        )
        .unwrap();
        assert_eq!(v.len(), XTP_HEADER_LEN + FIRST_BODY_LEN);
        let ok = v.clone();
        v[HEADER_LEN + 10] = 0x80; // unknown option bit
        assert_eq!(
            Packet::decode(&v),
            Err(DecodeError::Reserved("xtp options"))
        );
        let mut v = ok.clone();
        v[XTP_HEADER_LEN] = 9; // service
        assert!(matches!(
            Packet::decode(&v),
            Err(DecodeError::InvalidField {
                field: "xtp.service",
                ..
            })
        ));
        let mut v = ok;
        v[XTP_HEADER_LEN + 1] = 2; // retx
        assert!(matches!(
            Packet::decode(&v),
            Err(DecodeError::InvalidField {
                field: "xtp.retx",
                ..
            })
        ));
        // (Unknown kinds of every family: `tests/samples.rs`.)
    }

    #[test]
    fn records_round_trip_and_reject_truncation() {
        let mut p = Vec::new();
        push_record(&mut p, b"abc").unwrap();
        push_record(&mut p, b"").unwrap();
        push_record(&mut p, b"xy").unwrap();
        let got: Vec<&[u8]> = records(&p).map(|r| r.unwrap()).collect();
        assert_eq!(got, vec![&b"abc"[..], &b""[..], &b"xy"[..]]);
        let cut = &p[..p.len() - 1];
        assert!(records(cut).any(|r| r.is_err()));
        assert!(push_record(&mut p, &vec![0; 70_000]).is_none());
    }

    #[test]
    fn classes() {
        let d = M::Xtp(Message::Data {
            seq: 4,
            sync: 0,
            options: 0,
            payload: b"x",
        });
        assert_eq!(
            class_of(crate::FLAG_RETRANSMISSION, &d),
            PacketClass::RepairData
        );
        let c = M::Xtp(Message::Fastnak(Status {
            rseq: 3,
            echo: 0,
            options: 0,
            alloc: 10,
            spans: Spans::EMPTY,
        }));
        assert_eq!(class_of(0, &c), PacketClass::Control);
        assert_eq!(Family::from_u8(6), Ok(Family::Xtp));
        assert_eq!(Family::Xtp.name(), "xtp");
    }

    fn spans_strategy() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec((1u64..50, 1u64..50), 0..MAX_SPANS).prop_map(|v| {
            let mut at = 0u64;
            let mut spans = Vec::new();
            for (gap, len) in v {
                let left = at + gap;
                spans.push(Span {
                    left,
                    right: left + len,
                });
                at = left + len;
            }
            let mut raw = Vec::new();
            Spans::encode(spans, &mut raw);
            raw
        })
    }

    proptest! {
        #[test]
        fn round_trip(k in 0u8..4, seq in any::<u64>(), sync in any::<u16>(),
                      options in any::<u16>(), alloc in any::<u64>(),
                      payload in proptest::collection::vec(any::<u8>(), 0..2048),
                      spans in spans_strategy(), rate in any::<u32>(), window in any::<u32>(),
                      maxdata in any::<u16>(), cut in 0usize..4096) {
            let options = options & opt::KNOWN;
            let st = Status { rseq: seq, echo: sync, options, alloc,
                              spans: Spans::from_raw(&spans).unwrap() };
            let msg = match k {
                0 => Message::First { seq, sync, options, spec: TrafficSpec {
                    service: Service::UnreliableUnicast, retx: Retx::GoBackN, maxdata, rate, window } },
                1 => Message::Data { seq, sync, options, payload: &payload },
                2 => Message::Cntl(st),
                _ => Message::Fastnak(st),
            };
            let m = M::Xtp(msg);
            let v = Packet::to_vec(env(), &m).unwrap();
            let p = Packet::decode(&v).unwrap();
            prop_assert_eq!(&p.message, &m);
            prop_assert_eq!(p.header.source, 3);
            // Every strict prefix is rejected (the header announces the length).
            if cut < v.len() {
                prop_assert!(Packet::decode(&v[..cut]).is_err());
            }
        }
    }
}

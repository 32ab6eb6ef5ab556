//! # rmcast-wire — packet formats
//!
//! Every rmcast datagram starts with the same versioned [`Header`] (20 bytes, network byte
//! order) followed by a body whose layout depends on the protocol [`Family`] and packet kind.
//! Each family has one message enum in its own module (see [`saw`]); [`Packet::decode`] turns a
//! datagram into a typed packet and [`Packet::encode`] does the reverse. A family states each
//! message's fields once, in wire order, in a `messages!` declaration; the enum's encoder,
//! decoder and length come from per-field codecs written once (`field.rs`), and the family's
//! own rules stay in one `validate` function beside it. `tree` and `xtp`, whose layouts are
//! not plain field sequences, write their codecs by hand. The same declarations give every
//! kind's layout as data ([`layout`]), from which the Wireshark dissector's fields and
//! decoding are generated ([`dissector`]).
//!
//! ## What this crate must never do
//!
//! * panic on any input: every malformed datagram yields a [`DecodeError`];
//! * allocate more than the input's own length justifies: decoding borrows from the input
//!   (bodies hold `&[u8]` slices), and length fields are checked against the datagram before
//!   they are used for anything;
//! * know about time, sockets, randomness or protocol state — that is `rmcast-proto`'s job.
//!
//! ## Header layout
//!
//! ```text
//!  0      2     3      4     5     6        8            12           16           20
//!  +------+-----+------+-----+-----+--------+------------+------------+------------+
//!  |magic |ver  |family|kind |flags|reserved| session id | source node| payload len|
//!  | "RM" | 1   |  u8  | u8  | u8  | 0x0000 |    u32     |    u32     |    u32     |
//!  +------+-----+------+-----+-----+--------+------------+------------+------------+
//! ```
//!
//! `payload len` counts the body bytes after the header and must equal the datagram's length
//! minus [`HEADER_LEN`].

#![cfg_attr(not(test), forbid(unsafe_code))]
#![warn(missing_docs)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

/// A family's `Kind` enum: its wire numbers, the conversion from the header's kind byte
/// ([`DecodeError::UnknownKind`] for a number the family does not define), which kinds
/// carry application data, and `Message::kind` (each variant of the family's `Message` is
/// named after its kind). Written once here; `messages!` (in `field.rs`) invokes it for the
/// families it declares, and `tree` and `xtp`, whose codecs are hand-written, invoke it
/// directly:
///
/// ```text
/// packet_kinds! {
///     /// Packet kinds of the `bap` family.
///     Bap, data: [Data];
///     /// DATA: a message.
///     Data = 1,
///     /// ACK: feedback to the sender.
///     Ack = 2,
/// }
/// ```
macro_rules! packet_kinds {
    (
        $(#[$meta:meta])*
        $family:ident, data: [$($data:ident),* $(,)?];
        $($(#[$vmeta:meta])* $name:ident = $value:literal),+ $(,)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Kind {
            $($(#[$vmeta])* $name = $value),+
        }

        impl Kind {
            /// The kind numbered `v` on the wire; [`DecodeError::UnknownKind`] for a number
            /// this family does not define.
            ///
            /// [`DecodeError::UnknownKind`]: crate::DecodeError::UnknownKind
            pub fn from_u8(v: u8) -> Result<Self, $crate::DecodeError> {
                match v {
                    $($value => Ok(Kind::$name),)+
                    kind => Err($crate::DecodeError::UnknownKind {
                        family: $crate::Family::$family,
                        kind,
                    }),
                }
            }
            /// True for kinds that carry application data.
            pub fn is_data(self) -> bool {
                false $(|| self == Kind::$data)*
            }
            /// Every kind of the family, in wire-number order of declaration.
            pub const ALL: &'static [Kind] = &[$(Kind::$name),+];
            /// The kind's name as the packet dissector shows it: the variant's words in
            /// capitals (`LocalStatus` is "LOCAL STATUS").
            pub fn name(self) -> String {
                match self {
                    $(Kind::$name => $crate::family_table::shout(stringify!($name)),)+
                }
            }
        }

        impl Message<'_> {
            /// The packet kind of this message.
            pub fn kind(&self) -> Kind {
                match self {
                    $(Message::$name { .. } => Kind::$name,)+
                }
            }
        }
    };
}

/// A one-byte field's value set: the `#[repr(u8)]` enum, its `from_u8`, which refuses any
/// other number with [`DecodeError::InvalidField`] naming `field` and `why`, and its
/// one-byte `Field` codec:
///
/// ```text
/// wire_enum! {
///     /// Retransmission scheme announced in FIRST.
///     Retx, "xtp.retx", "unknown retransmission scheme";
///     /// Go-back-N from the first missing packet.
///     GoBackN = 0,
///     /// Selective repeat of the missing packets only.
///     Selective = 1,
/// }
/// ```
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $field:literal, $why:literal;
        $($(#[$vmeta:meta])* $variant:ident = $value:literal),+ $(,)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $value),+
        }

        impl $name {
            /// The value numbered `v` on the wire; [`DecodeError::InvalidField`] for another
            /// number.
            ///
            /// [`DecodeError::InvalidField`]: crate::DecodeError::InvalidField
            pub fn from_u8(v: u8) -> Result<Self, $crate::DecodeError> {
                match v {
                    $($value => Ok($name::$variant),)+
                    _ => Err($crate::DecodeError::InvalidField {
                        field: $field,
                        why: $why,
                    }),
                }
            }
        }

        /// One byte on the wire.
        impl<'a> $crate::field::Field<'a> for $name {
            type Value = $name;
            const WIRE: $crate::layout::Wire = $crate::layout::Wire::Enum {
                values: &[$(($value, stringify!($variant))),+],
                why: $why,
            };
            fn len(_: &$name) -> usize {
                1
            }
            fn write(v: &$name, w: &mut $crate::Writer<'_>) {
                w.u8(*v as u8);
            }
            fn read(r: &mut $crate::Reader<'a>) -> Result<$name, $crate::DecodeError> {
                $name::from_u8(r.u8()?)
            }
        }
    };
}

#[macro_use]
mod family_table;
#[macro_use]
mod field;

pub mod bap;
mod cursor;
pub mod dissector;
pub mod ff;
pub mod layout;
pub mod lms;
pub mod norm;
pub mod pgm;
pub mod prmp;
pub mod rfc3208;
pub mod rfc5740;
pub mod rra;
pub mod samples;
pub mod saw;
pub mod session;
pub mod srm;
pub mod tree;
pub mod xtp;

pub use cursor::{Reader, Writer};

/// The two magic bytes that open every rmcast datagram: ASCII "RM".
pub const MAGIC: u16 = 0x524D;
/// The wire-format version this crate speaks.
pub const VERSION: u8 = 1;
/// Length of the common header in bytes.
pub const HEADER_LEN: usize = 20;
/// Largest datagram rmcast sends or accepts (the largest IPv4 UDP payload).
pub const MAX_DATAGRAM: usize = 65_507;
/// Largest body a header may announce.
pub const MAX_PAYLOAD: usize = MAX_DATAGRAM - HEADER_LEN;

/// Header flag: this packet repeats an earlier one (a retransmission or repair).
pub const FLAG_RETRANSMISSION: u8 = 0x01;
/// All flag bits this version defines; others must be zero.
pub const KNOWN_FLAGS: u8 = FLAG_RETRANSMISSION;

/// Why a datagram could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The datagram (or a field inside it) ends before the data it must hold.
    #[error("truncated: needed {needed} bytes, got {got}")]
    Truncated {
        /// Bytes the read needed (counted from the start).
        needed: usize,
        /// Bytes there were.
        got: usize,
    },
    /// The first two bytes are not "RM".
    #[error("bad magic 0x{0:04x}")]
    BadMagic(u16),
    /// A version this build does not speak.
    #[error("unsupported version {0}")]
    UnsupportedVersion(u8),
    /// A protocol family number nobody assigned.
    #[error("unknown protocol family {0}")]
    UnknownFamily(u8),
    /// A packet kind the family does not define.
    #[error("unknown packet kind {kind} for family {family:?}")]
    UnknownKind {
        /// The family of the header.
        family: Family,
        /// The kind number it does not define.
        kind: u8,
    },
    /// The header's payload length disagrees with the datagram's length.
    #[error("header says {header} payload bytes, datagram carries {actual}")]
    LengthMismatch {
        /// Payload bytes the header announces.
        header: u64,
        /// Payload bytes the datagram carries.
        actual: usize,
    },
    /// The datagram, or the payload its header announces, exceeds the maximum.
    #[error("oversize: {len} bytes exceeds the maximum of {max}")]
    Oversize {
        /// Bytes of the datagram or announced payload.
        len: u64,
        /// The largest allowed.
        max: usize,
    },
    /// Flag or reserved bits that this version requires to be zero are set.
    #[error("reserved bits set: {0}")]
    Reserved(&'static str),
    /// A body field holds a value outside its legal range.
    #[error("invalid field {field}: {why}")]
    InvalidField {
        /// The field, as `family.name`.
        field: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Bytes left over after the body was decoded.
    #[error("{0} trailing bytes after the body")]
    TrailingBytes(usize),
}

/// Why a packet could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The encoded packet would be larger than [`MAX_DATAGRAM`].
    #[error("packet of {len} bytes exceeds the maximum datagram of {max}")]
    Oversize {
        /// Bytes the packet would have.
        len: usize,
        /// [`MAX_DATAGRAM`].
        max: usize,
    },
    /// A field value cannot be represented on the wire.
    #[error("field {field} cannot be encoded: {why}")]
    InvalidField {
        /// The field, as `family.name`.
        field: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
}

families! {
    Saw = 1 => saw, "saw", "Multicast stop-and-wait (seed 000).";
    Bap = 2 => bap, "bap", "Multicast block acknowledgment (seed 000).";
    Rra = 3 => rra, "rra", "Round-robin acknowledgment (seed 000, Ch. 5).";
    Tree = 4 => tree, "tree", "Tree-based ACK consolidation and local re-multicast: DSP, CSP, CP (seed 001).";
    Prmp = 5 => prmp, "prmp", "Polling-based reliable multicast, PRMP (seed 004).";
    Xtp = 6 => xtp, "xtp", "XTP-style transmitter-driven multicast (seed 002).";
    Srm = 7 => srm, "srm", "Scalable Reliable Multicast, SRM (seed 003).";
    Pgm = 8 => pgm, "pgm", "PGM essentials after RFC 3208 (seed 003).";
    Lms = 9 => lms, "lms", "Light-weight Multicast Services, LMS (seed 003).";
    Ff = 10 => ff, "ff", "Full-feedback baseline of seed 004 (after Towsley & Mithal).";
    Norm = 11 => norm, "norm", "NACK-Oriented Reliable Multicast, NORM (RFC 5740).";
    Session = 15 => session, "session", "Session control of the real-network driver (`rmcast send`/`recv`).";
}

/// What a packet is for, as far as a protocol-agnostic observer (a simulator's loss filter, a
/// trace, a metric) needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketClass {
    /// Carries application data for the first time.
    OriginalData,
    /// Carries application data again (retransmission or repair).
    RepairData,
    /// Feedback or control: ACK, NAK, status, poll, session messages.
    Control,
}

impl PacketClass {
    /// True for original and repair data.
    pub fn is_data(self) -> bool {
        !matches!(self, PacketClass::Control)
    }
}

/// The common header of every rmcast datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Protocol family of the body.
    pub family: Family,
    /// Family-specific packet kind.
    pub kind: u8,
    /// Flag bits (see [`FLAG_RETRANSMISSION`]).
    pub flags: u8,
    /// Identifies one transfer session; lets receivers ignore strangers on a shared group.
    pub session: u32,
    /// The sending node's id.
    pub source: u32,
    /// Number of body bytes following the header.
    pub payload_len: u32,
}

impl Header {
    /// Parse only the header, checking it against the datagram it came from: magic,
    /// version, family, kind, flags, and that `payload_len` matches what follows. Reads
    /// nothing past the header, allocates nothing.
    pub fn parse(datagram: &[u8]) -> Result<Header, DecodeError> {
        if datagram.len() > MAX_DATAGRAM {
            return Err(DecodeError::Oversize {
                len: datagram.len() as u64,
                max: MAX_DATAGRAM,
            });
        }
        let mut r = Reader::new(datagram);
        if datagram.len() < HEADER_LEN {
            return Err(DecodeError::Truncated {
                needed: HEADER_LEN,
                got: datagram.len(),
            });
        }
        let magic = r.u16()?;
        if magic != MAGIC {
            return Err(DecodeError::BadMagic(magic));
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        let family = Family::from_u8(r.u8()?)?;
        let kind = r.u8()?;
        family.check_kind(kind)?;
        let flags = r.u8()?;
        if flags & !KNOWN_FLAGS != 0 {
            return Err(DecodeError::Reserved("flags"));
        }
        if r.u16()? != 0 {
            return Err(DecodeError::Reserved("reserved header field"));
        }
        let session = r.u32()?;
        let source = r.u32()?;
        let payload_len = r.u32()?;
        if payload_len as usize > MAX_PAYLOAD {
            return Err(DecodeError::Oversize {
                len: u64::from(payload_len),
                max: MAX_PAYLOAD,
            });
        }
        let actual = datagram.len() - HEADER_LEN;
        if payload_len as usize != actual {
            return Err(DecodeError::LengthMismatch {
                header: u64::from(payload_len),
                actual,
            });
        }
        Ok(Header {
            family,
            kind,
            flags,
            session,
            source,
            payload_len,
        })
    }

    /// How a protocol-agnostic observer should treat this packet.
    pub fn class(&self) -> PacketClass {
        let data = self.family.kind_is_data(self.kind);
        if !data {
            PacketClass::Control
        } else if self.flags & FLAG_RETRANSMISSION != 0 {
            PacketClass::RepairData
        } else {
            PacketClass::OriginalData
        }
    }

    fn write(&self, w: &mut Writer<'_>) {
        w.u16(MAGIC);
        w.u8(VERSION);
        w.u8(self.family as u8);
        w.u8(self.kind);
        w.u8(self.flags);
        w.u16(0);
        w.u32(self.session);
        w.u32(self.source);
        w.u32(self.payload_len);
    }
}

/// Addressing fields every packet carries besides its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Envelope {
    /// Session id.
    pub session: u32,
    /// Node id of the sender of the datagram.
    pub source: u32,
    /// Header flags ([`FLAG_RETRANSMISSION`]).
    pub flags: u8,
}

/// A decoded datagram: header fields plus a typed body borrowing from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The common header.
    pub header: Header,
    /// The typed body.
    pub message: Message<'a>,
}

impl<'a> Packet<'a> {
    /// Decode a whole datagram. Never panics; allocates nothing.
    pub fn decode(datagram: &'a [u8]) -> Result<Packet<'a>, DecodeError> {
        let header = Header::parse(datagram)?;
        let body = datagram.get(HEADER_LEN..).unwrap_or_default();
        let mut r = Reader::new(body);
        let message = Message::read_body(header.family, header.kind, &mut r)?;
        if r.remaining() != 0 {
            return Err(DecodeError::TrailingBytes(r.remaining()));
        }
        Ok(Packet { header, message })
    }

    /// Total encoded length of `message` with its header.
    pub fn encoded_len(message: &Message<'_>) -> usize {
        HEADER_LEN + message.body_len()
    }

    /// Encode `message` with `env` into `out` (appending). Fails only if the result would
    /// exceed [`MAX_DATAGRAM`] or a flag outside [`KNOWN_FLAGS`] is set.
    pub fn encode(
        env: Envelope,
        message: &Message<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let body_len = message.body_len();
        let len = HEADER_LEN + body_len;
        if len > MAX_DATAGRAM {
            return Err(EncodeError::Oversize {
                len,
                max: MAX_DATAGRAM,
            });
        }
        if env.flags & !KNOWN_FLAGS != 0 {
            return Err(EncodeError::InvalidField {
                field: "flags",
                why: "unknown flag bits",
            });
        }
        message.check()?;
        let header = Header {
            family: message.family(),
            kind: message.kind(),
            flags: env.flags,
            session: env.session,
            source: env.source,
            payload_len: body_len as u32,
        };
        let start = out.len();
        out.resize(start + len, 0);
        let mut w = Writer::new(out.get_mut(start..).unwrap_or_default());
        header.write(&mut w);
        message.write_body(&mut w);
        debug_assert_eq!(w.written(), len);
        Ok(())
    }

    /// Convenience: encode into a fresh vector.
    pub fn to_vec(env: Envelope, message: &Message<'_>) -> Result<Vec<u8>, EncodeError> {
        let mut v = Vec::with_capacity(Self::encoded_len(message));
        Self::encode(env, message, &mut v)?;
        Ok(v)
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod tests;

//! Field codecs and the declarative home of message layouts.
//!
//! A message body is a sequence of fields. How one field sits on the wire is written once
//! here, as a [`Field`]: big-endian integers, one-byte enums (`wire_enum!`), the rest of the
//! datagram ([`Rest`]), a byte string after its `u16` length ([`LenPrefixed`]), fixed-size
//! items after their `u16` count (raw bytes: `raw_list!`; typed: any [`List`],
//! `borrowed_list!`), fixed byte arrays, structs (`wire_struct!`) and an optional last `u16`.
//! Each codec also says how it sits on the wire as data (`Field::WIRE`, a
//! [`crate::layout::Wire`]), so every declaration below yields its layout as well as its
//! codec. A family whose messages are plain sequences of such fields
//! declares them with `messages!`, which generates its `Kind` (through `packet_kinds!`), its
//! `Message` enum, the enum's `check`, `body_len`, `write_body` and `read_body`, and the
//! family's `layout(kind)` (each field's name, doc comment and wire); the family's own rules
//! (ranges, relations between fields, bounds) stay in one `validate` function in its module, named
//! in the declaration. Families whose layout is not a plain field sequence (`tree`: two kinds share
//! one status struct and bitmaps are sized by another field; `xtp`: every kind opens with the same
//! 12 header bytes, checked before the kind's own fields) write their codec by hand, over `Field`
//! codecs of their parts (`tree::Status`, `xtp::TrafficSpec`, `xtp::Spans`), and their `layout`
//! beside it. The body several families share byte for byte (a `u64` sequence number and the
//! application data) is declared once, in `messages!`, as `SeqData`.

use crate::layout::Wire;
use crate::{DecodeError, EncodeError, Reader, Writer};

/// A field rule a message breaks: the field (as `family.name`) and what is wrong with it.
/// One value serves both directions: [`encode_error`] and [`decode_error`] wrap it.
pub(crate) type Invalid = (&'static str, &'static str);

/// The encoder's error for a broken field rule.
pub(crate) fn encode_error((field, why): Invalid) -> EncodeError {
    EncodeError::InvalidField { field, why }
}

/// The decoder's error for a broken field rule.
pub(crate) fn decode_error((field, why): Invalid) -> DecodeError {
    DecodeError::InvalidField { field, why }
}

/// The rules of a family that has none beyond its fields' layout.
pub(crate) fn no_rules<M>(_: &M) -> Result<(), Invalid> {
    Ok(())
}

/// How one field of a message body is laid out on the wire.
pub(crate) trait Field<'a> {
    /// The value the message holds for this field.
    type Value;
    /// How it sits on the wire, for the layout ([`crate::layout`]).
    const WIRE: Wire;
    /// Bytes `v` occupies on the wire.
    fn len(v: &Self::Value) -> usize;
    /// Append `v`. The message's `check` has accepted it.
    fn write(v: &Self::Value, w: &mut Writer<'_>);
    /// Read the next value, borrowing from the input.
    fn read(r: &mut Reader<'a>) -> Result<Self::Value, DecodeError>;
}

/// Big-endian integers, each its own width.
macro_rules! int_fields {
    ($($t:ident),+) => {$(
        impl<'a> Field<'a> for $t {
            type Value = $t;
            const WIRE: Wire = Wire::Uint(core::mem::size_of::<$t>());
            fn len(_: &$t) -> usize {
                core::mem::size_of::<$t>()
            }
            fn write(v: &$t, w: &mut Writer<'_>) {
                w.$t(*v);
            }
            fn read(r: &mut Reader<'a>) -> Result<$t, DecodeError> {
                r.$t()
            }
        }
    )+};
}

int_fields!(u8, u16, u32, u64);

/// A fixed number of raw bytes.
impl<'a, const N: usize> Field<'a> for [u8; N] {
    type Value = [u8; N];
    const WIRE: Wire = Wire::Bytes(N);
    fn len(_: &[u8; N]) -> usize {
        N
    }
    fn write(v: &[u8; N], w: &mut Writer<'_>) {
        w.put(v);
    }
    fn read(r: &mut Reader<'a>) -> Result<[u8; N], DecodeError> {
        r.array()
    }
}

/// The rest of the datagram (application data): no length on the wire, so it is the last
/// field of its message.
pub(crate) struct Rest;

impl<'a> Field<'a> for Rest {
    type Value = &'a [u8];
    const WIRE: Wire = Wire::Rest;
    fn len(v: &&'a [u8]) -> usize {
        v.len()
    }
    fn write(v: &&'a [u8], w: &mut Writer<'_>) {
        w.put(v);
    }
    fn read(r: &mut Reader<'a>) -> Result<&'a [u8], DecodeError> {
        Ok(r.rest())
    }
}

/// A `u16` byte count, then that many bytes. The family's `validate` bounds the length to
/// `u16::MAX`.
pub(crate) struct LenPrefixed;

impl<'a> Field<'a> for LenPrefixed {
    type Value = &'a [u8];
    const WIRE: Wire = Wire::LenBytes;
    fn len(v: &&'a [u8]) -> usize {
        2 + v.len()
    }
    fn write(v: &&'a [u8], w: &mut Writer<'_>) {
        w.u16(v.len() as u16);
        w.put(v);
    }
    fn read(r: &mut Reader<'a>) -> Result<&'a [u8], DecodeError> {
        let n = usize::from(r.u16()?);
        r.bytes(n)
    }
}

/// The codec of a list a message keeps as raw bytes (its accessors iterate them): a `u16`
/// count, then that many items of `$item`, `$len` bytes each, the count named `$count` and an
/// item `$each` in the layout. The family's `validate` makes the length a multiple of `$len`
/// and the count fit a `u16`.
macro_rules! raw_list {
    (
        $(#[$meta:meta])*
        $name:ident, item: $item:ty, len: $len:expr, count: $count:literal, each: $each:literal;
    ) => {
        $(#[$meta])*
        pub(crate) struct $name;

        impl<'a> $crate::field::Field<'a> for $name {
            type Value = &'a [u8];
            const WIRE: $crate::layout::Wire = $crate::layout::Wire::List {
                count: $count,
                each: $each,
                item: &<$item as $crate::field::Field<'static>>::WIRE,
                most: None,
            };
            fn len(v: &&'a [u8]) -> usize {
                2 + v.len()
            }
            fn write(v: &&'a [u8], w: &mut $crate::Writer<'_>) {
                w.u16((v.len() / $len) as u16);
                w.put(v);
            }
            fn read(r: &mut $crate::Reader<'a>) -> Result<&'a [u8], $crate::DecodeError> {
                let n = usize::from(r.u16()?);
                r.bytes(n * $len)
            }
        }
    };
}

/// A `u16` that is there or not: the body ends before it for `None`, so it is the last
/// field of its message.
impl<'a> Field<'a> for Option<u16> {
    type Value = Option<u16>;
    const WIRE: Wire = Wire::OptionalU16;
    fn len(v: &Option<u16>) -> usize {
        v.map_or(0, |_| 2)
    }
    fn write(v: &Option<u16>, w: &mut Writer<'_>) {
        if let Some(v) = v {
            w.u16(*v);
        }
    }
    fn read(r: &mut Reader<'a>) -> Result<Option<u16>, DecodeError> {
        if r.remaining() == 0 {
            return Ok(None);
        }
        r.u16().map(Some)
    }
}

/// A list of fixed-size items borrowed from the datagram, on the wire as a `u16` item count
/// and the items. The encoder writes `raw().len() / ITEM_LEN` as the count: the family's
/// `validate` bounds it to `u16::MAX`.
pub(crate) trait List<'a>: Sized {
    /// Bytes of one item.
    const ITEM_LEN: usize;
    /// The list's layout (a [`Wire::List`]).
    const LIST_WIRE: Wire;
    /// Refuse a count before its items are read (a family's bound); any `u16` by default.
    fn check_count(_n: usize) -> Result<(), DecodeError> {
        Ok(())
    }
    /// The list over `raw`, `n × ITEM_LEN` bytes just read; the list's own checks.
    fn from_wire(raw: &'a [u8]) -> Result<Self, DecodeError>;
    /// The items in the wire representation.
    fn raw(&self) -> &'a [u8];
}

impl<'a, L: List<'a>> Field<'a> for L {
    type Value = L;
    const WIRE: Wire = L::LIST_WIRE;
    fn len(v: &L) -> usize {
        2 + v.raw().len()
    }
    fn write(v: &L, w: &mut Writer<'_>) {
        w.u16((v.raw().len() / L::ITEM_LEN) as u16);
        w.put(v.raw());
    }
    fn read(r: &mut Reader<'a>) -> Result<L, DecodeError> {
        let n = usize::from(r.u16()?);
        L::check_count(n)?;
        L::from_wire(r.bytes(n * L::ITEM_LEN)?)
    }
}

/// A public struct whose wire form is its fields in order, each by its [`Field`] codec: the
/// struct as written and its own `Field` codec, so a message or a list (see
/// [`encode_items`], [`decode_items`]) carries it like any field.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                pub $field:ident: $ty:ty
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[doc = $fdoc])* pub $field: $ty),+
        }

        impl<'a> $crate::field::Field<'a> for $name {
            type Value = $name;
            const WIRE: $crate::layout::Wire = $crate::layout::Wire::Struct(&[$(
                $crate::layout::Slot {
                    name: stringify!($field),
                    doc: &[$($fdoc),*],
                    wire: <$ty as $crate::field::Field<'a>>::WIRE,
                }
            ),+]);
            fn len(v: &$name) -> usize {
                0 $(+ <$ty as $crate::field::Field<'a>>::len(&v.$field))+
            }
            fn write(v: &$name, w: &mut $crate::Writer<'_>) {
                $(<$ty as $crate::field::Field<'a>>::write(&v.$field, w);)+
            }
            fn read(r: &mut $crate::Reader<'a>) -> Result<$name, $crate::DecodeError> {
                Ok($name {
                    $($field: <$ty as $crate::field::Field<'a>>::read(r)?),+
                })
            }
        }
    };
}

/// Append `items` to `out` in their wire form (a list's items, for its `from_raw`).
pub(crate) fn encode_items<'a, T: Field<'a, Value = T>>(
    items: impl IntoIterator<Item = T>,
    out: &mut Vec<u8>,
) {
    for item in items {
        let at = out.len();
        out.resize(at + T::len(&item), 0);
        if let Some(buf) = out.get_mut(at..) {
            T::write(&item, &mut Writer::new(buf));
        }
    }
}

/// The items of `raw`, `len` bytes each, decoded (a list's raw bytes hold whole items).
pub(crate) fn decode_items<'a, T: Field<'a, Value = T> + 'a>(
    raw: &'a [u8],
    len: usize,
) -> impl Iterator<Item = T> + 'a {
    raw.chunks_exact(len)
        .filter_map(|c| T::read(&mut Reader::new(c)).ok())
}

/// A public list type that borrows its items' wire bytes: the struct, its `raw`, `len` and
/// `is_empty`, and its [`List`] codec. `item: LEN, each: T as "name", count: "name"`: an item
/// is `LEN` bytes, one `T` on the wire, named as the layout shows it, and so is the count.
/// `most: MAX => invalid` refuses a count above `MAX` before the items are read; `checked: f`
/// builds the list with `f(raw)`, the type's own validation (by default any whole number of
/// items is a list). The type's constructor, encoder and item iterator are written beside
/// it.
macro_rules! borrowed_list {
    (
        $(#[$meta:meta])*
        $name:ident, item: $item_len:expr, each: $each_ty:ty as $each:literal,
        count: $count:literal
        $(, most: $max:expr => $too_many:expr)?
        $(, checked: $checked:path)?;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<'a> {
            raw: &'a [u8],
        }

        impl<'a> $name<'a> {
            /// The items in the wire representation.
            pub fn raw(&self) -> &'a [u8] {
                self.raw
            }
            /// Number of items.
            pub fn len(&self) -> usize {
                self.raw.len() / $item_len
            }
            /// Whether there is no item.
            pub fn is_empty(&self) -> bool {
                self.raw.is_empty()
            }
        }

        impl<'a> $crate::field::List<'a> for $name<'a> {
            const ITEM_LEN: usize = $item_len;
            const LIST_WIRE: $crate::layout::Wire = $crate::layout::Wire::List {
                count: $count,
                each: $each,
                item: &<$each_ty as $crate::field::Field<'static>>::WIRE,
                most: borrowed_list!(@most $($max)?),
            };
            $(fn check_count(n: usize) -> Result<(), $crate::DecodeError> {
                if n > $max {
                    return Err($crate::field::decode_error($too_many));
                }
                Ok(())
            })?
            fn from_wire(raw: &'a [u8]) -> Result<Self, $crate::DecodeError> {
                borrowed_list!(@build raw $(, $checked)?)
            }
            fn raw(&self) -> &'a [u8] {
                self.raw
            }
        }
    };
    (@most) => {
        None
    };
    (@most $max:expr) => {
        Some($max)
    };
    (@build $raw:ident) => {
        Ok(Self { raw: $raw })
    };
    (@build $raw:ident, $checked:path) => {
        $checked($raw)
    };
}

/// The codec of a field in a `messages!` declaration: the one named after `as`, else the
/// field's own type.
macro_rules! field_codec {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty as $codec:ty) => {
        $codec
    };
}

/// A family's messages, declared once: its `Kind` (see `packet_kinds!`) and its `Message`
/// enum, each variant named after its kind with the kind's wire number and the fields of
/// its body in wire order; a field is encoded by its type's [`Field`] or by the codec named
/// after `as`, and carries only doc comments (its doc's first sentence labels it in the
/// dissector). Generated: the enum and its `check`, `body_len`, `write_body` and
/// `read_body`, and `layout(kind)`, the body's fields as data ([`crate::layout`]).
/// `validate` names the family's rules, a `fn(&Message<'_>) -> Result<(), Invalid>` that
/// `check` applies before encoding and
/// `read_body` after decoding ([`no_rules`] for a family without any):
///
/// ```text
/// messages! {
///     /// Packet kinds of the `bap` family.
///     Bap, data: [Data];
///     /// A `bap` message body.
///     Message<'a>, validate: no_rules;
///     /// DATA: a message.
///     Data = 1 {
///         /// Sequence number, modulo `2n`.
///         seq: u16,
///         /// The application data.
///         payload: &'a [u8] as Rest,
///     },
///     /// ACK: feedback to the sender.
///     Ack = 2 {
///         /// The last message received in sequence.
///         seq: u16,
///     },
/// }
/// ```
///
/// The body several families share byte for byte, a `u64` sequence number and the
/// application data (`seq: u64, payload: &'a [u8] as Rest`), is declared once here: a
/// variant with that body is written `Data = 1 { ..SeqData }`.
macro_rules! messages {
    // The declaration as written: its variants are spelled out (`{ ..SeqData }` replaced by
    // the shared body's fields) one at a time into `[$done]`, then the code is generated.
    (
        $(#[$kmeta:meta])*
        $family:ident, data: [$($data:ident),* $(,)?];
        $(#[$meta:meta])*
        Message<$lt:lifetime>, validate: $validate:path;
        $($variants:tt)+
    ) => {
        messages! {
            @spell [$(#[$kmeta])* $family, data: [$($data),*];
                    $(#[$meta])* Message<$lt>, validate: $validate;]
            $lt [] $($variants)+
        }
    };
    // A variant with the shared body `SeqData`.
    (
        @spell $head:tt $lt:lifetime [$($done:tt)*]
        $(#[$vmeta:meta])* $name:ident = $value:literal { ..SeqData } $(, $($rest:tt)*)?
    ) => {
        messages! {
            @spell $head $lt [$($done)* $(#[$vmeta])* $name = $value {
                /// Sequence number.
                seq: u64,
                /// The application data.
                payload: &$lt [u8] as $crate::field::Rest,
            },]
            $($($rest)*)?
        }
    };
    // A variant with its own fields.
    (
        @spell $head:tt $lt:lifetime [$($done:tt)*]
        $(#[$vmeta:meta])* $name:ident = $value:literal { $($fields:tt)* } $(, $($rest:tt)*)?
    ) => {
        messages! {
            @spell $head $lt [$($done)* $(#[$vmeta])* $name = $value { $($fields)* },]
            $($($rest)*)?
        }
    };
    // Every variant spelled out.
    (@spell [$($head:tt)*] $lt:lifetime [$($done:tt)*]) => {
        messages! { @generate $($head)* $($done)* }
    };
    (
        @generate
        $(#[$kmeta:meta])*
        $family:ident, data: [$($data:ident),* $(,)?];
        $(#[$meta:meta])*
        Message<$lt:lifetime>, validate: $validate:path;
        $(
            $(#[$vmeta:meta])*
            $name:ident = $value:literal {
                $(
                    $(#[doc = $fdoc:literal])*
                    $field:ident: $ty:ty $(as $codec:ty)?
                ),+ $(,)?
            }
        ),+ $(,)?
    ) => {
        packet_kinds! {
            $(#[$kmeta])*
            $family, data: [$($data),*];
            $($(#[$vmeta])* $name = $value),+
        }

        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Message<$lt> {
            $(
                $(#[$vmeta])*
                $name {
                    $($(#[doc = $fdoc])* $field: $ty),+
                },
            )+
        }

        /// The fields of a `kind` body in wire order.
        pub fn layout(kind: Kind) -> &'static [$crate::layout::Slot] {
            Kind::ALL
                .iter()
                .position(|k| *k == kind)
                .and_then(|i| Message::LAYOUTS.get(i))
                .copied()
                .unwrap_or(&[])
        }

        impl<$lt> Message<$lt> {
            /// Every kind's layout, in the order of `Kind::ALL`.
            const LAYOUTS: &'static [&'static [$crate::layout::Slot]] = &[$(&[$(
                $crate::layout::Slot {
                    name: stringify!($field),
                    doc: &[$($fdoc),*],
                    wire: <field_codec!($ty $(as $codec)?) as $crate::field::Field<$lt>>::WIRE,
                }
            ),+]),+];

            fn validate(&self) -> Result<(), $crate::field::Invalid> {
                $validate(self)
            }

            pub(crate) fn check(&self) -> Result<(), $crate::EncodeError> {
                self.validate().map_err($crate::field::encode_error)
            }

            pub(crate) fn body_len(&self) -> usize {
                use $crate::field::Field;
                match self {
                    $(Message::$name { $($field),+ } => {
                        0 $(+ <field_codec!($ty $(as $codec)?) as Field<$lt>>::len($field))+
                    })+
                }
            }

            pub(crate) fn write_body(&self, w: &mut $crate::Writer<'_>) {
                use $crate::field::Field;
                match self {
                    $(Message::$name { $($field),+ } => {
                        $(<field_codec!($ty $(as $codec)?) as Field<$lt>>::write($field, w);)+
                    })+
                }
            }

            pub(crate) fn read_body(
                kind: u8,
                r: &mut $crate::Reader<$lt>,
            ) -> Result<Self, $crate::DecodeError> {
                use $crate::field::Field;
                let m = match Kind::from_u8(kind)? {
                    $(Kind::$name => {
                        $(let $field = <field_codec!($ty $(as $codec)?) as Field<$lt>>::read(r)?;)+
                        Message::$name { $($field),+ }
                    })+
                };
                m.validate().map_err($crate::field::decode_error)?;
                Ok(m)
            }
        }
    };
}

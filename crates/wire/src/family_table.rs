//! The protocol families, declared once (`families!` in `lib.rs`): from one table of
//! variant, wire number, module, command-line name and description come [`Family`], its
//! `ALL`, `from_u8` and `name`, the [`Message`] enum with its conversions, and every dispatch
//! from a family to its module (kind checks, data kinds, layouts, encoding and decoding, sample
//! messages).
//!
//! [`Family`]: crate::Family
//! [`Message`]: crate::Message

/// The family table: one row per family, `Variant = number => module, "name", "what";`
/// (the description becomes the variant's doc).
macro_rules! families {
    ($($variant:ident = $value:literal => $module:ident, $name:literal, $what:literal;)+) => {
        /// Protocol families. Numbers are stable wire values; never reuse one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Family {
            $(#[doc = $what] $variant = $value,)+
        }

        impl Family {
            /// Every family this build knows, in wire-number order.
            pub const ALL: &'static [Family] = &[$(Family::$variant),+];

            /// Parse a wire value.
            pub fn from_u8(v: u8) -> Result<Self, DecodeError> {
                match v {
                    $($value => Ok(Family::$variant),)+
                    other => Err(DecodeError::UnknownFamily(other)),
                }
            }

            /// Short lower-case name, as used on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $(Family::$variant => $name,)+
                }
            }

            /// Every kind of this family: its wire number and its name ([`saw::Kind::name`]).
            pub fn kinds(self) -> Vec<(u8, String)> {
                match self {
                    $(Family::$variant => $module::Kind::ALL.iter().map(|k| (*k as u8, k.name())).collect(),)+
                }
            }

            /// The layout of a `kind` body of this family; `None` for a kind it does not
            /// define.
            pub fn layout(self, kind: u8) -> Option<&'static [$crate::layout::Slot]> {
                match self {
                    $(Family::$variant => $module::Kind::from_u8(kind).ok().map($module::layout),)+
                }
            }

            /// The family's sample messages, one of every kind at least ([`crate::samples`],
            /// written beside each family's declaration: [`saw::samples`]).
            pub fn samples(self) -> Vec<$crate::samples::Sample<Message<'static>>> {
                match self {
                    $(Family::$variant => $module::samples().into_iter().map($crate::samples::Sample::widen).collect(),)+
                }
            }

            /// Whether `kind` is a kind of this family.
            fn check_kind(self, kind: u8) -> Result<(), DecodeError> {
                match self {
                    $(Family::$variant => $module::Kind::from_u8(kind).map(|_| ()),)+
                }
            }

            /// Whether `kind` of this family carries application data (unknown kinds do not).
            fn kind_is_data(self, kind: u8) -> bool {
                match self {
                    $(Family::$variant => $module::Kind::from_u8(kind).is_ok_and(|k| k.is_data()),)+
                }
            }
        }

        /// A message body of one protocol family.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Message<'a> {
            $(#[doc = concat!("A `", $name, "` message.")] $variant($module::Message<'a>),)+
        }

        $(
            impl<'a> From<$module::Message<'a>> for Message<'a> {
                fn from(m: $module::Message<'a>) -> Self {
                    Message::$variant(m)
                }
            }
            impl<'a> TryFrom<Message<'a>> for $module::Message<'a> {
                type Error = Message<'a>;
                fn try_from(m: Message<'a>) -> Result<Self, Message<'a>> {
                    match m {
                        Message::$variant(m) => Ok(m),
                        other => Err(other),
                    }
                }
            }
        )+

        impl<'a> Message<'a> {
            /// The family the message belongs to.
            pub fn family(&self) -> Family {
                match self {
                    $(Message::$variant(_) => Family::$variant,)+
                }
            }
            /// The message's kind as the packet dissector names it ([`saw::Kind::name`]).
            pub fn kind_name(&self) -> String {
                match self {
                    $(Message::$variant(m) => m.kind().name(),)+
                }
            }
            fn kind(&self) -> u8 {
                match self {
                    $(Message::$variant(m) => m.kind() as u8,)+
                }
            }
            fn body_len(&self) -> usize {
                match self {
                    $(Message::$variant(m) => m.body_len(),)+
                }
            }
            fn check(&self) -> Result<(), EncodeError> {
                match self {
                    $(Message::$variant(m) => m.check(),)+
                }
            }
            fn write_body(&self, w: &mut Writer<'_>) {
                match self {
                    $(Message::$variant(m) => m.write_body(w),)+
                }
            }
            /// The body of a `kind` message of `family`, read from `r`.
            fn read_body(family: Family, kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
                Ok(match family {
                    $(Family::$variant => Message::$variant($module::Message::read_body(kind, r)?),)+
                })
            }
        }
    };
}

/// A variant's identifier in capitals, a space between its words: `LocalStatus` is
/// "LOCAL STATUS".
pub(crate) fn shout(ident: &str) -> String {
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, c) in ident.char_indices() {
        if i > 0 && c.is_ascii_uppercase() {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

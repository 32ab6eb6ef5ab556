//! The protocol families, declared once (`families!` in `lib.rs`): from one table of
//! variant, wire number, module, command-line name and description come [`Family`], its
//! `ALL`, `from_u8` and `name`, the [`Message`] enum with its conversions, and every dispatch
//! from a family to its module (kind checks, data kinds, encoding and decoding).
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
            fn family(&self) -> Family {
                match self {
                    $(Message::$variant(_) => Family::$variant,)+
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

//! # Protocol specs: one home for every protocol's name, family and parameters
//!
//! [`crate::PROTOCOLS`] is the one list of the protocols this build implements, each with its
//! spec row, written in the protocol's own module (`spec.rs`, for example
//! [`crate::saw::spec::SAW`]) with the types here. Each [`ProtocolSpec`] names its wire family, its
//! seed, whether it runs on real sockets, and its tunable [`Param`]s: the key a scenario file's
//! `[protocol]` table uses, the `rmcast send` flag where the same quantity is a flag, the unit, the
//! range, the default and, where sockets need a different default, that default with the reason.
//!
//! Every default is written once, as a typed constant in the protocol's `spec` module (for
//! example [`crate::prmp::spec::RESPONSE_RATE`]); the protocol's configuration constructors, the
//! simulator's scenario registry, the socket driver's options and the command line's flags all
//! read that constant, and the [`Param`] table names it for listing
//! (`rmcast protocols --json`). A test in the command line's crate walks this table against
//! `rmcast send --help` and the simulator's scenario keys.

use core::fmt;
use rmcast_wire::Family;

/// A choice parameter's typed value: an enum whose variants are the key's words, with `WORDS`
/// (for the [`Param`] row), `word` and `parse`.
macro_rules! choice {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $w:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vm])* $v),+
        }
        impl $name {
            /// The key's words, in variant order.
            pub const WORDS: &'static [&'static str] = &[$($w),+];
            /// Its word in scenario files.
            pub const fn word(self) -> &'static str {
                match self {
                    $($name::$v => $w),+
                }
            }
            /// The value called `w`.
            pub fn parse(w: &str) -> Option<$name> {
                match w {
                    $($w => Some($name::$v),)+
                    _ => None,
                }
            }
        }
    };
}

/// A protocol's typed parameters, declared once per field: its type, how it is read from its
/// spec row (a [`Reader`] method and the key) and its default (from the row's constant).
/// Generates the struct, `Default` and `read` (the values of a [`Values`], row by row).
macro_rules! typed_params {
    (
        $(#[$m:meta])*
        $name:ident from $rows:path {
            $(
                $(#[$fm:meta])*
                $field:ident: $ty:ty = $read:ident($key:literal $(, $arg:expr)*) or $default:expr
            ),+ $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $($(#[$fm])* pub $field: $ty),+
        }
        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default),+
                }
            }
        }
        impl $name {
            /// The parameters `values` give, row by row (the spec's scenario keys).
            pub fn read<V: $crate::spec::Values + ?Sized>(values: &mut V) -> Result<Self, V::Error> {
                let mut r = $crate::spec::Reader::new($rows, values);
                Ok($name {
                    $($field: r.$read($key $(, $arg)*)?),+
                })
            }
        }
    };
}
pub(crate) use choice;
pub(crate) use typed_params;

#[cfg(feature = "serde")]
mod serialize;

/// A parameter's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An integer.
    Int(u64),
    /// A real number.
    Real(f64),
    /// A switch.
    Bool(bool),
    /// One word of [`Range::Choice`].
    Word(&'static str),
    /// No fixed default: the text says what applies (derived from other settings or the
    /// topology).
    Derived(&'static str),
}

impl Value {
    /// The default as a real number (integers converted), if it is a number.
    pub fn real(&self) -> Option<f64> {
        match *self {
            Value::Int(v) => Some(v as f64),
            Value::Real(v) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Real(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Word(w) => write!(f, "{w}"),
            Value::Derived(why) => write!(f, "({why})"),
        }
    }
}

/// The values a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Integers in `[min, max]`.
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// Finite reals in `[min, max]`.
    Real {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// `true` or `false`.
    Bool,
    /// One of these words.
    Choice(&'static [&'static str]),
}

impl Range {
    /// Whether the number `v` is an accepted value (a whole number for [`Range::Int`]);
    /// `false` for the non-numeric ranges. The socket driver checks the timings and sizes a
    /// sender announces with it before a receiver acts on them.
    pub fn admits(&self, v: f64) -> bool {
        match *self {
            Range::Int { min, max } => v.fract() == 0.0 && v >= min as f64 && v <= max as f64,
            Range::Real { min, max } => v.is_finite() && v >= min && v <= max,
            Range::Bool | Range::Choice(_) => false,
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Range::Int { min, max } => write!(f, "{min}..={max}"),
            Range::Real { min, max } => write!(f, "[{min}, {max}]"),
            Range::Bool => f.write_str("true|false"),
            Range::Choice(c) => f.write_str(&c.join("|")),
        }
    }
}

/// One tunable parameter of a protocol.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// Key in a scenario file's `[protocol]` table; for a parameter that exists only on
    /// sockets ([`Param::scenario`] false), the name it is listed under.
    pub key: &'static str,
    /// Whether scenario files accept [`Param::key`].
    pub scenario: bool,
    /// The `rmcast send` flag (without `--`) that sets the same quantity in the same unit,
    /// where the protocol runs on sockets.
    pub flag: Option<&'static str>,
    /// Unit, empty for a pure number.
    pub unit: &'static str,
    /// Accepted values.
    pub range: Range,
    /// Default in the simulator (and on sockets unless [`Param::on_sockets`] says otherwise).
    pub default: Value,
    /// A different default on sockets, and why.
    pub on_sockets: Option<(Value, &'static str)>,
    /// What the parameter is, in one sentence.
    pub help: &'static str,
}

impl Param {
    /// A parameter of scenario files and (maybe) a flag, with one default for both.
    pub const fn new(
        key: &'static str,
        unit: &'static str,
        range: Range,
        default: Value,
        help: &'static str,
    ) -> Param {
        Param {
            key,
            scenario: true,
            flag: None,
            unit,
            range,
            default,
            on_sockets: None,
            help,
        }
    }

    /// A duration in milliseconds, accepted in [0, 10⁹] (see [`Param::within`]).
    pub const fn ms(key: &'static str, default: f64, help: &'static str) -> Param {
        Param::real(key, "ms", 0.0, 1e9, default, help)
    }

    /// A real number in `unit`, accepted in [`min`, `max`].
    pub const fn real(
        key: &'static str,
        unit: &'static str,
        min: f64,
        max: f64,
        default: f64,
        help: &'static str,
    ) -> Param {
        Param::new(
            key,
            unit,
            Range::Real { min, max },
            Value::Real(default),
            help,
        )
    }

    /// An integer in `unit`, accepted in [`min`, `max`].
    pub const fn int(
        key: &'static str,
        unit: &'static str,
        min: u64,
        max: u64,
        default: u64,
        help: &'static str,
    ) -> Param {
        Param::new(
            key,
            unit,
            Range::Int { min, max },
            Value::Int(default),
            help,
        )
    }

    /// A limit on a count: an integer from 0, with no limit by default.
    pub const fn limit(key: &'static str, help: &'static str) -> Param {
        Param::new(
            key,
            "",
            Range::Int {
                min: 0,
                max: u64::MAX,
            },
            Value::Derived("unlimited"),
            help,
        )
    }

    /// A switch.
    pub const fn switch(key: &'static str, default: bool, help: &'static str) -> Param {
        Param::new(key, "", Range::Bool, Value::Bool(default), help)
    }

    /// One word of `choices`.
    pub const fn choice(
        key: &'static str,
        choices: &'static [&'static str],
        default: &'static str,
        help: &'static str,
    ) -> Param {
        Param::new(key, "", Range::Choice(choices), Value::Word(default), help)
    }

    /// The same real-valued parameter, accepted in [`min`, `max`].
    pub const fn within(mut self, min: f64, max: f64) -> Param {
        self.range = Range::Real { min, max };
        self
    }

    /// The same parameter, also set by `rmcast send --flag`.
    pub const fn flag(mut self, flag: &'static str) -> Param {
        self.flag = Some(flag);
        self
    }

    /// The same parameter, with another default on sockets for the reason given.
    pub const fn on_sockets(mut self, default: Value, why: &'static str) -> Param {
        self.on_sockets = Some((default, why));
        self
    }

    /// The same parameter, existing only on sockets (no scenario key).
    pub const fn sockets_only(mut self) -> Param {
        self.scenario = false;
        self
    }

    /// The default that applies on sockets.
    pub fn socket_default(&self) -> Value {
        self.on_sockets.map_or(self.default, |(v, _)| v)
    }
}

/// A protocol this build implements.
#[derive(Debug, Clone, Copy)]
pub struct ProtocolSpec {
    /// Name on the command line and in scenario files.
    pub name: &'static str,
    /// The seed study (and section) it comes from.
    pub seed: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Wire family of its packets.
    pub family: Family,
    /// Whether `rmcast send`/`recv` run it on real sockets.
    pub sockets: bool,
    /// Its tunable parameters (scenario keys and send flags).
    pub params: &'static [Param],
}

impl ProtocolSpec {
    /// The parameter listed under `key`.
    pub fn param(&self, key: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.key == key)
    }

    /// The keys a scenario file's `[protocol]` table accepts for this protocol.
    pub fn scenario_keys(&self) -> impl Iterator<Item = &'static str> {
        self.params.iter().filter(|p| p.scenario).map(|p| p.key)
    }
}

/// `v` milliseconds as a duration, to the nanosecond (how every `*_ms` parameter becomes a
/// time: the same rounding in the simulator's scenario files and the protocols' defaults).
pub fn ms(v: f64) -> core::time::Duration {
    core::time::Duration::from_nanos((v * 1e6).round() as u64)
}

/// Where a protocol's typed parameters (`pgm::Params`, `lms::Params`, `srm::Params`) read
/// their values, one spec row at a time: a driver's own settings (a scenario's `[protocol]`
/// table, checked against the row's range) or, with [`Defaults`], every row's default. The
/// typed `read` functions name each key once, beside the field it sets.
pub trait Values {
    /// The driver's error (naming the key).
    type Error;
    /// The value of row `p`: the driver's, checked against `p.range`, or `p.default`.
    fn value(&mut self, p: &'static Param) -> Result<Value, Self::Error>;
    /// The driver's value of row `p`, checked against `p.range`, when it gives one; `None`
    /// when it does not (rows whose default is [`Value::Derived`] then take one derived
    /// elsewhere: a preset, no limit).
    fn given(&mut self, p: &'static Param) -> Result<Option<Value>, Self::Error>;
    /// An error about `key`: the value is not `what`.
    fn bad(&self, key: &str, what: &str) -> Self::Error;
}

/// Every row's default ([`Param::default`]): what the typed parameters' `Default` is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Defaults;

impl Values for Defaults {
    type Error = String;
    fn value(&mut self, p: &'static Param) -> Result<Value, String> {
        Ok(p.default)
    }
    fn given(&mut self, _: &'static Param) -> Result<Option<Value>, String> {
        Ok(None)
    }
    fn bad(&self, key: &str, what: &str) -> String {
        format!("{key}: not {what}")
    }
}

/// Typed reads of one protocol's rows from [`Values`].
pub(crate) struct Reader<'a, V: ?Sized> {
    params: &'static [Param],
    values: &'a mut V,
}

impl<'a, V: Values + ?Sized> Reader<'a, V> {
    pub(crate) fn new(params: &'static [Param], values: &'a mut V) -> Self {
        Reader { params, values }
    }
    fn row(&mut self, key: &str) -> Result<&'static Param, V::Error> {
        match self.params.iter().find(|p| p.key == key) {
            Some(p) => Ok(p),
            None => Err(self.values.bad(key, "a parameter of this protocol")),
        }
    }
    fn get(&mut self, key: &str) -> Result<Value, V::Error> {
        let p = self.row(key)?;
        self.values.value(p)
    }
    /// The driver's value of `key`, if it gives one ([`Values::given`]).
    fn given(&mut self, key: &str) -> Result<Option<Value>, V::Error> {
        let p = self.row(key)?;
        self.values.given(p)
    }
    /// A number (an integer row converted).
    pub(crate) fn real(&mut self, key: &str) -> Result<f64, V::Error> {
        match self.get(key)?.real() {
            Some(v) => Ok(v),
            None => Err(self.values.bad(key, "a number")),
        }
    }
    /// A duration in milliseconds ([`ms`]).
    pub(crate) fn ms(&mut self, key: &str) -> Result<core::time::Duration, V::Error> {
        self.real(key).map(ms)
    }
    /// A period in milliseconds, 0 meaning none.
    pub(crate) fn period(&mut self, key: &str) -> Result<Option<core::time::Duration>, V::Error> {
        self.real(key).map(period)
    }
    /// An integer.
    pub(crate) fn int(&mut self, key: &str) -> Result<u64, V::Error> {
        match self.get(key)? {
            Value::Int(v) => Ok(v),
            _ => Err(self.values.bad(key, "an integer")),
        }
    }
    /// An integer as a count (at most `u32::MAX`).
    pub(crate) fn count(&mut self, key: &str) -> Result<u32, V::Error> {
        self.int(key).map(|v| v.min(u64::from(u32::MAX)) as u32)
    }
    /// An integer whose row's range fits a `u16` (larger values are cut to `u16::MAX`).
    pub(crate) fn small(&mut self, key: &str) -> Result<u16, V::Error> {
        self.int(key).map(|v| v.min(u64::from(u16::MAX)) as u16)
    }
    /// An integer as a size (saturating).
    pub(crate) fn size(&mut self, key: &str) -> Result<usize, V::Error> {
        self.int(key)
            .map(|v| usize::try_from(v).unwrap_or(usize::MAX))
    }
    /// A number as a whole count (the fraction cut, as `as usize` does).
    pub(crate) fn whole(&mut self, key: &str) -> Result<usize, V::Error> {
        self.real(key).map(|v| v as usize)
    }
    /// A count limit ([`Param::limit`] rows): `None` (no limit) unless the driver gives one,
    /// else the value, at most `u32::MAX`.
    pub(crate) fn limit(&mut self, key: &str) -> Result<Option<u32>, V::Error> {
        self.opt_int(key)
            .map(|v| v.map(|v| v.min(u64::from(u32::MAX)) as u32))
    }
    /// The driver's integer, if it gives one.
    pub(crate) fn opt_int(&mut self, key: &str) -> Result<Option<u64>, V::Error> {
        match self.given(key)? {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(v)),
            Some(_) => Err(self.values.bad(key, "an integer")),
        }
    }
    /// The driver's number, if it gives one (an integer converted).
    pub(crate) fn opt_real(&mut self, key: &str) -> Result<Option<f64>, V::Error> {
        match self.given(key)? {
            None => Ok(None),
            Some(v) => match v.real() {
                Some(x) => Ok(Some(x)),
                None => Err(self.values.bad(key, "a number")),
            },
        }
    }
    /// The driver's switch, if it gives one.
    pub(crate) fn opt_switch(&mut self, key: &str) -> Result<Option<bool>, V::Error> {
        match self.given(key)? {
            None => Ok(None),
            Some(Value::Bool(v)) => Ok(Some(v)),
            Some(_) => Err(self.values.bad(key, "true or false")),
        }
    }
    /// The driver's word, if it gives one, as `T`.
    pub(crate) fn opt_choice<T>(
        &mut self,
        key: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<Option<T>, V::Error> {
        match self.given(key)? {
            None => Ok(None),
            Some(Value::Word(w)) => match parse(w) {
                Some(t) => Ok(Some(t)),
                None => Err(self.values.bad(key, "one of its words")),
            },
            Some(_) => Err(self.values.bad(key, "a word")),
        }
    }
    /// A switch.
    pub(crate) fn switch(&mut self, key: &str) -> Result<bool, V::Error> {
        match self.get(key)? {
            Value::Bool(v) => Ok(v),
            _ => Err(self.values.bad(key, "true or false")),
        }
    }
    /// One word of a choice, as `T` (`parse` knows the row's words).
    pub(crate) fn choice<T>(
        &mut self,
        key: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<T, V::Error> {
        match self.get(key)? {
            Value::Word(w) => parse(w).ok_or_else(|| self.values.bad(key, "one of its words")),
            _ => Err(self.values.bad(key, "a word")),
        }
    }
}

/// `v` milliseconds as a period: `None` for 0 (or less), else [`ms`]`(v)`.
pub fn period(v: f64) -> Option<core::time::Duration> {
    (v > 0.0).then(|| ms(v))
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`: the words of a choice, quoted, for errors.
pub fn one_of(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::{lookup, PROTOCOLS};

    #[test]
    fn names_are_unique_and_keys_unique_per_protocol() {
        let mut names: Vec<&str> = PROTOCOLS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROTOCOLS.len());
        for p in PROTOCOLS {
            let mut keys: Vec<&str> = p.params.iter().map(|q| q.key).collect();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), p.params.len(), "{}: a key listed twice", p.name);
        }
    }

    #[test]
    fn every_default_lies_in_its_range() {
        for p in PROTOCOLS {
            for q in p.params {
                for v in [Some(q.default), q.on_sockets.map(|(v, _)| v)]
                    .into_iter()
                    .flatten()
                {
                    let ok = match (q.range, v) {
                        (_, Value::Derived(_)) => true,
                        (Range::Int { min, max }, Value::Int(x)) => (min..=max).contains(&x),
                        (Range::Real { min, max }, x) => {
                            x.real().is_some_and(|x| x >= min && x <= max)
                        }
                        (Range::Bool, Value::Bool(_)) => true,
                        (Range::Choice(c), Value::Word(w)) => c.contains(&w),
                        _ => false,
                    };
                    assert!(
                        ok,
                        "{}.{}: default {v} outside {:?}",
                        p.name, q.key, q.range
                    );
                }
            }
        }
    }

    #[test]
    fn socket_only_params_have_flags_and_socket_protocols_have_families() {
        for p in PROTOCOLS {
            for q in p.params {
                if !q.scenario {
                    assert!(q.flag.is_some(), "{}.{} is in neither place", p.name, q.key);
                    assert!(
                        p.sockets,
                        "{}.{}: sockets-only on a sim-only protocol",
                        p.name, q.key
                    );
                }
            }
        }
        assert_eq!(lookup("dsp").map(|p| p.family), Some(Family::Tree));
        assert!(lookup("nope").is_none());
    }
}

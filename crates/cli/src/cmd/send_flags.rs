//! The protocol-parameter flags of `rmcast send`, built from the spec rows that name them
//! ([`rmcast_proto::spec::Param::flag`]): the flag, its help (each reading protocol's row,
//! unit and default), its value parser, and, once the protocol is known, the check of a
//! given value against that protocol's row's range. No flag of a protocol parameter is
//! written here by hand: a row with `.flag("...")` in `rmcast_proto::spec` is a flag.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use rmcast_net::NetError;
use rmcast_proto::protocols::socket_protocols;
use rmcast_proto::spec::{Param, Range, Value};
use std::collections::BTreeMap;

/// One flag and the rows that name it: (protocol, row), in the protocol table's order.
#[derive(Debug, Clone)]
pub struct Flag {
    /// The flag without `--`.
    pub name: &'static str,
    /// Every socket protocol's row that names it.
    pub rows: Vec<(&'static str, &'static Param)>,
}

/// The kind of value a flag takes (every row of one flag has the same kind; a test checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer.
    Int,
    /// A real number.
    Real,
    /// A switch (no value; off unless given).
    Switch,
    /// One word of the rows' choices.
    Word,
}

fn kind(r: &Range) -> Kind {
    match r {
        Range::Int { .. } => Kind::Int,
        Range::Real { .. } => Kind::Real,
        Range::Bool => Kind::Switch,
        Range::Choice(_) => Kind::Word,
    }
}

/// Every flag the socket protocols' rows name, in order of first appearance in the table.
pub fn flags() -> Vec<Flag> {
    let mut out: Vec<Flag> = Vec::new();
    for p in socket_protocols() {
        for q in p.params {
            let Some(f) = q.flag else { continue };
            match out.iter_mut().find(|x| x.name == f) {
                Some(x) => x.rows.push((p.name, q)),
                None => out.push(Flag {
                    name: f,
                    rows: vec![(p.name, q)],
                }),
            }
        }
    }
    out
}

/// The flag called `name`.
pub fn flag(name: &str) -> Option<Flag> {
    flags().into_iter().find(|f| f.name == name)
}

impl Flag {
    /// Its kind (the first row's).
    pub fn kind(&self) -> Kind {
        self.rows
            .first()
            .map_or(Kind::Switch, |(_, q)| kind(&q.range))
    }

    /// The protocols that read it.
    pub fn readers(&self) -> Vec<&'static str> {
        self.rows.iter().map(|(p, _)| *p).collect()
    }

    /// `protocol`'s row, if it reads the flag.
    pub fn row(&self, protocol: &str) -> Option<&'static Param> {
        self.rows
            .iter()
            .find(|(p, _)| *p == protocol)
            .map(|(_, q)| *q)
    }

    /// The socket default every reader shares, if they share one and it is a fixed value.
    pub fn common_default(&self) -> Option<Value> {
        let first = self.rows.first()?.1.socket_default();
        let same = self.rows.iter().all(|(_, q)| q.socket_default() == first);
        (same && !matches!(first, Value::Derived(_) | Value::Bool(_))).then_some(first)
    }

    /// Every word a reader accepts (for a [`Kind::Word`] flag).
    fn words(&self) -> Vec<&'static str> {
        let mut w: Vec<&'static str> = Vec::new();
        for (_, q) in &self.rows {
            if let Range::Choice(c) = q.range {
                for x in c {
                    if !w.contains(x) {
                        w.push(x);
                    }
                }
            }
        }
        w
    }

    fn value_name(&self) -> String {
        let unit = self.rows.first().map_or("", |(_, q)| q.unit);
        let same = self.rows.iter().all(|(_, q)| q.unit == unit);
        match (self.kind(), unit) {
            (_, "ms") if same => "MS".into(),
            (_, "µs") if same => "US".into(),
            (_, "1/s") if same => "PER_SEC".into(),
            (_, u) if same && !u.is_empty() && u.chars().all(|c| c.is_ascii_alphabetic()) => {
                u.to_ascii_uppercase()
            }
            (Kind::Real, _) => "X".into(),
            (Kind::Word, _) => "WORD".into(),
            _ => "N".into(),
        }
    }

    /// The help: each group of readers with the same row text, its unit and, where the
    /// readers' defaults differ, each one's default.
    pub fn help(&self) -> String {
        let common = self.common_default().is_some() || self.kind() == Kind::Switch;
        let mut groups: Vec<(Vec<&str>, &Param)> = Vec::new();
        for (p, q) in &self.rows {
            let same = |g: &&mut (Vec<&str>, &Param)| {
                g.1.help == q.help
                    && g.1.unit == q.unit
                    && g.1.socket_default() == q.socket_default()
            };
            match groups.iter_mut().find(same) {
                Some(g) => g.0.push(*p),
                None => groups.push((vec![*p], *q)),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(names, q)| {
                let mut notes: Vec<String> = Vec::new();
                if !q.unit.is_empty() && self.value_name() != q.unit.to_ascii_uppercase() {
                    notes.push(q.unit.to_string());
                }
                match q.socket_default() {
                    Value::Derived(why) => notes.push(format!("default: {why}")),
                    v if !common => notes.push(format!("default {v}")),
                    _ => {}
                }
                let notes = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join(", "))
                };
                format!("{}: {}{notes}", names.join(", "), q.help)
            })
            .collect();
        parts.join("; ")
    }

    /// The clap argument.
    pub fn arg(&self) -> Arg {
        let arg = Arg::new(self.name)
            .long(self.name)
            .help(self.help())
            .required(false);
        let arg = match self.kind() {
            Kind::Switch => return arg.action(ArgAction::SetTrue),
            Kind::Int => arg.value_parser(clap::value_parser!(u64)),
            Kind::Real => arg.value_parser(parse_real),
            Kind::Word => arg.value_parser(clap::builder::PossibleValuesParser::new(self.words())),
        };
        let arg = arg.value_name(self.value_name()).action(ArgAction::Set);
        match self.common_default() {
            Some(v) => arg.default_value(v.to_string()),
            None => arg,
        }
    }
}

fn parse_real(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{s:?} is not a finite number")),
    }
}

/// The protocol-parameter flags given on the command line (clap adds one argument per
/// [`Flag`] and reads them back into this).
#[derive(Debug, Clone, Default)]
pub struct ProtocolFlags {
    given: BTreeMap<&'static str, Value>,
}

impl clap::FromArgMatches for ProtocolFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = BTreeMap::new();
        for f in flags() {
            if m.value_source(f.name) != Some(ValueSource::CommandLine) {
                continue;
            }
            let bad = |e: clap::parser::MatchesError| {
                clap::Error::raw(
                    clap::error::ErrorKind::InvalidValue,
                    format!("--{}: {e}", f.name),
                )
            };
            let v = match f.kind() {
                Kind::Int => m
                    .try_get_one::<u64>(f.name)
                    .map_err(bad)?
                    .map(|v| Value::Int(*v)),
                Kind::Real => m
                    .try_get_one::<f64>(f.name)
                    .map_err(bad)?
                    .map(|v| Value::Real(*v)),
                Kind::Switch => Some(Value::Bool(m.get_flag(f.name))),
                Kind::Word => m
                    .try_get_one::<String>(f.name)
                    .map_err(bad)?
                    .and_then(|w| f.words().into_iter().find(|x| *x == w.as_str()))
                    .map(Value::Word),
            };
            if let Some(v) = v {
                given.insert(f.name, v);
            }
        }
        Ok(ProtocolFlags { given })
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for ProtocolFlags {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(flags().iter().map(Flag::arg))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

fn missing(flag: &str) -> NetError {
    NetError::setup(format!("--{flag}: no such protocol flag in the spec table"))
}

impl ProtocolFlags {
    /// Flags given as if on the command line (tests).
    #[cfg(test)]
    pub fn with(given: &[(&'static str, Value)]) -> Self {
        ProtocolFlags {
            given: given.iter().copied().collect(),
        }
    }

    /// Whether `--flag` was given.
    pub fn given(&self, flag: &str) -> bool {
        self.given.contains_key(flag)
    }

    /// Refuse what `protocol` cannot take: a flag it does not read (silently ignoring
    /// `--epoch-ms` under `--protocol pgm` would let a user believe it acted), or a value
    /// outside its row's range. An unknown protocol is refused by name later.
    pub fn check(&self, protocol: &str) -> Result<(), NetError> {
        if socket_protocols().all(|p| p.name != protocol) {
            return Ok(());
        }
        for (&name, v) in &self.given {
            let f = flag(name).ok_or_else(|| missing(name))?;
            let Some(q) = f.row(protocol) else {
                return Err(NetError::setup(format!(
                    "--{name} does not apply to --protocol {protocol}: only {} read it",
                    f.readers().join(", ")
                )));
            };
            let ok = match (q.range, v) {
                (Range::Choice(c), Value::Word(w)) => c.contains(w),
                (Range::Bool, _) => true,
                (r, v) => v.real().is_some_and(|x| r.admits(x)),
            };
            if !ok {
                return Err(NetError::setup(format!(
                    "--{name} {v} is outside {} for --protocol {protocol} ({}: {})",
                    q.range, q.key, q.help
                )));
            }
        }
        Ok(())
    }

    /// The value of `--flag` for `protocol`: as given, else that protocol's socket default,
    /// else (a flag the protocol does not read) the default its readers share; `None` where
    /// the default is derived from other settings.
    pub fn value(&self, protocol: &str, flag_name: &str) -> Result<Option<Value>, NetError> {
        if let Some(v) = self.given.get(flag_name) {
            return Ok(Some(*v));
        }
        let f = flag(flag_name).ok_or_else(|| missing(flag_name))?;
        let d = f
            .row(protocol)
            .map(Param::socket_default)
            .or_else(|| f.common_default());
        Ok(d.filter(|v| !matches!(v, Value::Derived(_))))
    }

    /// A number flag's value (see [`ProtocolFlags::value`]); an error if it has none.
    pub fn real(&self, protocol: &str, flag: &str) -> Result<f64, NetError> {
        self.value(protocol, flag)?
            .and_then(|v| v.real())
            .ok_or_else(|| NetError::setup(format!("--{flag}: give a number")))
    }

    /// An integer flag's value, if it has one.
    pub fn opt_int(&self, protocol: &str, flag: &str) -> Result<Option<u64>, NetError> {
        match self.value(protocol, flag)? {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(v)),
            Some(v) => Err(NetError::setup(format!("--{flag} {v}: give an integer"))),
        }
    }

    /// An integer flag's value as `T`; an error if it has none or it does not fit.
    pub fn int<T: TryFrom<u64>>(&self, protocol: &str, flag: &str) -> Result<T, NetError> {
        let v = self
            .opt_int(protocol, flag)?
            .ok_or_else(|| NetError::setup(format!("--{flag}: give an integer")))?;
        T::try_from(v).map_err(|_| NetError::setup(format!("--{flag} {v} is too large")))
    }

    /// Whether a switch is on.
    pub fn switch(&self, flag: &str) -> bool {
        matches!(self.given.get(flag), Some(Value::Bool(true)))
    }

    /// A word flag's value.
    pub fn word(&self, protocol: &str, flag: &str) -> Result<&'static str, NetError> {
        match self.value(protocol, flag)? {
            Some(Value::Word(w)) => Ok(w),
            _ => Err(NetError::setup(format!("--{flag}: give a word"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_has_one_kind_and_a_switch_is_off_by_default() {
        let all = flags();
        assert!(all.len() >= 16, "{} flags", all.len());
        for f in &all {
            for (p, q) in &f.rows {
                assert_eq!(kind(&q.range), f.kind(), "--{} of {p}", f.name);
                if f.kind() == Kind::Switch {
                    assert_eq!(
                        q.socket_default(),
                        Value::Bool(false),
                        "--{} of {p}",
                        f.name
                    );
                }
            }
        }
    }

    #[test]
    fn values_come_from_the_chosen_protocols_row_and_are_range_checked() {
        let none = ProtocolFlags::default();
        assert_eq!(none.real("prmp", "epoch-ms").unwrap(), 10.0);
        // A flag the protocol does not read still has its readers' shared default.
        assert_eq!(none.real("pgm", "epoch-ms").unwrap(), 10.0);
        assert_eq!(none.opt_int("bap", "window").unwrap(), Some(16));
        assert_eq!(none.opt_int("prmp", "ipg-us").unwrap(), None);
        assert!(none.real("pgm", "no-such-flag").is_err());
        let w = ProtocolFlags::with(&[("window", Value::Int(0))]);
        let e = w.check("bap").unwrap_err().to_string();
        assert!(e.contains("--window 0 is outside 1..="), "{e}");
        let e = w.check("saw").unwrap_err().to_string();
        assert!(e.contains("does not apply to --protocol saw"), "{e}");
        let ok = ProtocolFlags::with(&[("rto-ms", Value::Real(5.0))]);
        assert!(ok.check("ff").is_ok());
        assert!(ok.check("nope").is_ok());
        let e = ProtocolFlags::with(&[("rto-ms", Value::Real(0.5))])
            .check("bap")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--rto-ms 0.5 is outside [1, 60000]"), "{e}");
    }
}
